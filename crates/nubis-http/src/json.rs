//! JSON answers: the body is written into one growing `Vec` (serde_json's fastest writer) and
//! handed to the response as it is, with `Content-Type: application/json`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A JSON response body (responses only; request bodies are read by `ApiJson`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(1024);
        match serde_json::to_writer(&mut body, &self.0) {
            Ok(()) => {
                let mut res = Response::new(axum::body::Body::from(body));
                res.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                res
            }
            Err(e) => {
                tracing::error!(error = %e, "response could not be encoded as JSON");
                StatusCode::INTERNAL_SERVER_ERROR.into_response()
            }
        }
    }
}
