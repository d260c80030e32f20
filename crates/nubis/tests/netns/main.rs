//! Real instances (`[runtime] driver = "netns"`), through the API and real packets: each test
//! starts the real `nubis` binary with the netns driver and sends traffic only to the addresses
//! of the namespaces and links nubis made on this host (198.18.0.0/15, the private pool, VPC and
//! VLAN addresses inside namespaces) and to 127.0.0.0/8.
//!
//! Needs root, iproute2, nftables and python3 (`scripts/netns-test.sh` installs what is
//! missing); not part of the default `cargo test` (`test = false`): run it with
//! `cargo test -p nubis --test netns -- --test-threads=1` (the tests share the host's
//! networking, so they run one at a time). Every test removes everything `nubis*` on the host
//! before it starts and after it ends.

#[path = "../api/support.rs"]
mod support;

mod addresses;
mod common;
mod firewall;
mod images;
mod metadata;
mod networks;
mod restart;
mod walkthrough;
