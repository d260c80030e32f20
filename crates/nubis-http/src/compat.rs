//! The hosted API's names side by side with the spec's: one translation at the edge of the
//! HTTP service, so that the ecosystem's tools (the Python SDK, `linode-cli`, ...) work against
//! nubis with only their base URL changed. Handlers and the application only ever see the
//! spec's names.
//!
//! - Paths: the family `/v4/linode/...` is served by `/v4/compute/...`, and a few aliases
//!   (`ALIASES`) by their spec paths.
//! - Requests (whoever sends them): the hosted API's field names (`linode_id`, `linodes`, grant
//!   key `linode`, `add_linodes`), the device/entity type `linode`, token scope area `linodes`
//!   and, in `X-Filter`, the event actions `linode_*` are read as the spec's.
//! - Responses in the hosted API's dialect: the same renames the other way, plus entity URLs and
//!   error field names. A request is in that dialect when it goes through the `/v4/linode`
//!   family, when its `User-Agent` is one of the hosted API's official clients, or when it says
//!   so with `X-Nubis-Names: linode` (`X-Nubis-Names: spec` forces the spec's names).
//!
//! Both forms read and write the same records.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use serde_json::Value;
use tower::{Layer, Service};

use crate::error::ApiError;

/// Which names a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The spec's names (`instance_id`, `/v4/compute/instances`, type `instance`).
    Spec,
    /// The hosted API's names (`linode_id`, `/v4/linode/instances`, type `linode`).
    Linode,
}

/// The request header that chooses the dialect explicitly: `linode` or `spec`.
pub static NAMES_HEADER: HeaderName = HeaderName::from_static("x-nubis-names");
static X_FILTER: HeaderName = HeaderName::from_static("x-filter");
static X_OAUTH_SCOPES: HeaderName = HeaderName::from_static("x-oauth-scopes");
static X_ACCEPTED_OAUTH_SCOPES: HeaderName = HeaderName::from_static("x-accepted-oauth-scopes");

/// Path families: (the hosted API's prefix, the spec's prefix).
const FAMILIES: &[(&str, &str)] = &[("/v4/linode/", "/v4/compute/")];

/// Path aliases: (alias, spec path); `*` stands for one segment.
const ALIASES: &[(&str, &str)] =
    &[("/v4/account/oauth-clients/*/reset_secret", "/v4/account/oauth-clients/*/reset-secret")];

/// JSON field names: (the hosted API's, the spec's).
const KEYS: &[(&str, &str)] =
    &[("linode_id", "instance_id"), ("linodes", "instances"), ("linode", "instance"), ("add_linodes", "add_instances")];

/// Substrings of the `User-Agent` of the hosted API's official clients.
const LINODE_CLIENTS: &[&str] =
    &["linode_api4", "linode-cli", "linodego", "terraform-provider-linode", "linode-api-js"];

/// Documents served as they are, whatever the dialect.
const UNTRANSLATED: &[&str] = &["/v4/openapi.json"];

/// The dialect of a request (its path after trailing-slash trimming, its headers).
pub fn dialect(path: &str, headers: &HeaderMap) -> Dialect {
    match headers.get(&NAMES_HEADER).map(HeaderValue::as_bytes) {
        Some(b"linode") => return Dialect::Linode,
        Some(b"spec") => return Dialect::Spec,
        _ => {}
    }
    if FAMILIES.iter().any(|(linode, _)| path.starts_with(linode) || path == linode.trim_end_matches('/')) {
        return Dialect::Linode;
    }
    let ua = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or("");
    if LINODE_CLIENTS.iter().any(|c| ua.contains(c)) { Dialect::Linode } else { Dialect::Spec }
}

/// The spec's path for `path`, when it is a hosted-API path or an alias.
pub fn spec_path(path: &str) -> Option<String> {
    for (linode, spec) in FAMILIES {
        if let Some(rest) = path.strip_prefix(linode) {
            return Some(format!("{spec}{rest}"));
        }
        if path == linode.trim_end_matches('/') {
            return Some(spec.trim_end_matches('/').to_string());
        }
    }
    // Compared segment by segment without collecting: this runs on every request.
    let matches = |alias: &str| {
        let (mut a, mut p) = (alias.split('/'), path.split('/'));
        loop {
            match (a.next(), p.next()) {
                (None, None) => return true,
                (Some(x), Some(y)) if x == "*" || x == y => {}
                _ => return false,
            }
        }
    };
    for (alias, spec) in ALIASES {
        if matches(alias) {
            let segs: Vec<&str> = path.split('/').collect();
            let pattern: Vec<&str> = alias.split('/').collect();
            let mut wild = segs.iter().zip(&pattern).filter(|(_, p)| **p == "*").map(|(s, _)| *s);
            let out: Vec<&str> =
                spec.split('/').map(|p| if p == "*" { wild.next().unwrap_or_default() } else { p }).collect();
            return Some(out.join("/"));
        }
    }
    None
}

fn contains_linode(bytes: &[u8]) -> bool {
    bytes.windows(6).any(|w| w == b"linode")
}

/// Rewrites a request body (or `X-Filter` value, `in_filter`) from the hosted API's names to
/// the spec's. `field` is the name the value sits under.
fn to_spec(v: &mut Value, field: Option<&str>, in_filter: bool) {
    match v {
        Value::Object(m) => {
            for (linode, spec) in KEYS {
                if !m.contains_key(*spec)
                    && let Some(x) = m.shift_remove(*linode)
                {
                    m.insert((*spec).to_string(), x);
                }
            }
            // Filter keys name fields with dots (`entity.type`); operators (`+or`) keep the field.
            if in_filter {
                let renamed: Vec<(String, Value)> = m
                    .iter()
                    .filter(|(k, _)| k.contains('.') && k.split('.').any(|s| KEYS.iter().any(|(l, _)| *l == s)))
                    .map(|(k, x)| (k.clone(), x.clone()))
                    .collect();
                for (k, x) in renamed {
                    m.shift_remove(&k);
                    m.insert(map_segments(&k, |s| KEYS.iter().find(|(l, _)| *l == s).map(|(_, sp)| *sp)), x);
                }
            }
            for (k, x) in m.iter_mut() {
                let f = if k.starts_with('+') { field } else { Some(k.as_str()) };
                to_spec(x, f, in_filter);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| to_spec(x, field, in_filter)),
        Value::String(s) => match field {
            Some("type" | "entity.type" | "secondary_entity.type") if s == "linode" => *s = "instance".into(),
            Some("action") if in_filter && s.starts_with("linode_") => *s = format!("instance_{}", &s[7..]),
            Some("scopes") => *s = s.replace("linodes:", "instances:"),
            _ => {}
        },
        _ => {}
    }
}

/// Rewrites a response body from the spec's names to the hosted API's.
fn to_linode(v: &mut Value, field: Option<&str>) {
    match v {
        Value::Object(m) => {
            for (linode, spec) in KEYS {
                if let Some(x) = m.shift_remove(*spec) {
                    m.insert((*linode).to_string(), x);
                }
            }
            for (k, x) in m.iter_mut() {
                to_linode(x, Some(k.as_str()));
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| to_linode(x, field)),
        Value::String(s) => match field {
            Some("type") if s == "instance" => *s = "linode".into(),
            Some("action") if s.starts_with("instance_") => *s = format!("linode_{}", &s[9..]),
            Some("url") => {
                for (linode, spec) in FAMILIES {
                    if let Some(rest) = s.strip_prefix(spec) {
                        *s = format!("{linode}{rest}");
                    }
                }
            }
            Some("field") => *s = map_segments(s, |seg| KEYS.iter().find(|(_, sp)| *sp == seg).map(|(l, _)| *l)),
            Some("scopes") => *s = linode_scopes(s),
            _ => {}
        },
        _ => {}
    }
}

fn linode_scopes(s: &str) -> String {
    s.replace("instances:", "linodes:")
}

/// Renames each dot-separated segment of a field path (an index suffix `[n]` is kept).
fn map_segments<'a>(path: &str, rename: impl Fn(&str) -> Option<&'a str>) -> String {
    path.split('.')
        .map(|seg| {
            let (name, index) = seg.find('[').map_or((seg, ""), |i| seg.split_at(i));
            format!("{}{index}", rename(name).unwrap_or(name))
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The layer: put it between trailing-slash trimming and the router.
#[derive(Debug, Clone)]
pub struct CompatLayer {
    max_body: usize,
}

impl CompatLayer {
    /// `max_body`: the largest request body read (the API's own limit).
    pub fn new(max_body: usize) -> CompatLayer {
        CompatLayer { max_body }
    }
}

impl<S> Layer<S> for CompatLayer {
    type Service = Compat<S>;
    fn layer(&self, inner: S) -> Compat<S> {
        Compat { inner, max_body: self.max_body }
    }
}

/// The service of [`CompatLayer`].
#[derive(Debug, Clone)]
pub struct Compat<S> {
    inner: S,
    max_body: usize,
}

impl<S> Service<Request> for Compat<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future =
        futures_util::future::Either<S::Future, Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        // A read in the spec's names with nothing to translate goes straight through.
        if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
            let path = req.uri().path();
            let spec = UNTRANSLATED.contains(&path) || dialect(path, req.headers()) == Dialect::Spec;
            if spec
                && spec_path(path).is_none()
                && !req.headers().get(&X_FILTER).is_some_and(|f| contains_linode(f.as_bytes()))
            {
                return futures_util::future::Either::Left(self.inner.call(req));
            }
        }
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let max_body = self.max_body;
        futures_util::future::Either::Right(Box::pin(async move {
            let path = req.uri().path();
            let dialect = if UNTRANSLATED.contains(&path) { Dialect::Spec } else { dialect(path, req.headers()) };
            let req = match translate_request(req, max_body).await {
                Ok(r) => r,
                Err(res) => return Ok(res),
            };
            let res = inner.call(req).await?;
            Ok(match dialect {
                Dialect::Spec => res,
                Dialect::Linode => translate_response(res).await,
            })
        }))
    }
}

async fn translate_request(req: Request, max_body: usize) -> Result<Request, Response> {
    let (mut parts, body) = req.into_parts();
    if let Some(path) = spec_path(parts.uri.path()) {
        let pq = match parts.uri.query() {
            Some(q) => format!("{path}?{q}"),
            None => path,
        };
        let mut uri = parts.uri.clone().into_parts();
        uri.path_and_query = pq.parse().ok();
        if let Ok(u) = Uri::from_parts(uri) {
            parts.uri = u;
        }
    }
    if let Some(f) = parts.headers.get(&X_FILTER)
        && contains_linode(f.as_bytes())
        && let Ok(mut v) = serde_json::from_slice::<Value>(f.as_bytes())
    {
        to_spec(&mut v, None, true);
        if let Ok(h) = HeaderValue::from_str(&v.to_string()) {
            parts.headers.insert(&X_FILTER, h);
        }
    }
    if matches!(parts.method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(Request::from_parts(parts, body));
    }
    let bytes = match axum::body::to_bytes(body, max_body).await {
        Ok(b) => b,
        Err(_) => {
            let too_large = parts
                .headers
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
                .is_none_or(|n| n > max_body);
            return Err(if too_large {
                ApiError::status(StatusCode::PAYLOAD_TOO_LARGE, None, "Request body too large")
            } else {
                ApiError::status(StatusCode::BAD_REQUEST, None, "Request body could not be read")
            });
        }
    };
    let bytes = if contains_linode(&bytes)
        && let Ok(mut v) = serde_json::from_slice::<Value>(&bytes)
    {
        to_spec(&mut v, None, false);
        let out = Bytes::from(serde_json::to_vec(&v).unwrap_or_default());
        parts.headers.insert(header::CONTENT_LENGTH, HeaderValue::from(out.len()));
        out
    } else {
        bytes
    };
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

async fn translate_response(res: Response) -> Response {
    let (mut parts, body) = res.into_parts();
    for name in [&X_OAUTH_SCOPES, &X_ACCEPTED_OAUTH_SCOPES] {
        if let Some(v) = parts.headers.get(name).and_then(|v| v.to_str().ok())
            && let Ok(h) = HeaderValue::from_str(&linode_scopes(v))
        {
            parts.headers.insert(name, h);
        }
    }
    let json = parts.headers.get(header::CONTENT_TYPE).is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !json {
        return Response::from_parts(parts, body);
    }
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(_) => return ApiError::status(StatusCode::INTERNAL_SERVER_ERROR, None, "Internal server error"),
    };
    let bytes = match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut v) => {
            to_linode(&mut v, None);
            Bytes::from(serde_json::to_vec(&v).unwrap_or_default())
        }
        Err(_) => bytes,
    };
    parts.headers.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    Response::from_parts(parts, Body::from(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_of_the_hosted_family_and_aliases_map_to_the_spec() {
        assert_eq!(spec_path("/v4/linode/instances").as_deref(), Some("/v4/compute/instances"));
        assert_eq!(spec_path("/v4/linode/instances/7/boot").as_deref(), Some("/v4/compute/instances/7/boot"));
        assert_eq!(spec_path("/v4/linode/types").as_deref(), Some("/v4/compute/types"));
        assert_eq!(
            spec_path("/v4/account/oauth-clients/abc/reset_secret").as_deref(),
            Some("/v4/account/oauth-clients/abc/reset-secret")
        );
        assert_eq!(spec_path("/v4/compute/instances"), None);
        assert_eq!(spec_path("/v4/account/oauth-clients/abc/reset-secret"), None);
    }

    #[test]
    fn request_names_become_the_specs() {
        let mut v = json!({"linode_id": 1, "devices": {"linodes": [1]}, "linode": [{"id": 1}], "type": "linode",
            "global": {"add_linodes": true}, "scopes": "linodes:read_only events:read_only"});
        to_spec(&mut v, None, false);
        assert_eq!(
            v,
            json!({"instance_id": 1, "devices": {"instances": [1]}, "instance": [{"id": 1}], "type": "instance",
            "global": {"add_instances": true}, "scopes": "instances:read_only events:read_only"})
        );
    }

    #[test]
    fn filters_name_the_specs_fields_and_values() {
        let mut v = json!({"+and": [{"entity.type": "linode"}, {"action": {"+or": ["linode_boot", "linode_create"]}}, {"linode_id": 3}]});
        to_spec(&mut v, None, true);
        assert_eq!(
            v,
            json!({"+and": [{"entity.type": "instance"}, {"action": {"+or": ["instance_boot", "instance_create"]}}, {"instance_id": 3}]})
        );
    }

    #[test]
    fn responses_in_the_hosted_dialect_use_its_names() {
        let mut v = json!({"data": [{"action": "instance_boot", "entity": {"id": 1, "type": "instance", "url": "/v4/compute/instances/1"}}],
            "instance_id": 1, "errors": [{"field": "devices.instances[0]", "reason": "x"}]});
        to_linode(&mut v, None);
        assert_eq!(
            v,
            json!({"data": [{"action": "linode_boot", "entity": {"id": 1, "type": "linode", "url": "/v4/linode/instances/1"}}],
            "linode_id": 1, "errors": [{"field": "devices.linodes[0]", "reason": "x"}]})
        );
    }

    #[test]
    fn the_dialect_follows_header_path_and_client() {
        let mut h = HeaderMap::new();
        assert_eq!(dialect("/v4/compute/instances", &h), Dialect::Spec);
        assert_eq!(dialect("/v4/linode/instances", &h), Dialect::Linode);
        h.insert(header::USER_AGENT, HeaderValue::from_static("python-linode_api4/5.48.0 python-requests/2.32"));
        assert_eq!(dialect("/v4/networking/ips", &h), Dialect::Linode);
        h.insert(&NAMES_HEADER, HeaderValue::from_static("spec"));
        assert_eq!(dialect("/v4/linode/instances", &h), Dialect::Spec);
    }
}
