//! The authorization server's HTTP side, served under `signin.base_path` (`/oauth`): the sign-in
//! page of the authorization-code flow, the token and revocation endpoints, the set-password
//! page, and the RFC 8414 metadata. Pages are askama templates, checked at compile time; forms
//! carry a CSRF token that must match a cookie (double submit). The rules live in
//! `nubis_app::signin`; this module only speaks HTTP.
//!
//! The session cookie set on a successful sign-in lets a later authorization (another client,
//! or the web console as a public PKCE client) skip the password.

mod pages;

use std::collections::HashMap;
use std::net::SocketAddr;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use nubis_app::App;
use nubis_app::signin::oauth::{OAuthError, RevokeRequest, TokenRequest};
use serde_json::json;

use crate::extract::{ApiState, decode, form_pairs};

pub const CSRF_COOKIE: &str = "nubis_csrf";
pub const SESSION_COOKIE: &str = "nubis_session";

/// The authorization server's routes, to be nested under its base path.
pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/authorize", get(pages::authorize_page).post(pages::authorize_submit))
        .route("/password", get(pages::password_page).post(pages::password_submit))
        .route("/signout", post(pages::signout))
        .route("/token", post(token))
        .route("/revoke", post(revoke))
}

/// The client's address as the connection shows it (proxies in front are not trusted).
pub struct ClientIp(pub String);

impl<S: Send + Sync> FromRequestParts<S> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip().to_string())
            .unwrap_or_else(|| "unknown".to_string());
        Ok(ClientIp(ip))
    }
}

/// The fields of a form-urlencoded body (the last value of a repeated name wins).
pub fn form(body: &[u8]) -> HashMap<String, String> {
    form_pairs(&String::from_utf8_lossy(body)).into_iter().collect()
}

/// A cookie of the request (`Cookie` headers read by the `cookie` crate); none when empty.
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == name)
        .map(|c| c.value().to_string())
        .filter(|v| !v.is_empty())
}

/// `Authorization: Basic` client credentials (RFC 6749 2.3.1: each part form-urlencoded).
fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    use base64::Engine;
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let b64 = v.strip_prefix("Basic ").or_else(|| v.strip_prefix("basic "))?;
    let raw = base64::engine::general_purpose::STANDARD.decode(b64.trim()).ok()?;
    let raw = String::from_utf8(raw).ok()?;
    let (id, secret) = raw.split_once(':')?;
    Some((decode(id), decode(secret)))
}

fn no_store(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    r
}

fn oauth_error(e: OAuthError, basic: bool) -> Response {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut r = no_store((status, crate::json::Json(&e)).into_response());
    if status == StatusCode::UNAUTHORIZED && basic {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"nubis\""));
    }
    r
}

/// `POST <base>/token`: the `authorization_code` and `refresh_token` grants.
async fn token(State(app): State<App>, headers: HeaderMap, body: Bytes) -> Response {
    let f = form(&body);
    let get = |k: &str| f.get(k).cloned();
    let req = TokenRequest {
        grant_type: get("grant_type"),
        code: get("code"),
        redirect_uri: get("redirect_uri"),
        code_verifier: get("code_verifier"),
        refresh_token: get("refresh_token"),
        scope: get("scope"),
        client_id: get("client_id"),
        client_secret: get("client_secret"),
    };
    let basic = basic_credentials(&headers);
    let used_basic = basic.is_some();
    match app.token_endpoint(&req, basic).await {
        Ok(t) => no_store(crate::json::Json(t).into_response()),
        Err(e) => oauth_error(e, used_basic),
    }
}

/// `POST <base>/revoke` (RFC 7009): 200 whether or not the token existed.
async fn revoke(State(app): State<App>, headers: HeaderMap, body: Bytes) -> Response {
    let f = form(&body);
    let get = |k: &str| f.get(k).cloned();
    let req = RevokeRequest {
        token: get("token"),
        token_type_hint: get("token_type_hint"),
        client_id: get("client_id"),
        client_secret: get("client_secret"),
    };
    let basic = basic_credentials(&headers);
    let used_basic = basic.is_some();
    match app.revoke_endpoint(&req, basic).await {
        Ok(()) => no_store(StatusCode::OK.into_response()),
        Err(e) => oauth_error(e, used_basic),
    }
}

/// `GET /.well-known/oauth-authorization-server` (RFC 8414).
pub async fn metadata(State(app): State<App>) -> Response {
    let base = app.signin_base_url();
    let scopes: Vec<String> = nubis_model::scope::Area::ALL
        .iter()
        .flat_map(|a| [format!("{}:read_only", a.name()), format!("{}:read_write", a.name())])
        .chain(["*".to_string()])
        .collect();
    let doc = json!({
        "issuer": app.public_url(),
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "revocation_endpoint": format!("{base}/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "scopes_supported": scopes,
        "service_documentation": format!("{}/v4/openapi.json", app.public_url()),
    });
    crate::json::Json(doc).into_response()
}
