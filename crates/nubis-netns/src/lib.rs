//! Host networking for real instances (`[runtime] driver = "netns"`): every instance is a Linux
//! network namespace with veth links into bridges, nftables rules compiled from its Cloud
//! Firewall, and an init process confined in its own PID, mount and UTS namespaces. This crate
//! knows nothing of the database or the API: it is handed the desired state ([`spec`]) and makes
//! the host match it, and it answers the metadata service's requests from a [`metadata::Source`].
//!
//! Everything made on the host is named `nubis<tag>...` ([`Names`]); nothing else is touched.
//! Topology (see `docs/decisions.md`):
//!
//! - `nubis<tag>-fabric`: a namespace holding one bridge per region (`r<N>`, public and private
//!   networks), per VPC (`v<id>`) and per VLAN (`l<hash>`). It has no uplink and forwards
//!   nothing, so two bridges are two isolated networks.
//! - `nubis<tag>-i<id>`: an instance; its `ethK` links are veth peers of ports on those bridges.
//! - `nubis<tag>r<N>` in the host namespace: the host's port on region N's bridge, carrying the
//!   public gateways and the balancers' addresses, with a /32 route per private address of the
//!   region. A forward-chain table `inet nubis<tag>` drops anything the host would route from or
//!   to these links, and unreachable routes cover 198.18.0.0/15 and the private pool, so no
//!   packet of an instance ever leaves the machine.
//!
//! Host commands are iproute2 (`ip`), `nft`, `nsenter`, `unshare`; the only system call made
//! directly is `setns` on a short-lived thread to open the metadata listener inside an
//! instance's namespace.

pub mod check;
pub mod cmd;
pub mod metadata;
pub mod net;
pub mod nft;
pub mod procs;
pub mod spec;

use std::path::{Path, PathBuf};

/// Why a host operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Command(String),
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
}

pub type Result<T> = std::result::Result<T, Error>;

/// The names of what nubis makes on this host, all starting with `nubis<tag>`.
#[derive(Debug, Clone)]
pub struct Names {
    prefix: String,
    state_dir: PathBuf,
}

impl Names {
    /// `tag`: at most 4 of `a-z0-9` (checked by [`Names::valid_tag`]).
    pub fn new(tag: &str, state_dir: &Path) -> Names {
        Names { prefix: format!("nubis{tag}"), state_dir: state_dir.join(format!("nubis{tag}")) }
    }

    pub fn valid_tag(tag: &str) -> bool {
        tag.len() <= 4 && tag.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    }

    /// The common prefix of every name.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The namespace holding the bridges.
    pub fn fabric(&self) -> String {
        format!("{}-fabric", self.prefix)
    }

    /// An instance's namespace.
    pub fn instance(&self, id: i64) -> String {
        format!("{}-i{id}", self.prefix)
    }

    /// The instance id of a namespace name of this prefix.
    pub fn instance_of(&self, ns: &str) -> Option<i64> {
        ns.strip_prefix(&self.prefix)?.strip_prefix("-i")?.parse().ok()
    }

    /// The host's link to region `n`'s bridge.
    pub fn region_link(&self, n: u16) -> String {
        format!("{}r{n}", self.prefix)
    }

    /// The region index of a host link name of this prefix.
    pub fn region_of_link(&self, link: &str) -> Option<u16> {
        link.strip_prefix(&self.prefix)?.strip_prefix('r')?.parse().ok()
    }

    /// Where this server keeps the state of its instances.
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    pub fn instance_dir(&self, id: i64) -> PathBuf {
        self.state_dir.join(format!("i{id}"))
    }

    pub fn console_log(&self, id: i64) -> PathBuf {
        self.instance_dir(id).join("console.log")
    }
}

/// `/run/netns/<name>`, where iproute2 keeps named namespaces.
pub fn netns_path(name: &str) -> PathBuf {
    Path::new("/run/netns").join(name)
}

/// Removes everything any nubis made on this host: stops the instances' processes recorded
/// under `state_dir`, deletes every `nubis*` namespace, link and table and the unreachable
/// routes. For tests and after an uninstall; never while a server runs.
pub async fn sweep(state_dir: &Path) -> Result<()> {
    procs::kill_all(state_dir).await;
    net::Net::new(Names::new("", state_dir)).remove_everything(true).await
}

/// Removes what one server (`names`) made on this host: its instances' processes and
/// directories, its namespaces, host links and guard table; what other servers made stays.
/// For a server that was killed and will not come back (a test harness); never while it runs.
pub async fn sweep_server(names: &Names) -> Result<()> {
    procs::kill_server(names).await;
    net::Net::new(names.clone()).remove_everything(false).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_stay_within_interface_name_limits() {
        let n = Names::new("ab12", Path::new("/run/nubis"));
        assert_eq!(n.instance(42), "nubisab12-i42");
        assert_eq!(n.instance_of("nubisab12-i42"), Some(42));
        assert_eq!(n.instance_of("nubisab1-i42"), None);
        assert_eq!(n.region_of_link(&n.region_link(3)), Some(3));
        assert!(n.region_link(999).len() <= 15);
        assert!(Names::valid_tag("ab12") && !Names::valid_tag("abcde") && !Names::valid_tag("A"));
    }
}
