//! The `X-Filter` language of list endpoints: field equality, `+and`, `+or`, `+gt`, `+gte`,
//! `+lt`, `+lte`, `+neq`, `+contains`, `+order_by` and `+order`, on the fields a list declares
//! filterable. Parsing checks the whole filter up front; evaluation runs over the JSON form of
//! each record, so every list gets the same semantics.

use serde_json::{Map, Value};
use std::cmp::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Neq,
    Gt,
    Gte,
    Lt,
    Lte,
    Contains,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cond {
    And(Vec<Cond>),
    Or(Vec<Cond>),
    Field { path: String, op: CmpOp, value: Value },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    #[default]
    Asc,
    Desc,
}

/// A parsed, checked filter. The default filter keeps everything in its natural order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Filter {
    pub cond: Option<Cond>,
    pub order_by: Option<String>,
    pub order: Order,
}

/// Why a filter was refused; the HTTP layer reports it on the field `X-Filter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError(pub String);

const MAX_DEPTH: usize = 8;
const MAX_CONDITIONS: usize = 64;

impl Filter {
    /// Parses the header value, allowing only `filterable` field paths (dotted for nested fields).
    pub fn parse(text: &str, filterable: &[&str]) -> Result<Filter, FilterError> {
        let v: Value = serde_json::from_str(text).map_err(|_| FilterError("X-Filter is not valid JSON".into()))?;
        let Value::Object(obj) = v else {
            return Err(FilterError("X-Filter must be a JSON object".into()));
        };
        let mut p = Parser { filterable, count: 0 };
        let mut order_by = None;
        let mut order = None;
        let mut rest = Map::new();
        for (k, v) in obj {
            match k.as_str() {
                "+order_by" => {
                    let Value::String(f) = v else {
                        return Err(FilterError("+order_by must be a string".into()));
                    };
                    if !filterable.contains(&f.as_str()) {
                        return Err(FilterError(format!("Cannot order by '{f}'")));
                    }
                    order_by = Some(f);
                }
                "+order" => {
                    order = Some(match v.as_str() {
                        Some("asc") => Order::Asc,
                        Some("desc") => Order::Desc,
                        _ => return Err(FilterError("+order must be 'asc' or 'desc'".into())),
                    });
                }
                _ => {
                    rest.insert(k, v);
                }
            }
        }
        if order.is_some() && order_by.is_none() {
            return Err(FilterError("+order requires +order_by".into()));
        }
        let cond = p.object(&rest, "", 0)?;
        Ok(Filter { cond, order_by, order: order.unwrap_or_default() })
    }

    pub fn is_trivial(&self) -> bool {
        self.cond.is_none() && self.order_by.is_none()
    }

    pub fn matches(&self, record: &Value) -> bool {
        self.cond.as_ref().is_none_or(|c| c.matches(record))
    }

    /// The same filter for a list where every record holds `value` at `path`: each condition on
    /// the field is decided (an empty `+and` when it holds, an empty `+or` when not) and the
    /// parts it decides are folded away; a condition left always true is none. The order by the
    /// field stays (its ties still run in its direction).
    pub fn assume(&self, path: &str, value: &Value) -> Filter {
        let cond = self.cond.as_ref().map(|c| c.assume(path, value)).filter(|c| *c != Cond::And(Vec::new()));
        Filter { cond, ..self.clone() }
    }

    /// The same filter for a list where every record holds one value at `path`: an order by the
    /// field is the order of `tie` (the list's unique tie-break) in the same direction, which is
    /// how its ties run.
    pub fn order_tied(&self, path: &str, tie: &str) -> Filter {
        let order_by = match self.order_by.as_deref() {
            Some(p) if p == path => Some(tie.to_string()),
            _ => self.order_by.clone(),
        };
        Filter { order_by, ..self.clone() }
    }

    /// Whether a condition of the filter is on `path`.
    pub fn names(&self, path: &str) -> bool {
        self.cond.as_ref().is_some_and(|c| c.names(path))
    }

    /// The same filter for a list where the boolean at `path` holds exactly when the integer at
    /// `field` is at most `at` (an event is seen when its id is at most the viewer's mark): each
    /// comparison of `path` with true or false also bounds `field` (`+lte` or `+gt` `at`), a
    /// range an index on the field serves. The comparison itself stays, so the filter keeps its
    /// meaning if `at` is already out of date when it is read.
    pub fn bound_by(&self, path: &str, field: &str, at: i64) -> Filter {
        self.rewrite(path, |op, value| match (op, value) {
            (CmpOp::Eq | CmpOp::Neq, Value::Bool(b)) => {
                let side = if (op == CmpOp::Eq) == *b { CmpOp::Lte } else { CmpOp::Gt };
                let bound = Cond::Field { path: field.to_string(), op: side, value: Value::from(at) };
                Some(Cond::And(vec![bound, Cond::Field { path: path.to_string(), op, value: value.clone() }]))
            }
            _ => None,
        })
    }

    /// The same filter with each comparison on `path` replaced by what `with` makes of its
    /// operator and value, where it makes something (a field the list computes, written as
    /// conditions on the columns it is computed from); the others stay.
    pub fn rewrite(&self, path: &str, with: impl Fn(CmpOp, &Value) -> Option<Cond>) -> Filter {
        let cond = self.cond.as_ref().map(|c| c.rewrite(path, &with));
        Filter { cond, ..self.clone() }
    }

    /// Whether no record can match (a condition decided false by [`Filter::assume`]).
    pub fn matches_none(&self) -> bool {
        self.cond == Some(Cond::Or(Vec::new()))
    }

    /// Orders records by `+order_by` (stable, so ties keep their natural order).
    pub fn sort(&self, records: &mut [Value]) {
        if let Some(path) = &self.order_by {
            records.sort_by(|a, b| {
                let o = compare_for_order(lookup(a, path), lookup(b, path));
                if self.order == Order::Desc { o.reverse() } else { o }
            });
        }
    }
}

struct Parser<'a> {
    filterable: &'a [&'a str],
    count: usize,
}

impl Parser<'_> {
    /// Parses a filter object (keys are fields or `+and`/`+or`); `prefix` is the dotted path of
    /// the object inside which the keys sit.
    fn object(&mut self, obj: &Map<String, Value>, prefix: &str, depth: usize) -> Result<Option<Cond>, FilterError> {
        if depth > MAX_DEPTH {
            return Err(FilterError("X-Filter is nested too deeply".into()));
        }
        let mut all = Vec::new();
        for (k, v) in obj {
            match k.as_str() {
                "+and" | "+or" => {
                    let Value::Array(items) = v else {
                        return Err(FilterError(format!("{k} must be an array of filter objects")));
                    };
                    let mut parts = Vec::new();
                    for item in items {
                        let Value::Object(o) = item else {
                            return Err(FilterError(format!("{k} must be an array of filter objects")));
                        };
                        if let Some(c) = self.object(o, prefix, depth + 1)? {
                            parts.push(c);
                        }
                    }
                    all.push(if k == "+and" { Cond::And(parts) } else { Cond::Or(parts) });
                }
                "+order_by" | "+order" => {
                    return Err(FilterError(format!("{k} is only allowed at the top level")));
                }
                key if key.starts_with('+') => {
                    return Err(FilterError(format!("Unknown operator '{key}'")));
                }
                key => {
                    let path = if prefix.is_empty() { key.to_string() } else { format!("{prefix}.{key}") };
                    all.push(self.field(&path, v, depth)?);
                }
            }
        }
        Ok(match all.len() {
            0 => None,
            1 => all.pop(),
            _ => Some(Cond::And(all)),
        })
    }

    fn field(&mut self, path: &str, v: &Value, depth: usize) -> Result<Cond, FilterError> {
        self.count += 1;
        if self.count > MAX_CONDITIONS {
            return Err(FilterError("X-Filter has too many conditions".into()));
        }
        match v {
            Value::Object(o) if o.keys().all(|k| k.starts_with('+')) && !o.is_empty() => {
                self.check_field(path)?;
                let mut parts = Vec::new();
                for (op, arg) in o {
                    let op = match op.as_str() {
                        "+gt" => CmpOp::Gt,
                        "+gte" => CmpOp::Gte,
                        "+lt" => CmpOp::Lt,
                        "+lte" => CmpOp::Lte,
                        "+neq" => CmpOp::Neq,
                        "+contains" => CmpOp::Contains,
                        "+or" | "+and" => {
                            let Value::Array(items) = arg else {
                                return Err(FilterError(format!("{op} must be an array")));
                            };
                            let mut alts = Vec::new();
                            for item in items {
                                alts.push(self.field(path, item, depth + 1)?);
                            }
                            parts.push(if op == "+or" { Cond::Or(alts) } else { Cond::And(alts) });
                            continue;
                        }
                        other => return Err(FilterError(format!("Unknown operator '{other}'"))),
                    };
                    match op {
                        CmpOp::Gt | CmpOp::Gte | CmpOp::Lt | CmpOp::Lte if !(arg.is_number() || arg.is_string()) => {
                            return Err(FilterError(format!("Operator on '{path}' needs a number")));
                        }
                        CmpOp::Contains if !arg.is_string() => {
                            return Err(FilterError(format!("+contains on '{path}' needs a string")));
                        }
                        CmpOp::Neq if arg.is_object() || arg.is_array() => {
                            return Err(FilterError(format!("+neq on '{path}' needs a single value")));
                        }
                        _ => {}
                    }
                    parts.push(Cond::Field { path: path.to_string(), op, value: arg.clone() });
                }
                Ok(if parts.len() == 1 { parts.pop().expect("one part") } else { Cond::And(parts) })
            }
            Value::Object(o) => {
                // A nested object: `{"entity": {"id": 1}}` is the same as `{"entity.id": 1}`.
                if depth > MAX_DEPTH {
                    return Err(FilterError("X-Filter is nested too deeply".into()));
                }
                self.object(o, path, depth + 1)?.ok_or_else(|| FilterError(format!("Empty filter on '{path}'")))
            }
            Value::Array(_) => Err(FilterError(format!("Filter value of '{path}' must not be an array"))),
            _ => {
                self.check_field(path)?;
                Ok(Cond::Field { path: path.to_string(), op: CmpOp::Eq, value: v.clone() })
            }
        }
    }

    fn check_field(&self, path: &str) -> Result<(), FilterError> {
        if self.filterable.contains(&path) { Ok(()) } else { Err(FilterError(format!("Cannot filter on '{path}'"))) }
    }
}

impl Cond {
    fn names(&self, path: &str) -> bool {
        match self {
            Cond::And(parts) | Cond::Or(parts) => parts.iter().any(|p| p.names(path)),
            Cond::Field { path: p, .. } => p == path,
        }
    }

    /// [`Filter::rewrite`] for one condition.
    fn rewrite(&self, path: &str, with: &impl Fn(CmpOp, &Value) -> Option<Cond>) -> Cond {
        match self {
            Cond::And(parts) => Cond::And(parts.iter().map(|p| p.rewrite(path, with)).collect()),
            Cond::Or(parts) => Cond::Or(parts.iter().map(|p| p.rewrite(path, with)).collect()),
            Cond::Field { path: p, op, value } if p == path => with(*op, value).unwrap_or_else(|| self.clone()),
            Cond::Field { .. } => self.clone(),
        }
    }

    /// [`Filter::assume`] for one condition: `And([])` always holds, `Or([])` never does.
    fn assume(&self, path: &str, value: &Value) -> Cond {
        let always = || Cond::And(Vec::new());
        let never = || Cond::Or(Vec::new());
        match self {
            Cond::Field { path: p, .. } if p == path => {
                let record = path
                    .rsplit('.')
                    .fold(value.clone(), |inner, part| Value::Object(Map::from_iter([(part.to_string(), inner)])));
                if self.matches(&record) { always() } else { never() }
            }
            Cond::Field { .. } => self.clone(),
            Cond::And(parts) | Cond::Or(parts) => {
                let and = matches!(self, Cond::And(_));
                let (absorbing, neutral) = if and { (never(), always()) } else { (always(), never()) };
                let mut kept = Vec::new();
                for part in parts.iter().map(|p| p.assume(path, value)) {
                    if part == absorbing {
                        return absorbing;
                    }
                    if part != neutral {
                        kept.push(part);
                    }
                }
                match kept.len() {
                    0 => neutral,
                    1 => kept.remove(0),
                    _ if and => Cond::And(kept),
                    _ => Cond::Or(kept),
                }
            }
        }
    }

    pub fn matches(&self, record: &Value) -> bool {
        match self {
            Cond::And(v) => v.iter().all(|c| c.matches(record)),
            Cond::Or(v) => v.iter().any(|c| c.matches(record)),
            Cond::Field { path, op, value } => {
                let field = lookup(record, path);
                match field {
                    Value::Array(items) if *op != CmpOp::Neq => items.iter().any(|i| compare(i, *op, value)),
                    Value::Array(items) => !items.iter().any(|i| compare(i, CmpOp::Eq, value)),
                    other => compare(other, *op, value),
                }
            }
        }
    }
}

static NULL: Value = Value::Null;

/// Finds the value at a dotted path.
pub fn lookup<'v>(record: &'v Value, path: &str) -> &'v Value {
    let mut cur = record;
    for part in path.split('.') {
        cur = match cur {
            Value::Object(o) => o.get(part).unwrap_or(&NULL),
            _ => &NULL,
        };
    }
    cur
}

fn compare(field: &Value, op: CmpOp, arg: &Value) -> bool {
    match op {
        CmpOp::Eq => equal(field, arg),
        CmpOp::Neq => !equal(field, arg),
        CmpOp::Contains => match (field, arg) {
            (Value::String(f), Value::String(a)) => f.contains(a.as_str()),
            _ => false,
        },
        CmpOp::Gt | CmpOp::Gte | CmpOp::Lt | CmpOp::Lte => {
            let Some(ord) = ordering(field, arg) else { return false };
            match op {
                CmpOp::Gt => ord == Ordering::Greater,
                CmpOp::Gte => ord != Ordering::Less,
                CmpOp::Lt => ord == Ordering::Less,
                _ => ord != Ordering::Greater,
            }
        }
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn ordering(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn compare_for_order(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Number(_) => 2,
            Value::String(_) => 3,
            _ => 4,
        }
    }
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => ordering(a, b).unwrap_or_else(|| rank(a).cmp(&rank(b))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const F: &[&str] = &["label", "region", "id", "tags", "entity.id", "entity.type", "created"];

    fn recs() -> Vec<Value> {
        vec![
            json!({"id": 1, "label": "web-1", "region": "us-east", "tags": ["a"], "entity": {"id": 5, "type": "vpc"}}),
            json!({"id": 2, "label": "db-1", "region": "us-west", "tags": [], "entity": {"id": 6, "type": "user"}}),
            json!({"id": 3, "label": "web-2", "region": "us-west", "tags": ["a", "b"], "entity": {"id": 7, "type": "vpc"}}),
        ]
    }

    fn ids(f: &Filter) -> Vec<i64> {
        let mut v: Vec<Value> = recs().into_iter().filter(|r| f.matches(r)).collect();
        f.sort(&mut v);
        v.iter().map(|r| r["id"].as_i64().unwrap()).collect()
    }

    #[test]
    fn equality_and_implicit_and() {
        assert_eq!(ids(&Filter::parse(r#"{"region":"us-west"}"#, F).unwrap()), vec![2, 3]);
        assert_eq!(ids(&Filter::parse(r#"{"region":"us-west","label":"web-2"}"#, F).unwrap()), vec![3]);
    }

    #[test]
    fn operators() {
        assert_eq!(ids(&Filter::parse(r#"{"id":{"+gt":1}}"#, F).unwrap()), vec![2, 3]);
        assert_eq!(ids(&Filter::parse(r#"{"id":{"+gte":2,"+lt":3}}"#, F).unwrap()), vec![2]);
        assert_eq!(ids(&Filter::parse(r#"{"id":{"+lte":1}}"#, F).unwrap()), vec![1]);
        assert_eq!(ids(&Filter::parse(r#"{"label":{"+contains":"web"}}"#, F).unwrap()), vec![1, 3]);
        assert_eq!(ids(&Filter::parse(r#"{"region":{"+neq":"us-west"}}"#, F).unwrap()), vec![1]);
        assert_eq!(ids(&Filter::parse(r#"{"+or":[{"id":1},{"label":"db-1"}]}"#, F).unwrap()), vec![1, 2]);
        assert_eq!(ids(&Filter::parse(r#"{"+and":[{"region":"us-west"},{"id":{"+gt":2}}]}"#, F).unwrap()), vec![3]);
        assert_eq!(ids(&Filter::parse(r#"{"tags":"b"}"#, F).unwrap()), vec![3]);
        assert_eq!(ids(&Filter::parse(r#"{"entity.type":"vpc"}"#, F).unwrap()), vec![1, 3]);
        assert_eq!(ids(&Filter::parse(r#"{"entity":{"id":6}}"#, F).unwrap()), vec![2]);
    }

    #[test]
    fn ordering() {
        let f = Filter::parse(r#"{"+order_by":"label","+order":"desc"}"#, F).unwrap();
        assert_eq!(ids(&f), vec![3, 1, 2]);
        let f = Filter::parse(r#"{"+order_by":"region"}"#, F).unwrap();
        assert_eq!(ids(&f), vec![1, 2, 3]);
    }

    #[test]
    fn assumed_fields_are_decided_and_folded_away() {
        let parse = |t: &str| Filter::parse(t, F).unwrap();
        let assumed = |t: &str| parse(t).assume("region", &json!("us-west"));
        // Decided true: no condition left, the order kept.
        let f = assumed(r#"{"region": "us-west", "+order_by": "region", "+order": "desc"}"#);
        assert_eq!((f.cond, f.order_by.as_deref(), f.order), (None, Some("region"), Order::Desc));
        assert!(assumed(r#"{"region": {"+neq": "us-east"}}"#).cond.is_none());
        // Decided false: nothing matches, whatever else the filter says.
        assert!(assumed(r#"{"region": "us-east", "id": 1}"#).matches_none());
        assert!(assumed(r#"{"+or": [{"region": "us-east"}, {"region": {"+contains": "east"}}]}"#).matches_none());
        // The other conditions stay, what the field decides is folded away.
        assert_eq!(assumed(r#"{"region": "us-west", "id": 1}"#).cond, parse(r#"{"id": 1}"#).cond);
        assert_eq!(assumed(r#"{"+or": [{"region": "us-east"}, {"id": 2}]}"#).cond, parse(r#"{"id": 2}"#).cond);
        assert!(assumed(r#"{"+or": [{"region": "us-west"}, {"id": 2}]}"#).cond.is_none());
        assert!(!assumed(r#"{"id": 2}"#).matches_none());
        // A nested field.
        let f = parse(r#"{"entity.type": "vpc", "id": 3}"#).assume("entity.type", &json!("vpc"));
        assert_eq!(f.cond, parse(r#"{"id": 3}"#).cond);
        assert!(parse(r#"{"entity.type": "vpc"}"#).assume("entity.type", &json!("instance")).matches_none());
        // An order by the field everyone holds is the tie-break's, in the same direction.
        let f = parse(r#"{"id": 3, "+order_by": "region", "+order": "desc"}"#).order_tied("region", "id");
        assert_eq!((f.order_by.as_deref(), f.order, f.cond), (Some("id"), Order::Desc, parse(r#"{"id": 3}"#).cond));
        assert_eq!(parse(r#"{"+order_by": "label"}"#).order_tied("region", "id").order_by.as_deref(), Some("label"));
    }

    #[test]
    fn a_rewrite_replaces_the_comparisons_on_its_field_where_it_makes_something() {
        const G: &[&str] = &["status", "token"];
        let parse = |t: &str| Filter::parse(t, G).unwrap();
        let rewrite = |t: &str| {
            parse(t).rewrite("status", |op, v| {
                (op == CmpOp::Eq).then(|| Cond::Field { path: "kept".into(), op, value: json!(format!("{v}!")) })
            })
        };
        let kept = |v: &str| Cond::Field { path: "kept".into(), op: CmpOp::Eq, value: json!(v) };
        assert_eq!(rewrite(r#"{"status": "a"}"#).cond, Some(kept("\"a\"!")));
        // Inside +or and +and; other fields, other operators (`None`) and the order untouched.
        let f = rewrite(
            r#"{"+or": [{"status": "b"}, {"+and": [{"token": "t"}, {"status": {"+neq": "c"}}]}], "+order_by": "status"}"#,
        );
        let Some(Cond::Or(parts)) = &f.cond else { panic!("{f:?}") };
        assert_eq!(parts[0], kept("\"b\"!"));
        assert_eq!(parts[1], parse(r#"{"token": "t", "status": {"+neq": "c"}}"#).cond.unwrap());
        assert_eq!(f.order_by.as_deref(), Some("status"));
        assert_eq!(rewrite(r#"{"token": "x"}"#), parse(r#"{"token": "x"}"#));
    }

    #[test]
    fn a_boolean_held_up_to_a_mark_bounds_the_field() {
        const G: &[&str] = &["id", "seen", "action"];
        let parse = |t: &str| Filter::parse(t, G).unwrap();
        let bound = |t: &str| parse(t).bound_by("seen", "id", 40);
        // true (or not false) is at most the mark, false (or not true) past it; the comparison stays.
        for (text, op) in [
            (r#"{"seen": true}"#, "+lte"),
            (r#"{"seen": {"+neq": false}}"#, "+lte"),
            (r#"{"seen": false}"#, "+gt"),
            (r#"{"seen": {"+neq": true}}"#, "+gt"),
        ] {
            let inner: Value = serde_json::from_str(text).unwrap();
            let want = parse(&json!({"+and": [{"id": {op: 40}}, inner]}).to_string());
            assert_eq!(bound(text).cond, want.cond, "{text}");
        }
        // Inside +or and +and; other fields and the order untouched; no mention, no change.
        let f = bound(r#"{"+or": [{"seen": false}, {"action": "x"}], "+order_by": "action"}"#);
        let want = parse(r#"{"+or": [{"+and": [{"id": {"+gt": 40}}, {"seen": false}]}, {"action": "x"}]}"#);
        assert_eq!((f.cond, f.order_by.as_deref()), (want.cond, Some("action")));
        assert!(parse(r#"{"+or": [{"seen": false}]}"#).names("seen"));
        assert!(!parse(r#"{"action": "seen"}"#).names("seen"));
        assert_eq!(bound(r#"{"action": "x"}"#), parse(r#"{"action": "x"}"#));
        // The bound keeps the filter's meaning on records either side of the mark.
        for text in [r#"{"seen": true}"#, r#"{"seen": {"+neq": true}}"#] {
            for (id, seen) in [(39, true), (40, true), (41, false)] {
                let record = json!({"id": id, "seen": seen, "action": "x"});
                assert_eq!(bound(text).matches(&record), parse(text).matches(&record), "{text} {record}");
            }
        }
    }

    #[test]
    fn refusals() {
        for bad in [
            "not json",
            "[1]",
            r#"{"secret":"x"}"#,
            r#"{"+or":{"id":1}}"#,
            r#"{"id":{"+between":1}}"#,
            r#"{"+order":"desc"}"#,
            r#"{"+order_by":"secret"}"#,
            r#"{"+order_by":"id","+order":"sideways"}"#,
            r#"{"label":{"+contains":5}}"#,
            r#"{"id":{"+gt":[1]}}"#,
            r#"{"label":[1]}"#,
            r#"{"+weird":1}"#,
        ] {
            assert!(Filter::parse(bad, F).is_err(), "{bad} should be refused");
        }
    }
}
