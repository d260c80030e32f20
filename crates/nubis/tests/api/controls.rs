//! The test controls (issue 17): the control API under `/nubis/v1` and its operator tokens, the
//! clock, injected faults, snapshots, restores and resets; and the public API unchanged when the
//! controls are disabled.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::instances::{create_instance, id, wait_status};
use crate::support::*;

pub const OPERATOR: &str = "operator-token-for-tests-0001";

/// A server with an operator token, and its control API.
pub async fn controlled(extra: &[&str], config: Option<String>) -> (TestServer, Api) {
    let mut args = vec!["--operator-token".to_string(), OPERATOR.to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let opts =
        Options { extra_args: args, config: config.unwrap_or_else(|| TEST_CONFIG.to_string()), ..Default::default() };
    let s = TestServer::start_with(opts).await;
    let ctl = Api::new(&format!("http://{}/nubis/v1", s.addr), OPERATOR);
    (s, ctl)
}

async fn vpc(api: &Api, label: &str) -> Value {
    api.post("/vpcs", json!({"label": label, "region": "us-east"})).await.ok().clone()
}

async fn vpc_labels(api: &Api) -> Vec<String> {
    let r = api.get("/vpcs").await;
    r.ok()["data"].as_array().unwrap().iter().map(|v| v["label"].as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn the_control_api_takes_operator_tokens_only() {
    let (s, ctl) = controlled(&[], None).await;
    assert_eq!(ctl.get("/clock").await.ok()["offset_seconds"], 0);
    ctl.anonymous().get("/clock").await.expect_error(401, "-");
    ctl.with_token("not-a-token-at-all").get("/clock").await.expect_error(401, "-");
    // The account owner's token (scope *) is a valid token, but not an operator's.
    ctl.with_token(&s.token).get("/clock").await.expect_error(403, "-");
    ctl.with_token(&s.token).post("/reset", json!({})).await.expect_error(403, "-");
    // And an operator token opens nothing of the public API.
    s.api_with(OPERATOR).get("/vpcs").await.expect_error(401, "-");
    // Its own OpenAPI document, apart from the public one.
    let doc = ctl.anonymous().get("/openapi.json").await;
    let paths = doc.ok()["paths"].as_object().unwrap();
    for p in [
        "/nubis/v1/clock",
        "/nubis/v1/clock/advance",
        "/nubis/v1/faults",
        "/nubis/v1/faults/{fault_id}",
        "/nubis/v1/snapshots",
        "/nubis/v1/snapshots/{name}/restore",
        "/nubis/v1/reset",
    ] {
        assert!(paths.contains_key(p), "{p} missing from the control API's document");
    }
    let public = s.api().anonymous().get("/openapi.json").await;
    assert!(!public.text.contains("/nubis/v1"), "the public document does not list the controls");
}

#[tokio::test]
async fn admin_token_create_operator_prints_a_token_the_controls_accept() {
    let (s, ctl) = controlled(&[], None).await;
    let (ok, out, err) = s.admin(&["token", "create", "--operator", "--label", "ci"]);
    assert!(ok, "{err}");
    let token = out.trim();
    assert_eq!(token.len(), 64, "{out}");
    assert_eq!(ctl.with_token(token).get("/clock").await.status, 200);
    // The admin commands mirror the control API against the running server.
    let base = format!("http://{}", s.addr);
    let (ok, out, err) = s.admin(&["--url", &base, "--operator-token", token, "clock", "advance", "3600"]);
    assert!(ok, "{err}");
    assert!(out.contains("\"offset_seconds\": 3600"), "{out}");
    let (ok, out, _) = s.admin(&[
        "--url",
        &base,
        "--operator-token",
        token,
        "fault",
        "add",
        r#"{"route":"GET /v4/vpcs","status":503,"count":1}"#,
    ]);
    assert!(ok && out.contains("\"status\": 503"), "{out}");
    s.api().get("/vpcs").await.status_is(503);
    let (ok, _, err) = s.admin(&["--url", &base, "--operator-token", "wrong-token-xxxxxxxx", "clock", "show"]);
    assert!(!ok && err.contains("401"), "{err}");
    // Snapshots, reset and fixtures from scripts.
    let ctl_cli = |args: &[&str]| {
        let mut all = vec!["--url", base.as_str(), "--operator-token", token];
        all.extend_from_slice(args);
        let (ok, out, err) = s.admin(&all);
        assert!(ok, "{args:?}: {err}");
        out
    };
    ctl_cli(&["snapshot", "save", "empty"]);
    vpc(&s.api(), "cli-net").await;
    assert!(ctl_cli(&["snapshot", "list"]).contains("\"empty\""));
    ctl_cli(&["snapshot", "restore", "empty"]);
    assert!(vpc_labels(&s.api()).await.is_empty());
    let file = s.dir.join("fixture.yaml");
    std::fs::write(
        &file,
        "accounts:\n  - owner: admin\n    existing: true\n    vpcs: [{label: cli-fixture, region: us-east}]\n",
    )
    .unwrap();
    assert!(ctl_cli(&["fixtures", file.to_str().unwrap()]).contains("\"vpcs\": 1"));
    assert_eq!(vpc_labels(&s.api()).await, vec!["cli-fixture"]);
    ctl_cli(&["reset"]);
    assert!(vpc_labels(&s.api()).await.is_empty());
    ctl_cli(&["clock", "reset"]);
    ctl_cli(&["snapshot", "delete", "empty"]);
}

#[tokio::test]
async fn controls_disabled_are_an_unknown_route_and_the_public_api_is_the_same() {
    let (on, _) = controlled(&[], None).await;
    let (off, ctl_off) = controlled(&["--no-controls"], None).await;
    // Nothing of the controls is reachable: the answer of any unknown route.
    let unknown = off.api().get("/no-such-route").await;
    for path in ["/clock", "/faults", "/openapi.json", "/snapshots"] {
        let r = ctl_off.get(path).await;
        assert_eq!((r.status, &r.body), (404, &unknown.body), "{path}");
    }
    assert_eq!(ctl_off.post("/reset", json!({})).await.status, 404);
    // The same public requests get the same answers (ids, statuses, bodies; times aside).
    async fn script(s: &TestServer) -> Vec<(u16, Value)> {
        let api = s.api();
        let mut out = Vec::new();
        let mut push = |r: Resp| {
            let mut b = r.body.clone();
            scrub(&mut b);
            out.push((r.status, b));
        };
        push(api.get("/vpcs").await);
        push(
            api.post(
                "/vpcs",
                json!({"label": "net-1", "region": "us-east", "subnets": [{"label": "a", "ipv4": "10.0.0.0/24"}]}),
            )
            .await,
        );
        push(api.post("/vpcs", json!({"label": "bad label!", "region": "nowhere"})).await);
        push(api.get("/vpcs/1").await);
        push(api.put("/vpcs/1", json!({"label": "net-2"})).await);
        push(api.get("/vpcs").await);
        push(api.get("/vpcs/999").await);
        push(api.anonymous().get("/vpcs").await);
        push(api.get("/regions").await);
        push(api.get("/profile").await);
        push(api.get("/account/events").await);
        push(api.delete("/vpcs/1").await);
        push(api.get("/nope").await);
        out
    }
    fn scrub(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if ["created", "updated", "active_since", "last_login", "email", "start_time", "complete_time"]
                        .contains(&k.as_str())
                    {
                        *x = Value::Null;
                    } else {
                        scrub(x);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(scrub),
            _ => {}
        }
    }
    let (a, b) = (script(&on).await, script(&off).await);
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "request {i} answered differently with the controls disabled");
    }
    assert_eq!(on.api().get("/openapi.json").await.body, off.api().get("/openapi.json").await.body);
}

#[tokio::test]
async fn advancing_the_clock_expires_tokens() {
    let (s, ctl) = controlled(&[], None).await;
    let api = s.api();
    let expiry = api.get("/profile").await; // any request: the server is up
    expiry.ok();
    let now = ctl.get("/clock").await.ok()["now"].as_str().unwrap().to_string();
    let in_two_hours =
        chrono::NaiveDateTime::parse_from_str(&now, "%Y-%m-%dT%H:%M:%S").unwrap() + chrono::Duration::hours(2);
    let t = api
        .post(
            "/profile/tokens",
            json!({"label": "short", "expiry": in_two_hours.format("%Y-%m-%dT%H:%M:%S").to_string()}),
        )
        .await;
    let short = s.api_with(t.ok()["token"].as_str().unwrap());
    short.get("/profile").await.ok();
    let c = ctl.post("/clock/advance", json!({"seconds": 3 * 3600})).await;
    assert_eq!(c.ok()["offset_seconds"], 3 * 3600);
    let moved = c.body["now"].as_str().unwrap();
    assert!(moved > now.as_str(), "{moved} after {now}");
    short.get("/profile").await.expect_error(401, "-");
    api.get("/profile").await.ok();
    // Back to real time: the token works again (expiry is read from the one clock).
    assert_eq!(ctl.post_empty("/clock/reset").await.ok()["offset_seconds"], 0);
    short.get("/profile").await.ok();
    ctl.post("/clock/advance", json!({"seconds": 0})).await.expect_error(400, "seconds");
    ctl.post("/clock/advance", json!({})).await.expect_error(400, "seconds");
}

#[tokio::test]
async fn advancing_the_clock_moves_events_out_of_the_90_day_window() {
    let (s, ctl) = controlled(&[], None).await;
    let api = s.api();
    vpc(&api, "old-net").await;
    assert_eq!(event_actions(&api).await, vec!["vpc_create"]);
    ctl.post("/clock/advance", json!({"seconds": 89 * 86_400})).await.ok();
    assert_eq!(event_actions(&api).await, vec!["vpc_create"], "still inside 90 days");
    ctl.post("/clock/advance", json!({"seconds": 2 * 86_400})).await.ok();
    assert!(event_actions(&api).await.is_empty(), "older than 90 days by the clock");
    // New records carry the clock's time.
    let v = vpc(&api, "new-net").await;
    let now = ctl.get("/clock").await.ok()["now"].as_str().unwrap().to_string();
    assert_eq!(&v["created"].as_str().unwrap()[..10], &now[..10]);
}

#[tokio::test]
async fn the_clock_is_set_and_reset() {
    let (_s, ctl) = controlled(&[], None).await;
    let r = ctl.post("/clock/set", json!({"now": "2099-01-01T00:00:00"})).await;
    assert_eq!(r.ok()["now"], "2099-01-01T00:00:00");
    assert!(r.body["offset_seconds"].as_i64().unwrap() > 0);
    ctl.post("/clock/set", json!({"now": "2001-01-01T00:00:00"})).await.expect_error(400, "now");
    ctl.post("/clock/set", json!({"now": "soon"})).await.expect_error(400, "now");
    assert_eq!(ctl.get("/clock").await.ok()["now"].as_str().unwrap()[..4], *"2099");
    assert_eq!(ctl.post_empty("/clock/reset").await.ok()["offset_seconds"], 0);
}

#[tokio::test]
async fn a_route_fault_answers_the_next_n_requests_then_goes() {
    let (s, ctl) = controlled(&[], None).await;
    let api = s.api();
    let f = ctl.post("/faults", json!({"route": "GET /v4/vpcs", "status": 503, "count": 2})).await;
    let f = f.ok().clone();
    assert_eq!((f["route"].as_str(), f["count"].as_u64()), (Some("GET /v4/vpcs"), Some(2)));
    assert_eq!(ctl.get("/faults").await.ok()["results"], 1);
    // Other routes and methods are untouched.
    vpc(&api, "net").await;
    api.get("/regions").await.ok();
    for _ in 0..2 {
        let r = api.get("/vpcs").await;
        r.status_is(503).expect_envelope();
    }
    assert_eq!(api.get("/vpcs").await.ok()["results"], 1);
    assert_eq!(ctl.get("/faults").await.ok()["results"], 0, "used up");
    // 429 carries Retry-After; path templates name routes with parameters.
    ctl.post("/faults", json!({"route": "GET /v4/vpcs/{vpc_id}", "status": 429, "retry_after": 7, "count": 1}))
        .await
        .ok();
    let r = api.get("/vpcs/1").await;
    r.status_is(429).expect_envelope();
    assert_eq!(r.header("retry-after"), Some("7"));
    api.get("/vpcs/1").await.ok();
    // Until deleted when not counted; a 500 as well.
    let f = ctl.post("/faults", json!({"route": "POST /v4/vpcs", "status": 500})).await.ok().clone();
    for _ in 0..3 {
        api.post("/vpcs", json!({"label": "x", "region": "us-east"})).await.status_is(500).expect_envelope();
    }
    ctl.delete(&format!("/faults/{}", f["id"])).await.ok();
    ctl.delete(&format!("/faults/{}", f["id"])).await.expect_error(404, "-");
    vpc(&api, "after").await;
    // Every field error at once.
    let r = ctl
        .post("/faults", json!({"route": "GET /v4/nothing-here", "status": 418, "count": 0, "account": "NOPE"}))
        .await;
    r.expect_error(400, "route");
    for field in ["status", "count", "account"] {
        assert!(r.fields().contains(&field.to_string()), "{field}: {}", r.text);
    }
    ctl.post("/faults", json!({"status": 503})).await.expect_error(400, "route");
}

#[tokio::test]
async fn a_fault_scoped_to_an_account_spares_the_others_and_latency_delays() {
    let (s, ctl) = controlled(&[], None).await;
    let other = other_account(&s);
    let (_, accounts, _) = s.admin(&["account", "list"]);
    let line = accounts.lines().find(|l| l.contains("Other Co")).unwrap();
    let euuid = line.split_whitespace().next().unwrap().to_string();
    ctl.post("/faults", json!({"route": "GET /v4/vpcs", "status": 503, "account": euuid})).await.ok();
    s.api().get("/vpcs").await.ok();
    other.get("/vpcs").await.status_is(503);
    s.api().get("/vpcs").await.ok();
    ctl.post("/faults", json!({"route": "GET /v4/regions", "latency_ms": 1500, "count": 1})).await.ok();
    let t = Instant::now();
    s.api().get("/regions").await.ok();
    assert!(t.elapsed() >= Duration::from_millis(1500), "{:?}", t.elapsed());
    let t = Instant::now();
    s.api().get("/regions").await.ok();
    assert!(t.elapsed() < Duration::from_millis(1500), "only the next request: {:?}", t.elapsed());
}

#[tokio::test]
async fn a_timed_fault_ends_when_the_clock_passes_it() {
    let (s, ctl) = controlled(&[], None).await;
    ctl.post("/faults", json!({"route": "GET /v4/vpcs", "status": 503, "seconds": 600})).await.ok();
    s.api().get("/vpcs").await.status_is(503);
    ctl.post("/clock/advance", json!({"seconds": 601})).await.ok();
    s.api().get("/vpcs").await.ok();
    assert_eq!(ctl.get("/faults").await.ok()["results"], 0);
}

#[tokio::test]
async fn an_instance_stays_provisioning_or_fails_to_boot() {
    let (s, ctl) = controlled(&[], None).await;
    let api = s.api();
    ctl.post("/faults", json!({"kind": "instance_provisioning", "count": 1})).await.ok();
    let stuck = create_instance(&api, "us-east", json!({"label": "stuck"})).await;
    eventually(10, "the fault to be used", || {
        let ctl = ctl.clone();
        async move { (ctl.get("/faults").await.body["results"] == 0).then_some(()) }
    })
    .await;
    let fine = create_instance(&api, "us-east", json!({"label": "fine"})).await;
    wait_status(&api, id(&fine), "running").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = api.get(&format!("/compute/instances/{}", id(&stuck))).await;
    assert_eq!(r.ok()["status"], "provisioning");
    // A boot failure: the boot event fails and the instance stays offline.
    let inst = create_instance(&api, "us-east", json!({"label": "noboot", "booted": false})).await;
    wait_status(&api, id(&inst), "offline").await;
    ctl.post("/faults", json!({"kind": "instance_boot", "instance_id": id(&inst)})).await.ok();
    api.post_empty(&format!("/compute/instances/{}/boot", id(&inst))).await.ok();
    let failed = eventually(10, "a failed boot event", || {
        let api = api.clone();
        async move {
            let r = api.get("/account/events?page_size=100").await;
            r.body["data"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["action"] == "instance_boot" && e["status"] == "failed")
                .cloned()
        }
    })
    .await;
    assert_eq!(failed["entity"]["id"], id(&inst));
    wait_status(&api, id(&inst), "offline").await;
    ctl.post("/faults", json!({"kind": "instance_boot", "route": "GET /v4/vpcs"})).await.expect_error(400, "route");
    ctl.post("/faults", json!({"kind": "instance_boot", "instance_id": 99999})).await.expect_error(400, "instance_id");
}

#[tokio::test]
async fn reverse_dns_forward_lookups_fail() {
    let dns = "[dns]\noffline = true\n[dns.static_records]\n\"web.example.com\" = [\"127.10.0.2\"]\n";
    let (s, ctl) = controlled(&[], Some(TEST_CONFIG.replace("[dns]\noffline = true\n", dns))).await;
    let api = s.api();
    let inst = create_instance(&api, "us-east", json!({"booted": false})).await;
    let public = inst["ipv4"][0].as_str().unwrap().to_string();
    ctl.post("/faults", json!({"kind": "rdns_lookup", "count": 1})).await.ok();
    let url = format!("/networking/ips/{public}");
    let r = api.put(&url, json!({"rdns": "web.example.com"})).await;
    r.expect_error(400, "rdns");
    assert!(r.text.contains("could not be checked"), "{}", r.text);
    assert_eq!(api.put(&url, json!({"rdns": "web.example.com"})).await.ok()["rdns"], "web.example.com");
}

#[tokio::test]
async fn a_restored_state_counts_and_tags_its_rows_once() {
    let (s, ctl) = controlled(&[], None).await;
    let api = s.api();
    for label in ["one", "two", "three"] {
        api.post("/vpcs", json!({"label": label, "region": "us-east"})).await.ok();
        let rules = json!({"inbound": [], "inbound_policy": "DROP", "outbound": [], "outbound_policy": "ACCEPT"});
        api.post("/networking/firewalls", json!({"label": label, "tags": ["kept"], "rules": rules})).await.ok();
    }
    ctl.post("/snapshots", json!({"name": "three"})).await.ok();
    api.post("/vpcs", json!({"label": "four", "region": "us-east"})).await.ok();
    ctl.post_empty("/snapshots/three/restore").await.ok();
    // Kept counts, tags and events come back as they were, not once from the snapshot and once
    // more from the rows inserted back.
    assert_eq!(api.get("/vpcs").await.ok()["results"], 3);
    let tagged = api.get_filtered("/networking/firewalls", r#"{"tags": "kept"}"#).await;
    assert_eq!(tagged.ok()["results"], 3);
    let events = api.get("/account/events").await.ok()["results"].as_u64().unwrap();
    assert_eq!(api.get_filtered("/account/events", r#"{"id": {"+gte": 0}}"#).await.ok()["results"], events);
    api.post("/vpcs", json!({"label": "five", "region": "us-east"})).await.ok();
    assert_eq!(api.get("/vpcs").await.ok()["results"], 4);
    let _ = s;
}

#[tokio::test]
async fn snapshots_restore_the_whole_state_and_reset_starts_over() {
    let (s, ctl) = controlled(&[], None).await;
    let api = s.api();
    vpc(&api, "kept").await;
    ctl.post("/snapshots", json!({"name": "base"})).await.ok();
    vpc(&api, "later").await;
    let other = other_account(&s);
    assert_eq!(vpc_labels(&api).await, vec!["kept", "later"]);
    let r = ctl.post_empty("/snapshots/base/restore").await;
    // How long it took is reported (speed is measured by benchmarks, not asserted here).
    assert!(r.ok()["took_ms"].as_f64().is_some_and(|t| t >= 0.0), "{}", r.text);
    assert_eq!(vpc_labels(&api).await, vec!["kept"]);
    other.get("/vpcs").await.expect_error(401, "-");
    // Ids go on from the restored state, and writes work as before.
    let v = vpc(&api, "again").await;
    assert_eq!(v["id"], 2);
    assert_eq!(ctl.get("/snapshots").await.ok()["data"][0]["name"], "base");
    ctl.post_empty("/snapshots/missing/restore").await.expect_error(404, "-");
    ctl.post("/snapshots", json!({"name": "../etc"})).await.expect_error(400, "name");
    // Reset: the first-run state with the same bootstrap token; faults and clock gone.
    ctl.post("/faults", json!({"route": "GET /v4/regions", "status": 503})).await.ok();
    ctl.post("/clock/advance", json!({"seconds": 60})).await.ok();
    let r = ctl.post_empty("/reset").await;
    r.ok();
    assert!(vpc_labels(&api).await.is_empty());
    assert_eq!(api.get("/profile").await.ok()["username"], "admin");
    assert!(event_actions(&api).await.is_empty());
    assert_eq!(ctl.get("/faults").await.ok()["results"], 0);
    assert_eq!(ctl.get("/clock").await.ok()["offset_seconds"], 0);
    api.get("/regions").await.ok();
    assert_eq!(vpc(&api, "fresh").await["id"], 1);
    // The snapshot outlives the reset and still restores.
    ctl.post_empty("/snapshots/base/restore").await.ok();
    assert_eq!(vpc_labels(&api).await, vec!["kept"]);
    ctl.delete("/snapshots/base").await.ok();
    ctl.post_empty("/snapshots/base/restore").await.expect_error(404, "-");
}

const TEAM: &str = include_str!("../../../../examples/fixtures/team.yaml");

#[tokio::test]
async fn fixtures_at_start_up_go_through_every_rule() {
    let dir = std::env::temp_dir().join(unique("nubis-fixture-"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("team.yaml");
    std::fs::write(&file, TEAM).unwrap();
    let (s, _ctl) = controlled(&["--fixtures", file.to_str().unwrap()], None).await;
    let owner = s.api_with("acme-owner-token-0000000000000001");
    assert_eq!(owner.get("/profile").await.ok()["username"], "acme-owner");
    assert_eq!(vpc_labels(&owner).await, vec!["backend"]);
    let insts = owner.get("/compute/instances").await;
    let labels: Vec<&str> =
        insts.ok()["data"].as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert_eq!(labels, vec!["web-1", "worker-1"]);
    let web = &insts.body["data"][0];
    let fws = owner.get(&format!("/compute/instances/{}/firewalls", id(web))).await;
    assert_eq!(fws.ok()["data"][0]["label"], "web-fw");
    let nb = owner.get("/nodebalancers").await;
    let nb_id = nb.ok()["data"][0]["id"].as_i64().unwrap();
    let configs = owner.get(&format!("/nodebalancers/{nb_id}/configs")).await;
    let config_id = configs.ok()["data"][0]["id"].as_i64().unwrap();
    let nodes = owner.get(&format!("/nodebalancers/{nb_id}/configs/{config_id}/nodes")).await;
    let private = web["ipv4"].as_array().unwrap().iter().find(|a| a.as_str().unwrap().starts_with("192.168.")).unwrap();
    assert_eq!(nodes.ok()["data"][0]["address"], format!("{}:80", private.as_str().unwrap()));
    // Through the application layer: the events of each creation are there.
    let actions = event_actions(&owner).await;
    for a in ["vpc_create", "firewall_create", "instance_create", "nodebalancer_create"] {
        assert!(actions.iter().any(|x| x == a), "{a} missing from {actions:?}");
    }
    // The restricted user's fixed token works and sees nothing without grants.
    let dev = s.api_with("acme-dev-token-000000000000000001");
    assert_eq!(dev.get("/compute/instances").await.ok()["results"], 0);
    // The bootstrap account is untouched.
    assert!(vpc_labels(&s.api()).await.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_bad_fixture_file_is_refused_with_line_and_field_and_nothing_stays() {
    let (s, ctl) = controlled(&[], None).await;
    let bad = "accounts:\n  - company: Bad Co\n    owner: bad-owner\n    email: o@bad.test\n    tokens:\n      - value: bad-owner-token-000000000000001\n    vpcs:\n      - label: ok-net\n        region: us-east\n      - label: \"not ok!\"\n        region: us-east\n";
    let r = ctl.raw(reqwest::Method::POST, "/fixtures", bad.as_bytes().to_vec().leak(), Some("application/yaml")).await;
    r.expect_error(400, "accounts[0].vpcs[1].label");
    assert!(r.text.contains("line 10"), "{}", r.text);
    // Nothing of the file stays: not the account, not its token, not its first VPC.
    s.api_with("bad-owner-token-000000000000001").get("/profile").await.expect_error(401, "-");
    let (_, accounts, _) = s.admin(&["account", "list"]);
    assert!(!accounts.contains("Bad Co"), "{accounts}");
    // A type error names its line and field too.
    let r = ctl
        .raw(
            reqwest::Method::POST,
            "/fixtures",
            b"accounts:\n  - company: X\n    owner: x-owner\n    email: x@x.test\n    existing: perhaps\n",
            None,
        )
        .await;
    r.expect_error(400, "accounts[0].existing");
    assert!(r.text.contains("line 5"), "{}", r.text);
    // And a good one loads, into an existing account as well.
    let good =
        "accounts:\n  - owner: admin\n    existing: true\n    vpcs:\n      - {label: from-fixture, region: us-east}\n";
    let r = ctl.raw(reqwest::Method::POST, "/fixtures", good.as_bytes().to_vec().leak(), None).await;
    assert_eq!(r.ok()["vpcs"], 1);
    assert_eq!(vpc_labels(&s.api()).await, vec!["from-fixture"]);
    // At start-up, a bad file stops the server with the line and field.
    let dir = std::env::temp_dir().join(unique("nubis-badfix-"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.yaml"), bad).unwrap();
    let out = std::process::Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--database", "sqlite::memory:", "--data-dir"])
        .arg(&dir)
        .arg("--fixtures")
        .arg(dir.join("bad.yaml"))
        .env("NUBIS_LOG", "error")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("accounts[0].vpcs[1].label") && err.contains("line 10"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A balancer with one http config (connection checks every 2 s) and a node per back end.
async fn balancer(api: &Api, backends: &[(&str, &str)]) -> (Value, i64, Vec<i64>) {
    let nb = api.post("/nodebalancers", json!({"region": "us-east"})).await.ok().clone();
    let id = nb["id"].as_i64().unwrap();
    let body = json!({"port": 80, "check": "connection", "check_interval": 2, "check_timeout": 1, "check_attempts": 1});
    let cid = api.post(&format!("/nodebalancers/{id}/configs"), body).await.ok()["id"].as_i64().unwrap();
    let mut nodes = Vec::new();
    for (label, addr) in backends {
        let n = json!({"label": format!("node-{label}"), "address": format!("{addr}:80")});
        nodes.push(api.post(&format!("/nodebalancers/{id}/configs/{cid}/nodes"), n).await.ok()["id"].as_i64().unwrap());
    }
    (nb, cid, nodes)
}

#[tokio::test]
async fn a_node_forced_down_reports_down_and_gets_no_traffic_until_the_fault_goes() {
    use crate::lb_support::*;
    let (s, ctl) = controlled(&[], Some(lb_config())).await;
    let api = s.api();
    let (_, a_ip) = backend_instance(&api, "us-east").await;
    let (_, b_ip) = backend_instance(&api, "us-east").await;
    let _a = Backend::http("a", mapped(&a_ip, 80)).await;
    let _b = Backend::http("b", mapped(&b_ip, 80)).await;
    let (nb, cid, nodes) = balancer(&api, &[("a", &a_ip), ("b", &b_ip)]).await;
    let nb_id = nb["id"].as_i64().unwrap();
    let addr = lb_addr(&nb, 80);
    until_serving(addr).await;
    until_nodes_status(&api, nb_id, cid, 2, 0).await;
    let f = ctl.post("/faults", json!({"kind": "node_down", "node_id": nodes[0]})).await.ok().clone();
    until_nodes_status(&api, nb_id, cid, 1, 1).await;
    let node = api.get(&format!("/nodebalancers/{nb_id}/configs/{cid}/nodes/{}", nodes[0])).await;
    assert_eq!(node.ok()["status"], "DOWN");
    // The data plane sends nothing to it, although its back end is up.
    eventually(30, "traffic only to b", || async move {
        let hits = spread(addr, 6).await;
        (hits.get("b") == Some(&6)).then_some(())
    })
    .await;
    ctl.delete(&format!("/faults/{}", f["id"])).await.ok();
    until_nodes_status(&api, nb_id, cid, 2, 0).await;
    eventually(30, "traffic to both again", || async move {
        let hits = spread(addr, 8).await;
        (hits.len() == 2).then_some(())
    })
    .await;
    ctl.post("/faults", json!({"kind": "node_down"})).await.expect_error(400, "node_id");
    ctl.post("/faults", json!({"kind": "node_down", "node_id": 99999})).await.expect_error(400, "node_id");
    // A node removed leaves the count of its status; one added is counted once it is checked.
    api.delete(&format!("/nodebalancers/{nb_id}/configs/{cid}/nodes/{}", nodes[0])).await.ok();
    until_nodes_status(&api, nb_id, cid, 1, 0).await;
    let body = json!({"label": "again", "address": format!("{a_ip}:80")});
    api.post(&format!("/nodebalancers/{nb_id}/configs/{cid}/nodes"), body).await.ok();
    until_nodes_status(&api, nb_id, cid, 2, 0).await;
}

#[tokio::test]
async fn listeners_follow_a_restored_state() {
    use crate::lb_support::*;
    let (s, ctl) = controlled(&[], Some(lb_config())).await;
    let api = s.api();
    let (_, ip) = backend_instance(&api, "us-east").await;
    let _backend = Backend::http("a", mapped(&ip, 80)).await;
    ctl.post("/snapshots", json!({"name": "no-balancer"})).await.ok();
    let (nb, _, _) = balancer(&api, &[("a", &ip)]).await;
    let addr = lb_addr(&nb, 80);
    until_serving(addr).await;
    ctl.post("/snapshots", json!({"name": "with-balancer"})).await.ok();
    ctl.post_empty("/snapshots/no-balancer/restore").await.ok();
    until_refused(addr).await;
    assert_eq!(api.get("/nodebalancers").await.ok()["results"], 0);
    ctl.post_empty("/snapshots/with-balancer/restore").await.ok();
    until_serving(addr).await;
    ctl.post_empty("/reset").await.ok();
    until_refused(addr).await;
}
