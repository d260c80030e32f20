//! Request fields that hold records read only from JSON objects. serde reads a struct from an
//! array too (`"devices": [null, null]` as the fields in order); a request must name its fields,
//! so nested records are read through these (`#[serde(default, deserialize_with = ...)]`).

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};

/// A `T` read only from a JSON object.
struct Obj<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Obj)
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// An optional record (null is "not given").
pub fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Ok(Option::<Obj<T>>::deserialize(d)?.map(|Obj(t)| t))
}

/// An optional list of records.
pub fn objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Vec<T>>, D::Error> {
    Ok(Option::<Vec<Obj<T>>>::deserialize(d)?.map(|v| v.into_iter().map(|Obj(t)| t).collect()))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Inner {
        a: Option<i64>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        #[serde(default, deserialize_with = "super::object")]
        one: Option<Inner>,
        #[serde(default, deserialize_with = "super::objects")]
        many: Option<Vec<Inner>>,
    }

    #[test]
    fn records_come_only_from_objects() {
        let ok: Outer = serde_json::from_str(r#"{"one": {"a": 1}, "many": [{"a": 2}]}"#).unwrap();
        assert_eq!(ok, Outer { one: Some(Inner { a: Some(1) }), many: Some(vec![Inner { a: Some(2) }]) });
        let none: Outer = serde_json::from_str(r#"{"one": null}"#).unwrap();
        assert_eq!(none, Outer { one: None, many: None });
        assert!(serde_json::from_str::<Outer>(r#"{"one": [null]}"#).is_err());
        assert!(serde_json::from_str::<Outer>(r#"{"many": [[1]]}"#).is_err());
    }
}
