//! Network interfaces of instances: public, VLAN (by label) and VPC (on a subnet, with an
//! address in it that is unique by constraint). VLANs exist through these rows. An interface
//! belongs to a configuration profile (`config_id`), or, without one, is a Linode interface (the
//! newer generation, on the instance itself).

use std::collections::BTreeSet;

use crate::db::Row;
use nubis_model::{Result, Timestamp};

use crate::db::query;
use crate::rows::RowExt;
use crate::{Store, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct InterfaceRow {
    pub id: i64,
    pub instance_id: i64,
    pub account_id: i64,
    pub region: String,
    /// The configuration profile; `None` for a Linode interface.
    pub config_id: Option<i64>,
    /// Unique per instance; the order of a profile's (or the instance's Linode) interfaces.
    pub position: i64,
    /// `public`, `vlan` or `vpc`.
    pub purpose: String,
    pub primary: bool,
    /// The VLAN label (VLAN interfaces only).
    pub label: Option<String>,
    pub ipam_address: Option<String>,
    pub vpc_id: Option<i64>,
    pub subnet_id: Option<i64>,
    pub vpc_ipv4: Option<String>,
    /// The public IPv4 address in 1:1 NAT with the VPC address.
    pub nat_1_1: Option<String>,
    /// A Linode interface carries the IPv4 / IPv6 default route.
    pub default_ipv4: bool,
    pub default_ipv6: bool,
    /// Bumped by every change of a Linode interface.
    pub version: i64,
    pub created: Timestamp,
    pub updated: Timestamp,
    /// The IPv6 of a VPC interface on a subnet with IPv6, if it has any.
    pub vpc_ipv6: Option<VpcIpv6Row>,
}

/// The IPv6 of a VPC interface: a /64 SLAAC range of its subnet with the interface's address in
/// it, further routed ranges of the subnet, and whether the addresses are public.
#[derive(Debug, Clone, PartialEq)]
pub struct VpcIpv6Row {
    pub slaac_range: String,
    pub slaac_address: String,
    pub ranges: Vec<String>,
    pub is_public: bool,
}

const COLS: &str = "id, instance_id, account_id, region, config_id, position, purpose, is_primary, label, \
                    ipam_address, vpc_id, subnet_id, vpc_ipv4, nat_1_1, default_ipv4, default_ipv6, version, \
                    created, updated, vpc_ipv6_range, vpc_ipv6_address, vpc_ipv6_ranges, vpc_ipv6_public";

pub(crate) fn interface(r: &Row) -> Result<InterfaceRow> {
    Ok(InterfaceRow {
        id: r.i64("id")?,
        instance_id: r.i64("instance_id")?,
        account_id: r.i64("account_id")?,
        region: r.str("region")?,
        config_id: r.opt_i64("config_id")?,
        position: r.i64("position")?,
        purpose: r.str("purpose")?,
        primary: r.bool("is_primary")?,
        label: r.opt_str("label")?,
        ipam_address: r.opt_str("ipam_address")?,
        vpc_id: r.opt_i64("vpc_id")?,
        subnet_id: r.opt_i64("subnet_id")?,
        vpc_ipv4: r.opt_str("vpc_ipv4")?,
        nat_1_1: r.opt_str("nat_1_1")?,
        default_ipv4: r.bool("default_ipv4")?,
        default_ipv6: r.bool("default_ipv6")?,
        version: r.i64("version")?,
        created: r.ts("created")?,
        updated: match r.opt_ts("updated")? {
            Some(t) => t,
            None => r.ts("created")?,
        },
        vpc_ipv6: match (r.opt_str("vpc_ipv6_range")?, r.opt_str("vpc_ipv6_address")?) {
            (Some(slaac_range), Some(slaac_address)) => Some(VpcIpv6Row {
                slaac_range,
                slaac_address,
                ranges: r.str("vpc_ipv6_ranges")?.split_whitespace().map(str::to_string).collect(),
                is_public: r.bool("vpc_ipv6_public")?,
            }),
            _ => None,
        },
    })
}

/// An interface about to be written.
pub struct NewInterface<'a> {
    pub instance_id: i64,
    pub account_id: i64,
    pub region: &'a str,
    pub config_id: Option<i64>,
    /// Unique per instance (see [`Tx::interface_next_position`]).
    pub position: i64,
    pub purpose: &'a str,
    pub primary: bool,
    pub label: Option<&'a str>,
    pub ipam_address: Option<&'a str>,
    pub vpc_id: Option<i64>,
    pub subnet_id: Option<i64>,
    pub vpc_ipv4: Option<(String, u32)>,
    pub nat_1_1: Option<&'a str>,
    pub default_ipv4: bool,
    pub default_ipv6: bool,
    pub vpc_ipv6: Option<VpcIpv6Row>,
    pub created: Timestamp,
}

/// An interface on a subnet with what a refusal to delete the subnet must say about it.
#[derive(Debug, Clone)]
pub struct SubnetUse {
    pub subnet_id: i64,
    pub instance_id: i64,
    pub instance_label: String,
    pub instance_status: String,
}

impl Tx<'_> {
    /// Inserts an interface. A VPC address already used in the subnet is `Error::Unique`.
    pub async fn interface_insert(&mut self, i: &NewInterface<'_>) -> Result<InterfaceRow> {
        let sql = format!(
            "INSERT INTO instance_interfaces (instance_id, account_id, region, position, purpose, is_primary, label, \
             ipam_address, vpc_id, subnet_id, vpc_ipv4, vpc_v4, nat_1_1, created, config_id, default_ipv4, \
             default_ipv6, updated, vpc_ipv6_range, vpc_ipv6_address, vpc_ipv6_ranges, vpc_ipv6_public) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $14, $18, $19, $20, \
             $21) RETURNING {COLS}"
        );
        let v6 = i.vpc_ipv6.as_ref();
        let row = query(sql)
            .bind(i.instance_id)
            .bind(i.account_id)
            .bind(i.region)
            .bind(i.position)
            .bind(i.purpose)
            .bind(i.primary)
            .bind(i.label)
            .bind(i.ipam_address)
            .bind(i.vpc_id)
            .bind(i.subnet_id)
            .bind(i.vpc_ipv4.as_ref().map(|(s, _)| s.clone()))
            .bind(i.vpc_ipv4.as_ref().map(|(_, n)| i64::from(*n)))
            .bind(i.nat_1_1)
            .bind(i.created.to_string())
            .bind(i.config_id)
            .bind(i.default_ipv4)
            .bind(i.default_ipv6)
            .bind(v6.map(|v| v.slaac_range.clone()))
            .bind(v6.map(|v| v.slaac_address.clone()))
            .bind(v6.map(|v| v.ranges.join(" ")).unwrap_or_default())
            .bind(v6.is_some_and(|v| v.is_public))
            .fetch_one(self.h())
            .await?;
        interface(&row)
    }

    /// Sets the SLAAC address of a VPC interface with IPv6 (known once the interface has its id).
    pub async fn interface_set_vpc_ipv6_address(&mut self, id: i64, address: &str) -> Result<InterfaceRow> {
        let sql = format!("UPDATE instance_interfaces SET vpc_ipv6_address = $2 WHERE id = $1 RETURNING {COLS}");
        let row = query(sql).bind(id).bind(address).fetch_one(self.h()).await?;
        interface(&row)
    }

    /// Every IPv6 range of the interfaces on a subnet (SLAAC /64s and routed ranges), read
    /// inside the transaction.
    pub async fn subnet_used_ipv6(&mut self, subnet_id: i64) -> Result<Vec<String>> {
        let sql = "SELECT vpc_ipv6_range, vpc_ipv6_ranges FROM instance_interfaces \
                   WHERE subnet_id = $1 AND vpc_ipv6_range IS NOT NULL ORDER BY id";
        let rows = query(sql).bind(subnet_id).fetch_all(self.h()).await?;
        let mut out = Vec::new();
        for r in &rows {
            out.push(r.str("vpc_ipv6_range")?);
            out.extend(r.str("vpc_ipv6_ranges")?.split_whitespace().map(str::to_string));
        }
        Ok(out)
    }

    /// The VPC addresses in use in a subnet (as integers), read inside the transaction.
    pub async fn subnet_used_addresses(&mut self, subnet_id: i64) -> Result<BTreeSet<u32>> {
        let rows = query("SELECT vpc_v4 FROM instance_interfaces WHERE subnet_id = $1 AND vpc_v4 IS NOT NULL")
            .bind(subnet_id)
            .fetch_column_i64(self.h())
            .await?;
        Ok(rows.into_iter().map(|n| n as u32).collect())
    }

    /// Every interface on any of the subnets of a VPC (or on one subnet), with its instance,
    /// read inside the transaction.
    pub async fn subnet_uses(&mut self, vpc_id: i64, subnet_id: Option<i64>) -> Result<Vec<SubnetUse>> {
        let rows = query(
            "SELECT f.subnet_id, f.instance_id, i.label, i.status FROM instance_interfaces f \
             JOIN instances i ON i.id = f.instance_id \
             WHERE f.vpc_id = $1 AND ($2 IS NULL OR f.subnet_id = $2) ORDER BY f.subnet_id, f.instance_id",
        )
        .bind(vpc_id)
        .bind(subnet_id)
        .fetch_all(self.h())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(SubnetUse {
                    subnet_id: r.i64("subnet_id")?,
                    instance_id: r.i64("instance_id")?,
                    instance_label: r.str("label")?,
                    instance_status: r.str("status")?,
                })
            })
            .collect()
    }

    /// The VLAN labels of an account in a region (its rows of `vlans`), read inside the
    /// transaction.
    pub async fn vlan_labels(&mut self, account_id: i64, region: &str) -> Result<Vec<String>> {
        query("SELECT label FROM vlans WHERE account_id = $1 AND region = $2 ORDER BY label")
            .bind(account_id)
            .bind(region)
            .fetch_column_str(self.h())
            .await
    }

    /// The VPC interface that uses `address` as its 1:1 NAT, if any (inside the transaction).
    pub async fn interface_with_nat(&mut self, address: &str) -> Result<Option<InterfaceRow>> {
        let sql = format!("SELECT {COLS} FROM instance_interfaces WHERE nat_1_1 = $1 ORDER BY id LIMIT 1");
        let row = query(sql).bind(address).fetch_optional(self.h()).await?;
        row.as_ref().map(interface).transpose()
    }

    /// Removes `address` as the 1:1 NAT of any interface.
    pub async fn interface_clear_nat(&mut self, address: &str) -> Result<()> {
        query("UPDATE instance_interfaces SET nat_1_1 = NULL WHERE nat_1_1 = $1")
            .bind(address)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// One interface of an instance with its row lock taken (a no-op update), read inside the
    /// transaction.
    pub async fn interface_lock(&mut self, instance_id: i64, id: i64) -> Result<Option<InterfaceRow>> {
        let sql = format!(
            "UPDATE instance_interfaces SET version = version WHERE id = $1 AND instance_id = $2 RETURNING {COLS}"
        );
        query(sql).bind(id).bind(instance_id).fetch_optional(self.h()).await?.as_ref().map(interface).transpose()
    }

    /// Every interface of an instance (of every profile, and its Linode interfaces), in position
    /// order, read inside the transaction.
    pub async fn interfaces_of_instance(&mut self, instance_id: i64) -> Result<Vec<InterfaceRow>> {
        let sql = format!("SELECT {COLS} FROM instance_interfaces WHERE instance_id = $1 ORDER BY position, id");
        query(sql).bind(instance_id).fetch_all(self.h()).await?.iter().map(interface).collect()
    }

    /// The position after every interface of the instance.
    pub async fn interface_next_position(&mut self, instance_id: i64) -> Result<i64> {
        let n = query("SELECT COALESCE(MAX(position) + 1, 0) FROM instance_interfaces WHERE instance_id = $1")
            .bind(instance_id)
            .fetch_i64(self.h())
            .await?;
        Ok(n)
    }

    pub async fn interface_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM instance_interfaces WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// Moves an interface to another profile of its instance (a rebuild's new profile).
    pub async fn interface_move_to_config(&mut self, id: i64, config_id: i64) -> Result<()> {
        query("UPDATE instance_interfaces SET config_id = $2 WHERE id = $1")
            .bind(id)
            .bind(config_id)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Gives the interfaces `ids` (of one instance) the positions `positions`, in that order;
    /// positions stay unique per instance throughout.
    pub async fn interfaces_reposition(&mut self, ids: &[i64], positions: &[i64]) -> Result<()> {
        for id in ids {
            query("UPDATE instance_interfaces SET position = -1 - id WHERE id = $1")
                .bind(*id)
                .execute(self.h())
                .await?;
        }
        for (id, p) in ids.iter().zip(positions) {
            query("UPDATE instance_interfaces SET position = $2 WHERE id = $1")
                .bind(*id)
                .bind(*p)
                .execute(self.h())
                .await?;
        }
        Ok(())
    }

    /// Writes an interface's changeable fields as `f` holds them; `bump` moves its version on.
    /// A VPC address already used in the subnet is `Error::Unique`.
    pub async fn interface_save(&mut self, f: &InterfaceRow, bump: bool, now: Timestamp) -> Result<InterfaceRow> {
        let v4 =
            f.vpc_ipv4.as_deref().and_then(|a| a.parse::<std::net::Ipv4Addr>().ok()).map(|a| i64::from(u32::from(a)));
        let sql = format!(
            "UPDATE instance_interfaces SET is_primary = $2, label = $3, ipam_address = $4, vpc_ipv4 = $5, vpc_v4 = $6, \
             nat_1_1 = $7, default_ipv4 = $8, default_ipv6 = $9, version = version + $10, updated = $11 \
             WHERE id = $1 RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(f.id)
            .bind(f.primary)
            .bind(f.label.as_deref())
            .bind(f.ipam_address.as_deref())
            .bind(f.vpc_ipv4.as_deref())
            .bind(v4)
            .bind(f.nat_1_1.as_deref())
            .bind(f.default_ipv4)
            .bind(f.default_ipv6)
            .bind(i64::from(bump))
            .bind(now.to_string())
            .fetch_one(self.h())
            .await?;
        interface(&row)
    }
}

impl Store {
    /// One interface of an instance.
    pub async fn interface_get(&self, instance_id: i64, id: i64) -> Result<Option<InterfaceRow>> {
        let sql = format!("SELECT {COLS} FROM instance_interfaces WHERE id = $1 AND instance_id = $2");
        query(sql).bind(id).bind(instance_id).fetch_optional(self.r()).await?.as_ref().map(interface).transpose()
    }

    /// Every interface of an instance, in position order.
    pub async fn interfaces_of_instance(&self, instance_id: i64) -> Result<Vec<InterfaceRow>> {
        let sql = format!("SELECT {COLS} FROM instance_interfaces WHERE instance_id = $1 ORDER BY position, id");
        query(sql).bind(instance_id).fetch_all(self.r()).await?.iter().map(interface).collect()
    }

    /// The interfaces of some profiles, in position order.
    pub async fn interfaces_of_configs(&self, config_ids: &[i64]) -> Result<Vec<InterfaceRow>> {
        let select = format!("SELECT {COLS} FROM instance_interfaces");
        self.fetch_in(&select, "config_id", crate::sql::Keys::Ids(config_ids), "position, id", interface).await
    }

    /// The interfaces of some instances, in id order.
    pub async fn interfaces_of_instances(&self, instance_ids: &[i64]) -> Result<Vec<InterfaceRow>> {
        let select = format!("SELECT {COLS} FROM instance_interfaces");
        self.fetch_in(&select, "instance_id", crate::sql::Keys::Ids(instance_ids), "id", interface).await
    }

    /// The interfaces that use one of `addresses` as their 1:1 NAT, in id order.
    pub async fn interfaces_with_nat_in(&self, addresses: &[String]) -> Result<Vec<InterfaceRow>> {
        let select = format!("SELECT {COLS} FROM instance_interfaces");
        self.fetch_in(&select, "nat_1_1", crate::sql::Keys::Texts(addresses), "id", interface).await
    }
}

/// A VLAN of an account: it exists while interfaces carry its label in its region.
#[derive(Debug, Clone, PartialEq)]
pub struct VlanRow {
    pub region: String,
    pub label: String,
    /// When its first interface was made.
    pub created: Timestamp,
}

/// An account's VLANs: the rows of `vlans` (migration 49), kept from the VLAN interfaces by
/// triggers, in the order they came into being (id), with a kept count and blocks.
const VLAN_LIST: crate::sql::Listing<'static> = crate::sql::Listing {
    select: "SELECT x.region, x.label, x.created FROM vlans x",
    from: "FROM vlans x",
    scope: "x.account_id",
    and: "",
    cols: &[
        crate::sql::Column { path: "label", expr: "x.label", kind: crate::sql::ColKind::Text },
        crate::sql::Column { path: "region", expr: "x.region", kind: crate::sql::ColKind::Text },
    ],
    order: "x.id",
    kept_count: Some("vlans"),
    indexed: &["label", "region"],
};

/// A restricted user sees the VLANs with an instance it holds a grant on (the user's id goes
/// between the two parts).
const VLAN_GRANTED: (&str, &str) = (
    " AND EXISTS (SELECT 1 FROM instance_interfaces v JOIN grants g ON g.entity_id = v.instance_id \
     AND g.kind = 'instance' WHERE v.purpose = 'vlan' AND v.account_id = x.account_id AND v.region = x.region \
     AND v.label = x.label AND g.user_id = ",
    ")",
);

impl Store {
    /// One page of an account's VLANs (only those with an instance `grant_user` holds a grant
    /// on, when given), oldest first unless the filter orders them, and how many there are.
    pub async fn vlans_page(
        &self,
        account_id: i64,
        grant_user: Option<i64>,
        filter: &nubis_model::filter::Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<VlanRow>, u64)> {
        let and = grant_user.map(|u| (VLAN_GRANTED.0, u, VLAN_GRANTED.1));
        let v = crate::sql::Visibility { scope_id: account_id, grant: None, and };
        let (rows, total) = self.fetch_page(&VLAN_LIST, &v, filter, page, page_size).await?;
        let vlans = rows
            .iter()
            .map(|r| Ok(VlanRow { region: r.str("region")?, label: r.str("label")?, created: r.ts("created")? }))
            .collect::<Result<_>>()?;
        Ok((vlans, total))
    }

    /// The instances on some VLANs of an account (only those `grant_user` holds a grant on, when
    /// given): (region, label, instance id), by instance id.
    pub async fn vlan_members(
        &self,
        account_id: i64,
        grant_user: Option<i64>,
        vlans: &[VlanRow],
    ) -> Result<Vec<(String, String, i64)>> {
        use crate::sql::{Sql, Val, push_strs};
        if vlans.is_empty() {
            return Ok(Vec::new());
        }
        let labels: Vec<String> = vlans.iter().map(|v| v.label.clone()).collect();
        let mut regions: Vec<String> = vlans.iter().map(|v| v.region.clone()).collect();
        regions.sort();
        regions.dedup();
        // The page's regions and labels both bound the seek in the index on (account, region,
        // label): the labels alone would read every interface of the account.
        let mut sql = Sql::new(
            "SELECT DISTINCT f.region, f.label, f.instance_id FROM instance_interfaces f \
             WHERE f.purpose = 'vlan' AND f.account_id = ",
        );
        sql.bind(Val::I64(account_id)).push(" AND f.region IN ");
        push_strs(&mut sql, &regions);
        sql.push(" AND f.label IN ");
        push_strs(&mut sql, &labels);
        if let Some(user) = grant_user {
            sql.push(" AND EXISTS (SELECT 1 FROM grants g WHERE g.kind = 'instance' AND g.entity_id = f.instance_id");
            sql.push(" AND g.user_id = ").bind(Val::I64(user)).push(")");
        }
        sql.push(" ORDER BY f.instance_id");
        let rows = sql.query().fetch_all(self.r()).await?;
        let members = rows
            .iter()
            .map(|r| Ok((r.str("region")?, r.str("label")?, r.i64("instance_id")?)))
            .collect::<Result<Vec<_>>>()?;
        Ok(members
            .into_iter()
            .filter(|(region, label, _)| vlans.iter().any(|v| &v.region == region && &v.label == label))
            .collect())
    }
}
