//! The web console: pages rendered on the server from askama templates (checked at compile
//! time), with a vendored htmx for live updates, all embedded in the binary. Every page is a
//! client of the application layer ([`App`]) with the signed-in user's own [`nubis_app::Actor`],
//! exactly as the API's handlers are: a restricted user sees and can do what the API allows.
//!
//! Sign-in: the console is a public OAuth client (PKCE) of nubis' own authorization server; the
//! session is a random id in an HttpOnly cookie, kept server-side in memory ([`session`]). Every
//! change is a POST carrying the session's CSRF token; every answer carries a strict
//! Content-Security-Policy and forbids framing.

mod assets;
mod form;
mod pages;
mod render;
mod session;
mod signin;
mod svg;

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{get, post};
use nubis_app::App;

pub use session::Sessions;

/// What every handler gets: the application, the console's path prefix and the sessions.
#[derive(Clone)]
pub struct Console {
    pub app: App,
    /// Empty for the site's root, otherwise `/x`.
    pub base: String,
    pub sessions: Arc<Sessions>,
}

impl Console {
    /// A console path: `p("/instances")` is `/instances` at the root, `/x/instances` under `/x`.
    pub fn p(&self, path: &str) -> String {
        if path == "/" && !self.base.is_empty() { self.base.clone() } else { format!("{}{path}", self.base) }
    }
}

/// The console's routes with their full paths (under `console.base_path`).
pub fn router(app: App) -> Router {
    let base = app.console_base_path();
    let c = Console { app, base: base.clone(), sessions: Arc::new(Sessions::default()) };
    let p = |s: &str| c.p(s);
    Router::new()
        .route(&p("/"), get(pages::dashboard::show))
        .route(&p("/assets/htmx.min.js"), get(assets::htmx))
        .route(&p("/assets/console.css"), get(assets::css))
        .route(&p("/signin"), get(signin::start))
        .route(&p("/callback"), get(signin::callback))
        .route(&p("/signout"), post(signin::signout))
        .merge(pages::instances::routes(&c))
        .merge(pages::vpcs::routes(&c))
        .merge(pages::firewalls::routes(&c))
        .merge(pages::balancers::routes(&c))
        .merge(pages::events::routes(&c))
        .merge(pages::walkthrough::routes(&c))
        .merge(pages::users::routes(&c))
        .merge(pages::apps::routes(&c))
        .merge(pages::account::routes(&c))
        .merge(pages::transfers::routes(&c))
        .layer(axum::middleware::from_fn(headers))
        .with_state(c)
}

/// The console's CSP: scripts, styles, images and requests from this origin only; no inline
/// script or style, no framing, forms post only here.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

async fn headers(req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    let h = r.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    r
}
