//! Signing in to the console: the authorization-code flow with PKCE against nubis' own
//! authorization server (as its system client `nubis-console`), the code exchanged in-process at
//! the token endpoint's rules, and signing out (the session ends, its token's grant is revoked
//! and the authorization server's session that approved it ends).

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use nubis_app::auth::new_secret;
use nubis_app::signin::oauth::{TokenRequest, pkce_challenge};
use nubis_model::Timestamp;

use crate::Console;
use crate::render::{error_page, message};
use crate::session::{Post, SESSION_COOKIE, SIGNIN_COOKIE, cookie, redirect, set_cookie};

fn callback_url(c: &Console) -> String {
    c.app.console_redirect_uri()
}

/// `GET /signin`: on to the authorization server's sign-in page, as the console's system client.
pub async fn start(State(c): State<Console>) -> Response {
    let redirect_uri = callback_url(&c);
    let client_id = nubis_app::console::CONSOLE_CLIENT_ID;
    let verifier = new_secret();
    let challenge = pkce_challenge(&verifier);
    let state = c.sessions.pending_add(verifier);
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", &redirect_uri)
        .append_pair("scope", "*")
        .append_pair("state", &state)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .finish();
    let to = format!("{}/authorize?{query}", c.app.signin_base_path());
    let mut r = redirect(&to);
    set_cookie(&mut r, &c, SIGNIN_COOKIE, &state, 600);
    r
}

#[derive(serde::Deserialize)]
pub struct Callback {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

/// `GET /callback`: the authorization server sends the browser back with a code.
pub async fn callback(State(c): State<Console>, headers: HeaderMap, Query(q): Query<Callback>) -> Response {
    let fail = |text: &str| message(&c, None, StatusCode::BAD_REQUEST, text);
    if q.error.as_deref() == Some("access_denied") {
        return fail("You declined to sign in to the console.");
    }
    let (Some(code), Some(state)) = (q.code, q.state) else {
        return fail("The sign-in did not complete. Start again from the console's address.");
    };
    // The state must be the one this browser started with.
    if cookie(&headers, SIGNIN_COOKIE).as_deref() != Some(state.as_str()) {
        return fail("This sign-in was started in another browser or has expired. Start again.");
    }
    let Some(verifier) = c.sessions.pending_take(&state) else {
        return fail("This sign-in has expired. Start again.");
    };
    let req = TokenRequest {
        grant_type: Some("authorization_code".into()),
        code: Some(code),
        redirect_uri: Some(callback_url(&c)),
        code_verifier: Some(verifier),
        client_id: Some(nubis_app::console::CONSOLE_CLIENT_ID.into()),
        ..Default::default()
    };
    let t = match c.app.token_endpoint(&req, None).await {
        Ok(t) => t,
        Err(e) => return fail(&format!("The sign-in was refused: {}", e.error_description)),
    };
    let max = c.app.config().console.session_hours.max(1) * 3600;
    let expiry = Timestamp::now().plus_seconds(t.expires_in.min(max));
    let id = c.sessions.create(t.access_token, expiry);
    let mut r = redirect(&c.p("/"));
    set_cookie(&mut r, &c, SESSION_COOKIE, &id, t.expires_in.min(max));
    set_cookie(&mut r, &c, SIGNIN_COOKIE, "", 0);
    r
}

/// `POST /signout`: ends the console session, revokes its token's grant and ends the
/// authorization server's sign-in session that approved it (on the server: a replayed cookie of
/// either no longer signs anyone in), and clears both cookies in this browser. The next sign-in
/// asks for the password.
pub async fn signout(State(c): State<Console>, headers: HeaderMap, _post: Post) -> Response {
    if let Some(id) = cookie(&headers, SESSION_COOKIE)
        && let Some(token) = c.sessions.end(&id)
        && let Err(e) = c.app.console_signout(&token).await
    {
        return error_page(&c, None, e);
    }
    let mut r = message(&c, None, StatusCode::OK, "You are signed out.");
    set_cookie(&mut r, &c, SESSION_COOKIE, "", 0);
    let oauth = format!("nubis_session=; Path={}; HttpOnly; SameSite=Lax; Max-Age=0", c.app.signin_base_path());
    if let Ok(v) = axum::http::HeaderValue::from_str(&oauth) {
        r.headers_mut().append(axum::http::header::SET_COOKIE, v);
    }
    r
}
