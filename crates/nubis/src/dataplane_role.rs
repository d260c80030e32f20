//! `nubis serve --role dataplane`: balancer listeners without the API. The HTTP address answers
//! `/healthz`, with what this process serves (its owner id in the balancer leases, the balancers
//! it owns and the sockets it has bound), and `/metrics` (Prometheus: balancers owned, listeners
//! bound).

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use nubis_app::App;
use serde_json::{Value, json};

use crate::dataplane::Dataplane;

struct Status {
    app: App,
    /// Taken when the process stops.
    dataplane: std::sync::Mutex<Option<Dataplane>>,
}

/// Runs the data plane and its health endpoint until `shutdown`, then stops listening and frees
/// this process's balancers.
pub async fn run(
    app: App,
    listen: SocketAddr,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(listen).await.with_context(|| format!("binding {listen}"))?;
    let addr = listener.local_addr()?;
    let status =
        Arc::new(Status { app: app.clone(), dataplane: std::sync::Mutex::new(Some(crate::dataplane::start(&app))) });
    let router = Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .fallback(|| async { (axum::http::StatusCode::NOT_FOUND, Json(not_found())) })
        .with_state(Arc::clone(&status));
    println!("nubis: data plane only (no API); its health at /healthz");
    println!("nubis: listening on http://{addr}");
    let _ = std::io::stdout().flush();
    tracing::info!(%addr, "data-plane process listening");
    axum::serve(listener, router).with_graceful_shutdown(shutdown).await?;
    let dataplane = status.dataplane.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(dp) = dataplane {
        dp.stop().await;
    }
    app.store().close().await;
    tracing::info!("stopped");
    Ok(())
}

/// Prometheus text: `nubis_dataplane_balancers_owned` and `nubis_dataplane_listeners`, read now.
async fn metrics(State(s): State<Arc<Status>>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let counts = {
        let guard = s.dataplane.lock().unwrap_or_else(|e| e.into_inner());
        guard.as_ref().map(|dp| {
            let listening = dp.handle.snapshot().configs.iter().filter(|c| c.listening.is_some()).count();
            (dp.ownership.served().len(), listening)
        })
    };
    let (owned, listening) = counts.unwrap_or_default();
    // The recorder is installed by its first use: before the gauges are set.
    let recorder = nubis_http::middleware::prometheus();
    metrics::gauge!("nubis_dataplane_balancers_owned").set(owned as f64);
    metrics::gauge!("nubis_dataplane_listeners").set(listening as f64);
    match recorder {
        Some(h) => ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], h.render()).into_response(),
        None => (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"errors": [{"field": null, "reason": "Metrics recorder unavailable"}]})),
        )
            .into_response(),
    }
}

fn not_found() -> Value {
    json!({"errors": [{"field": null, "reason": "Not found: this process runs the data plane only (/healthz)"}]})
}

/// 200 while the data plane runs (it keeps serving when the database is out of reach, and says
/// so in `database`).
async fn healthz(State(s): State<Arc<Status>>) -> Json<Value> {
    let (owner, leased, balancers, listening) = {
        let guard = s.dataplane.lock().unwrap_or_else(|e| e.into_inner());
        let Some(dp) = guard.as_ref() else {
            return Json(json!({"status": "stopping", "role": "dataplane"}));
        };
        let listening: Vec<Value> = dp
            .handle
            .snapshot()
            .configs
            .iter()
            .filter_map(|c| {
                c.listening
                    .map(|a| json!({"balancer_id": c.balancer_id, "config_id": c.config_id, "address": a.to_string()}))
            })
            .collect();
        (dp.ownership.owner().to_string(), dp.ownership.leased(), dp.ownership.served(), listening)
    };
    let database = if s.app.healthy().await { "ok" } else { "unreachable" };
    Json(json!({
        "status": "ok",
        "role": "dataplane",
        "database": database,
        "owner": owner,
        "leased": leased,
        "balancers": balancers,
        "listening": listening,
    }))
}
