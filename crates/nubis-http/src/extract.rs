//! Extractors: the bearer-token [`Auth`], the JSON body [`ApiJson`] (errors name the field by
//! its path), typed path parameters [`ApiPath`], and the paging and X-Filter of lists.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRef, FromRequest, FromRequestParts, Path, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use nubis_app::{Actor, App};
use nubis_model::page::{MAX_PAGE_SIZE, MIN_PAGE_SIZE, PageRequest};
use nubis_model::{Error, FieldError};
use serde::de::DeserializeOwned;

use crate::error::{ApiError, envelope};
use crate::meta::RequestMeta;
use crate::ratelimit::RateLimiter;

/// Shared state of the handlers.
#[derive(Clone)]
pub struct ApiState {
    pub app: App,
    pub limiter: Arc<RateLimiter>,
}

impl FromRef<ApiState> for App {
    fn from_ref(s: &ApiState) -> App {
        s.app.clone()
    }
}

/// The authenticated caller. Authentication only: what the caller may do is decided by the
/// application's policy table.
pub struct Auth(pub Actor);

impl std::ops::Deref for Auth {
    type Target = Actor;
    fn deref(&self) -> &Actor {
        &self.0
    }
}

/// The token of an `Authorization: Bearer` (or `token`) header.
pub fn bearer(parts: &Parts) -> Option<&str> {
    let h = parts.headers.get(axum::http::header::AUTHORIZATION)?.to_str().ok()?;
    h.strip_prefix("Bearer ").or_else(|| h.strip_prefix("bearer ")).or_else(|| h.strip_prefix("token ")).map(str::trim)
}

impl FromRequestParts<ApiState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &ApiState) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or_else(|| ApiError(Error::Unauthenticated("Invalid Token".into())))?;
        let actor = state.app.authenticate(token).await?;
        let meta = parts.extensions.get::<Arc<RequestMeta>>().cloned();
        if let Some(m) = &meta {
            let _ = m.scopes.set(actor.scopes_text().to_string());
        }
        let rate = state.limiter.check(actor.token_id());
        if let Some(m) = &meta {
            let _ = m.rate.set(rate);
        }
        if !rate.allowed {
            return Err(ApiError(Error::RateLimited { retry_after_secs: rate.retry_after() }));
        }
        Ok(Auth(actor))
    }
}

/// A JSON body. Any content type is accepted as long as the body is JSON; an empty body is `{}`.
/// A body of the wrong shape is refused with the path of the offending field.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|rej| {
            if rej.status() == StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::status(StatusCode::PAYLOAD_TOO_LARGE, None, "Request body too large")
            } else {
                ApiError::status(StatusCode::BAD_REQUEST, None, "Request body could not be read")
            }
        })?;
        parse_json(&bytes).map(ApiJson).map_err(IntoResponse::into_response)
    }
}

/// Parses a request body, naming the field of a type error.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) { b"{}" } else { bytes };
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        let reason = if serde_json::from_slice::<serde_json::Value>(bytes).is_ok() {
            "Request body must be a JSON object"
        } else {
            "Request body is not valid JSON"
        };
        return Err(ApiError(Error::Invalid(vec![FieldError::general(reason)])));
    }
    let mut value: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(_) => return Err(ApiError(Error::Invalid(vec![FieldError::general("Request body is not valid JSON")]))),
    };
    integral_numbers(&mut value);
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(v) => Ok(v),
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let (field, reason) = match inner.classify() {
                serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
                    (None, "Request body is not valid JSON".to_string())
                }
                _ if path == "." => (None, "Request body must be a JSON object".to_string()),
                _ => (Some(path), clean_reason(&inner.to_string())),
            };
            Err(ApiError(Error::Invalid(vec![FieldError { field, reason }])))
        }
    }
}

/// A number with no fractional part is an integer (JSON Schema's `integer` includes `30.0`):
/// written as one, so that integer fields accept it.
fn integral_numbers(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64()
                && f.fract() == 0.0
                && f >= i64::MIN as f64
                && f < i64::MAX as f64
            {
                *v = serde_json::Value::from(f as i64);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        serde_json::Value::Object(o) => o.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// serde's messages end with " at line 1 column 7": drop that.
fn clean_reason(msg: &str) -> String {
    let m = msg.split(" at line ").next().unwrap_or(msg);
    let mut s = m.to_string();
    if let Some(first) = s.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    s
}

/// Typed path parameters; a parameter of the wrong type is a 404 (no such resource).
pub struct ApiPath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for ApiPath<T> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(v)) => Ok(ApiPath(v)),
            Err(_) => Err(ApiError(Error::NotFound).into_response()),
        }
    }
}

/// `page`, `page_size` and the raw `X-Filter` header of a list request.
pub struct ListQuery {
    pub page: PageRequest,
    pub filter: Option<String>,
}

impl<S: Send + Sync> FromRequestParts<S> for ListQuery {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let mut page = PageRequest::default();
        let mut errors = Vec::new();
        for (k, v) in form_pairs(parts.uri.query().unwrap_or("")) {
            match k.as_str() {
                "page" => match v.parse::<u64>() {
                    Ok(n) if n >= 1 => page.page = n,
                    // A page number past 64 bits is past the end of any list: an empty page.
                    Err(_) if v.bytes().all(|b| b.is_ascii_digit()) && v.bytes().any(|b| b != b'0') => {
                        page.page = u64::MAX
                    }
                    _ => errors.push(FieldError::new("page", "Must be an integer of at least 1")),
                },
                "page_size" => match v.parse::<u64>() {
                    Ok(n) if (MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&n) => page.page_size = n,
                    _ => errors.push(FieldError::new(
                        "page_size",
                        format!("Must be an integer from {MIN_PAGE_SIZE} to {MAX_PAGE_SIZE}"),
                    )),
                },
                _ => {}
            }
        }
        if !errors.is_empty() {
            return Err(envelope(StatusCode::BAD_REQUEST, errors));
        }
        let filter = match parts.headers.get("x-filter") {
            None => None,
            Some(v) => match v.to_str() {
                Ok(s) if !s.trim().is_empty() => Some(s.to_string()),
                Ok(_) => None,
                Err(_) => {
                    return Err(envelope(
                        StatusCode::BAD_REQUEST,
                        vec![FieldError::new("X-Filter", "X-Filter is not valid JSON")],
                    ));
                }
            },
        };
        Ok(ListQuery { page, filter })
    }
}

/// Query-string (or form body) pairs, percent-decoded (`form_urlencoded`).
pub fn form_pairs(q: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(q.as_bytes()).into_owned().collect()
}

/// Percent-decodes one form-urlencoded piece (`+` is a space).
pub fn decode(s: &str) -> String {
    let plus_as_space = s.replace('+', " ");
    percent_encoding::percent_decode_str(&plus_as_space).decode_utf8_lossy().into_owned()
}

/// An optional query flag such as `skip_ipv6_rdns=true`.
pub fn query_flag(parts_query: Option<&str>, name: &str) -> Result<bool, ApiError> {
    for (k, v) in form_pairs(parts_query.unwrap_or("")) {
        if k == name {
            return match v.as_str() {
                "true" | "1" => Ok(true),
                "false" | "0" => Ok(false),
                _ => Err(ApiError(Error::invalid(name, "Must be true or false"))),
            };
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_query_strings() {
        assert_eq!(
            form_pairs("page=2&page_size=25"),
            vec![("page".into(), "2".into()), ("page_size".into(), "25".into())]
        );
        assert_eq!(decode("a%20b+c"), "a b c");
        assert_eq!(decode("100%"), "100%");
        assert_eq!(decode("%4"), "%4");
    }

    #[test]
    fn body_errors_name_the_field() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Inner {
            ipv4: Option<String>,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Outer {
            subnets: Option<Vec<Inner>>,
        }
        let r = parse_json::<Outer>(br#"{"subnets":[{"ipv4":"x"},{"ipv4":5}]}"#).unwrap_err();
        assert!(matches!(r.0, Error::Invalid(ref v) if v[0].field.as_deref() == Some("subnets[1].ipv4")), "{r:?}");
        assert!(parse_json::<Outer>(b"").is_ok());
        assert!(parse_json::<Outer>(b"{").is_err());
    }
}
