//! A third-party application written with a standard OAuth 2 client library (the `oauth2`
//! crate) finds nubis' endpoints in its RFC 8414 metadata and completes the authorization-code
//! flow with a private client and with a public PKCE client, and refreshes.

use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, RedirectUrl, Scope,
    TokenResponse, TokenUrl,
};
use serde_json::json;

use crate::signin_support::*;
use crate::support::*;

const PW: &str = "Green-Valley-31z";

#[derive(Debug)]
struct HttpError(String);
impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for HttpError {}

/// The HTTP client the library calls: reqwest, no redirects, no proxy.
async fn http(req: oauth2::HttpRequest) -> Result<oauth2::HttpResponse, HttpError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .map_err(|e| HttpError(e.to_string()))?;
    let (parts, body) = req.into_parts();
    let mut r = client.request(parts.method, parts.uri.to_string()).body(body);
    for (k, v) in &parts.headers {
        r = r.header(k, v);
    }
    let res = r.send().await.map_err(|e| HttpError(e.to_string()))?;
    let mut out = oauth2::http::Response::builder().status(res.status());
    for (k, v) in res.headers() {
        out = out.header(k, v);
    }
    let bytes = res.bytes().await.map_err(|e| HttpError(e.to_string()))?;
    out.body(bytes.to_vec()).map_err(|e| HttpError(e.to_string()))
}

#[tokio::test]
async fn a_standard_oauth2_client_library_signs_users_in() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "lib-user", "email": "lib@example.com", "restricted": false}))
        .await
        .ok();
    set_password(&s, "lib-user", PW).await;
    let meta = api.anonymous().get(&format!("{}/.well-known/oauth-authorization-server", origin(&s))).await;
    let meta = meta.ok().clone();
    let endpoint = |k: &str| meta[k].as_str().unwrap().to_string();
    let mut cb = Callback::start().await;

    // A private client.
    let c = api.post("/account/oauth-clients", json!({"label": "Lib App", "redirect_uri": cb.url})).await;
    let client = BasicClient::new(ClientId::new(c.ok()["id"].as_str().unwrap().to_string()))
        .set_client_secret(ClientSecret::new(c.body["secret"].as_str().unwrap().to_string()))
        .set_auth_uri(AuthUrl::new(endpoint("authorization_endpoint")).unwrap())
        .set_token_uri(TokenUrl::new(endpoint("token_endpoint")).unwrap())
        .set_redirect_uri(RedirectUrl::new(cb.url.clone()).unwrap());
    let (auth_url, state) = client
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("vpc:read_write".into()))
        .add_scope(Scope::new("events:read_only".into()))
        .url();
    let mut browser = Browser::new();
    let query = auth_url.query().unwrap().to_string();
    let arrived = sign_in(&s, &mut browser, &mut cb, &query, "lib-user", PW).await;
    assert_eq!(query_param(&arrived, "state").as_deref(), Some(state.secret().as_str()));
    let code = AuthorizationCode::new(query_param(&arrived, "code").unwrap());
    let token = client.exchange_code(code).request_async(&http).await.expect("the code exchange");
    let scopes: Vec<String> = token.scopes().unwrap().iter().map(|s| s.to_string()).collect();
    assert_eq!(scopes, ["events:read_only", "vpc:read_write"]);
    let user = s.api_with(token.access_token().secret());
    user.post("/vpcs", json!({"label": "from-app", "region": "us-east"})).await.ok();
    user.get("/compute/instances").await.status_is(403);
    // Refresh, then revoke the new access token.
    let refreshed =
        client.exchange_refresh_token(token.refresh_token().unwrap()).request_async(&http).await.expect("refresh");
    let user2 = s.api_with(refreshed.access_token().secret());
    user2.get("/vpcs").await.ok();
    // (The library sends revocations over https only; the test server speaks http, so this one
    // is a plain form post with the same client credentials.)
    let (id, secret) = (c.body["id"].as_str().unwrap(), c.body["secret"].as_str().unwrap());
    assert_eq!(revoke_request(&s, Some((id, secret)), &[("token", refreshed.access_token().secret())]).await, 200);
    user2.get("/vpcs").await.status_is(401);

    // A public client with PKCE: no secret.
    let p =
        api.post("/account/oauth-clients", json!({"label": "Lib SPA", "redirect_uri": cb.url, "public": true})).await;
    let public = BasicClient::new(ClientId::new(p.ok()["id"].as_str().unwrap().to_string()))
        .set_auth_uri(AuthUrl::new(endpoint("authorization_endpoint")).unwrap())
        .set_token_uri(TokenUrl::new(endpoint("token_endpoint")).unwrap())
        .set_redirect_uri(RedirectUrl::new(cb.url.clone()).unwrap());
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (auth_url, _) = public
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("account:read_only".into()))
        .set_pkce_challenge(challenge)
        .url();
    let mut browser = Browser::new();
    let arrived = sign_in(&s, &mut browser, &mut cb, auth_url.query().unwrap(), "lib-user", PW).await;
    let code = AuthorizationCode::new(query_param(&arrived, "code").unwrap());
    let token =
        public.exchange_code(code).set_pkce_verifier(verifier).request_async(&http).await.expect("PKCE exchange");
    let spa = s.api_with(token.access_token().secret());
    assert_eq!(spa.get("/profile").await.ok()["username"], "lib-user");
    spa.get("/vpcs").await.status_is(403);
}
