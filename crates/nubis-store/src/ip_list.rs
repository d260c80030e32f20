//! The account's address list (`GET /v4/networking/ips`): public IPv4 and SLAAC addresses and
//! IPv6 ranges in one page, paged, filtered and counted in SQL over a union of the two tables.

use nubis_model::Result;
use nubis_model::filter::Filter;

use crate::Store;
use crate::ips::IpRow;
use crate::pages::LOCATE_FROM;
use crate::ranges::RangeRow;
use crate::rows::RowExt;
use crate::sql::{
    ColKind, Column, Keys, SCAN_BUDGET, Sql, Val, push_filter, push_kept_count, push_order, push_page, served_apart,
    unserved_apart,
};

/// What the list's derived fields are computed from.
pub struct IpListing<'a> {
    /// The subnet prefix of each region's public pool (`prefix` of a public IPv4 address).
    pub public_prefixes: &'a [(String, i64)],
    /// `.ip.nubis.test`: appended to the dashed address for the default reverse name.
    pub rdns_suffix: &'a str,
}

/// One entry of the list.
#[derive(Debug, Clone)]
pub enum IpListed {
    Ip(IpRow),
    Range(RangeRow),
}

const COLS: &[Column] = &[
    Column { path: "address", expr: "x.address", kind: ColKind::Text },
    Column { path: "prefix", expr: "x.prefix", kind: ColKind::Int },
    Column { path: "type", expr: "x.type", kind: ColKind::Text },
    Column { path: "rdns", expr: "x.rdns", kind: ColKind::Text },
    Column { path: "region", expr: "x.region", kind: ColKind::Text },
    Column { path: "instance_id", expr: "x.instance_id", kind: ColKind::Int },
    Column { path: "public", expr: "x.public", kind: ColKind::Bool },
];

/// The fields an index serves in a condition: the account and the address (migration 36), the
/// instance (migration 3), the account and the region (migration 58); the ranges are a few per
/// account, read whole.
const FILTERED: &[&str] = &["address", "instance_id", "region"];
/// The fields an index serves in an order: the account and the address.
const ORDERED: &[&str] = &["address"];

/// `FROM (<addresses> UNION ALL <ranges>) x WHERE <visible>`.
fn push_from(sql: &mut Sql, l: &IpListing<'_>, account_id: i64, grant_user: Option<i64>) {
    sql.push(
        " FROM (SELECT 0 AS src, a.id, a.address, \
         CASE WHEN a.kind = 'ipv4' THEN 'ipv4' ELSE 'ipv6' END AS type, CASE WHEN a.kind = 'ipv4' THEN ",
    );
    if l.public_prefixes.is_empty() {
        sql.push("32");
    } else {
        sql.push("CASE a.region");
        for (region, prefix) in l.public_prefixes {
            sql.push(" WHEN ").bind(Val::Str(region.clone()));
            sql.push(" THEN ").bind(Val::I64(*prefix));
        }
        sql.push(" ELSE 32 END");
    }
    sql.push(
        " ELSE 64 END AS prefix, COALESCE(a.rdns, CASE WHEN a.kind = 'ipv4' THEN replace(a.address, '.', '-') || ",
    );
    sql.bind(Val::Str(l.rdns_suffix.to_string()));
    sql.push(" END) AS rdns, a.region, a.instance_id, a.public FROM ip_addresses a WHERE a.public AND a.account_id = ");
    sql.bind(Val::I64(account_id));
    sql.push(
        " UNION ALL SELECT 1 AS src, r.id, r.range_start AS address, 'ipv6/range' AS type, r.prefix, NULL AS rdns, \
         r.region, r.instance_id, TRUE AS public FROM ipv6_ranges r WHERE r.account_id = ",
    );
    sql.bind(Val::I64(account_id));
    sql.push(") x WHERE 1 = 1");
    if let Some(user) = grant_user {
        sql.push(" AND x.instance_id IN (SELECT g.entity_id FROM grants g WHERE g.user_id = ").bind(Val::I64(user));
        sql.push(" AND g.kind = 'instance')");
    }
}

impl Store {
    /// One page of an account's listed addresses (only of instances `grant_user` holds a grant
    /// on, when given) and the number of entries the whole list has.
    pub async fn ips_page(
        &self,
        account_id: i64,
        grant_user: Option<i64>,
        l: &IpListing<'_>,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<IpListed>, u64)> {
        if grant_user.is_none() && !served_apart(filter, FILTERED, ORDERED) {
            let n = self.kept_count(account_id, "public_ips").await?;
            if n > SCAN_BUDGET {
                return Err(unserved_apart(n, FILTERED, ORDERED));
            }
        }
        let offset = page.saturating_sub(1).saturating_mul(page_size);
        // The whole list: its public addresses are counted as they are written (kept with their
        // block counts), its ranges (a few per account) are counted here.
        let whole = grant_user.is_none() && filter.cond.is_none();
        let counted = if whole {
            let mut count = Sql::new("SELECT (");
            push_kept_count(&mut count, account_id, "public_ips");
            count.push(") AS ips, (SELECT COUNT(*) FROM ipv6_ranges WHERE account_id = ").bind(Val::I64(account_id));
            let row = count.push(") AS ranges").query().fetch_one(self.r()).await?;
            Some((row.i64("ips")?, row.i64("ranges")?))
        } else {
            None
        };
        let keys = match counted {
            Some((ips, _)) if filter.order_by.is_none() => {
                self.ips_window(account_id, ips.max(0) as u64, offset, page_size).await?
            }
            _ => {
                let mut sql = Sql::new("SELECT x.src, x.id");
                push_from(&mut sql, l, account_id, grant_user);
                push_filter(&mut sql, self.backend(), COLS, filter)?;
                push_order(&mut sql, COLS, filter, "x.src, x.id")?;
                push_page(&mut sql, page, page_size);
                let rows = sql.query().fetch_all(self.r()).await?;
                rows.iter().map(|r| Ok((r.i64("src")?, r.i64("id")?))).collect::<Result<_>>()?
            }
        };

        let total = if let Some((ips, ranges)) = counted {
            (ips + ranges).max(0) as u64
        } else if !keys.is_empty() && (keys.len() as u64) < page_size {
            offset + keys.len() as u64
        } else if keys.is_empty() && page <= 1 {
            0
        } else {
            let mut count = Sql::new("SELECT COUNT(*)");
            push_from(&mut count, l, account_id, grant_user);
            push_filter(&mut count, self.backend(), COLS, filter)?;
            count.query().fetch_i64(self.r()).await?.max(0) as u64
        };

        let ip_ids: Vec<i64> = keys.iter().filter(|k| k.0 == 0).map(|k| k.1).collect();
        let range_ids: Vec<i64> = keys.iter().filter(|k| k.0 == 1).map(|k| k.1).collect();
        let ips = self.ips_by_ids(&ip_ids).await?;
        let ranges = self.ranges_by_ids(&range_ids).await?;
        let listed = keys
            .iter()
            .filter_map(|(src, id)| match src {
                0 => ips.iter().find(|i| i.id == *id).cloned().map(IpListed::Ip),
                _ => ranges.iter().find(|r| r.id == *id).cloned().map(IpListed::Range),
            })
            .collect();
        Ok((listed, total))
    }

    /// The keys of one page of the whole list in its own order: the public addresses (`ips` of
    /// them) by id, then the ranges by id. Each part is read by its own index, a deep page of
    /// addresses located by their block counts, so the page costs its rows.
    async fn ips_window(&self, account_id: i64, ips: u64, offset: u64, page_size: u64) -> Result<Vec<(i64, i64)>> {
        let mut keys = Vec::new();
        if offset < ips {
            let located =
                if offset >= LOCATE_FROM { self.locate("public_ips", account_id, offset, false).await? } else { None };
            let mut sql = Sql::new("SELECT a.id FROM ip_addresses a WHERE a.public AND a.account_id = ");
            sql.bind(Val::I64(account_id));
            if let Some(at) = located {
                at.push_start(&mut sql, "a.id", false);
                sql.push(" ORDER BY a.id");
                at.push_window(&mut sql, page_size);
            } else {
                sql.push(" ORDER BY a.id");
                push_page(&mut sql, offset / page_size.max(1) + 1, page_size);
            }
            for r in sql.query().fetch_all(self.r()).await? {
                keys.push((0, r.i64("id")?));
            }
        }
        let wanted = page_size.saturating_sub(keys.len() as u64);
        if wanted > 0 && offset + keys.len() as u64 >= ips {
            let skip = offset.saturating_sub(ips);
            let mut sql = Sql::new("SELECT r.id FROM ipv6_ranges r WHERE r.account_id = ");
            sql.bind(Val::I64(account_id)).push(" ORDER BY r.id LIMIT ").bind(Val::I64(wanted as i64));
            sql.push(" OFFSET ").bind(Val::I64(skip.min(i64::MAX as u64) as i64));
            for r in sql.query().fetch_all(self.r()).await? {
                keys.push((1, r.i64("id")?));
            }
        }
        Ok(keys)
    }

    /// Some addresses by id.
    async fn ips_by_ids(&self, ids: &[i64]) -> Result<Vec<IpRow>> {
        let select = format!("SELECT {} FROM ip_addresses", crate::ips::COLS);
        self.fetch_in(&select, "id", Keys::Ids(ids), "id", crate::ips::ip).await
    }

    /// Some ranges by id.
    async fn ranges_by_ids(&self, ids: &[i64]) -> Result<Vec<RangeRow>> {
        let select = format!("SELECT {} FROM ipv6_ranges", crate::ranges::COLS);
        self.fetch_in(&select, "id", Keys::Ids(ids), "id", crate::ranges::range).await
    }
}
