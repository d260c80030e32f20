//! The account's address list (`GET /v4/networking/ips`): public IPv4 and SLAAC addresses and
//! IPv6 ranges in one page, paged, filtered and counted in SQL over a union of the two tables.

use nubis_model::Result;
use nubis_model::filter::{CmpOp, Cond, Filter, Order};
use serde_json::{Value, json};

use crate::Store;
use crate::fences::{FenceWalk, Rows};
use crate::ips::IpRow;
use crate::pages::LOCATE_FROM;
use crate::ranges::RangeRow;
use crate::rows::RowExt;
use crate::sql::{
    ColKind, Column, Keys, SCAN_BUDGET, Sql, Val, column, push_filter, push_kept_count, push_window, served_apart,
    unserved_noting,
};

/// What the list's derived fields are computed from.
pub struct IpListing<'a> {
    /// Each region's public pool: `prefix` of the public IPv4 addresses inside it (32 outside).
    pub public_pools: &'a [PublicPool],
    /// `.ip.nubis.test`: appended to the dashed address for the default reverse name.
    pub rdns_suffix: &'a str,
    /// How many regions the catalog has: an account holds at most one IPv6 range in each.
    pub regions: usize,
}

/// A region's public IPv4 pool: its addresses (as integers, `first..=last`) are in subnets of
/// `prefix` bits.
#[derive(Debug, Clone)]
pub struct PublicPool {
    pub region: String,
    pub prefix: i64,
    pub first: i64,
    pub last: i64,
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
    // The stored columns `type`, `prefix` and `rdns` are computed from, which the filter is also
    // read on past the budget ([`with_stored`]); no client names them (the API's filter takes
    // only the list's fields).
    Column { path: "kind", expr: "x.kind", kind: ColKind::Text },
    Column { path: "stored_rdns", expr: "x.stored_rdns", kind: ColKind::TextOrNull },
];

/// The fields a condition is served on past [`SCAN_BUDGET`], as a client names them: those an
/// index serves, and the ones computed from them ([`with_stored`]).
const FILTERED: &[&str] = &["address", "instance_id", "region", "type", "prefix", "rdns"];
/// The fields an index serves in a condition: the account and the address (migration 36), the
/// instance (migration 3), the account and the region (migration 58), the account and the kind
/// (migration 69, with the region and the address a prefix is computed from) or the stored reverse
/// name (migration 67); the ranges are a few per account, read whole. Every
/// entry is public: a condition on `public` is decided before ([`Filter::assume`]).
const CONDS: &[&str] = &["address", "instance_id", "region", "kind", "stored_rdns"];
/// The fields an index serves in an order: those of [`FENCED`], and `public`, the same for every
/// entry (the list's own order, in the order's direction).
const ORDERED: &[&str] = &["address", "region", "instance_id", "public"];

/// Where the list is ordered by `type` past the budget ([`Store::ips_kept_parts`]).
const ORDERED_BY_TYPE: &str = "; order by type the whole list, or the list filtered by type alone";

/// An order of the whole list that its public addresses keep fences for (migration 61): the
/// field, its column in the addresses (with an index on the account, it and the id, of the
/// public ones) and in the ranges.
struct Fenced {
    path: &'static str,
    address: &'static str,
    range: &'static str,
}

const FENCED: &[Fenced] = &[
    Fenced { path: "address", address: "a.address", range: "r.range_start" },
    Fenced { path: "region", address: "a.region", range: "r.region" },
    Fenced { path: "instance_id", address: "a.instance_id", range: "r.instance_id" },
];

/// The kinds an entry is stored as, with the `type` the list shows for each.
const KINDS: [(&str, &str); 4] = [("ipv4", "ipv4"), ("slaac", "ipv6"), ("link_local", "ipv6"), ("range", "ipv6/range")];
/// The kinds each table stores: the addresses, and the ranges.
const ADDRESS_KINDS: &[&str] = &["ipv4", "slaac", "link_local"];
const RANGE_KINDS: &[&str] = &["range"];

/// The filter of one table of the list, the one that stores the kinds `stored`, with each
/// comparison on a field the list computes also written on the stored columns it is computed
/// from, which indexes serve: `type` on the kind, `prefix` on the kind and the region (an IPv4
/// address's prefix is its region's), `rdns` on the stored name and the address it defaults
/// from. Each comparison is kept beside what it adds: it still decides every
/// entry, and the added condition narrows the entries read to a set that holds each match.
///
/// A computed field has few values: the kinds whose `type`, and the regions whose prefix, meet
/// the comparison are found by asking the comparison itself ([`Filter::matches`]), so each
/// operator means what it means on the list. A comparison left as it was (a range of `type`
/// names, `rdns` other than by equality) is served by no index.
fn with_stored(filter: &Filter, l: &IpListing<'_>, stored: &[&str]) -> Filter {
    let field = |path: &str, value: Value| Cond::Field { path: path.to_string(), op: CmpOp::Eq, value };
    let holds = |path: &str, op: CmpOp, value: &Value, shown: Value| {
        let test = Filter {
            cond: Some(Cond::Field { path: path.to_string(), op, value: value.clone() }),
            ..Filter::default()
        };
        test.matches(&json!({ path: shown }))
    };
    let kept = |path: &str, op, value: &Value, narrowed: Vec<Cond>| {
        Cond::And(vec![Cond::Or(narrowed), Cond::Field { path: path.to_string(), op, value: value.clone() }])
    };
    filter
        .rewrite("type", |op, value| {
            let (CmpOp::Eq | CmpOp::Neq, Value::String(_)) = (op, value) else { return None };
            let kinds =
                (KINDS.iter()).filter(|(kind, shown)| stored.contains(kind) && holds("type", op, value, json!(shown)));
            Some(kept("type", op, value, kinds.map(|(kind, _)| field("kind", json!(kind))).collect()))
        })
        .rewrite("prefix", |op, value| {
            if op == CmpOp::Contains || value.as_i64().is_none() {
                return None;
            }
            let meets = |prefix: i64| holds("prefix", op, value, json!(prefix));
            let ipv4 = field("kind", json!("ipv4"));
            let mut narrowed = Vec::new();
            let held = |kinds: &[&str]| kinds.iter().all(|k| stored.contains(k));
            // An address outside its region's pool (one the catalog no longer holds) shows 32.
            // Where every pool meets the comparison, the regions would name nearly every IPv4
            // address: the kind alone is read, through its own index.
            let pools: Vec<&PublicPool> = l.public_pools.iter().filter(|p| meets(p.prefix)).collect();
            if held(&["ipv4"]) {
                if meets(32) || (!pools.is_empty() && pools.len() == l.public_pools.len()) {
                    narrowed.push(ipv4);
                } else if !pools.is_empty() {
                    let regions = pools.iter().map(|p| field("region", json!(p.region))).collect();
                    narrowed.push(Cond::And(vec![ipv4, Cond::Or(regions)]));
                }
            }
            if meets(64) && held(&["slaac", "link_local"]) {
                narrowed.extend(["slaac", "link_local"].map(|kind| field("kind", json!(kind))));
            }
            // A range stores its own prefix; an account holds a few.
            if held(&["range"]) {
                narrowed.push(field("kind", json!("range")));
            }
            Some(kept("prefix", op, value, narrowed))
        })
        .rewrite("rdns", |op, value| {
            let (CmpOp::Eq, Value::String(name)) = (op, value) else { return None };
            let mut narrowed = vec![field("stored_rdns", value.clone())];
            // An IPv4 address without a stored name shows its dashed address under the suffix.
            if let Some(dashed) = name.strip_suffix(l.rdns_suffix) {
                narrowed.push(field("address", json!(dashed.replace('-', "."))));
            }
            Some(kept("rdns", op, value, narrowed))
        })
}

/// A part of the list that is a kept partition: the public addresses (all of them, or those of
/// one stored kind), or the ranges.
#[derive(Debug, Clone, Copy)]
enum Part {
    Addresses(Option<&'static str>),
    Ranges,
}

/// The stored kinds of the addresses that a filter made of one comparison of `type` alone
/// (equality or `+neq` on a name) keeps, in the order of their types: `None` for any other
/// filter.
fn type_kinds(filter: &Filter) -> Option<Vec<&'static str>> {
    let mut cond = filter.cond.as_ref()?;
    while let Cond::And(parts) | Cond::Or(parts) = cond {
        let [only] = &parts[..] else { return None };
        cond = only;
    }
    let Cond::Field { path, op: CmpOp::Eq | CmpOp::Neq, value: Value::String(_) } = cond else { return None };
    if path != "type" {
        return None;
    }
    let test = Filter { cond: Some(cond.clone()), ..Filter::default() };
    let kept =
        KINDS.iter().filter(|(kind, shown)| ADDRESS_KINDS.contains(kind) && test.matches(&json!({ "type": shown })));
    Some(kept.map(|(kind, _)| *kind).collect())
}

/// `FROM (<the account's public addresses>) x WHERE 1 = 1`, and what a restricted reader may see:
/// the addresses under the list's field names. Read as a table of its own, not in a union with
/// the ranges, so that a filter's condition reaches the addresses' indexes and the database reads
/// only the columns the statement names (a union computes every column of every row it reads).
fn push_addresses(sql: &mut Sql, l: &IpListing<'_>, account_id: i64, grant_user: Option<i64>) {
    sql.push(
        " FROM (SELECT 0 AS src, a.id, a.address, \
         CASE WHEN a.kind = 'ipv4' THEN 'ipv4' ELSE 'ipv6' END AS type, CASE WHEN a.kind = 'ipv4' THEN ",
    );
    if l.public_pools.is_empty() {
        sql.push("32");
    } else {
        sql.push("CASE");
        for pool in l.public_pools {
            sql.push(" WHEN a.region = ").bind(Val::Str(pool.region.clone()));
            sql.push(" AND a.v4 >= ").bind(Val::I64(pool.first));
            sql.push(" AND a.v4 <= ").bind(Val::I64(pool.last));
            sql.push(" THEN ").bind(Val::I64(pool.prefix));
        }
        sql.push(" ELSE 32 END");
    }
    sql.push(
        " ELSE 64 END AS prefix, COALESCE(a.rdns, CASE WHEN a.kind = 'ipv4' THEN replace(a.address, '.', '-') || ",
    );
    sql.bind(Val::Str(l.rdns_suffix.to_string()));
    sql.push(" END) AS rdns, a.region, a.instance_id, a.public, a.kind, a.rdns AS stored_rdns FROM ip_addresses a WHERE a.public AND a.account_id = ");
    sql.bind(Val::I64(account_id));
    sql.push(") x WHERE 1 = 1");
    push_granted(sql, grant_user);
}

/// `FROM (<the account's IPv6 ranges>) x WHERE 1 = 1` under the list's field names, as
/// [`push_addresses`].
fn push_ranges(sql: &mut Sql, account_id: i64, grant_user: Option<i64>) {
    sql.push(
        " FROM (SELECT 1 AS src, r.id, r.range_start AS address, 'ipv6/range' AS type, r.prefix, NULL AS rdns, \
         r.region, r.instance_id, TRUE AS public, 'range' AS kind, NULL AS stored_rdns FROM ipv6_ranges r WHERE r.account_id = ",
    );
    sql.bind(Val::I64(account_id));
    sql.push(") x WHERE 1 = 1");
    push_granted(sql, grant_user);
}

/// For a restricted reader: only the entries of instances it holds a grant on.
fn push_granted(sql: &mut Sql, grant_user: Option<i64>) {
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
        // Every entry is public: a condition on it holds or fails for all.
        let filter = &filter.assume("public", &Value::Bool(true));
        // Each table's filter, narrowed by the kinds it stores. The ranges are a few per account:
        // only the addresses' filter decides whether indexes serve the list.
        let (addresses, ranges) = (with_stored(filter, l, ADDRESS_KINDS), with_stored(filter, l, RANGE_KINDS));
        if addresses.matches_none() && ranges.matches_none() {
            return Ok((Vec::new(), 0));
        }
        let offset = page.saturating_sub(1).saturating_mul(page_size);
        let desc = filter.order == Order::Desc;
        let by = filter.order_by.as_deref();
        // The whole list, or the list filtered by `type` alone, in its own order or by `type`:
        // kept partitions of the addresses (each counted and blocked as it is written) and the
        // ranges, one after another.
        let plan = match grant_user {
            None => self.ips_kept_parts(account_id, filter, &ranges).await?,
            Some(_) => None,
        };
        if let Some(parts) = plan {
            let desc = by.is_some() && desc;
            let keys = self.ips_window(account_id, &parts, &ranges, offset, page_size, desc).await?;
            let total = parts.iter().map(|(_, n)| n).sum();
            return self.ips_listed(keys, total).await;
        }
        if grant_user.is_none() && !served_apart(&addresses, COLS, CONDS, ORDERED) {
            let n = self.kept_count(account_id, "public_ips").await?;
            if n > SCAN_BUDGET {
                return Err(unserved_noting(n, FILTERED, ORDERED, ORDERED_BY_TYPE));
            }
        }
        // The whole list in a fenced order: its public addresses are counted as they are written,
        // its ranges (a few per account) are counted here.
        let fenced = by.and_then(|path| FENCED.iter().find(|f| f.path == path));
        let (keys, total) = match fenced {
            Some(field) if grant_user.is_none() && filter.cond.is_none() => {
                let counts = self.ips_whole_counts(account_id).await?;
                let keys = self.ips_ordered_window(account_id, field, counts, offset, page_size, desc).await?;
                (keys, counts.0 + counts.1)
            }
            _ => self.ips_filtered(account_id, grant_user, l, (&addresses, &ranges), offset, page_size).await?,
        };
        self.ips_listed(keys, total).await
    }

    /// The entries of a page's keys (`(0, address id)` or `(1, range id)`), in their order, with
    /// the list's `results`.
    async fn ips_listed(&self, keys: Vec<(i64, i64)>, total: u64) -> Result<(Vec<IpListed>, u64)> {
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

    /// The keys of one page of the list under a filter, an order that keeps no fences, or for a
    /// restricted reader, and how many entries the list has so.
    ///
    /// The addresses and the ranges are read apart ([`push_addresses`]), each under the filter
    /// narrowed by the kinds it stores ([`with_stored`]), so that the filter is served by the
    /// addresses' indexes and a count reads no more than them. An account holds at
    /// most one range per region ([`IpListing::regions`]): of the entries before the page at most
    /// that many are ranges, so the page's rows are among the addresses in the page's order from
    /// `offset - regions` on, `page_size + regions` of them, merged with every matching range and
    /// sorted as the list is. The merge puts before the window's first address only ranges that
    /// sort before it, no more of them than the rows skipped, so the merged row `j` past those is
    /// the list's row `start + j`, up to the window's last address, which lies past the page. An
    /// account holding more ranges than the catalog has regions (a region taken out of the
    /// configuration) is read again with its own number of ranges.
    ///
    /// The count: a window that ends before its length ends the matching addresses; otherwise,
    /// or for a window past them, the matching addresses are counted (through the filter's
    /// index, a cost that follows the matches, not the account).
    async fn ips_filtered(
        &self,
        account_id: i64,
        grant_user: Option<i64>,
        l: &IpListing<'_>,
        (filter, ranges_filter): (&Filter, &Filter),
        offset: u64,
        page_size: u64,
    ) -> Result<(Vec<(i64, i64)>, u64)> {
        // The page's order: by the field, then the list's own order (the addresses, then the
        // ranges, each by id), all in the field's direction; or the list's own order.
        let key = match &filter.order_by {
            Some(path) => {
                let dir = if filter.order == Order::Desc { "DESC" } else { "ASC" };
                Some((column(COLS, path)?.order_expr(), dir))
            }
            None => None,
        };
        let dir = key.as_ref().map_or("ASC", |k| k.1);
        let (key_col, key_order) = match &key {
            Some((expr, dir)) => (format!(", {expr} AS k"), format!("{expr} {dir}, ")),
            None => (String::new(), String::new()),
        };
        let mut ranges_bound = l.regions as u64;
        loop {
            let start = offset.saturating_sub(ranges_bound);
            let n = (offset - start).saturating_add(page_size);
            let mut sql = Sql::new(&format!("SELECT m.src, m.id FROM (SELECT * FROM (SELECT x.src, x.id{key_col}"));
            push_addresses(&mut sql, l, account_id, grant_user);
            push_filter(&mut sql, self.backend(), COLS, filter)?;
            sql.push(&format!(" ORDER BY {key_order}x.id {dir}"));
            push_window(&mut sql, start, n);
            sql.push(&format!(") w UNION ALL SELECT x.src, x.id{key_col}"));
            push_ranges(&mut sql, account_id, grant_user);
            push_filter(&mut sql, self.backend(), COLS, ranges_filter)?;
            let by_key = if key.is_some() { format!("m.k {dir}, ") } else { String::new() };
            sql.push(&format!(") m ORDER BY {by_key}m.src {dir}, m.id {dir}"));
            let merged: Vec<(i64, i64)> = (sql.query().fetch_all(self.r()).await?.iter())
                .map(|r| Ok((r.i64("src")?, r.i64("id")?)))
                .collect::<Result<_>>()?;
            let ranges = merged.iter().filter(|k| k.0 == 1).count() as u64;
            if ranges > ranges_bound {
                ranges_bound = ranges;
                continue;
            }
            let addresses = merged.len() as u64 - ranges;
            let matching = if addresses < n && (addresses > 0 || start == 0) {
                start + addresses
            } else {
                let mut count = Sql::new("SELECT COUNT(*)");
                push_addresses(&mut count, l, account_id, grant_user);
                push_filter(&mut count, self.backend(), COLS, filter)?;
                count.query().fetch_i64(self.r()).await?.max(0) as u64
            };
            let keys = merged.into_iter().skip((offset - start) as usize).take(page_size as usize).collect();
            return Ok((keys, matching + ranges));
        }
    }

    /// The parts of the list a page is read from when each is a kept partition ([`Part`]), with
    /// the entries each holds, in the list's order ascending: `None` when the list is not read
    /// so.
    ///
    /// That is the whole list, or the list filtered by `type` alone ([`type_kinds`]), in its own
    /// order (or by `public`, the same for every entry) or by `type`. The whole list in its own
    /// order is its public addresses by id (the kept `public_ips`), then its ranges by id. Else
    /// the addresses are taken kind by kind (kept counts and blocks per stored kind, migration
    /// 70): in the list's own order the kinds the filter keeps form one part, by `type` the
    /// kinds of each type do, in the types' order, and a part is a kept partition only when at
    /// most one of its kinds holds any address of the account (two would interleave by id).
    /// The ranges, a few per account, are counted under their filter (`ranges`).
    async fn ips_kept_parts(
        &self,
        account_id: i64,
        filter: &Filter,
        ranges: &Filter,
    ) -> Result<Option<Vec<(Part, u64)>>> {
        let by_type = match filter.order_by.as_deref() {
            None | Some("public") => false,
            Some("type") => true,
            Some(_) => return Ok(None),
        };
        if filter.cond.is_none() && !by_type {
            let (ips, ranges) = self.ips_whole_counts(account_id).await?;
            return Ok(Some(vec![(Part::Addresses(None), ips), (Part::Ranges, ranges)]));
        }
        let kinds = match filter.cond {
            None => ADDRESS_KINDS.to_vec(),
            Some(_) => match type_kinds(filter) {
                Some(kinds) => kinds,
                None => return Ok(None),
            },
        };
        let mut sql = Sql::new("SELECT ");
        for (i, kind) in kinds.iter().enumerate() {
            sql.push("(");
            push_kept_count(&mut sql, account_id, &format!("public_ips:{kind}"));
            sql.push(&format!(") AS k{i}, "));
        }
        sql.push("(SELECT COUNT(*)");
        push_ranges(&mut sql, account_id, None);
        push_filter(&mut sql, self.backend(), COLS, ranges)?;
        let row = sql.push(") AS ranges").query().fetch_one(self.r()).await?;
        let count = |name: &str| -> Result<u64> { Ok(row.i64(name)?.max(0) as u64) };
        let mut parts = Vec::new();
        // The kinds whose addresses one part holds: every kind kept, or those of one type.
        let shown = |kind: &str| KINDS.iter().find(|(k, _)| *k == kind).map_or("", |(_, shown)| *shown);
        let mut groups: Vec<Vec<(&'static str, u64)>> = Vec::new();
        for (i, kind) in kinds.iter().enumerate() {
            let held = (*kind, count(&format!("k{i}"))?);
            match groups.last_mut() {
                Some(group) if !by_type || shown(group[0].0) == shown(kind) => group.push(held),
                _ => groups.push(vec![held]),
            }
        }
        for group in groups {
            let held: Vec<_> = group.into_iter().filter(|(_, n)| *n > 0).collect();
            match held[..] {
                [] => {}
                [(kind, n)] => parts.push((Part::Addresses(Some(kind)), n)),
                _ => return Ok(None),
            }
        }
        parts.push((Part::Ranges, count("ranges")?));
        Ok(Some(parts))
    }

    /// The whole list's public addresses (their kept count) and ranges (a few per account).
    async fn ips_whole_counts(&self, account_id: i64) -> Result<(u64, u64)> {
        let mut count = Sql::new("SELECT (");
        push_kept_count(&mut count, account_id, "public_ips");
        count.push(") AS ips, (SELECT COUNT(*) FROM ipv6_ranges WHERE account_id = ").bind(Val::I64(account_id));
        let row = count.push(") AS ranges").query().fetch_one(self.r()).await?;
        Ok((row.i64("ips")?.max(0) as u64, row.i64("ranges")?.max(0) as u64))
    }

    /// The keys of one page of the list read from kept partitions ([`Self::ips_kept_parts`]),
    /// `parts` in the list's order ascending, each in id order (`desc`: everything reversed).
    /// Each part is read by its own index, a deep page of addresses located by the block counts
    /// of its partition (the whole list's, or its kind's), so the page costs its rows.
    async fn ips_window(
        &self,
        account_id: i64,
        parts: &[(Part, u64)],
        ranges: &Filter,
        offset: u64,
        page_size: u64,
        desc: bool,
    ) -> Result<Vec<(i64, i64)>> {
        let dir = if desc { "DESC" } else { "ASC" };
        let in_order: Vec<(Part, u64)> = if desc { parts.iter().rev().copied().collect() } else { parts.to_vec() };
        let mut keys = Vec::new();
        let mut before = 0;
        for (part, n) in in_order {
            let wanted = page_size.saturating_sub(keys.len() as u64);
            let skip = (offset + keys.len() as u64).saturating_sub(before);
            before += n;
            if wanted == 0 || skip >= n {
                continue;
            }
            let (src, sql) = match part {
                Part::Addresses(kind) => {
                    let blocks = kind.map_or_else(|| "public_ips".to_string(), |k| format!("public_ips:{k}"));
                    let located =
                        if skip >= LOCATE_FROM { self.locate(&blocks, account_id, skip, desc).await? } else { None };
                    let mut sql = Sql::new("SELECT a.id FROM ip_addresses a WHERE a.public AND a.account_id = ");
                    sql.bind(Val::I64(account_id));
                    if let Some(kind) = kind {
                        sql.push(" AND a.kind = ").bind(Val::Str(kind.to_string()));
                    }
                    match located {
                        Some(at) => {
                            at.push_start(&mut sql, "a.id", desc);
                            sql.push(&format!(" ORDER BY a.id {dir}"));
                            at.push_window(&mut sql, wanted);
                        }
                        None => {
                            sql.push(&format!(" ORDER BY a.id {dir}"));
                            push_window(&mut sql, skip, wanted);
                        }
                    }
                    (0, sql)
                }
                Part::Ranges => {
                    let mut sql = Sql::new("SELECT x.id");
                    push_ranges(&mut sql, account_id, None);
                    push_filter(&mut sql, self.backend(), COLS, ranges)?;
                    sql.push(&format!(" ORDER BY x.id {dir}"));
                    push_window(&mut sql, skip, wanted);
                    (1, sql)
                }
            };
            for r in sql.query().fetch_all(self.r()).await? {
                keys.push((src, r.i64("id")?));
            }
        }
        Ok(keys)
    }

    /// The keys of one page of the whole list in the order of `field`: a window of the public
    /// addresses in that order merged with every range (at most one per region).
    ///
    /// Of the entries before the page, at most `ranges` are ranges, so its rows are among the
    /// addresses from position `offset - ranges` on, `page_size + ranges` of them (the window,
    /// started at the field's fences past [`LOCATE_FROM`]). The database sorts the window and
    /// the ranges together, in the order (and the collation) the whole list is sorted in. The
    /// entries it puts before the window's first address are exactly the ranges before it, so
    /// the merged row `j` is the list's row `start + j`, up to the window's last address, which
    /// is past the page.
    async fn ips_ordered_window(
        &self,
        account_id: i64,
        field: &Fenced,
        (ips, ranges): (u64, u64),
        offset: u64,
        page_size: u64,
        desc: bool,
    ) -> Result<Vec<(i64, i64)>> {
        let dir = if desc { "DESC" } else { "ASC" };
        let start = offset.saturating_sub(ranges);
        let n = page_size.saturating_add(ranges);
        let rows = Rows {
            from: "FROM ip_addresses a",
            scope: "a.account_id",
            and: " AND a.public",
            scope_id: account_id,
            backend: self.backend(),
        };
        let kind = format!("public_ips.{}", field.path);
        let deep = start >= LOCATE_FROM && start < ips;
        // On PostgreSQL the window's own statement finds its range (`nubis_locate_fenced`);
        // SQLite locates it first.
        let walk = self.fenced_order(&kind).filter(|_| deep).map(|int| FenceWalk {
            kind: kind.clone(),
            int,
            offset: start.min(i64::MAX as u64) as i64,
            desc,
            rows,
            expr: field.address.into(),
            id_col: "a.id",
        });
        let located = match &walk {
            None if deep => self.locate_ordered(&kind, account_id, start, desc).await?,
            _ => None,
        };
        let mut sql = Sql::new("");
        if let Some(w) = &walk {
            w.push_with(&mut sql, n);
        }
        sql.push(&format!(
            "SELECT x.src, x.id FROM (SELECT * FROM (SELECT 0 AS src, a.id, {} AS k FROM ip_addresses a \
             WHERE a.account_id = ",
            field.address
        ));
        sql.bind(Val::I64(account_id)).push(" AND a.public");
        match (&walk, located) {
            (Some(w), _) => w.push_page(&mut sql, n),
            (None, Some(at)) => at.push_page(&mut sql, &rows, field.address, "a.id", n),
            (None, None) => {
                sql.push(&format!(" ORDER BY {} {dir}, a.id {dir}", field.address));
                push_window(&mut sql, start, n);
            }
        }
        sql.push(&format!(
            ") w UNION ALL SELECT 1 AS src, r.id, {} AS k FROM ipv6_ranges r WHERE r.account_id = ",
            field.range
        ));
        sql.bind(Val::I64(account_id));
        sql.push(&format!(") x ORDER BY x.k {dir}, x.src {dir}, x.id {dir}"));
        let merged = sql.query().fetch_all(self.r()).await?;
        let skip = (offset - start) as usize;
        merged.iter().skip(skip).take(page_size as usize).map(|r| Ok((r.i64("src")?, r.i64("id")?))).collect()
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
