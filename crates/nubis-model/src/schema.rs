//! JSON Schemas of request fields, built from the same constants the validators use, for
//! `#[schema(schema_with = ...)]` on request types: the document states each rule from the one
//! place it lives (utoipa's `min_length`/`pattern` attributes take only literals).
//!
//! Required fields are `type: <t>`; optional ones also accept `null`, which the server reads as
//! "not given".

use serde_json::{Value, json};
use utoipa::openapi::Schema;

/// A schema from its JSON form (the forms here are fixed, so this cannot fail).
pub fn schema(v: Value) -> Schema {
    serde_json::from_value(v).expect("a well-formed JSON Schema")
}

/// A string of `min..=max` characters.
pub fn text(min: usize, max: usize) -> Value {
    json!({"type": "string", "minLength": min, "maxLength": max})
}

/// A string of `min..=max` characters matching `pattern` (anchored).
pub fn pattern(min: usize, max: usize, pattern: &str) -> Value {
    json!({"type": "string", "minLength": min, "maxLength": max, "pattern": pattern})
}

/// A string matching `pattern` (anchored), of any length the pattern allows.
pub fn matching(pattern: &str) -> Value {
    json!({"type": "string", "pattern": pattern})
}

/// An e-mail address as [`crate::validate::is_email`] accepts it (at least `a@b.c`).
pub fn email() -> Value {
    use crate::validate::{EMAIL_MAX_LEN, EMAIL_PATTERN};
    pattern(5, EMAIL_MAX_LEN, EMAIL_PATTERN)
}

/// An integer in `min..=max`.
pub fn int(min: i64, max: i64) -> Value {
    json!({"type": "integer", "format": "int64", "minimum": min, "maximum": max})
}

/// One of `values`.
pub fn one_of(values: &[&str]) -> Value {
    json!({"type": "string", "enum": values})
}

/// An array of items of `item`, at most `max` of them.
pub fn array(item: Value, max: Option<usize>) -> Value {
    let mut v = json!({"type": "array", "items": item});
    if let Some(max) = max {
        v["maxItems"] = json!(max);
    }
    v
}

/// The same schema, also accepting `null` (an optional field: null is "not given").
pub fn or_null(mut v: Value) -> Value {
    if let Some(t) = v.get("type").cloned() {
        v["type"] = json!([t, "null"]);
    }
    if let Some(Value::Array(values)) = v.get_mut("enum") {
        values.push(Value::Null);
    }
    v
}

/// Only `null` (or leaving the field out): a field the reference has that nubis refuses any value
/// of (no backups, no StackScripts).
pub fn null_only() -> Schema {
    schema(json!({"type": "null"}))
}

/// Tags: each 3..50 characters.
pub fn tags() -> Schema {
    schema(or_null(array(text(crate::validate::TAG_LEN.0, crate::validate::TAG_LEN.1), None)))
}

/// A field that must be left out: any value, even null, is refused (no value is both a string
/// and an integer).
pub fn absent() -> Schema {
    schema(json!({"allOf": [{"type": "string"}, {"type": "integer"}]}))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_form_is_a_schema() {
        super::absent();
        super::null_only();
        super::tags();
        super::schema(super::or_null(super::one_of(&["a", "b"])));
        super::schema(super::int(1, 2));
    }
}
