//! The request pipeline around every handler: request id, access log line, metrics, and the
//! response headers every answer carries (`X-Request-Id`, `X-Spec-Version`, `X-OAuth-Scopes`,
//! `X-Accepted-OAuth-Scopes`, rate-limit headers). No authorization happens here.
//!
//! Everything per route (accepted scopes, metric handles) is prepared once, so a request costs
//! no allocation here beyond its request id.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue, Method};
use axum::response::Response;
use metrics::{Counter, Histogram};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use nubis_app::Op;

use crate::error::InternalDetail;
use crate::meta::RequestMeta;

pub const SPEC_VERSION: &str = "4.176.0";

/// Metric handles of one (route index, method, status).
type MetricHandles = HashMap<(usize, Method, u16), (Counter, Histogram)>;

/// What is known about each route before any request arrives.
#[derive(Default)]
pub struct Routes {
    /// Route template -> index.
    index: HashMap<String, usize>,
    /// Per route: its template and, per method, the `X-Accepted-OAuth-Scopes` value.
    routes: Vec<(String, HashMap<Method, HeaderValue>)>,
    /// Metric handles per (route index, method, status).
    metrics: RwLock<MetricHandles>,
}

impl Routes {
    /// Builds the table from the documented operations: (method, template, operation).
    pub fn new(ops: impl IntoIterator<Item = (Method, String, Op)>) -> Routes {
        let mut r = Routes::default();
        for (m, path, op) in ops {
            let n = r.routes.len();
            let i = *r.index.entry(path.clone()).or_insert(n);
            if i == r.routes.len() {
                r.routes.push((path, HashMap::new()));
            }
            let accepted = op.policy().accepted_scopes();
            if let Ok(v) = HeaderValue::from_str(&accepted) {
                r.routes[i].1.insert(m, v);
            }
        }
        r
    }

    fn route_index(&self, path: Option<&MatchedPath>) -> Option<usize> {
        path.and_then(|p| self.index.get(p.as_str()).copied())
    }

    fn observe(&self, route: Option<usize>, path: Option<&MatchedPath>, method: &Method, status: u16, secs: f64) {
        let key = (route.unwrap_or(usize::MAX), method.clone(), status);
        if let Ok(m) = self.metrics.read()
            && let Some((c, h)) = m.get(&key)
        {
            c.increment(1);
            h.record(secs);
            return;
        }
        let name = match (route, path) {
            (Some(i), _) => self.routes[i].0.clone(),
            (None, Some(p)) => p.as_str().to_string(),
            (None, None) => "unmatched".to_string(),
        };
        let labels = [("method", method.as_str().to_string()), ("route", name), ("status", status.to_string())];
        let c = metrics::counter!("nubis_http_requests_total", &labels);
        let h = metrics::histogram!("nubis_http_request_duration_seconds", &labels);
        c.increment(1);
        h.record(secs);
        // Only documented routes are kept (unmatched paths are unbounded).
        if route.is_some()
            && let Ok(mut m) = self.metrics.write()
        {
            m.insert(key, (c, h));
        }
    }
}

static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
static X_SPEC_VERSION: HeaderName = HeaderName::from_static("x-spec-version");
static X_ACCEPTED_SCOPES: HeaderName = HeaderName::from_static("x-accepted-oauth-scopes");
static X_OAUTH_SCOPES: HeaderName = HeaderName::from_static("x-oauth-scopes");
static X_RATELIMIT_LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
static X_RATELIMIT_REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
static X_RATELIMIT_RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");

fn request_id(req: &Request) -> HeaderValue {
    if let Some(v) = req.headers().get(&X_REQUEST_ID)
        && !v.is_empty()
        && v.len() <= 128
        && v.as_bytes().iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        return v.clone();
    }
    // A random per-process prefix and a counter: unique, and cheaper than a random UUID.
    static PREFIX: OnceLock<String> = OnceLock::new();
    static N: AtomicU64 = AtomicU64::new(0);
    let prefix = PREFIX.get_or_init(|| uuid::Uuid::new_v4().simple().to_string()[..12].to_string());
    let id = format!("{prefix}-{:010x}", N.fetch_add(1, Ordering::Relaxed));
    HeaderValue::from_str(&id).unwrap_or_else(|_| HeaderValue::from_static("unknown"))
}

/// The outer layer: runs for every request, matched or not. A plain service (one boxed future
/// per request, no clone of the router).
#[derive(Clone)]
pub struct PipelineLayer(pub Arc<Routes>);

impl<S> tower::Layer<S> for PipelineLayer {
    type Service = Pipeline<S>;
    fn layer(&self, inner: S) -> Pipeline<S> {
        Pipeline { inner, routes: self.0.clone() }
    }
}

#[derive(Clone)]
pub struct Pipeline<S> {
    inner: S,
    routes: Arc<Routes>,
}

impl<S> tower::Service<Request> for Pipeline<S>
where
    S: tower::Service<Request, Response = Response, Error = std::convert::Infallible>,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = std::pin::Pin<Box<dyn Future<Output = Result<Response, std::convert::Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let start = Instant::now();
        let id = request_id(&req);
        let method = req.method().clone();
        let meta = Arc::new(RequestMeta::default());
        req.extensions_mut().insert(meta.clone());
        let routes = self.routes.clone();
        let answer = self.inner.call(req);
        Box::pin(async move {
            let res = answer.await?;
            Ok(finish(&routes, start, id, method, &meta, res))
        })
    }
}

/// The headers every answer carries, the metrics and the access-log line.
fn finish(
    routes: &Routes,
    start: Instant,
    id: HeaderValue,
    method: Method,
    meta: &RequestMeta,
    mut res: Response,
) -> Response {
    let status = res.status().as_u16();
    let path = meta.route.get();
    let route = routes.route_index(path);
    let h = res.headers_mut();
    h.insert(X_REQUEST_ID.clone(), id.clone());
    h.insert(X_SPEC_VERSION.clone(), HeaderValue::from_static(SPEC_VERSION));
    if let Some(i) = route
        && let Some(v) = routes.routes[i].1.get(&method)
    {
        h.insert(X_ACCEPTED_SCOPES.clone(), v.clone());
    }
    if let Some(s) = meta.scopes.get()
        && let Ok(v) = HeaderValue::from_str(s)
    {
        h.insert(X_OAUTH_SCOPES.clone(), v);
    }
    if let Some(r) = meta.rate.get()
        && r.limit > 0
    {
        h.insert(X_RATELIMIT_LIMIT.clone(), HeaderValue::from(r.limit));
        h.insert(X_RATELIMIT_REMAINING.clone(), HeaderValue::from(r.remaining));
        h.insert(X_RATELIMIT_RESET.clone(), HeaderValue::from(r.reset));
    }
    let elapsed = start.elapsed();
    routes.observe(route, path, &method, status, elapsed.as_secs_f64());
    let route_name = path.map(MatchedPath::as_str).unwrap_or("unmatched");
    let request_id = id.to_str().unwrap_or_default();
    let latency_us = elapsed.as_micros() as u64;
    if let Some(InternalDetail(detail)) = res.extensions().get::<InternalDetail>() {
        tracing::error!(target: "nubis::access", request_id = %request_id, method = %method, route = %route_name, status, latency_us, error = %detail, "request failed");
    } else {
        tracing::info!(target: "nubis::access", request_id = %request_id, method = %method, route = %route_name, status, latency_us, "request");
    }
    res
}

/// The inner layer, run after routing: records which route template matched, and sends the
/// request through the test controls' injected faults when one may apply. A plain service (no
/// boxing, no clone of the route) on the path of every request.
#[derive(Clone, Default)]
pub struct RouteLayer {
    /// The application whose injected faults apply (`None`: the test controls are off).
    pub faults: Option<nubis_app::App>,
}

impl<S> tower::Layer<S> for RouteLayer {
    type Service = RouteService<S>;
    fn layer(&self, inner: S) -> RouteService<S> {
        RouteService { inner, faults: self.faults.clone() }
    }
}

#[derive(Clone)]
pub struct RouteService<S> {
    inner: S,
    faults: Option<nubis_app::App>,
}

type Faulted = std::pin::Pin<Box<dyn Future<Output = Result<Response, std::convert::Infallible>> + Send>>;

impl<S> tower::Service<Request> for RouteService<S>
where
    S: tower::Service<Request, Response = Response, Error = std::convert::Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = futures_util::future::Either<S::Future, Faulted>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let path = req.extensions().get::<MatchedPath>();
        if let (Some(p), Some(meta)) = (path, req.extensions().get::<Arc<RequestMeta>>()) {
            let _ = meta.route.set(p.clone());
        }
        if let (Some(app), Some(p)) = (&self.faults, path)
            && crate::faults::fault_candidate(app, req.method().as_str(), p.as_str())
        {
            let (app, template) = (app.clone(), p.as_str().to_string());
            // The ready service goes with the request; this one is replaced by a fresh clone.
            let fresh = self.inner.clone();
            let inner = std::mem::replace(&mut self.inner, fresh);
            return futures_util::future::Either::Right(Box::pin(async move {
                Ok(crate::faults::apply_faults(app, template, req, inner).await)
            }));
        }
        futures_util::future::Either::Left(self.inner.call(req))
    }
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
