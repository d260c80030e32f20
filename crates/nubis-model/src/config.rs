//! The configuration file (TOML): regions with their address pools and capabilities, the catalog
//! of types and images, limits, timings and the network mode. Every field has a built-in default,
//! so an empty file (or none) gives a working cloud.

use crate::money::{Micros, Money};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub network: NetworkConfig,
    pub regions: Vec<RegionConfig>,
    pub types: Vec<TypeConfig>,
    pub images: Vec<ImageConfig>,
    pub limits: Limits,
    pub runtime: RuntimeConfig,
    pub dns: DnsConfig,
    pub dataplane: DataplaneConfig,
    pub controls: ControlsConfig,
    pub transfers: TransfersConfig,
    pub billing: BillingConfig,
    pub signin: SigninConfig,
    pub console: ConsoleConfig,
}

/// How the data plane reaches addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NetworkMode {
    /// Every address is on this host: balancers bind loopback addresses, a back end
    /// `192.168.X.Y` is dialed at `127.168.X.Y`, nothing outside 127.0.0.0/8 is ever dialed.
    Loopback,
    /// Bind and dial real addresses (real deployments only).
    Direct,
    /// Set by `[runtime] driver = "netns"`: back ends are dialed at their real private addresses
    /// on the networks nubis made on this host, balancers bind their addresses in 198.18.0.0/15;
    /// nothing outside 127.0.0.0/8, the private pool and 198.18.0.0/15 is dialed or bound.
    Netns,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkConfig {
    pub mode: NetworkMode,
    /// Private IPv4 addresses of instances come from here.
    pub private_ipv4: String,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        NetworkConfig { mode: NetworkMode::Loopback, private_ipv4: "192.168.128.0/17".into() }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionConfig {
    pub id: String,
    pub label: String,
    pub country: String,
    pub capabilities: Vec<String>,
    /// Public IPv4 pool; in loopback mode a block of 127.0.0.0/8 outside 127.168.0.0/16.
    pub public_ipv4: String,
    /// Prefix length of the public subnets carved out of the pool (gateway is their first host).
    #[serde(default = "default_public_prefix")]
    pub public_prefix: u8,
    /// The region's IPv6 pool (a /64), from which SLAAC addresses come.
    pub ipv6_pool: String,
    /// The block from which /56 and /64 IPv6 ranges are routed to instances.
    pub ipv6_ranges: String,
    #[serde(default = "default_resolver4")]
    pub resolver_ipv4: String,
    #[serde(default = "default_resolver6")]
    pub resolver_ipv6: String,
}

fn default_public_prefix() -> u8 {
    24
}
fn default_resolver4() -> String {
    "127.0.0.53".into()
}
fn default_resolver6() -> String {
    "2001:db8::53".into()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypeConfig {
    pub id: String,
    pub label: String,
    pub class: String,
    pub disk: i64,
    pub memory: i64,
    pub vcpus: i64,
    #[serde(default)]
    pub gpus: i64,
    pub network_out: i64,
    pub transfer: i64,
    /// Dollars per started hour (`"0.0075"` or `0.0075`), held in millionths of a dollar.
    pub hourly: Micros,
    /// The monthly cap of the price, in dollars.
    pub monthly: Micros,
    /// Prices in regions priced apart from the base price (the hosted API's `region_prices`).
    #[serde(default)]
    pub region_prices: Vec<RegionPriceConfig>,
}

/// A price in one region, in dollars.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionPriceConfig {
    pub id: String,
    pub hourly: Micros,
    pub monthly: Micros,
}

/// A usage-priced service (network transfer): dollars per GB, everywhere and per region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsagePriceConfig {
    pub id: String,
    pub label: String,
    pub hourly: Micros,
    #[serde(default)]
    pub region_prices: Vec<UsageRegionPriceConfig>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageRegionPriceConfig {
    pub id: String,
    pub hourly: Micros,
}

/// The prices of the hosted API's regions priced apart, from a base price.
pub fn priced_regions(hourly: Micros, monthly: Micros) -> Vec<RegionPriceConfig> {
    crate::catalog_data::PRICED_REGIONS
        .iter()
        .map(|&(id, pct)| RegionPriceConfig {
            id: id.into(),
            hourly: hourly.scaled(pct, 100, 1),
            monthly: monthly.scaled(pct, 100, 1),
        })
        .collect()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageConfig {
    pub id: String,
    pub label: String,
    pub vendor: String,
    pub size: i64,
    #[serde(default)]
    pub deprecated: bool,
    /// What the init of an instance deployed from this image runs at boot (netns driver).
    #[serde(default)]
    pub init: ImageInit,
}

/// What an image's init runs at boot with `[runtime] driver = "netns"` (the simulated driver
/// runs nothing). Either way the init then stays up until the instance is shut down.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum ImageInit {
    /// `init = "user-data"`: the instance's user data, once, at its first boot (as cloud-init
    /// does on the distributions' images).
    #[default]
    UserData,
    /// `init = { command = "..." }`: this shell command at every boot, and never the user data
    /// (an image without cloud-init).
    Command(String),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Requests allowed per token in each window; 0 turns rate limiting off.
    pub rate_limit_requests: u64,
    pub rate_limit_window_secs: u64,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// How long events are kept visible, in days.
    pub events_days: i64,
    /// Pages of lists each server process keeps in memory (a page holds up to 500 records);
    /// 0 keeps none, so that every page is read from the database.
    pub cached_pages: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            rate_limit_requests: 100_000,
            rate_limit_window_secs: 60,
            max_body_bytes: 1 << 20,
            events_days: 90,
            cached_pages: 256,
        }
    }
}

/// The authorization server (sign-in pages, OAuth 2) and its lifetimes and limits.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SigninConfig {
    /// Path prefix of the authorization server's endpoints (`/oauth`).
    pub base_path: String,
    /// The public URL of this server, for links in messages and the metadata document; empty:
    /// `http://<listen address>`.
    pub public_url: String,
    pub access_token_secs: i64,
    pub refresh_token_days: i64,
    /// Lifetime of an authorization code.
    pub code_secs: i64,
    /// Lifetime of a set-password link.
    pub password_link_hours: i64,
    /// Lifetime of a child-account proxy-user token.
    pub proxy_token_secs: i64,
    /// Lifetime of a sign-in session of the authorization server's pages.
    pub session_hours: i64,
    /// Wrong passwords are throttled over this window...
    pub throttle_window_secs: i64,
    /// ...after this many failures for one username from one client address...
    pub throttle_user_failures: i64,
    /// ...or this many from one client address.
    pub throttle_ip_failures: i64,
    /// Largest OAuth client thumbnail, in bytes.
    pub thumbnail_max_bytes: usize,
}

impl Default for SigninConfig {
    fn default() -> Self {
        SigninConfig {
            base_path: "/oauth".into(),
            public_url: String::new(),
            access_token_secs: 7200,
            refresh_token_days: 30,
            code_secs: 300,
            password_link_hours: 48,
            proxy_token_secs: 900,
            session_hours: 12,
            throttle_window_secs: 900,
            throttle_user_failures: 5,
            throttle_ip_failures: 20,
            thumbnail_max_bytes: 128 * 1024,
        }
    }
}

/// What runs instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriverKind {
    /// No machine behind an instance: each power step takes its configured time (no privileges).
    Simulated,
    /// Each instance is a Linux network namespace with confined processes (needs root).
    Netns,
}

/// The instance runtime (`[runtime]`): the driver, the step timings (what the simulated driver
/// takes, the least the netns driver takes), and where the netns driver keeps its state.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RuntimeConfig {
    pub driver: DriverKind,
    pub provision_ms: u64,
    pub boot_ms: u64,
    pub shutdown_ms: u64,
    pub reboot_ms: u64,
    /// netns: where instances' file system layers, consoles and process ids are kept. Must not
    /// lie under /etc, /var, /root, /home or /tmp (those are the instances' overlays).
    pub state_dir: String,
    /// netns: what follows `nubis` in the names of everything made on the host (at most 4 of
    /// `a-z0-9`); empty: derived from the database, so two servers on one host never collide
    /// and a restarted server finds its own.
    pub host_tag: String,
    /// netns: how long a shut-down instance's processes get after SIGTERM before SIGKILL.
    pub shutdown_grace_ms: u64,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            driver: DriverKind::Simulated,
            provision_ms: 100,
            boot_ms: 100,
            shutdown_ms: 100,
            reboot_ms: 150,
            state_dir: "/run/nubis".into(),
            host_tag: String::new(),
            shutdown_grace_ms: 3000,
        }
    }
}

impl Config {
    /// What `[runtime] driver = "netns"` implies: the data plane in netns mode and, when the
    /// regions are the built-in ones, their public pools carved out of the benchmarking range
    /// 198.18.0.0/15 (a /17 each) instead of loopback blocks. Configured regions are kept as
    /// written (the catalog then refuses pools outside 198.18.0.0/15).
    pub fn apply_runtime(&mut self) {
        if self.runtime.driver != DriverKind::Netns {
            return;
        }
        self.network.mode = NetworkMode::Netns;
        if self.regions == default_regions() {
            for (i, r) in self.regions.iter_mut().enumerate() {
                r.public_ipv4 = format!("198.{}.{}.0/17", 18 + i / 2, (i % 2) * 128);
            }
        }
    }
}

/// How forward DNS is checked before reverse DNS is set.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DnsConfig {
    /// Static forward records: name -> addresses. Checked before any name server.
    pub static_records: std::collections::BTreeMap<String, Vec<String>>,
    /// Name servers (`ip:port`) to ask; empty means the system resolver, unless `offline`.
    pub nameservers: Vec<String>,
    /// Never ask any name server: only the static records resolve.
    pub offline: bool,
    /// Suffix of the default reverse name of public IPv4 addresses.
    pub default_rdns_suffix: Option<String>,
}

/// Protective limits of the balancer data plane.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataplaneConfig {
    pub client_idle_timeout_ms: u64,
    pub backend_connect_timeout_ms: u64,
    pub max_header_bytes: usize,
    pub max_connections_per_listener: usize,
    pub reconcile_interval_ms: u64,
    /// Proxy threads; absent: one per CPU; 0: the API's own runtime.
    pub worker_threads: Option<usize>,
}

impl Default for DataplaneConfig {
    fn default() -> Self {
        DataplaneConfig {
            client_idle_timeout_ms: 60_000,
            backend_connect_timeout_ms: 3_000,
            max_header_bytes: 16 * 1024,
            max_connections_per_listener: 10_000,
            reconcile_interval_ms: 1_000,
            worker_threads: None,
        }
    }
}

/// The test controls (`/nubis/v1`: clock, faults, snapshots, fixtures).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ControlsConfig {
    /// false: nothing of the test controls is reachable (`/nubis/v1/...` is an unknown route),
    /// as production deployments want. When the file does not set it, `nubis serve` turns them
    /// on only for a loopback `--listen` address.
    pub enabled: bool,
}

impl Default for ControlsConfig {
    fn default() -> Self {
        ControlsConfig { enabled: true }
    }
}

/// Service transfers: when a pending transfer expires, and how often `nubis serve` expires due
/// transfers and completes accepted ones.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TransfersConfig {
    /// A pending transfer becomes stale this many seconds after its creation (24 hours).
    pub expiry_secs: i64,
    /// How often the sweep runs, in milliseconds.
    pub sweep_interval_ms: u64,
    /// How long after its acceptance a transfer completes, in milliseconds (the spec allows up
    /// to three hours; nubis completes at once by default).
    pub complete_after_ms: u64,
}

impl Default for TransfersConfig {
    fn default() -> Self {
        TransfersConfig { expiry_secs: 24 * 3600, sweep_interval_ms: 1_000, complete_after_ms: 0 }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            network: NetworkConfig::default(),
            regions: default_regions(),
            types: default_types(),
            images: default_images(),
            limits: Limits::default(),
            runtime: RuntimeConfig::default(),
            dns: DnsConfig::default(),
            dataplane: DataplaneConfig::default(),
            controls: ControlsConfig::default(),
            transfers: TransfersConfig::default(),
            billing: BillingConfig::default(),
            signin: SigninConfig::default(),
            console: ConsoleConfig::default(),
        }
    }
}

/// Billing: what load balancers cost (instances cost what their type says), how often
/// `nubis serve` closes due invoices, and promo codes offered from the start (operators can also
/// manage codes with `nubis admin promo ...`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BillingConfig {
    /// Hourly price of a load balancer in dollars (`"0.015"`).
    pub nodebalancer_hourly: Micros,
    /// Monthly cap of a load balancer's price in dollars (`"10.00"`).
    pub nodebalancer_monthly: Micros,
    /// The load balancer's price in regions priced apart.
    pub nodebalancer_region_prices: Vec<RegionPriceConfig>,
    /// Network transfer prices (`/v4/network-transfer/prices`).
    pub network_transfer: Vec<UsagePriceConfig>,
    /// Seconds between two checks for invoices due (month ends).
    pub close_interval_secs: u64,
    /// Seconds after which a payment still waiting for the gateway's answer is settled by
    /// asking the gateway again (longer than any charge takes).
    pub settle_after_secs: u64,
    /// Seconds between two rounds of settling payments and giving back queued refunds.
    pub settle_interval_secs: u64,
    pub promo_codes: Vec<PromoCodeConfig>,
}

impl Default for BillingConfig {
    fn default() -> Self {
        BillingConfig {
            nodebalancer_hourly: Money(15_000),
            nodebalancer_monthly: Money(10_000_000),
            nodebalancer_region_prices: priced_regions(Money(15_000), Money(10_000_000)),
            network_transfer: default_network_transfer(),
            close_interval_secs: 60,
            settle_after_secs: 60,
            settle_interval_secs: 5,
            promo_codes: Vec::new(),
        }
    }
}

/// A promo code offered by the configuration.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromoCodeConfig {
    pub code: String,
    /// Total credit in dollars (`"50.00"`).
    pub credit: String,
    /// Credit usable per invoice in dollars (`"10.00"`); the whole credit when omitted.
    #[serde(default)]
    pub monthly_cap: Option<String>,
    /// Until when the code can be redeemed and its credit used (`2027-01-01T00:00:00`).
    pub expires: String,
    #[serde(default)]
    pub description: String,
}

fn all_caps() -> Vec<String> {
    ["Linodes", "NodeBalancers", "Block Storage", "VPCs", "Cloud Firewall", "Vlans"]
        .into_iter()
        .map(String::from)
        .collect()
}

fn region(id: &str, label: &str, country: &str, n: u8, caps: Vec<String>) -> RegionConfig {
    RegionConfig {
        id: id.into(),
        label: label.into(),
        country: country.into(),
        capabilities: caps,
        public_ipv4: format!("127.{n}.0.0/16"),
        public_prefix: 24,
        ipv6_pool: format!("2001:db8:{n:x}::/64"),
        ipv6_ranges: format!("2001:db8:{:x}00::/40", n),
        resolver_ipv4: default_resolver4(),
        resolver_ipv6: default_resolver6(),
    }
}

pub fn default_regions() -> Vec<RegionConfig> {
    vec![
        region("us-east", "Newark, NJ", "us", 10, all_caps()),
        region("us-west", "Fremont, CA", "us", 11, all_caps()),
        region("eu-west", "London, UK", "gb", 12, all_caps()),
        region(
            "ap-south",
            "Singapore, SG",
            "sg",
            13,
            ["Linodes", "NodeBalancers", "Block Storage", "Cloud Firewall"].into_iter().map(String::from).collect(),
        ),
    ]
}

pub fn default_types() -> Vec<TypeConfig> {
    let t =
        |id: &str, label: &str, class: &str, mem: i64, vcpus: i64, disk: i64, transfer: i64, dollars: i64| TypeConfig {
            id: id.into(),
            label: label.into(),
            class: class.into(),
            disk,
            memory: mem,
            vcpus,
            gpus: 0,
            network_out: 1000 * vcpus.min(4),
            transfer,
            // A 730-hour month, to the thousandth of a dollar.
            hourly: Micros::whole_dollars(dollars).scaled(1, 730, 1000),
            monthly: Micros::whole_dollars(dollars),
            region_prices: priced_regions(
                Micros::whole_dollars(dollars).scaled(1, 730, 1000),
                Micros::whole_dollars(dollars),
            ),
        };
    vec![
        t("g6-nanode-1", "Nanode 1GB", "nanode", 1024, 1, 25600, 1000, 5),
        t("g6-standard-1", "Linode 2GB", "standard", 2048, 1, 51200, 2000, 12),
        t("g6-standard-2", "Linode 4GB", "standard", 4096, 2, 81920, 4000, 24),
        t("g6-standard-4", "Linode 8GB", "standard", 8192, 4, 163840, 5000, 48),
        t("g6-dedicated-2", "Dedicated 4GB", "dedicated", 4096, 2, 81920, 4000, 36),
        t("g7-highmem-1", "Linode 24GB", "highmem", 24576, 2, 20480, 5000, 60),
    ]
}

pub fn default_images() -> Vec<ImageConfig> {
    let i = |id: &str, label: &str, vendor: &str, size: i64| ImageConfig {
        id: id.into(),
        label: label.into(),
        vendor: vendor.into(),
        size,
        deprecated: false,
        init: ImageInit::UserData,
    };
    crate::catalog_data::PUBLIC_IMAGES
        .iter()
        .map(|&(id, label, vendor, size, deprecated)| ImageConfig { deprecated, ..i(id, label, vendor, size) })
        .collect()
}

fn default_network_transfer() -> Vec<UsagePriceConfig> {
    let dollars = |d: &str| Micros::parse(d).expect("a valid price");
    crate::catalog_data::NETWORK_TRANSFER
        .iter()
        .map(|&(id, label, hourly, regions)| UsagePriceConfig {
            id: id.into(),
            label: label.into(),
            hourly: dollars(hourly),
            region_prices: regions
                .iter()
                .map(|&(id, hourly)| UsageRegionPriceConfig { id: id.into(), hourly: dollars(hourly) })
                .collect(),
        })
        .collect()
}

/// The web console served by `nubis serve` (`[console]`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConsoleConfig {
    /// Serve the console at all.
    pub enabled: bool,
    /// Path prefix of the console's pages (`/`: the site's root).
    pub base_path: String,
    /// Longest life of a console session (it also ends when its access token expires).
    pub session_hours: i64,
}

impl Default for ConsoleConfig {
    fn default() -> Self {
        ConsoleConfig { enabled: true, base_path: "/".into(), session_hours: 12 }
    }
}
