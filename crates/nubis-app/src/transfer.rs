//! The account's network transfer of the current month (`GET /v4/account/transfer`).
//!
//! The quota is the sum of the `transfer` of the account's instances' types; what is used is the
//! outbound traffic its load balancers carried this month (instances are simulated and move no
//! bytes), counted in whole gigabytes, a started one counting. Every region shares the pool, so
//! no region has a line of its own.

use nubis_model::Result;
use nubis_model::account::AccountTransfer;

use crate::App;
use crate::auth::{Actor, Op};
use crate::nodebalancer::month_start;

const GB: i64 = 1_000_000_000;

impl App {
    pub async fn account_transfer(&self, actor: &Actor) -> Result<AccountTransfer> {
        self.authorize(actor, Op::AccountTransfer).await?;
        let instances = self.store.instances_of_account(actor.account_id()).await?;
        let mut quota = 0;
        for i in instances.iter() {
            quota += self.catalog.instance_type(&i.kind).map_or(0, |t| t.transfer);
        }
        let bytes_out: i64 =
            self.store.account_transfer_of(actor.account_id(), month_start()).await?.iter().map(|r| r.2).sum();
        let used = (bytes_out + GB - 1) / GB;
        Ok(AccountTransfer { billable: (used - quota).max(0), quota, used, region_transfers: Vec::new() })
    }
}
