//! Fixtures: a declarative YAML (or JSON) file of accounts, users, tokens with fixed values,
//! VPCs, firewalls, instances and balancers, created through the application layer (every rule
//! applies and every event is written, exactly as through the API).
//!
//! Each resource is the body its `POST` takes in the API. A string `${kind:LABEL}` stands for
//! the id of a resource created earlier in the same account (`vpc`, `subnet` as `VPC/SUBNET`,
//! `firewall`, `instance`, `nodebalancer`), and `${instance:LABEL.private_ipv4}` (or
//! `.public_ipv4`) for an address of an instance, also inside a longer string
//! (`"${instance:web.private_ipv4}:80"`). Within an account, VPCs are created first, then
//! firewalls, instances and balancers, so an instance names its firewall with `firewall_id`.
//!
//! A bad file is refused as a whole (nothing stays of it) with the line and the field.

use crate::auth::Admin;
use std::collections::HashMap;

use nubis_model::scope::Scopes;
use nubis_model::{Error, FieldError, Result, Timestamp};
use nubis_store::tokens::NewToken;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_saphyr::Spanned;
use utoipa::ToSchema;

use super::Operator;
use crate::App;
use crate::auth::hash_secret_hex;

/// Name of the snapshot that undoes a refused fixture file.
const UNDO: &str = "nubis-fixtures-undo";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    accounts: Vec<Spanned<AccountFixture>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountFixture {
    /// A new account's company; omitted with `existing: true`.
    company: Option<String>,
    /// The owner's username (with `existing: true`: an existing owner, such as `admin`).
    owner: String,
    /// The owner's e-mail address (new accounts).
    email: Option<String>,
    #[serde(default)]
    existing: bool,
    /// The owner's tokens.
    #[serde(default)]
    tokens: Vec<Spanned<TokenFixture>>,
    #[serde(default)]
    users: Vec<Spanned<UserFixture>>,
    #[serde(default)]
    vpcs: Vec<Spanned<Value>>,
    #[serde(default)]
    firewalls: Vec<Spanned<Value>>,
    #[serde(default)]
    instances: Vec<Spanned<Value>>,
    #[serde(default)]
    nodebalancers: Vec<Spanned<Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UserFixture {
    username: String,
    email: String,
    #[serde(default)]
    restricted: bool,
    #[serde(default)]
    tokens: Vec<Spanned<TokenFixture>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenFixture {
    /// The token itself (16..512 characters): tests use this fixed value.
    value: String,
    #[serde(default = "default_label")]
    label: String,
    #[serde(default = "all_scopes")]
    scopes: String,
    expiry: Option<String>,
}

fn default_label() -> String {
    "fixture".into()
}
fn all_scopes() -> String {
    "*".into()
}

/// The fixture file as documented (`POST /nubis/v1/fixtures` reads it as YAML or JSON text): the
/// shape of [`File`]; each resource is described by the body of its own `POST`.
pub struct FixtureFile;

impl utoipa::PartialSchema for FixtureFile {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        let list = serde_json::json!({"type": "array", "items": {"type": "object"}});
        let token = serde_json::json!({
            "type": "object", "required": ["value"], "additionalProperties": false,
            "properties": {
                "value": {"type": "string", "minLength": 16, "maxLength": 512},
                "label": {"type": "string"}, "scopes": {"type": "string"}, "expiry": {"type": ["string", "null"]},
            },
        });
        let tokens = serde_json::json!({"type": "array", "items": token});
        let user = serde_json::json!({
            "type": "object", "required": ["username", "email"], "additionalProperties": false,
            "properties": {
                "username": {"type": "string"}, "email": {"type": "string"},
                "restricted": {"type": "boolean"}, "tokens": tokens,
            },
        });
        let account = serde_json::json!({
            "type": "object", "required": ["owner"], "additionalProperties": false,
            "properties": {
                "company": {"type": ["string", "null"]}, "owner": {"type": "string"},
                "email": {"type": ["string", "null"]}, "existing": {"type": "boolean"},
                "tokens": tokens, "users": {"type": "array", "items": user},
                "vpcs": list, "firewalls": list, "instances": list, "nodebalancers": list,
            },
        });
        nubis_model::schema::schema(serde_json::json!({
            "type": "object", "additionalProperties": false,
            "properties": {"accounts": {"type": "array", "items": account}},
        }))
        .into()
    }
}

impl ToSchema for FixtureFile {}

/// What a fixture file created.
#[derive(Debug, Default, Clone, Serialize, ToSchema)]
pub struct FixtureReport {
    pub accounts: usize,
    pub users: usize,
    pub tokens: usize,
    pub vpcs: usize,
    pub firewalls: usize,
    pub instances: usize,
    pub nodebalancers: usize,
}

/// A refusal naming the line and the field.
fn bad(line: u64, field: &str, reason: impl std::fmt::Display) -> Error {
    Error::Invalid(vec![FieldError::new(field, format!("line {line}: {reason}"))])
}

/// Parses the file (YAML, or JSON which is YAML too), naming the line and the field of an error.
fn parse(text: &str) -> Result<File> {
    let mut path = None;
    let r = serde_saphyr::with_deserializer_from_str(text, |de| {
        serde_path_to_error::deserialize::<_, File>(de).map_err(|e| {
            path = Some(e.path().to_string());
            e.into_inner()
        })
    });
    r.map_err(|e| {
        let line = e.location().map(|l| l.line()).unwrap_or(0);
        // `Spanned` adds a `value` level to the path.
        let field = path
            .filter(|p| p != ".")
            .map(|p| format!("{p}.").replace(".value.", ".").trim_end_matches('.').to_string())
            .unwrap_or_else(|| "fixtures".into());
        let msg = e.to_string();
        let first = msg.lines().next().unwrap_or("invalid fixture file").trim_start_matches("error: ").to_string();
        if first.starts_with("line ") {
            Error::Invalid(vec![FieldError::new(field, first)])
        } else {
            bad(line, &field, first)
        }
    })
}

/// Ids and addresses of what an account's fixtures created, by kind and label.
#[derive(Default)]
struct Refs(HashMap<String, Value>);

impl Refs {
    fn put(&mut self, key: String, v: Value) {
        self.0.insert(key, v);
    }

    /// Replaces every `${...}` in the strings of `v`; a string that is one reference becomes the
    /// referenced value itself (a number for ids).
    fn resolve(&self, v: &mut Value, path: &str) -> std::result::Result<(), (String, String)> {
        match v {
            Value::String(s) => {
                if let Some(key) = s.strip_prefix("${").and_then(|r| r.strip_suffix('}'))
                    && !key.contains("${")
                {
                    *v = self.0.get(key).cloned().ok_or_else(|| (path.to_string(), unknown(key)))?;
                    return Ok(());
                }
                let mut out = String::new();
                let mut rest = s.as_str();
                while let Some(i) = rest.find("${") {
                    out.push_str(&rest[..i]);
                    let end = rest[i..].find('}').ok_or_else(|| (path.to_string(), "Unclosed ${".to_string()))?;
                    let key = &rest[i + 2..i + end];
                    match self.0.get(key) {
                        Some(Value::String(x)) => out.push_str(x),
                        Some(x) => out.push_str(&x.to_string()),
                        None => return Err((path.to_string(), unknown(key))),
                    }
                    rest = &rest[i + end + 1..];
                }
                out.push_str(rest);
                *s = out;
                Ok(())
            }
            Value::Array(a) => {
                for (i, x) in a.iter_mut().enumerate() {
                    self.resolve(x, &format!("{path}[{i}]"))?;
                }
                Ok(())
            }
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    self.resolve(x, &format!("{path}.{k}"))?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

fn unknown(key: &str) -> String {
    format!("No resource ${{{key}}} was created before this one in this account")
}

/// One resource: references resolved, then the API's create body, naming the field on error.
fn body<T: DeserializeOwned>(item: &Spanned<Value>, refs: &Refs, path: &str) -> Result<T> {
    let line = item.referenced.line();
    let mut v = item.value.clone();
    refs.resolve(&mut v, path).map_err(|(field, reason)| bad(line, &field, reason))?;
    serde_path_to_error::deserialize::<_, T>(v).map_err(|e| {
        let field = format!("{path}.{}", e.path()).replace(".?", "").trim_end_matches('.').to_string();
        bad(line, &field, e.into_inner())
    })
}

/// Prefixes the fields of an application error with the resource's path and line.
fn located(e: Error, line: u64, path: &str) -> Error {
    match e {
        Error::Invalid(v) => Error::Invalid(
            v.into_iter()
                .map(|f| FieldError {
                    field: Some(match f.field {
                        Some(x) => format!("{path}.{x}"),
                        None => path.to_string(),
                    }),
                    reason: format!("line {line}: {}", f.reason),
                })
                .collect(),
        ),
        Error::Unique(_) => bad(line, path, "Already exists"),
        Error::NotFound => bad(line, path, "Refers to something that does not exist"),
        Error::Forbidden(r) => bad(line, path, r),
        other => other,
    }
}

impl App {
    /// `POST /nubis/v1/fixtures`: loads a fixture file; refused as a whole when anything in it
    /// is wrong.
    pub async fn fixtures_load(&self, op: &Operator, text: &str) -> Result<FixtureReport> {
        self.fixtures_apply(&op.admin(), text).await
    }

    /// Loads a fixture file (`nubis serve --fixtures FILE` and the control API).
    pub async fn fixtures_apply(&self, admin: &Admin, text: &str) -> Result<FixtureReport> {
        let file = parse(text)?;
        self.store.snapshot_save(UNDO).await?;
        let r = self.fixtures_create(admin, &file).await;
        if r.is_err() {
            self.store.snapshot_restore(UNDO).await?;
            self.balancers_changed();
        }
        let _ = self.store.snapshot_delete(UNDO).await;
        r
    }

    async fn fixtures_create(&self, admin: &Admin, file: &File) -> Result<FixtureReport> {
        let mut report = FixtureReport::default();
        for (i, acc) in file.accounts.iter().enumerate() {
            let path = format!("accounts[{i}]");
            let line = acc.referenced.line();
            let a = &acc.value;
            let owner = if a.existing {
                let u = self
                    .store
                    .user_by_username(&a.owner)
                    .await?
                    .filter(|u| u.is_owner)
                    .ok_or_else(|| bad(line, &format!("{path}.owner"), "No account owner with this username"))?;
                if a.company.is_some() || a.email.is_some() {
                    return Err(bad(line, &format!("{path}.company"), "Not with existing: true"));
                }
                u
            } else {
                let company = a.company.as_deref().ok_or_else(|| bad(line, &format!("{path}.company"), "Required"))?;
                let email = a.email.as_deref().ok_or_else(|| bad(line, &format!("{path}.email"), "Required"))?;
                let (_, u) = self
                    .admin_account_create(admin, company, &a.owner, email, None)
                    .await
                    .map_err(|e| located(e, line, &path))?;
                report.accounts += 1;
                u
            };
            let account = self.store.account_get(owner.account_id).await?.ok_or(Error::NotFound)?;
            for (j, t) in a.tokens.iter().enumerate() {
                self.fixture_token(owner.id, t, &format!("{path}.tokens[{j}]")).await?;
                report.tokens += 1;
            }
            for (j, u) in a.users.iter().enumerate() {
                let upath = format!("{path}.users[{j}]");
                let v = &u.value;
                let user = self
                    .admin_user_create(admin, &account.euuid, &v.username, &v.email, v.restricted)
                    .await
                    .map_err(|e| located(e, u.referenced.line(), &upath))?;
                report.users += 1;
                for (k, t) in v.tokens.iter().enumerate() {
                    self.fixture_token(user.id, t, &format!("{upath}.tokens[{k}]")).await?;
                    report.tokens += 1;
                }
            }
            let actor = self.act_as_owner(admin, owner.id).await?;
            let mut refs = Refs::default();
            for (j, item) in a.vpcs.iter().enumerate() {
                let p = format!("{path}.vpcs[{j}]");
                let v = self
                    .vpc_create(&actor, body(item, &refs, &p)?)
                    .await
                    .map_err(|e| located(e, item.referenced.line(), &p))?;
                refs.put(format!("vpc:{}", v.label), v.id.into());
                for s in &v.subnets {
                    refs.put(format!("subnet:{}/{}", v.label, s.label), s.id.into());
                }
                report.vpcs += 1;
            }
            for (j, item) in a.firewalls.iter().enumerate() {
                let p = format!("{path}.firewalls[{j}]");
                let f = self
                    .firewall_create(&actor, body(item, &refs, &p)?)
                    .await
                    .map_err(|e| located(e, item.referenced.line(), &p))?;
                refs.put(format!("firewall:{}", f.label), f.id.into());
                report.firewalls += 1;
            }
            for (j, item) in a.instances.iter().enumerate() {
                let p = format!("{path}.instances[{j}]");
                let inst = self
                    .instance_create(&actor, body(item, &refs, &p)?)
                    .await
                    .map_err(|e| located(e, item.referenced.line(), &p))?;
                refs.put(format!("instance:{}", inst.label), inst.id.into());
                let private = inst.ipv4.iter().find(|a| a.starts_with("192.168."));
                let public = inst.ipv4.iter().find(|a| !a.starts_with("192.168."));
                if let Some(a) = private {
                    refs.put(format!("instance:{}.private_ipv4", inst.label), a.clone().into());
                }
                if let Some(a) = public {
                    refs.put(format!("instance:{}.public_ipv4", inst.label), a.clone().into());
                }
                report.instances += 1;
            }
            for (j, item) in a.nodebalancers.iter().enumerate() {
                let p = format!("{path}.nodebalancers[{j}]");
                let b = self
                    .nodebalancer_create(&actor, body(item, &refs, &p)?)
                    .await
                    .map_err(|e| located(e, item.referenced.line(), &p))?;
                refs.put(format!("nodebalancer:{}", b.label), b.id.into());
                report.nodebalancers += 1;
            }
        }
        Ok(report)
    }

    /// A token with the fixed value the file gives.
    async fn fixture_token(&self, user_id: i64, t: &Spanned<TokenFixture>, path: &str) -> Result<()> {
        let line = t.referenced.line();
        let v = &t.value;
        if !(16..=512).contains(&v.value.len()) {
            return Err(bad(line, &format!("{path}.value"), "Must be 16-512 characters"));
        }
        let scopes = Scopes::parse(&v.scopes).map_err(|r| bad(line, &format!("{path}.scopes"), r))?.to_string();
        let expiry = match v.expiry.as_deref() {
            None => None,
            Some(s) => Some(Timestamp::parse(s).ok_or_else(|| {
                bad(line, &format!("{path}.expiry"), "Must be a date-time such as 2030-01-01T00:00:00")
            })?),
        };
        let hash = hash_secret_hex(&v.value);
        let (scopes, hash) = (&scopes, &hash);
        self.write(|tx| {
            Box::pin(async move {
                tx.token_insert(&NewToken {
                    user_id,
                    label: &v.label,
                    scopes,
                    secret_hash: hash,
                    kind: "pat",
                    created: Timestamp::now(),
                    expiry,
                })
                .await?;
                Ok(())
            })
        })
        .await
        .map_err(|e| match e {
            Error::Unique(_) => bad(line, &format!("{path}.value"), "This token value is already in use"),
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> FieldError {
        match parse(text) {
            Err(Error::Invalid(v)) => v[0].clone(),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_bad_file_is_refused_with_its_line_and_field() {
        let e = refusal("accounts:\n  - company: Acme\n    owner: acme\n    colour: blue\n");
        assert_eq!(e.field.as_deref(), Some("accounts[0].colour"), "{e:?}");
        assert!(e.reason.starts_with("line 4"), "{e:?}");
        let e = refusal("accounts:\n  - company: Acme\n    owner: acme\n    existing: maybe\n");
        assert_eq!(e.field.as_deref(), Some("accounts[0].existing"), "{e:?}");
        assert!(e.reason.starts_with("line 4"), "{e:?}");
        let e = refusal("accounts: [\n");
        assert!(e.reason.starts_with("line "), "{e:?}");
    }

    #[test]
    fn json_is_accepted_too() {
        let f = parse(r#"{"accounts": [{"company": "Acme", "owner": "acme", "email": "a@acme.test"}]}"#).unwrap();
        assert_eq!(f.accounts.len(), 1);
    }

    #[test]
    fn references_become_ids_and_addresses() {
        let mut refs = Refs::default();
        refs.put("instance:web".into(), 7.into());
        refs.put("instance:web.private_ipv4".into(), "192.168.128.5".into());
        let mut v = serde_json::json!({"id": "${instance:web}", "address": "${instance:web.private_ipv4}:80"});
        refs.resolve(&mut v, "x").unwrap();
        assert_eq!(v, serde_json::json!({"id": 7, "address": "192.168.128.5:80"}));
        let mut v = serde_json::json!({"id": "${instance:nope}"});
        assert_eq!(refs.resolve(&mut v, "x").unwrap_err().0, "x.id");
    }
}
