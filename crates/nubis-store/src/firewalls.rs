//! Firewalls and their devices. Rules are one JSON document per firewall. A device points at its
//! service (an instance or a load balancer) through a foreign key, and carries `active` (its
//! firewall is enabled) so that the one-active-firewall-per-service rule and the
//! one-balancer-per-firewall rule are unique indexes (migration 0005).
//!
//! Also the reads the balancer data plane needs: the rules of the active firewall of a balancer
//! ([`Store::nodebalancer_active_firewall_rules`], [`Store::active_balancer_firewalls`]).

use nubis_model::firewall::{DeviceType, FirewallRules, FirewallStatus, WrittenRules};
use nubis_model::{Error, Result, Timestamp};

use crate::db::{Row, query};
use crate::rows::RowExt;
use crate::sql::{ColKind, Column, Listing, Visibility};
use crate::{Store, Tx};
use nubis_model::filter::Filter;

#[derive(Debug, Clone, PartialEq)]
pub struct FirewallRow {
    pub id: i64,
    pub account_id: i64,
    pub label: String,
    pub status: FirewallStatus,
    /// As written: rules and references to rule sets.
    pub rules: WrittenRules,
    /// The version of `rules` (1 at creation, one more at each change of the rules).
    pub rules_version: i64,
    pub tags: Vec<String>,
    pub created: Timestamp,
    pub updated: Timestamp,
}

impl FirewallRow {
    pub fn enabled(&self) -> bool {
        self.status == FirewallStatus::Enabled
    }
}

/// A device: firewall `firewall_id` is assigned to the service `(kind, entity_id)`.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceRow {
    pub id: i64,
    pub firewall_id: i64,
    pub account_id: i64,
    pub kind: DeviceType,
    pub entity_id: i64,
    /// The service's current label.
    pub entity_label: String,
    /// The firewall is enabled.
    pub active: bool,
    pub created: Timestamp,
    pub updated: Timestamp,
}

/// A load balancer as firewalls see it (the columns of the schema contract in migration 0004).
#[derive(Debug, Clone, PartialEq)]
pub struct BalancerRef {
    pub id: i64,
    pub account_id: i64,
    pub label: String,
    pub region: String,
}

/// Another enabled firewall already assigned to a service.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveConflict {
    pub kind: DeviceType,
    pub entity_id: i64,
    pub entity_label: String,
    pub firewall_id: i64,
    pub firewall_label: String,
}

pub struct NewFirewall<'a> {
    pub account_id: i64,
    pub label: &'a str,
    pub rules: &'a WrittenRules,
    pub tags: &'a [String],
    pub created: Timestamp,
}

pub struct NewDevice<'a> {
    pub firewall_id: i64,
    pub account_id: i64,
    pub kind: DeviceType,
    pub entity_id: i64,
    /// The service's label, for the returned row.
    pub entity_label: &'a str,
    /// The firewall is enabled.
    pub active: bool,
    pub created: Timestamp,
}

/// The changeable fields of a firewall; `None` leaves a field as it is.
#[derive(Default)]
pub struct FirewallChanges<'a> {
    pub label: Option<&'a str>,
    pub tags: Option<&'a [String]>,
    pub status: Option<FirewallStatus>,
}

const COLS: &str = "id, account_id, label, status, rules, rules_version, tags, created, updated";

/// A device with its service's label, read by key for each device the page returns (a subquery
/// each, not a join): joined, PostgreSQL's generic plan for a page merge-joined every device of
/// the firewall with the balancers' primary key and sorted them (40 ms a page at 10,000 devices,
/// 0.4 ms this way), and the list's kept count could not be read in the page's statement.
const DEVICE_SELECT: &str = "SELECT d.id, d.firewall_id, d.account_id, d.instance_id, d.nodebalancer_id, d.active, \
                             d.created, d.updated, COALESCE((SELECT i.label FROM instances i WHERE i.id = d.instance_id), \
                             (SELECT n.label FROM nodebalancers n WHERE n.id = d.nodebalancer_id)) AS entity_label \
                             FROM firewall_devices d";

/// The device column that points at a service of this kind.
/// Devices written per statement by [`Tx::firewall_devices_insert`] (six binds each).
const DEVICES_AT_ONCE: usize = 500;

fn column(kind: DeviceType) -> &'static str {
    match kind {
        DeviceType::Instance => "instance_id",
        DeviceType::Nodebalancer => "nodebalancer_id",
    }
}

pub(crate) fn json<T: serde::Serialize + ?Sized>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(Error::internal)
}

pub(crate) fn rules_of(text: &str) -> Result<WrittenRules> {
    serde_json::from_str(text).map_err(|e| Error::internal(format!("stored firewall rules: {e}")))
}

fn firewall(r: &Row) -> Result<FirewallRow> {
    let status = r.str("status")?;
    Ok(FirewallRow {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        status: FirewallStatus::parse(&status).ok_or_else(|| Error::internal(format!("firewall status {status}")))?,
        rules: rules_of(&r.str("rules")?)?,
        rules_version: r.i64("rules_version")?,
        tags: serde_json::from_str(&r.str("tags")?).map_err(Error::internal)?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

fn device(r: &Row) -> Result<DeviceRow> {
    let (kind, entity_id) = match (r.opt_i64("instance_id")?, r.opt_i64("nodebalancer_id")?) {
        (Some(i), None) => (DeviceType::Instance, i),
        (None, Some(n)) => (DeviceType::Nodebalancer, n),
        _ => return Err(Error::internal("firewall device without exactly one service")),
    };
    Ok(DeviceRow {
        id: r.i64("id")?,
        firewall_id: r.i64("firewall_id")?,
        account_id: r.i64("account_id")?,
        kind,
        entity_id,
        entity_label: r.opt_str("entity_label")?.unwrap_or_default(),
        active: r.bool("active")?,
        created: r.ts("created")?,
        updated: r.ts("updated")?,
    })
}

fn balancer(r: &Row) -> Result<BalancerRef> {
    Ok(BalancerRef {
        id: r.i64("id")?,
        account_id: r.i64("account_id")?,
        label: r.str("label")?,
        region: r.str("region")?,
    })
}

impl Tx<'_> {
    pub async fn firewall_insert(&mut self, f: &NewFirewall<'_>) -> Result<FirewallRow> {
        let sql = format!(
            "INSERT INTO firewalls (account_id, label, status, rules, tags, created, updated) \
             VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(f.account_id)
            .bind(f.label)
            .bind(FirewallStatus::Enabled.name())
            .bind(json(f.rules)?)
            .bind(json(f.tags)?)
            .bind(f.created)
            .fetch_one(self.h())
            .await?;
        let f = firewall(&row)?;
        self.firewall_version_record(&f).await?;
        self.firewall_ruleset_refs_set(f.id, &f.rules).await?;
        Ok(f)
    }

    /// A firewall of the account, read inside the transaction with its row lock taken (a no-op
    /// update), so that concurrent changes of one firewall (device adds, status changes, its
    /// delete) conflict instead of interleaving.
    pub async fn firewall_lock(&mut self, id: i64, account_id: i64) -> Result<Option<FirewallRow>> {
        let sql = format!("UPDATE firewalls SET updated = updated WHERE id = $1 AND account_id = $2 RETURNING {COLS}");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.h()).await?;
        row.as_ref().map(firewall).transpose()
    }

    pub async fn firewall_update(&mut self, id: i64, c: &FirewallChanges<'_>, now: Timestamp) -> Result<FirewallRow> {
        let sql = format!(
            "UPDATE firewalls SET label = COALESCE($2, label), tags = COALESCE($3, tags), \
             status = COALESCE($4, status), updated = $5 WHERE id = $1 RETURNING {COLS}"
        );
        let row = query(sql)
            .bind(id)
            .bind(c.label)
            .bind(c.tags.map(json).transpose()?)
            .bind(c.status.map(FirewallStatus::name))
            .bind(now)
            .fetch_one(self.h())
            .await?;
        firewall(&row)
    }

    pub async fn firewall_set_rules(&mut self, id: i64, rules: &WrittenRules, now: Timestamp) -> Result<FirewallRow> {
        let sql = format!(
            "UPDATE firewalls SET rules = $2, rules_version = rules_version + 1, updated = $3 WHERE id = $1 \
             RETURNING {COLS}"
        );
        let row = query(sql).bind(id).bind(json(rules)?).bind(now).fetch_one(self.h()).await?;
        let f = firewall(&row)?;
        self.firewall_version_record(&f).await?;
        self.firewall_ruleset_refs_set(f.id, &f.rules).await?;
        Ok(f)
    }

    /// Deletes a firewall with its devices.
    pub async fn firewall_delete(&mut self, id: i64) -> Result<()> {
        query("DELETE FROM firewall_devices WHERE firewall_id = $1").bind(id).execute(self.h()).await?;
        query("DELETE FROM firewall_ruleset_refs WHERE firewall_id = $1").bind(id).execute(self.h()).await?;
        self.firewall_versions_delete(id).await?;
        query("DELETE FROM firewalls WHERE id = $1").bind(id).execute(self.h()).await?;
        Ok(())
    }

    /// The devices of a firewall, read inside the transaction, in id order.
    pub async fn firewall_devices(&mut self, firewall_id: i64) -> Result<Vec<DeviceRow>> {
        let sql = format!("{DEVICE_SELECT} WHERE d.firewall_id = $1 ORDER BY d.id");
        let rows = query(sql).bind(firewall_id).fetch_all(self.h()).await?;
        rows.iter().map(device).collect()
    }

    /// The devices that assign a firewall to the instance, read inside the transaction, in
    /// firewall id order.
    pub async fn instance_firewall_devices(&mut self, instance_id: i64) -> Result<Vec<DeviceRow>> {
        let sql = format!("{DEVICE_SELECT} WHERE d.instance_id = $1 ORDER BY d.firewall_id");
        let rows = query(sql).bind(instance_id).fetch_all(self.h()).await?;
        rows.iter().map(device).collect()
    }

    /// Assigns a firewall to a service. A uniqueness violation means a rule the caller checked
    /// was broken by a concurrent commit.
    pub async fn firewall_device_insert(&mut self, d: &NewDevice<'_>) -> Result<DeviceRow> {
        let mut rows = self.firewall_devices_insert(std::slice::from_ref(d)).await?;
        rows.pop().ok_or_else(|| Error::internal("an inserted device was not returned"))
    }

    /// Assigns firewalls to services, [`DEVICES_AT_ONCE`] per statement (one statement for
    /// many: the devices' kept counts and order fences are kept by statement triggers, which
    /// then run once per batch), returned in the order given; as
    /// [`Tx::firewall_device_insert`] for each.
    pub async fn firewall_devices_insert(&mut self, devices: &[NewDevice<'_>]) -> Result<Vec<DeviceRow>> {
        let mut out = Vec::with_capacity(devices.len());
        for batch in devices.chunks(DEVICES_AT_ONCE) {
            let rows: Vec<String> = (0..batch.len())
                .map(|k| {
                    let b = k * 6;
                    format!("(${}, ${}, ${}, ${}, ${}, ${}, ${})", b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 6)
                })
                .collect();
            let sql = format!(
                "INSERT INTO firewall_devices (firewall_id, account_id, instance_id, nodebalancer_id, active, created, \
                 updated) VALUES {} RETURNING id, firewall_id, account_id, instance_id, nodebalancer_id, active, \
                 created, updated, '' AS entity_label",
                rows.join(", ")
            );
            let mut q = query(sql);
            for d in batch {
                let (instance, balancer) = match d.kind {
                    DeviceType::Instance => (Some(d.entity_id), None),
                    DeviceType::Nodebalancer => (None, Some(d.entity_id)),
                };
                q = q
                    .bind(d.firewall_id)
                    .bind(d.account_id)
                    .bind(instance)
                    .bind(balancer)
                    .bind(d.active)
                    .bind(d.created);
            }
            // The order of returned rows is not promised: put them back in the order given (a
            // firewall has a service once).
            let mut by_service = std::collections::HashMap::with_capacity(batch.len());
            for row in q.fetch_all(self.h()).await? {
                let d = device(&row)?;
                by_service.insert((d.firewall_id, d.kind, d.entity_id), d);
            }
            for d in batch {
                let mut row = by_service
                    .remove(&(d.firewall_id, d.kind, d.entity_id))
                    .ok_or_else(|| Error::internal("an inserted device was not returned"))?;
                row.entity_label = d.entity_label.to_string();
                out.push(row);
            }
        }
        Ok(out)
    }

    /// Removes one device of a firewall; false when it has no such device.
    pub async fn firewall_device_delete(&mut self, firewall_id: i64, device_id: i64) -> Result<bool> {
        let n = query("DELETE FROM firewall_devices WHERE id = $1 AND firewall_id = $2")
            .bind(device_id)
            .bind(firewall_id)
            .execute(self.h())
            .await?;
        Ok(n > 0)
    }

    /// Marks every device of a firewall active (the firewall was enabled) or not.
    pub async fn firewall_devices_set_active(&mut self, firewall_id: i64, active: bool, now: Timestamp) -> Result<()> {
        query("UPDATE firewall_devices SET active = $2, updated = $3 WHERE firewall_id = $1")
            .bind(firewall_id)
            .bind(active)
            .bind(now)
            .execute(self.h())
            .await?;
        Ok(())
    }

    /// Whether the firewall is already assigned to the service.
    pub async fn firewall_has_device(&mut self, firewall_id: i64, kind: DeviceType, entity_id: i64) -> Result<bool> {
        let sql = format!("SELECT COUNT(*) FROM firewall_devices WHERE firewall_id = $1 AND {} = $2", column(kind));
        Ok(query(sql).bind(firewall_id).bind(entity_id).fetch_i64(self.h()).await? > 0)
    }

    /// The load balancer the firewall is assigned to, if any (a firewall has at most one).
    pub async fn firewall_balancer(&mut self, firewall_id: i64) -> Result<Option<i64>> {
        let ids = query(
            "SELECT nodebalancer_id FROM firewall_devices WHERE firewall_id = $1 AND nodebalancer_id IS NOT NULL",
        )
        .bind(firewall_id)
        .fetch_column_i64(self.h())
        .await?;
        Ok(ids.first().copied())
    }

    /// The enabled firewall other than `except` assigned to a service, as `(id, label)`.
    pub async fn service_active_firewall(
        &mut self,
        kind: DeviceType,
        entity_id: i64,
        except: Option<i64>,
    ) -> Result<Option<(i64, String)>> {
        let sql = format!(
            "SELECT f.id, f.label FROM firewall_devices d JOIN firewalls f ON f.id = d.firewall_id \
             WHERE d.{} = $1 AND f.status = 'enabled' AND ($2 IS NULL OR f.id <> $2) ORDER BY f.id LIMIT 1",
            column(kind)
        );
        let row = query(sql).bind(entity_id).bind(except).fetch_optional(self.h()).await?;
        row.map(|r| Ok((r.i64("id")?, r.str("label")?))).transpose()
    }

    /// For every service of firewall `firewall_id`, the other enabled firewalls assigned to it
    /// (what enabling this firewall would conflict with).
    pub async fn firewall_enable_conflicts(&mut self, firewall_id: i64) -> Result<Vec<ActiveConflict>> {
        let mut out = Vec::new();
        for d in self.firewall_devices(firewall_id).await? {
            if let Some((id, label)) = self.service_active_firewall(d.kind, d.entity_id, Some(firewall_id)).await? {
                out.push(ActiveConflict {
                    kind: d.kind,
                    entity_id: d.entity_id,
                    entity_label: d.entity_label.clone(),
                    firewall_id: id,
                    firewall_label: label,
                });
            }
        }
        Ok(out)
    }

    /// The instances assigned to the firewall that are in live migration, as `(id, label)`.
    pub async fn firewall_instances_in_live_migration(&mut self, firewall_id: i64) -> Result<Vec<(i64, String)>> {
        let rows = query(
            "SELECT i.id, i.label FROM firewall_devices d JOIN instances i ON i.id = d.instance_id \
             WHERE d.firewall_id = $1 AND i.live_migration = TRUE ORDER BY i.id",
        )
        .bind(firewall_id)
        .fetch_all(self.h())
        .await?;
        rows.iter().map(|r| Ok((r.i64("id")?, r.str("label")?))).collect()
    }

    /// Removes an instance from every firewall it is assigned to (the instance is being deleted).
    pub async fn instance_firewall_devices_delete(&mut self, instance_id: i64) -> Result<u64> {
        query("DELETE FROM firewall_devices WHERE instance_id = $1").bind(instance_id).execute(self.h()).await
    }
}

impl Store {
    /// A load balancer of the account (not cached: balancers are written by another area).
    pub async fn nodebalancer_ref(&self, account_id: i64, id: i64) -> Result<Option<BalancerRef>> {
        let row = query("SELECT id, account_id, label, region FROM nodebalancers WHERE id = $1 AND account_id = $2")
            .bind(id)
            .bind(account_id)
            .fetch_optional(self.r())
            .await?;
        row.as_ref().map(balancer).transpose()
    }

    /// The rules of the enabled firewall assigned to a service, if it has one (a service has at
    /// most one), with its rule sets expanded (prefix-list names stay: the application expands
    /// them). `None` when no enabled firewall is assigned: traffic is not filtered.
    pub async fn service_active_firewall_rules(
        &self,
        kind: DeviceType,
        entity_id: i64,
    ) -> Result<Option<FirewallRules>> {
        let sql = format!(
            "SELECT f.rules FROM firewall_devices d JOIN firewalls f ON f.id = d.firewall_id \
             WHERE d.{} = $1 AND f.status = 'enabled' ORDER BY f.id LIMIT 1",
            column(kind)
        );
        let rules = query(sql).bind(entity_id).fetch_column_str(self.r()).await?;
        match rules.first() {
            None => Ok(None),
            Some(r) => Ok(Some(self.firewall_rules_expand_sets(&rules_of(r)?).await?)),
        }
    }

    /// What the balancer data plane enforces for one load balancer: the rules of its enabled
    /// firewall, if it has one. The data plane applies only their inbound part, and only to TCP
    /// connections (spec 4.9: "Firewalls apply only to inbound TCP traffic for balancers");
    /// compile them with `CompiledRules::compile`.
    pub async fn nodebalancer_active_firewall_rules(&self, nodebalancer_id: i64) -> Result<Option<FirewallRules>> {
        self.service_active_firewall_rules(DeviceType::Nodebalancer, nodebalancer_id).await
    }

    /// The same for an instance.
    pub async fn instance_active_firewall_rules(&self, instance_id: i64) -> Result<Option<FirewallRules>> {
        self.service_active_firewall_rules(DeviceType::Instance, instance_id).await
    }

    /// Every load balancer (of any account) with an enabled firewall, with that firewall's rules,
    /// in balancer id order: what building the whole desired state of the data plane needs in
    /// one query.
    pub async fn active_balancer_firewalls(&self) -> Result<Vec<(i64, FirewallRules)>> {
        let rows = query(
            "SELECT d.nodebalancer_id, f.rules FROM firewall_devices d JOIN firewalls f ON f.id = d.firewall_id \
             WHERE d.nodebalancer_id IS NOT NULL AND f.status = 'enabled' ORDER BY d.nodebalancer_id",
        )
        .fetch_all(self.r())
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let written = rules_of(&r.str("rules")?)?;
            out.push((r.i64("nodebalancer_id")?, self.firewall_rules_expand_sets(&written).await?));
        }
        Ok(out)
    }
}

const FIREWALL_LIST: Listing<'static> = Listing {
    select: "SELECT f.id, f.account_id, f.label, f.status, f.rules, f.rules_version, f.tags, f.created, f.updated \
             FROM firewalls f",
    from: "FROM firewalls f",
    scope: "f.account_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "f.id", kind: ColKind::Int },
        Column { path: "label", expr: "f.label", kind: ColKind::Text },
        Column { path: "created", expr: "f.created", kind: ColKind::Text },
        Column { path: "updated", expr: "f.updated", kind: ColKind::Text },
        Column { path: "tags", expr: "f.tags", kind: ColKind::Tags { list: "firewalls", id: "f.id" } },
    ],
    order: "f.id",
    kept_count: Some("firewalls"),
    indexed: &["tags", "label", "created", "updated"],
};

/// The firewalls of one instance (`d.instance_id`), read from its devices in firewall order
/// (migration 44 keeps their count and blocks of firewall ids). Its filters and orders read each
/// device's copy of its firewall's label, creation and change (kept by migration 80's triggers),
/// which an index on (service, copy, firewall id) and fences serve.
const INSTANCE_FIREWALL_LIST: Listing<'static> = Listing {
    select: "SELECT f.id, f.account_id, f.label, f.status, f.rules, f.rules_version, f.tags, f.created, f.updated \
             FROM firewall_devices d JOIN firewalls f ON f.id = d.firewall_id",
    from: "FROM firewall_devices d JOIN firewalls f ON f.id = d.firewall_id",
    scope: "d.instance_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "d.firewall_id", kind: ColKind::Int },
        Column { path: "label", expr: "d.firewall_label", kind: ColKind::Text },
        Column { path: "created", expr: "d.firewall_created", kind: ColKind::Text },
        Column { path: "updated", expr: "d.firewall_updated", kind: ColKind::Text },
    ],
    order: "d.firewall_id",
    kept_count: Some("instance_firewalls"),
    indexed: &["label", "created", "updated"],
};

/// [`INSTANCE_FIREWALL_LIST`] of a balancer.
const BALANCER_FIREWALL_LIST: Listing<'static> =
    Listing { scope: "d.nodebalancer_id", kept_count: Some("nodebalancer_firewalls"), ..INSTANCE_FIREWALL_LIST };

const DEVICE_LIST: Listing<'static> = Listing {
    select: DEVICE_SELECT,
    from: "FROM firewall_devices d",
    scope: "d.firewall_id",
    and: "",
    cols: &[
        Column { path: "id", expr: "d.id", kind: ColKind::Int },
        Column { path: "created", expr: "d.created", kind: ColKind::Text },
        Column { path: "updated", expr: "d.updated", kind: ColKind::Text },
    ],
    order: "d.id",
    kept_count: Some("firewall_devices"),
    indexed: &["created", "updated"],
};

impl Store {
    /// One firewall of an account.
    pub async fn firewall_get(&self, account_id: i64, id: i64) -> Result<Option<FirewallRow>> {
        let sql = format!("SELECT {COLS} FROM firewalls WHERE id = $1 AND account_id = $2");
        let row = query(sql).bind(id).bind(account_id).fetch_optional(self.r()).await?;
        row.as_ref().map(firewall).transpose()
    }

    /// One page of an account's firewalls (only those `grant_user` holds a grant on, when given;
    /// only those assigned to the service `(kind, id)`, when given) and how many the list has.
    pub async fn firewalls_page(
        &self,
        account_id: i64,
        grant_user: Option<i64>,
        service: Option<(DeviceType, i64)>,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<FirewallRow>, u64)> {
        // A service's list is read from its devices, which hold every field it filters and
        // orders by but the tags; filtered by tags, or seen by a restricted user (through the
        // grants on firewalls), from the account's firewalls, each checked for a device of the
        // service.
        if let Some((kind, id)) = service
            && grant_user.is_none()
            && !filter.names("tags")
            && filter.order_by.as_deref() != Some("tags")
        {
            let list = match kind {
                DeviceType::Instance => &INSTANCE_FIREWALL_LIST,
                DeviceType::Nodebalancer => &BALANCER_FIREWALL_LIST,
            };
            let v = Visibility { scope_id: id, grant: None, and: None };
            let (rows, total) = self.fetch_page(list, &v, filter, page, page_size).await?;
            return Ok((rows.iter().map(firewall).collect::<Result<_>>()?, total));
        }
        let and = service.map(|(kind, id)| {
            let before = match kind {
                DeviceType::Instance => {
                    " AND EXISTS (SELECT 1 FROM firewall_devices d WHERE d.firewall_id = f.id AND d.instance_id = "
                }
                DeviceType::Nodebalancer => {
                    " AND EXISTS (SELECT 1 FROM firewall_devices d WHERE d.firewall_id = f.id AND d.nodebalancer_id = "
                }
            };
            (before, id, ")")
        });
        let v = Visibility { scope_id: account_id, grant: grant_user.map(|u| (u, "firewall", "f.id")), and };
        let (rows, total) = self.fetch_page(&FIREWALL_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(firewall).collect::<Result<_>>()?, total))
    }

    /// One page of a firewall's devices and how many it has.
    pub async fn firewall_devices_page(
        &self,
        firewall_id: i64,
        filter: &Filter,
        page: u64,
        page_size: u64,
    ) -> Result<(Vec<DeviceRow>, u64)> {
        let v = Visibility { scope_id: firewall_id, grant: None, and: None };
        let (rows, total) = self.fetch_page(&DEVICE_LIST, &v, filter, page, page_size).await?;
        Ok((rows.iter().map(device).collect::<Result<_>>()?, total))
    }

    /// One device of a firewall.
    pub async fn firewall_device_get(&self, firewall_id: i64, id: i64) -> Result<Option<DeviceRow>> {
        let sql = format!("{DEVICE_SELECT} WHERE d.id = $1 AND d.firewall_id = $2");
        let row = query(sql).bind(id).bind(firewall_id).fetch_optional(self.r()).await?;
        row.as_ref().map(device).transpose()
    }
}
