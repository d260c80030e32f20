//! The error envelope: `nubis_model::Error` becomes a status code and
//! `{"errors":[{"field":...,"reason":...}]}`, here and nowhere else.

use crate::json::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nubis_model::{Error, FieldError};
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorEnvelope {
    pub errors: Vec<FieldError>,
}

/// An error on its way to the client.
#[derive(Debug)]
pub struct ApiError(pub Error);

pub type ApiResult<T> = Result<T, ApiError>;

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError(e)
    }
}

impl ApiError {
    pub fn status(status: StatusCode, field: Option<&str>, reason: impl Into<String>) -> Response {
        envelope(status, vec![FieldError { field: field.map(String::from), reason: reason.into() }])
    }
}

pub fn envelope(status: StatusCode, errors: Vec<FieldError>) -> Response {
    (status, Json(ErrorEnvelope { errors })).into_response()
}

/// Seconds a client is asked to wait (`Retry-After`) when the service is unavailable.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 2;

/// A 503 with the envelope and `Retry-After`.
pub fn unavailable(reason: &str, retry_after_secs: u64) -> Response {
    let mut r = ApiError::status(StatusCode::SERVICE_UNAVAILABLE, None, reason);
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
    r
}

/// Internal details of a 5xx, kept in the response extensions so the access log can record
/// them; they are never sent to the client.
#[derive(Debug, Clone)]
pub struct InternalDetail(pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self.0 {
            Error::Invalid(errors) => envelope(StatusCode::BAD_REQUEST, errors),
            Error::NotFound => ApiError::status(StatusCode::NOT_FOUND, None, "Not found"),
            Error::Unauthenticated(reason) => ApiError::status(StatusCode::UNAUTHORIZED, None, reason),
            Error::Forbidden(reason) => ApiError::status(StatusCode::FORBIDDEN, None, reason),
            Error::RateLimited { retry_after_secs } => {
                let mut r = ApiError::status(StatusCode::TOO_MANY_REQUESTS, None, "Too many requests");
                if let Ok(v) = HeaderValue::from_str(&retry_after_secs.to_string()) {
                    r.headers_mut().insert(header::RETRY_AFTER, v);
                }
                r
            }
            Error::Unique(_) => {
                ApiError::status(StatusCode::BAD_REQUEST, None, "An entity with these values already exists")
            }
            Error::Retry => unavailable("Please try again", 1),
            // The database unreachable, the server stopping: the client may try again shortly.
            Error::Unavailable(reason) => unavailable(&reason, UNAVAILABLE_RETRY_AFTER_SECS),
            Error::Internal(detail) => {
                let mut r = ApiError::status(StatusCode::INTERNAL_SERVER_ERROR, None, "Internal server error");
                r.extensions_mut().insert(InternalDetail(detail));
                r
            }
        }
    }
}
