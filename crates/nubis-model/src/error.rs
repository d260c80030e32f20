//! The one error type of nubis. It knows nothing of HTTP; `nubis-http` maps it to a status code
//! and the `{"errors":[{"field","reason"}]}` envelope in one place.

use serde::Serialize;

/// One problem with a request, naming the field (dotted for nested fields) when there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FieldError {
    pub field: Option<String>,
    pub reason: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { field: Some(field.into()), reason: reason.into() }
    }
    pub fn general(reason: impl Into<String>) -> Self {
        Self { field: None, reason: reason.into() }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Invalid input or a refused state change: every problem found, at once (400).
    #[error("invalid request: {0:?}")]
    Invalid(Vec<FieldError>),
    /// The resource does not exist, or the caller may not know that it does (404).
    #[error("not found")]
    NotFound,
    /// Missing, unknown, expired or revoked credentials (401).
    #[error("unauthenticated: {0}")]
    Unauthenticated(String),
    /// Valid credentials lacking a scope, a grant or unrestricted status (403).
    #[error("forbidden: {0}")]
    Forbidden(String),
    /// Too many requests for this token (429).
    #[error("rate limited")]
    RateLimited { retry_after_secs: u64 },
    /// A uniqueness constraint refused a write. The application turns this into a field error;
    /// the string names the constraint for diagnostics only.
    #[error("unique constraint: {0}")]
    Unique(String),
    /// A transient storage conflict (serialization failure, busy database); the write is retried.
    #[error("transient storage conflict")]
    Retry,
    /// The server is shutting down or overloaded (503).
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// A fault of nubis itself (500). The detail is logged, never sent to the client.
    #[error("internal: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Invalid(vec![FieldError::new(field, reason)])
    }
    pub fn refused(reason: impl Into<String>) -> Self {
        Error::Invalid(vec![FieldError::general(reason)])
    }
    pub fn forbidden() -> Self {
        Error::Forbidden("Unauthorized".into())
    }
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        Error::Internal(detail.to_string())
    }
    /// Turns a uniqueness violation into a 400 on `field`; other errors pass through.
    pub fn unique_as(self, field: &str, reason: &str) -> Self {
        match self {
            Error::Unique(_) => Error::invalid(field, reason),
            other => other,
        }
    }
}

/// Collects every field error of a request so that all of them are reported at once.
#[derive(Debug, Default)]
pub struct Problems(Vec<FieldError>);

impl Problems {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn add(&mut self, field: impl Into<String>, reason: impl Into<String>) {
        self.0.push(FieldError::new(field, reason));
    }
    pub fn add_general(&mut self, reason: impl Into<String>) {
        self.0.push(FieldError::general(reason));
    }
    /// Records `reason` on `field` when `ok` is false.
    pub fn check(&mut self, ok: bool, field: impl Into<String>, reason: impl Into<String>) {
        if !ok {
            self.add(field, reason);
        }
    }
    /// Adds the problems of a nested value under `prefix` (`subnets[1]` + `ipv4`).
    pub fn extend_prefixed(&mut self, prefix: &str, other: Problems) {
        for e in other.0 {
            let field = match e.field {
                Some(f) if f.starts_with('[') => format!("{prefix}{f}"),
                Some(f) => format!("{prefix}.{f}"),
                None => prefix.to_string(),
            };
            self.0.push(FieldError { field: Some(field), reason: e.reason });
        }
    }
    /// Merges an `Error::Invalid` into this collection; other errors are returned.
    pub fn absorb(&mut self, r: Result<()>) -> Result<()> {
        match r {
            Ok(()) => Ok(()),
            Err(Error::Invalid(v)) => {
                self.0.extend(v);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn finish(self) -> Result<()> {
        if self.0.is_empty() { Ok(()) } else { Err(Error::Invalid(self.0)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_report_all_fields_with_nested_paths() {
        let mut inner = Problems::new();
        inner.add("ipv4", "bad");
        let mut p = Problems::new();
        p.add("label", "too long");
        p.extend_prefixed("subnets[1]", inner);
        let Err(Error::Invalid(v)) = p.finish() else { panic!("expected invalid") };
        assert_eq!(v[0].field.as_deref(), Some("label"));
        assert_eq!(v[1].field.as_deref(), Some("subnets[1].ipv4"));
    }
}
