//! The comparison point of the API benchmark (`bench/api/run.sh`): a minimal axum server that
//! holds token records in memory (`RwLock<HashMap>`), with no authentication, storage or events.
//! It answers the same three requests as nubis in the benchmark: one record, a page of 100, and
//! a create.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use axum::extract::{Path, State};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::RwLock;

#[derive(Clone, Serialize)]
struct Token {
    id: i64,
    label: String,
    scopes: String,
    created: String,
    expiry: Option<String>,
    token: Option<String>,
}

#[derive(Deserialize)]
struct NewToken {
    label: Option<String>,
}

#[derive(Clone, Default)]
struct Db {
    next: Arc<AtomicI64>,
    tokens: Arc<RwLock<BTreeMap<i64, Token>>>,
}

fn token(id: i64, label: String) -> Token {
    Token { id, label, scopes: "*".into(), created: "2026-11-22T00:00:00".into(), expiry: None, token: None }
}

async fn get_one(State(db): State<Db>, Path(id): Path<i64>) -> Result<Json<Token>, axum::http::StatusCode> {
    db.tokens.read().await.get(&id).cloned().map(Json).ok_or(axum::http::StatusCode::NOT_FOUND)
}

async fn list(State(db): State<Db>) -> Json<serde_json::Value> {
    let map = db.tokens.read().await;
    let data: Vec<&Token> = map.values().take(100).collect();
    Json(json!({"data": data, "page": 1, "pages": map.len().div_ceil(100).max(1), "results": map.len()}))
}

async fn create(State(db): State<Db>, Json(n): Json<NewToken>) -> Result<Json<Token>, axum::http::StatusCode> {
    let label = n.label.unwrap_or_default();
    if label.is_empty() || label.len() > 100 {
        return Err(axum::http::StatusCode::BAD_REQUEST);
    }
    let id = db.next.fetch_add(1, Ordering::Relaxed);
    let t = token(id, label);
    db.tokens.write().await.insert(id, t.clone());
    Ok(Json(t))
}

#[tokio::main]
async fn main() {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:18190".into());
    let db = Db { next: Arc::new(AtomicI64::new(1)), ..Default::default() };
    for _ in 0..101 {
        let id = db.next.fetch_add(1, Ordering::Relaxed);
        db.tokens.write().await.insert(id, token(id, format!("token-{id}")));
    }
    let app = Router::new()
        .route("/v4/profile/tokens", get(list).post(create))
        .route("/v4/profile/tokens/{id}", get(get_one))
        .with_state(db);
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    println!("baseline listening on http://{addr}");
    axum::serve(listener, app).await.expect("serve");
}
