//! The request pipeline around every handler: request id, access log line, metrics, and the
//! response headers every answer carries (`X-Request-Id`, `X-Spec-Version`, `X-OAuth-Scopes`,
//! `X-Accepted-OAuth-Scopes`, rate-limit headers). No authorization happens here.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use nubis_app::Op;

use crate::error::InternalDetail;
use crate::meta::RequestMeta;

pub const SPEC_VERSION: &str = "4.176.0";

/// Which operation serves each (method, route template), built from the OpenAPI document.
#[derive(Default)]
pub struct RouteOps(pub HashMap<(Method, String), Op>);

static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

fn request_id(req: &Request) -> String {
    if let Some(v) = req.headers().get(&X_REQUEST_ID).and_then(|v| v.to_str().ok())
        && !v.is_empty()
        && v.len() <= 128
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    {
        return v.to_string();
    }
    uuid::Uuid::new_v4().to_string()
}

/// The outer layer: runs for every request, matched or not.
pub async fn pipeline(State(ops): State<Arc<RouteOps>>, mut req: Request, next: Next) -> Response {
    let start = Instant::now();
    let id = request_id(&req);
    let method = req.method().clone();
    let meta = Arc::new(RequestMeta::default());
    req.extensions_mut().insert(meta.clone());
    let mut res = next.run(req).await;
    let status = res.status().as_u16();
    let route = meta.route.get().map(String::as_str).unwrap_or("unmatched");
    let h = res.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&id) {
        h.insert(X_REQUEST_ID.clone(), v);
    }
    h.insert("x-spec-version", HeaderValue::from_static(SPEC_VERSION));
    if let Some(op) = ops.0.get(&(method.clone(), route.to_string())) {
        let accepted = op.policy().accepted_scopes();
        if let Ok(v) = HeaderValue::from_str(&accepted) {
            h.insert("x-accepted-oauth-scopes", v);
        }
    }
    if let Some(s) = meta.scopes.get()
        && let Ok(v) = HeaderValue::from_str(s)
    {
        h.insert("x-oauth-scopes", v);
    }
    if let Some(r) = meta.rate.get()
        && r.limit > 0
    {
        h.insert("x-ratelimit-limit", HeaderValue::from(r.limit));
        h.insert("x-ratelimit-remaining", HeaderValue::from(r.remaining));
        h.insert("x-ratelimit-reset", HeaderValue::from(r.reset));
    }
    let elapsed = start.elapsed();
    record_metrics(&method, route, status, elapsed.as_secs_f64());
    if let Some(InternalDetail(detail)) = res.extensions().get::<InternalDetail>() {
        tracing::error!(target: "nubis::access", request_id = %id, method = %method, route, status, latency_us = elapsed.as_micros() as u64, error = %detail, "request failed");
    } else {
        tracing::info!(target: "nubis::access", request_id = %id, method = %method, route, status, latency_us = elapsed.as_micros() as u64, "request");
    }
    res
}

/// The inner layer, run after routing: records which route template matched.
pub async fn record_route(req: Request, next: Next) -> Response {
    if let (Some(p), Some(meta)) = (req.extensions().get::<MatchedPath>(), req.extensions().get::<Arc<RequestMeta>>()) {
        let _ = meta.route.set(p.as_str().to_string());
    }
    next.run(req).await
}

static PROMETHEUS: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs the process-wide Prometheus recorder (once) and returns its handle.
pub fn prometheus() -> Option<&'static PrometheusHandle> {
    PROMETHEUS
        .get_or_init(|| {
            let buckets = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5];
            PrometheusBuilder::new().set_buckets(&buckets).ok().and_then(|b| b.install_recorder().ok())
        })
        .as_ref()
}

fn status_label(status: u16) -> &'static str {
    const CODES: &[(u16, &str)] = &[
        (200, "200"),
        (204, "204"),
        (400, "400"),
        (401, "401"),
        (403, "403"),
        (404, "404"),
        (405, "405"),
        (413, "413"),
        (429, "429"),
        (500, "500"),
        (503, "503"),
    ];
    CODES.iter().find(|(c, _)| *c == status).map(|(_, s)| *s).unwrap_or("other")
}

fn record_metrics(method: &Method, route: &str, status: u16, secs: f64) {
    let labels = [
        ("method", method.as_str().to_string()),
        ("route", route.to_string()),
        ("status", status_label(status).to_string()),
    ];
    metrics::counter!("nubis_http_requests_total", &labels).increment(1);
    metrics::histogram!("nubis_http_request_duration_seconds", &labels).record(secs);
}
