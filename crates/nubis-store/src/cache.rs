//! A read cache, invalidated by the tables a write touched.
//!
//! Every table has a generation counter. A committed write transaction bumps the counters of the
//! tables it changed (SQLite reports every changed row to an update hook on the writer
//! connection), and every cache key declares the tables its value is read from. An entry is
//! served only while none of those tables has changed since it was loaded, so a write to VPCs
//! leaves the cached credentials and grants in place, and nothing stale is ever served.
//!
//! It is enabled only when this process is the only writer of its database (SQLite; writes by
//! another process to the same file invalidate everything, see `Store::watch_external_writes`).
//! With PostgreSQL several replicas write one database, so the cache is off there and every read
//! goes to the database by key (see docs/decisions.md, "Reads by key, and the cache").

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use nubis_model::Result;

/// The tables whose changes are tracked one by one; a change to any other table bumps the
/// counter of "other tables".
const TABLES: &[&str] = &[
    "accounts",
    "users",
    "tokens",
    "grants",
    "vpcs",
    "vpc_subnets",
    "instances",
    "instance_interfaces",
    "ip_addresses",
    "ipv6_ranges",
    "ip_shares",
    "nodebalancers",
    "nodebalancer_configs",
    "nodebalancer_nodes",
    "nodebalancer_traffic",
    "firewalls",
    "firewall_devices",
];
const OTHER: usize = TABLES.len();
const SLOTS: usize = TABLES.len() + 1;

/// The counter slot of a table.
pub(crate) fn slot(table: &str) -> usize {
    TABLES.iter().position(|t| *t == table).unwrap_or(OTHER)
}

/// A set of slots, as bits.
pub(crate) type Touched = u64;

/// The bit of a table in a [`Touched`] set.
pub(crate) fn bit(table: &str) -> Touched {
    1 << slot(table)
}

const ALL: Touched = (1 << SLOTS) - 1;

/// What a cached value is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// The credential behind a token hash.
    Credential([u8; 32]),
    /// The users of an account.
    Users(i64),
    /// The tokens of a user.
    Tokens(i64),
    /// The grants of a user.
    Grants(i64),
    /// An account record.
    Account(i64),
    /// One VPC with its subnets and the interfaces on them.
    Vpc(i64),
    /// A named collection of an account (`("instances", account)`, ...); the name is the table
    /// it is read from, or one of the names [`Key::tables`] knows.
    Collection(&'static str, i64),
}

impl Key {
    /// The tables the value is read from.
    fn tables(&self) -> Touched {
        match self {
            Key::Credential(_) => bit("tokens") | bit("users") | bit("accounts"),
            Key::Users(_) => bit("users"),
            Key::Tokens(_) => bit("tokens"),
            Key::Grants(_) => bit("users") | bit("grants"),
            Key::Account(_) => bit("accounts"),
            Key::Vpc(_) => bit("vpcs") | bit("vpc_subnets") | bit("instance_interfaces") | bit("instances"),
            Key::Collection(name, _) => match *name {
                "firewall_devices" => bit("firewall_devices") | bit("instances") | bit("nodebalancers"),
                "nodebalancer_transfer" => bit("nodebalancer_traffic") | bit("nodebalancers"),
                other if slot(other) != OTHER => bit(other),
                // A name that is not a table: any write invalidates it.
                _ => ALL,
            },
        }
    }
}

struct Entry {
    stamp: u64,
    value: Arc<dyn Any + Send + Sync>,
}

pub(crate) struct Cache {
    enabled: bool,
    generations: [AtomicU64; SLOTS],
    map: RwLock<HashMap<Key, Entry>>,
}

/// Entries kept before the cache is emptied (every entry can be reloaded).
const MAX_ENTRIES: usize = 50_000;

impl Cache {
    pub(crate) fn new(enabled: bool) -> Cache {
        Cache { enabled, generations: std::array::from_fn(|_| AtomicU64::new(1)), map: RwLock::new(HashMap::new()) }
    }

    /// Records that a write changed the tables in `touched`.
    pub(crate) fn bump(&self, touched: Touched) {
        for (i, g) in self.generations.iter().enumerate() {
            if touched & (1 << i) != 0 {
                g.fetch_add(1, Ordering::AcqRel);
            }
        }
    }

    /// Records that anything may have changed (a write by another process).
    pub(crate) fn bump_all(&self) {
        self.bump(ALL);
    }

    /// The sum of the generations of `tables`: every counter only grows, so the sum stays the
    /// same exactly while none of them changes.
    fn stamp(&self, tables: Touched) -> u64 {
        let mut s = 0u64;
        for (i, g) in self.generations.iter().enumerate() {
            if tables & (1 << i) != 0 {
                s = s.wrapping_add(g.load(Ordering::Acquire));
            }
        }
        s
    }

    pub(crate) async fn get_or_load<T, F, Fut>(&self, key: Key, load: F) -> Result<Arc<T>>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        if !self.enabled {
            return load().await.map(Arc::new);
        }
        // Take the stamp before loading: if a write to one of the tables commits while we load,
        // the entry is stored under the older stamp and is never served.
        let stamp = self.stamp(key.tables());
        if let Ok(map) = self.map.read()
            && let Some(e) = map.get(&key)
            && e.stamp == stamp
            && let Ok(v) = e.value.clone().downcast::<T>()
        {
            return Ok(v);
        }
        let value = Arc::new(load().await?);
        if let Ok(mut map) = self.map.write() {
            if map.len() >= MAX_ENTRIES {
                map.clear();
            }
            map.insert(key, Entry { stamp, value: value.clone() });
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn serves_until_a_table_it_reads_changes() {
        let c = Cache::new(true);
        let a: Arc<i64> = c.get_or_load(Key::Grants(1), || async { Ok(1) }).await.unwrap();
        let b: Arc<i64> = c.get_or_load(Key::Grants(1), || async { Ok(2) }).await.unwrap();
        assert_eq!((*a, *b), (1, 1));
        // A write to a table the value does not read leaves it.
        c.bump(bit("vpcs") | bit("events"));
        let b: Arc<i64> = c.get_or_load(Key::Grants(1), || async { Ok(3) }).await.unwrap();
        assert_eq!(*b, 1);
        c.bump(bit("grants"));
        let d: Arc<i64> = c.get_or_load(Key::Grants(1), || async { Ok(4) }).await.unwrap();
        assert_eq!(*d, 4);
        c.bump_all();
        let e: Arc<i64> = c.get_or_load(Key::Grants(1), || async { Ok(5) }).await.unwrap();
        assert_eq!(*e, 5);
    }

    #[tokio::test]
    async fn unknown_collections_follow_every_write() {
        let c = Cache::new(true);
        let _: Arc<i64> = c.get_or_load(Key::Collection("not_a_table", 1), || async { Ok(1) }).await.unwrap();
        c.bump(bit("events"));
        let b: Arc<i64> = c.get_or_load(Key::Collection("not_a_table", 1), || async { Ok(2) }).await.unwrap();
        assert_eq!(*b, 2);
    }

    #[tokio::test]
    async fn disabled_cache_always_loads() {
        let c = Cache::new(false);
        let _: Arc<i64> = c.get_or_load(Key::Users(1), || async { Ok(1) }).await.unwrap();
        let b: Arc<i64> = c.get_or_load(Key::Users(1), || async { Ok(2) }).await.unwrap();
        assert_eq!(*b, 2);
    }
}
