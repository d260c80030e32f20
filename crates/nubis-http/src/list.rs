//! Lists: X-Filter, ordering and paging applied to the records the application returned (the
//! ones the caller may see), answered in the `data`/`page`/`pages`/`results` envelope.

use crate::json::Json;
use axum::response::{IntoResponse, Response};
use nubis_model::filter::Filter;
use nubis_model::page::Page;
use nubis_model::{Error, FieldError};
use serde::Serialize;
use serde_json::Value;

use crate::error::ApiError;
use crate::extract::ListQuery;

/// Parses the request's X-Filter against the list's filterable fields.
pub fn filter_of(q: &ListQuery, filterable: &[&str]) -> Result<Filter, ApiError> {
    match &q.filter {
        None => Ok(Filter::default()),
        Some(text) => Filter::parse(text, filterable)
            .map_err(|e| ApiError(Error::Invalid(vec![FieldError::new("X-Filter", e.0)]))),
    }
}

/// One page of `items` after filtering and ordering.
pub fn page_of<T: Serialize>(items: &[T], q: &ListQuery, filterable: &[&str]) -> Result<Response, ApiError> {
    let filter = filter_of(q, filterable)?;
    let req = q.page;
    let window = |n: usize| {
        let start = usize::try_from(req.offset()).unwrap_or(usize::MAX).min(n);
        let end = start.saturating_add(req.page_size as usize).min(n);
        (start, end)
    };
    if filter.is_trivial() {
        let (s, e) = window(items.len());
        let data: Vec<&T> = items[s..e].iter().collect();
        return Ok(Json(Page::new(data, req, items.len() as u64)).into_response());
    }
    let mut values: Vec<Value> = items
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ApiError(Error::internal(e)))?;
    values.retain(|v| filter.matches(v));
    filter.sort(&mut values);
    let n = values.len();
    let (s, e) = window(n);
    let data: Vec<Value> = values.drain(s..e).collect();
    Ok(Json(Page::new(data, req, n as u64)).into_response())
}
