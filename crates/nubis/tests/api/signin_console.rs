//! The console's OAuth client and sessions under attack: the client is a system client no
//! account can see or change, its redirect URI is the console's own callback, signing out of the
//! console ends the authorization server's session too, and only the console (not a third-party
//! application) may create personal access tokens with the tokens it holds. Redirect URIs of
//! applications need https except on loopback.

use serde_json::json;

use crate::signin_support::*;
use crate::support::*;

pub const PW: &str = "Amber-Lantern-58q";

/// Signs a user in to the console through the authorization server, as a browser does; returns
/// the dashboard's HTML.
pub async fn console_sign_in(s: &TestServer, b: &mut Browser, username: &str, password: Option<&str>) -> String {
    let o = origin(s);
    let start = b.get(&format!("{o}/signin")).await;
    assert_eq!(start.status, 303, "{}", start.text);
    let authorize = start.location.unwrap();
    assert!(authorize.starts_with("/oauth/authorize?") && authorize.contains("client_id=nubis-console"), "{authorize}");
    let page = b.get(&format!("{o}{authorize}")).await;
    assert_eq!(page.status, 200, "{}", page.text);
    let mut typed = vec![("action", "approve")];
    if let Some(p) = password {
        typed.extend([("username", username), ("password", p)]);
    }
    let back = b.submit(&o, &page, &typed).await;
    assert_eq!(back.status, 303, "{}", back.text);
    let callback = back.location.unwrap();
    assert!(callback.starts_with(&format!("{o}/callback?")), "{callback}");
    let home = b.get(&callback).await;
    assert_eq!((home.status, home.location.as_deref()), (303, Some("/")), "{}", home.text);
    let dash = b.get(&format!("{o}/")).await;
    assert_eq!(dash.status, 200, "{}", dash.text);
    assert!(dash.text.contains(&format!("<span id=\"whoami\">{username}")), "{}", dash.text);
    dash.text
}

/// The session's CSRF token on a console page.
pub fn console_csrf(html: &str) -> String {
    hidden_inputs(html).into_iter().find(|(k, _)| k == "csrf").expect("a csrf input").1
}

/// A second account with its owner, whose password is set; returns the owner's username.
fn other_account_owner(s: &TestServer) -> String {
    let owner = unique("owner");
    let (ok, _, err) =
        s.admin(&["account", "create", "--company", "Other Co", "--username", &owner, "--email", "other@example.com"]);
    assert!(ok, "{err}");
    owner
}

/// The red-team finding: a restricted user of the first account with account_access read_write
/// repointed the console's client at an outside URL, and could delete it or reset its secret.
#[tokio::test]
async fn the_console_client_belongs_to_no_account_and_no_one_can_change_it() {
    let s = TestServer::start().await;
    let api = s.api();
    // The console has been used (an earlier release registered its client then).
    assert_eq!(Browser::new().get(&format!("{}/signin", origin(&s))).await.status, 303);
    let (_, mallory) = user_with_token(&s, "mallory", true, "*").await;
    api.put("/account/users/mallory/grants", json!({"global": {"account_access": "read_write"}})).await.ok();
    mallory.get("/account/oauth-clients").await.ok();
    let path = "/account/oauth-clients/nubis-console";
    for who in [&mallory, &api] {
        who.put(path, json!({"redirect_uri": "https://evil.example/cb"})).await.status_is(404);
        who.put(path, json!({"label": "mine now"})).await.status_is(404);
        who.get(path).await.status_is(404);
        who.post_empty(&format!("{path}/reset-secret")).await.status_is(404);
        who.raw(reqwest::Method::PUT, &format!("{path}/thumbnail"), b"\x89PNG\r\n\x1a\n", Some("image/png"))
            .await
            .status_is(404);
        who.delete(path).await.status_is(404);
        let list = who.get_filtered("/account/oauth-clients", r#"{"id": "nubis-console"}"#).await;
        assert_eq!(list.ok()["results"], 0);
        assert!(!who.get("/account/oauth-clients").await.text.contains("nubis-console"));
    }
    api.anonymous().get(&format!("{path}/thumbnail")).await.status_is(404);
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM oauth_clients WHERE id = 'nubis-console'").await, 0);

    // The authorization server sends the console's codes to the console's callback only.
    let o = origin(&s);
    let (_, challenge) = pkce();
    for elsewhere in ["https://evil.example/cb", "http://127.0.0.1:9/callback", &format!("{o}/callback/x")] {
        let r = Browser::new()
            .get(&format!(
                "{o}/oauth/authorize?response_type=code&client_id=nubis-console&redirect_uri={}&code_challenge={challenge}&code_challenge_method=S256",
                enc(elsewhere)
            ))
            .await;
        assert_eq!((r.status, r.location.as_deref()), (400, None), "{elsewhere}: {}", r.text);
    }

    // The console still signs in users of both accounts, each into their own account.
    api.post("/account/users", json!({"username": "ann", "email": "ann@example.com", "restricted": false})).await.ok();
    set_password(&s, "ann", PW).await;
    let owner = other_account_owner(&s);
    set_password(&s, &owner, PW).await;
    for who in ["ann", owner.as_str()] {
        let mut b = Browser::new();
        console_sign_in(&s, &mut b, who, Some(PW)).await;
        let users = b.get(&format!("{o}/users")).await;
        assert_eq!(users.status, 200);
        assert_eq!(users.text.contains("mallory"), who == "ann", "{who} sees their own account's users");
    }
}

/// Signing out of the console ends the authorization server's session on the server, and the
/// console's token: replaying the old cookies signs nobody in.
#[tokio::test]
async fn console_sign_out_ends_the_sessions_on_the_server() {
    let s = TestServer::start().await;
    s.api()
        .post("/account/users", json!({"username": "boris", "email": "boris@example.com", "restricted": false}))
        .await
        .ok();
    set_password(&s, "boris", PW).await;
    let o = origin(&s);
    let mut b = Browser::new();
    let dash = console_sign_in(&s, &mut b, "boris", Some(PW)).await;
    // A second sign-in skips the password while the server's session lasts.
    let query = authorize_query_of(&mut b, &o).await;
    let again = b.get(&format!("{o}/oauth/authorize?{query}")).await;
    assert!(again.text.contains("Signed in as <strong>boris</strong>"), "{}", again.text);
    let console_tokens = "SELECT COUNT(*) FROM tokens WHERE client_id = 'nubis-console'";
    assert!(db_scalar(&s, console_tokens).await >= 1);
    let old_cookies = b.cookies.clone();
    assert!(old_cookies.contains_key("nubis_session") && old_cookies.contains_key("nubis_console"));

    let out = b.post_form(&format!("{o}/signout"), &[("csrf".to_string(), console_csrf(&dash))]).await;
    assert_eq!(out.status, 200, "{}", out.text);
    assert_eq!(db_scalar(&s, console_tokens).await, 0, "the console's tokens are revoked");

    // The old cookies, replayed.
    let mut replay = Browser::new();
    replay.cookies = old_cookies;
    let console = replay.get(&format!("{o}/")).await;
    assert_eq!((console.status, console.location.as_deref()), (303, Some("/signin")));
    let query = authorize_query_of(&mut replay, &o).await;
    let page = replay.get(&format!("{o}/oauth/authorize?{query}")).await;
    assert_eq!(page.status, 200);
    assert!(!page.text.contains("Signed in as") && page.text.contains("name=\"password\""), "{}", page.text);
    // Approving without the password is refused.
    let r = replay.submit(&o, &page, &[("action", "approve")]).await;
    assert_eq!((r.status, r.location.as_deref()), (400, None), "{}", r.text);
    assert!(r.text.contains("password"));
}

/// The console's authorization request (its `/signin` redirect), without the leading path.
async fn authorize_query_of(b: &mut Browser, o: &str) -> String {
    let start = b.get(&format!("{o}/signin")).await;
    start.location.unwrap().split_once('?').unwrap().1.to_string()
}

/// A token issued to a third-party application cannot mint a personal access token (which would
/// outlive the application); the console's tokens can. Deleting an application or resetting its
/// secret ends every token issued to it.
#[tokio::test]
async fn only_the_console_may_create_personal_access_tokens_with_an_oauth_token() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/account/users", json!({"username": "cyril", "email": "cyril@example.com", "restricted": false}))
        .await
        .ok();
    set_password(&s, "cyril", PW).await;
    let mut cb = Callback::start().await;
    let c = api.post("/account/oauth-clients", json!({"label": "Third", "redirect_uri": cb.url})).await;
    let (cid, secret) = (c.ok()["id"].as_str().unwrap().to_string(), c.body["secret"].as_str().unwrap().to_string());
    let q = format!("response_type=code&client_id={cid}&scope=*");
    let mut b = Browser::new();
    let exchange = |code: String| {
        let (s, cid, secret) = (&s, cid.clone(), secret.clone());
        async move {
            token_request(s, Some((&cid, &secret)), &[("grant_type", "authorization_code"), ("code", &code)]).await
        }
    };
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "cyril", PW).await, "code").unwrap();
    let (st, t) = exchange(code).await;
    assert_eq!(st, 200, "{t}");
    let app = s.api_with(t["access_token"].as_str().unwrap());
    app.get("/profile").await.ok();
    app.post("/profile/tokens", json!({"label": "forever"})).await.status_is(403);
    assert_eq!(app.get("/profile/tokens").await.ok()["results"], 0);
    // Nor a proxy user's token for a child account (the account is made a parent here).
    let euuid = api.get("/account").await.ok()["euuid"].as_str().unwrap().to_string();
    let (ok, _, err) = s.admin(&[
        "account",
        "create",
        "--company",
        "Kid Co",
        "--username",
        "kid-owner",
        "--email",
        "k@example.com",
        "--parent",
        &euuid,
    ]);
    assert!(ok, "{err}");
    let child = api.get("/account/child-accounts").await.ok()["data"][0]["euuid"].as_str().unwrap().to_string();
    api.post_empty(&format!("/account/child-accounts/{child}/token")).await.ok();
    app.post_empty(&format!("/account/child-accounts/{child}/token")).await.status_is(403);

    // The console, with its own token for cy, creates one.
    let mut console = Browser::new();
    console_sign_in(&s, &mut console, "cyril", Some(PW)).await;
    let page = console.get(&format!("{}/tokens", origin(&s))).await;
    let made = console.submit(&origin(&s), &page, &[("label", "from-console"), ("scopes", "*")]).await;
    assert_eq!(made.status, 200, "{}", made.text);
    assert!(made.text.contains("id=\"new-secret\""), "{}", made.text);

    // Resetting the secret, then deleting the application, ends what was issued to it.
    app.get("/profile").await.ok();
    api.post_empty(&format!("/account/oauth-clients/{cid}/reset-secret")).await.ok();
    app.get("/profile").await.status_is(401);
    let new_secret = api.post_empty(&format!("/account/oauth-clients/{cid}/reset-secret")).await;
    let new_secret = new_secret.ok()["secret"].as_str().unwrap().to_string();
    let code = query_param(&sign_in(&s, &mut b, &mut cb, &q, "cyril", PW).await, "code").unwrap();
    let (st, t) =
        token_request(&s, Some((&cid, &new_secret)), &[("grant_type", "authorization_code"), ("code", &code)]).await;
    assert_eq!(st, 200, "{t}");
    let app = s.api_with(t["access_token"].as_str().unwrap());
    app.get("/profile").await.ok();
    api.delete(&format!("/account/oauth-clients/{cid}")).await.ok();
    app.get("/profile").await.status_is(401);
    let (st, _) = token_request(
        &s,
        Some((&cid, &new_secret)),
        &[("grant_type", "refresh_token"), ("refresh_token", t["refresh_token"].as_str().unwrap())],
    )
    .await;
    assert_eq!(st, 401);
}

/// Plain http only for loopback redirect URIs (RFC 8252 7.3, RFC 9700 2.1), ports 1-65535.
#[tokio::test]
async fn redirect_uris_need_https_except_on_loopback_and_a_real_port() {
    let s = TestServer::start().await;
    let api = s.api();
    for ok in [
        "http://127.0.0.1:8080/cb",
        "http://127.9.9.9/cb",
        "http://localhost:3000/cb",
        "http://[::1]:3000/cb",
        "https://app.example/cb",
        "https://app.example:65535/cb",
    ] {
        api.post("/account/oauth-clients", json!({"label": "c", "redirect_uri": ok})).await.ok();
    }
    for bad in [
        "http://app.example/cb",
        "http://192.0.2.10/cb",
        "http://localhost.app.example/cb",
        "https://app.example:99999/cb",
        "https://app.example:0/cb",
        "http://127.0.0.1:65536/cb",
    ] {
        api.post("/account/oauth-clients", json!({"label": "c", "redirect_uri": bad}))
            .await
            .expect_error(400, "redirect_uri");
    }
    let c = api.post("/account/oauth-clients", json!({"label": "c", "redirect_uri": "https://app.example/cb"})).await;
    let id = c.ok()["id"].as_str().unwrap().to_string();
    let path = format!("/account/oauth-clients/{id}");
    api.put(&path, json!({"redirect_uri": "http://app.example/cb"})).await.expect_error(400, "redirect_uri");
    api.put(&path, json!({"redirect_uri": "https://app.example:99999/cb"})).await.expect_error(400, "redirect_uri");
    assert_eq!(api.get(&path).await.ok()["redirect_uri"], "https://app.example/cb");
}
