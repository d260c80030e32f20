//! A value with its JSON written once. What the read cache keeps and many requests send (a page
//! of a list) is serialized on its first answer only; the entry, and its JSON with it, goes when
//! a write invalidates it.

use std::sync::{Arc, OnceLock};

use serde::Serialize;

#[derive(Debug, Clone)]
pub struct Rendered<T> {
    value: T,
    json: OnceLock<Arc<[u8]>>,
}

impl<T: Serialize> Rendered<T> {
    pub fn new(value: T) -> Rendered<T> {
        Rendered { value, json: OnceLock::new() }
    }

    pub fn value(&self) -> &T {
        &self.value
    }

    pub fn into_value(self) -> T {
        self.value
    }

    /// The value's JSON, written on the first call.
    pub fn json(&self) -> serde_json::Result<Arc<[u8]>> {
        if let Some(j) = self.json.get() {
            return Ok(j.clone());
        }
        let j: Arc<[u8]> = serde_json::to_vec(&self.value)?.into();
        Ok(self.json.get_or_init(|| j).clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_json_of_the_value_once() {
        let r = Rendered::new(serde_json::json!({"a": [1, 2]}));
        let first = r.json().unwrap();
        assert_eq!(&*first, br#"{"a":[1,2]}"#);
        assert!(Arc::ptr_eq(&first, &r.json().unwrap()));
    }
}
