//! Console sessions, kept in memory (a restart signs everyone out of the console; signing in
//! again skips the password while the authorization server's own session lasts).
//!
//! The cookie holds a random id; the server keeps, under the id's SHA-256, the OAuth access
//! token the sign-in obtained, the session's CSRF token and its expiry. A request is signed in
//! while the session lasts and its token still authenticates, as a bearer token would at the API.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nubis_app::Actor;
use nubis_app::auth::{hash_secret_hex, new_secret};
use nubis_model::Timestamp;

use crate::Console;
use crate::form::Fields;
use crate::render::{Nav, message};

pub const SESSION_COOKIE: &str = "nubis_console";
pub const SIGNIN_COOKIE: &str = "nubis_console_signin";

pub struct Session {
    pub token: String,
    pub csrf: String,
    pub expiry: Timestamp,
}

/// A sign-in under way: the PKCE verifier, kept until the authorization server redirects back.
pub struct Pending {
    pub verifier: String,
    pub expiry: Timestamp,
}

#[derive(Default)]
pub struct Sessions {
    live: Mutex<HashMap<String, Session>>,
    pending: Mutex<HashMap<String, Pending>>,
}

impl Sessions {
    /// Starts a session; returns the cookie value.
    pub fn create(&self, token: String, expiry: Timestamp) -> String {
        let id = new_secret();
        let now = Timestamp::now();
        let mut m = self.live.lock().unwrap_or_else(|e| e.into_inner());
        m.retain(|_, s| s.expiry > now);
        m.insert(hash_secret_hex(&id), Session { token, csrf: new_secret(), expiry });
        id
    }

    /// The access token and CSRF token of a live session.
    pub fn get(&self, id: &str) -> Option<(String, String)> {
        let m = self.live.lock().unwrap_or_else(|e| e.into_inner());
        m.get(&hash_secret_hex(id)).filter(|s| s.expiry > Timestamp::now()).map(|s| (s.token.clone(), s.csrf.clone()))
    }

    /// Ends a session; returns its access token.
    pub fn end(&self, id: &str) -> Option<String> {
        self.live.lock().unwrap_or_else(|e| e.into_inner()).remove(&hash_secret_hex(id)).map(|s| s.token)
    }

    /// Remembers a sign-in under way; returns its `state`.
    pub fn pending_add(&self, verifier: String) -> String {
        let state = new_secret();
        let now = Timestamp::now();
        let mut m = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        m.retain(|_, p| p.expiry > now);
        m.insert(state.clone(), Pending { verifier, expiry: now.plus_seconds(600) });
        state
    }

    /// Takes the verifier of a sign-in under way (once).
    pub fn pending_take(&self, state: &str) -> Option<String> {
        let p = self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(state)?;
        (p.expiry > Timestamp::now()).then_some(p.verifier)
    }
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

/// Sets (or with `max_age` 0, clears) a console cookie: HttpOnly, SameSite=Lax, scoped to the
/// console's path, Secure when the public URL is https.
pub fn set_cookie(r: &mut Response, c: &Console, name: &str, value: &str, max_age: i64) {
    let path = if c.base.is_empty() { "/" } else { c.base.as_str() };
    let v = cookie::Cookie::build((name, value))
        .path(path)
        .http_only(true)
        .same_site(cookie::SameSite::Lax)
        .max_age(cookie::time::Duration::seconds(max_age))
        .secure(c.app.public_url().starts_with("https://"))
        .build()
        .to_string();
    if let Ok(v) = HeaderValue::from_str(&v) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
}

pub fn redirect(to: &str) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    r
}

/// A signed-in request: the user's actor and what the pages need.
pub struct Signed {
    pub actor: Actor,
    pub nav: Nav,
}

impl Signed {
    pub fn nav(&self, active: &'static str) -> Nav {
        Nav { active, ..self.nav.clone() }
    }
}

fn to_signin(c: &Console, parts: &Parts) -> Response {
    let to = c.p("/signin");
    if parts.headers.contains_key("hx-request") {
        // htmx follows this header with a full page load.
        let mut r = StatusCode::OK.into_response();
        if let Ok(v) = HeaderValue::from_str(&to) {
            r.headers_mut().insert("hx-redirect", v);
        }
        return r;
    }
    redirect(&to)
}

impl FromRequestParts<Console> for Signed {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, c: &Console) -> Result<Self, Response> {
        let id = cookie(&parts.headers, SESSION_COOKIE).ok_or_else(|| to_signin(c, parts))?;
        let (token, csrf) = c.sessions.get(&id).ok_or_else(|| to_signin(c, parts))?;
        let actor = match c.app.authenticate(&token).await {
            Ok(a) => a,
            Err(nubis_model::Error::Unauthenticated(_)) => {
                // The token expired or was revoked: the session ends with it.
                c.sessions.end(&id);
                return Err(to_signin(c, parts));
            }
            Err(e) => return Err(crate::render::error_page(c, None, e)),
        };
        let nav = Nav {
            base: c.base.clone(),
            root: c.p("/"),
            user: actor.username().to_string(),
            restricted: actor.restricted(),
            csrf,
            active: "",
        };
        Ok(Signed { actor, nav })
    }
}

/// A signed-in POST whose form carried the session's CSRF token.
pub struct Post {
    pub s: Signed,
    pub f: Fields,
}

fn same(a: &str, b: &str) -> bool {
    bool::from(subtle::ConstantTimeEq::ct_eq(a.as_bytes(), b.as_bytes()))
}

impl FromRequest<Console> for Post {
    type Rejection = Response;

    async fn from_request(req: Request, c: &Console) -> Result<Self, Response> {
        let (mut parts, body) = req.into_parts();
        if parts.method != Method::POST {
            return Err(StatusCode::METHOD_NOT_ALLOWED.into_response());
        }
        let s = Signed::from_request_parts(&mut parts, c).await?;
        let req = Request::from_parts(parts, body);
        let bytes = Bytes::from_request(req, c)
            .await
            .map_err(|_| message(c, Some(s.nav.clone()), StatusCode::PAYLOAD_TOO_LARGE, "The form is too large."))?;
        let f = Fields::parse(&bytes);
        if !same(f.get("csrf"), &s.nav.csrf) || s.nav.csrf.is_empty() {
            return Err(message(
                c,
                Some(s.nav.clone()),
                StatusCode::FORBIDDEN,
                "This form expired or did not come from the console. Go back, reload the page and try again.",
            ));
        }
        Ok(Post { s, f })
    }
}
