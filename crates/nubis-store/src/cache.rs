//! A read cache for small collections, checked against a global write generation.
//!
//! Every committed write transaction bumps the generation, so an entry is served only while no
//! write has committed since it was loaded. This is coarse on purpose: it cannot serve stale data
//! whatever a write touched, and the read-mostly traffic it exists for (authentication, single
//! records, pages of lists) hits it. It is enabled only when this process is the sole writer.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use nubis_model::Result;

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
    /// A named collection of an account (used by the areas: `("vpcs", account)`, ...).
    Collection(&'static str, i64),
}

struct Entry {
    generation: u64,
    value: Arc<dyn Any + Send + Sync>,
}

pub(crate) struct Cache {
    enabled: bool,
    generation: AtomicU64,
    map: RwLock<HashMap<Key, Entry>>,
}

/// Entries kept before the cache is emptied (every entry can be reloaded).
const MAX_ENTRIES: usize = 50_000;

impl Cache {
    pub(crate) fn new(enabled: bool) -> Cache {
        Cache { enabled, generation: AtomicU64::new(1), map: RwLock::new(HashMap::new()) }
    }

    pub(crate) fn bump(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
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
        // Read the generation before loading: if a write commits while we load, the entry is
        // stored under the older generation and is never served.
        let generation = self.generation.load(Ordering::Acquire);
        if let Ok(map) = self.map.read()
            && let Some(e) = map.get(&key)
            && e.generation == generation
            && let Ok(v) = e.value.clone().downcast::<T>()
        {
            return Ok(v);
        }
        let value = Arc::new(load().await?);
        if let Ok(mut map) = self.map.write() {
            if map.len() >= MAX_ENTRIES {
                map.clear();
            }
            map.insert(key, Entry { generation, value: value.clone() });
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn serves_until_a_write_commits() {
        let c = Cache::new(true);
        let a: Arc<i64> = c.get_or_load(Key::Users(1), || async { Ok(1) }).await.unwrap();
        let b: Arc<i64> = c.get_or_load(Key::Users(1), || async { Ok(2) }).await.unwrap();
        assert_eq!((*a, *b), (1, 1));
        c.bump();
        let d: Arc<i64> = c.get_or_load(Key::Users(1), || async { Ok(3) }).await.unwrap();
        assert_eq!(*d, 3);
    }

    #[tokio::test]
    async fn disabled_cache_always_loads() {
        let c = Cache::new(false);
        let _: Arc<i64> = c.get_or_load(Key::Users(1), || async { Ok(1) }).await.unwrap();
        let b: Arc<i64> = c.get_or_load(Key::Users(1), || async { Ok(2) }).await.unwrap();
        assert_eq!(*b, 2);
    }
}
