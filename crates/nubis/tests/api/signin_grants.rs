//! Token families: a replayed code and a reused refresh token revoke everything issued under
//! their grant; a verifier without a challenge is refused; a password change ends every OAuth
//! token and sign-in session of the user (personal access tokens stay).

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::signin_support::*;
use crate::support::*;

const PW: &str = "Copper-Meadow-73k";

struct App {
    cid: String,
    secret: String,
    cb: Callback,
    query: String,
}

async fn setup(s: &TestServer, username: &str) -> App {
    let api = s.api();
    api.post("/account/users", json!({"username": username, "email": format!("{username}@example.com")})).await.ok();
    set_password(s, username, PW).await;
    let cb = Callback::start().await;
    let c = api.post("/account/oauth-clients", json!({"label": "App", "redirect_uri": cb.url})).await;
    let (cid, secret) = (c.ok()["id"].as_str().unwrap().to_string(), c.body["secret"].as_str().unwrap().to_string());
    let query = format!("response_type=code&client_id={cid}&scope={}", enc("vpc:read_only"));
    App { cid, secret, cb, query }
}

impl App {
    async fn code(&mut self, s: &TestServer, b: &mut Browser, username: &str) -> String {
        query_param(&sign_in(s, b, &mut self.cb, &self.query, username, PW).await, "code").unwrap()
    }
    async fn exchange(&self, s: &TestServer, fields: &[(&str, &str)]) -> (u16, Value) {
        token_request(s, Some((&self.cid, &self.secret)), fields).await
    }
    async fn redeem(&self, s: &TestServer, code: &str) -> (u16, Value) {
        self.exchange(s, &[("grant_type", "authorization_code"), ("code", code)]).await
    }
    async fn refresh(&self, s: &TestServer, t: &Value) -> (u16, Value) {
        self.exchange(s, &[("grant_type", "refresh_token"), ("refresh_token", t["refresh_token"].as_str().unwrap())])
            .await
    }
}

/// Whether an access token still opens the API.
async fn works(s: &TestServer, t: &Value) -> bool {
    match s.api_with(t["access_token"].as_str().unwrap()).get("/vpcs").await.status {
        200 => true,
        401 => false,
        other => panic!("unexpected {other}"),
    }
}

/// RFC 9700 2.1.1 / RFC 7636 4.6: a code issued without a challenge is refused with a verifier.
#[tokio::test]
async fn a_verifier_for_a_code_issued_without_a_challenge_is_refused() {
    let s = TestServer::start().await;
    let mut app = setup(&s, "vee").await;
    let mut b = Browser::new();
    let (verifier, _) = pkce();
    let code = app.code(&s, &mut b, "vee").await;
    let (st, e) =
        app.exchange(&s, &[("grant_type", "authorization_code"), ("code", &code), ("code_verifier", &verifier)]).await;
    assert_eq!((st, e["error"].as_str()), (400, Some("invalid_grant")), "{e}");
    // Without one, the private client's code works.
    let code = app.code(&s, &mut b, "vee").await;
    assert_eq!(app.redeem(&s, &code).await.0, 200);
}

/// RFC 6749 4.1.2: a code used twice is refused, and the tokens of its first use are revoked.
#[tokio::test]
async fn a_replayed_code_revokes_the_tokens_of_its_first_use() {
    let s = TestServer::start().await;
    let mut app = setup(&s, "rex").await;
    let mut b = Browser::new();
    let other = {
        let code = app.code(&s, &mut b, "rex").await;
        app.redeem(&s, &code).await.1
    };
    let code = app.code(&s, &mut b, "rex").await;
    let (st, t) = app.redeem(&s, &code).await;
    assert_eq!(st, 200, "{t}");
    let (st, t2) = app.refresh(&s, &t).await;
    assert_eq!(st, 200, "{t2}");
    assert!(works(&s, &t2).await);
    let (st, e) = app.redeem(&s, &code).await;
    assert_eq!((st, e["error"].as_str()), (400, Some("invalid_grant")));
    assert!(!works(&s, &t).await && !works(&s, &t2).await, "the code's tokens are revoked");
    assert_eq!(app.refresh(&s, &t2).await.0, 400);
    // Another grant of the same user and application is not touched.
    assert!(works(&s, &other).await);
    assert_eq!(app.refresh(&s, &other).await.0, 200);
}

/// RFC 9700 4.14.2: a refresh token used after it was rotated revokes every access and refresh
/// token descended from the same grant.
#[tokio::test]
async fn a_reused_refresh_token_revokes_its_whole_family() {
    let s = TestServer::start().await;
    let mut app = setup(&s, "ria").await;
    let mut b = Browser::new();
    let code = app.code(&s, &mut b, "ria").await;
    let (_, t1) = app.redeem(&s, &code).await;
    let (st, t2) = app.refresh(&s, &t1).await;
    assert_eq!(st, 200, "{t2}");
    let (st, t3) = app.refresh(&s, &t2).await;
    assert_eq!(st, 200, "{t3}");
    let code = app.code(&s, &mut b, "ria").await;
    let (_, unrelated) = app.redeem(&s, &code).await;
    assert!(works(&s, &t3).await);
    // t1's refresh token was rotated away: presenting it again ends the family.
    let (st, e) = app.refresh(&s, &t1).await;
    assert_eq!((st, e["error"].as_str()), (400, Some("invalid_grant")));
    for t in [&t1, &t2, &t3] {
        assert!(!works(&s, t).await);
    }
    assert_eq!(app.refresh(&s, &t3).await.0, 400, "the newest refresh token is revoked too");
    assert!(works(&s, &unrelated).await, "another grant is not");
    // Revoking a refresh token (RFC 7009) ends its grant's access tokens too.
    let (_, u2) = app.refresh(&s, &unrelated).await;
    let fields = [("token", u2["refresh_token"].as_str().unwrap())];
    assert_eq!(revoke_request(&s, Some((&app.cid, &app.secret)), &fields).await, 200);
    assert!(!works(&s, &u2).await);
}

fn admin_password_stdin(s: &TestServer, username: &str, password: &str) {
    let mut child = Command::new(BIN)
        .arg("admin")
        .arg("--data-dir")
        .arg(&s.dir)
        .args(["--database", &s.database, "--config"])
        .arg(s.dir.join("config.toml"))
        .args(["user", "password", "--username", username, "--password-stdin"])
        .env("NUBIS_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    writeln!(child.stdin.take().unwrap(), "{password}").unwrap();
    assert!(child.wait().unwrap().success());
}

/// A password change (the set-password link, or an operator's) revokes every OAuth access and
/// refresh token of the user and ends their sign-in sessions; personal access tokens stay, as
/// with the hosted API.
#[tokio::test]
async fn a_password_change_ends_oauth_tokens_and_sessions_but_not_personal_tokens() {
    let s = TestServer::start().await;
    let mut app = setup(&s, "pam").await;
    let pat = s.api_with(&s.token_for("pam", "*"));
    for change in ["link", "operator"] {
        let mut b = Browser::new();
        let code = app.code(&s, &mut b, "pam").await;
        let (_, t) = app.redeem(&s, &code).await;
        assert!(works(&s, &t).await);
        // The browser is signed in: no password asked.
        let page = b.get(&format!("{}/oauth/authorize?{}", origin(&s), app.query)).await;
        assert!(page.text.contains("Signed in as <strong>pam</strong>"), "{}", page.text);
        match change {
            "link" => set_password(&s, "pam", PW).await,
            _ => admin_password_stdin(&s, "pam", PW),
        }
        if change == "operator" {
            // Another process wrote the database: the server's read cache learns of it within
            // a moment (docs/architecture.md, Storage).
            eventually(5, "the server to see the operator's change", || async { (!works(&s, &t).await).then_some(()) })
                .await;
        }
        assert!(!works(&s, &t).await, "{change}: the access token ends");
        assert_eq!(app.refresh(&s, &t).await.0, 400, "{change}: the refresh token ends");
        let page = b.get(&format!("{}/oauth/authorize?{}", origin(&s), app.query)).await;
        assert!(page.text.contains("name=\"password\"") && !page.text.contains("Signed in as"), "{change}");
        let r = b.submit(&origin(&s), &page, &[("action", "approve")]).await;
        assert_eq!((r.status, r.location.as_deref()), (400, None), "{change}: the old session approves nothing");
        pat.get("/profile").await.ok();
    }
}
