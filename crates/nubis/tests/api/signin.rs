//! The authorization server: users set their password from the link in their message, third-party
//! applications send them through the sign-in page and get tokens with exactly the scopes asked
//! for (private clients with their secret, public ones with PKCE), codes and refresh tokens,
//! revocation, and the end of every token when a client is deleted or its secret reset.

use std::collections::BTreeSet;

use serde_json::json;

use crate::signin_support::*;
use crate::support::*;

const ANN_PASSWORD: &str = "Blue-Harbor-42x";

fn scope_set(s: &str) -> BTreeSet<String> {
    s.split(' ').map(str::to_string).collect()
}

async fn client(api: &Api, label: &str, redirect_uri: &str, public: bool) -> (String, String) {
    let c = api
        .post("/account/oauth-clients", json!({"label": label, "redirect_uri": redirect_uri, "public": public}))
        .await;
    let c = c.ok();
    (c["id"].as_str().unwrap().to_string(), c["secret"].as_str().unwrap().to_string())
}

/// The walkthrough of issue 12, over real HTTP, as a new user and two applications do it.
#[tokio::test]
async fn a_new_user_sets_a_password_and_signs_in_to_private_and_public_applications() {
    let s = TestServer::start_with(Options { log: "debug", ..Default::default() }).await;
    let api = s.api();
    // An operator creates a user; the message carries a set-password link.
    api.post("/account/users", json!({"username": "ann", "email": "ann@example.com", "restricted": false})).await.ok();
    let link = outbox_link(&s, "ann@example.com").await;
    assert!(link.starts_with(&format!("{}/oauth/password?token=", origin(&s))), "{link}");

    // The user follows it and chooses a password; a weak one is refused first.
    let mut browser = Browser::new();
    let page = browser.get(&link).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("ann"));
    let weak = browser.submit(&origin(&s), &page, &[("password", "password"), ("confirm", "password")]).await;
    assert_eq!(weak.status, 400, "{}", weak.text);
    let page = browser.get(&link).await;
    let done = browser.submit(&origin(&s), &page, &[("password", ANN_PASSWORD), ("confirm", ANN_PASSWORD)]).await;
    assert_eq!(done.status, 200, "{}", done.text);
    // The link worked once.
    assert_eq!(browser.get(&link).await.status, 400);
    assert!(api.get("/account/users/ann").await.ok()["password_created"].is_string());

    // A third-party application registered as a private client sends ann through sign-in.
    let mut app_cb = Callback::start().await;
    let (cid, secret) = client(&api, "Photo Backup", &app_cb.url, false).await;
    let mut browser = Browser::new();
    let query = format!(
        "response_type=code&client_id={cid}&redirect_uri={}&scope={}&state=st-123",
        enc(&app_cb.url),
        enc("vpc:read_only events:read_only")
    );
    let page = browser.get(&format!("{}/oauth/authorize?{query}", origin(&s))).await;
    assert_eq!(page.status, 200);
    assert!(
        page.text.contains("Photo Backup")
            && page.text.contains("vpc:read_only")
            && page.text.contains("events:read_only")
    );
    let arrived = sign_in(&s, &mut browser, &mut app_cb, &query, "ann", ANN_PASSWORD).await;
    assert_eq!(query_param(&arrived, "state").as_deref(), Some("st-123"));
    let code = query_param(&arrived, "code").unwrap();
    let (status, t) = token_request(
        &s,
        Some((&cid, &secret)),
        &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", &app_cb.url)],
    )
    .await;
    assert_eq!(status, 200, "{t}");
    assert_eq!(t["token_type"], "bearer");
    assert!(t["expires_in"].as_i64().unwrap() > 0);
    assert!(t["refresh_token"].is_string());
    assert_eq!(scope_set(t["scope"].as_str().unwrap()), scope_set("vpc:read_only events:read_only"));
    let ann = s.api_with(t["access_token"].as_str().unwrap());
    // The token is ann's, with exactly those scopes, enforced like a personal token's.
    let me = ann.get("/profile").await;
    assert_eq!(me.ok()["username"], "ann");
    assert_eq!(scope_set(me.header("x-oauth-scopes").unwrap()), scope_set("vpc:read_only events:read_only"));
    ann.get("/vpcs").await.ok();
    ann.get("/account/events").await.ok();
    ann.post("/vpcs", json!({"label": "nope", "region": "us-east"})).await.status_is(403);
    ann.get("/compute/instances").await.status_is(403);

    // A public client (no secret kept) uses PKCE; the browser's session from the first sign-in
    // is not reused here: a fresh browser signs in again.
    let mut spa_cb = Callback::start().await;
    let (pid, _) = client(&api, "Single Page App", &spa_cb.url, true).await;
    let (verifier, challenge) = pkce();
    let query = format!(
        "response_type=code&client_id={pid}&redirect_uri={}&scope={}&state=pk&code_challenge={challenge}&code_challenge_method=S256",
        enc(&spa_cb.url),
        enc("instances:read_write")
    );
    let mut browser2 = Browser::new();
    let arrived = sign_in(&s, &mut browser2, &mut spa_cb, &query, "ann", ANN_PASSWORD).await;
    let code = query_param(&arrived, "code").unwrap();
    let (status, pt) = token_request(
        &s,
        None,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &spa_cb.url),
            ("client_id", &pid),
            ("code_verifier", &verifier),
        ],
    )
    .await;
    assert_eq!(status, 200, "{pt}");
    assert_eq!(pt["scope"], "instances:read_write");
    let spa = s.api_with(pt["access_token"].as_str().unwrap());
    spa.get("/compute/instances").await.ok();
    spa.get("/vpcs").await.status_is(403);

    // Deleting the private client ends its token at once; the public client's still works.
    api.delete(&format!("/account/oauth-clients/{cid}")).await.ok();
    ann.get("/profile").await.status_is(401);
    spa.get("/compute/instances").await.ok();
    // Nothing secret reached the log, though every request is in it.
    // A request's access line may be written just after its answer was sent: wait for both.
    let log = eventually(10, "the access log of /oauth/authorize and /oauth/token", || {
        let log = s.log();
        async move { (log.contains("/oauth/authorize") && log.contains("/oauth/token")).then_some(log) }
    })
    .await;
    let link_token = query_param(&link, "token").unwrap();
    let secrets = [ANN_PASSWORD, &secret, t["access_token"].as_str().unwrap(), t["refresh_token"].as_str().unwrap()];
    for secret_text in secrets.into_iter().chain([code.as_str(), verifier.as_str(), link_token.as_str()]) {
        assert!(!log.contains(secret_text), "a secret was logged");
    }
    // Its ID and secret are no longer accepted.
    let (status, e) = token_request(
        &s,
        Some((&cid, &secret)),
        &[("grant_type", "refresh_token"), ("refresh_token", t["refresh_token"].as_str().unwrap())],
    )
    .await;
    assert_eq!((status, e["error"].as_str()), (401, Some("invalid_client")));
}

/// A browser that signed in once is recognized on the next authorization (the console reuses
/// this), and the user may deny.
#[tokio::test]
async fn a_signed_in_session_is_reused_and_denying_tells_the_application() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "bea", "email": "bea@example.com", "restricted": false})).await.ok();
    set_password(&s, "bea", ANN_PASSWORD).await;
    let mut cb = Callback::start().await;
    let (cid, _) = client(&api, "App", &cb.url, false).await;
    let mut browser = Browser::new();
    let query = format!("response_type=code&client_id={cid}&state=one");
    sign_in(&s, &mut browser, &mut cb, &query, "bea", ANN_PASSWORD).await;
    // Second time: no password field, "signed in as".
    let page =
        browser.get(&format!("{}/oauth/authorize?response_type=code&client_id={cid}&state=two", origin(&s))).await;
    assert!(
        page.text.contains("Signed in as <strong>bea</strong>") && !page.text.contains("name=\"password\""),
        "{}",
        page.text
    );
    let r = browser.submit(&origin(&s), &page, &[("action", "approve")]).await;
    assert_eq!(r.status, 303);
    assert!(query_param(r.location.as_ref().unwrap(), "code").is_some());
    // Denying sends access_denied with the state back.
    let page =
        browser.get(&format!("{}/oauth/authorize?response_type=code&client_id={cid}&state=three", origin(&s))).await;
    let r = browser.submit(&origin(&s), &page, &[("action", "deny")]).await;
    let to = r.location.unwrap();
    assert_eq!(query_param(&to, "error").as_deref(), Some("access_denied"));
    assert_eq!(query_param(&to, "state").as_deref(), Some("three"));
}

#[tokio::test]
async fn the_sign_in_form_refuses_posts_without_the_csrf_token() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "cid", "email": "cid@example.com", "restricted": false})).await.ok();
    set_password(&s, "cid", ANN_PASSWORD).await;
    let cb = Callback::start().await;
    let (cid, _) = client(&api, "App", &cb.url, false).await;
    let mut browser = Browser::new();
    let page = browser.get(&format!("{}/oauth/authorize?response_type=code&client_id={cid}", origin(&s))).await;
    let mut fields = hidden_inputs(&page.text);
    fields.retain(|(k, _)| k != "csrf");
    fields.push(("csrf".into(), "0".repeat(64)));
    fields.push(("username".into(), "cid".into()));
    fields.push(("password".into(), ANN_PASSWORD.into()));
    let r = browser.post_form(&format!("{}/oauth/authorize", origin(&s)), &fields).await;
    assert_eq!(r.status, 403, "{}", r.text);
    assert!(r.location.is_none());
    // A cross-site post carries no cookie at all.
    let mut stranger = Browser::new();
    let r = stranger.post_form(&format!("{}/oauth/authorize", origin(&s)), &hidden_inputs(&page.text)).await;
    assert_eq!(r.status, 403);
    // Same for the set-password form.
    let (_, out, _) = s.admin(&["user", "password", "--username", "cid"]);
    let path = &out.trim()[out.trim().find("/oauth/").unwrap()..];
    let page = browser.get(&format!("{}{path}", origin(&s))).await;
    let r = stranger
        .post_form(
            &format!("{}/oauth/password", origin(&s)),
            &[
                hidden_inputs(&page.text),
                vec![("password".into(), "Other-Pass-99x".into()), ("confirm".into(), "Other-Pass-99x".into())],
            ]
            .concat(),
        )
        .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn authorization_requests_are_checked_before_the_page_is_shown() {
    let s = TestServer::start().await;
    let api = s.api();
    let cb = Callback::start().await;
    let (cid, _) = client(&api, "App", &cb.url, false).await;
    let (pid, _) = client(&api, "Public", &cb.url, true).await;
    let mut b = Browser::new();
    let o = origin(&s);
    // Unknown client and mismatched redirect URI: an error page, never a redirect.
    let r = b.get(&format!("{o}/oauth/authorize?response_type=code&client_id=nope")).await;
    assert_eq!((r.status, r.location.is_none()), (400, true));
    let r = b
        .get(&format!(
            "{o}/oauth/authorize?response_type=code&client_id={cid}&redirect_uri={}",
            enc("https://evil.example/cb")
        ))
        .await;
    assert_eq!((r.status, r.location.is_none()), (400, true), "{}", r.text);
    // Bad scope and response type go back to the application with an error.
    let r = b.get(&format!("{o}/oauth/authorize?response_type=code&client_id={cid}&scope=bogus:all&state=s")).await;
    let to = r.location.unwrap();
    assert!(to.starts_with(&cb.url));
    assert_eq!(query_param(&to, "error").as_deref(), Some("invalid_scope"));
    assert_eq!(query_param(&to, "state").as_deref(), Some("s"));
    let r = b.get(&format!("{o}/oauth/authorize?response_type=token&client_id={cid}")).await;
    assert_eq!(query_param(&r.location.unwrap(), "error").as_deref(), Some("unsupported_response_type"));
    // A public client must use PKCE with S256.
    let r = b.get(&format!("{o}/oauth/authorize?response_type=code&client_id={pid}")).await;
    assert_eq!(query_param(&r.location.unwrap(), "error").as_deref(), Some("invalid_request"));
    let r = b
        .get(&format!(
            "{o}/oauth/authorize?response_type=code&client_id={pid}&code_challenge=abc&code_challenge_method=plain"
        ))
        .await;
    assert_eq!(query_param(&r.location.unwrap(), "error").as_deref(), Some("invalid_request"));
}

/// Codes: single use, bound to the client, the redirect URI and the PKCE verifier, short-lived.
#[tokio::test]
async fn codes_are_single_use_bound_and_short_lived() {
    let config = format!("{TEST_CONFIG}\n[signin]\ncode_secs = 60\n");
    let (s, ctl) = crate::controls::controlled(&[], Some(config)).await;
    let api = s.api();
    api.post("/account/users", json!({"username": "dan", "email": "dan@example.com", "restricted": false})).await.ok();
    set_password(&s, "dan", ANN_PASSWORD).await;
    let mut cb = Callback::start().await;
    let (cid, secret) = client(&api, "App", &cb.url, false).await;
    let (other, other_secret) = client(&api, "Other", &cb.url, false).await;
    let (pid, _) = client(&api, "Public", &cb.url, true).await;
    let mut b = Browser::new();
    let q = format!("response_type=code&client_id={cid}");
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "dan", ANN_PASSWORD).await, "code").unwrap();
    let exchange = |id: String, sec: String, code: String| {
        let s = &s;
        async move { token_request(s, Some((&id, &sec)), &[("grant_type", "authorization_code"), ("code", &code)]).await }
    };
    // Another client cannot use it (and the attempt burns it).
    let (st, e) = exchange(other.clone(), other_secret.clone(), code.clone()).await;
    assert_eq!((st, e["error"].as_str()), (400, Some("invalid_grant")));
    assert_eq!(exchange(cid.clone(), secret.clone(), code).await.0, 400);
    // Used once only.
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "dan", ANN_PASSWORD).await, "code").unwrap();
    assert_eq!(exchange(cid.clone(), secret.clone(), code.clone()).await.0, 200);
    let (st, e) = exchange(cid.clone(), secret.clone(), code).await;
    assert_eq!((st, e["error"].as_str()), (400, Some("invalid_grant")));
    // A wrong secret is not a client.
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "dan", ANN_PASSWORD).await, "code").unwrap();
    let (st, e) = exchange(cid.clone(), "f".repeat(64), code.clone()).await;
    assert_eq!((st, e["error"].as_str()), (401, Some("invalid_client")));
    // A redirect_uri named in the authorization must be named again, and the same.
    let q2 = format!("response_type=code&client_id={cid}&redirect_uri={}", enc(&cb.url));
    let code2 = query_param(&sign_in(&s, &mut b, &mut cb, &q2, "dan", ANN_PASSWORD).await, "code").unwrap();
    assert_eq!(exchange(cid.clone(), secret.clone(), code2).await.0, 400);
    // A redirect_uri other than the authorization's is refused.
    let (st, _) = token_request(
        &s,
        Some((&cid, &secret)),
        &[("grant_type", "authorization_code"), ("code", &code), ("redirect_uri", "https://x.example/cb")],
    )
    .await;
    assert_eq!(st, 400);
    // Expired after code_secs.
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "dan", ANN_PASSWORD).await, "code").unwrap();
    ctl.post("/clock/advance", json!({"seconds": 61})).await.ok();
    assert_eq!(exchange(cid.clone(), secret.clone(), code).await.0, 400);
    // PKCE: the wrong verifier fails, and a public client's code needs the verifier.
    let (verifier, challenge) = pkce();
    let pq = format!("response_type=code&client_id={pid}&code_challenge={challenge}&code_challenge_method=S256");
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &pq, "dan", ANN_PASSWORD).await, "code").unwrap();
    let (wrong, _) = pkce();
    let (st, _) = token_request(
        &s,
        None,
        &[("grant_type", "authorization_code"), ("code", &code), ("client_id", &pid), ("code_verifier", &wrong)],
    )
    .await;
    assert_eq!(st, 400);
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &pq, "dan", ANN_PASSWORD).await, "code").unwrap();
    let (st, _) =
        token_request(&s, None, &[("grant_type", "authorization_code"), ("code", &code), ("client_id", &pid)]).await;
    assert_eq!(st, 400);
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &pq, "dan", ANN_PASSWORD).await, "code").unwrap();
    let (st, _) = token_request(
        &s,
        None,
        &[("grant_type", "authorization_code"), ("code", &code), ("client_id", &pid), ("code_verifier", &verifier)],
    )
    .await;
    assert_eq!(st, 200);
}

/// Refresh tokens rotate and keep the scopes; revocation and reset-secret end tokens at once.
#[tokio::test]
async fn refresh_revocation_and_reset_secret() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "eve", "email": "eve@example.com", "restricted": false})).await.ok();
    set_password(&s, "eve", ANN_PASSWORD).await;
    let mut cb = Callback::start().await;
    let (cid, secret) = client(&api, "App", &cb.url, false).await;
    let mut b = Browser::new();
    let q = format!("response_type=code&client_id={cid}&scope={}", enc("vpc:read_write account:read_only"));
    let get_tokens = |code: String| {
        let (s, cid, secret) = (&s, cid.clone(), secret.clone());
        async move {
            token_request(s, Some((&cid, &secret)), &[("grant_type", "authorization_code"), ("code", &code)]).await.1
        }
    };
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "eve", ANN_PASSWORD).await, "code").unwrap();
    let t = get_tokens(code).await;
    let refresh = t["refresh_token"].as_str().unwrap().to_string();
    // Refresh: new tokens with the same scopes; the refresh token is used up.
    let (st, t2) =
        token_request(&s, Some((&cid, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh)]).await;
    assert_eq!(st, 200, "{t2}");
    assert_eq!(scope_set(t2["scope"].as_str().unwrap()), scope_set("vpc:read_write account:read_only"));
    // A narrower scope may be asked for, not a wider one.
    let r2 = t2["refresh_token"].as_str().unwrap();
    let (st, t3) = token_request(
        &s,
        Some((&cid, &secret)),
        &[("grant_type", "refresh_token"), ("refresh_token", r2), ("scope", "vpc:read_only")],
    )
    .await;
    assert_eq!((st, t3["scope"].as_str()), (200, Some("vpc:read_only")));
    let (st, _) = token_request(
        &s,
        Some((&cid, &secret)),
        &[("grant_type", "refresh_token"), ("refresh_token", t3["refresh_token"].as_str().unwrap()), ("scope", "*")],
    )
    .await;
    assert_eq!(st, 400);
    // The used refresh token is refused; presenting it again ends its whole family
    // (signin_hardening.rs checks that in detail).
    let (st, e) =
        token_request(&s, Some((&cid, &secret)), &[("grant_type", "refresh_token"), ("refresh_token", &refresh)]).await;
    assert_eq!((st, e["error"].as_str()), (400, Some("invalid_grant")));
    s.api_with(t3["access_token"].as_str().unwrap()).get("/vpcs").await.status_is(401);
    // Revocation of an access token (RFC 7009); unknown tokens answer 200 too.
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "eve", ANN_PASSWORD).await, "code").unwrap();
    let t2 = get_tokens(code).await;
    let access = s.api_with(t2["access_token"].as_str().unwrap());
    access.get("/vpcs").await.ok();
    assert_eq!(
        revoke_request(&s, Some((&cid, &secret)), &[("token", t2["access_token"].as_str().unwrap())]).await,
        200
    );
    access.get("/vpcs").await.status_is(401);
    assert_eq!(revoke_request(&s, Some((&cid, &secret)), &[("token", "unknown")]).await, 200);
    assert_eq!(revoke_request(&s, Some((&cid, "wrong")), &[("token", "unknown")]).await, 401);
    // Revoking a refresh token ends it and the access token issued with it.
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "eve", ANN_PASSWORD).await, "code").unwrap();
    let t4 = get_tokens(code).await;
    assert_eq!(
        revoke_request(
            &s,
            Some((&cid, &secret)),
            &[("token", t4["refresh_token"].as_str().unwrap()), ("token_type_hint", "refresh_token")]
        )
        .await,
        200
    );
    s.api_with(t4["access_token"].as_str().unwrap()).get("/vpcs").await.status_is(401);
    let (st, _) = token_request(
        &s,
        Some((&cid, &secret)),
        &[("grant_type", "refresh_token"), ("refresh_token", t4["refresh_token"].as_str().unwrap())],
    )
    .await;
    assert_eq!(st, 400);
    // Reset secret: the old secret fails at once and every token issued to the client ends.
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "eve", ANN_PASSWORD).await, "code").unwrap();
    let t5 = get_tokens(code).await;
    let live = s.api_with(t5["access_token"].as_str().unwrap());
    live.get("/vpcs").await.ok();
    let reset = api.post_empty(&format!("/account/oauth-clients/{cid}/reset-secret")).await;
    let new_secret = reset.ok()["secret"].as_str().unwrap().to_string();
    assert_ne!(new_secret, secret);
    live.get("/vpcs").await.status_is(401);
    let (st, _) = token_request(
        &s,
        Some((&cid, &secret)),
        &[("grant_type", "refresh_token"), ("refresh_token", t5["refresh_token"].as_str().unwrap())],
    )
    .await;
    assert_eq!(st, 401);
    let (st, _) = token_request(
        &s,
        Some((&cid, &new_secret)),
        &[("grant_type", "refresh_token"), ("refresh_token", t5["refresh_token"].as_str().unwrap())],
    )
    .await;
    assert_eq!(st, 400, "refresh tokens of the old secret end too");
    // The new secret works (client_secret_post this time).
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "eve", ANN_PASSWORD).await, "code").unwrap();
    let (st, _) = token_request(
        &s,
        None,
        &[("grant_type", "authorization_code"), ("code", &code), ("client_id", &cid), ("client_secret", &new_secret)],
    )
    .await;
    assert_eq!(st, 200);
}

#[tokio::test]
async fn the_metadata_document_lists_the_endpoints() {
    let s = TestServer::start().await;
    let doc = s.api().anonymous().get(&format!("{}/.well-known/oauth-authorization-server", origin(&s))).await;
    let doc = doc.ok();
    let o = origin(&s);
    assert_eq!(doc["issuer"], o.as_str());
    assert_eq!(doc["authorization_endpoint"], format!("{o}/oauth/authorize"));
    assert_eq!(doc["token_endpoint"], format!("{o}/oauth/token"));
    assert_eq!(doc["revocation_endpoint"], format!("{o}/oauth/revoke"));
    assert_eq!(doc["code_challenge_methods_supported"], json!(["S256"]));
    assert!(doc["scopes_supported"].as_array().unwrap().iter().any(|v| v == "child_account:read_write"));
}

#[tokio::test]
async fn the_authorization_server_base_path_is_configurable() {
    let config = format!("{TEST_CONFIG}\n[signin]\nbase_path = \"/login/oauth2\"\n");
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    let doc = s.api().anonymous().get(&format!("{}/.well-known/oauth-authorization-server", origin(&s))).await;
    assert_eq!(doc.ok()["token_endpoint"], format!("{}/login/oauth2/token", origin(&s)));
    let (st, e) = token_request_at(&s, "/login/oauth2/token").await;
    assert_eq!((st, e["error"].as_str()), (401, Some("invalid_client")));
}

async fn token_request_at(s: &TestServer, path: &str) -> (u16, serde_json::Value) {
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let res = form_post(&client, &format!("{}{path}", origin(s)), &[("grant_type", "authorization_code")])
        .send()
        .await
        .unwrap();
    (res.status().as_u16(), res.json().await.unwrap_or_default())
}

/// Racing exchanges of one code: exactly one gets tokens (the code is deleted by the exchange
/// that wins, in its transaction).
#[tokio::test]
async fn a_code_raced_by_many_exchanges_yields_one_token() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "ray", "email": "ray@example.com", "restricted": false})).await.ok();
    set_password(&s, "ray", ANN_PASSWORD).await;
    let mut cb = Callback::start().await;
    let (cid, secret) = client(&api, "App", &cb.url, false).await;
    let mut b = Browser::new();
    let q = format!("response_type=code&client_id={cid}");
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "ray", ANN_PASSWORD).await, "code").unwrap();
    let tries = (0..12).map(|_| {
        let (s, cid, secret, code) = (&s, cid.clone(), secret.clone(), code.clone());
        async move {
            token_request(s, Some((&cid, &secret)), &[("grant_type", "authorization_code"), ("code", &code)]).await.0
        }
    });
    let statuses = futures_util::future::join_all(tries).await;
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|s| *s == 200 || *s == 400), "{statuses:?}");
}
