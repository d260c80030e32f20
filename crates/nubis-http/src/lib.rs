//! nubis HTTP API: the router of every area, the extractors, the error envelope, paging and
//! X-Filter, rate limiting, the request pipeline and the generated OpenAPI document.

pub mod api;
pub mod compat;
pub mod controls;
pub mod error;
pub mod extract;
pub mod faults;
pub mod json;
pub mod list;
pub mod meta;
pub mod middleware;
pub mod openapi;
pub mod ratelimit;
pub mod routes;
pub mod signin;

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use nubis_app::{App, Op};
use tower::Layer;
use tower_http::cors::{Any, CorsLayer};
use tower_http::normalize_path::{NormalizePath, NormalizePathLayer};

pub use crate::api::{api_router, openapi_document, operations};
use crate::error::ApiError;
use crate::extract::ApiState;
use crate::middleware::Routes;
use crate::ratelimit::RateLimiter;

/// The service nubis serves: the API (under the spec's names and, through [`compat`], the hosted
/// API's), `/healthz`, `/metrics`, `/v4/openapi.json`. A trailing slash is accepted on every path.
pub fn service(app: App) -> NormalizePath<compat::Compat<Router>> {
    service_with(app, Router::new())
}

/// The same, with more routes beside the API's (the web console): they go through the same
/// request pipeline; paths they do not serve are the API's (JSON) 404.
pub fn service_with(app: App, extra: Router) -> NormalizePath<compat::Compat<Router>> {
    let limits = app.config().limits.clone();
    let state = ApiState {
        app: app.clone(),
        limiter: Arc::new(RateLimiter::new(limits.rate_limit_requests, limits.rate_limit_window_secs)),
    };
    let (router, doc) = api_router().split_for_parts();
    let routes =
        Routes::new(operations(&doc).into_iter().filter_map(|(m, p, id)| Op::from_name(&id).map(|op| (m, p, op))));
    let doc_json = Arc::new(serde_json::to_string(&openapi::contract(&doc)).unwrap_or_else(|_| "{}".into()));
    middleware::prometheus();
    let router = router
        .route(
            "/v4/openapi.json",
            get(move || {
                let d = doc_json.clone();
                async move { ([(header::CONTENT_TYPE, "application/json")], (*d).clone()) }
            }),
        )
        .nest(&app.signin_base_path(), signin::router())
        .route("/.well-known/oauth-authorization-server", get(signin::metadata))
        .route(&format!("/.well-known/oauth-authorization-server{}", app.signin_base_path()), get(signin::metadata))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics));
    // The test controls: injected faults on the public routes, and the control API itself;
    // neither exists when the controls are disabled.
    let faults = app.controls_enabled().then(|| app.clone());
    let router = router.route_layer(middleware::RouteLayer { faults });
    let router = if app.controls_enabled() {
        router.merge(controls::router().route_layer(middleware::RouteLayer::default()))
    } else {
        router
    };
    let router = router
        .fallback(|| async { ApiError::status(StatusCode::NOT_FOUND, None, "Not found") })
        .method_not_allowed_fallback(|| async {
            ApiError::status(StatusCode::METHOD_NOT_ALLOWED, None, "Method not allowed")
        })
        .with_state(state)
        .merge(if extra.has_routes() { extra.route_layer(middleware::RouteLayer::default()) } else { extra })
        .layer(DefaultBodyLimit::max(limits.max_body_bytes))
        .layer(middleware::PipelineLayer(Arc::new(routes)))
        .layer(CorsLayer::new().allow_origin(Any).allow_methods(Any).allow_headers(Any).expose_headers(Any));
    NormalizePathLayer::trim_trailing_slash().layer(compat::CompatLayer::new(limits.max_body_bytes).layer(router))
}

async fn healthz(State(s): State<ApiState>) -> Response {
    if s.app.healthy().await {
        crate::json::Json(serde_json::json!({"status": "ok"})).into_response()
    } else {
        error::unavailable("The database is unreachable", error::UNAVAILABLE_RETRY_AFTER_SECS)
    }
}

async fn metrics() -> Response {
    match middleware::prometheus() {
        Some(h) => ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], h.render()).into_response(),
        None => ApiError::status(StatusCode::SERVICE_UNAVAILABLE, None, "Metrics recorder unavailable"),
    }
}

/// Serves until `shutdown` completes, then lets in-flight requests finish.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: App,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(listener, app, Router::new(), shutdown).await
}

/// [`serve`] with more routes beside the API's (see [`service_with`]).
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    app: App,
    extra: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let svc = service_with(app, extra);
    // Responses go out at once: hyper may write a large body after its headers, and with Nagle's
    // algorithm that second write waits for the client's delayed ACK (about 40 ms per page).
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    // The connection's address is the client address of sign-in throttling and logins.
    let make = axum::ServiceExt::<Request>::into_make_service_with_connect_info::<std::net::SocketAddr>(svc);
    axum::serve(listener, make).with_graceful_shutdown(shutdown).await
}
