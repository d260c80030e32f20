//! The HTML pages: sign-in (authorize) and set-password, with their CSRF checks and cookies.

use askama::Template;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::signin::SigninRefusal;
use nubis_app::signin::oauth::{Authorization, AuthorizeError, AuthorizeRequest};
use nubis_model::Error;

use super::{CSRF_COOKIE, ClientIp, SESSION_COOKIE, cookie, form};

#[derive(Template)]
#[template(path = "signin/authorize.html")]
struct AuthorizePage {
    action: String,
    csrf: String,
    client_label: String,
    client_id: String,
    thumbnail_url: Option<String>,
    /// Only when the request named it (the token request must then name it too).
    redirect_uri: Option<String>,
    scope: String,
    scopes: Vec<String>,
    state: Option<String>,
    code_challenge: Option<String>,
    signed_in_as: Option<String>,
    username: String,
    error: Option<String>,
}

#[derive(Template)]
#[template(path = "signin/password.html")]
struct PasswordPage {
    action: String,
    csrf: String,
    token: String,
    username: String,
    rule: &'static str,
    errors: Vec<String>,
}

#[derive(Template)]
#[template(path = "signin/message.html")]
struct MessagePage {
    title: String,
    text: String,
    error: bool,
}

/// An HTML answer with the headers every page carries: no caching, no framing, no referrer
/// (the set-password link's token stays out of other sites' logs).
fn html(status: StatusCode, body: Result<String, askama::Error>) -> Response {
    let (status, body) = match body {
        Ok(b) => (status, b),
        Err(e) => {
            tracing::error!(target: "nubis::signin", error = %e, "page rendering failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "Internal server error".to_string())
        }
    };
    let mut r = (status, body).into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    r
}

fn message(status: StatusCode, title: &str, text: &str, error: bool) -> Response {
    html(status, MessagePage { title: title.into(), text: text.into(), error }.render())
}

fn internal(e: Error) -> Response {
    tracing::error!(target: "nubis::signin", error = %e, "sign-in page failed");
    message(StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong", "Please try again later.", true)
}

fn redirect(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(v) => {
            let mut r = StatusCode::SEE_OTHER.into_response();
            r.headers_mut().insert(header::LOCATION, v);
            r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
        Err(_) => message(StatusCode::BAD_REQUEST, "Cannot continue", "The redirect address is not valid.", true),
    }
}

/// Sets (or with `max_age` 0, clears) a sign-in cookie: HttpOnly, scoped to the sign-in
/// pages' path, SameSite=Strict for the CSRF cookie and Lax otherwise, Secure when the public
/// URL is https.
fn set_cookie(r: &mut Response, app: &App, name: &str, value: &str, max_age: Option<i64>) {
    use cookie::{Cookie, SameSite};
    let same_site = if name == CSRF_COOKIE { SameSite::Strict } else { SameSite::Lax };
    let mut c = Cookie::build((name, value))
        .path(app.signin_base_path())
        .http_only(true)
        .same_site(same_site)
        .secure(app.public_url().starts_with("https://"));
    if let Some(a) = max_age {
        c = c.max_age(cookie::time::Duration::seconds(a));
    }
    if let Ok(v) = HeaderValue::from_str(&c.build().to_string()) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
}

/// The request's CSRF cookie, or a new token (set by the page that shows the form).
fn csrf_token(headers: &HeaderMap) -> (String, bool) {
    match cookie(headers, CSRF_COOKIE).filter(|c| c.len() == 64 && c.bytes().all(|b| b.is_ascii_hexdigit())) {
        Some(c) => (c, false),
        None => (nubis_app::auth::new_secret(), true),
    }
}

/// A posted form's CSRF token must equal the cookie's.
fn csrf_ok(headers: &HeaderMap, posted: Option<&String>) -> bool {
    match (cookie(headers, CSRF_COOKIE), posted) {
        (Some(c), Some(p)) => bool::from(subtle::ConstantTimeEq::ct_eq(c.as_bytes(), p.as_bytes())),
        _ => false,
    }
}

fn csrf_refused() -> Response {
    message(
        StatusCode::FORBIDDEN,
        "Please try again",
        "This form expired or did not come from this site. Go back, reload the page and submit it again.",
        true,
    )
}

async fn session_user(app: &App, headers: &HeaderMap) -> Result<Option<nubis_model::account::User>, Error> {
    match cookie(headers, SESSION_COOKIE) {
        Some(s) if s.len() == 64 => app.session_user(&s).await,
        _ => Ok(None),
    }
}

fn render_authorize(
    app: &App,
    a: &Authorization,
    csrf: String,
    signed_in_as: Option<String>,
    username: String,
    error: Option<String>,
) -> Result<String, askama::Error> {
    AuthorizePage {
        action: format!("{}/authorize", app.signin_base_path()),
        csrf,
        client_label: a.client.label.clone(),
        client_id: a.client.id.clone(),
        thumbnail_url: a.client.has_thumbnail.then(|| format!("/v4/account/oauth-clients/{}/thumbnail", a.client.id)),
        redirect_uri: a.redirect_uri_given.then(|| a.redirect_uri.clone()),
        scope: a.scopes.clone(),
        scopes: a.scope_list(),
        state: a.state.clone(),
        code_challenge: a.code_challenge.clone(),
        signed_in_as,
        username,
        error,
    }
    .render()
}

/// `GET <base>/authorize`: checks the request and shows the sign-in form.
pub async fn authorize_page(
    State(app): State<App>,
    headers: HeaderMap,
    Query(req): Query<AuthorizeRequest>,
) -> Response {
    let a = match app.authorize_check(&req).await {
        Err(e) => return internal(e),
        Ok(Err(AuthorizeError::Page(text))) => return message(StatusCode::BAD_REQUEST, "Cannot sign in", &text, true),
        Ok(Err(AuthorizeError::Redirect(to))) => return redirect(&to),
        Ok(Ok(a)) => a,
    };
    let signed_in = match session_user(&app, &headers).await {
        Ok(u) => u.map(|u| u.username),
        Err(e) => return internal(e),
    };
    let (csrf, new) = csrf_token(&headers);
    let mut r = html(StatusCode::OK, render_authorize(&app, &a, csrf.clone(), signed_in, String::new(), None));
    if new {
        set_cookie(&mut r, &app, CSRF_COOKIE, &csrf, None);
    }
    r
}

/// `POST <base>/authorize`: the sign-in form. On success the user is redirected to the client
/// with a code and the state.
pub async fn authorize_submit(
    State(app): State<App>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let f = form(&body);
    if !csrf_ok(&headers, f.get("csrf")) {
        return csrf_refused();
    }
    let get = |k: &str| f.get(k).cloned().filter(|v| !v.is_empty());
    let req = AuthorizeRequest {
        response_type: get("response_type"),
        client_id: get("client_id"),
        redirect_uri: get("redirect_uri"),
        scope: get("scope"),
        state: get("state"),
        code_challenge: get("code_challenge"),
        code_challenge_method: get("code_challenge_method"),
    };
    let a = match app.authorize_check(&req).await {
        Err(e) => return internal(e),
        Ok(Err(AuthorizeError::Page(text))) => return message(StatusCode::BAD_REQUEST, "Cannot sign in", &text, true),
        Ok(Err(AuthorizeError::Redirect(to))) => return redirect(&to),
        Ok(Ok(a)) => a,
    };
    if get("action").as_deref() == Some("deny") {
        return redirect(&app.authorize_denied(&a));
    }
    let csrf = f.get("csrf").cloned().unwrap_or_default();
    let username = get("username").unwrap_or_default();
    let ask_password = |text: &str| {
        let page = render_authorize(&app, &a, csrf.clone(), None, username.clone(), Some(text.into()));
        html(StatusCode::BAD_REQUEST, page)
    };
    // The session that approves: this browser's (checked again when the code is issued), or a
    // new one once the password is right.
    let (session, new_session) = match get("password") {
        None => match cookie(&headers, SESSION_COOKIE).filter(|s| s.len() == 64) {
            Some(s) => (s, false),
            None => return ask_password("Enter your username and password."),
        },
        Some(password) => match app.signin_password(&username, &password, &ip).await {
            Err(e) => return internal(e),
            Ok(Ok(u)) => match app.session_create(u.id).await {
                Ok(s) => (s, true),
                Err(e) => return internal(e),
            },
            Ok(Err(refusal)) => {
                let (status, text) = match refusal {
                    SigninRefusal::BadCredentials => {
                        (StatusCode::UNAUTHORIZED, "The username or password is not right.")
                    }
                    SigninRefusal::Throttled => {
                        (StatusCode::TOO_MANY_REQUESTS, "Too many wrong passwords. Wait a few minutes and try again.")
                    }
                };
                return html(status, render_authorize(&app, &a, csrf, None, username, Some(text.into())));
            }
        },
    };
    let location = match app.authorize_grant(&session, &a).await {
        Ok(Some(l)) => l,
        Ok(None) => {
            // The session ended (signed out, password changed, expired): sign in again.
            let mut r = ask_password("Your session has ended. Enter your username and password.");
            set_cookie(&mut r, &app, SESSION_COOKIE, "", Some(0));
            return r;
        }
        Err(Error::NotFound) => {
            return message(StatusCode::BAD_REQUEST, "Cannot sign in", "This application is not registered.", true);
        }
        Err(e) => return internal(e),
    };
    let mut r = redirect(&location);
    if new_session {
        let age = app.config().signin.session_hours * 3600;
        set_cookie(&mut r, &app, SESSION_COOKIE, &session, Some(age));
    }
    r
}

#[derive(serde::Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

fn password_form(
    app: &App,
    csrf: String,
    token: String,
    username: String,
    errors: Vec<String>,
) -> Result<String, askama::Error> {
    PasswordPage {
        action: format!("{}/password", app.signin_base_path()),
        csrf,
        token,
        username,
        rule: nubis_app::signin::password::RULE,
        errors,
    }
    .render()
}

fn link_refused() -> Response {
    message(
        StatusCode::BAD_REQUEST,
        "This link cannot be used",
        "The link is invalid, was already used or has expired. Ask your operator or account administrator for a new one.",
        true,
    )
}

/// `GET <base>/password?token=...`: the set-password form of a single-use link.
pub async fn password_page(State(app): State<App>, headers: HeaderMap, Query(q): Query<TokenQuery>) -> Response {
    let Some(token) = q.token.filter(|t| t.len() == 64) else { return link_refused() };
    let user = match app.password_link_user(&token).await {
        Ok(u) => u,
        Err(Error::Invalid(_)) => return link_refused(),
        Err(e) => return internal(e),
    };
    let (csrf, new) = csrf_token(&headers);
    let mut r = html(StatusCode::OK, password_form(&app, csrf.clone(), token, user.username, Vec::new()));
    if new {
        set_cookie(&mut r, &app, CSRF_COOKIE, &csrf, None);
    }
    r
}

/// `POST <base>/password`: sets the password and uses the link up.
pub async fn password_submit(State(app): State<App>, headers: HeaderMap, body: Bytes) -> Response {
    let f = form(&body);
    if !csrf_ok(&headers, f.get("csrf")) {
        return csrf_refused();
    }
    let get = |k: &str| f.get(k).cloned().unwrap_or_default();
    let token = get("token");
    match app.password_set_with_link(&token, &get("password"), &get("confirm")).await {
        Ok(u) => message(
            StatusCode::OK,
            "Password set",
            &format!("The password of {} is set. You can now sign in.", u.username),
            false,
        ),
        Err(Error::Invalid(v)) if v.iter().any(|e| e.field.as_deref() == Some("token")) => link_refused(),
        Err(Error::Invalid(v)) => {
            let user = match app.password_link_user(&token).await {
                Ok(u) => u,
                Err(_) => return link_refused(),
            };
            let errors = v.into_iter().map(|e| e.reason).collect();
            html(StatusCode::BAD_REQUEST, password_form(&app, get("csrf"), token, user.username, errors))
        }
        Err(e) => internal(e),
    }
}

/// `POST <base>/signout`: ends the sign-in session.
pub async fn signout(State(app): State<App>, headers: HeaderMap, body: Bytes) -> Response {
    let f = form(&body);
    if !csrf_ok(&headers, f.get("csrf")) {
        return csrf_refused();
    }
    if let Some(s) = cookie(&headers, SESSION_COOKIE)
        && let Err(e) = app.session_end(&s).await
    {
        return internal(e);
    }
    let mut r = message(StatusCode::OK, "Signed out", "You are signed out.", false);
    set_cookie(&mut r, &app, SESSION_COOKIE, "", Some(0));
    r
}
