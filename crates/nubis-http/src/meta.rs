//! Per-request facts gathered along the way (matched route, token scopes, rate-limit state) for
//! the access log, the metrics and the response headers.

use std::sync::OnceLock;

use axum::extract::MatchedPath;

use crate::ratelimit::RateState;

#[derive(Debug, Default)]
pub struct RequestMeta {
    /// The route template that matched (`/v4/vpcs/{vpc_id}`).
    pub route: OnceLock<MatchedPath>,
    /// Scopes of the authenticated token.
    pub scopes: OnceLock<String>,
    pub rate: OnceLock<RateState>,
}
