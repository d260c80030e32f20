//! The catalog of regions, instance types and images, built once from the configuration, and the
//! checks of the configuration itself.

use std::collections::HashSet;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use nubis_model::catalog::{
    Addons, BackupsAddon, BalancerType, Image, InstanceType, Price, Region, RegionAvailability, RegionPrice, Resolvers,
    TransferPrice, UsagePrice, UsageRegionPrice, VpcAvailability, capability,
};
use nubis_model::config::{Config, ImageInit, NetworkMode, RegionConfig, RegionPriceConfig, TypeConfig};
use nubis_model::{Error, Result, Timestamp};

use crate::App;
use crate::auth::{Actor, Op};

/// A region with its parsed address pools.
#[derive(Debug, Clone)]
pub struct RegionInfo {
    pub view: Region,
    pub public_ipv4: Ipv4Net,
    pub public_prefix: u8,
    pub ipv6_pool: Ipv6Net,
    pub ipv6_ranges: Ipv6Net,
}

impl RegionInfo {
    pub fn has(&self, capability: &str) -> bool {
        self.view.capabilities.iter().any(|c| c == capability)
    }
}

#[derive(Debug)]
pub struct Catalog {
    pub regions: Vec<RegionInfo>,
    pub types: Vec<InstanceType>,
    pub images: Vec<Image>,
    pub balancer_types: Vec<BalancerType>,
    pub transfer_prices: Vec<TransferPrice>,
}

/// Region prices as configured: each region once, its id a region id's form (the hosted API
/// prices regions nubis may not serve, so the region need not be in the catalog).
fn region_prices(what: &str, prices: &[RegionPriceConfig]) -> std::result::Result<Vec<RegionPrice>, String> {
    let mut seen = HashSet::new();
    prices
        .iter()
        .map(|p| {
            let well_formed =
                !p.id.is_empty() && p.id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !well_formed {
                return Err(format!("{what}: region price {:?} is not a region id", p.id));
            }
            if !seen.insert(p.id.clone()) {
                return Err(format!("{what}: region {} is priced twice", p.id));
            }
            Ok(RegionPrice { id: p.id.clone(), hourly: p.hourly, monthly: p.monthly })
        })
        .collect()
}

fn vpc_availability(r: &RegionInfo) -> VpcAvailability {
    VpcAvailability {
        region: r.view.id.clone(),
        available: r.has(capability::VPCS),
        // A VPC's IPv6 range is a /52 of the region's IPv6 block (see `vpc::ipv6`).
        available_ipv6_prefix_lengths: if r.has(capability::VPCS) {
            vec![i64::from(crate::vpc::ipv6::VPC_PREFIX)]
        } else {
            Vec::new()
        },
    }
}

/// A backup costs a quarter of its instance's price, the hourly to the thousandth of a dollar.
fn backups_price(p: Price) -> Price {
    Price { hourly: p.hourly.scaled(1, 4, 1000), monthly: p.monthly.scaled(1, 4, 1) }
}

fn instance_type(t: &TypeConfig) -> std::result::Result<InstanceType, String> {
    let price = Price { hourly: t.hourly, monthly: t.monthly };
    let region_prices = region_prices(&format!("type {}", t.id), &t.region_prices)?;
    let backups_regions = region_prices
        .iter()
        .map(|r| {
            let p = backups_price(Price { hourly: r.hourly, monthly: r.monthly });
            RegionPrice { id: r.id.clone(), hourly: p.hourly, monthly: p.monthly }
        })
        .collect();
    Ok(InstanceType {
        id: t.id.clone(),
        label: t.label.clone(),
        class: t.class.clone(),
        disk: t.disk,
        memory: t.memory,
        vcpus: t.vcpus,
        gpus: t.gpus,
        network_out: t.network_out,
        transfer: t.transfer,
        price,
        region_prices,
        addons: Addons { backups: BackupsAddon { price: backups_price(price), region_prices: backups_regions } },
        successor: None,
    })
}

fn loopback_private() -> Ipv4Net {
    "127.168.0.0/16".parse().expect("valid network")
}

fn region(r: &RegionConfig, mode: NetworkMode) -> std::result::Result<RegionInfo, String> {
    let public_ipv4: Ipv4Net =
        r.public_ipv4.parse().map_err(|_| format!("region {}: public_ipv4 is not a CIDR", r.id))?;
    if mode == NetworkMode::Loopback {
        let lo: Ipv4Net = "127.0.0.0/8".parse().expect("valid network");
        if !lo.contains(&public_ipv4) {
            return Err(format!("region {}: in loopback mode public_ipv4 must be inside 127.0.0.0/8", r.id));
        }
        if IpNet::V4(public_ipv4).contains(&IpNet::V4(loopback_private()))
            || IpNet::V4(loopback_private()).contains(&IpNet::V4(public_ipv4))
        {
            return Err(format!("region {}: public_ipv4 must not overlap 127.168.0.0/16", r.id));
        }
    }
    if mode == NetworkMode::Netns {
        let bench: Ipv4Net = "198.18.0.0/15".parse().expect("valid network");
        if !bench.contains(&public_ipv4) {
            return Err(format!(
                "region {}: with [runtime] driver = \"netns\" public_ipv4 must be inside 198.18.0.0/15",
                r.id
            ));
        }
    }
    if r.public_prefix < public_ipv4.prefix_len() || r.public_prefix > 30 {
        return Err(format!("region {}: public_prefix must be between the pool's prefix and 30", r.id));
    }
    let ipv6_pool: Ipv6Net = r.ipv6_pool.parse().map_err(|_| format!("region {}: ipv6_pool is not a CIDR", r.id))?;
    let ipv6_ranges: Ipv6Net =
        r.ipv6_ranges.parse().map_err(|_| format!("region {}: ipv6_ranges is not a CIDR", r.id))?;
    if ipv6_pool.prefix_len() != 64 {
        return Err(format!("region {}: ipv6_pool must be a /64", r.id));
    }
    if ipv6_ranges.prefix_len() > 56 {
        return Err(format!("region {}: ipv6_ranges must be /56 or larger", r.id));
    }
    Ok(RegionInfo {
        view: Region {
            id: r.id.clone(),
            label: r.label.clone(),
            country: r.country.clone(),
            capabilities: r.capabilities.clone(),
            status: "ok".into(),
            resolvers: Resolvers { ipv4: r.resolver_ipv4.clone(), ipv6: r.resolver_ipv6.clone() },
            site_type: "core".into(),
        },
        public_ipv4,
        public_prefix: r.public_prefix,
        ipv6_pool,
        ipv6_ranges,
    })
}

impl Catalog {
    pub fn build(config: &Config) -> std::result::Result<Catalog, String> {
        let mut ids = HashSet::new();
        let mut regions = Vec::new();
        for r in &config.regions {
            if !ids.insert(r.id.clone()) {
                return Err(format!("region {} is declared twice", r.id));
            }
            regions.push(region(r, config.network.mode)?);
        }
        for (i, a) in regions.iter().enumerate() {
            for b in &regions[i + 1..] {
                let (x, y) = (IpNet::V4(a.public_ipv4), IpNet::V4(b.public_ipv4));
                if x.contains(&y) || y.contains(&x) {
                    return Err(format!("regions {} and {} have overlapping public pools", a.view.id, b.view.id));
                }
            }
        }
        let private: Ipv4Net =
            config.network.private_ipv4.parse().map_err(|_| "network.private_ipv4 is not a CIDR".to_string())?;
        let _ = private;
        let types = config.types.iter().map(instance_type).collect::<std::result::Result<Vec<_>, String>>()?;
        let created = Timestamp::parse("2024-01-01T00:00:00").expect("valid timestamp");
        let images = config
            .images
            .iter()
            .map(|i| Image {
                id: i.id.clone(),
                label: i.label.clone(),
                description: None,
                created,
                updated: created,
                created_by: "linode".into(),
                deprecated: i.deprecated,
                is_public: true,
                size: i.size,
                kind: "manual".into(),
                vendor: Some(i.vendor.clone()),
                status: "available".into(),
                expiry: None,
                eol: None,
                // Only an image whose init runs the user data takes it as cloud-init does.
                capabilities: match i.init {
                    ImageInit::UserData => vec!["cloud-init".into()],
                    ImageInit::Command(_) => Vec::new(),
                },
                regions: Vec::new(),
                tags: Vec::new(),
                total_size: i.size,
            })
            .collect();
        let b = &config.billing;
        let balancer_types = vec![BalancerType {
            id: "nodebalancer".into(),
            label: "NodeBalancer".into(),
            price: Price { hourly: b.nodebalancer_hourly, monthly: b.nodebalancer_monthly },
            region_prices: region_prices("nodebalancer", &b.nodebalancer_region_prices)?,
            transfer: 0,
        }];
        let transfer_prices = b
            .network_transfer
            .iter()
            .map(|t| TransferPrice {
                id: t.id.clone(),
                label: t.label.clone(),
                price: UsagePrice { hourly: t.hourly, monthly: None },
                region_prices: t
                    .region_prices
                    .iter()
                    .map(|r| UsageRegionPrice { id: r.id.clone(), hourly: r.hourly, monthly: None })
                    .collect(),
                transfer: 0,
            })
            .collect();
        Ok(Catalog { regions, types, images, balancer_types, transfer_prices })
    }

    pub fn region(&self, id: &str) -> Option<&RegionInfo> {
        self.regions.iter().find(|r| r.view.id == id)
    }
    pub fn instance_type(&self, id: &str) -> Option<&InstanceType> {
        self.types.iter().find(|t| t.id == id)
    }
    pub fn image(&self, id: &str) -> Option<&Image> {
        self.images.iter().find(|i| i.id == id)
    }
}

impl App {
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn region_list(&self) -> Vec<Region> {
        self.catalog.regions.iter().map(|r| r.view.clone()).collect()
    }
    pub fn region_get(&self, id: &str) -> Result<Region> {
        self.catalog.region(id).map(|r| r.view.clone()).ok_or(Error::NotFound)
    }
    pub fn type_list(&self) -> &[InstanceType] {
        &self.catalog.types
    }
    pub fn type_get(&self, id: &str) -> Result<InstanceType> {
        self.catalog.instance_type(id).cloned().ok_or(Error::NotFound)
    }
    pub fn image_list(&self) -> &[Image] {
        &self.catalog.images
    }
    pub fn image_get(&self, id: &str) -> Result<Image> {
        self.catalog.image(id).cloned().ok_or(Error::NotFound)
    }
    /// Public images belong to no account: changing or deleting one is refused (403) as the
    /// hosted API refuses it; an image that does not exist is not found.
    pub async fn image_change_refused(&self, actor: &Actor, op: Op, id: &str) -> Result<()> {
        self.authorize(actor, op).await?;
        self.catalog.image(id).ok_or(Error::NotFound)?;
        Err(Error::Forbidden("Unauthorized".into()))
    }
    /// Every type in every region: available where the region has the `Linodes` capability.
    pub fn region_availability_list(&self) -> Vec<RegionAvailability> {
        self.catalog.regions.iter().flat_map(|r| self.plans_in(r)).collect()
    }
    pub fn region_availability_get(&self, id: &str) -> Result<Vec<RegionAvailability>> {
        self.catalog.region(id).map(|r| self.plans_in(r)).ok_or(Error::NotFound)
    }
    fn plans_in(&self, r: &RegionInfo) -> Vec<RegionAvailability> {
        let available = r.has(capability::INSTANCES);
        let plan = |t: &InstanceType| RegionAvailability { region: r.view.id.clone(), plan: t.id.clone(), available };
        self.catalog.types.iter().map(plan).collect()
    }
    /// VPCs are available where the region has the `VPCs` capability; nubis's VPCs have no
    /// IPv6, so no prefix length is offered.
    pub fn vpc_availability_list(&self) -> Vec<VpcAvailability> {
        self.catalog.regions.iter().map(vpc_availability).collect()
    }
    pub fn vpc_availability_get(&self, id: &str) -> Result<VpcAvailability> {
        self.catalog.region(id).map(vpc_availability).ok_or(Error::NotFound)
    }
    pub fn balancer_type_list(&self) -> &[BalancerType] {
        &self.catalog.balancer_types
    }
    pub fn transfer_price_list(&self) -> &[TransferPrice] {
        &self.catalog.transfer_prices
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_configuration_is_valid() {
        let c = Catalog::build(&Config::default()).unwrap();
        assert!(c.regions.len() >= 3);
        assert!(c.region("us-east").unwrap().has("VPCs"));
    }

    #[test]
    fn loopback_pools_must_avoid_the_private_mapping() {
        let mut cfg = Config::default();
        cfg.regions[0].public_ipv4 = "127.168.0.0/24".into();
        assert!(Catalog::build(&cfg).is_err());
        let mut cfg = Config::default();
        cfg.regions[0].public_ipv4 = "198.51.100.0/24".into();
        assert!(Catalog::build(&cfg).is_err());
        let mut cfg = Config::default();
        cfg.regions[1].public_ipv4 = cfg.regions[0].public_ipv4.clone();
        assert!(Catalog::build(&cfg).is_err());
    }
}
