#!/usr/bin/env bash
# Real instances (the netns driver), as root: installs iproute2, nftables, util-linux and procps
# when missing (apt-get) and the official metadata client `linode-metadata` into target/netns-py
# (pip, through the venv of scripts/clients-test.sh), then runs
#  1. the netns suite (crates/nubis/tests/netns: walkthrough, firewall, VPC/VLAN isolation,
#     metadata, kill -9 and restart), one test at a time (they share the host's networking);
#  2. the API suite with every server on the netns driver (NUBIS_RUNTIME_DRIVER=netns), on the
#     modules whose assertions do not name the loopback pools (see docs/decisions.md).
# Everything `nubis*` is removed from the host before and after (`nubis admin runtime sweep`).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
  echo "scripts/netns-test.sh: the netns driver needs root" >&2
  exit 1
fi
need=()
command -v ip >/dev/null || need+=(iproute2)
command -v nft >/dev/null || need+=(nftables)
command -v nsenter >/dev/null && command -v setpriv >/dev/null || need+=(util-linux)
command -v sysctl >/dev/null || need+=(procps)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

VENV=${NUBIS_PYENV:-target/pyenv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PY=$PWD/target/netns-py
if [ ! -d "$PY/linode_metadata" ]; then
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --target "$PY" -r crates/nubis/tests/netns/requirements.txt
fi

cargo test --workspace --locked --test netns --test api --no-run
sweep() { target/debug/nubis admin --data-dir "$(mktemp -d)" runtime sweep >/dev/null; }
sweep
trap sweep EXIT

echo "==> netns suite (real instances)"
NUBIS_TEST_PYTHONPATH=$PY cargo test --workspace --locked --test netns -- --test-threads=1

# The modules about instances, their addresses, interfaces, VPCs and firewalls, less the tests
# whose assertions name the loopback pools (127.10.0.0/16, regions of their own in 127.0.0.0/8):
# in netns mode pools are 198.18.0.0/15 by design. The
# balancer modules start back ends by hand at 127.168.x.y, which netns mode no longer dials; the
# netns suite above covers balancers with real instances instead.
echo "==> API suite with the netns driver (instances, addresses, interfaces, VPCs, firewalls)"
NUBIS_RUNTIME_DRIVER=netns cargo test --workspace --locked --test api -- --test-threads=4 \
  assign:: lifecycle:: vpcs:: firewalls:: firewall_devices:: firewall_concurrency:: interfaces:: ipv6:: \
  events:: instances:: ips:: service_transfers:: \
  --skip instances::an_exhausted_pool_answers_400_and_creates_nothing \
  --skip instances::concurrent_creates_on_a_small_pool_hand_out_each_address_once \
  --skip instances::every_instance_gets_a_public_ipv4_a_slaac_and_a_link_local_address \
  --skip ips::a_public_address_needs_the_instance_to_be_enabled_by_operators \
  --skip service_transfers::a_transfer_of_two_instances_moves_them_with_their_addresses_to_the_receiver
