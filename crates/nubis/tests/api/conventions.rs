//! API conventions that hold for every endpoint: the error envelope, paging, X-Filter, headers,
//! rate limiting, times, and liberal acceptance of harmless variations.

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn unknown_routes_answer_404_with_the_envelope() {
    let s = TestServer::start().await;
    s.api().get("/no/such/thing").await.expect_error(404, "-");
    s.api().anonymous().get("/nothing").await.expect_error(404, "-");
}

#[tokio::test]
async fn wrong_method_on_a_known_path_answers_405_with_the_envelope() {
    let s = TestServer::start().await;
    s.api().delete("/account/users").await.expect_error(405, "-");
    s.api().post("/profile", json!({})).await.expect_error(405, "-");
}

#[tokio::test]
async fn malformed_json_answers_400_and_changes_nothing() {
    let s = TestServer::start().await;
    let api = s.api();
    api.raw(reqwest::Method::POST, "/account/users", b"{\"username\": ", Some("application/json"))
        .await
        .expect_error(400, "-");
    api.raw(reqwest::Method::POST, "/account/users", b"username=bob", Some("text/plain")).await.expect_error(400, "-");
    api.raw(reqwest::Method::POST, "/account/users", b"[1,2]", Some("application/json")).await.expect_error(400, "-");
    let users = api.get("/account/users").await;
    assert_eq!(users.ok()["results"], 1);
}

#[tokio::test]
async fn a_field_of_the_wrong_type_is_named() {
    let s = TestServer::start().await;
    let r = s
        .api()
        .post("/account/users", json!({"username": "bobby", "email": "b@example.com", "restricted": "yes"}))
        .await;
    r.expect_error(400, "restricted");
}

#[tokio::test]
async fn a_body_over_the_size_limit_answers_413() {
    let s = TestServer::start_with(Options {
        config: TEST_CONFIG.replace("[limits]\n", "[limits]\nmax_body_bytes = 2048\n"),
        ..Default::default()
    })
    .await;
    let big = "x".repeat(4096);
    let r = s.api().post("/account/users", json!({"username": "bobby", "email": big})).await;
    r.expect_error(413, "-");
}

#[tokio::test]
async fn a_path_parameter_of_the_wrong_type_answers_404_with_the_envelope() {
    let s = TestServer::start().await;
    s.api().get("/profile/tokens/abc").await.expect_error(404, "-");
    s.api().get("/account/events/1.5").await.expect_error(404, "-");
}

#[tokio::test]
async fn paging_parameters_are_checked_and_named() {
    let s = TestServer::start().await;
    let api = s.api();
    api.get("/profile/tokens?page=0").await.expect_error(400, "page");
    api.get("/profile/tokens?page=abc").await.expect_error(400, "page");
    api.get("/profile/tokens?page_size=24").await.expect_error(400, "page_size");
    api.get("/profile/tokens?page_size=501").await.expect_error(400, "page_size");
    let r = api.get("/profile/tokens?page=0&page_size=5").await;
    r.expect_error(400, "page").expect_error(400, "page_size");
    api.get("/profile/tokens?page_size=25").await.ok();
    api.get("/profile/tokens?page_size=500").await.ok();
}

#[tokio::test]
async fn lists_are_paged_with_the_envelope() {
    let s = TestServer::start().await;
    let api = s.api();
    for i in 0..30 {
        api.post("/profile/tokens", json!({"label": format!("t{i}")})).await.ok();
    }
    let p1 = api.get("/profile/tokens?page_size=25").await;
    let b = p1.ok();
    assert_eq!((b["page"].as_u64(), b["pages"].as_u64(), b["results"].as_u64()), (Some(1), Some(2), Some(31)));
    assert_eq!(b["data"].as_array().unwrap().len(), 25);
    let p2 = api.get("/profile/tokens?page=2&page_size=25").await;
    assert_eq!(p2.ok()["data"].as_array().unwrap().len(), 6);
    let p9 = api.get("/profile/tokens?page=9&page_size=25").await;
    assert_eq!(p9.ok()["data"].as_array().unwrap().len(), 0);
    assert_eq!(p9.body["page"], 9);
    let all = api.get("/profile/tokens").await;
    assert_eq!(all.ok()["data"].as_array().unwrap().len(), 31, "default page size is 100");
}

/// A filter's text is compared as text whatever it holds: quotes, backslashes, SQL. (On
/// PostgreSQL a filter's values are written into its statement as constants.)
#[tokio::test]
async fn a_filters_text_is_compared_as_text_whatever_it_holds() {
    let s = TestServer::start().await;
    let api = s.api();
    let odd = ["it's", r"back\slash", r"\'; DROP TABLE tokens; --", "x' OR '1'='1", "%_"];
    for name in odd {
        api.post("/profile/tokens", json!({"label": name})).await.ok();
    }
    let labels = |r: &Resp| -> Vec<String> {
        r.ok()["data"].as_array().unwrap().iter().map(|t| t["label"].as_str().unwrap().to_string()).collect()
    };
    for name in odd {
        let r = api.get_filtered("/profile/tokens", &json!({"label": name}).to_string()).await;
        assert_eq!(labels(&r), [name], "{name}");
        assert_eq!(r.body["results"], 1, "{name}");
        let r = api.get_filtered("/profile/tokens", &json!({"label": {"+contains": name}}).to_string()).await;
        assert!(labels(&r).contains(&name.to_string()), "{name}: {:?}", labels(&r));
    }
    let r = api.get_filtered("/profile/tokens", &json!({"label": "x"}).to_string()).await;
    assert_eq!(r.ok()["results"], 0);
    // Text PostgreSQL cannot hold is refused there, as in any other request; SQLite finds none.
    let r = api.get_filtered("/profile/tokens", &json!({"label": "a\u{0}b"}).to_string()).await;
    assert!(r.status == 400 || (r.status == 200 && r.body["results"] == 0), "{} {}", r.status, r.body);
    assert_eq!(labels(&api.get("/profile/tokens").await).len(), odd.len() + 1, "the tokens are all there");
}

#[tokio::test]
async fn x_filter_selects_and_orders_on_filterable_fields() {
    let s = TestServer::start().await;
    let api = s.api();
    for name in ["alpha", "beta", "gamma"] {
        api.post("/profile/tokens", json!({"label": name})).await.ok();
    }
    let labels = |r: &Resp| -> Vec<String> {
        r.body["data"].as_array().unwrap().iter().map(|t| t["label"].as_str().unwrap().to_string()).collect()
    };
    let r = api.get_filtered("/profile/tokens", r#"{"label": "beta"}"#).await;
    assert_eq!(labels(&r), ["beta"]);
    assert_eq!(r.body["results"], 1);
    let r = api.get_filtered("/profile/tokens", r#"{"+or": [{"label": "alpha"}, {"label": "gamma"}]}"#).await;
    assert_eq!(labels(&r), ["alpha", "gamma"]);
    let r = api.get_filtered("/profile/tokens", r#"{"label": {"+contains": "mm"}}"#).await;
    assert_eq!(labels(&r), ["gamma"]);
    let r = api
        .get_filtered("/profile/tokens", r#"{"label": {"+neq": "bootstrap"}, "+order_by": "label", "+order": "desc"}"#)
        .await;
    assert_eq!(labels(&r), ["gamma", "beta", "alpha"]);
    let first = api.get("/profile/tokens").await.body["data"][1]["id"].as_i64().unwrap();
    let r = api.get_filtered("/profile/tokens", &format!(r#"{{"id": {{"+gt": {first}}}}}"#)).await;
    assert_eq!(labels(&r), ["beta", "gamma"]);
    let r = api
        .get_filtered(
            "/profile/tokens",
            &format!(r#"{{"+and": [{{"id": {{"+gte": {first}}}}}, {{"id": {{"+lte": {first}}}}}]}}"#),
        )
        .await;
    assert_eq!(labels(&r), ["alpha"]);
    let r = api.get_filtered("/profile/tokens", &format!(r#"{{"id": {{"+lt": {first}}}}}"#)).await;
    assert_eq!(labels(&r), ["bootstrap"]);
}

#[tokio::test]
async fn a_malformed_or_unfilterable_x_filter_answers_400() {
    let s = TestServer::start().await;
    let api = s.api();
    for bad in [
        "not json",
        r#"{"scopes": "*"}"#,
        r#"{"+order": "desc"}"#,
        r#"{"+order_by": "scopes"}"#,
        r#"{"label": {"+like": "a"}}"#,
        r#"{"+or": {"label": "a"}}"#,
    ] {
        api.get_filtered("/profile/tokens", bad).await.expect_error(400, "X-Filter");
    }
    api.get_filtered("/account/events", r#"{"id": "seven"}"#).await.expect_error(400, "X-Filter");
    api.get_filtered("/account/events", r#"{"secret": 1}"#).await.expect_error(400, "X-Filter");
}

#[tokio::test]
async fn times_are_utc_without_zone_or_fraction() {
    let s = TestServer::start().await;
    let t = s.api().post("/profile/tokens", json!({"label": "x"})).await;
    let created = t.ok()["created"].as_str().unwrap().to_string();
    assert_eq!(created.len(), 19, "{created}");
    assert!(chrono::NaiveDateTime::parse_from_str(&created, "%Y-%m-%dT%H:%M:%S").is_ok(), "{created}");
}

#[tokio::test]
async fn responses_carry_request_id_spec_version_and_scope_headers() {
    let s = TestServer::start().await;
    let r = s.api().get("/account/users").await;
    r.ok();
    assert_eq!(r.header("x-spec-version"), Some("4.176.0"));
    assert_eq!(r.header("x-oauth-scopes"), Some("*"));
    assert_eq!(r.header("x-accepted-oauth-scopes"), Some("account:read_only"));
    let id1 = r.header("x-request-id").unwrap().to_string();
    let id2 = s.api().get("/account/users").await.header("x-request-id").unwrap().to_string();
    assert_ne!(id1, id2);
    let r = s.api().send(reqwest::Method::GET, "/profile", None, &[("x-request-id", "trace-abc-123")]).await;
    assert_eq!(r.header("x-request-id"), Some("trace-abc-123"));
    let r = s.api().get("/nope").await;
    assert!(r.header("x-request-id").is_some(), "errors carry a request id too");
}

#[tokio::test]
async fn rate_limits_per_token_answer_429_with_retry_after() {
    let s = TestServer::start_with(Options {
        config: TEST_CONFIG.replace("rate_limit_requests = 1000000", "rate_limit_requests = 5"),
        ..Default::default()
    })
    .await;
    let api = s.api();
    let mut remaining = Vec::new();
    for _ in 0..5 {
        let r = api.get("/profile").await;
        r.ok();
        assert_eq!(r.header("x-ratelimit-limit"), Some("5"));
        assert!(r.header("x-ratelimit-reset").unwrap().parse::<u64>().unwrap() > 1_700_000_000);
        remaining.push(r.header("x-ratelimit-remaining").unwrap().parse::<u64>().unwrap());
    }
    assert_eq!(remaining, [4, 3, 2, 1, 0]);
    let r = api.get("/profile").await;
    r.expect_error(429, "-");
    assert!(r.header("retry-after").unwrap().parse::<u64>().unwrap() >= 1);
    // Another token has its own budget.
    let other = s.token_for("admin", "*");
    s.api_with(&other).get("/profile").await.ok();
}

#[tokio::test]
async fn the_openapi_document_is_served_and_names_every_operation() {
    let s = TestServer::start().await;
    let r = s.api().anonymous().get("/openapi.json").await;
    let doc = r.ok();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    let paths = doc["paths"].as_object().unwrap();
    assert!(paths.contains_key("/v4/account/users/{username}"));
    assert_eq!(doc["paths"]["/v4/profile/tokens"]["post"]["operationId"], "token_create");
}

#[tokio::test]
async fn healthz_needs_no_token_and_metrics_count_requests_per_route() {
    let s = TestServer::start().await;
    let root = s.base.trim_end_matches("/v4").to_string();
    let anon = s.api().anonymous();
    let h = anon.get(&format!("{root}/healthz")).await;
    assert_eq!(h.ok()["status"], "ok");
    s.api().get("/account/users").await.ok();
    let m = anon.get(&format!("{root}/metrics")).await;
    assert_eq!(m.status, 200);
    assert!(m.text.contains("nubis_http_requests_total"), "{}", m.text);
    assert!(m.text.contains(r#"route="/v4/account/users""#), "{}", m.text);
    assert!(m.text.contains("nubis_http_request_duration_seconds_bucket"), "{}", m.text);
}

#[tokio::test]
async fn harmless_variations_are_accepted() {
    let s = TestServer::start().await;
    let api = s.api();
    // A trailing slash on a collection.
    assert_eq!(api.get("/account/users/").await.ok()["results"], 1);
    // Paging parameters on a single-record endpoint are ignored.
    api.get("/profile?page=0&page_size=1").await.ok();
    // Bodies without a JSON content type, and actions with no body, an empty body or {}.
    api.raw(reqwest::Method::POST, "/profile/tokens", br#"{"label":"plain"}"#, Some("text/plain")).await.ok();
    let ev = api.get("/account/events").await.body["data"][0]["id"].as_i64().unwrap();
    api.post_empty(&format!("/account/events/{ev}/read")).await.ok();
    api.raw(reqwest::Method::POST, &format!("/account/events/{ev}/read"), b"", None).await.ok();
    let r = api.post(&format!("/account/events/{ev}/seen"), json!({})).await;
    assert_eq!(r.ok(), &json!({}));
}

#[tokio::test]
async fn every_request_gets_one_access_log_line_without_secrets() {
    let mut s = TestServer::start_with(Options { log: "info", ..Default::default() }).await;
    let r = s.api().get("/account/users?page=1").await;
    let id = r.header("x-request-id").unwrap().to_string();
    let secret =
        s.api().post("/profile/tokens", json!({"label": "hidden"})).await.ok()["token"].as_str().unwrap().to_string();
    assert!(s.stop());
    let log = s.log();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains(&id)).collect();
    assert_eq!(lines.len(), 1, "{log}");
    for part in ["method=GET", "route=/v4/account/users", "status=200", "latency_us="] {
        assert!(lines[0].contains(part), "{part} missing in {}", lines[0]);
    }
    assert!(!log.contains(&secret), "a token secret reached the log");
    assert!(!log.contains(&s.token), "the bootstrap token reached the log");
}

#[tokio::test]
async fn a_throwaway_in_memory_database_works() {
    let s = TestServer::start_with(Options { database: Some("sqlite::memory:".into()), ..Default::default() }).await;
    s.api().post("/account/users", json!({"username": "ephemeral", "email": "e@example.com"})).await.ok();
    assert_eq!(s.api().get("/account/users").await.ok()["results"], 2);
}

#[tokio::test]
async fn the_catalog_lists_regions_types_and_images() {
    let s = TestServer::start().await;
    let anon = s.api().anonymous();
    let regions = anon.get("/regions").await;
    let r = regions.ok()["data"].as_array().unwrap();
    assert!(r.len() >= 3);
    assert!(r.iter().any(|r| r["capabilities"].as_array().unwrap().iter().any(|c| c == "VPCs")));
    anon.get("/regions/nowhere").await.expect_error(404, "-");
    let types = anon.get_filtered("/compute/types", r#"{"class": "standard"}"#).await;
    assert!(types.ok()["data"].as_array().unwrap().iter().all(|t| t["class"] == "standard"));
    assert!(types.body["data"][0]["price"]["monthly"].is_number());
    anon.get("/compute/types/g6-nanode-1").await.ok();
    assert_eq!(anon.get("/images/linode%2Fdebian12").await.ok()["id"], "linode/debian12");
    assert_eq!(anon.get("/images/linode/debian12").await.ok()["id"], "linode/debian12");
    anon.get("/images/linode/nothing").await.expect_error(404, "-");
}
