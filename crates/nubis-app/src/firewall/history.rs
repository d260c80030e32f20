//! The hosted API around firewalls: rule versions (`/history`), fingerprints, the account's
//! default firewalls (`/networking/firewalls/settings`) and the firewall templates.

use nubis_model::filter::Filter;
use nubis_model::firewall::{
    DefaultFirewallIds, FirewallSettings, FirewallTemplate, RuleVersion, RuleVersionRef, VersionedRules, WrittenRules,
};
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Problems, Result};
use nubis_store::firewall_versions::DefaultFirewalls;
use nubis_store::firewalls::FirewallRow;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};

/// The fingerprint of a rule set: the first 8 hex digits of SHA-256 over its JSON form (the
/// hosted API's "32-bit hash"); equal rules have equal fingerprints.
pub(crate) fn fingerprint(rules: &WrittenRules) -> String {
    /// The JSON form written straight into the hash (every firewall of a page is fingerprinted).
    struct Hashing(Sha256);
    impl std::io::Write for Hashing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.update(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut h = Hashing(Sha256::new());
    // Serializing plain data into a writer that cannot fail does not fail.
    let _ = serde_json::to_writer(&mut h, rules);
    hex::encode(&h.0.finalize()[..4])
}

pub(crate) fn versioned(rules: &WrittenRules, version: i64) -> VersionedRules {
    VersionedRules { rules: rules.clone(), version, fingerprint: fingerprint(rules) }
}

/// `PUT /v4/networking/firewalls/settings`: the default firewalls to change (an id sets one,
/// null clears it, an omitted key keeps it).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FirewallSettingsUpdate {
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub default_firewall_ids: Option<DefaultFirewallIdsUpdate>,
}

#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DefaultFirewallIdsUpdate {
    #[serde(default, deserialize_with = "nubis_model::grants::present")]
    pub instance: Option<Option<i64>>,
    #[serde(default, deserialize_with = "nubis_model::grants::present")]
    pub nodebalancer: Option<Option<i64>>,
    #[serde(default, deserialize_with = "nubis_model::grants::present")]
    pub public_interface: Option<Option<i64>>,
    #[serde(default, deserialize_with = "nubis_model::grants::present")]
    pub vpc_interface: Option<Option<i64>>,
}

fn settings_view(d: DefaultFirewalls) -> FirewallSettings {
    FirewallSettings {
        default_firewall_ids: DefaultFirewallIds {
            instance: d.linode,
            nodebalancer: d.nodebalancer,
            public_interface: d.public_interface,
            vpc_interface: d.vpc_interface,
        },
    }
}

/// The templates: `public` (a public interface: inbound dropped but for SSH and ICMP, outbound
/// accepted) and `vpc` (a VPC interface: everything accepted from the private ranges).
pub fn templates() -> Vec<FirewallTemplate> {
    let rules = |v: serde_json::Value| nubis_model::firewall::parse_rules(&v, "", true).expect("a valid template");
    vec![
        FirewallTemplate {
            slug: "public".into(),
            rules: rules(serde_json::json!({
                "inbound_policy": "DROP",
                "inbound": [
                    {"action": "ACCEPT", "protocol": "TCP", "ports": "22", "label": "allow-ssh",
                     "addresses": {"ipv4": ["0.0.0.0/0"], "ipv6": ["::/0"]}},
                    {"action": "ACCEPT", "protocol": "ICMP", "label": "allow-icmp",
                     "addresses": {"ipv4": ["0.0.0.0/0"], "ipv6": ["::/0"]}}
                ],
                "outbound_policy": "ACCEPT",
                "outbound": []
            })),
        },
        FirewallTemplate {
            slug: "vpc".into(),
            rules: rules(serde_json::json!({
                "inbound_policy": "DROP",
                "inbound": [
                    {"action": "ACCEPT", "protocol": "TCP", "label": "allow-private-tcp",
                     "addresses": {"ipv4": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]}},
                    {"action": "ACCEPT", "protocol": "UDP", "label": "allow-private-udp",
                     "addresses": {"ipv4": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]}},
                    {"action": "ACCEPT", "protocol": "ICMP", "label": "allow-private-icmp",
                     "addresses": {"ipv4": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]}}
                ],
                "outbound_policy": "ACCEPT",
                "outbound": []
            })),
        },
    ]
}

impl App {
    /// `GET .../firewalls/{id}/history`: every version of the firewall's rules, oldest first.
    pub async fn firewall_history_list(
        &self,
        actor: &Actor,
        id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<RuleVersion>> {
        self.lookup_for::<FirewallRow>(actor, Op::FirewallHistoryList, id).await?;
        let (rows, total) = self.store.firewall_versions_page(id, filter, page.page, page.page_size).await?;
        let data = rows
            .iter()
            .map(|r| RuleVersion { updated: r.created, status: r.status, rules: RuleVersionRef { version: r.version } })
            .collect();
        Ok(Page::new(data, page, total))
    }

    /// `GET .../firewalls/{id}/history/rules/{version}`: the rules of one version.
    pub async fn firewall_history_get(&self, actor: &Actor, id: i64, version: i64) -> Result<VersionedRules> {
        self.lookup_for::<FirewallRow>(actor, Op::FirewallHistoryGet, id).await?;
        let v = self.store.firewall_version_get(id, version).await?.ok_or(Error::NotFound)?;
        Ok(versioned(&v.rules, v.version))
    }

    pub async fn firewall_settings_get(&self, actor: &Actor) -> Result<FirewallSettings> {
        self.authorize(actor, Op::FirewallSettingsGet).await?;
        Ok(settings_view(self.store.firewall_defaults(actor.account_id()).await?))
    }

    /// Sets the account's default firewalls; each must be a firewall of the account (read in the
    /// write, so a firewall deleted meanwhile is refused). No event, as in the hosted API.
    pub async fn firewall_settings_update(
        &self,
        actor: &Actor,
        input: FirewallSettingsUpdate,
    ) -> Result<FirewallSettings> {
        self.authorize(actor, Op::FirewallSettingsUpdate).await?;
        let input = &input;
        let d = self
            .write(|tx| {
                Box::pin(async move {
                    let mut d = tx.firewall_defaults_lock(actor.account_id()).await?;
                    let Some(ids) = &input.default_firewall_ids else { return Ok(d) };
                    let mut p = Problems::new();
                    let slots = [
                        ("instance", &ids.instance, &mut d.linode),
                        ("nodebalancer", &ids.nodebalancer, &mut d.nodebalancer),
                        ("public_interface", &ids.public_interface, &mut d.public_interface),
                        ("vpc_interface", &ids.vpc_interface, &mut d.vpc_interface),
                    ];
                    for (name, wanted, slot) in slots {
                        match wanted {
                            None => {}
                            Some(None) => *slot = None,
                            Some(Some(fw)) => {
                                if tx.firewall_lock(*fw, actor.account_id()).await?.is_some() {
                                    *slot = Some(*fw);
                                } else {
                                    p.add(format!("default_firewall_ids.{name}"), "Firewall not found");
                                }
                            }
                        }
                    }
                    p.finish()?;
                    tx.firewall_defaults_set(actor.account_id(), &d).await?;
                    Ok(d)
                })
            })
            .await?;
        Ok(settings_view(d))
    }

    pub async fn firewall_template_list(&self, actor: &Actor) -> Result<Vec<FirewallTemplate>> {
        self.authorize(actor, Op::FirewallTemplateList).await?;
        Ok(templates())
    }

    pub async fn firewall_template_get(&self, actor: &Actor, slug: &str) -> Result<FirewallTemplate> {
        self.authorize(actor, Op::FirewallTemplateGet).await?;
        templates().into_iter().find(|t| t.slug == slug).ok_or(Error::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_valid_and_drop_inbound_by_default() {
        let t = templates();
        assert_eq!(t.iter().map(|t| t.slug.as_str()).collect::<Vec<_>>(), ["public", "vpc"]);
        assert!(t.iter().all(|t| t.rules.inbound_policy == nubis_model::firewall::Action::Drop));
    }

    #[test]
    fn fingerprints_are_eight_hex_digits_and_follow_the_rules() {
        let a = WrittenRules::from(templates().remove(0).rules);
        let b = WrittenRules::from(templates().remove(1).rules);
        assert_eq!(fingerprint(&a).len(), 8);
        assert!(fingerprint(&a).bytes().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(fingerprint(&a), fingerprint(&a.clone()));
        assert_ne!(fingerprint(&a), fingerprint(&b));
        // The first 8 hex digits of SHA-256 over the JSON text (a firewall's fingerprint does
        // not change with how it is computed).
        let text = serde_json::to_string(&b).unwrap();
        assert_eq!(fingerprint(&b), hex::encode(Sha256::digest(text.as_bytes()))[..8]);
    }
}
