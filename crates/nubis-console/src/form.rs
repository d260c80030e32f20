//! Forms: a posted form becomes the JSON body the API would receive (inputs are named by the
//! API's own field paths, `subnets[0].ipv4`, `inbound[1].addresses.ipv4`), is read into the same
//! request type the API handler reads, and the application's field errors come back keyed by
//! those same paths, to be shown next to the inputs.

use std::collections::{BTreeMap, HashMap};

use nubis_model::{Error, FieldError};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The fields of a posted form (the last value of a repeated name wins, so a hidden `false`
/// before a checkbox gives a boolean either way).
#[derive(Debug, Clone, Default)]
pub struct Fields(pub HashMap<String, String>);

impl Fields {
    /// A form-urlencoded body (`form_urlencoded`).
    pub fn parse(body: &[u8]) -> Fields {
        Fields(form_urlencoded::parse(body).into_owned().collect())
    }

    pub fn get(&self, k: &str) -> &str {
        self.0.get(k).map(String::as_str).unwrap_or("")
    }

    /// The form as the API's JSON body. Empty inputs are left out; `ints` name the fields (by
    /// their last path segment) sent as numbers when they parse; `bools` as booleans; `lists`
    /// are comma-separated lists. `csrf` and `action` are not part of the body.
    pub fn to_json(&self, ints: &[&str], bools: &[&str], lists: &[&str]) -> Value {
        let mut root = Value::Object(Map::new());
        let mut keys: Vec<&String> = self.0.keys().collect();
        keys.sort();
        for k in keys {
            let v = self.0[k].trim();
            if k == "csrf" || k.starts_with('_') || v.is_empty() {
                continue;
            }
            let last = k.rsplit(['.', ']']).next().unwrap_or(k);
            let last = if last.is_empty() { k.as_str() } else { last };
            let value = if ints.contains(&last) {
                v.parse::<i64>().map(Value::from).unwrap_or_else(|_| Value::from(v))
            } else if bools.contains(&last) {
                match v {
                    "true" | "on" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    other => Value::from(other),
                }
            } else if lists.contains(&last) {
                Value::Array(v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(Value::from).collect())
            } else {
                Value::from(v)
            };
            set_path(&mut root, &segments(k), value);
        }
        compact(&mut root);
        root
    }
}

enum Seg {
    Key(String),
    Index(usize),
}

fn segments(path: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        if let Some(i) = rest.find('[') {
            out.push(Seg::Key(rest[..i].to_string()));
            rest = &rest[i..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let end = stripped.find(']').unwrap_or(stripped.len());
                out.push(Seg::Index(stripped[..end].parse().unwrap_or(0)));
                rest = stripped.get(end + 1..).unwrap_or("");
            }
        } else {
            out.push(Seg::Key(rest.to_string()));
        }
    }
    out
}

fn set_path(node: &mut Value, path: &[Seg], value: Value) {
    let Some((first, rest)) = path.split_first() else {
        *node = value;
        return;
    };
    match first {
        Seg::Key(k) => {
            if !node.is_object() {
                *node = Value::Object(Map::new());
            }
            if let Value::Object(m) = node {
                set_path(m.entry(k.clone()).or_insert(Value::Null), rest, value);
            }
        }
        Seg::Index(i) => {
            if !node.is_array() {
                *node = Value::Array(Vec::new());
            }
            if let Value::Array(a) = node {
                while a.len() <= *i {
                    a.push(Value::Null);
                }
                set_path(&mut a[*i], rest, value);
            }
        }
    }
}

/// Drops the holes of arrays (rows left empty or removed).
fn compact(v: &mut Value) {
    match v {
        Value::Array(a) => {
            a.retain(|x| !x.is_null());
            a.iter_mut().for_each(compact);
        }
        Value::Object(m) => m.values_mut().for_each(compact),
        _ => {}
    }
}

/// Reads a JSON body into the API's request type; a value of the wrong type is a field error
/// naming its path, as the API's own extractor reports it.
pub fn read<T: DeserializeOwned>(v: Value) -> Result<T, Error> {
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let path = e.path().to_string();
        let reason = e.into_inner().to_string();
        let field = (path != ".").then_some(path);
        Error::Invalid(vec![FieldError { field, reason: capitalize(&reason) }])
    })
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// A form as shown again: the values the user typed and the API's field errors.
#[derive(Debug, Clone, Default)]
pub struct Form {
    pub vals: HashMap<String, String>,
    pub errs: BTreeMap<String, Vec<String>>,
    /// Errors without a field, or for fields this form has no input for.
    pub general: Vec<String>,
    /// The names of the inputs the form shows (errors of other fields go to `general`).
    known: Vec<String>,
}

impl Form {
    pub fn new(defaults: &[(&str, &str)]) -> Form {
        Form { vals: defaults.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), ..Default::default() }
    }

    pub fn from_fields(f: &Fields) -> Form {
        Form { vals: f.0.clone(), ..Default::default() }
    }

    /// Attaches an error: `Invalid` field errors go next to their inputs (named in `known`).
    pub fn with_error(mut self, e: &Error, known: &[&str]) -> Form {
        self.known = known.iter().map(|s| s.to_string()).collect();
        match e {
            Error::Invalid(v) => {
                for fe in v {
                    match &fe.field {
                        Some(f) if self.known.iter().any(|k| k == f) => {
                            self.errs.entry(f.clone()).or_default().push(fe.reason.clone())
                        }
                        Some(f) => self.general.push(format!("{f}: {}", fe.reason)),
                        None => self.general.push(fe.reason.clone()),
                    }
                }
            }
            Error::Forbidden(m) => self.general.push(format!("Not allowed: {m}")),
            Error::NotFound => self.general.push("Not found (it may have been deleted).".into()),
            other => self.general.push(other.to_string()),
        }
        self
    }

    /// The value typed (or the default) of an input.
    pub fn v(&self, k: &str) -> String {
        self.vals.get(k).cloned().unwrap_or_default()
    }

    /// Whether a select's option is the chosen one.
    pub fn sel(&self, k: &str, option: &str) -> bool {
        self.vals.get(k).is_some_and(|v| v == option)
    }

    /// Whether a checkbox is ticked.
    pub fn on(&self, k: &str) -> bool {
        matches!(self.vals.get(k).map(String::as_str), Some("true" | "on"))
    }

    /// The errors of one input.
    pub fn e(&self, k: &str) -> Vec<String> {
        self.errs.get(k).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_paths_become_the_api_body() {
        let f = Fields::parse(
            b"csrf=x&label=web&subnets%5B0%5D.label=a&subnets%5B0%5D.ipv4=10.0.0.0%2F24&port=80&booted=false&tags=a%2C+b&n=",
        );
        let v = f.to_json(&["port"], &["booted"], &["tags"]);
        assert_eq!(
            v,
            serde_json::json!({"label":"web","subnets":[{"label":"a","ipv4":"10.0.0.0/24"}],"port":80,"booted":false,"tags":["a","b"]})
        );
    }

    #[test]
    fn a_number_that_is_not_one_is_a_field_error() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct T {
            port: Option<i64>,
        }
        let v = Fields::parse(b"port=eighty").to_json(&["port"], &[], &[]);
        match read::<T>(v) {
            Err(Error::Invalid(e)) => assert_eq!(e[0].field.as_deref(), Some("port")),
            other => panic!("{other:?}"),
        }
    }
}
