//! VPCs and their subnets. Labels are unique by constraint; a subnet's range is also kept as
//! integers so that the overlap check inside a write transaction is a plain comparison.

use std::sync::Arc;

use crate::db::Row;
use nubis_model::{Result, Timestamp};

use crate::db::query;
use crate::interfaces::InterfaceRow;
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Keys, Listing, Sql, Visibility, push_ids};
use crate::{CacheKey, Store, Tx};
use nubis_model::filter::Filter;

#[derive(Debug, Clone, PartialEq)]
pub struct VpcRow {
    pub id: i64,
    pub account_id: i64,
    pub label: String,
    pub description: String,
    pub region: String,
    /// The VPC's IPv6 range (`2001:db8:100::/52`), if it has one.
    pub ipv6_range: Option<String>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SubnetRow {
    pub id: i64,
    pub vpc_id: i64,
    pub account_id: i64,
    pub label: String,
    pub ipv4: String,
    pub first_v4: u32,
    pub last_v4: u32,
    /// The subnet's IPv6 range, inside its VPC's, if it has one.
    pub ipv6_range: Option<String>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

const VPC_COLS: &str = "id, account_id, label, description, region, ipv6_range, created, updated";
const SUBNET_COLS: &str = "id, vpc_id, account_id, label, ipv4, first_v4, last_v4, ipv6_range, created, updated";

fn vpc(r: &Row) -> Result<VpcRow> {
    Ok(VpcRow {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        description: r.str("description")?,
        region: r.str("region")?,
        ipv6_range: r.opt_str("ipv6_range")?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

fn subnet(r: &Row) -> Result<SubnetRow> {
    Ok(SubnetRow {
        id: r.i64("id")?,
        vpc_id: r.i64("vpc_id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        ipv4: r.str("ipv4")?,
        first_v4: r.i64("first_v4")? as u32,
        last_v4: r.i64("last_v4")? as u32,
        ipv6_range: r.opt_str("ipv6_range")?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

pub struct NewVpc<'a> {
    pub account_id: i64,
    pub label: &'a str,
    pub description: &'a str,
    pub region: &'a str,
    pub ipv6_range: Option<&'a str>,
    pub created: Timestamp,
}

pub struct NewSubnet<'a> {
    pub vpc_id: i64,
    pub account_id: i64,
    pub label: &'a str,
    pub ipv4: &'a str,
    pub first_v4: u32,
    pub last_v4: u32,
    pub ipv6_range: Option<&'a str>,
    pub created: Timestamp,
}

impl Tx<'_> {
    pub async fn vpc_insert(&mut self, v: &NewVpc<'_>) -> Result<VpcRow> {
        let sql = format!(
            "INSERT INTO vpcs (account_id, label, description, region, created, updated, ipv6_range) \
             VALUES ($1, $2, $3, $4, $5, $5, $6) RETURNING {VPC_COLS}"
        );
        let row = query(sql)
            .bind(v.account_id)
            .bind(v.label)
            .bind(v.description)
            .bind(v.region)
            .bind(v.created.to_string())
            .bind(v.ipv6_range)
            .fetch_one(self.h())
            .await?;
        vpc(&row)
    }

    /// The VPC, read inside the transaction. It also takes the row's write lock (a no-op update),
    /// so a concurrent delete of the VPC and a change below it conflict instead of both
    /// committing (PostgreSQL reports a serialization failure, which is retried).
    pub async fn vpc_lock(&mut self, id: i64, account_id: i64) -> Result<Option<VpcRow>> {
        let sql = format!("UPDATE vpcs SET updated = updated WHERE id = $1 AND account_id = $2 RETURNING {VPC_COLS}");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.h()).await?;
        row.as_ref().map(vpc).transpose()
    }

    /// Changes the label and/or description; `None` leaves a field as it is.
    pub async fn vpc_update(
        &mut self,
        id: i64,
        label: Option<&str>,
        description: Option<&str>,
        now: Timestamp,
    ) -> Result<VpcRow> {
        let sql = format!(
            "UPDATE vpcs SET label = COALESCE($2, label), description = COALESCE($3, description), updated = $4 \
             WHERE id = $1 RETURNING {VPC_COLS}"
        );
        let row = query(sql).bind(id).bind(label).bind(description).bind(now.to_string()).fetch_one(self.h()).await?;
        vpc(&row)
    }

    /// Deletes a VPC and all its subnets (the caller has checked that none is in use).
    pub async fn vpc_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM vpc_subnets WHERE vpc_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM vpcs WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    pub async fn subnet_insert(&mut self, s: &NewSubnet<'_>) -> Result<SubnetRow> {
        let sql = format!(
            "INSERT INTO vpc_subnets (vpc_id, account_id, label, ipv4, first_v4, last_v4, created, updated, \
             ipv6_range) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) RETURNING {SUBNET_COLS}"
        );
        let row = query(sql)
            .bind(s.vpc_id)
            .bind(s.account_id)
            .bind(s.label)
            .bind(s.ipv4)
            .bind(i64::from(s.first_v4))
            .bind(i64::from(s.last_v4))
            .bind(s.created.to_string())
            .bind(s.ipv6_range)
            .fetch_one(self.h())
            .await?;
        subnet(&row)
    }

    /// The IPv6 ranges of every VPC in a region, read inside the transaction.
    pub async fn vpc_ipv6_ranges_in_region(&mut self, region: &str) -> Result<Vec<String>> {
        let sql = "SELECT ipv6_range FROM vpcs WHERE region = $1 AND ipv6_range IS NOT NULL ORDER BY id";
        let rows = query(sql).bind(region).fetch_all(self.h()).await?;
        rows.iter().map(|r| r.str("ipv6_range")).collect()
    }

    /// The subnets of a VPC, read inside the transaction, in id order.
    pub async fn subnets_of_vpc(&mut self, vpc_id: i64) -> Result<Vec<SubnetRow>> {
        let sql = format!("SELECT {SUBNET_COLS} FROM vpc_subnets WHERE vpc_id = $1 ORDER BY id");
        let rows = query(sql).bind(vpc_id).fetch_all(self.h()).await?;
        rows.iter().map(subnet).collect()
    }

    /// The first subnet of the VPC whose range shares an address with `first..=last`.
    pub async fn subnet_overlapping(&mut self, vpc_id: i64, first: u32, last: u32) -> Result<Option<SubnetRow>> {
        let sql = format!(
            "SELECT {SUBNET_COLS} FROM vpc_subnets WHERE vpc_id = $1 AND first_v4 <= $3 AND last_v4 >= $2 \
             ORDER BY id LIMIT 1"
        );
        let row = query(sql).bind(vpc_id).bind(i64::from(first)).bind(i64::from(last)).fetch_optional(self.h()).await?;
        row.as_ref().map(subnet).transpose()
    }

    /// One subnet of a VPC, read inside the transaction; also takes its row lock (see
    /// [`Tx::vpc_lock`]) so that attaching an interface and deleting the subnet conflict.
    pub async fn subnet_lock(&mut self, vpc_id: Option<i64>, id: i64, account_id: i64) -> Result<Option<SubnetRow>> {
        let sql = format!(
            "UPDATE vpc_subnets SET updated = updated WHERE id = $1 AND account_id = $2 \
             AND ($3 IS NULL OR vpc_id = $3) RETURNING {SUBNET_COLS}"
        );
        let row = query(sql).bind(id).bind(account_id).bind(vpc_id).fetch_optional(self.h()).await?;
        row.as_ref().map(subnet).transpose()
    }

    pub async fn subnet_update_label(&mut self, id: i64, label: &str, now: Timestamp) -> Result<SubnetRow> {
        let sql = format!("UPDATE vpc_subnets SET label = $2, updated = $3 WHERE id = $1 RETURNING {SUBNET_COLS}");
        let row = query(sql).bind(id).bind(label).bind(now.to_string()).fetch_one(self.h()).await?;
        subnet(&row)
    }

    pub async fn subnet_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM vpc_subnets WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }
}

const VPC_LIST: Listing<'static> = Listing {
    select: "SELECT v.id, v.account_id, v.label, v.description, v.region, v.ipv6_range, v.created, v.updated \
             FROM vpcs v",
    from: "FROM vpcs v",
    scope: "v.account_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "v.id", kind: ColKind::Int },
        Column { path: "label", expr: "v.label", kind: ColKind::Text },
        Column { path: "region", expr: "v.region", kind: ColKind::Text },
        Column { path: "description", expr: "v.description", kind: ColKind::Text },
        Column { path: "created", expr: "v.created", kind: ColKind::Text },
        Column { path: "updated", expr: "v.updated", kind: ColKind::Text },
    ],
    order: "v.id",
    kept_count: Some("vpcs"),
    indexed: &["label", "region", "description", "created", "updated"],
};

/// A VPC interface with its subnet and whether its instance is powered on.
#[derive(Debug, Clone, PartialEq)]
pub struct VpcInterface {
    pub interface: InterfaceRow,
    pub active: bool,
}

/// A VPC interface as a subnet's record shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubnetMember {
    pub id: i64,
    pub instance_id: i64,
    pub subnet_id: i64,
    pub config_id: Option<i64>,
    pub active: bool,
}

fn vpc_interface(r: &Row) -> Result<VpcInterface> {
    Ok(VpcInterface { interface: crate::interfaces::interface(r)?, active: r.bool("is_active")? })
}

const VPC_IP_SELECT: &str = "SELECT f.id, f.instance_id, f.account_id, f.region, f.config_id, f.position, f.purpose, \
     f.is_primary, f.label, f.ipam_address, f.vpc_id, f.subnet_id, f.vpc_ipv4, f.nat_1_1, f.default_ipv4, f.default_ipv6, \
     f.version, f.created, f.updated, f.vpc_ipv6_range, f.vpc_ipv6_address, f.vpc_ipv6_ranges, f.vpc_ipv6_public, \
     f.active AS is_active \
     FROM instance_interfaces f JOIN instances i ON i.id = f.instance_id JOIN vpc_subnets s ON s.id = f.subnet_id";

const VPC_IP_LIST: Listing<'static> = Listing {
    select: VPC_IP_SELECT,
    from: "FROM instance_interfaces f JOIN instances i ON i.id = f.instance_id JOIN vpc_subnets s ON s.id = f.subnet_id",
    scope: "f.account_id",
    and: " AND f.purpose = 'vpc'",
    cols: &[
        // Whether the interface's instance is powered on with the interface's profile (a Linode
        // interface has none), kept on the interface by triggers (migration 62).
        Column { path: "active", expr: "f.active", kind: ColKind::Flag },
        // A Linode interface has no profile: NULL, ordered as 0 (migration 63's index and fences).
        Column { path: "config_id", expr: "f.config_id", kind: ColKind::IntOrNull },
        Column { path: "instance_id", expr: "f.instance_id", kind: ColKind::Int },
        Column { path: "region", expr: "f.region", kind: ColKind::Text },
        Column { path: "vpc_id", expr: "f.vpc_id", kind: ColKind::Int },
        Column { path: "subnet_id", expr: "f.subnet_id", kind: ColKind::Int },
    ],
    order: "f.id",
    kept_count: Some("vpc_interfaces"),
    // Each with an index per list and order fences (migrations 52, 54, 62 and 63); a filter by
    // the profile reads the index on the profile (migration 22), a few interfaces each.
    indexed: &["vpc_id", "subnet_id", "instance_id", "active", "region", "config_id"],
};

/// The tables [`Store::vpc_parts`] reads.
const VPC_PARTS_TABLES: &[&str] = &["vpcs", "vpc_subnets", "instance_interfaces", "instances"];

/// The tables a page of VPCs (`VPC_LIST` with its count, then the subnets of its VPCs and their interfaces)
/// reads; the grants too when the page is a restricted user's.
pub const VPC_PAGE_TABLES: &[&str] = &[
    "vpcs",
    "row_counts",
    "row_blocks",
    "order_fences",
    "order_fence_counts",
    "vpc_subnets",
    "instance_interfaces",
    "instances",
];

/// One VPC with what its record is built from.
#[derive(Debug, Clone)]
pub struct VpcParts {
    pub vpc: VpcRow,
    pub subnets: Vec<SubnetRow>,
    pub members: Vec<SubnetMember>,
}

impl Store {
    /// One VPC of an account with its subnets and the interfaces on them, read by key (and kept
    /// in the read cache until one of those tables is written).
    pub async fn vpc_parts(&self, account_id: i64, id: i64) -> Result<Option<Arc<VpcParts>>> {
        let parts = self
            .cached(CacheKey::Vpc(id), VPC_PARTS_TABLES, || async move {
                let sql = format!("SELECT {VPC_COLS} FROM vpcs WHERE id = $1");
                let Some(row) = query(sql).bind(id).fetch_optional(self.r()).await? else { return Ok(None) };
                let vpc = vpc(&row)?;
                let (subnets, members) = self.subnets_with_members(&[id]).await?;
                Ok(Some(Arc::new(VpcParts { vpc, subnets, members })))
            })
            .await?;
        Ok(parts.as_ref().as_ref().filter(|p| p.vpc.account_id == account_id).cloned())
    }

    /// One VPC of an account.
    pub async fn vpc_get(&self, account_id: i64, id: i64) -> Result<Option<VpcRow>> {
        let sql = format!("SELECT {VPC_COLS} FROM vpcs WHERE id = $1 AND account_id = $2");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.r()).await?;
        row.as_ref().map(vpc).transpose()
    }

    /// One page of an account's VPCs (only those `grant_user` holds a grant on, when given) and
    /// the number of VPCs the whole list has.
    pub async fn vpcs_page(
        &self,
        account_id: i64,
        grant_user: Option<i64>,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<VpcRow>, u64)> {
        let v = Visibility { scope_id: account_id, grant: grant_user.map(|u| (u, "vpc", "v.id")), and: None };
        let (rows, total) = self.fetch_page(&VPC_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(vpc).collect::<Result<_>>()?, total))
    }

    /// The subnets of some VPCs (in id order) with the VPC interfaces on them (in id order), as
    /// a subnet's record shows them. Two reads by key: in one join, PostgreSQL's estimate of the
    /// interfaces per subnet (skewed by large subnets) made it hash every VPC interface of the
    /// database for a page of VPCs.
    pub async fn subnets_with_members(&self, vpc_ids: &[i64]) -> Result<(Vec<SubnetRow>, Vec<SubnetMember>)> {
        let subnets = self.subnets_of_vpcs(vpc_ids).await?;
        let ids: Vec<i64> = subnets.iter().map(|s| s.id).collect();
        let members = self.subnet_members(&ids).await?;
        Ok((subnets, members))
    }

    /// The subnets of some VPCs, in id order.
    pub async fn subnets_of_vpcs(&self, vpc_ids: &[i64]) -> Result<Vec<SubnetRow>> {
        let select = format!("SELECT {SUBNET_COLS} FROM vpc_subnets");
        self.fetch_in(&select, "vpc_id", Keys::Ids(vpc_ids), "id", subnet).await
    }

    /// Some subnets by id, in id order.
    pub async fn subnets_by_ids(&self, ids: &[i64]) -> Result<Vec<SubnetRow>> {
        let select = format!("SELECT {SUBNET_COLS} FROM vpc_subnets");
        self.fetch_in(&select, "id", Keys::Ids(ids), "id", subnet).await
    }

    /// One subnet of a VPC.
    pub async fn subnet_get(&self, vpc_id: i64, id: i64) -> Result<Option<SubnetRow>> {
        let sql = format!("SELECT {SUBNET_COLS} FROM vpc_subnets WHERE id = $1 AND vpc_id = $2");
        let row = query(sql).bind(id).bind(vpc_id).fetch_optional(self.r()).await?;
        row.as_ref().map(subnet).transpose()
    }

    /// The VPC interfaces on some subnets, in id order, as a subnet's record shows them: five
    /// columns of the interfaces alone (`active` is kept on the interface, migration 62), through
    /// the index on the subnet.
    pub async fn subnet_members(&self, subnet_ids: &[i64]) -> Result<Vec<SubnetMember>> {
        if subnet_ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut sql = Sql::new(
            "SELECT id, instance_id, subnet_id, config_id, active FROM instance_interfaces \
             WHERE purpose = 'vpc' AND subnet_id IN ",
        );
        push_ids(&mut sql, subnet_ids);
        sql.push(" ORDER BY id");
        let rows = sql.query().fetch_all(self.r()).await?;
        rows.iter()
            .map(|r| {
                Ok(SubnetMember {
                    id: r.i64("id")?,
                    instance_id: r.i64("instance_id")?,
                    subnet_id: r.i64("subnet_id")?,
                    config_id: r.opt_i64("config_id")?,
                    active: r.bool("active")?,
                })
            })
            .collect()
    }

    /// One page of the VPC interfaces of an account (of one VPC when given; only on VPCs
    /// `grant_user` holds a grant on, when given), in interface order.
    pub async fn vpc_ips_page(
        &self,
        account_id: i64,
        vpc_id: Option<i64>,
        grant_user: Option<i64>,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<VpcInterface>, u64)> {
        self.vpc_interfaces_page(
            (&VPC_IP_LIST, &VPC_IP_OF_VPC_LIST),
            account_id,
            vpc_id,
            grant_user,
            filter,
            page,
            page_size,
        )
        .await
    }

    /// [`Store::vpc_ips_page`] of the VPC interfaces with IPv6.
    pub async fn vpc_ipv6s_page(
        &self,
        account_id: i64,
        vpc_id: Option<i64>,
        grant_user: Option<i64>,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<VpcInterface>, u64)> {
        self.vpc_interfaces_page(
            (&VPC_IPV6_LIST, &VPC_IPV6_OF_VPC_LIST),
            account_id,
            vpc_id,
            grant_user,
            filter,
            page,
            page_size,
        )
        .await
    }

    /// A page of `lists.0` (the account's) or, for one VPC, of `lists.1` (that VPC's, with its
    /// own kept counts, blocks and fences). The caller has found the VPC the account's and one
    /// `grant_user` may see.
    #[allow(clippy::too_many_arguments)]
    async fn vpc_interfaces_page(
        &self,
        lists: (&Listing<'static>, &Listing<'static>),
        account_id: i64,
        vpc_id: Option<i64>,
        grant_user: Option<i64>,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<VpcInterface>, u64)> {
        let (listing, v) = match vpc_id {
            Some(id) => (lists.1, Visibility { scope_id: id, grant: None, and: None }),
            None => (
                lists.0,
                Visibility { scope_id: account_id, grant: grant_user.map(|u| (u, "vpc", "s.vpc_id")), and: None },
            ),
        };
        let (rows, total) = self.fetch_page(listing, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(vpc_interface).collect::<Result<_>>()?, total))
    }
}

/// [`VPC_IP_LIST`] of one VPC (`/v4/vpcs/{vpc_id}/ips`), kept per VPC (migration 54).
const VPC_IP_OF_VPC_LIST: Listing<'static> =
    Listing { scope: "f.vpc_id", kept_count: Some("vpc_interfaces_of_vpc"), ..VPC_IP_LIST };

/// [`VPC_IPV6_LIST`] of one VPC (`/v4/vpcs/{vpc_id}/ipv6s`), kept per VPC (migration 54).
const VPC_IPV6_OF_VPC_LIST: Listing<'static> =
    Listing { scope: "f.vpc_id", kept_count: Some("vpc_ipv6_interfaces_of_vpc"), ..VPC_IPV6_LIST };

/// [`VPC_IP_LIST`] of the interfaces with IPv6.
const VPC_IPV6_LIST: Listing<'static> = Listing {
    and: " AND f.purpose = 'vpc' AND f.vpc_ipv6_range IS NOT NULL",
    kept_count: Some("vpc_ipv6_interfaces"),
    ..VPC_IP_LIST
};

const SUBNET_LIST: Listing<'static> = Listing {
    select: "SELECT s.id, s.vpc_id, s.account_id, s.label, s.ipv4, s.first_v4, s.last_v4, s.ipv6_range, \
             s.created, s.updated FROM vpc_subnets s",
    from: "FROM vpc_subnets s",
    scope: "s.vpc_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "s.id", kind: ColKind::Int },
        Column { path: "label", expr: "s.label", kind: ColKind::Text },
        Column { path: "ipv4", expr: "s.ipv4", kind: ColKind::Text },
        Column { path: "created", expr: "s.created", kind: ColKind::Text },
        Column { path: "updated", expr: "s.updated", kind: ColKind::Text },
    ],
    order: "s.id",
    kept_count: Some("vpc_subnets"),
    indexed: &["label", "ipv4", "created", "updated"],
};

impl Store {
    /// One page of the subnets of a VPC and how many the whole list has.
    pub async fn subnets_page(
        &self,
        vpc_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<SubnetRow>, u64)> {
        let v = Visibility { scope_id: vpc_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&SUBNET_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(subnet).collect::<Result<_>>()?, total))
    }
}
