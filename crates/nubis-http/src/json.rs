//! JSON answers: the body is written into one growing `Vec` (serde_json's fastest writer) and
//! handed to the response as it is, with `Content-Type: application/json`.

use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nubis_model::rendered::Rendered;
use serde::Serialize;

/// A JSON response body (responses only; request bodies are read by `ApiJson`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(1024);
        match serde_json::to_writer(&mut body, &self.0) {
            Ok(()) => answer(axum::body::Body::from(body)),
            Err(e) => failed(e),
        }
    }
}

/// A JSON response body whose JSON is written once for every answer that sends it.
pub struct JsonOnce<T>(pub Arc<Rendered<T>>);

impl<T: Serialize> IntoResponse for JsonOnce<T> {
    fn into_response(self) -> Response {
        match self.0.json() {
            Ok(json) => answer(axum::body::Body::from(axum::body::Bytes::from_owner(json))),
            Err(e) => failed(e),
        }
    }
}

fn answer(body: axum::body::Body) -> Response {
    let mut res = Response::new(body);
    res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    res
}

fn failed(e: serde_json::Error) -> Response {
    tracing::error!(error = %e, "response could not be encoded as JSON");
    StatusCode::INTERNAL_SERVER_ERROR.into_response()
}
