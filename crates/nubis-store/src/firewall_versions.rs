//! Firewall rule versions (every version of a firewall's rules, with the firewall's status when
//! it was made) and each account's default firewalls (migration 0029).

use nubis_model::filter::Filter;
use nubis_model::firewall::{FirewallStatus, WrittenRules};
use nubis_model::{Error, Result, Timestamp};

use crate::db::{Row, query};
use crate::firewalls::{FirewallRow, json, rules_of};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};

/// One version of a firewall's rules.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleVersionRow {
    pub firewall_id: i64,
    pub version: i64,
    pub rules: WrittenRules,
    /// The firewall's status when this version was made.
    pub status: FirewallStatus,
    pub created: Timestamp,
}

/// An account's default firewalls, by the kind of service they are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DefaultFirewalls {
    pub linode: Option<i64>,
    pub nodebalancer: Option<i64>,
    pub public_interface: Option<i64>,
    pub vpc_interface: Option<i64>,
}

const SELECT: &str = "SELECT v.firewall_id, v.version, v.rules, v.status, v.created FROM firewall_rule_versions v";

const VERSION_LIST: Listing<'static> = Listing {
    select: SELECT,
    from: "FROM firewall_rule_versions v",
    scope: "v.firewall_id",
    and: "",
    cols: &[
        Column { path: "version", expr: "v.version", kind: ColKind::Int },
        Column { path: "rules.version", expr: "v.version", kind: ColKind::Int },
        Column { path: "updated", expr: "v.created", kind: ColKind::Text },
        Column { path: "status", expr: "v.status", kind: ColKind::Text },
    ],
    order: "v.version",
    kept_count: Some("firewall_versions"),
    indexed: &["version", "rules.version", "updated", "status"],
};

fn version(r: &Row) -> Result<RuleVersionRow> {
    let status = r.str("status")?;
    Ok(RuleVersionRow {
        firewall_id: r.i64("firewall_id")?,
        version: r.i64("version")?,
        rules: rules_of(&r.str("rules")?)?,
        status: FirewallStatus::parse(&status).ok_or_else(|| Error::internal(format!("firewall status {status}")))?,
        created: r.ts("created")?,
    })
}

fn defaults(r: &Row) -> Result<DefaultFirewalls> {
    Ok(DefaultFirewalls {
        linode: r.opt_i64("linode")?,
        nodebalancer: r.opt_i64("nodebalancer")?,
        public_interface: r.opt_i64("public_interface")?,
        vpc_interface: r.opt_i64("vpc_interface")?,
    })
}

impl Tx<'_> {
    /// Records the firewall's current rules as its current version (after an insert or a change
    /// of its rules, in the same transaction).
    pub(crate) async fn firewall_version_record(&mut self, f: &FirewallRow) -> Result<()> {
        query(
            "INSERT INTO firewall_rule_versions (firewall_id, version, rules, status, created) \
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(f.id)
        .bind(f.rules_version)
        .bind(json(&f.rules)?)
        .bind(f.status.name())
        .bind(f.updated)
        .execute(self.h())
        .await?;
        Ok(())
    }

    /// Deletes a firewall's versions and takes it out of its account's defaults (with the
    /// firewall's delete).
    pub(crate) async fn firewall_versions_delete(&mut self, firewall_id: i64) -> Result<()> {
        query("DELETE FROM firewall_rule_versions WHERE firewall_id = $1").bind(firewall_id).execute(self.h()).await?;
        for col in ["linode", "nodebalancer", "public_interface", "vpc_interface"] {
            query(format!("UPDATE firewall_settings SET {col} = NULL WHERE {col} = $1"))
                .bind(firewall_id)
                .execute(self.h())
                .await?;
        }
        Ok(())
    }

    /// The account's default firewalls, read inside the transaction.
    pub async fn firewall_defaults_lock(&mut self, account_id: i64) -> Result<DefaultFirewalls> {
        let row = query(
            "SELECT linode, nodebalancer, public_interface, vpc_interface FROM firewall_settings WHERE account_id = $1",
        )
        .bind(account_id)
        .fetch_optional(self.h())
        .await?;
        row.as_ref().map(defaults).transpose().map(Option::unwrap_or_default)
    }

    pub async fn firewall_defaults_set(&mut self, account_id: i64, d: &DefaultFirewalls) -> Result<()> {
        query(
            "INSERT INTO firewall_settings (account_id, linode, nodebalancer, public_interface, vpc_interface) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (account_id) DO UPDATE SET linode = excluded.linode, \
             nodebalancer = excluded.nodebalancer, public_interface = excluded.public_interface, \
             vpc_interface = excluded.vpc_interface",
        )
        .bind(account_id)
        .bind(d.linode)
        .bind(d.nodebalancer)
        .bind(d.public_interface)
        .bind(d.vpc_interface)
        .execute(self.h())
        .await?;
        Ok(())
    }
}

impl Store {
    /// One page of a firewall's rule versions, oldest first, and how many it has.
    pub async fn firewall_versions_page(
        &self,
        firewall_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<RuleVersionRow>, u64)> {
        let v = Visibility { scope_id: firewall_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&VERSION_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(version).collect::<Result<_>>()?, total))
    }

    /// One version of a firewall's rules.
    pub async fn firewall_version_get(&self, firewall_id: i64, version_no: i64) -> Result<Option<RuleVersionRow>> {
        let sql = format!("{SELECT} WHERE v.firewall_id = $1 AND v.version = $2");
        let row = query(sql).bind(firewall_id).bind(version_no).fetch_optional(self.r()).await?;
        row.as_ref().map(version).transpose()
    }

    /// The account's default firewalls.
    pub async fn firewall_defaults(&self, account_id: i64) -> Result<DefaultFirewalls> {
        let row = query(
            "SELECT linode, nodebalancer, public_interface, vpc_interface FROM firewall_settings WHERE account_id = $1",
        )
        .bind(account_id)
        .fetch_optional(self.r())
        .await?;
        row.as_ref().map(defaults).transpose().map(Option::unwrap_or_default)
    }
}
