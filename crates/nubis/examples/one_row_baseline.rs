//! The comparison point of the scale benchmark (`bench/scale/run.sh`): a minimal axum server that
//! reads one VPC row by primary key from the same database nubis serves (PostgreSQL through
//! sqlx, SQLite through rusqlite with a few reader connections) and answers it as JSON. No
//! authentication, no subnets, no events.
//!
//! Usage: one_row_baseline ADDR DATABASE_URL   (`postgres://...` or `sqlite://PATH`)

use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Serialize)]
struct Vpc {
    id: i64,
    label: String,
    description: String,
    region: String,
    created: String,
    updated: String,
}

const SQL: &str = "SELECT id, label, description, region, created, updated FROM vpcs WHERE id = $1";

#[derive(Clone)]
enum Db {
    Pg(sqlx::PgPool),
    Lite(Arc<Vec<Mutex<rusqlite::Connection>>>),
}

async fn get_one(State(db): State<Db>, Path(id): Path<i64>) -> Result<Json<Vpc>, StatusCode> {
    let vpc = match db {
        Db::Pg(pool) => {
            let row: Option<(i64, String, String, String, String, String)> = sqlx::query_as(SQL)
                .bind(id)
                .fetch_optional(&pool)
                .await
                .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
            row.map(|(id, label, description, region, created, updated)| Vpc {
                id,
                label,
                description,
                region,
                created,
                updated,
            })
        }
        Db::Lite(conns) => {
            let n = conns.len();
            let start = (id as usize) % n;
            let guard = (0..n)
                .find_map(|i| conns[(start + i) % n].try_lock().ok())
                .unwrap_or_else(|| conns[start].lock().expect("lock"));
            let mut stmt = guard.prepare_cached(SQL).map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
            let mut rows = stmt.query([id]).map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
            rows.next().map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?.map(|r| Vpc {
                id: r.get(0).unwrap_or_default(),
                label: r.get(1).unwrap_or_default(),
                description: r.get(2).unwrap_or_default(),
                region: r.get(3).unwrap_or_default(),
                created: r.get(4).unwrap_or_default(),
                updated: r.get(5).unwrap_or_default(),
            })
        }
    };
    vpc.map(Json).ok_or(StatusCode::NOT_FOUND)
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:18192".into());
    let url = args.next().expect("usage: one_row_baseline ADDR DATABASE_URL");
    let db = if url.starts_with("postgres") {
        Db::Pg(sqlx::postgres::PgPoolOptions::new().max_connections(16).connect(&url).await.expect("connect"))
    } else {
        let path = url.trim_start_matches("sqlite:").trim_start_matches("//");
        let conns = (0..4)
            .map(|_| {
                let c = rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                    .expect("open");
                c.execute_batch("PRAGMA busy_timeout = 5000;").expect("pragma");
                Mutex::new(c)
            })
            .collect();
        Db::Lite(Arc::new(conns))
    };
    let app = Router::new().route("/v4/vpcs/{id}", get(get_one)).with_state(db);
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    println!("one-row baseline listening on http://{addr}");
    axum::serve(listener, app).await.expect("serve");
}
