//! IP addresses of instances (public and private IPv4, SLAAC and link-local IPv6), unique by
//! constraint; IPv4 addresses are also kept as integers so that "what is taken in this pool" is
//! one range query inside the allocating transaction.

use std::collections::BTreeSet;

use crate::db::Row;
use nubis_model::{Result, Timestamp};

use crate::db::query;
use crate::rows::RowExt;
use crate::{Store, Tx};

/// What an address is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpKind {
    Ipv4,
    Slaac,
    LinkLocal,
}

impl IpKind {
    pub fn name(self) -> &'static str {
        match self {
            IpKind::Ipv4 => "ipv4",
            IpKind::Slaac => "slaac",
            IpKind::LinkLocal => "link_local",
        }
    }
    fn parse(s: &str) -> IpKind {
        match s {
            "slaac" => IpKind::Slaac,
            "link_local" => IpKind::LinkLocal,
            _ => IpKind::Ipv4,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct IpRow {
    pub id: i64,
    pub address: String,
    pub v4: Option<u32>,
    pub kind: IpKind,
    pub public: bool,
    pub account_id: i64,
    pub region: String,
    pub instance_id: i64,
    /// Explicitly set reverse DNS; `None` means the default (public IPv4) or none.
    pub rdns: Option<String>,
    pub created: Timestamp,
}

pub(crate) const COLS: &str = "id, address, v4, kind, public, account_id, region, instance_id, rdns, created";

pub(crate) fn ip(r: &Row) -> Result<IpRow> {
    Ok(IpRow {
        id: r.i64("id")?,
        address: r.str("address")?,
        v4: r.opt_i64("v4")?.map(|n| n as u32),
        kind: IpKind::parse(&r.str("kind")?),
        public: r.bool("public")?,
        account_id: r.i64("account_id")?,
        region: r.str("region")?,
        instance_id: r.i64("instance_id")?,
        rdns: r.opt_str("rdns")?,
        created: r.ts("created")?,
    })
}

pub struct NewIp<'a> {
    /// The canonical text of the address.
    pub address: &'a str,
    pub v4: Option<u32>,
    pub kind: IpKind,
    pub public: bool,
    pub account_id: i64,
    pub region: &'a str,
    pub instance_id: i64,
    pub created: Timestamp,
}

impl Tx<'_> {
    /// Inserts an address; one that exists already (anywhere) is `Error::Unique`.
    pub async fn ip_insert(&mut self, n: &NewIp<'_>) -> Result<IpRow> {
        let sql = format!(
            "INSERT INTO ip_addresses (address, v4, kind, public, account_id, region, instance_id, created) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(n.address)
            .bind(n.v4.map(i64::from))
            .bind(n.kind.name())
            .bind(n.public)
            .bind(n.account_id)
            .bind(n.region)
            .bind(n.instance_id)
            .bind(n.created.to_string())
            .fetch_one(self.h())
            .await?;
        ip(&row)
    }

    /// The IPv4 addresses taken in `lo..=hi` (as integers), read inside the transaction: those
    /// of instances and those of load balancers, so neither is ever handed the other's.
    pub async fn ipv4_taken(&mut self, lo: u32, hi: u32) -> Result<BTreeSet<u32>> {
        let rows = query(
            "SELECT v4 FROM ip_addresses WHERE v4 >= $1 AND v4 <= $2 \
             UNION SELECT v4 FROM nodebalancers WHERE v4 >= $1 AND v4 <= $2",
        )
        .bind(i64::from(lo))
        .bind(i64::from(hi))
        .fetch_column_i64(self.h())
        .await?;
        Ok(rows.into_iter().map(|n| n as u32).collect())
    }

    /// The addresses of an instance, read inside the transaction, in id order.
    pub async fn ips_of_instance(&mut self, instance_id: i64) -> Result<Vec<IpRow>> {
        let sql = format!("SELECT {COLS} FROM ip_addresses WHERE instance_id = $1 ORDER BY id");
        let rows = query(sql).bind(instance_id).fetch_all(self.h()).await?;
        rows.iter().map(ip).collect()
    }

    /// One address of the account, read inside the transaction.
    pub async fn ip_get(&mut self, account_id: i64, address: &str) -> Result<Option<IpRow>> {
        let sql = format!("SELECT {COLS} FROM ip_addresses WHERE address = $1 AND account_id = $2");
        let row = query(sql).bind(address).bind(account_id).fetch_optional(self.h()).await?;
        row.as_ref().map(ip).transpose()
    }

    pub async fn ip_set_rdns(&mut self, id: i64, rdns: Option<&str>) -> Result<IpRow> {
        let sql = format!("UPDATE ip_addresses SET rdns = $2 WHERE id = $1 RETURNING {COLS}");
        let row = query(sql).bind(id).bind(rdns).fetch_one(self.h()).await?;
        ip(&row)
    }

    /// Moves an address to another instance.
    pub async fn ip_set_instance(&mut self, id: i64, instance_id: i64) -> Result<()> {
        query("UPDATE ip_addresses SET instance_id = $2 WHERE id = $1")
            .bind(id)
            .bind(instance_id)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Deletes an address and its shares.
    pub async fn ip_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM ip_shares WHERE address IN (SELECT address FROM ip_addresses WHERE id = $1)")
            .bind(id)
            .execute(self.h())
            .await?;
        query("DELETE FROM ip_addresses WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }
}

impl Store {
    /// The addresses of some instances, in id order.
    pub async fn ips_of_instances(&self, instance_ids: &[i64]) -> Result<Vec<IpRow>> {
        let select = format!("SELECT {COLS} FROM ip_addresses");
        self.fetch_in(&select, "instance_id", crate::sql::Keys::Ids(instance_ids), "id", ip).await
    }
}

/// What an instance's record shows of one of its addresses.
#[derive(Debug, Clone, PartialEq)]
pub struct ShownIp {
    pub instance_id: i64,
    pub kind: IpKind,
    pub public: bool,
    pub address: String,
}

/// The statement of [`Store::shown_ips_of_instances`], before and after its list of instances.
pub const SHOWN_IPS: (&str, &str) = (
    "SELECT instance_id, kind, public, address FROM ip_addresses WHERE kind IN ('ipv4', 'slaac') AND instance_id IN ",
    " ORDER BY instance_id, id",
);

impl Store {
    /// The addresses the records of some instances show (IPv4 and SLAAC), by instance, then id:
    /// read from the index `ip_addresses_instance` alone, which holds every column read here in
    /// this order (no look-up of the table's rows, no sort).
    pub async fn shown_ips_of_instances(&self, instance_ids: &[i64]) -> Result<Vec<ShownIp>> {
        if instance_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut sql = crate::sql::Sql::new(SHOWN_IPS.0);
        crate::sql::push_ids(&mut sql, instance_ids);
        sql.push(SHOWN_IPS.1);
        let rows = sql.query().fetch_all(self.r()).await?;
        rows.iter()
            .map(|r| {
                Ok(ShownIp {
                    instance_id: r.i64("instance_id")?,
                    kind: IpKind::parse(&r.str("kind")?),
                    public: r.bool("public")?,
                    address: r.str("address")?,
                })
            })
            .collect()
    }
}

impl Store {
    /// Addresses of an account by their text, in id order.
    pub async fn ips_by_addresses(&self, account_id: i64, addresses: &[String]) -> Result<Vec<IpRow>> {
        if addresses.is_empty() {
            return Ok(Vec::new());
        }
        let mut sql = crate::sql::Sql::new(&format!("SELECT {COLS} FROM ip_addresses WHERE account_id = "));
        sql.bind(crate::sql::Val::I64(account_id));
        sql.push(" AND address IN ");
        crate::sql::push_strs(&mut sql, addresses);
        sql.push(" ORDER BY id");
        let rows = sql.query().fetch_all(self.r()).await?;
        rows.iter().map(ip).collect()
    }
}
