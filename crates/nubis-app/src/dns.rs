//! Forward DNS, checked before a reverse name is set: the name must resolve to the address.
//! The configuration's static records answer first; then, unless `dns.offline`, the configured
//! name servers (hickory-resolver, UDP), or the system resolver when none are configured. Tests
//! use the static records or a name server of their own on 127.0.0.1, never the system resolver.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{LookupIpStrategy, NameServerConfig, ResolveHosts, ResolverConfig};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use nubis_model::config::DnsConfig;

/// How forward lookups are answered.
#[derive(Debug, Clone)]
pub(crate) struct ForwardDns {
    static_records: BTreeMap<String, Vec<IpAddr>>,
    nameservers: Vec<SocketAddr>,
    offline: bool,
}

/// A name as compared: lowercase, without the trailing dot.
pub(crate) fn normalize(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// A host name: at most 253 characters of dot-separated labels of 1..63 letters, digits and
/// hyphens, not beginning or ending with a hyphen, with at least two labels.
pub(crate) fn is_hostname(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    let labels: Vec<&str> = name.split('.').collect();
    name.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|l| {
            (1..=63).contains(&l.len())
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

impl ForwardDns {
    /// Reads `[dns]`; refuses addresses that are not IP addresses (port 53 when omitted).
    pub fn from_config(c: &DnsConfig) -> Result<ForwardDns, String> {
        let mut static_records = BTreeMap::new();
        for (name, addrs) in &c.static_records {
            let parsed: Result<Vec<IpAddr>, _> = addrs.iter().map(|a| a.parse::<IpAddr>()).collect();
            let parsed = parsed.map_err(|_| format!("dns.static_records.{name}: not an IP address"))?;
            static_records.insert(normalize(name), parsed);
        }
        let nameservers = c
            .nameservers
            .iter()
            .map(|s| {
                s.parse::<SocketAddr>()
                    .or_else(|_| s.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53)))
                    .map_err(|_| format!("dns.nameservers: '{s}' is not an address such as 127.0.0.1:5353"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ForwardDns { static_records, nameservers, offline: c.offline })
    }

    /// Whether `name` resolves to `address`. `Err` when the lookup itself failed (no answer in
    /// time, no name server reachable), as opposed to an answer without the address.
    pub async fn resolves_to(&self, name: &str, address: IpAddr) -> Result<bool, String> {
        let key = normalize(name);
        if let Some(addrs) = self.static_records.get(&key) {
            return Ok(addrs.contains(&address));
        }
        if self.offline {
            return Ok(false);
        }
        let resolver = self.resolver()?;
        match resolver.lookup_ip(format!("{key}.")).await {
            Ok(found) => Ok(found.iter().any(|a| a == address)),
            Err(e) if e.is_no_records_found() || e.is_nx_domain() => Ok(false),
            Err(e) => Err(format!("the lookup of {key} failed: {e}")),
        }
    }

    fn resolver(&self) -> Result<TokioResolver, String> {
        let mut builder = if self.nameservers.is_empty() {
            TokioResolver::builder_tokio().map_err(|e| format!("system resolver: {e}"))?
        } else {
            let servers = self
                .nameservers
                .iter()
                .map(|s| {
                    let mut ns = NameServerConfig::udp(s.ip());
                    for c in &mut ns.connections {
                        c.port = s.port();
                    }
                    ns
                })
                .collect();
            TokioResolver::builder_with_config(
                ResolverConfig::from_name_servers(servers),
                TokioRuntimeProvider::default(),
            )
        };
        let o = builder.options_mut();
        o.use_hosts_file = ResolveHosts::Never;
        o.ip_strategy = LookupIpStrategy::Ipv4AndIpv6;
        o.timeout = Duration::from_secs(2);
        o.attempts = 1;
        o.cache_size = 0;
        builder.build().map_err(|e| format!("resolver: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names() {
        for ok in ["a.example.com", "mail.example.org.", "x-1.y", "127-10-0-5.ip.nubis.test"] {
            assert!(is_hostname(ok), "{ok}");
        }
        for bad in ["", "localhost", "-a.example.com", "a-.example.com", "a..b", "a b.c", "ä.de", &"a".repeat(64)] {
            assert!(!is_hostname(bad), "{bad}");
        }
    }

    #[tokio::test]
    async fn static_records_answer_first_and_offline_asks_nobody() {
        let mut c = DnsConfig { offline: true, ..Default::default() };
        c.static_records.insert("Web.Example.COM.".into(), vec!["127.10.0.2".into(), "2001:db8::1".into()]);
        let d = ForwardDns::from_config(&c).unwrap();
        assert!(d.resolves_to("web.example.com", "127.10.0.2".parse().unwrap()).await.unwrap());
        assert!(d.resolves_to("WEB.example.com.", "2001:db8::1".parse().unwrap()).await.unwrap());
        assert!(!d.resolves_to("web.example.com", "127.10.0.3".parse().unwrap()).await.unwrap());
        assert!(!d.resolves_to("other.example.com", "127.10.0.2".parse().unwrap()).await.unwrap());
        c.nameservers = vec!["nonsense".into()];
        assert!(ForwardDns::from_config(&c).is_err());
    }
}
