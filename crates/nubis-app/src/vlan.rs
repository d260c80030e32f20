//! VLANs (reference `Vlans`): a VLAN exists while instances have an interface with its label in
//! its region (it comes into being with the first such interface, at instance creation, and goes
//! with the last), so the list is derived from the interfaces.

use std::collections::BTreeMap;

use nubis_model::Result;
use nubis_model::grants::GrantKind;
use nubis_model::instance::Vlan;

use crate::App;
use crate::auth::{Actor, Op};

impl App {
    /// `GET /v4/networking/vlans`: the account's VLANs with the instances (that the actor may
    /// see) attached to them, oldest first.
    pub async fn vlan_list(&self, actor: &Actor) -> Result<Vec<Vlan>> {
        self.authorize(actor, Op::VlanList).await?;
        let interfaces = self.store.interfaces_of_account(actor.account_id).await?;
        let all: Vec<_> = interfaces.iter().filter(|f| f.purpose == "vlan").cloned().collect();
        // A VLAN came into being with its first interface, whoever may see that instance.
        let mut born: BTreeMap<(String, String), nubis_model::Timestamp> = BTreeMap::new();
        for f in &all {
            let Some(label) = f.label.clone() else { continue };
            let t = born.entry((f.region.clone(), label)).or_insert(f.created);
            *t = (*t).min(f.created);
        }
        let vlans = self.visible(actor, GrantKind::Instance, all, |f| f.instance_id).await?;
        let mut by_key: BTreeMap<(String, String), Vlan> = BTreeMap::new();
        for f in vlans {
            let Some(label) = f.label.clone() else { continue };
            let key = (f.region.clone(), label.clone());
            let created = born.get(&key).copied().unwrap_or(f.created);
            let v = by_key.entry(key).or_insert_with(|| Vlan {
                label,
                region: f.region.clone(),
                instances: Vec::new(),
                created,
            });
            if !v.instances.contains(&f.instance_id) {
                v.instances.push(f.instance_id);
            }
        }
        let mut out: Vec<Vlan> = by_key.into_values().collect();
        for v in &mut out {
            v.instances.sort_unstable();
        }
        out.sort_by(|a, b| (a.created, &a.region, &a.label).cmp(&(b.created, &b.region, &b.label)));
        Ok(out)
    }
}
