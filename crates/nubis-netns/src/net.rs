//! Namespaces, links, addresses and routes: making the host match a [`Desired`] state.

use std::collections::{BTreeMap, BTreeSet};

use ipnet::IpNet;
use serde_json::Value;

use crate::cmd::{ip, ip_batch, ip_json, run};
use crate::spec::{InstanceSpec, RegionSpec};
use crate::{Names, Result, netns_path};

/// The route protocol number marking routes nubis adds in the host namespace.
pub const ROUTE_PROTO: &str = "0x6e";

/// Networks that no packet may leave the host for: unreachable routes (above every route nubis
/// adds, below none of the host's own) keep them here even while a link is being made.
const KEPT_HERE: &[&str] = &["198.18.0.0/15", "192.168.128.0/17"];

/// Whether every address of `net` is kept on this host (inside 198.18.0.0/15 or
/// 192.168.128.0/17).
pub fn kept_here(net: ipnet::Ipv4Net) -> bool {
    KEPT_HERE.iter().filter_map(|k| k.parse::<ipnet::Ipv4Net>().ok()).any(|k| k.contains(&net))
}

/// What one `ip -j link show` says of a link.
#[derive(Debug, Clone, Default)]
pub struct Link {
    pub name: String,
    pub master: Option<String>,
    pub kind: Option<String>,
}

/// The host's networking as nubis makes it.
#[derive(Debug, Clone)]
pub struct Net {
    names: Names,
}

impl Net {
    pub fn new(names: Names) -> Net {
        Net { names }
    }

    pub fn names(&self) -> &Names {
        &self.names
    }

    /// The namespaces named `nubis<tag>...` (every tag when `all`).
    pub async fn namespaces(&self, all: bool) -> Result<Vec<String>> {
        let v = ip_json(&["netns", "list"]).await?;
        let prefix = if all { "nubis" } else { self.names.prefix() };
        Ok(list(&v)
            .iter()
            .filter_map(|n| n["name"].as_str())
            .filter(|n| n.starts_with(prefix) && (all || n[prefix.len()..].starts_with('-')))
            .map(String::from)
            .collect())
    }

    async fn links(ns: Option<&str>) -> Result<Vec<Link>> {
        let v = match ns {
            Some(ns) => ip_json(&["-n", ns, "-d", "link", "show"]).await?,
            None => ip_json(&["-d", "link", "show"]).await?,
        };
        Ok(list(&v)
            .iter()
            .map(|l| Link {
                name: l["ifname"].as_str().unwrap_or_default().to_string(),
                master: l["master"].as_str().map(String::from),
                kind: l["linkinfo"]["info_kind"].as_str().map(String::from),
            })
            .collect())
    }

    /// The fabric namespace's links.
    pub async fn fabric_links(&self) -> Result<Vec<Link>> {
        Self::links(Some(&self.names.fabric())).await
    }

    /// Makes the fabric namespace, the host's guard table and the unreachable routes.
    pub async fn ensure_fabric(&self) -> Result<()> {
        let fabric = self.names.fabric();
        if !netns_path(&fabric).exists() {
            ip(&["netns", "add", &fabric]).await?;
        }
        ip_batch(Some(&fabric), &["link set lo up".to_string()]).await?;
        crate::nft::apply_guard(self.names.prefix()).await?;
        let lines: Vec<String> = KEPT_HERE
            .iter()
            .map(|n| format!("route replace unreachable {n} metric 4095 proto {ROUTE_PROTO}"))
            .collect();
        ip_batch(None, &lines).await
    }

    /// The host's links to the regions, their addresses and the routes to private addresses.
    pub async fn apply_regions(&self, regions: &BTreeMap<u16, RegionSpec>, fabric: &[Link]) -> Result<()> {
        let f = self.names.fabric();
        let host_links = Self::links(None).await?;
        let addrs = addresses(None).await?;
        let mut fab = Vec::new();
        let mut host = Vec::new();
        let mut ports = Vec::new();
        for (n, spec) in regions {
            let br = format!("r{n}");
            let link = self.names.region_link(*n);
            if !fabric.iter().any(|l| l.name == br) {
                fab.push(format!("link add {br} type bridge"));
            }
            fab.push(format!("link set {br} up"));
            if !host_links.iter().any(|l| l.name == link) {
                host.push(format!("link add {link} type veth peer name h{n} netns {f}"));
            }
            if fabric.iter().find(|l| l.name == format!("h{n}")).and_then(|l| l.master.as_deref()) != Some(br.as_str())
            {
                ports.push(format!("link set h{n} master {br} up"));
            }
            let want: BTreeSet<String> = spec.host_addresses.iter().map(|a| a.to_string()).collect();
            let have: BTreeSet<String> = addrs.get(&link).cloned().unwrap_or_default();
            for a in have.difference(&want).filter(|a| !a.starts_with("fe80:")) {
                host.push(format!("addr del {a} dev {link}"));
            }
            for a in want.difference(&have) {
                host.push(format!("addr add {a} dev {link}"));
            }
            host.push(format!("link set {link} up"));
        }
        // Regions no longer configured.
        for l in &host_links {
            if self.names.region_of_link(&l.name).is_some_and(|n| !regions.contains_key(&n)) {
                host.push(format!("link del {}", l.name));
            }
        }
        ip_batch(Some(&f), &fab).await?;
        ip_batch(None, &host).await?;
        ip_batch(Some(&f), &ports).await?;
        // Routes to private addresses, through the link of their region, from its first address.
        let routes = ip_json(&["route", "show", "proto", ROUTE_PROTO]).await?;
        let mut have: BTreeMap<String, String> = BTreeMap::new();
        for r in list(&routes) {
            if let (Some(dst), Some(dev)) = (r["dst"].as_str(), r["dev"].as_str()) {
                have.insert(dst.to_string(), dev.to_string());
            }
        }
        let mut lines = Vec::new();
        let mut wanted = BTreeSet::new();
        for (n, spec) in regions {
            let link = self.names.region_link(*n);
            let src = spec.host_addresses.first().map(|a| format!(" src {}", a.addr())).unwrap_or_default();
            for a in &spec.private_routes {
                let dst = a.to_string();
                wanted.insert(dst.clone());
                if have.get(&dst) != Some(&link) {
                    lines.push(format!("route replace {dst}/32 dev {link}{src} proto {ROUTE_PROTO}"));
                }
            }
        }
        for (dst, dev) in &have {
            if self.names.region_of_link(dev).is_some() && !wanted.contains(dst) {
                lines.push(format!("route del {dst} dev {dev} proto {ROUTE_PROTO}"));
            }
        }
        ip_batch(None, &lines).await
    }

    /// Makes the bridges of VPCs and VLANs in `wanted` and removes those no longer wanted.
    pub async fn apply_bridges(&self, wanted: &BTreeSet<String>, fabric: &[Link]) -> Result<()> {
        let mut lines = Vec::new();
        for b in wanted {
            if !fabric.iter().any(|l| &l.name == b) {
                lines.push(format!("link add {b} type bridge"));
                lines.push(format!("link set {b} up"));
            }
        }
        for l in fabric {
            let ours = l.kind.as_deref() == Some("bridge") && (l.name.starts_with('v') || l.name.starts_with('l'));
            if ours && !wanted.contains(&l.name) {
                lines.push(format!("link del {}", l.name));
            }
        }
        ip_batch(Some(&self.names.fabric()), &lines).await
    }

    /// Makes instance `id`'s namespace match `spec`: links into the right bridges, addresses,
    /// routes, and its nftables rules.
    pub async fn apply_instance(&self, id: i64, spec: &InstanceSpec, fabric: &[Link]) -> Result<()> {
        let ns = self.names.instance(id);
        let f = self.names.fabric();
        if !netns_path(&ns).exists() {
            ip(&["netns", "add", &ns]).await?;
            // No addresses of the kernel's own choosing, no duplicate detection delays.
            let path = format!("--net={}", netns_path(&ns).display());
            run(
                "nsenter",
                &[
                    &path,
                    "--",
                    "sysctl",
                    "-q",
                    "-w",
                    "net.ipv6.conf.default.addr_gen_mode=1",
                    "net.ipv6.conf.all.accept_dad=0",
                    "net.ipv6.conf.default.accept_dad=0",
                    "net.ipv6.conf.default.accept_ra=0",
                    "net.ipv4.conf.all.arp_ignore=1",
                ],
                None,
            )
            .await?;
        }
        let links = Self::links(Some(&ns)).await?;
        let addrs = addresses(Some(&ns)).await?;
        let mut fab = Vec::new();
        let mut inside = vec!["link set lo up".to_string()];
        for (k, nic) in spec.nics.iter().enumerate() {
            let port = format!("i{id}n{k}");
            let br = nic.segment.bridge();
            if !links.iter().any(|l| l.name == nic.name) {
                // Made in the fabric with its peer moved into the instance.
                let _ = ip(&["-n", &f, "link", "del", &port]).await;
                ip(&["-n", &f, "link", "add", &port, "type", "veth", "peer", "name", &nic.name, "netns", &ns]).await?;
            }
            if fabric.iter().find(|l| l.name == port).and_then(|l| l.master.as_deref()) != Some(br.as_str()) {
                fab.push(format!("link set {port} master {br} up"));
            }
            inside.push(format!("link set {} up", nic.name));
            let want: BTreeSet<String> = nic.addresses.iter().map(|a| a.to_string()).collect();
            let have = addrs.get(&nic.name).cloned().unwrap_or_default();
            for a in have.difference(&want) {
                inside.push(format!("addr del {a} dev {}", nic.name));
            }
            for a in want.difference(&have) {
                let v6 = if a.contains(':') { " nodad" } else { "" };
                inside.push(format!("addr add {a} dev {}{v6}", nic.name));
            }
        }
        for l in &links {
            if l.name.starts_with("eth") && !spec.nics.iter().any(|n| n.name == l.name) {
                inside.push(format!("link del {}", l.name));
            }
        }
        let want: BTreeSet<String> = spec.loopback.iter().map(|a| a.to_string()).collect();
        let have = addrs.get("lo").cloned().unwrap_or_default();
        for a in have.difference(&want).filter(|a| *a != "127.0.0.1/8" && *a != "::1/128") {
            inside.push(format!("addr del {a} dev lo"));
        }
        for a in want.difference(&have) {
            inside.push(format!("addr add {a} dev lo"));
        }
        // The metadata link: 169.254.169.253 here, 169.254.169.254 at the fabric's end.
        let md = crate::metadata::fabric_link(id);
        if !links.iter().any(|l| l.name == crate::metadata::LINK) {
            let _ = ip(&["-n", &f, "link", "del", &md]).await;
            ip(&["-n", &f, "link", "add", &md, "type", "veth", "peer", "name", crate::metadata::LINK, "netns", &ns])
                .await?;
        }
        fab.push(format!("addr replace {}/32 dev {md}", crate::metadata::ADDRESS));
        fab.push(format!("link set {md} up"));
        inside.push(format!("addr replace {}/32 dev {}", crate::metadata::CLIENT, crate::metadata::LINK));
        inside.push(format!("link set {} up", crate::metadata::LINK));
        ip_batch(Some(&f), &fab).await?;
        ip_batch(Some(&ns), &inside).await?;
        // Routes once the addresses are there.
        let mut routes = vec![format!(
            "route replace {}/32 dev {} src {}",
            crate::metadata::ADDRESS,
            crate::metadata::LINK,
            crate::metadata::CLIENT
        )];
        for nic in &spec.nics {
            for r in &nic.routes {
                routes.push(format!("route replace {} dev {}", r.trunc(), nic.name));
            }
        }
        let gw_nic = spec.nics.iter().find(|n| matches!(n.segment, crate::spec::Segment::Region(_)));
        match (spec.gateway, gw_nic) {
            (Some(gw), Some(nic)) => routes.push(format!("route replace default via {gw} dev {}", nic.name)),
            _ => {
                let _ = ip(&["-n", &ns, "route", "del", "default"]).await;
            }
        }
        ip_batch(Some(&ns), &routes).await?;
        crate::nft::apply_instance(&ns, spec).await
    }

    /// Removes instance `id`'s namespace (its links go with it).
    pub async fn remove_instance(&self, id: i64) -> Result<()> {
        self.remove_namespace(&self.names.instance(id)).await
    }

    pub async fn remove_namespace(&self, ns: &str) -> Result<()> {
        if netns_path(ns).exists() {
            ip(&["netns", "del", ns]).await?;
        }
        Ok(())
    }

    /// Removes everything of this prefix (every `nubis*` when `all`): namespaces, host links,
    /// guard tables. The unreachable routes stay while anything of nubis remains.
    pub async fn remove_everything(&self, all: bool) -> Result<()> {
        for ns in self.namespaces(all).await? {
            self.remove_namespace(&ns).await?;
        }
        let prefix = if all { "nubis" } else { self.names.prefix() };
        for l in Self::links(None).await? {
            // (a prefix may begin another: `nubist7` and `nubist7rx`)
            let rest = l.name.strip_prefix(prefix);
            if rest.is_some_and(|_| all || self.names.region_of_link(&l.name).is_some()) {
                let _ = ip(&["link", "del", &l.name]).await;
            }
        }
        crate::nft::remove_guards(if all { None } else { Some(self.names.prefix()) }).await?;
        if all {
            for n in KEPT_HERE {
                let _ = ip(&["route", "del", "unreachable", n, "metric", "4095", "proto", ROUTE_PROTO]).await;
            }
        }
        Ok(())
    }
}

fn list(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// The addresses (`a/len`) of every link of a namespace, by link name.
async fn addresses(ns: Option<&str>) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let v = match ns {
        Some(ns) => ip_json(&["-n", ns, "addr", "show"]).await?,
        None => ip_json(&["addr", "show"]).await?,
    };
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for l in list(&v) {
        let name = l["ifname"].as_str().unwrap_or_default().to_string();
        let set = out.entry(name).or_default();
        for a in list(&l["addr_info"]) {
            if let (Some(local), Some(len)) = (a["local"].as_str(), a["prefixlen"].as_u64())
                && let Ok(net) = format!("{local}/{len}").parse::<IpNet>()
            {
                set.insert(net.to_string());
            }
        }
    }
    Ok(out)
}
