//! The console's static files, embedded in the binary.

use axum::http::header;
use axum::response::{IntoResponse, Response};

static HTMX: &[u8] = include_bytes!("../assets/htmx.min.js");
static CSS: &[u8] = include_bytes!("../assets/console.css");

fn asset(content_type: &'static str, body: &'static [u8]) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "public, max-age=3600")], body).into_response()
}

pub async fn htmx() -> Response {
    asset("text/javascript; charset=utf-8", HTMX)
}

pub async fn css() -> Response {
    asset("text/css; charset=utf-8", CSS)
}
