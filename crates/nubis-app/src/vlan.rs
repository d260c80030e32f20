//! VLANs (reference `Vlans`): a VLAN exists while instances have an interface with its label in
//! its region (it comes into being with the first such interface, at instance creation, and goes
//! with the last), so the list is derived from the interfaces, one page at a time in SQL.

use nubis_model::Result;
use nubis_model::filter::Filter;
use nubis_model::instance::Vlan;
use nubis_model::page::{Page, PageRequest};

use crate::App;
use crate::auth::{Actor, Op};

impl App {
    /// `GET /v4/networking/vlans`: the account's VLANs with the instances (that the actor may
    /// see) attached to them, oldest first. A VLAN came into being with its first interface,
    /// whoever may see that instance.
    pub async fn vlan_list(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<Vlan>> {
        self.authorize(actor, Op::VlanList).await?;
        let grant_user = Self::grant_user(actor);
        let (rows, results) =
            self.store.vlans_page(actor.account_id(), grant_user, filter, page.page, page.page_size).await?;
        let members = self.store.vlan_members(actor.account_id(), grant_user, &rows).await?;
        let vlans = rows
            .into_iter()
            .map(|v| Vlan {
                instances: members
                    .iter()
                    .filter(|(region, label, _)| *region == v.region && *label == v.label)
                    .map(|m| m.2)
                    .collect(),
                label: v.label,
                region: v.region,
                created: v.created,
            })
            .collect();
        Ok(Page::new(vlans, page, results))
    }
}
