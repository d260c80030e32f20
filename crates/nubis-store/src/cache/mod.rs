//! A read cache, invalidated by the tables a write touched.
//!
//! Every table has a generation counter. A committed write transaction bumps the counters of the
//! tables it changed (SQLite reports every changed row to an update hook on the writer
//! connection), and every cached read declares, beside its SQL, the tables its value is read
//! from. An entry is served only while none of those tables has changed since it was loaded, so
//! a write to VPCs leaves the cached credentials and grants in place, and nothing stale is ever
//! served. In debug builds (every test) each load is checked: a statement it runs that reads a
//! table it did not declare fails the load (see [`reads`]).
//!
//! On SQLite this process is the only writer of its database (writes by another process to the
//! same file invalidate everything, see `Store::watch_external_writes`). With PostgreSQL several
//! replicas write one database: triggers on every tracked table send a change notice at commit
//! to every replica, and keys read only from tracked tables are cached, only while this replica
//! hears the notices (see docs/decisions.md, "The read cache on PostgreSQL: change notices").

pub(crate) mod reads;

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
    "account_billing",
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
    "row_counts",
    "row_blocks",
    "order_fences",
    "order_fence_counts",
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

pub(crate) const ALL: Touched = (1 << SLOTS) - 1;

/// The kept counts (`row_counts`, `row_blocks`, `order_fence_counts`), which triggers and the
/// fence keeper write beside other tables. On SQLite they are WITHOUT ROWID tables (migration 74),
/// whose writes SQLite's update hook does not report: a write it reports to any table is taken
/// to have touched them too.
pub(crate) fn with_kept_counts(t: Touched) -> Touched {
    t | bit("row_counts") | bit("row_blocks") | bit("order_fence_counts")
}

/// The tables whose writes send change notices on PostgreSQL (migrations 0017, 0025): every tracked
/// table, not the "other tables" slot.
const NOTICED: Touched = ALL & !(1 << OTHER);

/// Who else writes the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Nobody (SQLite): every key is cached.
    Local,
    /// Other replicas (PostgreSQL): keys read only from tables with change notices, while this
    /// replica hears them.
    Shared,
}

/// What a cached value is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Key {
    /// The credential behind a token hash.
    Credential([u8; 32]),
    /// The users of an account.
    Users(i64),
    /// The grants of a user.
    Grants(i64),
    /// An account record.
    Account(i64),
    /// One VPC with its subnets and the interfaces on them.
    Vpc(i64),
    /// One page of a list as an account (or a restricted user of it) sees it: the list's name,
    /// the account, the restricted user, and the filter and page asked for.
    Page { list: &'static str, account: i64, user: Option<i64>, query: String },
    /// A named collection of an account (`("instances", account)`, ...).
    Collection(&'static str, i64),
}

/// The counter slots of the tables a value is read from.
fn touched(tables: &[&str]) -> Touched {
    tables.iter().fold(0, |t, table| t | bit(table))
}

struct Entry {
    stamp: u64,
    value: Arc<dyn Any + Send + Sync>,
}

pub(crate) struct Cache {
    mode: Mode,
    /// Whether entries may be served and stored: always for `Local`; for `Shared`, while the
    /// change notices are heard.
    synced: std::sync::atomic::AtomicBool,
    generations: [AtomicU64; SLOTS],
    map: RwLock<HashMap<Key, Entry>>,
    /// Pages of lists, kept apart under their own, smaller bound.
    pages: RwLock<HashMap<Key, Entry>>,
    /// That bound: pages kept before the pages are emptied (0: none is kept).
    max_pages: usize,
    /// The keys being loaded, each with the lock its loaders take turns on.
    loading: std::sync::Mutex<HashMap<Key, Arc<tokio::sync::Mutex<()>>>>,
}

/// Entries kept before the cache is emptied (every entry can be reloaded).
const MAX_ENTRIES: usize = 50_000;
/// Pages kept before the pages are emptied (a page holds up to 500 records), unless the
/// configuration says otherwise (`[limits] cached_pages`).
pub(crate) const MAX_PAGES: usize = 256;

impl Cache {
    pub(crate) fn new(mode: Mode, max_pages: usize) -> Cache {
        Cache {
            mode,
            synced: std::sync::atomic::AtomicBool::new(mode == Mode::Local),
            generations: std::array::from_fn(|_| AtomicU64::new(1)),
            map: RwLock::new(HashMap::new()),
            pages: RwLock::new(HashMap::new()),
            max_pages,
            loading: Default::default(),
        }
    }

    /// Whether change notices are heard (`Shared`). Either way every entry is dropped: while
    /// they were not heard, anything may have changed.
    pub(crate) fn set_synced(&self, synced: bool) {
        if synced {
            self.bump_all();
            self.synced.store(true, Ordering::Release);
        } else {
            self.synced.store(false, Ordering::Release);
            self.bump_all();
        }
    }

    fn serves(&self, tables: Touched) -> bool {
        self.synced.load(Ordering::Acquire) && (self.mode == Mode::Local || tables & !NOTICED == 0)
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

    /// The value of `key`, read by `load` from `tables` (all of them, and only them) unless
    /// one of those is unchanged since it was last loaded.
    pub(crate) async fn get_or_load<T, F, Fut>(&self, key: Key, tables: &[&str], load: F) -> Result<Arc<T>>
    where
        T: Send + Sync + 'static,
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        // A value read inside another cached load is part of it: the outer value depends on
        // these tables too.
        reads::note(tables);
        let bits = touched(tables);
        if !self.serves(bits) {
            return reads::checked(tables, load()).await.map(Arc::new);
        }
        let map = match key {
            Key::Page { .. } => &self.pages,
            _ => &self.map,
        };
        if let Some(v) = Self::lookup(map, &key, self.stamp(bits)) {
            return Ok(v);
        }
        // A key whose kind keeps nothing (`cached_pages = 0`): nobody could take what a load
        // stores, so every reader loads it at once rather than one after another.
        if self.bound(&key) == 0 {
            return reads::checked(tables, load()).await.map(Arc::new);
        }
        // One load of a key at a time: when a write invalidates a value that many requests read,
        // one of them reloads it and the others wait for it and take what it stored, instead of
        // all of them loading it at once.
        let turn = self.loading.lock().map(|mut l| l.entry(key.clone()).or_default().clone()).ok();
        let turn = Turn { cache: self, key: &key, turn };
        let _held = match &turn.turn {
            Some(t) => Some(t.lock().await),
            None => None,
        };
        // Take the stamp before loading: if a write to one of the tables commits while we load,
        // the entry is stored under the older stamp and is never served.
        let stamp = self.stamp(bits);
        let found = Self::lookup(map, &key, stamp);
        match found {
            Some(v) => Ok(v),
            None => {
                let value = Arc::new(reads::checked(tables, load()).await?);
                self.store(map, key.clone(), stamp, value.clone());
                Ok(value)
            }
        }
    }

    /// How many entries of `key`'s kind are kept.
    fn bound(&self, key: &Key) -> usize {
        if matches!(key, Key::Page { .. }) { self.max_pages } else { MAX_ENTRIES }
    }

    fn lookup<T: Send + Sync + 'static>(map: &RwLock<HashMap<Key, Entry>>, key: &Key, stamp: u64) -> Option<Arc<T>> {
        let map = map.read().ok()?;
        let e = map.get(key).filter(|e| e.stamp == stamp)?;
        e.value.clone().downcast::<T>().ok()
    }

    fn store<T: Send + Sync + 'static>(&self, map: &RwLock<HashMap<Key, Entry>>, key: Key, stamp: u64, value: Arc<T>) {
        // Not heard while loading (`Shared`): the stamp may miss a change.
        if !self.synced.load(Ordering::Acquire) {
            return;
        }
        let max = self.bound(&key);
        if max == 0 {
            return;
        }
        if let Ok(mut map) = map.write() {
            if map.len() >= max {
                map.clear();
            }
            map.insert(key, Entry { stamp, value });
        }
    }
}

/// A loader's place in the turns of its key; when it goes (done, failed or cancelled) and nobody
/// else waits for the key, the key's lock is removed.
struct Turn<'a> {
    cache: &'a Cache,
    key: &'a Key,
    turn: Option<Arc<tokio::sync::Mutex<()>>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let (Some(t), Ok(mut l)) = (self.turn.take(), self.cache.loading.lock()) {
            // The table and this loader hold the only references: nobody else waits.
            if Arc::strong_count(&t) == 2 {
                l.remove(self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRANTS: &[&str] = &["users", "grants"];
    const USERS: &[&str] = &["users"];
    const PAGE: &[&str] = &["vpcs", "vpc_subnets", "instance_interfaces", "instances"];
    const PAGE_OF_USER: [&str; 5] = ["vpcs", "vpc_subnets", "instance_interfaces", "instances", "grants"];

    #[tokio::test]
    async fn serves_until_a_table_it_reads_changes() {
        let c = Cache::new(Mode::Local, MAX_PAGES);
        let a: Arc<i64> = c.get_or_load(Key::Grants(1), GRANTS, || async { Ok(1) }).await.unwrap();
        let b: Arc<i64> = c.get_or_load(Key::Grants(1), GRANTS, || async { Ok(2) }).await.unwrap();
        assert_eq!((*a, *b), (1, 1));
        // A write to a table the value does not read leaves it.
        c.bump(bit("vpcs") | bit("events"));
        let b: Arc<i64> = c.get_or_load(Key::Grants(1), GRANTS, || async { Ok(3) }).await.unwrap();
        assert_eq!(*b, 1);
        c.bump(bit("grants"));
        let d: Arc<i64> = c.get_or_load(Key::Grants(1), GRANTS, || async { Ok(4) }).await.unwrap();
        assert_eq!(*d, 4);
        c.bump_all();
        let e: Arc<i64> = c.get_or_load(Key::Grants(1), GRANTS, || async { Ok(5) }).await.unwrap();
        assert_eq!(*e, 5);
    }

    #[tokio::test]
    async fn a_page_follows_the_tables_of_its_records_and_the_grants_of_its_user() {
        let c = Cache::new(Mode::Local, MAX_PAGES);
        let key = |user| Key::Page { list: "vpcs", account: 1, user, query: "p1".into() };
        let _: Arc<i64> = c.get_or_load(key(None), PAGE, || async { Ok(1) }).await.unwrap();
        let _: Arc<i64> = c.get_or_load(key(Some(7)), &PAGE_OF_USER, || async { Ok(1) }).await.unwrap();
        c.bump(bit("grants") | bit("events"));
        let a: Arc<i64> = c.get_or_load(key(None), PAGE, || async { Ok(2) }).await.unwrap();
        let b: Arc<i64> = c.get_or_load(key(Some(7)), &PAGE_OF_USER, || async { Ok(2) }).await.unwrap();
        assert_eq!((*a, *b), (1, 2));
        c.bump(bit("instance_interfaces"));
        let a: Arc<i64> = c.get_or_load(key(None), PAGE, || async { Ok(3) }).await.unwrap();
        assert_eq!(*a, 3);
    }

    #[tokio::test]
    async fn without_room_for_pages_every_page_is_loaded_and_other_values_are_kept() {
        let c = Cache::new(Mode::Local, 0);
        let key = || Key::Page { list: "vpcs", account: 1, user: None, query: "p1".into() };
        let _: Arc<i64> = c.get_or_load(key(), PAGE, || async { Ok(1) }).await.unwrap();
        let b: Arc<i64> = c.get_or_load(key(), PAGE, || async { Ok(2) }).await.unwrap();
        assert_eq!(*b, 2);
        let _: Arc<i64> = c.get_or_load(Key::Users(1), USERS, || async { Ok(3) }).await.unwrap();
        let d: Arc<i64> = c.get_or_load(Key::Users(1), USERS, || async { Ok(4) }).await.unwrap();
        assert_eq!(*d, 3);
    }

    #[tokio::test]
    async fn concurrent_misses_of_one_key_load_it_once() {
        let c = Arc::new(Cache::new(Mode::Local, MAX_PAGES));
        let loads = Arc::new(AtomicU64::new(0));
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (c, loads) = (c.clone(), loads.clone());
                tokio::spawn(async move {
                    let v: Arc<u64> = c
                        .get_or_load(Key::Users(1), USERS, || async move {
                            loads.fetch_add(1, Ordering::SeqCst);
                            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                            Ok(7)
                        })
                        .await
                        .unwrap();
                    *v
                })
            })
            .collect();
        for t in tasks {
            assert_eq!(t.await.unwrap(), 7);
        }
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        assert!(c.loading.lock().unwrap().is_empty());
    }

    /// With no room for pages, readers of one page do not queue behind each other's loads: all
    /// eight are in flight together. The clock is paused, so a wait that could never end (one
    /// load at a time, each waiting for the others) reaches its time-out at once.
    #[tokio::test(start_paused = true)]
    async fn pages_that_are_not_kept_are_loaded_by_every_reader_at_once() {
        let c = Arc::new(Cache::new(Mode::Local, 0));
        let together = Arc::new(tokio::sync::Barrier::new(8));
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (c, together) = (c.clone(), together.clone());
                tokio::spawn(async move {
                    let key = Key::Page { list: "vpcs", account: 1, user: None, query: "p1".into() };
                    let v: Arc<u64> = c
                        .get_or_load(key, PAGE, || async move {
                            together.wait().await;
                            Ok(7)
                        })
                        .await
                        .unwrap();
                    *v
                })
            })
            .collect();
        let all = async {
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.unwrap());
            }
            out
        };
        let done = tokio::time::timeout(std::time::Duration::from_secs(60), all).await;
        assert_eq!(done.expect("the readers waited for each other"), vec![7; 8]);
        assert!(c.loading.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn values_of_untracked_tables_follow_every_untracked_write() {
        let c = Cache::new(Mode::Local, MAX_PAGES);
        let _: Arc<i64> =
            c.get_or_load(Key::Collection("not_a_table", 1), &["not_a_table"], || async { Ok(1) }).await.unwrap();
        c.bump(bit("events"));
        let b: Arc<i64> =
            c.get_or_load(Key::Collection("not_a_table", 1), &["not_a_table"], || async { Ok(2) }).await.unwrap();
        assert_eq!(*b, 2);
    }

    #[tokio::test]
    async fn a_shared_cache_serves_only_noticed_tables_and_only_while_it_hears_them() {
        let c = Cache::new(Mode::Shared, MAX_PAGES);
        // Not listening yet: nothing is kept.
        let _: Arc<i64> = c.get_or_load(Key::Users(1), USERS, || async { Ok(1) }).await.unwrap();
        let b: Arc<i64> = c.get_or_load(Key::Users(1), USERS, || async { Ok(2) }).await.unwrap();
        assert_eq!(*b, 2);
        c.set_synced(true);
        let _: Arc<i64> = c.get_or_load(Key::Users(1), USERS, || async { Ok(3) }).await.unwrap();
        let b: Arc<i64> = c.get_or_load(Key::Users(1), USERS, || async { Ok(4) }).await.unwrap();
        assert_eq!(*b, 3);
        // A value read from a table without notices: never kept.
        let other = || Key::Collection("not_a_table", 1);
        let _: Arc<i64> = c.get_or_load(other(), &["not_a_table"], || async { Ok(5) }).await.unwrap();
        let b: Arc<i64> = c.get_or_load(other(), &["not_a_table"], || async { Ok(6) }).await.unwrap();
        assert_eq!(*b, 6);
        // The notices stop: nothing is served, and what was kept is gone when they resume.
        c.set_synced(false);
        let b: Arc<i64> = c.get_or_load(Key::Users(1), USERS, || async { Ok(7) }).await.unwrap();
        assert_eq!(*b, 7);
        c.set_synced(true);
        let b: Arc<i64> = c.get_or_load(Key::Users(1), USERS, || async { Ok(8) }).await.unwrap();
        assert_eq!(*b, 8);
    }
}
