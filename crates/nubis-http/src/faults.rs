//! The request-pipeline step that applies the HTTP faults injected through the test controls
//! (`POST /nubis/v1/faults`): after routing, before the handler, see
//! [`crate::middleware::RouteLayer`].

use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_model::Error;

use crate::error::ApiError;
use crate::extract::bearer;

/// Whether an injected HTTP fault may apply to this request (one atomic load when no fault is
/// registered); [`apply_faults`] then decides.
pub fn fault_candidate(app: &App, method: &str, template: &str) -> bool {
    app.controls.faults.http_candidates(method, template).0
}

/// Applies injected HTTP faults to a request of the public API: waits `latency_ms`, then answers the fault's
/// status with the error envelope, or lets the request through to `inner`.
pub async fn apply_faults<S>(app: App, template: String, req: Request, inner: S) -> Response
where
    S: tower::Service<Request, Response = Response, Error = std::convert::Infallible>,
{
    use tower::ServiceExt;
    let faults = &app.controls.faults;
    let method = req.method().as_str().to_string();
    let (any, scoped) = faults.http_candidates(&method, &template);
    let pass = |req| async move { inner.oneshot(req).await.unwrap_or_else(|never| match never {}) };
    if !any {
        return pass(req).await;
    }
    let (req, account) = if scoped {
        let (parts, body) = req.into_parts();
        let account = match bearer(&parts) {
            Some(t) => app.authenticate(t).await.ok().map(|a| a.account_id()),
            None => None,
        };
        (Request::from_parts(parts, body), account)
    } else {
        (req, None)
    };
    let Some(f) = faults.take_http(&method, &template, account) else { return pass(req).await };
    if f.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(f.latency_ms)).await;
    }
    let Some(status) = f.status else { return pass(req).await };
    let mut res = match status {
        429 => ApiError(Error::RateLimited { retry_after_secs: f.retry_after }).into_response(),
        500 => ApiError::status(StatusCode::INTERNAL_SERVER_ERROR, None, "Internal server error"),
        502 => ApiError::status(StatusCode::BAD_GATEWAY, None, "Bad gateway"),
        504 => ApiError::status(StatusCode::GATEWAY_TIMEOUT, None, "Gateway timeout"),
        _ => ApiError::status(StatusCode::SERVICE_UNAVAILABLE, None, "Service unavailable"),
    };
    res.headers_mut().insert("x-nubis-fault", HeaderValue::from_static("injected"));
    res
}
