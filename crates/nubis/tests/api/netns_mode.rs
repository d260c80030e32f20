//! The API suite with real instances (`NUBIS_RUNTIME_DRIVER=netns`, as `scripts/netns-test.sh`
//! runs it). Every test server then gets a slot of its own on this host:
//!
//! - its regions' public pools, in the order of its configuration, each in its own /24 of the
//!   slot's /21 of 198.18.0.0/15 (a pool keeps its size when it is a /24 or smaller);
//! - its private pool in the slot's /24 of 192.168.128.0/17 (same rule);
//! - the host tag `t<slot>`, so the names of what it makes on the host are its own;
//! - an address of `[dns.static_records]` inside a region's pool moves with the pool (same
//!   offset from the pool's start), so a record still names the address a test expects there.
//!
//! Servers running at once thus never share an address on the host (their gateways, balancer
//! addresses and routes to private addresses would otherwise fight). A server started on the
//! database of a running one (a replica) shares its slot. When the last server of a slot is
//! gone, what the slot made on the host is removed (`nubis_netns::sweep_server`), so a killed
//! server leaves no namespace or process behind.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use nubis_model::config::{NetworkConfig, RegionConfig, RuntimeConfig, default_regions};

/// Whether the test servers run the netns driver.
pub fn netns() -> bool {
    std::env::var("NUBIS_RUNTIME_DRIVER").as_deref() == Ok("netns")
}

const SLOTS: u32 = 64;
const REGIONS_PER_SLOT: u32 = 8;

struct Slot {
    database: String,
    holders: usize,
}

static TAKEN: Mutex<BTreeMap<u32, Slot>> = Mutex::new(BTreeMap::new());
static NEXT: AtomicU32 = AtomicU32::new(0);
/// The host tag of each server's API base URL.
static TAGS: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The slot of a server on `database`: the one of a running server on it, or a free one
/// (taken in turn, so a slot just freed is the last to be taken again).
pub(crate) fn take_slot(database: &str) -> u32 {
    let mut taken = lock(&TAKEN);
    if let Some((k, s)) = taken.iter_mut().find(|(_, s)| s.database == database) {
        s.holders += 1;
        return *k;
    }
    for _ in 0..SLOTS {
        let k = NEXT.fetch_add(1, Ordering::Relaxed) % SLOTS;
        if let std::collections::btree_map::Entry::Vacant(e) = taken.entry(k) {
            e.insert(Slot { database: database.to_string(), holders: 1 });
            return k;
        }
    }
    panic!("more than {SLOTS} test servers at once in netns mode");
}

/// Gives a slot back; when its last server is gone, removes what the slot made on the host.
pub(crate) fn release_slot(k: u32) {
    {
        let mut taken = lock(&TAKEN);
        let Some(s) = taken.get_mut(&k) else { return };
        s.holders -= 1;
        if s.holders > 0 {
            return;
        }
    }
    // On a thread of its own: this runs in `Drop`, maybe inside a runtime.
    let names = nubis_netns::Names::new(&tag(k), std::path::Path::new(&RuntimeConfig::default().state_dir));
    let swept = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        rt.block_on(nubis_netns::sweep_server(&names))
    })
    .join();
    if !matches!(swept, Ok(Ok(()))) {
        eprintln!("netns mode: slot {k} not swept: {swept:?}");
    }
    lock(&TAKEN).remove(&k);
}

pub(crate) fn tag(k: u32) -> String {
    format!("t{k}")
}

pub(crate) fn remember_tag(base: &str, k: u32) {
    lock(&TAGS).get_or_insert_with(HashMap::new).insert(base.to_string(), tag(k));
}

/// The network namespace of instance `id` of the server `api` speaks to (netns mode).
pub fn instance_netns(api: &super::Api, id: i64) -> String {
    let tags = lock(&TAGS);
    let tag = tags.as_ref().and_then(|t| t.get(&api.base)).unwrap_or_else(|| panic!("no netns server at {}", api.base));
    nubis_netns::Names::new(tag, std::path::Path::new("/")).instance(id)
}

/// `a.b.c.d/len` as (address, length).
fn cidr(s: &str) -> (Ipv4Addr, u8) {
    let (a, len) = s.split_once('/').unwrap_or_else(|| panic!("not a CIDR: {s}"));
    (a.parse().unwrap_or_else(|_| panic!("not an IPv4 CIDR: {s}")), len.parse().expect("a prefix length"))
}

/// The configuration `config` with the pools and host tag of slot `k`.
pub(crate) fn slot_config(config: &str, k: u32) -> String {
    let mut t: toml::Table = config.parse().unwrap_or_else(|e| panic!("the test configuration is not TOML: {e}"));
    let regions = match t.remove("regions") {
        Some(toml::Value::Array(a)) => a,
        _ => default_regions().iter().map(|r| toml::Value::try_from(r).expect("a region as TOML")).collect(),
    };
    assert!(regions.len() <= REGIONS_PER_SLOT as usize, "at most {REGIONS_PER_SLOT} regions in netns mode");
    let mut moved = Vec::new();
    // (the pool as written, the pool of the slot)
    let mut pools = Vec::new();
    for (i, mut r) in regions.into_iter().enumerate() {
        let table = r.as_table_mut().expect("a region is a table");
        let written = Pool::parse(table["public_ipv4"].as_str().expect("public_ipv4"));
        let len = written.prefix.max(24);
        let b = k * REGIONS_PER_SLOT + i as u32;
        let pool = Pool { network: Ipv4Addr::new(198, 18 + (b / 256) as u8, (b % 256) as u8, 0), prefix: len };
        pools.push((written, pool));
        table.insert("public_ipv4".into(), pool.to_string().into());
        let prefix = table.get("public_prefix").and_then(toml::Value::as_integer).unwrap_or(24).max(i64::from(len));
        table.insert("public_prefix".into(), prefix.into());
        moved.push(r);
    }
    t.insert("regions".into(), toml::Value::Array(moved));
    let network = t.entry("network").or_insert_with(|| toml::Table::new().into());
    let network = network.as_table_mut().expect("[network] is a table");
    let private = network.get("private_ipv4").and_then(toml::Value::as_str).map(String::from);
    let (_, len) = cidr(&private.unwrap_or_else(|| NetworkConfig::default().private_ipv4));
    network.insert("private_ipv4".into(), format!("192.168.{}.0/{}", 128 + k, len.max(24)).into());
    let records = t.get_mut("dns").and_then(|d| d.get_mut("static_records")).and_then(toml::Value::as_table_mut);
    for addresses in
        records.into_iter().flat_map(|r| r.iter_mut().map(|(_, v)| v)).filter_map(toml::Value::as_array_mut)
    {
        for a in addresses.iter_mut() {
            let Some(ip) = a.as_str().and_then(|s| s.parse::<Ipv4Addr>().ok()) else { continue };
            let to = pools.iter().find_map(|(from, to)| {
                let offset = u32::from(ip).checked_sub(u32::from(from.network))?;
                (from.contains(&ip.to_string()) && to.contains(&to.host(offset))).then(|| to.host(offset))
            });
            if let Some(to) = to {
                *a = to.into();
            }
        }
    }
    let runtime = t.entry("runtime").or_insert_with(|| toml::Table::new().into());
    runtime.as_table_mut().expect("[runtime] is a table").insert("host_tag".into(), tag(k).into());
    toml::to_string(&t).expect("the configuration as TOML")
}

/// An IPv4 pool as a server was configured with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool {
    pub network: Ipv4Addr,
    pub prefix: u8,
}

impl Pool {
    fn parse(s: &str) -> Pool {
        let (a, prefix) = cidr(s);
        Pool { network: a, prefix }
    }

    /// The `n`th address of the pool.
    pub fn host(&self, n: u32) -> String {
        Ipv4Addr::from(u32::from(self.network) + n).to_string()
    }

    pub fn contains(&self, a: &str) -> bool {
        let Ok(a) = a.parse::<Ipv4Addr>() else { return false };
        let mask = u32::MAX.checked_shl(32 - u32::from(self.prefix)).unwrap_or(0);
        u32::from(a) & mask == u32::from(self.network) & mask
    }

    /// The netmask of a prefix length.
    pub fn mask(prefix: u8) -> String {
        Ipv4Addr::from(u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0)).to_string()
    }
}

impl std::fmt::Display for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// The regions and private pool of a configuration file's text (the built-in ones when it
/// names none).
pub(crate) fn pools_of(config: &str) -> (Vec<RegionConfig>, Pool) {
    let t: toml::Table = config.parse().expect("the configuration is TOML");
    let regions = t.get("regions").cloned().map(|r| r.try_into().expect("regions")).unwrap_or_else(default_regions);
    let private = t
        .get("network")
        .and_then(|n| n.get("private_ipv4"))
        .and_then(toml::Value::as_str)
        .map(String::from)
        .unwrap_or_else(|| NetworkConfig::default().private_ipv4);
    (regions, Pool::parse(&private))
}

/// The public pool of `region` in `regions`.
pub(crate) fn public_pool(regions: &[RegionConfig], region: &str) -> (Pool, u8) {
    let r = regions.iter().find(|r| r.id == region).unwrap_or_else(|| panic!("no region {region}"));
    (Pool::parse(&r.public_ipv4), r.public_prefix)
}

/// A client on this host: the source address of connections to `to` (netns mode gives the
/// balancers' addresses to links of the host, and a connection to such an address would
/// otherwise come from the address itself, where in loopback mode it comes from 127.0.0.1).
pub fn client_source(to: SocketAddr) -> Option<Ipv4Addr> {
    match to.ip() {
        IpAddr::V4(a) if netns() && a.octets()[0] == 198 && (a.octets()[1] & 0xfe) == 18 => Some(Ipv4Addr::LOCALHOST),
        _ => None,
    }
}

#[test]
fn a_slot_moves_every_pool_into_its_own_part_of_the_kept_ranges_keeping_small_pools_sizes() {
    let config = "[network]\nprivate_ipv4 = \"192.168.0.0/28\"\n[dns.static_records]\n\"a.test\" = [\"127.20.0.6\"]\n\
                  \"b.test\" = [\"127.99.0.1\"]\n[[regions]]\nid = \"tiny\"\nlabel = \"Tiny\"\ncountry = \"us\"\n\
                  capabilities = []\npublic_ipv4 = \"127.20.0.0/29\"\npublic_prefix = 30\n\
                  ipv6_pool = \"2001:db8:20::/64\"\nipv6_ranges = \"2001:db8:2000::/40\"\n";
    let moved = slot_config(config, 33);
    let (regions, private) = pools_of(&moved);
    assert_eq!(public_pool(&regions, "tiny"), (Pool::parse("198.19.8.0/29"), 30), "block 33 * 8 = 264");
    assert_eq!(private, Pool::parse("192.168.161.0/28"));
    let t: toml::Table = moved.parse().unwrap();
    assert_eq!(t["dns"]["static_records"]["a.test"][0].as_str(), Some("198.19.8.6"), "moved with its pool");
    assert_eq!(t["dns"]["static_records"]["b.test"][0].as_str(), Some("127.99.0.1"), "outside every pool");
    assert_eq!(t["runtime"]["host_tag"].as_str(), Some("t33"));
    // Without regions: the built-in ones, each a /24 of the slot; the private pool a /24.
    let (regions, private) = pools_of(&slot_config("", 0));
    let ids: Vec<&str> = regions.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, default_regions().iter().map(|r| r.id.as_str()).collect::<Vec<_>>());
    assert_eq!(public_pool(&regions, "us-west"), (Pool::parse("198.18.1.0/24"), 24));
    assert_eq!(private, Pool::parse("192.168.128.0/24"));
}
