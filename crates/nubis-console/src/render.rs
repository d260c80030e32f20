//! Rendering: the navigation every page carries, HTML answers, and the pages of errors.

use askama::Template;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nubis_model::Error;
use serde::Serialize;

use crate::Console;

/// What the layout needs: links, the user, the CSRF token of the session's forms.
#[derive(Debug, Clone, Default)]
pub struct Nav {
    /// The path prefix of console links (empty at the site's root).
    pub base: String,
    /// The dashboard's path.
    pub root: String,
    pub user: String,
    pub restricted: bool,
    pub csrf: String,
    /// The section shown (highlighted in the menu).
    pub active: &'static str,
}

impl Nav {
    /// `aria-current` of a menu entry.
    pub fn cur(&self, section: &str) -> &'static str {
        if self.active == section { "page" } else { "false" }
    }
}

/// An HTML answer of a template.
pub fn html(status: StatusCode, t: &impl Template) -> Response {
    match t.render() {
        Ok(body) => {
            let mut r = (status, body).into_response();
            r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
            r
        }
        Err(e) => {
            tracing::error!(target: "nubis::console", error = %e, "page rendering failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "Internal server error").into_response()
        }
    }
}

pub fn page(t: &impl Template) -> Response {
    html(StatusCode::OK, t)
}

#[derive(Template)]
#[template(path = "console/message.html")]
struct MessagePage<'a> {
    nav: Nav,
    signed_in: bool,
    title: &'a str,
    text: &'a str,
}

/// A page with one message (errors, refusals, signed out).
pub fn message(c: &Console, nav: Option<Nav>, status: StatusCode, text: &str) -> Response {
    let title = match status.as_u16() {
        200 => "nubis",
        403 => "Not allowed",
        404 => "Not found",
        _ => "Something went wrong",
    };
    let signed_in = nav.is_some();
    let nav = nav.unwrap_or_else(|| Nav { base: c.base.clone(), root: c.p("/"), ..Default::default() });
    html(status, &MessagePage { nav, signed_in, title, text })
}

/// The page of an application error (a field error is shown by its form instead).
pub fn error_page(c: &Console, nav: Option<Nav>, e: Error) -> Response {
    match e {
        Error::NotFound => message(c, nav, StatusCode::NOT_FOUND, "There is nothing here, or you may not see it."),
        Error::Forbidden(m) => message(c, nav, StatusCode::FORBIDDEN, &format!("You may not do this: {m}")),
        Error::Invalid(v) => {
            let text = v
                .iter()
                .map(|f| match &f.field {
                    Some(n) => format!("{n}: {}", f.reason),
                    None => f.reason.clone(),
                })
                .collect::<Vec<_>>()
                .join("; ");
            message(c, nav, StatusCode::BAD_REQUEST, &text)
        }
        Error::RateLimited { .. } => {
            message(c, nav, StatusCode::TOO_MANY_REQUESTS, "Too many requests; wait a moment.")
        }
        other => {
            tracing::error!(target: "nubis::console", error = %other, "console page failed");
            message(c, nav, StatusCode::INTERNAL_SERVER_ERROR, "The server could not answer. Try again later.")
        }
    }
}

/// The API's name of an enum value (its JSON string).
pub fn name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// A timestamp as the pages show it: `2026-11-23 15:40:57`.
pub fn when<T: Serialize>(t: &T) -> String {
    name(t).replace('T', " ")
}
