//! The schema's migrations, applied in order at start-up, each once, in one transaction (on
//! PostgreSQL under an advisory lock, so that one replica migrates at a time).

use nubis_model::{Error, Result};

use crate::db::query;
use crate::{Backend, Store, retry, rows};

/// One migration: its version, its name, and its DDL for each engine (files
/// `migrations/{sqlite,postgres}/NNNN_<name>.sql`).
macro_rules! migration {
    ($v:expr, $name:literal, $file:literal) => {
        (
            $v,
            $name,
            include_str!(concat!("../migrations/sqlite/", $file)),
            include_str!(concat!("../migrations/postgres/", $file)),
        )
    };
}

/// Migrations, in order: (version, name, SQLite DDL, PostgreSQL DDL).
const MIGRATIONS: &[(i64, &str, &str, &str)] = &[
    migration!(1, "foundation", "0001_foundation.sql"),
    migration!(2, "vpcs", "0002_vpcs.sql"),
    migration!(3, "instances", "0003_instances.sql"),
    migration!(4, "nodebalancers", "0004_nodebalancers.sql"),
    migration!(5, "firewalls", "0005_firewalls.sql"),
    migration!(6, "account_transfer", "0006_account_transfer.sql"),
    migration!(7, "billing", "0007_billing.sql"),
    migration!(8, "signin", "0008_signin.sql"),
    migration!(9, "test_controls", "0009_test_controls.sql"),
    migration!(10, "read_path", "0010_read_path.sql"),
    migration!(11, "transfers", "0011_transfers.sql"),
    migration!(12, "moved_rows", "0012_moved_rows.sql"),
    migration!(15, "replicas", "0015_replicas.sql"),
    migration!(16, "keyed_reads", "0016_keyed_reads.sql"),
    migration!(17, "change_notices", "0017_change_notices.sql"),
    migration!(18, "signin_hardening", "0018_signin_hardening.sql"),
    migration!(19, "payment_settlement", "0019_payment_settlement.sql"),
    migration!(20, "instance_boot_data", "0020_instance_boot_data.sql"),
    migration!(22, "instance_profiles", "0022_instance_profiles.sql"),
    migration!(23, "ssh_keys", "0023_ssh_keys.sql"),
    migration!(24, "linode_interfaces", "0024_linode_interfaces.sql"),
    migration!(25, "row_counts_notices", "0025_row_counts_notices.sql"),
    migration!(28, "event_times", "0028_event_times.sql"),
    migration!(29, "firewall_versions", "0029_firewall_versions.sql"),
    migration!(30, "maintenance_policy", "0030_maintenance_policy.sql"),
    migration!(31, "udp_balancing", "0031_udp_balancing.sql"),
    migration!(32, "vpc_ipv6", "0032_vpc_ipv6.sql"),
    migration!(33, "firewall_rulesets", "0033_firewall_rulesets.sql"),
    migration!(35, "instance_backups", "0035_instance_backups.sql"),
    migration!(36, "list_positions", "0036_list_positions.sql"),
    migration!(37, "list_tags", "0037_list_tags.sql"),
    migration!(38, "more_list_positions", "0038_more_list_positions.sql"),
    migration!(39, "order_fences", "0039_order_fences.sql"),
    migration!(40, "maintenance_list", "0040_maintenance_list.sql"),
    migration!(41, "pending_maintenance", "0041_pending_maintenance.sql"),
    migration!(42, "fence_numbers", "0042_fence_numbers.sql"),
    migration!(43, "vpc_ipv6_list", "0043_vpc_ipv6_list.sql"),
    migration!(44, "service_firewalls", "0044_service_firewalls.sql"),
    migration!(45, "locate_ranges", "0045_locate_ranges.sql"),
    migration!(46, "nat_index", "0046_nat_index.sql"),
    migration!(47, "nullable_orders", "0047_nullable_orders.sql"),
    migration!(48, "address_balancers", "0048_address_balancers.sql"),
    migration!(49, "vlans", "0049_vlans.sql"),
    migration!(50, "address_balancer_orders", "0050_address_balancer_orders.sql"),
    migration!(51, "write_gate", "0051_write_gate.sql"),
    migration!(52, "more_orders", "0052_more_orders.sql"),
    migration!(53, "transition_sums", "0053_transition_sums.sql"),
    migration!(54, "vpc_address_lists", "0054_vpc_address_lists.sql"),
    migration!(55, "scope_order_indexes", "0055_scope_order_indexes.sql"),
    migration!(56, "condition_indexes", "0056_condition_indexes.sql"),
    migration!(57, "keyed_groups", "0057_keyed_groups.sql"),
    migration!(58, "address_regions", "0058_address_regions.sql"),
    migration!(59, "vpc_address_regions", "0059_vpc_address_regions.sql"),
    migration!(60, "change_notice_once", "0060_change_notice_once.sql"),
    migration!(61, "address_orders", "0061_address_orders.sql"),
    migration!(62, "interface_active", "0062_interface_active.sql"),
    migration!(63, "vpc_address_orders", "0063_vpc_address_orders.sql"),
    migration!(64, "more_fields", "0064_more_fields.sql"),
    migration!(65, "booleans_and_transfers", "0065_booleans_and_transfers.sql"),
    migration!(66, "transfer_status", "0066_transfer_status.sql"),
    migration!(67, "address_kind_and_rdns", "0067_address_kind_and_rdns.sql"),
    migration!(68, "login_restricted", "0068_login_restricted.sql"),
    migration!(69, "address_prefix_index", "0069_address_prefix_index.sql"),
    migration!(70, "address_kind_counts", "0070_address_kind_counts.sql"),
    migration!(71, "balancer_fields", "0071_balancer_fields.sql"),
    migration!(72, "transfer_halves", "0072_transfer_halves.sql"),
    migration!(73, "instance_view_addresses", "0073_instance_view_addresses.sql"),
    migration!(74, "kept_counts_clustered", "0074_kept_counts_clustered.sql"),
    migration!(75, "node_status_counts", "0075_node_status_counts.sql"),
    migration!(76, "locate_fenced", "0076_locate_fenced.sql"),
    migration!(77, "vpc_address_list_order", "0077_vpc_address_list_order.sql"),
    migration!(78, "instances_status_id", "0078_instances_status_id.sql"),
    migration!(79, "plain_fields", "0079_plain_fields.sql"),
    migration!(80, "service_firewall_orders", "0080_service_firewall_orders.sql"),
    migration!(81, "event_reads", "0081_event_reads.sql"),
];

impl Store {
    pub(crate) async fn migrate(&self) -> Result<()> {
        retry(|| async {
            let mut tx = self.begin_ungated().await?;
            if self.backend() == Backend::Postgres {
                // One replica migrates at a time (waiting as long as another one's migration takes).
                tx.execute_batch("SELECT pg_advisory_xact_lock(7283541)").await?;
            }
            query("CREATE TABLE IF NOT EXISTS nubis_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied TEXT NOT NULL)")
                .execute(tx.h())
                .await?;
            let done: Vec<i64> = query("SELECT version FROM nubis_migrations")
                .fetch_all(tx.h())
                .await?
                .iter()
                .map(|r| rows::RowExt::i64(r, "version"))
                .collect::<Result<_>>()?;
            for (version, name, lite_sql, pg_sql) in MIGRATIONS {
                if done.contains(version) {
                    continue;
                }
                tx.execute_batch(if self.backend() == Backend::Sqlite { lite_sql } else { pg_sql }).await?;
                query("INSERT INTO nubis_migrations (version, name, applied) VALUES ($1, $2, $3)")
                    .bind(*version)
                    .bind(*name)
                    .bind(nubis_model::Timestamp::now())
                    .execute(tx.h())
                    .await?;
            }
            tx.commit().await
        })
        .await
        .map_err(|e| Error::Internal(format!("migration failed: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;

    /// Migration 42 numbers the fences placed before it in the order of their keys, and moves
    /// each range's counts with its fence.
    #[test]
    fn fences_placed_before_42_are_numbered_in_key_order_with_their_counts() {
        let sql = |v: i64| MIGRATIONS.iter().find(|m| m.0 == v).map(|m| m.2).unwrap();
        let c = rusqlite::Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE order_fences (kind TEXT NOT NULL, scope_id BIGINT NOT NULL, fence BIGINT NOT NULL, \
               k_int BIGINT, k_text TEXT, k_id BIGINT NOT NULL, PRIMARY KEY (kind, scope_id, fence)); \
             CREATE TABLE order_fence_counts (kind TEXT NOT NULL, scope_id BIGINT NOT NULL, fence BIGINT NOT NULL, \
               shard BIGINT NOT NULL, n BIGINT NOT NULL, PRIMARY KEY (kind, scope_id, fence, shard)); \
             INSERT INTO order_fences VALUES ('t.label', 1, 1, NULL, 'm', 5), ('t.label', 1, 2, NULL, 'c', 9), \
               ('t.label', 1, 3, NULL, 'c', 7), ('t.label', 2, 4, NULL, 'a', 1), ('t.port', 1, 5, 80, NULL, 3); \
             INSERT INTO order_fence_counts VALUES ('t.label', 1, 0, 0, 10), ('t.label', 1, 1, 0, 11), \
               ('t.label', 1, 2, 0, 12), ('t.label', 1, 3, 0, 13), ('t.label', 2, 4, 0, 14), ('t.port', 1, 5, 0, 15);",
        )
        .unwrap();
        c.execute_batch(sql(42)).unwrap();
        let gap = 1i64 << 32;
        let rows: Vec<(String, i64, i64, i64)> = c
            .prepare(
                "SELECT f.kind, f.scope_id, f.fence, c.n FROM order_fences f JOIN order_fence_counts c \
                 ON c.kind = f.kind AND c.scope_id = f.scope_id AND c.fence = f.fence ORDER BY f.kind, f.scope_id, f.fence",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let want = [
            ("t.label", 1, gap, 13),
            ("t.label", 1, 2 * gap, 12),
            ("t.label", 1, 3 * gap, 11),
            ("t.label", 2, gap, 14),
            ("t.port", 1, gap, 15),
        ];
        let want: Vec<(String, i64, i64, i64)> = want.iter().map(|(k, s, f, n)| (k.to_string(), *s, *f, *n)).collect();
        assert_eq!(rows, want);
        let below: i64 = c.query_row("SELECT n FROM order_fence_counts WHERE fence = 0", [], |r| r.get(0)).unwrap();
        assert_eq!(below, 10, "the range below the first fence keeps its number and count");
    }
}
