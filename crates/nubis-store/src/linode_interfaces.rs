//! Linode interfaces (the newer generation): the account's choice of generation for new
//! instances, and the history of every version of each interface. The interfaces themselves are
//! rows of `instance_interfaces` without a profile (see [`crate::interfaces`]).

use crate::db::Row;
use nubis_model::filter::Filter;
use nubis_model::{Result, Timestamp};

use crate::db::{Handle, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

async fn interfaces_setting(h: Handle<'_>, account_id: i64) -> Result<Option<String>> {
    let r = query("SELECT interfaces_for_new_linodes FROM account_instance_settings WHERE account_id = $1")
        .bind(account_id)
        .fetch_optional(h)
        .await?;
    r.map(|r| r.str("interfaces_for_new_linodes")).transpose()
}

impl Tx<'_> {
    /// The account's `interfaces_for_new_linodes`, when it was ever set (inside the transaction).
    pub async fn account_interfaces_setting(&mut self, account_id: i64) -> Result<Option<String>> {
        interfaces_setting(self.h(), account_id).await
    }

    /// The account's Network Helper setting (new profiles and instances follow it), read inside
    /// the transaction without locking the account.
    pub async fn account_network_helper(&mut self, account_id: i64) -> Result<bool> {
        let n = query(
            "SELECT CASE WHEN b.network_helper IS NULL OR b.network_helper THEN 1 ELSE 0 END \
             FROM accounts a LEFT JOIN account_billing b ON b.account_id = a.id WHERE a.id = $1",
        )
        .bind(account_id)
        .fetch_i64(self.h())
        .await?;
        Ok(n != 0)
    }

    pub async fn account_set_interfaces_setting(&mut self, account_id: i64, value: &str) -> Result<()> {
        let n = query("UPDATE account_instance_settings SET interfaces_for_new_linodes = $2 WHERE account_id = $1")
            .bind(account_id)
            .bind(value)
            .execute(self.h())
            .await?;
        if n == 0 {
            query("INSERT INTO account_instance_settings (account_id, interfaces_for_new_linodes) VALUES ($1, $2)")
                .bind(account_id)
                .bind(value)
                .execute(self.h())
                .await?;
        }
        Ok(())
    }

    /// Records a version of a Linode interface (`data`: its record as JSON).
    pub async fn interface_history_insert(
        &mut self,
        interface_id: i64,
        instance_id: i64,
        version: i64,
        data: &str,
        now: Timestamp,
    ) -> Result<()> {
        query(
            "INSERT INTO instance_interface_history (interface_id, instance_id, version, interface_data, created) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(interface_id)
        .bind(instance_id)
        .bind(version)
        .bind(data)
        .bind(now.to_string())
        .execute(self.h())
        .await?;
        Ok(())
    }
}

impl Store {
    pub async fn account_interfaces_setting(&self, account_id: i64) -> Result<Option<String>> {
        interfaces_setting(self.r(), account_id).await
    }
}

/// One version of a Linode interface.
#[derive(Debug, Clone, PartialEq)]
pub struct InterfaceHistoryRow {
    pub id: i64,
    pub interface_id: i64,
    pub instance_id: i64,
    pub version: i64,
    pub interface_data: String,
    pub created: Timestamp,
}

fn history(r: &Row) -> Result<InterfaceHistoryRow> {
    Ok(InterfaceHistoryRow {
        id: r.i64("id")?,
        interface_id: r.i64("interface_id")?,
        instance_id: r.i64("instance_id")?,
        version: r.i64("version")?,
        interface_data: r.str("interface_data")?,
        created: r.ts("created")?,
    })
}

const HISTORY_LIST: Listing<'static> = Listing {
    select: "SELECT h.id, h.interface_id, h.instance_id, h.version, h.interface_data, h.created \
             FROM instance_interface_history h",
    from: "FROM instance_interface_history h",
    scope: "h.instance_id",
    and: "",
    cols: &[
        Column { path: "interface_history_id", expr: "h.id", kind: ColKind::Int },
        Column { path: "interface_id", expr: "h.interface_id", kind: ColKind::Int },
        Column { path: "version", expr: "h.version", kind: ColKind::Int },
        Column { path: "created", expr: "h.created", kind: ColKind::Text },
    ],
    order: "h.id",
    kept_count: Some("interface_history"),
    indexed: &["interface_history_id", "interface_id", "version", "created"],
};

impl Store {
    /// One page of an instance's interface history and how many match.
    pub async fn interface_history_page(
        &self,
        instance_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<InterfaceHistoryRow>, u64)> {
        let v = Visibility { scope_id: instance_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&HISTORY_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(history).collect::<Result<_>>()?, total))
    }
}
