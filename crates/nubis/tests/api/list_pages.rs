//! Lists at scale: a deep page is located by the block counts kept in the write transactions
//! (`row_blocks`), so it must hold exactly the rows the same page holds when it is read by
//! skipping rows (the path a filtered list takes); `results` comes from kept counts and stays
//! exact while creates and deletes run concurrently.

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::billing_invoices::db_exec;
use crate::support::*;

/// A filter every record matches: the same list read by skipping rows (`OFFSET`), the reference
/// a located page is compared with.
const EVERY: &str = r#"{"id": {"+gte": 0}}"#;

fn ids(page: &Value) -> Vec<i64> {
    page["data"].as_array().unwrap().iter().map(|v| v["id"].as_i64().unwrap()).collect()
}

/// What tells the records of a page apart: their ids, or what stands for one in lists without
/// (a transfer's token, a history entry's id or version, an address, a maintenance window's
/// reason, unique in the tests that compare them, a VPC interface's id: every one of these a
/// record has, so that copies of one VPC address are told apart by their interfaces), else the
/// region and label (a VLAN).
fn keys(page: &Value) -> Vec<String> {
    let key = |v: &Value| {
        let found = [
            &v["id"],
            &v["token"],
            &v["interface_history_id"],
            &v["rules"]["version"],
            &v["address"],
            &v["reason"],
            &v["interface_id"],
        ];
        let found: Vec<String> = found.into_iter().filter(|k| !k.is_null()).map(Value::to_string).collect();
        if found.is_empty() { format!("{}/{}", v["region"], v["label"]) } else { found.join("/") }
    };
    page["data"].as_array().unwrap().iter().map(key).collect()
}

/// `INSERT INTO <table> (<cols>) SELECT <exprs> FROM (<template>) t, 1..=n AS n(i)`, for the
/// server's engine: `n` copies of a template row, varied by `n.i`.
pub(crate) fn copies(s: &TestServer, table: &str, cols: &str, exprs: &str, template: &str, n: i64) -> String {
    if s.database.starts_with("sqlite://") {
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n}) \
             INSERT INTO {table} ({cols}) SELECT {exprs} FROM ({template}) t, n;"
        )
    } else {
        format!("INSERT INTO {table} ({cols}) SELECT {exprs} FROM ({template}) t, generate_series(1, {n}) AS n(i);")
    }
}

/// Every page of `path` at `page_size` (and the one past the end) is the same located and read
/// by skipping, with the same `results` and `pages`.
async fn pages_agree(s: &TestServer, path: &str, page_size: u64) {
    pages_agree_with(s, path, page_size, EVERY).await
}

/// [`pages_agree`] with another filter every record matches (for a list without `id`).
async fn pages_agree_with(s: &TestServer, path: &str, page_size: u64, every: &str) {
    let api = s.api();
    let first = api.get(&format!("{path}?page_size={page_size}")).await;
    let results = first.ok()["results"].as_u64().unwrap();
    let pages = first.body["pages"].as_u64().unwrap();
    assert!(pages > 3, "{path} has {results} rows: too few to reach a located page");
    let mut seen = 0;
    for page in 1..=pages + 1 {
        let url = format!("{path}?page={page}&page_size={page_size}");
        let located = api.get(&url).await;
        assert_eq!(located.status, 200, "{url}: {}", s.log());
        let skipped = api.get_filtered(&url, every).await;
        assert_eq!(keys(located.ok()), keys(skipped.ok()), "{url}");
        assert_eq!(located.body["results"], results, "{url}");
        assert_eq!(skipped.body["results"], results, "{url}");
        seen += keys(&located.body).len() as u64;
    }
    assert_eq!(seen, results, "{path}: the pages together hold every row once");
}

/// Every page of `path` under `filter` holds the rows, and says the `results`, of the same page
/// under `same`: a filter of the same meaning that is read another way.
async fn filtered_pages_agree(s: &TestServer, path: &str, page_size: u64, filter: &str, same: &str) {
    let api = s.api();
    let first = api.get_filtered(&format!("{path}?page_size={page_size}"), filter).await;
    let results = first.ok()["results"].as_u64().unwrap();
    let pages = first.body["pages"].as_u64().unwrap();
    assert!(pages > 3, "{path} {filter} has {results} rows: too few to reach a located page");
    let mut seen = 0;
    for page in 1..=pages + 1 {
        let url = format!("{path}?page={page}&page_size={page_size}");
        let (got, want) = (api.get_filtered(&url, filter).await, api.get_filtered(&url, same).await);
        assert_eq!(keys(got.ok()), keys(want.ok()), "{url} {filter}");
        assert_eq!((&got.body["results"], &want.body["results"]), (&json!(results), &json!(results)), "{url} {filter}");
        seen += keys(&got.body).len() as u64;
    }
    assert_eq!(seen, results, "{path} {filter}: the pages together hold every row once");
}

fn firewall_body(label: &str) -> Value {
    json!({"label": label, "rules": {"inbound": [], "inbound_policy": "DROP", "outbound": [], "outbound_policy": "ACCEPT"}})
}

#[tokio::test]
async fn deep_pages_hold_the_rows_that_skipping_finds_after_scattered_deletes() {
    let s = TestServer::start().await;
    let api = s.api();
    let made = api.post("/networking/firewalls", firewall_body("seed")).await;
    let account = db_scalar(&s, &format!("SELECT account_id FROM firewalls WHERE id = {}", made.ok()["id"])).await;
    let cols = "account_id, label, status, rules, tags, created, updated";
    let exprs = format!("{account}, 'fw-' || CAST(n.i AS TEXT), t.status, t.rules, t.tags, t.created, t.updated");
    let template = "SELECT * FROM firewalls WHERE label = 'seed'";
    db_exec(&s, &copies(&s, "firewalls", cols, &exprs, template, 6_000)).await;
    // Holes everywhere: whole blocks of 64, single rows, the first and the last rows.
    db_exec(&s, "DELETE FROM firewalls WHERE label LIKE 'fw-%' AND (id % 7 = 3 OR id % 640 < 70)").await;
    db_exec(&s, "DELETE FROM firewalls WHERE id = (SELECT MIN(id) FROM firewalls)").await;
    for l in ["late-1", "late-2", "late-3"] {
        api.post("/networking/firewalls", firewall_body(l)).await.ok();
    }
    let rows = db_scalar(&s, "SELECT COUNT(*) FROM firewalls").await;
    let page = api.get("/networking/firewalls?page_size=500").await;
    assert_eq!(page.ok()["results"], rows);
    pages_agree(&s, "/networking/firewalls", 500).await;
    pages_agree(&s, "/networking/firewalls", 100).await;
    // Page sizes that do not divide a block.
    pages_agree(&s, "/networking/firewalls", 333).await;
}

#[tokio::test]
async fn deep_event_pages_newest_first_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/networking/firewalls", firewall_body("seed")).await.ok();
    let cols = "account_id, action, created, entity_type, entity_id, entity_label, entity_url, status, username";
    let exprs = "t.account_id, t.action, t.created, t.entity_type, t.entity_id + n.i, t.entity_label, t.entity_url, \
                 t.status, t.username";
    let template = "SELECT * FROM events WHERE action = 'firewall_create'";
    db_exec(&s, &copies(&s, "events", cols, exprs, template, 4_000)).await;
    db_exec(&s, "DELETE FROM events WHERE entity_id % 11 = 5 OR entity_id % 1000 < 80").await;
    let rows = db_scalar(&s, "SELECT COUNT(*) FROM events").await;
    assert_eq!(api.get("/account/events?page_size=25").await.ok()["results"], rows);
    pages_agree(&s, "/account/events", 500).await;
    pages_agree(&s, "/account/events", 100).await;
}

#[tokio::test]
async fn deep_pages_of_a_parents_list_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    let vpc = api
        .post(
            "/vpcs",
            json!({"label": "big", "region": "us-east", "subnets": [{"label": "s0", "ipv4": "10.0.0.0/24"}]}),
        )
        .await;
    let vpc_id = vpc.ok()["id"].as_i64().unwrap();
    let cols = "vpc_id, account_id, label, ipv4, first_v4, last_v4, created, updated";
    let exprs = "t.vpc_id, t.account_id, 's' || CAST(n.i AS TEXT), t.ipv4, t.first_v4, t.last_v4, t.created, t.updated";
    let template = format!("SELECT * FROM vpc_subnets WHERE vpc_id = {vpc_id}");
    db_exec(&s, &copies(&s, "vpc_subnets", cols, exprs, &template, 3_000)).await;
    db_exec(&s, &format!("DELETE FROM vpc_subnets WHERE vpc_id = {vpc_id} AND id % 5 = 1")).await;
    let path = format!("/vpcs/{vpc_id}/subnets");
    let rows = db_scalar(&s, &format!("SELECT COUNT(*) FROM vpc_subnets WHERE vpc_id = {vpc_id}")).await;
    assert_eq!(api.get(&path).await.ok()["results"], rows);
    pages_agree(&s, &path, 200).await;
}

#[tokio::test]
async fn results_stay_exact_under_concurrent_creates_and_deletes() {
    let s = TestServer::start().await;
    let api = s.api();
    let labels: Vec<String> = (0..48).map(|i| format!("fw-{i:02}")).collect();
    let mut created = Vec::new();
    for chunk in labels.chunks(12) {
        for r in join_all(chunk.iter().map(|l| api.post("/networking/firewalls", firewall_body(l)))).await {
            created.push(r.ok()["id"].as_i64().unwrap());
        }
    }
    // Deletes of every third firewall race with as many creates.
    let deletes: Vec<String> = created.iter().step_by(3).map(|id| format!("/networking/firewalls/{id}")).collect();
    let more: Vec<String> = (0..deletes.len()).map(|i| format!("more-{i:02}")).collect();
    let (gone, made) = futures_util::join!(
        join_all(deletes.iter().map(|p| api.delete(p))),
        join_all(more.iter().map(|l| api.post("/networking/firewalls", firewall_body(l))))
    );
    for r in gone.iter().chain(made.iter()) {
        r.ok();
    }
    let rows = db_scalar(&s, "SELECT COUNT(*) FROM firewalls").await;
    assert_eq!(rows, 48);
    assert_eq!(
        db_scalar(&s, "SELECT CAST(SUM(n) AS BIGINT) FROM row_blocks WHERE kind = 'firewalls' AND level = 3").await,
        rows
    );
    let page = api.get("/networking/firewalls?page_size=25").await;
    assert_eq!(page.ok()["results"], rows);
    let mut seen = ids(&page.body);
    seen.extend(ids(api.get("/networking/firewalls?page=2&page_size=25").await.ok()));
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len() as i64, rows);
    let more_only = api.get_filtered("/networking/firewalls", r#"{"label": {"+contains": "more-"}}"#).await;
    assert_eq!(more_only.ok()["results"], more.len());

    // Every create and delete wrote an event; the event list's kept count has them all.
    let events = db_scalar(&s, "SELECT COUNT(*) FROM events").await;
    assert_eq!(api.get("/account/events?page_size=25").await.ok()["results"], events);
    let deleted = api.get_filtered("/account/events", r#"{"action": "firewall_delete"}"#).await;
    assert_eq!(deleted.ok()["results"], deletes.len());
}

#[tokio::test]
async fn events_past_the_window_leave_the_count() {
    let s = TestServer::start().await;
    let api = s.api();
    for l in ["fw-a", "fw-b", "fw-c"] {
        api.post("/networking/firewalls", firewall_body(l)).await.ok();
    }
    let all = api.get("/account/events").await.ok()["results"].as_i64().unwrap();
    let old = db_scalar(&s, "SELECT MIN(id) FROM events").await;
    db_exec(&s, &format!("UPDATE events SET created = '2020-01-01T00:00:00' WHERE id = {old}")).await;
    let page = api.get("/account/events").await;
    assert_eq!(page.ok()["results"], all - 1);
    assert!(!ids(&page.body).contains(&old));
}

#[tokio::test]
async fn a_filter_no_index_serves_is_refused_on_a_long_list_and_answered_on_a_short_one() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut seed = firewall_body("seed");
    seed["tags"] = json!(["blue"]);
    api.post("/networking/firewalls", seed).await.ok();
    let contains = r#"{"label": {"+contains": "fw-4"}}"#;
    let not_equal = r#"{"label": {"+neq": "seed"}}"#;
    assert_eq!(api.get_filtered("/networking/firewalls", contains).await.ok()["results"], 0);
    let account = db_scalar(&s, "SELECT account_id FROM firewalls WHERE label = 'seed'").await;
    let cols = "account_id, label, status, rules, tags, created, updated";
    let exprs = format!("{account}, 'fw-' || CAST(n.i AS TEXT), t.status, t.rules, t.tags, t.created, t.updated");
    db_exec(&s, &copies(&s, "firewalls", cols, &exprs, "SELECT * FROM firewalls WHERE label = 'seed'", 5_000)).await;

    // 5,001 firewalls: past the budget, what no index serves is refused, naming X-Filter.
    for f in [
        contains,
        r#"{"tags": {"+neq": "blue"}}"#,
        r#"{"+order_by": "tags"}"#,
        r#"{"+or": [{"label": "fw-7"}, {"tags": {"+contains": "bl"}}]}"#,
    ] {
        let r = api.get_filtered("/networking/firewalls", f).await;
        assert_eq!(r.status, 400, "{f}: {}", r.body);
        assert_eq!(r.body["errors"][0]["field"], "X-Filter", "{f}");
    }
    // What an index serves answers: equality, a range, a tag, an indexed order, and an AND with
    // one served part.
    let one = api.get_filtered("/networking/firewalls", r#"{"label": "fw-42"}"#).await;
    assert_eq!(one.ok()["results"], 1);
    let range = r#"{"+and": [{"label": {"+gte": "fw-4998"}}, {"label": {"+lt": "fw-5"}}]}"#;
    assert_eq!(api.get_filtered("/networking/firewalls", range).await.ok()["results"], 2);
    let tagged = api.get_filtered("/networking/firewalls", r#"{"tags": "blue"}"#).await;
    assert_eq!(tagged.ok()["results"], 5_001);
    let both = api.get_filtered("/networking/firewalls", r#"{"label": "fw-42", "tags": {"+contains": "lu"}}"#).await;
    assert_eq!(both.ok()["results"], 1);
    let ordered =
        api.get_filtered("/networking/firewalls?page_size=25", r#"{"+order_by": "label", "+order": "desc"}"#).await;
    assert_eq!(ordered.ok()["data"][0]["label"], "seed");
    // `+neq` of a field an index serves is two of its ranges: every other record, in any order.
    let others = api.get_filtered("/networking/firewalls?page=3&page_size=500", not_equal).await;
    assert_eq!(others.ok()["results"], 5_000);
    assert_eq!(others.body["data"].as_array().unwrap().len(), 500);
    assert!(others.body["data"].as_array().unwrap().iter().all(|f| f["label"] != "seed"));
    let not_42 = r#"{"label": {"+neq": "fw-42"}, "+order_by": "label", "+order": "desc"}"#;
    let ordered = api.get_filtered("/networking/firewalls?page=1&page_size=25", not_42).await;
    assert_eq!(ordered.ok()["results"], 5_000);
    assert_eq!(ordered.body["data"][0]["label"], "seed");
    let past = api.get_filtered("/networking/firewalls?page=1&page_size=500", not_42).await;
    let labels: Vec<&str> =
        past.ok()["data"].as_array().unwrap().iter().map(|f| f["label"].as_str().unwrap()).collect();
    assert!(labels.windows(2).all(|w| w[0] > w[1]) && !labels.contains(&"fw-42"), "{labels:?}");
    let either = r#"{"+or": [{"label": {"+neq": "seed"}}, {"label": "seed"}]}"#;
    assert_eq!(api.get_filtered("/networking/firewalls", either).await.ok()["results"], 5_001);
    // The events of the same account are below the budget: their filters all answer.
    assert_eq!(
        api.get_filtered("/account/events", r#"{"action": {"+contains": "firewall"}}"#).await.ok()["results"],
        1
    );
}

#[tokio::test]
async fn a_tag_filter_follows_tag_changes() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut body = firewall_body("tagged");
    body["tags"] = json!(["red", "green"]);
    let id = api.post("/networking/firewalls", body).await.ok()["id"].as_i64().unwrap();
    let red = r#"{"tags": "red"}"#;
    assert_eq!(api.get_filtered("/networking/firewalls", red).await.ok()["results"], 1);
    api.put(&format!("/networking/firewalls/{id}"), json!({"tags": ["green"]})).await.ok();
    assert_eq!(api.get_filtered("/networking/firewalls", red).await.ok()["results"], 0);
    assert_eq!(api.get_filtered("/networking/firewalls", r#"{"tags": {"+neq": "red"}}"#).await.ok()["results"], 1);
    assert_eq!(api.get_filtered("/networking/firewalls", r#"{"tags": "green"}"#).await.ok()["results"], 1);
    api.delete(&format!("/networking/firewalls/{id}")).await.ok();
    assert_eq!(api.get_filtered("/networking/firewalls", r#"{"tags": "green"}"#).await.ok()["results"], 0);
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM list_tags").await, 0);
}

#[tokio::test]
async fn events_past_the_window_are_forgotten_when_time_moves_on() {
    let (s, ctl) = crate::controls::controlled(&[], None).await;
    let api = s.api();
    for l in ["fw-a", "fw-b"] {
        api.post("/networking/firewalls", firewall_body(l)).await.ok();
    }
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM events").await, 2);
    ctl.post("/clock/advance", json!({"seconds": 89 * 86_400})).await.ok();
    assert_eq!(api.get("/account/events").await.ok()["results"], 2);
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM events").await, 2);
    // Past the 90 days the events are neither listed nor kept, and the count follows.
    ctl.post("/clock/advance", json!({"seconds": 2 * 86_400})).await.ok();
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM events").await, 0);
    api.post("/networking/firewalls", firewall_body("fw-c")).await.ok();
    let page = api.get("/account/events").await;
    assert_eq!(page.ok()["results"], 1);
    assert_eq!(page.body["data"][0]["action"], "firewall_create");
}

/// The bootstrap user and account (the token's owner).
pub(crate) async fn owner(s: &TestServer) -> (i64, i64) {
    let user = db_scalar(s, "SELECT MIN(id) FROM users").await;
    let account = db_scalar(s, &format!("SELECT account_id FROM users WHERE id = {user}")).await;
    (user, account)
}

#[tokio::test]
async fn deep_pages_of_tokens_logins_and_invoices_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    let (user, account) = owner(&s).await;
    // Personal tokens, with other kinds of token among them that the list does not show.
    let cols = "user_id, label, scopes, secret_hash, kind, created";
    let exprs = format!(
        "{user}, 't' || CAST(n.i AS TEXT), '*', 'h-' || CAST(n.i AS TEXT), \
         CASE WHEN n.i % 9 = 0 THEN 'oauth' ELSE 'pat' END, '2026-01-01T00:00:00'"
    );
    db_exec(&s, &copies(&s, "tokens", cols, &exprs, "SELECT 1 AS one", 2_500)).await;
    db_exec(&s, "DELETE FROM tokens WHERE label LIKE 't%' AND id % 13 = 2").await;
    let pats = db_scalar(&s, &format!("SELECT COUNT(*) FROM tokens WHERE user_id = {user} AND kind = 'pat'")).await;
    assert_eq!(api.get("/profile/tokens").await.ok()["results"], pats);
    pages_agree(&s, "/profile/tokens", 200).await;

    // Successful sign-ins of the user, newest first, with failed ones among them.
    let sqlite = s.database.starts_with("sqlite://");
    let recent = if sqlite {
        "strftime('%Y-%m-%dT%H:%M:%S', 'now', '-' || CAST(n.i % 50 AS TEXT) || ' minutes')"
    } else {
        "to_char(now() - (n.i % 50) * interval '1 minute', 'YYYY-MM-DD\"T\"HH24:MI:SS')"
    };
    let cols = "account_id, user_id, username, ip, datetime, status, restricted";
    let exprs = format!(
        "{account}, {user}, 'admin', '127.0.0.1', {recent}, \
         CASE WHEN n.i % 7 = 0 THEN 'failed' ELSE 'successful' END, (n.i % 5 = 2)"
    );
    db_exec(&s, &copies(&s, "logins", cols, &exprs, "SELECT 1 AS one", 2_000)).await;
    let ok =
        db_scalar(&s, &format!("SELECT COUNT(*) FROM logins WHERE user_id = {user} AND status = 'successful'")).await;
    assert_eq!(api.get("/profile/logins").await.ok()["results"], ok);
    pages_agree(&s, "/profile/logins", 100).await;
    pages_agree(&s, "/account/logins", 100).await;

    // Invoices, newest first.
    let cols = "account_id, date, label, period_from, period_to, subtotal, tax, total";
    let exprs = format!(
        "{account}, '2026-01-01T00:00:00', 'Invoice ' || CAST(n.i AS TEXT), 'p' || CAST(n.i AS TEXT), 'q', 100, 0, 100"
    );
    db_exec(&s, &copies(&s, "invoices", cols, &exprs, "SELECT 1 AS one", 1_500)).await;
    db_exec(&s, "DELETE FROM invoices WHERE id % 10 = 4").await;
    pages_agree(&s, "/account/invoices", 100).await;
}

#[tokio::test]
async fn deep_pages_of_the_address_list_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    // An instance and an IPv6 range in each of three regions: the ranges fall among the
    // addresses in the orders by region and by instance.
    let mut instances = Vec::new();
    for (i, region) in ["us-east", "us-west", "ap-south"].into_iter().enumerate() {
        let body = json!({"region": region, "type": "g6-nanode-1", "image": "linode/debian12", "root_pass": "aComplexP@ssw0rd!", "label": format!("web-{i}")});
        let instance = api.post("/compute/instances", body).await.ok()["id"].as_i64().unwrap();
        api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": instance})).await.ok();
        instances.push(instance);
    }
    let sqlite = s.database.starts_with("sqlite://");
    // Addresses as data (never dialled), one in five of them private (not listed), spread over
    // the instances and their regions in an order unlike the ids'.
    let cols = "address, v4, kind, public, account_id, region, instance_id, created";
    let exprs = format!(
        "'233.' || CAST(n.i / 65536 AS TEXT) || '.' || CAST((n.i / 256) % 256 AS TEXT) || '.' || CAST(n.i % 256 AS TEXT), \
         3909091328 + n.i, 'ipv4', CASE WHEN n.i % 5 = 0 THEN {f} ELSE {t} END, t.account_id, \
         CASE (n.i * 7) % 3 WHEN 0 THEN 'us-east' WHEN 1 THEN 'us-west' ELSE 'ap-south' END, \
         CASE (n.i * 7) % 3 WHEN 0 THEN {a} WHEN 1 THEN {b} ELSE {c} END, t.created",
        f = if sqlite { "0" } else { "FALSE" },
        t = if sqlite { "1" } else { "TRUE" },
        a = instances[0],
        b = instances[1],
        c = instances[2],
    );
    let template =
        format!("SELECT * FROM ip_addresses WHERE instance_id = {} AND kind = 'ipv4' AND public", instances[0]);
    let template = if sqlite { template.replace("AND public", "AND public = 1") } else { template };
    db_exec(&s, &copies(&s, "ip_addresses", cols, &exprs, &template, 3_000)).await;
    db_exec(&s, "DELETE FROM ip_addresses WHERE address LIKE '233.%' AND id % 17 = 4").await;
    let public = db_scalar(&s, "SELECT COUNT(*) FROM ip_addresses WHERE public").await;
    let ranges = db_scalar(&s, "SELECT COUNT(*) FROM ipv6_ranges").await;
    assert_eq!(ranges, 3);
    assert_eq!(api.get("/networking/ips").await.ok()["results"], public + ranges);
    // Every entry is public: a condition on it keeps the whole list or none of it.
    let whole = api.get("/networking/ips?page=3&page_size=200").await.ok().clone();
    let listed = api.get_filtered("/networking/ips?page=3&page_size=200", r#"{"public": true}"#).await;
    assert_eq!(keys(listed.ok()), keys(&whole));
    let none = api.get_filtered("/networking/ips", r#"{"public": false, "region": "us-east"}"#).await;
    assert_eq!((none.ok()["results"].as_i64(), none.body["data"].as_array().map(Vec::len)), (Some(0), Some(0)));
    // A filter every entry matches that no shortcut reads: the list is sorted whole.
    let every = r#""+or": [{"type": "ipv4"}, {"type": {"+neq": "ipv4"}}]"#;
    pages_agree_with(&s, "/networking/ips", 200, &format!("{{{every}}}")).await;
    for field in ["address", "region", "instance_id"] {
        fences_placed(&s, &format!("public_ips.{field}")).await;
    }
    for field in ["address", "region", "instance_id", "public"] {
        order_pages_agree(&s, "/networking/ips", field, 200, every).await;
    }
    // Addresses come, go and move; the counts follow in the same transactions.
    db_exec(&s, "DELETE FROM ip_addresses WHERE address LIKE '233.%' AND id % 11 = 3").await;
    let moved = format!(
        "UPDATE ip_addresses SET region = 'us-west', instance_id = {} WHERE address LIKE '233.%' AND id % 13 = 7",
        instances[1]
    );
    db_exec(&s, &moved).await;
    db_exec(
        &s,
        &format!(
            "UPDATE ip_addresses SET public = {} WHERE address LIKE '233.%' AND id % 19 = 2",
            if sqlite { "0" } else { "FALSE" }
        ),
    )
    .await;
    for field in ["address", "region", "instance_id"] {
        order_pages_agree(&s, "/networking/ips", field, 150, every).await;
    }
    // A filter on `type` alone reads the kept count and blocks of the kinds it keeps (migration
    // 70), kept through the deletes, moves and flips above: its pages are those of the same
    // filter read through the index, in both directions, and where two kinds hold addresses.
    db_exec(&s, "UPDATE ip_addresses SET kind = 'slaac' WHERE address LIKE '233.%' AND id % 7 = 5").await;
    for (filter, same) in [
        (r#"{"type": "ipv4"}"#, r#"{"+or": [{"type": "ipv4"}, {"type": "ipv4"}]}"#),
        (
            r#"{"type": "ipv4", "+order_by": "public", "+order": "desc"}"#,
            r#"{"+or": [{"type": "ipv4"}, {"type": "ipv4"}], "+order_by": "public", "+order": "desc"}"#,
        ),
        (r#"{"type": {"+neq": "ipv4"}}"#, r#"{"+or": [{"type": "ipv6"}, {"type": "ipv6/range"}]}"#),
        (
            r#"{"type": {"+neq": "ipv6/range"}}"#,
            r#"{"+or": [{"type": "ipv4"}, {"type": "ipv6"}], "+order_by": "public"}"#,
        ),
        (
            r#"{"type": {"+neq": "ipv4"}, "+order_by": "type", "+order": "desc"}"#,
            r#"{"+or": [{"type": "ipv6"}, {"type": "ipv6/range"}], "+order_by": "type", "+order": "desc"}"#,
        ),
    ] {
        filtered_pages_agree(&s, "/networking/ips", 40, filter, same).await;
    }
    // The whole list by `type`: its kinds' partitions one after another, then the ranges.
    order_pages_agree(&s, "/networking/ips", "type", 150, every).await;
}

/// A filtered page of the address list reads its window of addresses allowing for one range per
/// region before it. An account can hold more ranges than the catalog has regions (a region taken
/// out of the configuration keeps its ranges): its pages are read again with the ranges it holds,
/// and hold the rows of the whole list's pages, in every order.
#[tokio::test]
async fn filtered_address_pages_hold_their_rows_when_ranges_outnumber_the_regions() {
    let config = format!(
        "{TEST_CONFIG}\n[[regions]]\nid = \"us-east\"\nlabel = \"us-east\"\ncountry = \"us\"\n\
         capabilities = [\"Linodes\"]\npublic_ipv4 = \"127.10.0.0/16\"\npublic_prefix = 24\n\
         ipv6_pool = \"2001:db8:10::/64\"\nipv6_ranges = \"2001:db8:1000::/40\"\n"
    );
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    let api = s.api();
    let mut instances = Vec::new();
    for i in 0..3 {
        let body = json!({"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian12", "root_pass": "aComplexP@ssw0rd!", "label": format!("web-{i}")});
        instances.push(api.post("/compute/instances", body).await.ok()["id"].as_i64().unwrap());
    }
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": instances[0]})).await.ok();
    // Two ranges in regions the catalog no longer has, which sort before us-east.
    for (i, instance) in instances[1..].iter().enumerate() {
        let sql = format!(
            "INSERT INTO ipv6_ranges (range_start, prefix, account_id, region, instance_id, route_target, created) \
             SELECT '2001:db8:ff0{i}::', 64, account_id, 'gone-{i}', {instance}, route_target, created FROM ipv6_ranges \
             WHERE region = 'us-east'"
        );
        db_exec(&s, &sql).await;
    }
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM ipv6_ranges").await, 3);
    // Addresses as data (never dialled), spread over the three instances.
    let sqlite = s.database.starts_with("sqlite://");
    let cols = "address, v4, kind, public, account_id, region, instance_id, created";
    let exprs = format!(
        "'233.0.' || CAST(n.i / 256 AS TEXT) || '.' || CAST(n.i % 256 AS TEXT), 3909091328 + n.i, 'ipv4', t.public, \
         t.account_id, t.region, CASE (n.i * 7) % 3 WHEN 0 THEN {} WHEN 1 THEN {} ELSE {} END, t.created",
        instances[0], instances[1], instances[2]
    );
    let template =
        format!("SELECT * FROM ip_addresses WHERE instance_id = {} AND kind = 'ipv4' AND public", instances[0]);
    let template = if sqlite { template.replace("AND public", "AND public = 1") } else { template };
    db_exec(&s, &copies(&s, "ip_addresses", cols, &exprs, &template, 450)).await;
    let every = r#""+or": [{"type": "ipv4"}, {"type": {"+neq": "ipv4"}}]"#;
    pages_agree_with(&s, "/networking/ips", 100, &format!("{{{every}}}")).await;
    for field in ["address", "region", "instance_id", "public"] {
        order_pages_agree(&s, "/networking/ips", field, 100, every).await;
    }
}

#[tokio::test]
async fn the_address_list_past_the_budget_is_filtered_by_region_and_instance_and_refuses_the_rest() {
    // One region's pool has another prefix (30) than the others' (24).
    let region = |id: &str, pool: &str, prefix: u8, v6: u8| {
        format!(
            "[[regions]]\nid = \"{id}\"\nlabel = \"{id}\"\ncountry = \"us\"\ncapabilities = [\"Linodes\"]\n\
             public_ipv4 = \"{pool}\"\npublic_prefix = {prefix}\nipv6_pool = \"2001:db8:{v6:x}::/64\"\n\
             ipv6_ranges = \"2001:db8:{v6:x}00::/40\"\n"
        )
    };
    let config = format!(
        "{TEST_CONFIG}\n{}\n{}\n{}",
        region("us-east", "127.10.0.0/16", 24, 0x10),
        region("us-west", "127.11.0.0/16", 24, 0x11),
        region("tiny", "127.20.0.0/29", 30, 0x20)
    );
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    let api = s.api();
    let body = |region: &str, label: &str| json!({"region": region, "type": "g6-nanode-1", "image": "linode/debian12", "root_pass": "aComplexP@ssw0rd!", "label": label});
    let east = api.post("/compute/instances", body("us-east", "east-1")).await.ok()["id"].as_i64().unwrap();
    let west = api.post("/compute/instances", body("us-west", "west-1")).await.ok()["id"].as_i64().unwrap();
    api.post("/compute/instances", body("tiny", "tiny-1")).await.ok();
    let sqlite = s.database.starts_with("sqlite://");
    // 5,200 more public addresses of the us-east instance, as data (never dialled).
    let cols = "address, v4, kind, public, account_id, region, instance_id, created";
    let exprs = "'233.' || CAST(n.i / 65536 AS TEXT) || '.' || CAST((n.i / 256) % 256 AS TEXT) || '.' || \
                 CAST(n.i % 256 AS TEXT), 3909091328 + n.i, 'ipv4', t.public, t.account_id, t.region, t.instance_id, t.created";
    let template = format!("SELECT * FROM ip_addresses WHERE instance_id = {east} AND kind = 'ipv4' AND public");
    let template = if sqlite { template.replace("AND public", "AND public = 1") } else { template };
    db_exec(&s, &copies(&s, "ip_addresses", cols, exprs, &template, 5_200)).await;
    let of_west =
        db_scalar(&s, &format!("SELECT COUNT(*) FROM ip_addresses WHERE public AND instance_id = {west}")).await;
    let of_east = db_scalar(&s, "SELECT COUNT(*) FROM ip_addresses WHERE public AND region = 'us-east'").await;
    assert!(of_east > 5_000 && of_west >= 2, "{of_east} {of_west}");
    let of_all = db_scalar(&s, "SELECT COUNT(*) FROM ip_addresses WHERE public").await;

    // Past the budget, a region or an instance is read through its index: exactly its entries.
    let west_ips = api.get_filtered("/networking/ips", r#"{"region": "us-west"}"#).await.ok().clone();
    assert_eq!(west_ips["results"], of_west);
    for e in west_ips["data"].as_array().unwrap() {
        assert_eq!((e["region"].as_str(), e["instance_id"].as_i64()), (Some("us-west"), Some(west)), "{e}");
    }
    let by_instance = api.get_filtered("/networking/ips", &format!(r#"{{"linode_id": {west}}}"#)).await;
    let by_instance = by_instance.ok().clone();
    let by_instance_id = api.get_filtered("/networking/ips", &format!(r#"{{"instance_id": {west}}}"#)).await;
    assert_eq!(by_instance_id.ok()["data"], by_instance["data"]);
    assert_eq!(by_instance["data"], west_ips["data"]);
    // A page deep in one region, in the address order, with the count of the region's entries.
    let deep = r#"{"region": "us-east", "+order_by": "address", "+order": "desc"}"#;
    let page = api.get_filtered("/networking/ips?page=30&page_size=100", deep).await.ok().clone();
    assert_eq!(page["results"], of_east);
    let addresses: Vec<&str> =
        page["data"].as_array().unwrap().iter().map(|e| e["address"].as_str().unwrap()).collect();
    assert_eq!(addresses.len(), 100);
    assert!(addresses.windows(2).all(|w| w[0] > w[1]), "{addresses:?}");
    assert!(page["data"].as_array().unwrap().iter().all(|e| e["region"] == "us-east"));
    // Past the budget, the orders by region, instance and `public` are read through fences.
    for order in ["region", "instance_id", "public"] {
        let f = format!(r#"{{"+order_by": "{order}", "+order": "desc"}}"#);
        let page = api.get_filtered("/networking/ips?page=20&page_size=100", &f).await.ok().clone();
        assert_eq!(page["results"], of_all, "{f}");
        assert_eq!(page["data"].as_array().unwrap().len(), 100, "{f}");
        let values: Vec<String> = page["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| match &e[order] {
                Value::Number(n) => format!("{:020}", n.as_i64().unwrap()),
                v => v.to_string(),
            })
            .collect();
        assert!(values.windows(2).all(|w| w[0] >= w[1]), "{f}: {values:?}");
    }
    let public = api.get_filtered("/networking/ips", r#"{"public": true, "region": "us-west"}"#).await;
    assert_eq!(public.ok()["data"], west_ips["data"]);
    computed_address_filters_agree(&s, east, west).await;
    // Past the budget, the whole list is ordered by `type` from its kinds' kept partitions.
    let by_type =
        api.get_filtered("/networking/ips?page=20&page_size=100", r#"{"+order_by": "type", "+order": "desc"}"#);
    let by_type = by_type.await.ok().clone();
    assert_eq!(by_type["results"], of_all + 2, "the addresses and the two ranges");
    let types: Vec<&str> = by_type["data"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.len(), 100);
    assert!(types.windows(2).all(|w| w[0] >= w[1]), "{types:?}");
    // What no index serves is still refused, naming X-Filter and what is served.
    for f in [
        r#"{"+order_by": "rdns"}"#,
        r#"{"region": "us-east", "+order_by": "type"}"#,
        r#"{"public": true, "rdns": {"+neq": "x.example"}}"#,
        r#"{"rdns": {"+contains": "example"}}"#,
        r#"{"type": {"+gt": "ipv4"}}"#,
    ] {
        let r = api.get_filtered("/networking/ips", f).await;
        assert_eq!(r.status, 400, "{f}: {}", r.body);
        assert_eq!(r.body["errors"][0]["field"], "X-Filter", "{f}");
        let reason = r.body["errors"][0]["reason"].as_str().unwrap();
        assert!(
            reason.contains(
                "on one of: id, address, instance_id, region, type, prefix, rdns; order by one of: id, address, region, \
                 instance_id, public; order by type the whole list, or the list filtered by type alone"
            ),
            "{reason}"
        );
    }
}

/// Every entry of the address list, read whole a page of 500 at a time, with the filter.
async fn all_addresses(s: &TestServer, filter: &str) -> (Vec<Value>, u64) {
    let api = s.api();
    let mut all = Vec::new();
    for page in 1.. {
        let r = api.get_filtered(&format!("/networking/ips?page={page}&page_size=500"), filter).await;
        assert_eq!(r.status, 200, "{filter}: {}", r.body);
        let data = r.body["data"].as_array().unwrap().clone();
        let results = r.body["results"].as_u64().unwrap();
        all.extend(data);
        if page >= r.body["pages"].as_u64().unwrap() {
            assert_eq!(all.len() as u64, results, "{filter}");
            return (all, results);
        }
    }
    unreachable!()
}

/// Past the budget, the fields the address list computes (`type`, `prefix`, `rdns`) filter it
/// as they do the whole list read and filtered by the client: each filter's entries, in order,
/// and its `results`. The account holds both instances' addresses, thousands more of one, their
/// SLAAC addresses, a /64 and a /56 range and a few addresses with a stored reverse name.
async fn computed_address_filters_agree(s: &TestServer, east: i64, west: i64) {
    let api = s.api();
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": west})).await.ok();
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 56, "instance_id": east})).await.ok();
    db_exec(s, "UPDATE ip_addresses SET rdns = 'mail.example.com' WHERE address LIKE '233.%' AND id % 1000 = 7").await;
    db_exec(
        s,
        &format!("UPDATE ip_addresses SET rdns = 'web.example.com' WHERE kind = 'ipv4' AND instance_id = {west}"),
    )
    .await;
    let (whole, _) = all_addresses(s, "{}").await;
    let named = whole.iter().filter(|e| e["rdns"] == "mail.example.com").count();
    assert!(whole.iter().any(|e| e["prefix"] == 30 && e["region"] == "tiny"), "an address of the /30 region");
    assert!(named >= 3, "{named}");
    // The default name of one address without a stored one, and a name under another suffix.
    let plain = whole.iter().find(|e| e["type"] == "ipv4" && e["rdns"] != "mail.example.com").unwrap();
    let default_name = plain["rdns"].as_str().unwrap().to_string();
    let (dashed, suffix) = default_name.split_once('.').unwrap();
    assert_eq!(dashed, plain["address"].as_str().unwrap().replace('.', "-"), "{plain}");
    let elsewhere = format!("{dashed}.elsewhere.{suffix}");
    type Keep = Box<dyn Fn(&Value) -> bool>;
    let cases: Vec<(String, Keep)> = vec![
        (r#"{"type": "ipv4"}"#.into(), Box::new(|e| e["type"] == "ipv4")),
        (r#"{"type": "ipv6"}"#.into(), Box::new(|e| e["type"] == "ipv6")),
        (r#"{"type": "ipv6/range"}"#.into(), Box::new(|e| e["type"] == "ipv6/range")),
        (r#"{"type": {"+neq": "ipv4"}}"#.into(), Box::new(|e| e["type"] != "ipv4")),
        (r#"{"region": {"+neq": "us-east"}}"#.into(), Box::new(|e| e["region"] != "us-east")),
        (
            format!(r#"{{"instance_id": {{"+neq": {west}}}, "type": "ipv4"}}"#),
            Box::new(move |e| e["type"] == "ipv4" && e["instance_id"].as_i64().is_some_and(|i| i != west)),
        ),
        (
            r#"{"type": "ipv4", "region": "us-west"}"#.into(),
            Box::new(|e| e["type"] == "ipv4" && e["region"] == "us-west"),
        ),
        (r#"{"type": "ipv5"}"#.into(), Box::new(|_| false)),
        (r#"{"prefix": 64}"#.into(), Box::new(|e| e["prefix"] == 64)),
        (r#"{"prefix": 56}"#.into(), Box::new(|e| e["prefix"] == 56)),
        (r#"{"prefix": {"+gte": 56}}"#.into(), Box::new(|e| e["prefix"].as_i64().unwrap() >= 56)),
        (
            r#"{"prefix": {"+lt": 30}, "region": "us-west"}"#.into(),
            Box::new(|e| e["prefix"].as_i64().unwrap() < 30 && e["region"] == "us-west"),
        ),
        // The regions whose pool has the prefix; every region's pool; the one other region's.
        (r#"{"prefix": 24}"#.into(), Box::new(|e| e["prefix"] == 24)),
        (r#"{"prefix": {"+lte": 30}}"#.into(), Box::new(|e| e["prefix"].as_i64().unwrap() <= 30)),
        (r#"{"prefix": 30}"#.into(), Box::new(|e| e["prefix"] == 30)),
        (r#"{"prefix": 31}"#.into(), Box::new(|e| e["prefix"] == 31)),
        (r#"{"prefix": 32}"#.into(), Box::new(|e| e["prefix"] == 32)),
        (r#"{"rdns": "mail.example.com"}"#.into(), Box::new(|e| e["rdns"] == "mail.example.com")),
        (r#"{"rdns": "web.example.com"}"#.into(), Box::new(|e| e["rdns"] == "web.example.com")),
        (format!(r#"{{"rdns": "{default_name}"}}"#), Box::new(move |e| e["rdns"] == default_name.as_str())),
        (format!(r#"{{"rdns": "{elsewhere}"}}"#), Box::new(|_| false)),
        (
            r#"{"+or": [{"rdns": "mail.example.com"}, {"type": "ipv6/range"}, {"prefix": 64, "region": "us-east"}]}"#
                .into(),
            Box::new(|e| {
                e["rdns"] == "mail.example.com"
                    || e["type"] == "ipv6/range"
                    || (e["prefix"] == 64 && e["region"] == "us-east")
            }),
        ),
    ];
    for (filter, keep) in cases {
        let want: Vec<&Value> = whole.iter().filter(|e| keep(e)).collect();
        let (got, results) = all_addresses(s, &filter).await;
        assert_eq!(results, want.len() as u64, "{filter}");
        let addresses = |v: &[&Value]| v.iter().map(|e| e["address"].to_string()).collect::<Vec<_>>();
        assert_eq!(addresses(&got.iter().collect::<Vec<_>>()), addresses(&want), "{filter}");
        assert_eq!(got.iter().collect::<Vec<_>>(), want, "{filter}");
    }
    // A deep page of one type in the address order.
    let deep = r#"{"type": "ipv4", "+order_by": "address", "+order": "desc"}"#;
    let page = api.get_filtered("/networking/ips?page=30&page_size=100", deep).await.ok().clone();
    assert_eq!(page["results"], whole.iter().filter(|e| e["type"] == "ipv4").count());
    let addresses: Vec<&str> =
        page["data"].as_array().unwrap().iter().map(|e| e["address"].as_str().unwrap()).collect();
    assert_eq!(addresses.len(), 100);
    assert!(addresses.windows(2).all(|w| w[0] > w[1]), "{addresses:?}");
}

#[tokio::test]
async fn the_vpc_address_lists_past_the_budget_are_filtered_and_ordered_by_region_and_configuration_and_refuse_the_rest()
 {
    let s = TestServer::start().await;
    let api = s.api();
    // A VPC in each of two regions, each with an instance on its subnet.
    let mut made = Vec::new();
    for (n, region) in ["us-east", "us-west"].into_iter().enumerate() {
        let subnets = json!([{"label": "six", "ipv4": format!("10.{n}.0.0/24"), "ipv6": [{}]}]);
        let v =
            api.post("/vpcs", json!({"label": format!("far-{n}"), "region": region, "ipv6": [{}], "subnets": subnets}));
        let v = v.await.ok().clone();
        let iface = json!({"purpose": "vpc", "subnet_id": v["subnets"][0]["id"], "ipv6": {"is_public": false}});
        let body = json!({"region": region, "type": "g6-nanode-1", "label": format!("vm-{n}"), "booted": false,
                          "interfaces": [iface]});
        let i = api.post("/compute/instances", body).await.ok()["id"].as_i64().unwrap();
        made.push((v["id"].as_i64().unwrap(), i));
    }
    let ((east_vpc, _), (west_vpc, west_instance)) = (made[0], made[1]);
    // 5,200 copies of the us-east interface: the account's list and that VPC's are past the budget.
    copy_vpc_interfaces(&s, &format!("vpc_id = {east_vpc}"), 5_200).await;
    let of = |cond: &str| format!("SELECT COUNT(*) FROM instance_interfaces WHERE purpose = 'vpc' AND {cond}");
    let east = db_scalar(&s, &of("region = 'us-east'")).await;
    let east_v6 = db_scalar(&s, &of("region = 'us-east' AND vpc_ipv6_range IS NOT NULL")).await;
    assert!(east > 5_000 && east_v6 > 4_000, "{east} {east_v6}");
    let west_config = format!("SELECT MAX(config_id) FROM instance_interfaces WHERE vpc_id = {west_vpc}");
    let west_config = db_scalar(&s, &west_config).await;

    // The region and the configuration are read through their indexes: exactly their entries.
    for path in ["/vpcs/ips".to_string(), "/vpcs/ipv6s".to_string(), format!("/vpcs/{west_vpc}/ips")] {
        let west = api.get_filtered(&path, r#"{"region": "us-west"}"#).await.ok().clone();
        assert_eq!(west["results"], 1, "{path}: {west}");
        assert_eq!(
            (west["data"][0]["region"].as_str(), west["data"][0]["instance_id"].as_i64()),
            (Some("us-west"), Some(west_instance))
        );
        let by_config = api.get_filtered(&path, &format!(r#"{{"config_id": {west_config}}}"#)).await.ok().clone();
        assert_eq!(by_config["data"], west["data"], "{path}");
    }
    let none = api.get_filtered(&format!("/vpcs/{east_vpc}/ips"), r#"{"region": "us-west"}"#).await;
    assert_eq!(none.ok()["results"], 0);
    // Deep pages of one region, in an indexed order, with the region's count.
    for (path, n) in [("/vpcs/ips".to_string(), east), (format!("/vpcs/{east_vpc}/ipv6s"), east_v6)] {
        let deep = r#"{"region": "us-east", "+order_by": "subnet_id", "+order": "desc"}"#;
        let page = api.get_filtered(&format!("{path}?page=40&page_size=100"), deep).await.ok().clone();
        assert_eq!(page["results"], n, "{path}");
        let rows = page["data"].as_array().unwrap();
        assert_eq!(rows.len(), 100, "{path}");
        assert!(rows.iter().all(|e| e["region"] == "us-east" && e["vpc_id"] == east_vpc), "{path}");
    }
    // Ordered by region and by profile (migration 63): a sorted deep page with the list's count.
    for (path, n) in [
        ("/vpcs/ipv6s".to_string(), db_scalar(&s, &of("vpc_ipv6_range IS NOT NULL")).await),
        (format!("/vpcs/{east_vpc}/ips"), east),
    ] {
        for field in ["region", "config_id"] {
            let order = format!(r#"{{"+order_by": "{field}", "+order": "desc"}}"#);
            let page = api.get_filtered(&format!("{path}?page=30&page_size=100"), &order).await.ok().clone();
            assert_eq!(page["results"], n, "{path} {field}");
            // The field's value: a region's text, or a profile's id (none as 0).
            let keys: Vec<(Option<&str>, i64)> = page["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| (e[field].as_str(), e[field].as_i64().unwrap_or(0)))
                .collect();
            assert_eq!(keys.len(), 100, "{path} {field}");
            assert!(keys.windows(2).all(|w| w[0] >= w[1]), "{path} {field}: {keys:?}");
        }
    }
    // `+neq` of an indexed field is two of its ranges: the other entries, counted exactly.
    let not_east = api.get_filtered("/vpcs/ips?page=2&page_size=25", r#"{"region": {"+neq": "us-east"}}"#).await;
    assert_eq!(not_east.ok()["results"], db_scalar(&s, &of("region <> 'us-east'")).await);
    let not_east_page = not_east.body["data"].as_array().unwrap();
    assert!(not_east_page.iter().all(|e| e["region"] != "us-east"), "{not_east_page:?}");
    let other_config = format!(r#"{{"config_id": {{"+neq": {west_config}}}, "+order_by": "config_id"}}"#);
    let path = format!("/vpcs/{east_vpc}/ips?page=20&page_size=100");
    let r = api.get_filtered(&path, &other_config).await;
    let want = db_scalar(&s, &of(&format!("vpc_id = {east_vpc} AND config_id <> {west_config}"))).await;
    assert!(want > 5_000, "{want}");
    assert_eq!(r.ok()["results"], want);
    assert_eq!(r.body["data"].as_array().unwrap().len(), 100);
    // What no index serves is still refused, naming X-Filter and what is served.
    for f in [
        r#"{"region": {"+contains": "east"}}"#,
        r#"{"+or": [{"region": "us-east"}, {"region": {"+contains": "west"}}]}"#,
    ] {
        for path in ["/vpcs/ips".to_string(), format!("/vpcs/{east_vpc}/ips")] {
            let r = api.get_filtered(&path, f).await;
            assert_eq!(r.status, 400, "{path} {f}: {}", r.body);
            assert_eq!(r.body["errors"][0]["field"], "X-Filter", "{f}");
            let reason = r.body["errors"][0]["reason"].as_str().unwrap();
            assert!(
                reason.contains(
                    "filter for equality or a range on, or order by, one of: \
                     id, vpc_id, subnet_id, instance_id, active, region, config_id"
                ),
                "{reason}"
            );
        }
    }
}

#[tokio::test]
async fn deep_pages_of_transfers_rule_sets_versions_history_and_disks_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    let (_, account) = owner(&s).await;
    other_account(&s);
    let other = db_scalar(&s, &format!("SELECT MAX(id) FROM accounts WHERE id <> {account}")).await;

    // Service transfers: made by this account, or made by the other one and accepted here (the
    // list merges both newest first); some of the other account's are not this account's at all.
    let cols = "token, account_id, receiver_account_id, status, created, updated, expiry";
    let exprs = format!(
        "'tok-' || CAST(n.i AS TEXT), CASE WHEN n.i % 3 = 0 OR n.i % 5 = 4 THEN {other} ELSE {account} END, \
         CASE WHEN n.i % 3 = 0 THEN {account} END, CASE WHEN n.i % 3 = 0 THEN 'completed' ELSE 'pending' END, \
         '2026-01-01T00:00:00', '2026-01-01T00:00:00', '2099-01-01T00:00:00'"
    );
    db_exec(&s, &copies(&s, "service_transfers", cols, &exprs, "SELECT 1 AS one", 2_400)).await;
    db_exec(&s, "DELETE FROM service_transfers WHERE id % 13 = 6 OR id % 1000 < 70").await;
    // Accepted later: moves into this account's list.
    db_exec(
        &s,
        &format!(
            "UPDATE service_transfers SET receiver_account_id = {account} \
             WHERE account_id = {other} AND receiver_account_id IS NULL AND id % 2 = 0"
        ),
    )
    .await;
    let mine = db_scalar(
        &s,
        &format!(
            "SELECT COUNT(*) FROM service_transfers WHERE account_id = {account} OR receiver_account_id = {account}"
        ),
    )
    .await;
    let every_transfer = r#"{"created": {"+gte": "2000-01-01T00:00:00"}}"#;
    assert_eq!(api.get("/account/service-transfers").await.ok()["results"], mine);
    pages_agree_with(&s, "/account/service-transfers", 100, every_transfer).await;
    pages_agree_with(&s, "/account/service-transfers", 333, every_transfer).await;

    // Rule sets of the account.
    let set = json!({"label": "set-seed", "type": "inbound", "rules": []});
    api.post("/networking/firewalls/rulesets", set).await.ok();
    let cols = "account_id, label, description, kind, rules, version, created, updated";
    let exprs =
        "t.account_id, 'set-' || CAST(n.i AS TEXT), t.description, t.kind, t.rules, t.version, t.created, t.updated";
    let template = "SELECT * FROM firewall_rulesets WHERE label = 'set-seed'";
    db_exec(&s, &copies(&s, "firewall_rulesets", cols, exprs, template, 1_500)).await;
    db_exec(&s, "DELETE FROM firewall_rulesets WHERE id % 9 = 2").await;
    pages_agree(&s, "/networking/firewalls/rulesets", 100).await;

    // A firewall's rule versions, counted by version.
    let fw = api.post("/networking/firewalls", firewall_body("versions")).await.ok()["id"].as_i64().unwrap();
    let cols = "firewall_id, version, rules, status, created";
    let exprs = "t.firewall_id, t.version + n.i, t.rules, t.status, t.created";
    let template = format!("SELECT * FROM firewall_rule_versions WHERE firewall_id = {fw} AND version = 1");
    db_exec(&s, &copies(&s, "firewall_rule_versions", cols, exprs, &template, 1_200)).await;
    db_exec(&s, &format!("DELETE FROM firewall_rule_versions WHERE firewall_id = {fw} AND version % 11 = 3")).await;
    let history = format!("/networking/firewalls/{fw}/history");
    pages_agree_with(&s, &history, 100, r#"{"version": {"+gte": 0}}"#).await;
    // Another firewall's versions have the same numbers: a deep page in the order of their
    // change reads its own firewall's alone.
    let other = api.post("/networking/firewalls", firewall_body("versions-2")).await.ok()["id"].as_i64().unwrap();
    let template = format!("SELECT * FROM firewall_rule_versions WHERE firewall_id = {other} AND version = 1");
    db_exec(&s, &copies(&s, "firewall_rule_versions", cols, exprs, &template, 1_200)).await;
    fences_placed(&s, "firewall_versions.updated").await;
    order_pages_agree(&s, &history, "updated", 100, r#""version": {"+gte": 0}"#).await;

    // An instance's interface history and its disks.
    let inst = crate::instances::create_instance(&api, "us-east", json!({})).await["id"].as_i64().unwrap();
    let cols = "interface_id, instance_id, version, interface_data, created";
    let exprs = format!("n.i % 4, {inst}, n.i, '{{}}', '2026-01-01T00:00:00'");
    db_exec(&s, &copies(&s, "instance_interface_history", cols, &exprs, "SELECT 1 AS one", 1_300)).await;
    db_exec(&s, &format!("DELETE FROM instance_interface_history WHERE instance_id = {inst} AND id % 7 = 1")).await;
    let every_entry = r#"{"interface_history_id": {"+gte": 0}}"#;
    pages_agree_with(&s, &format!("/linode/instances/{inst}/interfaces/history"), 100, every_entry).await;
    let cols = "instance_id, label, size, filesystem, status, image, authorized_keys, created, updated";
    let exprs = "t.instance_id, 'd' || CAST(n.i AS TEXT), 1, t.filesystem, t.status, t.image, t.authorized_keys, \
                 t.created, t.updated";
    let template = format!("SELECT * FROM instance_disks WHERE instance_id = {inst} ORDER BY id LIMIT 1");
    db_exec(&s, &copies(&s, "instance_disks", cols, exprs, &template, 1_100)).await;
    db_exec(&s, &format!("DELETE FROM instance_disks WHERE instance_id = {inst} AND id % 6 = 5")).await;
    pages_agree(&s, &format!("/linode/instances/{inst}/disks"), 100).await;

    // OAuth clients (text ids), in the order they were made: some made through the API after
    // the copies, which must come last.
    let cols = "id, account_id, label, redirect_uri, public, status, secret_hash, created, seq";
    let exprs = format!(
        "'client-' || CAST(n.i AS TEXT), {account}, 'c' || CAST(n.i AS TEXT), 'https://app.example/cb', \
         FALSE, 'active', 'not-a-hash', '2026-01-01T00:00:00', n.i"
    );
    db_exec(&s, &copies(&s, "oauth_clients", cols, &exprs, "SELECT 1 AS one", 1_400)).await;
    db_exec(&s, "DELETE FROM oauth_clients WHERE seq % 8 = 3").await;
    let made = api
        .post("/account/oauth-clients", json!({"label": "late", "redirect_uri": "https://app.example/cb"}))
        .await
        .ok()["id"]
        .clone();
    let every_client = r#"{"label": {"+gte": ""}}"#;
    pages_agree_with(&s, "/account/oauth-clients", 100, every_client).await;
    let total = api.get("/account/oauth-clients?page_size=25").await.ok()["results"].as_u64().unwrap();
    let last = api.get(&format!("/account/oauth-clients?page={}&page_size=25", total.div_ceil(25))).await;
    assert_eq!(last.ok()["data"].as_array().unwrap().last().unwrap()["id"], made, "the newest client comes last");
}

/// Every page of `path` in the order of `field` (both directions) is the same located by the
/// order fences and read by skipping (a filter every record matches: `every`, a JSON object's
/// members), with the same `results`.
async fn order_pages_agree(s: &TestServer, path: &str, field: &str, page_size: u64, every: &str) {
    let api = s.api();
    for dir in ["asc", "desc"] {
        let order = format!(r#"{{"+order_by": "{field}", "+order": "{dir}"}}"#);
        let skipping = format!(r#"{{{every}, "+order_by": "{field}", "+order": "{dir}"}}"#);
        let first = api.get_filtered(&format!("{path}?page_size={page_size}"), &order).await;
        let results = first.ok()["results"].as_u64().unwrap();
        let pages = first.body["pages"].as_u64().unwrap();
        assert!(pages > 3, "{path} has {results} rows: too few to reach a located page");
        let mut seen = 0;
        for page in 1..=pages + 1 {
            let url = format!("{path}?page={page}&page_size={page_size}");
            let located = api.get_filtered(&url, &order).await;
            assert_eq!(located.status, 200, "{url} {order}: {}", s.log());
            let skipped = api.get_filtered(&url, &skipping).await;
            assert_eq!(keys(located.ok()), keys(skipped.ok()), "{url} {order}");
            assert_eq!(located.body["results"], results, "{url} {order}");
            seen += keys(&located.body).len() as u64;
        }
        assert_eq!(seen, results, "{path} {order}: the pages together hold every row once");
    }
}

/// Waits until nubis has placed fences for `kind` (a list kind and a field).
async fn fences_placed(s: &TestServer, kind: &str) {
    let sql = format!("SELECT COUNT(*) FROM order_fences WHERE kind = '{kind}'");
    eventually(30, &format!("fences for {kind}"), || {
        let sql = sql.clone();
        async move { (db_scalar(s, &sql).await > 1).then_some(()) }
    })
    .await;
}

#[tokio::test]
async fn deep_pages_in_a_fields_order_hold_the_rows_that_skipping_finds_while_rows_come_and_go() {
    let s = TestServer::start().await;
    let api = s.api();
    let made = api.post("/networking/firewalls", firewall_body("seed")).await;
    let account = db_scalar(&s, &format!("SELECT account_id FROM firewalls WHERE id = {}", made.ok()["id"])).await;
    // Labels in an order unlike the ids', and creation times shared by many rows (ties go by id).
    let cols = "account_id, label, status, rules, tags, created, updated";
    let exprs = format!(
        "{account}, 'fw-' || CAST((n.i * 7919) % 10007 AS TEXT), t.status, t.rules, t.tags, \
         '2026-01-01T00:00:' || CAST(10 + n.i % 40 AS TEXT), t.updated"
    );
    let template = "SELECT * FROM firewalls WHERE label = 'seed'";
    db_exec(&s, &copies(&s, "firewalls", cols, &exprs, template, 10_000)).await;
    fences_placed(&s, "firewalls.label").await;
    fences_placed(&s, "firewalls.created").await;
    let every = r#""id": {"+gte": 0}"#;
    order_pages_agree(&s, "/networking/firewalls", "label", 500, every).await;
    order_pages_agree(&s, "/networking/firewalls", "created", 450, every).await;

    // Rows come and go and move between ranges; the counts follow in the same transactions,
    // before any fence moves.
    for l in ["fw-5x", "fw-50000", "a-first", "zz-last"] {
        api.post("/networking/firewalls", firewall_body(l)).await.ok();
    }
    db_exec(&s, "DELETE FROM firewalls WHERE label LIKE 'fw-%' AND id % 9 = 4").await;
    db_exec(&s, "UPDATE firewalls SET label = 'moved-' || label, created = '2026-01-01T00:00:05' WHERE id % 13 = 7")
        .await;
    order_pages_agree(&s, "/networking/firewalls", "label", 500, every).await;
    order_pages_agree(&s, "/networking/firewalls", "created", 333, every).await;
    // An order by the id column is the list's own order.
    order_pages_agree(&s, "/networking/firewalls", "id", 500, r#""label": {"+gte": ""}"#).await;
}

#[tokio::test]
async fn deep_event_pages_in_a_fields_order_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/networking/firewalls", firewall_body("seed")).await.ok();
    let cols = "account_id, action, created, entity_type, entity_id, entity_label, entity_url, status, username";
    // Entity, entity type and username are NULL on some rows (events with no entity or no
    // user): those fields are ordered with NULL lowest (migration 47).
    let exprs = "t.account_id, CASE n.i % 3 WHEN 0 THEN 'linode_boot' WHEN 1 THEN t.action ELSE 'vpc_create' END, \
                 substr(t.created, 1, 17) || CAST(10 + n.i % 50 AS TEXT), \
                 CASE WHEN n.i % 5 = 0 THEN NULL WHEN n.i % 2 = 0 THEN 'linode' ELSE t.entity_type END, \
                 CASE WHEN n.i % 6 = 0 THEN NULL ELSE (n.i * 7919) % 10007 END, \
                 t.entity_label, t.entity_url, CASE WHEN n.i % 7 = 0 THEN 'failed' ELSE t.status END, \
                 CASE WHEN n.i % 4 = 0 THEN NULL ELSE 'user' || CAST(n.i % 11 AS TEXT) END";
    let template = "SELECT * FROM events WHERE action = 'firewall_create'";
    db_exec(&s, &copies(&s, "events", cols, exprs, template, 9_000)).await;
    for field in ["action", "created", "status", "entity.id", "entity.type", "username"] {
        fences_placed(&s, &format!("events.{field}")).await;
    }
    let every = r#""id": {"+gte": 0}"#;
    for field in ["action", "created", "status", "id", "entity.id", "entity.type", "username"] {
        order_pages_agree(&s, "/account/events", field, 500, every).await;
    }
    // NULL is the lowest value on both engines: first ascending, last descending, ties by id.
    let api = s.api();
    for (field, value) in [("entity.id", "/entity/id"), ("entity.type", "/entity/type"), ("username", "/username")] {
        let asc = api.get_filtered("/account/events?page_size=25", &format!(r#"{{"+order_by": "{field}"}}"#)).await;
        let first = &asc.ok()["data"].as_array().unwrap()[0];
        let first_value = first.pointer(value).cloned().unwrap_or(Value::Null);
        assert_eq!(first_value, Value::Null, "{field} ascending starts with NULL: {first}");
        let order = format!(r#"{{"+order_by": "{field}", "+order": "desc"}}"#);
        let desc = api.get_filtered("/account/events?page_size=25", &order).await;
        let pages = desc.ok()["pages"].as_u64().unwrap();
        let last = api.get_filtered(&format!("/account/events?page={pages}&page_size=25"), &order).await;
        let data = last.ok()["data"].as_array().unwrap();
        assert!(data.iter().all(|e| e.pointer(value).is_none_or(Value::is_null)), "{field} descending ends with NULL");
        let ids: Vec<i64> = data.iter().map(|e| e["id"].as_i64().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[0] > w[1]), "NULL rows descending go by id, newest first: {ids:?}");
    }

    // Past the budget `seen` is served as the range of ids up to the viewer's mark (or past it),
    // with its count, alone and inside +or.
    let mark = db_scalar(&s, "SELECT id FROM events ORDER BY id LIMIT 1 OFFSET 4000").await;
    api.post_empty(&format!("/account/events/{mark}/seen")).await.ok();
    let s = &s;
    let count = |cond: String| async move { db_scalar(s, &format!("SELECT COUNT(*) FROM events WHERE {cond}")).await };
    let (seen, unseen) = (count(format!("id <= {mark}")).await, count(format!("id > {mark}")).await);
    assert!(seen > 4_000 && unseen > 4_000, "{seen} seen, {unseen} not");
    for (filter, want, by_id) in [
        (r#"{"seen": true}"#, seen, format!(r#"{{"id": {{"+lte": {mark}}}}}"#)),
        (r#"{"seen": {"+neq": false}}"#, seen, format!(r#"{{"id": {{"+lte": {mark}}}}}"#)),
        (r#"{"seen": false}"#, unseen, format!(r#"{{"id": {{"+gt": {mark}}}}}"#)),
        (r#"{"seen": {"+neq": true}}"#, unseen, format!(r#"{{"id": {{"+gt": {mark}}}}}"#)),
    ] {
        for page in [1, 3, 9] {
            let url = format!("/account/events?page={page}&page_size=400");
            let r = api.get_filtered(&url, filter).await;
            assert_eq!(r.ok()["results"], want, "{filter}");
            let data = r.body["data"].as_array().unwrap();
            let expect_seen = want == seen;
            assert!(data.iter().all(|e| e["seen"] == expect_seen), "{filter} page {page}");
            assert_eq!(ids(&r.body), ids(api.get_filtered(&url, &by_id).await.ok()), "{filter} page {page}");
        }
    }
    // Past the budget the whole list is ordered by `seen`: the events past the mark, then those
    // up to it, each by id in the order's direction. Every page of 450 in both directions (the
    // page that holds the turn from one run to the other among them), and the one past the end.
    let in_order = |cond: &str, dir: &str| {
        let sql = format!("SELECT CAST(id AS TEXT) AS listed FROM events WHERE {cond} ORDER BY id {dir}");
        async move { db_texts(s, &sql).await.iter().map(|id| id.parse::<i64>().unwrap()).collect::<Vec<i64>>() }
    };
    let (past, upto) = (format!("id > {mark}"), format!("id <= {mark}"));
    let asc = [in_order(&past, "ASC").await, in_order(&upto, "ASC").await].concat();
    let desc = [in_order(&upto, "DESC").await, in_order(&past, "DESC").await].concat();
    for (dir, want) in [("asc", asc), ("desc", desc)] {
        let order = format!(r#"{{"+order_by": "seen", "+order": "{dir}"}}"#);
        for page in 1..=want.len().div_ceil(450) + 1 {
            let r = api.get_filtered(&format!("/account/events?page={page}&page_size=450"), &order).await;
            assert_eq!(r.ok()["results"], want.len(), "{order}");
            let at = ((page - 1) * 450).min(want.len());
            assert_eq!(ids(&r.body), want[at..(at + 450).min(want.len())], "{order} page {page}");
        }
    }
    let either = r#"{"+or": [{"seen": false}, {"action": "vpc_create"}]}"#;
    let want = count(format!("id > {mark} OR action = 'vpc_create'")).await;
    assert!(want > unseen + 1_000, "{want}");
    assert_eq!(api.get_filtered("/account/events?page=2", either).await.ok()["results"], want);

    // Past the budget `read` is served too: the reader's marks are read first, the events not
    // read are met as a page walks the list. One event read through the API, one in 7 as data.
    api.post_empty(&format!("/account/events/{mark}/read")).await.ok();
    let user = db_scalar(s, "SELECT user_id FROM event_reads").await;
    db_exec(
        s,
        &format!("INSERT INTO event_reads (user_id, event_id) SELECT {user}, id FROM events WHERE id % 7 = 3 AND id <> {mark}"),
    )
    .await;
    let newest_first = |cond: String| async move {
        let sql = format!("SELECT CAST(id AS TEXT) AS listed FROM events WHERE {cond} ORDER BY id DESC");
        db_texts(s, &sql).await.iter().map(|id| id.parse::<i64>().unwrap()).collect::<Vec<i64>>()
    };
    let marked = format!("id IN (SELECT event_id FROM event_reads WHERE user_id = {user})");
    let read = newest_first(marked.clone()).await;
    let unread = newest_first(format!("NOT {marked}")).await;
    assert!(read.len() > 1_000 && unread.len() > 7_000, "{} read, {} not", read.len(), unread.len());
    for (filter, want) in [
        (r#"{"read": true}"#, &read),
        (r#"{"read": {"+neq": false}}"#, &read),
        (r#"{"read": false}"#, &unread),
        (r#"{"read": {"+neq": true}}"#, &unread),
    ] {
        for (page, size) in [(1, 50), (2, 50), (3, 400), (20, 400)] {
            let r = api.get_filtered(&format!("/account/events?page={page}&page_size={size}"), filter).await;
            assert_eq!(r.ok()["results"], want.len(), "{filter}");
            let at = ((page - 1) * size).min(want.len());
            assert_eq!(ids(&r.body), want[at..(at + size).min(want.len())], "{filter} page {page} of {size}");
        }
    }
    for (filter, cond) in [
        (r#"{"read": true, "action": "vpc_create"}"#, format!("{marked} AND action = 'vpc_create'")),
        (r#"{"+or": [{"read": true}, {"seen": false}]}"#, format!("{marked} OR id > {mark}")),
        (r#"{"read": false, "status": "failed"}"#, format!("NOT {marked} AND status = 'failed'")),
        // `+neq` of an indexed field: two ranges of its index.
        (r#"{"action": {"+neq": "vpc_create"}}"#, "action <> 'vpc_create'".to_string()),
        (r#"{"status": {"+neq": "failed"}, "read": true}"#, format!("{marked} AND status <> 'failed'")),
    ] {
        let want = newest_first(cond).await;
        let r = api.get_filtered("/account/events?page=2&page_size=30", filter).await;
        assert_eq!(r.ok()["results"], want.len(), "{filter}");
        assert_eq!(ids(&r.body), want[30.min(want.len())..60.min(want.len())], "{filter}");
    }
    let by_created = r#"{"read": true, "+order_by": "created", "+order": "desc"}"#;
    let r = api.get_filtered("/account/events?page=2&page_size=25", by_created).await;
    assert_eq!(r.ok()["results"], read.len());
    assert!(r.body["data"].as_array().unwrap().iter().all(|e| e["read"] == true), "{by_created}");
    let refused = r#"{"action": {"+contains": "vpc"}}"#;
    let r = api.get_filtered("/account/events", refused).await;
    assert_eq!(r.status, 400, "{refused}: {}", r.body);
    assert_eq!(r.body["errors"][0]["field"], "X-Filter", "{refused}");
    let reason = r.body["errors"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("username, status, seen, read; order by one of: id, action"), "{reason}");
    assert!(reason.ends_with("; order by seen or read the whole list (not a restricted user's)"), "{reason}");

    // Past the budget the whole list is ordered by `read`: the events not read, then the
    // reader's marks, each by id in the order's direction. Every page of 450 in both directions,
    // and the one past the end; again once marks go and come.
    read_order_agrees(s, user).await;
    db_exec(s, &format!("DELETE FROM event_reads WHERE user_id = {user} AND event_id % 3 = 1")).await;
    db_exec(
        s,
        &format!("INSERT INTO event_reads (user_id, event_id) SELECT {user}, id FROM events WHERE id % 41 = 5 AND id % 7 <> 3"),
    )
    .await;
    let newest = db_scalar(s, "SELECT MAX(id) FROM events").await;
    api.post_empty(&format!("/account/events/{newest}/read")).await.ok();
    read_order_agrees(s, user).await;
}

/// Every page of 450 of the event list ordered by `read`, both directions, and the page past the
/// end: the account's events `user` has not marked read, then those marked, each by id in the
/// order's direction, as the database holds them.
async fn read_order_agrees(s: &TestServer, user: i64) {
    let api = s.api();
    let marked = format!("id IN (SELECT event_id FROM event_reads WHERE user_id = {user})");
    let in_order = |cond: String, dir: &str| {
        let sql = format!("SELECT CAST(id AS TEXT) AS listed FROM events WHERE {cond} ORDER BY id {dir}");
        async move { db_texts(s, &sql).await.iter().map(|id| id.parse::<i64>().unwrap()).collect::<Vec<i64>>() }
    };
    let (read, unread) = (marked.clone(), format!("NOT {marked}"));
    let asc = [in_order(unread.clone(), "ASC").await, in_order(read.clone(), "ASC").await].concat();
    let desc = [in_order(read, "DESC").await, in_order(unread, "DESC").await].concat();
    for (dir, want) in [("asc", asc), ("desc", desc)] {
        let order = format!(r#"{{"+order_by": "read", "+order": "{dir}"}}"#);
        for page in 1..=want.len().div_ceil(450) + 1 {
            let r = api.get_filtered(&format!("/account/events?page={page}&page_size=450"), &order).await;
            assert_eq!(r.ok()["results"], want.len(), "{order}");
            let at = ((page - 1) * 450).min(want.len());
            assert_eq!(ids(&r.body), want[at..(at + 450).min(want.len())], "{order} page {page}");
        }
    }
}

#[tokio::test]
async fn deep_maintenance_pages_and_notifications_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut ids = Vec::new();
    for label in ["mw-a", "mw-b", "mw-c"] {
        let made =
            api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": label})).await;
        ids.push(made.ok()["id"].as_i64().unwrap());
    }
    let seed = ["instance", "maintenance", "schedule", &ids[0].to_string(), "--type", "reboot"];
    let (ok, _, err) = s.admin(&[&seed[..], &["--when", "2099-01-01T04:00:00", "--reason", "seed"]].concat());
    assert!(ok, "{err}");
    // A past-due balance: one notification before the windows.
    crate::billing_invoices::add_card(&api, "4111111111111111", true).await.ok();
    let old = (chrono::Utc::now().naive_utc() - chrono::Duration::days(31)).format("%Y-%m-%dT%H:%M:%S").to_string();
    db_exec(
        &s,
        &format!(
            "INSERT INTO invoices (account_id, date, label, period_from, period_to, subtotal, tax, total) \
             SELECT account_id, '{old}', 'Invoice', '{old}', '{old}', 1200, 0, 1200 FROM maintenance; \
             UPDATE account_billing SET balance = 1200 WHERE account_id = (SELECT account_id FROM maintenance)"
        ),
    )
    .await;
    // 12,000 windows over the three instances: a quarter canceled (not listed), a quarter
    // completed, half pending; two types; times shared by many windows (ties go by id).
    let (a, b, c) = (ids[0], ids[1], ids[2]);
    let cols = "account_id, instance_id, type, reason, status, when_ts, created";
    let exprs = format!(
        "t.account_id, CASE n.i % 3 WHEN 0 THEN {a} WHEN 1 THEN {b} ELSE {c} END, \
         CASE WHEN n.i % 5 = 0 THEN 'live_migration' ELSE t.type END, 'window ' || CAST(n.i AS TEXT), \
         CASE n.i % 4 WHEN 0 THEN 'completed' WHEN 1 THEN 'canceled' ELSE 'pending' END, \
         substr(t.when_ts, 1, 14) || CAST(10 + n.i % 50 AS TEXT) || ':00', t.created"
    );
    db_exec(&s, &copies(&s, "maintenance", cols, &exprs, "SELECT * FROM maintenance", 12_000)).await;
    for field in ["when", "status", "type"] {
        fences_placed(&s, &format!("maintenance.{field}")).await;
    }
    let every = r#""+or": [{"status": "pending"}, {"status": "completed"}]"#;
    pages_agree_with(&s, "/account/maintenance", 500, &format!("{{{every}}}")).await;
    for field in ["when", "status", "type"] {
        order_pages_agree(&s, "/account/maintenance", field, 500, every).await;
    }
    assert_eq!(api.get("/account/maintenance").await.ok()["results"], 9_001);

    // The notifications: the past-due balance, then every pending window in the order of `when`
    // (a page of them read where it starts), each page as long as asked.
    let pending = r#"{"status": "pending"}"#;
    let first = api.get("/account/notifications?page_size=500").await;
    assert_eq!(first.ok()["results"], 6_002);
    assert_eq!(first.body["data"][0]["type"], "payment_due");
    let mut bodies = Vec::new();
    for page in 1..=14 {
        let notes = api.get(&format!("/account/notifications?page={page}&page_size=500")).await;
        let data = notes.ok()["data"].as_array().unwrap().clone();
        assert_eq!(
            data.len(),
            if page < 13 {
                500
            } else if page == 13 {
                2
            } else {
                0
            },
            "page {page}"
        );
        bodies.extend(data.iter().filter(|n| n["type"] != "payment_due").map(|n| n["body"].to_string()));
    }
    let mut reasons = Vec::new();
    for page in 1..=13 {
        let windows = api.get_filtered(&format!("/account/maintenance?page={page}&page_size=500"), pending).await;
        reasons.extend(windows.ok()["data"].as_array().unwrap().iter().map(|m| m["reason"].to_string()));
    }
    assert_eq!(bodies.len(), 6_001);
    assert_eq!(bodies, reasons);

    // A deleted instance's windows leave both lists and their counts.
    api.delete(&format!("/compute/instances/{c}")).await.ok();
    let left = api.get("/account/maintenance").await;
    assert_eq!(left.ok()["results"], 6_001);
    assert_eq!(api.get("/account/notifications").await.ok()["results"], 4_002);
    pages_agree_with(&s, "/account/maintenance", 500, &format!("{{{every}}}")).await;
    order_pages_agree(&s, "/account/maintenance", "when", 500, every).await;
}

/// The fences of `kind` whose numbers are not in the order of their keys.
const FENCES_OUT_OF_ORDER: &str = "SELECT COUNT(*) FROM order_fences a JOIN order_fences b \
     ON a.kind = b.kind AND a.scope_id = b.scope_id AND a.fence < b.fence \
     WHERE a.kind = 'firewalls.label' AND (a.k_text > b.k_text OR (a.k_text = b.k_text AND a.k_id > b.k_id))";

#[tokio::test]
async fn fences_are_numbered_in_key_order_and_spread_out_when_a_cut_finds_no_room() {
    let s = TestServer::start().await;
    let api = s.api();
    let made = api.post("/networking/firewalls", firewall_body("seed")).await;
    let account = db_scalar(&s, &format!("SELECT account_id FROM firewalls WHERE id = {}", made.ok()["id"])).await;
    let cols = "account_id, label, status, rules, tags, created, updated";
    let exprs = format!(
        "{account}, 'fw-' || CAST((n.i * 7919) % 10007 AS TEXT), t.status, t.rules, t.tags, t.created, t.updated"
    );
    let template = "SELECT * FROM firewalls WHERE label = 'seed'";
    db_exec(&s, &copies(&s, "firewalls", cols, &exprs, template, 10_000)).await;
    fences_placed(&s, "firewalls.label").await;
    assert_eq!(db_scalar(&s, FENCES_OUT_OF_ORDER).await, 0);

    // Number the fences 1, 2, 3... in their order: no room is left between two of them.
    db_exec(
        &s,
        "CREATE TABLE renumbered AS SELECT fence AS old, ROW_NUMBER() OVER (ORDER BY fence) AS new \
         FROM order_fences WHERE kind = 'firewalls.label'; \
         UPDATE order_fence_counts SET fence = (SELECT r.new FROM renumbered r WHERE r.old = order_fence_counts.fence) \
         WHERE kind = 'firewalls.label' AND fence > 0; \
         UPDATE order_fences SET fence = (SELECT r.new FROM renumbered r WHERE r.old = order_fences.fence) \
         WHERE kind = 'firewalls.label'; \
         DROP TABLE renumbered",
    )
    .await;
    let fences = db_scalar(&s, "SELECT COUNT(*) FROM order_fences WHERE kind = 'firewalls.label'").await;
    assert_eq!(db_scalar(&s, "SELECT MAX(fence) FROM order_fences WHERE kind = 'firewalls.label'").await, fences);
    let every = r#""id": {"+gte": 0}"#;
    order_pages_agree(&s, "/networking/firewalls", "label", 500, every).await;

    // 9,000 more rows right after the second fence's key: that range is cut, with no number
    // free between its fence and the next, so the fences are spread out first.
    let key = "(SELECT k_text FROM order_fences WHERE kind = 'firewalls.label' AND fence = 2)";
    let exprs =
        format!("{account}, {key} || '-' || CAST(n.i AS TEXT), t.status, t.rules, t.tags, t.created, t.updated");
    db_exec(&s, &copies(&s, "firewalls", cols, &exprs, template, 9_000)).await;
    eventually(30, "the grown range cut", || async {
        let now = db_scalar(&s, "SELECT COUNT(*) FROM order_fences WHERE kind = 'firewalls.label'").await;
        (now > fences).then_some(())
    })
    .await;
    assert_eq!(db_scalar(&s, FENCES_OUT_OF_ORDER).await, 0);
    let lowest = db_scalar(&s, "SELECT MIN(fence) FROM order_fences WHERE kind = 'firewalls.label'").await;
    assert!(lowest >= 1 << 32, "the fences were spread out: the lowest is {lowest}");
    order_pages_agree(&s, "/networking/firewalls", "label", 500, every).await;
}

/// Copies each instance interface that meets `which` `times` times at positions from 1,000, one
/// copy in five without IPv6 (so in the VPC address list but not in its IPv6 list).
async fn copy_vpc_interfaces(s: &TestServer, which: &str, times: i64) {
    copy_vpc_interfaces_from(s, which, times, 1_000).await
}

/// [`copy_vpc_interfaces`] at positions from `from`.
async fn copy_vpc_interfaces_from(s: &TestServer, which: &str, times: i64, from: i64) {
    let cols = "instance_id, account_id, region, position, purpose, is_primary, label, ipam_address, vpc_id, subnet_id, \
                vpc_ipv4, vpc_v4, nat_1_1, created, vpc_ipv6_range, vpc_ipv6_address, vpc_ipv6_ranges, vpc_ipv6_public, \
                config_id, default_ipv4, default_ipv6, version, updated";
    let exprs = format!(
        "t.instance_id, t.account_id, t.region, {from} + n.i, t.purpose, t.is_primary, t.label, t.ipam_address, \
         t.vpc_id, t.subnet_id, t.vpc_ipv4, NULL, t.nat_1_1, t.created, \
         CASE WHEN n.i % 5 = 0 THEN NULL ELSE t.vpc_ipv6_range || '-' || CAST({from} + n.i AS TEXT) END, \
         t.vpc_ipv6_address, t.vpc_ipv6_ranges, t.vpc_ipv6_public, t.config_id, t.default_ipv4, t.default_ipv6, \
         t.version, t.updated"
    );
    let template = format!("SELECT * FROM instance_interfaces WHERE {which}");
    db_exec(s, &copies(s, "instance_interfaces", cols, &exprs, &template, times)).await;
}

#[tokio::test]
async fn deep_pages_of_the_vpc_ipv6_list_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    let subnets = json!([{"label": "six", "ipv4": "10.0.0.0/24", "ipv6": [{}]}]);
    let v = api.post("/vpcs", json!({"label": "deep", "region": "us-east", "ipv6": [{}], "subnets": subnets})).await;
    let (vpc, six) = (v.ok()["id"].as_i64().unwrap(), v.body["subnets"][0]["id"].as_i64().unwrap());
    let iface = json!({"purpose": "vpc", "subnet_id": six, "ipv6": {"is_public": false}});
    let body =
        json!({"region": "us-east", "type": "g6-nanode-1", "label": "vm-deep", "booted": false, "interfaces": [iface]});
    api.post("/compute/instances", body).await.ok();
    // 1,500 copies of its interface, one in five without IPv6 (not in the list).
    copy_vpc_interfaces(&s, "vpc_ipv6_range IS NOT NULL", 1_500).await;
    assert_eq!(api.get("/vpcs/ipv6s").await.ok()["results"], 1_201);
    let every = format!(r#"{{"vpc_id": {vpc}}}"#);
    pages_agree_with(&s, "/vpcs/ipv6s", 100, &every).await;
    // A filter and an order on the interfaces' own fields (their keys read from that table
    // alone, then the rows by key), on both lists, against the rows in SQL.
    let want = db_texts(
        &s,
        "SELECT CAST(id AS TEXT) AS k FROM instance_interfaces WHERE purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL \
         ORDER BY instance_id DESC, id DESC",
    )
    .await;
    let ordered = format!(
        r#"{{"subnet_id": {six}, "+or": [{{"region": "us-east"}}, {{"region": "us-west"}}], "+order_by": "instance_id", "+order": "desc"}}"#
    );
    // The whole list sorted in an order no index serves (the profile), the same way.
    let sorted = r#"{"+order_by": "config_id", "+order": "desc"}"#;
    let want_sorted = db_texts(
        &s,
        "SELECT CAST(id AS TEXT) AS k FROM instance_interfaces WHERE purpose = 'vpc' AND vpc_ipv6_range IS NOT NULL \
         ORDER BY config_id DESC, id DESC",
    )
    .await;
    for path in ["/vpcs/ipv6s".to_string(), format!("/vpcs/{vpc}/ipv6s")] {
        for (filter, want) in [(ordered.as_str(), &want), (sorted, &want_sorted)] {
            let mut got = Vec::new();
            for page in 1..=13 {
                let r = api.get_filtered(&format!("{path}?page={page}&page_size=100"), filter).await.ok().clone();
                assert_eq!(r["results"], 1_201, "{path} page {page} {filter}");
                got.extend(r["data"].as_array().unwrap().iter().map(|e| e["interface_id"].to_string()));
            }
            assert_eq!(&got, want, "{path} {filter}");
        }
    }
    // The count follows interfaces that lose their IPv6 and interfaces that go.
    db_exec(&s, "UPDATE instance_interfaces SET vpc_ipv6_range = NULL WHERE position % 7 = 3").await;
    db_exec(&s, "DELETE FROM instance_interfaces WHERE position % 11 = 4").await;
    let left = db_scalar(&s, "SELECT COUNT(*) FROM instance_interfaces WHERE vpc_ipv6_range IS NOT NULL").await;
    assert_eq!(api.get("/vpcs/ipv6s").await.ok()["results"], left);
    pages_agree_with(&s, "/vpcs/ipv6s", 100, &every).await;
}

#[tokio::test]
async fn deep_pages_of_an_instances_firewalls_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    let body = json!({"region": "us-east", "type": "g6-nanode-1", "label": "fw-host", "booted": false});
    let iid = api.post("/compute/instances", body).await.ok()["id"].as_i64().unwrap();
    let mut seed = firewall_body("seed");
    seed["devices"] = json!({"instances": [iid]});
    api.post("/networking/firewalls", seed).await.ok();
    let account = db_scalar(&s, "SELECT account_id FROM firewalls WHERE label = 'seed'").await;
    let cols = "account_id, label, status, rules, tags, created, updated";
    let exprs = format!(
        "{account}, 'fw-' || CAST((n.i * 7919) % 10007 AS TEXT), t.status, t.rules, t.tags, t.created, t.updated"
    );
    db_exec(&s, &copies(&s, "firewalls", cols, &exprs, "SELECT * FROM firewalls WHERE label = 'seed'", 1_500)).await;
    // Four in five of them on the instance, disabled (one firewall of a service is active).
    db_exec(
        &s,
        &format!(
            "INSERT INTO firewall_devices (firewall_id, account_id, instance_id, active, created, updated) \
             SELECT f.id, f.account_id, {iid}, (SELECT NOT d.active FROM firewall_devices d), f.created, f.updated \
             FROM firewalls f WHERE f.label LIKE 'fw-%' AND f.id % 5 <> 0"
        ),
    )
    .await;
    let path = format!("/compute/instances/{iid}/firewalls");
    assert_eq!(api.get(&path).await.ok()["results"], 1_201);
    let every = r#"{"id": {"+gte": 0}}"#;
    pages_agree_with(&s, &path, 100, every).await;
    order_pages_agree(&s, &path, "id", 100, r#""label": {"+gte": ""}"#).await;
    order_pages_agree(&s, &path, "label", 100, r#""id": {"+gte": 0}"#).await;
    // The count follows devices that go.
    db_exec(&s, "DELETE FROM firewall_devices WHERE firewall_id % 7 = 3 AND active = (SELECT NOT d.active FROM firewall_devices d WHERE d.firewall_id = (SELECT id FROM firewalls WHERE label = 'seed'))").await;
    let left = db_scalar(&s, &format!("SELECT COUNT(*) FROM firewall_devices WHERE instance_id = {iid}")).await;
    assert_eq!(api.get(&path).await.ok()["results"], left);
    pages_agree_with(&s, &path, 100, every).await;
}

#[tokio::test]
async fn deep_pages_of_an_instances_balancers_hold_the_rows_that_skipping_finds_as_nodes_come_go_and_move() {
    // The 1,500 balancers copied in below have loopback addresses outside any region's pool: no
    // data plane may listen on them (another test's region may hold them), and on the netns
    // driver the instances' runtime would give each an address in the region's namespace. The
    // list is read the same way on either driver; this test runs in loopback mode only.
    if netns() {
        return;
    }
    let opts = Options { extra_args: vec!["--no-dataplane".into()], ..Default::default() };
    let s = TestServer::start_with(opts).await;
    let api = s.api();
    let mut private = Vec::new();
    for label in ["backend-a", "backend-b"] {
        let body = json!({"label": label, "private_ip": true, "booted": false});
        let inst = crate::instances::create_instance(&api, "us-east", body).await;
        let ip = inst["ipv4"].as_array().unwrap().iter().find(|a| a.as_str().unwrap().starts_with("192.168."));
        private.push((inst["id"].as_i64().unwrap(), ip.unwrap().as_str().unwrap().to_string()));
    }
    let (a, pa) = private[0].clone();
    let (b, pb) = private[1].clone();
    let node = |label: &str, addr: &str, port: u16| json!({"label": label, "address": format!("{addr}:{port}")});
    let seed =
        json!({"region": "us-east", "label": "seed-lb", "configs": [{"port": 80, "nodes": [node("node1", &pa, 80)]}]});
    let seed = api.post("/nodebalancers", seed).await.ok()["id"].as_i64().unwrap();
    // 1,500 copies of the balancer, its config and its node on instance a's private address.
    let cols = "account_id, label, region, ipv4, v4, ipv6, client_conn_throttle, tags, created, updated";
    let exprs = "t.account_id, 'b-' || CAST(n.i AS TEXT), t.region, \
                 '127.128.' || CAST(n.i / 256 AS TEXT) || '.' || CAST(n.i % 256 AS TEXT), 2139095040 + n.i, \
                 '2001:db8:c::' || CAST(n.i AS TEXT), t.client_conn_throttle, t.tags, t.created, t.updated";
    let template = format!("SELECT * FROM nodebalancers WHERE id = {seed}");
    db_exec(&s, &copies(&s, "nodebalancers", cols, exprs, &template, 1_500)).await;
    let cfg_cols = "account_id, label, port, protocol, algorithm, stickiness, check_type, check_interval, \
                    check_timeout, check_attempts, check_path, check_body, check_passive, proxy_protocol, cipher_suite, \
                    ssl_cert, ssl_key, ssl_commonname, ssl_fingerprint, udp_check_port, udp_session_timeout, created, updated";
    let from_seed = |c: &str| cfg_cols.split(", ").map(|col| format!("{c}.{col}")).collect::<Vec<_>>().join(", ");
    db_exec(
        &s,
        &format!(
            "INSERT INTO nodebalancer_configs (nodebalancer_id, {cfg_cols}) SELECT b.id, {} \
             FROM nodebalancer_configs c JOIN nodebalancers b ON b.label LIKE 'b-%' WHERE c.nodebalancer_id = {seed}",
            from_seed("c")
        ),
    )
    .await;
    let node_cols = "account_id, label, address, v4, port, weight, mode, status, created, updated";
    let copy_nodes = |which: &str| {
        format!(
            "INSERT INTO nodebalancer_nodes (config_id, nodebalancer_id, {node_cols}) SELECT c.id, c.nodebalancer_id, {} \
             FROM nodebalancer_nodes n JOIN nodebalancer_configs c ON c.nodebalancer_id IN \
             (SELECT id FROM nodebalancers WHERE label LIKE 'b-%' {which}) WHERE n.nodebalancer_id = {seed}",
            node_cols.split(", ").map(|col| format!("n.{col}")).collect::<Vec<_>>().join(", ")
        )
    };
    db_exec(&s, &copy_nodes("")).await;
    let path = format!("/compute/instances/{a}/nodebalancers");
    let listed = |v4_of: &str| {
        format!(
            "SELECT COUNT(DISTINCT n.nodebalancer_id) FROM nodebalancer_nodes n JOIN ip_addresses a ON a.v4 = n.v4 \
             WHERE a.address = '{v4_of}'"
        )
    };
    assert_eq!(api.get(&path).await.ok()["results"], 1_501);
    pages_agree(&s, &path, 100).await;

    // A second node on the same address does not list a balancer twice; nodes that go, or move
    // to instance b's address, take their balancer out of a's list (and into b's).
    db_exec(&s, &copy_nodes("AND id % 3 = 0").replace("n.label", "n.label || '-2'")).await;
    db_exec(&s, "DELETE FROM nodebalancer_nodes WHERE nodebalancer_id % 7 = 3").await;
    let v4b = db_scalar(&s, &format!("SELECT v4 FROM ip_addresses WHERE address = '{pb}'")).await;
    db_exec(
        &s,
        &format!("UPDATE nodebalancer_nodes SET v4 = {v4b}, address = '{pb}:80' WHERE nodebalancer_id % 3 = 1"),
    )
    .await;
    api.delete(&format!("/nodebalancers/{seed}")).await.ok();
    let on_a = db_scalar(&s, &listed(&pa)).await;
    let on_b = db_scalar(&s, &listed(&pb)).await;
    assert!(on_a > 500 && on_b > 200, "{on_a} balancers on a, {on_b} on b");
    assert_eq!(api.get(&path).await.ok()["results"], on_a);
    pages_agree(&s, &path, 100).await;
    // The list starts and ends where the nodes say.
    let first = api.get(&format!("{path}?page_size=25")).await;
    let edge = |f: &str| listed(&pa).replace("COUNT(DISTINCT n.nodebalancer_id)", &format!("{f}(n.nodebalancer_id)"));
    assert_eq!(ids(first.ok())[0], db_scalar(&s, &edge("MIN")).await);
    let last = api.get(&format!("{path}?page={}&page_size=25", (on_a as u64).div_ceil(25))).await;
    assert_eq!(*ids(last.ok()).last().unwrap(), db_scalar(&s, &edge("MAX")).await);
    let path_b = format!("/compute/instances/{b}/nodebalancers");
    assert_eq!(api.get(&path_b).await.ok()["results"], on_b);
    pages_agree(&s, &path_b, 100).await;
    // Filters and orders read the same rows.
    let region = api.get_filtered(&path, r#"{"region": "us-east"}"#).await;
    assert_eq!(region.ok()["results"], on_a);
    let one = api.get_filtered(&path, r#"{"label": "b-2"}"#).await;
    assert_eq!(
        one.ok()["results"],
        db_scalar(
            &s,
            &format!("{} AND n.nodebalancer_id IN (SELECT id FROM nodebalancers WHERE label = 'b-2')", listed(&pa))
        )
        .await
    );
    let by_label = api.get_filtered(&format!("{path}?page=3&page_size=100"), r#"{"+order_by": "label"}"#).await;
    let labels: Vec<String> =
        by_label.ok()["data"].as_array().unwrap().iter().map(|b| b["label"].as_str().unwrap().to_string()).collect();
    assert!(labels.windows(2).all(|w| w[0] <= w[1]) && labels.len() == 100, "{labels:?}");
    // The orders by label and region read the rows' own copies of them (migration 50), which
    // follow a renamed balancer.
    let every = r#""id": {"+gte": 0}"#;
    order_pages_agree(&s, &path, "label", 100, every).await;
    order_pages_agree(&s, &path, "region", 250, every).await;
    let renamed = ids(api.get_filtered(&path, r#"{"label": "b-700"}"#).await.ok())[0];
    api.put(&format!("/nodebalancers/{renamed}"), json!({"label": "aaa-first"})).await.ok();
    let first = api.get_filtered(&format!("{path}?page_size=25"), r#"{"+order_by": "label"}"#).await;
    assert_eq!(first.ok()["data"][0]["id"], renamed);
    assert_eq!(first.body["data"][0]["label"], "aaa-first");
    let last = api.get_filtered(&path, r#"{"+order_by": "label", "+order": "desc"}"#).await;
    let pages = last.ok()["pages"].as_u64().unwrap();
    let last = api.get_filtered(&format!("{path}?page={pages}"), r#"{"+order_by": "label", "+order": "desc"}"#).await;
    assert_eq!(last.ok()["data"].as_array().unwrap().last().unwrap()["id"], renamed);
    order_pages_agree(&s, &path, "label", 100, every).await;
    assert_eq!(api.get_filtered(&path, r#"{"label": "aaa-first"}"#).await.ok()["results"], 1);
    assert_eq!(api.get_filtered(&path, r#"{"label": "b-700"}"#).await.ok()["results"], 0);
}

#[tokio::test]
async fn deep_vlan_pages_hold_the_rows_that_skipping_finds_as_interfaces_come_go_and_move() {
    // The 10,000 VLAN interfaces copied in below are all on one instance: on the netns driver its
    // runtime would build each. The list is read the same way on either driver; this test runs
    // in loopback mode only.
    if netns() {
        return;
    }
    let s = TestServer::start().await;
    let api = s.api();
    let vlan = |label: &str| json!([{"purpose": "public"}, {"purpose": "vlan", "label": label}]);
    let body = json!({"label": "seed", "booted": false, "interfaces": vlan("seed-vlan")});
    let seed = crate::instances::create_instance(&api, "us-east", body).await;
    let seed = seed["id"].as_i64().unwrap();
    let other = json!({"label": "other", "booted": false, "interfaces": vlan("seed-vlan")});
    let other = crate::instances::create_instance(&api, "us-east", other).await["id"].as_i64().unwrap();
    let first = api.get("/networking/vlans").await;
    let seed_created = first.ok()["data"][0]["created"].clone();
    assert_eq!(first.body["data"][0]["instances"], json!([seed, other]));
    // 10,000 more VLANs: copies of the seed's VLAN interface, with labels in an order unlike
    // their creation's, in two regions.
    let cols = "instance_id, account_id, region, position, purpose, is_primary, label, created";
    let exprs = "t.instance_id, t.account_id, CASE WHEN n.i % 4 = 0 THEN 'us-west' ELSE t.region END, 100 + n.i, \
                 t.purpose, t.is_primary, 'v-' || CAST((n.i * 7919) % 10007 AS TEXT), t.created";
    let template = format!("SELECT * FROM instance_interfaces WHERE instance_id = {seed} AND purpose = 'vlan'");
    if !s.database.starts_with("sqlite://") {
        // The planner's statistics of the VLANs as they were at one VLAN, kept while the table
        // grows to thousands (as between a bulk write and autovacuum's next look): every VLAN
        // must still be found by its key, never by an index that shares its first columns.
        db_exec(&s, "ANALYZE vlans; ALTER TABLE vlans SET (autovacuum_enabled = false);").await;
    }
    db_exec(&s, &copies(&s, "instance_interfaces", cols, exprs, &template, 10_000)).await;
    let distinct =
        "SELECT COUNT(*) FROM (SELECT DISTINCT region, label FROM instance_interfaces WHERE purpose = 'vlan') v";
    assert_eq!(api.get("/networking/vlans").await.ok()["results"], 10_001);
    let every = r#"{"label": {"+gte": ""}}"#;
    pages_agree_with(&s, "/networking/vlans", 500, every).await;
    fences_placed(&s, "vlans.label").await;
    fences_placed(&s, "vlans.region").await;
    order_pages_agree(&s, "/networking/vlans", "label", 500, r#""label": {"+gte": ""}"#).await;
    order_pages_agree(&s, "/networking/vlans", "region", 450, r#""label": {"+gte": ""}"#).await;

    // Interfaces come, go and move: a second interface on a third of the VLANs lists no VLAN
    // twice; a VLAN goes with its last interface; an interface that moves to another label or
    // region leaves its VLAN (which goes when it was the last) and joins or makes another.
    db_exec(
        &s,
        &format!(
            "INSERT INTO instance_interfaces ({cols}) SELECT {other}, account_id, region, position, purpose, \
             is_primary, label, created FROM instance_interfaces WHERE instance_id = {seed} AND position >= 100 AND position % 3 = 0"
        ),
    )
    .await;
    db_exec(&s, &format!("DELETE FROM instance_interfaces WHERE instance_id = {seed} AND position % 7 = 3")).await;
    db_exec(&s, "UPDATE instance_interfaces SET label = label || '-m' WHERE purpose = 'vlan' AND position % 11 = 2")
        .await;
    db_exec(&s, "UPDATE instance_interfaces SET region = 'us-west' WHERE purpose = 'vlan' AND position % 13 = 5").await;
    db_exec(&s, "UPDATE instance_interfaces SET purpose = 'public', label = NULL WHERE position % 17 = 6").await;
    let rows = db_scalar(&s, distinct).await;
    assert!(rows > 7_000, "{rows} VLANs");
    assert_eq!(api.get("/networking/vlans").await.ok()["results"], rows);
    pages_agree_with(&s, "/networking/vlans", 500, every).await;
    pages_agree_with(&s, "/networking/vlans", 333, every).await;
    order_pages_agree(&s, "/networking/vlans", "label", 500, r#""label": {"+gte": ""}"#).await;
    order_pages_agree(&s, "/networking/vlans", "region", 450, r#""label": {"+gte": ""}"#).await;
    // The oldest VLAN still comes first, made when its first interface was; a VLAN lists each
    // of its instances once.
    let first = api.get("/networking/vlans?page_size=25").await;
    assert_eq!(first.ok()["data"][0]["label"], "seed-vlan");
    assert_eq!(first.body["data"][0]["created"], seed_created);
    let shared = db_scalar(
        &s,
        &format!(
            "SELECT COUNT(*) FROM (SELECT DISTINCT region, label FROM instance_interfaces WHERE purpose = 'vlan' \
             AND instance_id = {other}) v"
        ),
    )
    .await;
    let both = api.get_filtered("/networking/vlans?page_size=500", r#"{"region": "us-east"}"#).await;
    let with_other = both.ok()["data"].as_array().unwrap().iter().filter(|v| {
        let ids = v["instances"].as_array().unwrap();
        ids.contains(&json!(other))
            && ids.len() == ids.iter().filter_map(Value::as_i64).collect::<std::collections::BTreeSet<_>>().len()
    });
    assert!(with_other.count() > 100 && shared > 100, "{shared} VLANs with the other instance");
    // Filters read the same rows as the interfaces say.
    let west = "SELECT COUNT(*) FROM (SELECT DISTINCT label FROM instance_interfaces WHERE purpose = 'vlan' \
                AND region = 'us-west') v";
    let listed = api.get_filtered("/networking/vlans", r#"{"region": "us-west"}"#).await;
    assert_eq!(listed.ok()["results"], db_scalar(&s, west).await);
    let one = api.get_filtered("/networking/vlans", r#"{"label": "seed-vlan"}"#).await;
    assert_eq!(one.ok()["results"], 1);
    // Deleting the instances takes every VLAN with them.
    for id in [seed, other] {
        api.delete(&format!("/compute/instances/{id}")).await.ok();
    }
    assert_eq!(api.get("/networking/vlans").await.ok()["results"], 0);
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM vlans").await, 0);
}

#[tokio::test]
async fn statements_that_write_thousands_of_rows_after_ones_that_wrote_one_keep_every_count() {
    // On PostgreSQL the triggers that keep counts, fences and VLANs run once per statement, and
    // PL/pgSQL plans each of their statements at its first run in a connection (usually over one
    // row) and keeps that plan. Below, each connection writes one row first, then thousands: a
    // plan that paired rows before and after an update by a join of the two transition tables
    // compared every row with every other (10^8 comparisons per statement at 10,000 rows).
    // statement_timeout bounds a statement that ran for minutes; the counts are what is checked.
    if netns() {
        return;
    }
    let s = TestServer::start().await;
    let api = s.api();
    let guard = if s.database.starts_with("sqlite://") { "" } else { "SET statement_timeout = '60s'; " };
    // Events: counts, blocks and fence counts of every order.
    api.post("/networking/firewalls", firewall_body("seed")).await.ok();
    let cols = "account_id, action, created, entity_type, entity_id, entity_label, entity_url, status, username";
    let exprs = "t.account_id, CASE n.i % 3 WHEN 0 THEN 'linode_boot' ELSE t.action END, \
                 substr(t.created, 1, 17) || CAST(10 + n.i % 50 AS TEXT), t.entity_type, (n.i * 7919) % 10007, \
                 t.entity_label, t.entity_url, t.status, t.username";
    let template = "SELECT * FROM events WHERE action = 'firewall_create'";
    db_exec(&s, &copies(&s, "events", cols, exprs, template, 10_000)).await;
    for field in ["action", "status"] {
        fences_placed(&s, &format!("events.{field}")).await;
    }
    db_exec(
        &s,
        &format!(
            "{guard}UPDATE events SET status = 'failed' WHERE id = (SELECT MIN(id) FROM events); \
             DELETE FROM events WHERE id = (SELECT MAX(id) FROM events); \
             UPDATE events SET status = CASE WHEN id % 3 = 0 THEN 'failed' ELSE 'finished' END, \
               action = CASE WHEN id % 5 = 0 THEN 'vpc_create' ELSE action END; \
             UPDATE events SET username = username; \
             DELETE FROM events WHERE id % 4 = 1;"
        ),
    )
    .await;
    let rows = db_scalar(&s, "SELECT COUNT(*) FROM events").await;
    assert!(rows > 7_000, "{rows} events");
    assert_eq!(api.get("/account/events").await.ok()["results"], rows);
    pages_agree(&s, "/account/events", 500).await;
    let every = r#""id": {"+gte": 0}"#;
    for field in ["action", "status"] {
        order_pages_agree(&s, "/account/events", field, 500, every).await;
    }
    // VLANs: rows made, counted and deleted with their interfaces.
    let vlan = json!([{"purpose": "public"}, {"purpose": "vlan", "label": "seed-vlan"}]);
    let body = json!({"label": "seed", "booted": false, "interfaces": vlan});
    let seed = crate::instances::create_instance(&api, "us-east", body).await["id"].as_i64().unwrap();
    let cols = "instance_id, account_id, region, position, purpose, is_primary, label, created";
    let exprs = "t.instance_id, t.account_id, t.region, 100 + n.i, t.purpose, t.is_primary, \
                 'v-' || CAST((n.i * 7919) % 10007 AS TEXT), t.created";
    let template = format!("SELECT * FROM instance_interfaces WHERE instance_id = {seed} AND purpose = 'vlan'");
    db_exec(&s, &copies(&s, "instance_interfaces", cols, exprs, &template, 10_000)).await;
    db_exec(
        &s,
        &format!(
            "{guard}UPDATE instance_interfaces SET label = 'one' WHERE instance_id = {seed} AND position = 101; \
             DELETE FROM instance_interfaces WHERE instance_id = {seed} AND position = 102; \
             UPDATE instance_interfaces SET label = label || '-m' WHERE purpose = 'vlan' AND position % 3 = 0; \
             UPDATE instance_interfaces SET region = 'us-west' WHERE purpose = 'vlan' AND position % 5 = 0; \
             DELETE FROM instance_interfaces WHERE purpose = 'vlan' AND position % 7 = 0;"
        ),
    )
    .await;
    let distinct =
        "SELECT COUNT(*) FROM (SELECT DISTINCT region, label FROM instance_interfaces WHERE purpose = 'vlan') v";
    let rows = db_scalar(&s, distinct).await;
    assert!(rows > 8_000, "{rows} VLANs");
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM vlans").await, rows);
    assert_eq!(api.get("/networking/vlans").await.ok()["results"], rows);
    pages_agree_with(&s, "/networking/vlans", 500, r#"{"label": {"+gte": ""}}"#).await;
    api.delete(&format!("/compute/instances/{seed}")).await.ok();
    assert_eq!(api.get("/networking/vlans").await.ok()["results"], 0);
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM vlans").await, 0);
}

#[tokio::test]
async fn deep_sign_in_pages_in_a_fields_order_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    let (user, account) = owner(&s).await;
    // 10,000 sign-ins of the user in the last hours, one in seven failed (not listed), times,
    // addresses (stored text, never dialled) and usernames in orders unlike their ids'.
    let sqlite = s.database.starts_with("sqlite://");
    let recent = if sqlite {
        "strftime('%Y-%m-%dT%H:%M:%S', 'now', '-' || CAST((n.i * 7919) % 5000 AS TEXT) || ' seconds')"
    } else {
        "to_char(now() - ((n.i * 7919) % 5000) * interval '1 second', 'YYYY-MM-DD\"T\"HH24:MI:SS')"
    };
    let cols = "account_id, user_id, username, ip, datetime, status, restricted";
    let exprs = format!(
        "{account}, {user}, 'u' || CAST((n.i * 13) % 997 AS TEXT), \
         '127.0.' || CAST((n.i * 31) % 256 AS TEXT) || '.' || CAST(n.i % 256 AS TEXT), {recent}, \
         CASE WHEN n.i % 7 = 0 THEN 'failed' ELSE 'successful' END, (n.i % 5 = 2)"
    );
    db_exec(&s, &copies(&s, "logins", cols, &exprs, "SELECT 1 AS one", 11_000)).await;
    for list in ["account_logins", "user_logins"] {
        for field in ["datetime", "ip", "username", "restricted"] {
            fences_placed(&s, &format!("{list}.{field}")).await;
        }
    }
    let every = r#""id": {"+gte": 0}"#;
    for path in ["/account/logins", "/profile/logins"] {
        order_pages_agree(&s, path, "datetime", 500, every).await;
        order_pages_agree(&s, path, "ip", 450, every).await;
        order_pages_agree(&s, path, "username", 500, every).await;
        order_pages_agree(&s, path, "id", 500, r#""username": {"+gte": ""}"#).await;
        order_pages_agree(&s, path, "restricted", 450, every).await;
    }
    restricted_sign_ins_agree(&s, account).await;
    // What no index serves is refused past the budget, naming the fields served.
    for refused in [r#"{"ip": {"+contains": "127.0"}}"#, r#"{"username": {"+contains": "u1"}}"#] {
        let r = api.get_filtered("/profile/logins", refused).await;
        assert_eq!(r.status, 400, "{refused}: {}", r.body);
        let reason = r.body["errors"][0]["reason"].as_str().unwrap();
        assert!(reason.contains("one of: id, datetime, ip, username, restricted"), "{reason}");
    }
    // Every listed sign-in succeeded: past the budget a condition on the status holds or fails
    // for all of them, and their order by it is the order of their ids, in its direction.
    let listed =
        db_scalar(&s, &format!("SELECT COUNT(*) FROM logins WHERE account_id = {account} AND status = 'successful'"))
            .await;
    let successful = api.get_filtered("/account/logins?page=3", r#"{"status": "successful"}"#).await;
    assert_eq!(successful.ok()["results"], listed);
    assert!(successful.body["data"].as_array().unwrap().iter().all(|l| l["status"] == "successful"));
    assert_eq!(api.get_filtered("/profile/logins", r#"{"status": "failed"}"#).await.ok()["results"], 0);
    let either = r#"{"+or": [{"status": "failed"}, {"username": "u13"}]}"#;
    let named = api.get_filtered("/account/logins", r#"{"username": "u13"}"#).await.ok().clone();
    assert_eq!(api.get_filtered("/account/logins", either).await.ok(), &named);
    for dir in ["asc", "desc"] {
        for page in [1, 4, 17] {
            let url = format!("/account/logins?page={page}&page_size=300");
            let by_status = api.get_filtered(&url, &format!(r#"{{"+order_by": "status", "+order": "{dir}"}}"#)).await;
            let by_id = api.get_filtered(&url, &format!(r#"{{"+order_by": "id", "+order": "{dir}"}}"#)).await;
            assert_eq!(ids(by_status.ok()), ids(by_id.ok()), "{url} {dir}");
            assert_eq!(by_status.body["results"], listed);
        }
    }
    // Sign-ins that go, that turn out failed, and that move to another time: the counts of the
    // ranges follow in the same statements.
    db_exec(&s, "DELETE FROM logins WHERE id % 9 = 4").await;
    db_exec(&s, "UPDATE logins SET status = 'failed' WHERE id % 11 = 5").await;
    db_exec(&s, "UPDATE logins SET username = 'a-first', ip = '127.9.9.9' WHERE id % 13 = 6").await;
    let listed =
        db_scalar(&s, &format!("SELECT COUNT(*) FROM logins WHERE user_id = {user} AND status = 'successful'")).await;
    assert_eq!(api.get("/profile/logins").await.ok()["results"], listed);
    for path in ["/account/logins", "/profile/logins"] {
        order_pages_agree(&s, path, "username", 400, every).await;
        order_pages_agree(&s, path, "ip", 500, every).await;
        order_pages_agree(&s, path, "restricted", 500, every).await;
    }
    restricted_sign_ins_agree(&s, account).await;
}

/// Past the budget, the sign-ins filtered by `restricted` (alone, with another field, in a
/// `+or`) are the database's listed sign-ins that match, newest first, page by page, with
/// their count.
async fn restricted_sign_ins_agree(s: &TestServer, account: i64) {
    let api = s.api();
    let listed = format!("account_id = {account} AND status = 'successful' AND user_id IS NOT NULL");
    let restricted = if s.database.starts_with("sqlite://") { "restricted = 1" } else { "restricted" };
    let cases = [
        (r#"{"restricted": true}"#, format!("{listed} AND {restricted}")),
        (r#"{"restricted": false}"#, format!("{listed} AND NOT {restricted}")),
        (r#"{"restricted": {"+neq": true}}"#, format!("{listed} AND NOT {restricted}")),
        (
            r#"{"username": {"+neq": "u13"}, "restricted": true}"#,
            format!("{listed} AND {restricted} AND username <> 'u13'"),
        ),
        (r#"{"restricted": true, "username": "u13"}"#, format!("{listed} AND {restricted} AND username = 'u13'")),
        (
            r#"{"+or": [{"restricted": true}, {"username": "u13"}]}"#,
            format!("{listed} AND ({restricted} OR username = 'u13')"),
        ),
    ];
    for (filter, cond) in cases {
        let want = db_texts(s, &format!("SELECT CAST(id AS TEXT) FROM logins WHERE {cond} ORDER BY id DESC")).await;
        // Sorted here: PostgreSQL's ORDER BY would take `id` for the text column of that name.
        let mut want: Vec<i64> = want.iter().map(|id| id.parse().unwrap()).collect();
        want.sort_unstable_by(|a, b| b.cmp(a));
        assert!(!want.is_empty(), "{filter}");
        for (page, size) in [(1, 100), (2, 100), (3, 400), (6, 500)] {
            let r = api.get_filtered(&format!("/account/logins?page={page}&page_size={size}"), filter).await;
            assert_eq!(r.ok()["results"], want.len(), "{filter}");
            let from = ((page - 1) * size).min(want.len());
            let to = (from + size).min(want.len());
            assert_eq!(ids(&r.body), want[from..to], "{filter} page {page} of {size}");
        }
    }
}

/// One user's sign-ins under one username, two under another. With the database's statistics
/// taken over all of them, either whole (without samples of values: SQLite then takes a name for
/// half the sign-ins) or sampled as the server's `PRAGMA optimize` does, the sign-ins filtered by
/// the rare name are counted through the list's own index on the username: never through an
/// index led by the user for the account's list (the account's condition on the user used to be
/// a range of every such index), nor through the account's for the user's.
#[tokio::test]
async fn sign_ins_by_a_rare_username_are_counted_through_the_lists_own_index() {
    let s = TestServer::start().await;
    let (user, account) = owner(&s).await;
    let sqlite = s.database.starts_with("sqlite://");
    let now =
        if sqlite { "strftime('%Y-%m-%dT%H:%M:%S', 'now')" } else { "to_char(now(), 'YYYY-MM-DD\"T\"HH24:MI:SS')" };
    let cols = "account_id, user_id, username, ip, datetime, status, restricted";
    let exprs = format!(
        "{account}, {user}, CASE WHEN n.i <= 2 THEN 'rare' ELSE 'admin' END, \
         '127.0.' || CAST(n.i / 256 AS TEXT) || '.' || CAST(n.i % 256 AS TEXT), {now}, 'successful', FALSE"
    );
    db_exec(&s, &copies(&s, "logins", cols, &exprs, "SELECT 1 AS one", 8_000)).await;
    for path in ["/account/logins", "/profile/logins"] {
        let r = s.api().get_filtered(path, r#"{"username": "rare"}"#).await;
        assert_eq!(r.ok()["results"], 2, "{path}");
    }
    // The lists' conditions are those their fences are kept by (checked against the indexes by
    // `every_fenced_order_reads_its_keys_from_one_index_alone`); the user's list names the
    // account as no index's term (`+account_id`), as the list writes it.
    let cond = |list: &str| format!("SELECT cond FROM order_fence_kinds WHERE kind = '{list}_logins.username'");
    let (of_account, of_user) = (db_texts(&s, &cond("account")).await, db_texts(&s, &cond("user")).await);
    let counts = [
        (format!("{} AND account_id = {account}", of_account[0]), "logins_ok_account_username"),
        (format!("{} AND +account_id = {account} AND user_id = {user}", of_user[0]), "logins_ok_user_username"),
    ];
    let regimes: &[&str] = if sqlite {
        &["ANALYZE; DELETE FROM sqlite_stat4", "PRAGMA analysis_limit = 1000; ANALYZE"]
    } else {
        &["ANALYZE logins"]
    };
    for regime in regimes {
        db_exec(&s, regime).await;
        for (scope, index) in &counts {
            let count = format!(
                "SELECT COUNT(*) FROM logins WHERE {scope} AND datetime || '' >= '2000-01-01' AND username = 'rare'"
            );
            let plan = db_plan(&s, &count).await;
            assert!(plan.contains(index), "{regime}: {count}: {plan}");
        }
    }
}

#[tokio::test]
async fn deep_oauth_client_pages_by_id_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let (_, account) = owner(&s).await;
    // Text ids in an order unlike the order the clients were made in (`seq`).
    let cols = "id, account_id, label, redirect_uri, public, status, secret_hash, created, seq";
    let exprs = format!(
        "'client-' || CAST((n.i * 7919) % 10007 AS TEXT), {account}, 'c' || CAST(n.i AS TEXT), \
         'https://app.example/cb', FALSE, 'active', 'not-a-hash', '2026-01-01T00:00:00', n.i"
    );
    db_exec(&s, &copies(&s, "oauth_clients", cols, &exprs, "SELECT 1 AS one", 10_000)).await;
    fences_placed(&s, "oauth_clients.id").await;
    let every = r#""label": {"+gte": ""}"#;
    order_pages_agree(&s, "/account/oauth-clients", "id", 500, every).await;
    db_exec(&s, "DELETE FROM oauth_clients WHERE seq % 8 = 3").await;
    s.api()
        .post("/account/oauth-clients", json!({"label": "late", "redirect_uri": "https://app.example/cb"}))
        .await
        .ok();
    order_pages_agree(&s, "/account/oauth-clients", "id", 450, every).await;
}

#[tokio::test]
async fn deep_vpc_address_pages_in_a_fields_order_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    // Three VPCs, each with a subnet and an instance on it.
    let mut vpcs = Vec::new();
    for n in 0..3 {
        let subnets = json!([{"label": "six", "ipv4": format!("10.{n}.0.0/24"), "ipv6": [{}]}]);
        let v = api
            .post("/vpcs", json!({"label": format!("deep-{n}"), "region": "us-east", "ipv6": [{}], "subnets": subnets}))
            .await;
        let subnet = v.ok()["subnets"][0]["id"].as_i64().unwrap();
        vpcs.push((v.body["id"].as_i64().unwrap(), subnet));
        let iface = json!({"purpose": "vpc", "subnet_id": subnet, "ipv6": {"is_public": false}});
        let body = json!({"region": "us-east", "type": "g6-nanode-1", "label": format!("vm-{n}"), "booted": false,
                          "interfaces": [iface]});
        api.post("/compute/instances", body).await.ok();
    }
    // 4,000 copies of each instance's interface, one in five without IPv6 (not in that list).
    copy_vpc_interfaces(&s, "purpose = 'vpc'", 4_000).await;
    for list in ["vpc_interfaces", "vpc_ipv6_interfaces"] {
        for field in ["instance_id", "vpc_id", "subnet_id"] {
            fences_placed(&s, &format!("{list}.{field}")).await;
        }
    }
    let every = r#""vpc_id": {"+gte": 0}"#;
    for path in ["/vpcs/ips", "/vpcs/ipv6s"] {
        for field in ["instance_id", "vpc_id", "subnet_id"] {
            order_pages_agree(&s, path, field, 500, every).await;
        }
    }
    // Interfaces that go and that lose their IPv6.
    db_exec(&s, "DELETE FROM instance_interfaces WHERE position % 9 = 4").await;
    db_exec(&s, "UPDATE instance_interfaces SET vpc_ipv6_range = NULL WHERE position % 7 = 3").await;
    let left = db_scalar(&s, "SELECT COUNT(*) FROM instance_interfaces WHERE vpc_ipv6_range IS NOT NULL").await;
    assert_eq!(api.get("/vpcs/ipv6s").await.ok()["results"], left);
    for path in ["/vpcs/ips", "/vpcs/ipv6s"] {
        order_pages_agree(&s, path, "instance_id", 450, every).await;
        order_pages_agree(&s, path, "subnet_id", 500, every).await;
    }

    // One VPC's addresses are a list of their own, kept per VPC (migration 54): its deep pages,
    // its orders and its count, as interfaces go, lose their IPv6 and move to another VPC. The
    // first VPC gets 9,000 more, enough for fences of its own.
    let ((first, _), (second, second_subnet)) = (vpcs[0], vpcs[1]);
    copy_vpc_interfaces_from(&s, &format!("vpc_id = {first} AND position < 1000"), 9_000, 10_000).await;
    for list in ["vpc_interfaces_of_vpc", "vpc_ipv6_interfaces_of_vpc"] {
        for field in ["instance_id", "subnet_id"] {
            fences_placed(&s, &format!("{list}.{field}")).await;
        }
    }
    db_exec(
        &s,
        &format!(
            "UPDATE instance_interfaces SET vpc_id = {second}, subnet_id = {second_subnet} \
             WHERE vpc_id = {first} AND position % 5 = 1"
        ),
    )
    .await;
    for (vpc, _) in &vpcs {
        let of = |cond: &str| {
            format!("SELECT COUNT(*) FROM instance_interfaces WHERE purpose = 'vpc' AND vpc_id = {vpc}{cond}")
        };
        let ips = format!("/vpcs/{vpc}/ips");
        let ipv6s = format!("/vpcs/{vpc}/ipv6s");
        assert_eq!(api.get(&ips).await.ok()["results"], db_scalar(&s, &of("")).await);
        assert_eq!(api.get(&ipv6s).await.ok()["results"], db_scalar(&s, &of(" AND vpc_ipv6_range IS NOT NULL")).await);
        for path in [&ips, &ipv6s] {
            pages_agree_with(&s, path, 500, r#"{"instance_id": {"+gte": 0}}"#).await;
            order_pages_agree(&s, path, "instance_id", 450, every).await;
            order_pages_agree(&s, path, "subnet_id", 500, every).await;
        }
    }
    // The VPC's own id as a filter is every row of the list; another VPC's is none.
    let page = format!("/vpcs/{first}/ips?page=3&page_size=500");
    let all = api.get(&page).await;
    let own = api.get_filtered(&page, &format!(r#"{{"vpc_id": {first}}}"#)).await;
    assert_eq!(own.ok(), all.ok());
    let other = api.get_filtered(&format!("/vpcs/{first}/ips"), &format!(r#"{{"vpc_id": {second}}}"#)).await;
    assert_eq!(other.ok()["results"], 0);
    // A filter on the VPC's subnet is counted through the per-VPC index.
    let moved = api.get_filtered(&format!("/vpcs/{second}/ips"), &format!(r#"{{"subnet_id": {second_subnet}}}"#)).await;
    let on_subnet =
        format!("SELECT COUNT(*) FROM instance_interfaces WHERE purpose = 'vpc' AND subnet_id = {second_subnet}");
    assert_eq!(moved.ok()["results"], db_scalar(&s, &on_subnet).await);
}

/// A timestamp that varies with the copy's number `n.i` (months 1-9, days 10-19), valid on both
/// engines.
const VARIED_TIME: &str = "'2026-0' || CAST(1 + n.i % 9 AS TEXT) || '-1' || CAST(n.i % 10 AS TEXT) || 'T00:00:00'";

/// More lists in more of their fields' orders (migration 64): an instance's disks and
/// configuration profiles, child accounts, users and OAuth clients, each past 5,000 records.
/// Every page of each order, both directions, located by its fences, is the page skipping finds,
/// before and after rows go and change; a filter on each disk field is served with its count.
#[tokio::test]
async fn deep_pages_of_disks_profiles_children_users_and_clients_in_their_fields_orders_hold_the_rows_that_skipping_finds()
 {
    let s = TestServer::start().await;
    let api = s.api();
    let (user, account) = owner(&s).await;
    let inst = crate::instances::create_instance(&api, "us-east", json!({})).await["id"].as_i64().unwrap();
    let one = |table: &str| format!("SELECT * FROM {table} WHERE instance_id = {inst} ORDER BY id LIMIT 1");

    // 5,200 disks of one instance: past the budget.
    let cols = "instance_id, label, size, filesystem, status, image, authorized_keys, created, updated";
    let exprs = format!(
        "t.instance_id, 'd' || CAST(n.i AS TEXT), 1 + n.i % 37, CASE n.i % 3 WHEN 0 THEN 'ext4' WHEN 1 THEN 'raw' \
         ELSE 'swap' END, CASE WHEN n.i % 4 = 0 THEN 'not ready' ELSE 'ready' END, t.image, t.authorized_keys, \
         {VARIED_TIME}, {}",
        VARIED_TIME.replace("n.i % 9", "n.i % 7")
    );
    db_exec(&s, &copies(&s, "instance_disks", cols, &exprs, &one("instance_disks"), 5_200)).await;
    // 5,200 profiles of it.
    let cols = "instance_id, label, kernel, comments, memory_limit, root_device, run_level, virt_mode, helpers, \
                devices, created, updated";
    let exprs = format!(
        "t.instance_id, 'p' || CAST(n.i AS TEXT), CASE n.i % 3 WHEN 0 THEN 'linode/grub2' WHEN 1 THEN \
         'linode/direct-disk' ELSE 'linode/latest-64bit' END, t.comments, t.memory_limit, t.root_device, t.run_level, \
         t.virt_mode, t.helpers, t.devices, {VARIED_TIME}, {}",
        VARIED_TIME.replace("n.i % 9", "n.i % 5")
    );
    db_exec(&s, &copies(&s, "instance_configs", cols, &exprs, &one("instance_configs"), 5_200)).await;
    // 5,200 child accounts, users and OAuth clients of the account: every list past the budget,
    // so that each order below is served by its index and fences or refused.
    let exprs = format!(
        "'00000000-0000-4000-8000-' || CAST(100000000000 + n.i AS TEXT), {account}, 'Co ' || CAST(n.i AS TEXT), \
         'c' || CAST(n.i AS TEXT) || '@example.com', 'first' || CAST(n.i % 97 AS TEXT), \
         'last' || CAST(n.i % 89 AS TEXT), {VARIED_TIME}"
    );
    let cols = "euuid, parent_id, company, email, first_name, last_name, created";
    db_exec(&s, &copies(&s, "accounts", cols, &exprs, "SELECT 1 AS one", 5_200)).await;
    let exprs = format!(
        "{account}, 'u-' || CAST(n.i AS TEXT), 'u' || CAST(n.i AS TEXT) || '@example.com', \
         CASE n.i % 3 WHEN 0 THEN 'default' WHEN 1 THEN 'proxy' ELSE 'child' END, (n.i % 3 = 1), {VARIED_TIME}"
    );
    let cols = "account_id, username, email, user_type, restricted, created";
    db_exec(&s, &copies(&s, "users", cols, &exprs, "SELECT 1 AS one", 5_200)).await;
    let exprs = format!(
        "'client-' || CAST(n.i AS TEXT), {account}, 'c' || CAST(n.i AS TEXT), \
         'https://app.example/cb/' || CAST(n.i % 41 AS TEXT), (n.i % 4 = 1), \
         CASE n.i % 3 WHEN 0 THEN 'active' WHEN 1 THEN 'disabled' ELSE 'suspended' END, 'not-a-hash', \
         '2026-01-01T00:00:00', n.i"
    );
    let cols = "id, account_id, label, redirect_uri, public, status, secret_hash, created, seq";
    db_exec(&s, &copies(&s, "oauth_clients", cols, &exprs, "SELECT 1 AS one", 5_200)).await;

    let disks = format!("/linode/instances/{inst}/disks");
    let configs = format!("/linode/instances/{inst}/configs");
    // Each list, its fence kind, a filter every row matches, and the fields of migrations 64 and
    // 65 (the booleans).
    let lists: [(&str, &str, &str, &[&str]); 5] = [
        (&disks, "instance_disks", r#""id": {"+gte": 0}"#, &["size", "filesystem", "status", "created", "updated"]),
        (&configs, "instance_configs", r#""id": {"+gte": 0}"#, &["kernel", "created", "updated"]),
        ("/account/child-accounts", "child_accounts", r#""company": {"+gte": ""}"#, &["first_name", "last_name"]),
        ("/account/users", "users", r#""username": {"+gte": ""}"#, &["user_type", "restricted"]),
        ("/account/oauth-clients", "oauth_clients", r#""label": {"+gte": ""}"#, &["redirect_uri", "status", "public"]),
    ];
    for (_, kind, _, fields) in &lists {
        for field in *fields {
            fences_placed(&s, &format!("{kind}.{field}")).await;
        }
    }
    for (path, _, every, fields) in &lists {
        for field in *fields {
            order_pages_agree(&s, path, field, 500, every).await;
        }
    }

    // Past the budget every new order and a filter on each field are served, with their counts.
    let of = |cond: &str| format!("SELECT COUNT(*) FROM instance_disks WHERE instance_id = {inst} AND {cond}");
    for (filter, cond) in [
        (r#"{"size": 5}"#, "size = 5"),
        (r#"{"filesystem": "raw"}"#, "filesystem = 'raw'"),
        (r#"{"status": "not ready"}"#, "status = 'not ready'"),
        (r#"{"created": {"+lt": "2026-02-01T00:00:00"}}"#, "created < '2026-02-01T00:00:00'"),
        (r#"{"filesystem": {"+neq": "raw"}}"#, "filesystem <> 'raw'"),
        (r#"{"size": {"+neq": 5}, "status": "not ready"}"#, "size <> 5 AND status = 'not ready'"),
    ] {
        let page = api.get_filtered(&format!("{disks}?page=2&page_size=100"), filter).await;
        assert_eq!(page.ok()["results"], db_scalar(&s, &of(cond)).await, "{filter}");
    }
    for (path, filter, cond) in [
        ("/account/users", r#"{"restricted": true}"#, format!("account_id = {account} AND restricted")),
        ("/account/users", r#"{"restricted": {"+neq": true}}"#, format!("account_id = {account} AND NOT restricted")),
        ("/account/oauth-clients", r#"{"public": false}"#, format!("account_id = {account} AND NOT public")),
    ] {
        let table = if path.contains("users") { "users" } else { "oauth_clients" };
        let page = api.get_filtered(&format!("{path}?page=3&page_size=100"), filter).await;
        assert_eq!(page.ok()["results"], db_scalar(&s, &format!("SELECT COUNT(*) FROM {table} WHERE {cond}")).await);
    }
    let r = api.get_filtered(&disks, r#"{"filesystem": {"+contains": "ext"}}"#).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let reason = r.body["errors"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("one of: id, label, size, filesystem, status, created, updated"), "{reason}");

    // Rows go, and the fields change.
    db_exec(&s, &format!("DELETE FROM instance_disks WHERE instance_id = {inst} AND id % 9 = 4")).await;
    db_exec(&s, "UPDATE instance_disks SET size = size + 100, status = 'ready' WHERE id % 7 = 3").await;
    db_exec(
        &s,
        "UPDATE instance_configs SET kernel = 'linode/grub-legacy', updated = '2027-01-01T00:00:00' WHERE id % 5 = 2",
    )
    .await;
    db_exec(&s, &format!("UPDATE accounts SET last_name = 'moved' WHERE parent_id = {account} AND id % 6 = 1")).await;
    db_exec(&s, &format!("DELETE FROM users WHERE account_id = {account} AND id % 8 = 3 AND id <> {user}")).await;
    db_exec(&s, "UPDATE oauth_clients SET status = 'active' WHERE seq % 4 = 1").await;
    db_exec(&s, "UPDATE oauth_clients SET public = (seq % 3 = 0) WHERE seq % 5 = 2").await;
    let restrict = format!("UPDATE users SET restricted = (id % 2 = 0) WHERE account_id = {account} AND id % 7 = 2");
    db_exec(&s, &format!("{restrict} AND id <> {user}")).await;
    for (path, field, every) in [
        (disks.as_str(), "size", r#""id": {"+gte": 0}"#),
        (disks.as_str(), "status", r#""id": {"+gte": 0}"#),
        (configs.as_str(), "kernel", r#""id": {"+gte": 0}"#),
        (configs.as_str(), "updated", r#""id": {"+gte": 0}"#),
        ("/account/child-accounts", "last_name", r#""company": {"+gte": ""}"#),
        ("/account/users", "user_type", r#""username": {"+gte": ""}"#),
        ("/account/users", "restricted", r#""username": {"+gte": ""}"#),
        ("/account/oauth-clients", "status", r#""label": {"+gte": ""}"#),
        ("/account/oauth-clients", "public", r#""label": {"+gte": ""}"#),
    ] {
        order_pages_agree(&s, path, field, 450, every).await;
    }
}

/// `n` copies of the instance `template` as rows of its account (never run, without addresses of
/// their own), labelled `copy-<n>`.
async fn copy_instances(s: &TestServer, template: i64, n: i64) {
    let cols = "account_id, label, region, type, image, status, target_status, op_seq, tags, grp, alerts, \
                watchdog_enabled, backups_enabled, has_user_data, host_uuid, extra_ipv4_allowed, live_migration, \
                interface_generation, network_helper, created, updated";
    let exprs = "t.account_id, 'copy-' || CAST(n.i AS TEXT), t.region, t.type, t.image, t.status, t.target_status, \
                 t.op_seq, t.tags, t.grp, t.alerts, t.watchdog_enabled, t.backups_enabled, t.has_user_data, \
                 t.host_uuid, t.extra_ipv4_allowed, t.live_migration, t.interface_generation, t.network_helper, \
                 t.created, t.updated";
    let template = format!("SELECT * FROM instances WHERE id = {}", template);
    db_exec(s, &copies(s, "instances", cols, exprs, &template, n)).await;
}

/// The last plain fields served past the budget (migration 79): a VPC's description, a subnet's
/// IPv4 range and change, a personal token's expiry (NULL for one that never expires, first in
/// its ascending order) and a firewall device's creation and change. With each list past 5,000
/// records, every page of each order, both directions, located by its fences, is the page
/// skipping finds, before and after rows go and change; a filter on each field is served with
/// its count.
#[tokio::test]
async fn deep_pages_of_vpcs_subnets_tokens_and_devices_in_the_fields_of_migration_79_hold_the_rows_that_skipping_finds()
{
    let s = TestServer::start().await;
    let api = s.api();
    let (user, account) = owner(&s).await;
    let body = json!({"label": "seed", "region": "us-east", "subnets": [{"label": "s0", "ipv4": "10.0.0.0/24"}]});
    let vpc = api.post("/vpcs", body).await.ok()["id"].as_i64().unwrap();
    // 5,200 more VPCs, with descriptions in an order unlike their ids'.
    let cols = "account_id, label, description, region, created, updated";
    let exprs = format!(
        "t.account_id, 'v' || CAST(n.i AS TEXT), 'd-' || CAST((n.i * 7919) % 211 AS TEXT), t.region, {VARIED_TIME}, \
         t.updated"
    );
    db_exec(&s, &copies(&s, "vpcs", cols, &exprs, &format!("SELECT * FROM vpcs WHERE id = {vpc}"), 5_200)).await;
    // 5,200 subnets of the seed VPC, with ranges and changes in orders unlike their ids'.
    let cols = "vpc_id, account_id, label, ipv4, first_v4, last_v4, created, updated";
    let exprs = format!(
        "t.vpc_id, t.account_id, 's' || CAST(n.i AS TEXT), '10.' || CAST((n.i * 37) % 251 AS TEXT) || '.' || \
         CAST(n.i % 256 AS TEXT) || '.0/24', t.first_v4, t.last_v4, t.created, {}",
        VARIED_TIME.replace("n.i % 9", "n.i % 7")
    );
    let template = format!("SELECT * FROM vpc_subnets WHERE vpc_id = {vpc}");
    db_exec(&s, &copies(&s, "vpc_subnets", cols, &exprs, &template, 5_200)).await;
    // 5,800 personal tokens of the owner, one in four never expiring, with other kinds among them.
    let cols = "user_id, label, scopes, secret_hash, kind, created, expiry";
    let exprs = format!(
        "{user}, 't' || CAST(n.i AS TEXT), '*', 'h-' || CAST(n.i AS TEXT), \
         CASE WHEN n.i % 11 = 0 THEN 'oauth' ELSE 'pat' END, '2026-01-01T00:00:00', \
         CASE WHEN n.i % 4 = 0 THEN NULL ELSE {} END",
        VARIED_TIME.replace("2026-0", "2027-0")
    );
    db_exec(&s, &copies(&s, "tokens", cols, &exprs, "SELECT 1 AS one", 5_800)).await;
    // One firewall on 5,200 instances (rows, never run), each device made at its own time.
    let first = crate::instances::create_instance(&api, "us-east", json!({"label": "first"})).await;
    copy_instances(&s, first["id"].as_i64().unwrap(), 5_200).await;
    let fw = api.post("/networking/firewalls", firewall_body("devices")).await.ok()["id"].as_i64().unwrap();
    let when = |n: &str, days: &str| {
        format!("'2026-0' || CAST(1 + {n} % {days} AS TEXT) || '-1' || CAST({n} % 10 AS TEXT) || 'T00:00:00'")
    };
    db_exec(
        &s,
        &format!(
            "INSERT INTO firewall_devices (firewall_id, account_id, instance_id, active, created, updated) \
             SELECT {fw}, i.account_id, i.id, (1 = 1), {}, {} FROM instances i WHERE i.label LIKE 'copy-%'",
            when("((i.id * 7919) % 1009)", "9"),
            when("((i.id * 31) % 997)", "5")
        ),
    )
    .await;

    let subnets = format!("/vpcs/{vpc}/subnets");
    let devices = format!("/networking/firewalls/{fw}/devices");
    let lists: [(&str, &str, &[&str]); 4] = [
        ("/vpcs", "vpcs", &["description"]),
        (&subnets, "vpc_subnets", &["ipv4", "updated"]),
        ("/profile/tokens", "personal_tokens", &["expiry"]),
        (&devices, "firewall_devices", &["created", "updated"]),
    ];
    for (_, kind, fields) in &lists {
        for field in *fields {
            fences_placed(&s, &format!("{kind}.{field}")).await;
        }
    }
    for (path, _, fields) in &lists {
        for field in *fields {
            order_pages_agree(&s, path, field, 500, r#""id": {"+gte": 0}"#).await;
        }
    }
    // A token that never expires comes first in the ascending order, last in the descending.
    let by_expiry = |dir: &str| format!(r#"{{"+order_by": "expiry", "+order": "{dir}"}}"#);
    let asc = api.get_filtered("/profile/tokens?page_size=25", &by_expiry("asc")).await;
    assert_eq!(asc.ok()["data"][0]["expiry"], Value::Null);
    let desc = api.get_filtered("/profile/tokens?page_size=25", &by_expiry("desc")).await;
    assert!(desc.ok()["data"][0]["expiry"].is_string(), "{}", desc.body["data"][0]);

    // Past the budget a filter on each field is served, with its count.
    let pat = format!("user_id = {user} AND kind = 'pat'");
    let filters: [(&str, &str, String); 10] = [
        ("/vpcs", r#"{"description": "d-42"}"#, format!("vpcs WHERE account_id = {account} AND description = 'd-42'")),
        (
            "/vpcs",
            r#"{"description": {"+gte": "d-9"}}"#,
            format!("vpcs WHERE account_id = {account} AND description >= 'd-9'"),
        ),
        (
            &subnets,
            r#"{"ipv4": "10.37.1.0/24"}"#,
            format!("vpc_subnets WHERE vpc_id = {vpc} AND ipv4 = '10.37.1.0/24'"),
        ),
        (
            &subnets,
            r#"{"updated": {"+lt": "2026-03-01T00:00:00"}}"#,
            format!("vpc_subnets WHERE vpc_id = {vpc} AND updated < '2026-03-01T00:00:00'"),
        ),
        (
            "/profile/tokens",
            r#"{"expiry": "2027-03-12T00:00:00"}"#,
            format!("tokens WHERE {pat} AND expiry = '2027-03-12T00:00:00'"),
        ),
        (
            "/profile/tokens",
            r#"{"expiry": {"+gte": "2027-05-01T00:00:00"}}"#,
            format!("tokens WHERE {pat} AND expiry >= '2027-05-01T00:00:00'"),
        ),
        (
            "/profile/tokens",
            r#"{"expiry": {"+neq": "2027-03-12T00:00:00"}}"#,
            format!("tokens WHERE {pat} AND expiry <> '2027-03-12T00:00:00'"),
        ),
        (
            &devices,
            r#"{"created": "2026-04-13T00:00:00"}"#,
            format!("firewall_devices WHERE firewall_id = {fw} AND created = '2026-04-13T00:00:00'"),
        ),
        (
            &devices,
            r#"{"updated": {"+gt": "2026-04-01T00:00:00"}}"#,
            format!("firewall_devices WHERE firewall_id = {fw} AND updated > '2026-04-01T00:00:00'"),
        ),
        (
            &devices,
            r#"{"created": {"+lt": "2026-02-01T00:00:00"}, "+order_by": "updated"}"#,
            format!("firewall_devices WHERE firewall_id = {fw} AND created < '2026-02-01T00:00:00'"),
        ),
    ];
    for (path, filter, rows) in &filters {
        let want = db_scalar(&s, &format!("SELECT COUNT(*) FROM {rows}")).await;
        assert!(want > 0, "{path} {filter}: the fill matches none");
        let page = api.get_filtered(&format!("{path}?page=2&page_size=25"), filter).await;
        assert_eq!(page.status, 200, "{path} {filter}: {}", page.body);
        assert_eq!(page.body["results"], want, "{path} {filter}");
    }
    let r = api.get_filtered("/profile/tokens", r#"{"label": {"+contains": "t4"}}"#).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let reason = r.body["errors"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("one of: id, label, created, expiry"), "{reason}");

    // Rows go, and the fields change: tokens gain and lose their expiry.
    db_exec(&s, &format!("DELETE FROM vpcs WHERE account_id = {account} AND label LIKE 'v%' AND id % 9 = 4")).await;
    db_exec(&s, "UPDATE vpcs SET description = 'moved ' || description WHERE id % 7 = 3").await;
    db_exec(&s, &format!("DELETE FROM vpc_subnets WHERE vpc_id = {vpc} AND id % 8 = 5")).await;
    db_exec(&s, "UPDATE vpc_subnets SET ipv4 = '9.0.0.0/24', updated = '2027-01-01T00:00:00' WHERE id % 6 = 1").await;
    db_exec(&s, &format!("UPDATE tokens SET expiry = NULL WHERE user_id = {user} AND id % 5 = 2")).await;
    db_exec(
        &s,
        &format!(
            "UPDATE tokens SET expiry = '2028-01-01T00:00:00' WHERE user_id = {user} AND expiry IS NULL AND id % 3 = 0"
        ),
    )
    .await;
    db_exec(&s, &format!("DELETE FROM tokens WHERE user_id = {user} AND id % 13 = 6")).await;
    db_exec(&s, &format!("DELETE FROM firewall_devices WHERE firewall_id = {fw} AND id % 10 = 7")).await;
    db_exec(
        &s,
        &format!("UPDATE firewall_devices SET updated = '2026-01-01T00:00:00' WHERE firewall_id = {fw} AND id % 4 = 1"),
    )
    .await;
    for (path, field) in [
        ("/vpcs", "description"),
        (subnets.as_str(), "ipv4"),
        (subnets.as_str(), "updated"),
        ("/profile/tokens", "expiry"),
        (devices.as_str(), "updated"),
    ] {
        order_pages_agree(&s, path, field, 450, r#""id": {"+gte": 0}"#).await;
    }
}

/// The firewalls of an instance, of its Linode interface and of a balancer in their label,
/// creation and change orders past the budget (migration 80): every page of each order, both
/// directions, located by its fences, is the page the account's list finds through its own
/// index, before and after firewalls are renamed and changed (through the API and by SQL),
/// devices come and go, and firewalls are deleted.
#[tokio::test]
async fn deep_pages_of_a_services_firewalls_in_their_fields_orders_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    let seed = api.post("/networking/firewalls", firewall_body("seed")).await.ok()["id"].as_i64().unwrap();
    let body = json!({"label": "fw-host", "booted": false, "interface_generation": "linode",
                      "interfaces": [{"public": {}, "firewall_id": seed, "default_route": {"ipv4": true}}]});
    let inst = crate::instances::create_instance(&api, "us-east", body).await;
    let iid = inst["id"].as_i64().unwrap();
    let interfaces = api.get(&format!("/compute/instances/{iid}/interfaces")).await.ok()["interfaces"].clone();
    let interface = interfaces[0]["id"].as_i64().unwrap();
    let nb =
        api.post("/nodebalancers", json!({"region": "us-east", "label": "fw-lb"})).await.ok()["id"].as_i64().unwrap();
    // 5,200 more firewalls, with labels, creation and change times in orders unlike their ids'.
    let cols = "account_id, label, status, rules, tags, created, updated";
    let exprs = format!(
        "t.account_id, 'fw-' || CAST((n.i * 7919) % 10007 AS TEXT), 'disabled', t.rules, t.tags, {VARIED_TIME}, {}",
        VARIED_TIME.replace("n.i % 9", "(n.i * 31) % 7")
    );
    let template = format!("SELECT * FROM firewalls WHERE id = {seed}");
    db_exec(&s, &copies(&s, "firewalls", cols, &exprs, &template, 5_200)).await;
    // All of them on the instance, and four in five on the balancer (disabled: a service has one
    // active firewall).
    for (column, entity, every) in [("instance_id", iid, 1), ("nodebalancer_id", nb, 5)] {
        let sql = format!(
            "INSERT INTO firewall_devices (firewall_id, account_id, {column}, active, created, updated) \
             SELECT f.id, f.account_id, {entity}, (1 = 0), f.created, f.updated FROM firewalls f \
             WHERE f.label LIKE 'fw-%' AND ({every} = 1 OR f.id % {every} <> 0)"
        );
        db_exec(&s, &sql).await;
    }
    let fields = ["label", "created", "updated"];
    for kind in ["instance_firewalls", "nodebalancer_firewalls"] {
        for field in fields {
            fences_placed(&s, &format!("{kind}.{field}")).await;
        }
    }
    let lists = [
        format!("/compute/instances/{iid}/firewalls"),
        format!("/compute/instances/{iid}/interfaces/{interface}/firewalls"),
        format!("/nodebalancers/{nb}/firewalls"),
    ];
    let on_balancer =
        db_scalar(&s, &format!("SELECT COUNT(*) FROM firewall_devices WHERE nodebalancer_id = {nb}")).await;
    let on_instance = db_scalar(&s, &format!("SELECT COUNT(*) FROM firewall_devices WHERE instance_id = {iid}")).await;
    assert!(on_instance > 5_000, "{on_instance} firewalls on the instance");
    assert_eq!(api.get(&lists[0]).await.ok()["results"], on_instance);
    assert_eq!(api.get(&lists[2]).await.ok()["results"], on_balancer);
    // Each order is the firewalls' own (their fields, not the devices' copies) through every
    // page, and every located page is the page skipping finds.
    let services = [format!("instance_id = {iid}"), format!("instance_id = {iid}"), format!("nodebalancer_id = {nb}")];
    let all_agree = || async {
        for (path, service) in lists.iter().zip(&services) {
            for field in fields {
                for dir in ["asc", "desc"] {
                    let sql = format!(
                        "SELECT CAST(f.id AS TEXT) FROM firewall_devices d JOIN firewalls f ON f.id = d.firewall_id \
                         WHERE d.{service} ORDER BY f.{field} {dir}, f.id {dir}"
                    );
                    let want = db_texts(&s, &sql).await;
                    let order = format!(r#"{{"+order_by": "{field}", "+order": "{dir}"}}"#);
                    let mut got = Vec::new();
                    for page in 1..=want.len().div_ceil(500) {
                        let url = format!("{path}?page={page}&page_size=500");
                        got.extend(ids(api.get_filtered(&url, &order).await.ok()).iter().map(i64::to_string));
                    }
                    let at = got.iter().zip(&want).position(|(a, b)| a != b);
                    assert!(
                        got == want,
                        "{path} {order}: not the firewalls' order ({} / {} rows, first apart at {at:?}: {:?})",
                        got.len(),
                        want.len(),
                        at.map(|i| (
                            &got[i.saturating_sub(2)..(i + 3).min(got.len())],
                            &want[i.saturating_sub(2)..(i + 3).min(want.len())]
                        ))
                    );
                }
                order_pages_agree(&s, path, field, 500, r#""id": {"+gte": 0}"#).await;
            }
        }
    };
    all_agree().await;
    // Past the budget a filter on each field is served from the service's devices, with its count.
    let one = db_texts(&s, &format!("SELECT label FROM firewalls WHERE id = {}", seed + 4_321)).await;
    let filters = [
        (0, format!(r#"{{"label": "{}"}}"#, one[0]), format!("instance_id = {iid} AND f.label = '{}'", one[0])),
        (
            2,
            r#"{"created": {"+gte": "2026-05-01T00:00:00"}}"#.to_string(),
            format!("nodebalancer_id = {nb} AND f.created >= '2026-05-01T00:00:00'"),
        ),
        (
            0,
            r#"{"updated": {"+lt": "2026-03-01T00:00:00"}, "+order_by": "label"}"#.to_string(),
            format!("instance_id = {iid} AND f.updated < '2026-03-01T00:00:00'"),
        ),
        (1, r#"{"label": {"+neq": "seed"}}"#.to_string(), format!("instance_id = {iid} AND f.label <> 'seed'")),
    ];
    for (list, filter, rows) in &filters {
        let sql =
            format!("SELECT COUNT(*) FROM firewall_devices d JOIN firewalls f ON f.id = d.firewall_id WHERE d.{rows}");
        let want = db_scalar(&s, &sql).await;
        assert!(want > 0, "{filter}: the fill matches none");
        let page = api.get_filtered(&format!("{}?page=2&page_size=25", lists[*list]), filter).await;
        assert_eq!(page.status, 200, "{} {filter}: {}", lists[*list], page.body);
        assert_eq!(page.body["results"], want, "{} {filter}", lists[*list]);
    }
    // The hosted names read the same list.
    let by_label = r#"{"+order_by": "label", "+order": "desc"}"#;
    let hosted = api.get_filtered(&format!("/linode/instances/{iid}/firewalls?page=7&page_size=100"), by_label).await;
    let spec = api.get_filtered(&format!("{}?page=7&page_size=100", lists[0]), by_label).await;
    assert_eq!(keys(hosted.ok()), keys(spec.ok()));

    // Firewalls renamed and changed through the API move in their orders.
    let deep = api.get_filtered(&format!("{}?page=9&page_size=100", lists[0]), by_label).await;
    let moved: Vec<i64> =
        deep.ok()["data"].as_array().unwrap().iter().take(3).map(|f| f["id"].as_i64().unwrap()).collect();
    for (k, id) in moved.iter().enumerate() {
        api.put(&format!("/networking/firewalls/{id}"), json!({"label": format!("aa-renamed-{k}")})).await.ok();
    }
    let rules = json!({"inbound": [], "outbound": [], "inbound_policy": "ACCEPT", "outbound_policy": "ACCEPT"});
    api.put(&format!("/networking/firewalls/{}/rules", moved[0]), rules).await.ok();
    let first = api.get_filtered(&format!("{}?page_size=25", lists[0]), r#"{"+order_by": "label"}"#).await;
    let firsts: Vec<i64> = first.ok()["data"].as_array().unwrap().iter().map(|f| f["id"].as_i64().unwrap()).collect();
    assert_eq!(firsts[..3], moved[..], "renamed firewalls lead the label order");
    let newest =
        api.get_filtered(&format!("{}?page_size=25", lists[0]), r#"{"+order_by": "updated", "+order": "desc"}"#).await;
    let changed = api.get(&format!("/networking/firewalls/{}", moved[0])).await.ok()["updated"].clone();
    assert_eq!(newest.ok()["data"][0]["updated"], changed, "the last change leads the change order");
    // New firewalls assigned through the API, and more changes by SQL: renames, changes, devices
    // that go, firewalls deleted with their devices.
    for k in 0..3 {
        let mut body = firewall_body(&format!("zz-new-{k}"));
        body["tags"] = json!(["blue"]);
        let made = api.post("/networking/firewalls", body).await.ok()["id"].as_i64().unwrap();
        api.put(&format!("/networking/firewalls/{made}"), json!({"status": "disabled"})).await.ok();
        for (kind, entity) in [("instance", iid), ("nodebalancer", nb)] {
            let device = json!({"type": kind, "id": entity});
            api.post(&format!("/networking/firewalls/{made}/devices"), device).await.ok();
        }
    }
    // Filtered by tags, a service's list is the account's firewalls that have a device on it.
    for (path, dir) in [(&lists[0], "asc"), (&lists[2], "desc")] {
        let blue = format!(r#"{{"tags": "blue", "+order_by": "label", "+order": "{dir}"}}"#);
        let page = api.get_filtered(path, &blue).await;
        assert_eq!(page.ok()["results"], 3, "{path} {blue}");
        let first = if dir == "asc" { "zz-new-0" } else { "zz-new-2" };
        assert_eq!(page.body["data"][0]["label"], first, "{path} {blue}");
    }
    db_exec(&s, "UPDATE firewalls SET label = 'mid-' || label WHERE label LIKE 'fw-%' AND id % 9 = 2").await;
    db_exec(&s, "UPDATE firewalls SET updated = '2027-02-02T00:00:00' WHERE label LIKE 'fw-%' AND id % 6 = 1").await;
    db_exec(&s, &format!("DELETE FROM firewall_devices WHERE instance_id = {iid} AND firewall_id % 10 = 7")).await;
    let gone = "SELECT id FROM firewalls WHERE id % 13 = 6 AND (label LIKE 'fw-%' OR label LIKE 'mid-fw-%')";
    db_exec(&s, &format!("DELETE FROM firewall_devices WHERE firewall_id IN ({gone})")).await;
    db_exec(&s, &format!("DELETE FROM firewalls WHERE id IN ({gone})")).await;
    let left = db_scalar(&s, &format!("SELECT COUNT(*) FROM firewall_devices WHERE instance_id = {iid}")).await;
    assert_eq!(api.get(&lists[0]).await.ok()["results"], left);
    all_agree().await;
}

/// The four VPC address lists in the orders of region and profile (migration 63): deep pages
/// located by their fences are the pages skipping finds, in both directions, as interfaces go,
/// lose their profile (a Linode interface has none: ordered as 0) and move to another VPC.
#[tokio::test]
async fn deep_vpc_address_pages_by_region_and_profile_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    // A VPC in each of three regions, each with an instance on its subnet.
    let mut vpcs = Vec::new();
    for (n, region) in ["us-west", "eu-west", "us-east"].into_iter().enumerate() {
        let subnets = json!([{"label": "six", "ipv4": format!("10.{n}.0.0/24"), "ipv6": [{}]}]);
        let v =
            api.post("/vpcs", json!({"label": format!("at-{n}"), "region": region, "ipv6": [{}], "subnets": subnets}));
        let v = v.await.ok().clone();
        let subnet = v["subnets"][0]["id"].as_i64().unwrap();
        let iface = json!({"purpose": "vpc", "subnet_id": subnet, "ipv6": {"is_public": false}});
        let body = json!({"region": region, "type": "g6-nanode-1", "label": format!("vm-{n}"), "booted": false,
                          "interfaces": [iface]});
        api.post("/compute/instances", body).await.ok();
        vpcs.push((v["id"].as_i64().unwrap(), subnet));
    }
    // 1,500 copies of each interface (one in five without IPv6), one in eleven without a
    // profile.
    copy_vpc_interfaces(&s, "purpose = 'vpc'", 1_500).await;
    db_exec(&s, "UPDATE instance_interfaces SET config_id = NULL WHERE position % 11 = 5").await;
    let lists = |vpc: i64| {
        ["/vpcs/ips".to_string(), "/vpcs/ipv6s".to_string(), format!("/vpcs/{vpc}/ips"), format!("/vpcs/{vpc}/ipv6s")]
    };
    let kinds = ["vpc_interfaces", "vpc_ipv6_interfaces", "vpc_interfaces_of_vpc", "vpc_ipv6_interfaces_of_vpc"];
    for kind in kinds {
        for field in ["region", "config_id"] {
            fences_placed(&s, &format!("{kind}.{field}")).await;
        }
    }
    let every = r#""instance_id": {"+gte": 0}"#;
    let (first, _) = vpcs[0];
    for path in lists(first) {
        order_pages_agree(&s, &path, "region", 300, every).await;
        order_pages_agree(&s, &path, "config_id", 300, every).await;
    }
    // The rows without a profile come first in its order, and show it as null.
    let page = api.get_filtered("/vpcs/ips?page_size=25", r#"{"+order_by": "config_id"}"#).await.ok().clone();
    assert!(page["data"].as_array().unwrap().iter().all(|e| e["config_id"].is_null()), "{page}");

    // Interfaces go, more lose their profile, and some of the first VPC's move to the third
    // (and its region).
    let (third, third_subnet) = vpcs[2];
    db_exec(&s, "DELETE FROM instance_interfaces WHERE position % 9 = 4").await;
    db_exec(&s, "UPDATE instance_interfaces SET config_id = NULL WHERE position % 13 = 6").await;
    db_exec(
        &s,
        &format!(
            "UPDATE instance_interfaces SET vpc_id = {third}, subnet_id = {third_subnet}, region = 'us-east' \
             WHERE vpc_id = {first} AND position % 4 = 1"
        ),
    )
    .await;
    for vpc in [first, third] {
        for path in lists(vpc) {
            order_pages_agree(&s, &path, "region", 250, every).await;
            order_pages_agree(&s, &path, "config_id", 250, every).await;
        }
    }
}

/// Whether a VPC address is active follows its instance's power in the same transaction
/// (migration 62 keeps it on the interface), and the four VPC address lists filter and order by
/// it past the budget, their deep pages located by its fences.
#[tokio::test]
async fn the_vpc_address_lists_by_active_follow_their_instances_power() {
    let s = TestServer::start().await;
    let api = s.api();
    let subnets = json!([{"label": "six", "ipv4": "10.9.0.0/24", "ipv6": [{}]}]);
    let v = api.post("/vpcs", json!({"label": "power", "region": "us-east", "ipv6": [{}], "subnets": subnets})).await;
    let (vpc, subnet) = (v.ok()["id"].as_i64().unwrap(), v.body["subnets"][0]["id"].as_i64().unwrap());
    let mut instances = Vec::new();
    for n in 0..2 {
        let iface = json!({"purpose": "vpc", "subnet_id": subnet, "ipv6": {"is_public": false}});
        let body = json!({"region": "us-east", "type": "g6-nanode-1", "label": format!("pw-{n}"), "booted": false,
                          "interfaces": [iface]});
        instances.push(api.post("/compute/instances", body).await.ok()["id"].as_i64().unwrap());
    }
    // 4,000 copies of each instance's interface, one in five without IPv6: every list past the
    // budget.
    copy_vpc_interfaces(&s, "purpose = 'vpc'", 4_000).await;
    let lists =
        ["/vpcs/ips".to_string(), "/vpcs/ipv6s".to_string(), format!("/vpcs/{vpc}/ips"), format!("/vpcs/{vpc}/ipv6s")];
    let count = |ipv6: bool, instance: Option<i64>| {
        let mut sql = "SELECT COUNT(*) FROM instance_interfaces WHERE purpose = 'vpc'".to_string();
        if ipv6 {
            sql.push_str(" AND vpc_ipv6_range IS NOT NULL");
        }
        if let Some(i) = instance {
            sql.push_str(&format!(" AND instance_id = {i}"));
        }
        sql
    };
    let active = r#"{"active": true}"#;
    let inactive = r#"{"active": false}"#;
    for path in &lists {
        let all = db_scalar(&s, &count(path.ends_with("ipv6s"), None)).await;
        assert!(all > 5_000, "{path}: {all}");
        assert_eq!(api.get_filtered(path, active).await.ok()["results"], 0, "{path}");
        assert_eq!(api.get_filtered(path, inactive).await.ok()["results"], all, "{path}");
    }

    // The first instance boots: its addresses are active, the other's are not.
    api.post(&format!("/compute/instances/{}/boot", instances[0]), json!({})).await.ok();
    crate::instances::wait_status(&api, instances[0], "running").await;
    for path in &lists {
        let ipv6 = path.ends_with("ipv6s");
        let page = api.get_filtered(&format!("{path}?page=2&page_size=100"), active).await.ok().clone();
        assert_eq!(page["results"], db_scalar(&s, &count(ipv6, Some(instances[0]))).await, "{path}");
        let rows = page["data"].as_array().unwrap();
        assert_eq!(rows.len(), 100, "{path}");
        assert!(rows.iter().all(|e| e["active"] == true && e["instance_id"] == instances[0]), "{path}");
        let page = api.get_filtered(path, inactive).await.ok().clone();
        assert_eq!(page["results"], db_scalar(&s, &count(ipv6, Some(instances[1]))).await, "{path}");
        assert!(page["data"].as_array().unwrap().iter().all(|e| e["active"] == false), "{path}");
    }
    for list in ["vpc_interfaces", "vpc_ipv6_interfaces", "vpc_interfaces_of_vpc", "vpc_ipv6_interfaces_of_vpc"] {
        fences_placed(&s, &format!("{list}.active")).await;
    }
    for path in &lists {
        order_pages_agree(&s, path, "active", 500, r#""instance_id": {"+gte": 0}"#).await;
    }

    // It shuts down: none is active again.
    api.post(&format!("/compute/instances/{}/shutdown", instances[0]), json!({})).await.ok();
    crate::instances::wait_status(&api, instances[0], "offline").await;
    for path in &lists {
        assert_eq!(api.get_filtered(path, active).await.ok()["results"], 0, "{path}");
        order_pages_agree(&s, path, "active", 450, r#""instance_id": {"+gte": 0}"#).await;
    }
}

/// The tokens of every transfer of the list under `filter`, read a page of `page_size` at a
/// time, and the list's `results`.
async fn all_transfer_tokens(s: &TestServer, filter: &str, page_size: u64) -> (Vec<String>, u64) {
    let api = s.api();
    let mut tokens = Vec::new();
    for page in 1.. {
        let url = format!("/account/service-transfers?page={page}&page_size={page_size}");
        let r = api.get_filtered(&url, filter).await;
        let data = r.ok()["data"].as_array().unwrap().clone();
        tokens.extend(data.iter().map(|t| t["token"].as_str().unwrap().to_string()));
        if page >= r.body["pages"].as_u64().unwrap() {
            return (tokens, r.body["results"].as_u64().unwrap());
        }
    }
    unreachable!()
}

/// Past the budget the transfer list ordered by `is_sender` (migration 72) is the transfers the
/// account accepted by id, then those it made by id (reversed for `desc`): each page, located in
/// its half, holds the transfers the two halves' own lists (`is_sender` filters, newest first)
/// put there.
async fn is_sender_pages_agree(s: &TestServer) {
    let (mut accepted, n_accepted) = all_transfer_tokens(s, r#"{"is_sender": false}"#, 500).await;
    let (mut made, n_made) = all_transfer_tokens(s, r#"{"is_sender": true}"#, 500).await;
    assert!(n_accepted > 1_000 && n_made > 1_000, "{n_accepted} {n_made}");
    let desc: Vec<String> = made.iter().chain(accepted.iter()).cloned().collect();
    accepted.reverse();
    made.reverse();
    let asc: Vec<String> = accepted.into_iter().chain(made).collect();
    for (dir, want) in [("asc", asc), ("desc", desc)] {
        let order = format!(r#"{{"+order_by": "is_sender", "+order": "{dir}"}}"#);
        let (got, results) = all_transfer_tokens(s, &order, 450).await;
        assert_eq!(results, n_accepted + n_made, "{order}");
        assert_eq!(got.len(), want.len(), "{order}");
        let first_apart = got.iter().zip(&want).position(|(g, w)| g != w);
        assert_eq!(first_apart, None, "{order}: the pages differ from the halves' lists");
    }
}

/// The transfer list in each field's order with fences (creation, change, expiry, token),
/// counted from both of its columns: every page, both directions, is the page skipping finds,
/// before and after transfers go, move into the list and change.
#[tokio::test]
async fn deep_transfer_pages_in_each_fields_order_hold_the_rows_that_skipping_finds() {
    let s = TestServer::start().await;
    let api = s.api();
    let (_, account) = owner(&s).await;
    let theirs = other_account(&s);
    let other = db_scalar(&s, &format!("SELECT MAX(id) FROM accounts WHERE id <> {account}")).await;
    // 13,000 transfers, made by this account or by the other one and accepted here (some of the
    // other's are not this account's at all), created, changed and expiring at times in orders
    // unlike their ids' and shared by many (ties go by id), their tokens (`tok-<n>`) in text
    // order.
    let cols = "token, account_id, receiver_account_id, status, created, updated, expiry";
    let exprs = format!(
        "'tok-' || CAST(n.i AS TEXT), CASE WHEN n.i % 3 = 0 OR n.i % 5 = 4 THEN {other} ELSE {account} END, \
         CASE WHEN n.i % 3 = 0 THEN {account} END, CASE WHEN n.i % 3 = 0 THEN 'completed' ELSE 'pending' END, \
         '2026-01-01T00:' || CAST(10 + (n.i * 7919) % 50 AS TEXT) || ':' || CAST(10 + n.i % 49 AS TEXT), \
         '2026-01-02T00:' || CAST(10 + (n.i * 31) % 50 AS TEXT) || ':00', \
         '2099-01-01T00:' || CAST(10 + (n.i * 17) % 43 AS TEXT) || ':00'"
    );
    db_exec(&s, &copies(&s, "service_transfers", cols, &exprs, "SELECT 1 AS one", 13_000)).await;
    const FIELDS: [&str; 4] = ["created", "updated", "expiry", "token"];
    for field in FIELDS {
        fences_placed(&s, &format!("service_transfers.{field}")).await;
    }
    let every = r#""created": {"+gte": "2000-01-01T00:00:00"}"#;
    for field in FIELDS {
        order_pages_agree(&s, "/account/service-transfers", field, 500, every).await;
    }
    // Past the budget a filter on each of them is served, with its count.
    let of = |cond: &str| {
        format!(
            "SELECT COUNT(*) FROM service_transfers WHERE (account_id = {account} OR receiver_account_id = {account}) \
             AND {cond}"
        )
    };
    for (filter, cond) in [
        (r#"{"updated": "2026-01-02T00:41:00"}"#, "updated = '2026-01-02T00:41:00'"),
        (r#"{"expiry": {"+lt": "2099-01-01T00:13:00"}}"#, "expiry < '2099-01-01T00:13:00'"),
        (r#"{"token": "tok-77"}"#, "token = 'tok-77'"),
    ] {
        let page = api.get_filtered("/account/service-transfers", filter).await;
        assert_eq!(page.ok()["results"], db_scalar(&s, &of(cond)).await, "{filter}");
    }
    // Some transfers stale, some pending past their expiry (stale to the list before the sweep).
    db_exec(&s, "UPDATE service_transfers SET status = 'stale' WHERE id % 17 = 5 AND status = 'pending'").await;
    db_exec(&s, "UPDATE service_transfers SET expiry = '2020-01-01T00:00:00' WHERE id % 19 = 7 AND status = 'pending'")
        .await;
    transfer_filters_agree(&s, account).await;
    // The sweep marks the lapsed ones stale in the background; the bulk writes below wait for it
    // (on PostgreSQL two writers of the same rows in different orders deadlock).
    for _ in 0..150 {
        let lapsed = "SELECT COUNT(*) FROM service_transfers WHERE status = 'pending' AND expiry < '2050-01-01'";
        if db_scalar(&s, lapsed).await == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    is_sender_pages_agree(&s).await;
    // The order by `status` is not one index range: refused, naming what is served in each.
    for order in ["status"] {
        let r = api.get_filtered("/account/service-transfers", &format!(r#"{{"+order_by": "{order}"}}"#)).await;
        assert_eq!(r.status, 400, "{}", r.body);
        let reason = r.body["errors"][0]["reason"].as_str().unwrap();
        assert!(
            reason.contains(
                "status, is_sender, created, updated, expiry, token; order by one of: id, created, updated, expiry, \
                 token; order by is_sender the whole list"
            ),
            "{reason}"
        );
    }
    // Transfers that go, that this account accepts (into its list) and whose time moves.
    db_exec(&s, "DELETE FROM service_transfers WHERE id % 13 = 6").await;
    db_exec(
        &s,
        &format!(
            "UPDATE service_transfers SET receiver_account_id = {account} \
             WHERE account_id = {other} AND receiver_account_id IS NULL AND id % 2 = 0"
        ),
    )
    .await;
    db_exec(&s, "UPDATE service_transfers SET created = '2026-01-01T00:00:05' WHERE id % 11 = 3").await;
    db_exec(
        &s,
        "UPDATE service_transfers SET updated = '2026-01-03T00:00:00', expiry = '2099-01-01T00:00:01', \
         token = 'a-' || token WHERE id % 7 = 2",
    )
    .await;
    let mine = db_scalar(
        &s,
        &format!(
            "SELECT COUNT(*) FROM service_transfers WHERE account_id = {account} OR receiver_account_id = {account}"
        ),
    )
    .await;
    assert_eq!(api.get("/account/service-transfers").await.ok()["results"], mine);
    for field in FIELDS {
        order_pages_agree(&s, "/account/service-transfers", field, 450, every).await;
    }
    is_sender_pages_agree(&s).await;
    transfer_filters_agree(&s, account).await;
    // The other account's list, in the same order from its own scope's counts: its deep pages
    // hold its own transfers, the latest creation last.
    let n = db_scalar(&s, &format!("SELECT COUNT(*) FROM service_transfers WHERE account_id = {other}")).await;
    let order = r#"{"+order_by": "created", "+order": "asc"}"#;
    let last =
        theirs.get_filtered(&format!("/account/service-transfers?page={}&page_size=100", (n + 99) / 100), order).await;
    assert_eq!(last.ok()["results"], n);
    // (Transfers are known by their token: `tok-<n>` here.)
    let latest = db_scalar(
        &s,
        &format!(
            "SELECT CAST(SUBSTR(token, 5) AS BIGINT) FROM service_transfers WHERE id = (SELECT MAX(id) \
             FROM service_transfers WHERE account_id = {other} AND created = \
             (SELECT MAX(created) FROM service_transfers WHERE account_id = {other}))"
        ),
    )
    .await;
    assert_eq!(last.body["data"].as_array().unwrap().last().unwrap()["token"], format!("tok-{latest}"));
}

/// Past the budget, `is_sender` in a transfer filter picks the half of the list (made, accepted)
/// each part of the filter holds in, and `status` is read as the stored status and the expiry (a
/// pending transfer past its expiry shows as stale before the sweep marks it): pages of each
/// half, of each status, of `+or`s across them and of a contradiction hold what the database
/// says, in their order, with their counts.
async fn transfer_filters_agree(s: &TestServer, account: i64) {
    let api = s.api();
    let made = format!("account_id = {account}");
    let accepted = format!("receiver_account_id = {account} AND account_id <> {account}");
    // The test's times: expiries are in 2099 or, for those that lapsed, in 2020.
    let stale = "(status = 'stale' OR (status = 'pending' AND expiry < '2050-01-01'))";
    let pending = "(status = 'pending' AND expiry > '2050-01-01')";
    for (filter, cond, order, page) in [
        (r#"{"is_sender": true}"#.to_string(), made.clone(), "id DESC", 3),
        (r#"{"is_sender": false, "+order_by": "created", "+order": "asc"}"#.into(), accepted.clone(), "created, id", 2),
        (
            r#"{"+or": [{"is_sender": false}, {"token": "tok-1"}], "+order_by": "expiry", "+order": "desc"}"#.into(),
            format!("(({accepted}) OR token = 'tok-1')"),
            "expiry DESC, id DESC",
            4,
        ),
        (r#"{"is_sender": true, "+order_by": "token", "+order": "asc"}"#.into(), made.clone(), "token, id", 5),
        (r#"{"+and": [{"is_sender": true}, {"is_sender": false}]}"#.into(), "1 = 0".into(), "id", 1),
        (r#"{"status": "stale"}"#.into(), stale.into(), "id DESC", 2),
        (r#"{"status": "pending", "+order_by": "expiry", "+order": "asc"}"#.into(), pending.into(), "expiry, id", 3),
        (
            r#"{"status": "completed", "is_sender": false}"#.into(),
            format!("status = 'completed' AND {accepted}"),
            "id DESC",
            2,
        ),
        (
            r#"{"+or": [{"status": "stale"}, {"token": "tok-2"}], "+order_by": "created", "+order": "desc"}"#.into(),
            format!("({stale} OR token = 'tok-2')"),
            "created DESC, id DESC",
            1,
        ),
        // `+neq`: the negation of each, the stale transfers read as the list shows them.
        (r#"{"status": {"+neq": "pending"}}"#.into(), format!("NOT {pending}"), "id DESC", 2),
        (r#"{"status": {"+neq": "stale"}, "+order_by": "expiry"}"#.into(), format!("NOT {stale}"), "expiry, id", 3),
        (
            r#"{"status": {"+neq": "completed"}, "is_sender": true}"#.into(),
            format!("status <> 'completed' AND {made}"),
            "id DESC",
            2,
        ),
    ] {
        let r = api.get_filtered(&format!("/account/service-transfers?page={page}&page_size=100"), &filter).await;
        let body = r.ok().clone();
        let mine = format!("(account_id = {account} OR receiver_account_id = {account}) AND {cond}");
        let total = db_scalar(s, &format!("SELECT COUNT(*) FROM service_transfers WHERE {mine}")).await;
        assert_eq!(body["results"], total, "{filter}");
        let want = db_texts(
            s,
            &format!(
                "SELECT token FROM service_transfers WHERE {mine} ORDER BY {order} LIMIT 100 OFFSET {}",
                (page - 1) * 100
            ),
        )
        .await;
        let got: Vec<String> =
            body["data"].as_array().unwrap().iter().map(|t| t["token"].as_str().unwrap().to_string()).collect();
        assert_eq!(got, want, "{filter}");
        assert!(total == 0 || !got.is_empty(), "{filter}: page {page} of {total}");
    }
    // A status compared otherwise than for equality or `+neq` is not one index range: refused,
    // naming what is served.
    let r = api.get_filtered("/account/service-transfers", r#"{"status": {"+gt": "pending"}}"#).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let reason = r.body["errors"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("status, is_sender, created, updated, expiry, token; order by"), "{reason}");
}

/// Every list in a field's order with fences reads the keys of a deep page (the rows it skips
/// and the page's ids) from one index alone, in the order's order: the index's columns and its
/// condition hold the scope, the field, the id and every condition the list puts on its rows (a
/// successful sign-in, a confirmed payment, a personal token, a VPC address with an IPv6 range).
/// Without such an index each skipped row is read from the table too. The statements are the
/// key reads `FenceAt::push_page` writes for each engine; the kinds come from
/// `order_fence_kinds`, so a list added there is checked too. (A list kept from two scope
/// columns, service transfers, reads its keys by another statement and is left out.) On
/// PostgreSQL an index on an expression (`COALESCE(image, '')`) serves alone only when it also
/// holds the column (`INCLUDE (image)`).
#[tokio::test(flavor = "multi_thread")]
async fn every_fenced_order_reads_its_keys_from_one_index_alone() {
    let server = TestServer::start().await;
    let kinds = db_texts(
        &server,
        "SELECT kind || '|' || tbl || '|' || scope_col || '|' || col || '|' || id_col || '|' || \
         CASE WHEN is_int THEN '1' ELSE '0' END || '|' || cond FROM order_fence_kinds ORDER BY kind",
    )
    .await;
    assert!(kinds.len() > 60, "the fenced orders: {kinds:?}");
    let sqlite = server.database.starts_with("sqlite://");
    let mut unserved = Vec::new();
    for k in &kinds {
        let f: Vec<&str> = k.splitn(7, '|').collect();
        let (kind, tbl, scope, col, id, int, cond) = (f[0], f[1], f[2], f[3], f[4], f[5] == "1", f[6]);
        // SQLite's plans on an empty table are its heuristics, not its statistics' choice: there
        // the lists with a condition of their own are checked (an index without it is not
        // covering however it is chosen).
        // A list in the order of its own scope (a VPC's addresses by VPC) reads its scope's index.
        if scope.contains(',') || (sqlite && cond.is_empty()) || col == scope {
            continue;
        }
        let value = if int { "0" } else { "'m'" };
        let and = if cond.is_empty() { String::new() } else { format!(" AND {cond}") };
        let reads = if sqlite {
            // The rows of the range's value from its id on, then the values past it.
            vec![
                format!(
                    "SELECT {id} FROM {tbl} WHERE {scope} = 1{and} AND {col} = {value} AND {id} >= 5 ORDER BY {id} LIMIT 300"
                ),
                format!(
                    "SELECT {id} FROM {tbl} WHERE {scope} = 1{and} AND {col} > {value} ORDER BY {col}, {id} LIMIT 300"
                ),
            ]
        } else {
            // The scope as a range and first in the order (the same rows in the same order): on
            // an empty table an index on (field, id) alone can tie in cost with the one on
            // (scope, field, id), which statistics would decide.
            vec![format!(
                "SELECT {id} FROM {tbl} WHERE {scope} >= 1 AND {scope} <= 1{and} AND ({col}, {id}) >= ({value}, 5) \
                 ORDER BY {scope}, {col}, {id} OFFSET 200 LIMIT 100"
            )]
        };
        for read in reads {
            let plan = db_plan(&server, &read).await;
            // A field whose values are unique (an address) finds the rows of one value through
            // its own unique index: one row at most, read from the table.
            let unique =
                sqlite && plan.contains("USING INDEX sqlite_autoindex_") && plan.contains(&format!("({col}=?)"));
            let alone = if sqlite {
                unique || (plan.contains("COVERING INDEX") && !plan.contains("TEMP B-TREE"))
            } else {
                plan.contains("Index Only Scan") && !plan.contains("Sort")
            };
            if !alone {
                unserved.push(format!("{kind}: {read}\n{plan}"));
            }
        }
    }
    assert!(unserved.is_empty(), "key reads that also read the table:\n{}", unserved.join("\n\n"));
}

/// Past the budget, the instance list is filtered by one of its addresses (`ipv4` by equality):
/// the address's unique index names the instance, so the filter is served, with its count, on
/// both names of the list; what reads every instance (`+neq`, a range, `+contains`) is refused.
#[tokio::test]
async fn the_instance_list_past_the_budget_is_filtered_by_an_address() {
    let s = TestServer::start().await;
    let api = s.api();
    let first = crate::instances::create_instance(&api, "us-east", json!({"label": "first"})).await;
    let wanted = crate::instances::create_instance(&api, "us-west", json!({"label": "wanted"})).await;
    let private =
        api.post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": wanted["id"]})).await;
    let private = private.ok()["address"].as_str().unwrap().to_string();
    // 5,100 more instances of the account as rows (never run), without addresses of their own.
    copy_instances(&s, first["id"].as_i64().unwrap(), 5_100).await;
    assert_eq!(api.get("/compute/instances").await.ok()["results"], 5_102);
    let public = wanted["ipv4"][0].as_str().unwrap();
    for path in ["/compute/instances", "/linode/instances"] {
        for (filter, want) in [
            (json!({"ipv4": public}), vec!["wanted"]),
            (json!({"ipv4": private}), vec!["wanted"]),
            (json!({"ipv4": public, "region": "us-west"}), vec!["wanted"]),
            (json!({"ipv4": public, "region": "us-east"}), vec![]),
            (json!({"+or": [{"ipv4": public}, {"label": "first"}]}), vec!["first", "wanted"]),
            (json!({"ipv4": "127.99.99.99"}), vec![]),
        ] {
            let page = api.get_filtered(path, &filter.to_string()).await;
            let labels: Vec<&str> =
                page.ok()["data"].as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
            assert_eq!(labels, want, "{path} {filter}");
            assert_eq!(page.body["results"], want.len(), "{path} {filter}");
        }
    }
    for filter in
        [json!({"ipv4": {"+neq": public}}), json!({"ipv4": {"+gt": public}}), json!({"ipv4": {"+contains": "127."}})]
    {
        let r = api.get_filtered("/compute/instances", &filter.to_string()).await;
        r.expect_error(400, "X-Filter");
        let reason = r.body["errors"][0]["reason"].as_str().unwrap();
        assert!(reason.contains("5102 records"), "{filter}: {reason}");
    }
}

/// A balancer's configurations past 5,000 (by protocol, algorithm, stickiness and check) and a
/// configuration's nodes past 5,000 (by status, mode and weight), migration 71: every page of
/// each order, both directions, located by its fences, is the page skipping finds, before and
/// after rows change; a filter on each field is served with its count.
#[tokio::test]
async fn a_balancers_configurations_and_nodes_past_the_budget_are_filtered_and_ordered_by_their_fields() {
    // The copies below are rows only: no data plane listens on their ports (loopback mode, as
    // the instance's balancers test above).
    if netns() {
        return;
    }
    let opts = Options { extra_args: vec!["--no-dataplane".into()], ..Default::default() };
    let s = TestServer::start_with(opts).await;
    let api = s.api();
    let body = json!({"label": "backend", "private_ip": true, "booted": false});
    let inst = crate::instances::create_instance(&api, "us-east", body).await;
    let private = inst["ipv4"].as_array().unwrap().iter().find(|a| a.as_str().unwrap().starts_with("192.168."));
    let private = private.unwrap().as_str().unwrap().to_string();
    let seed = json!({"region": "us-east", "label": "seed-lb",
                      "configs": [{"port": 80, "nodes": [{"label": "node0", "address": format!("{private}:80")}]}]});
    let nb = api.post("/nodebalancers", seed).await.ok()["id"].as_i64().unwrap();
    let cfg = db_scalar(&s, &format!("SELECT id FROM nodebalancer_configs WHERE nodebalancer_id = {nb}")).await;

    // 5,200 more configurations of the balancer, on ports 1001 on, their fields spread.
    let kept = "account_id, check_interval, check_timeout, check_attempts, check_path, check_body, check_passive, \
                proxy_protocol, cipher_suite, ssl_cert, ssl_key, ssl_commonname, ssl_fingerprint, udp_check_port, \
                udp_session_timeout, created, updated";
    let cols = format!("nodebalancer_id, label, port, protocol, algorithm, stickiness, check_type, {kept}");
    let exprs = format!(
        "t.nodebalancer_id, t.label, 1000 + n.i, CASE n.i % 3 WHEN 0 THEN 'http' WHEN 1 THEN 'tcp' ELSE 'udp' END, \
         CASE n.i % 4 WHEN 0 THEN 'roundrobin' WHEN 1 THEN 'leastconn' WHEN 2 THEN 'source' ELSE 'ring_hash' END, \
         CASE n.i % 5 WHEN 0 THEN 'none' WHEN 1 THEN 'table' ELSE 'http_cookie' END, \
         CASE n.i % 7 WHEN 0 THEN 'none' WHEN 1 THEN 'http' ELSE 'connection' END, {}",
        kept.split(", ").map(|c| format!("t.{c}")).collect::<Vec<_>>().join(", ")
    );
    let template = format!("SELECT * FROM nodebalancer_configs WHERE id = {cfg}");
    db_exec(&s, &copies(&s, "nodebalancer_configs", &cols, &exprs, &template, 5_200)).await;
    // 5,200 more nodes of the first configuration, on the backend's ports 1001 on.
    let kept = "nodebalancer_id, account_id, v4, created, updated";
    let cols = format!("config_id, label, address, port, weight, mode, status, {kept}");
    let exprs = format!(
        "t.config_id, 'node' || CAST(n.i AS TEXT), '{private}:' || CAST(1000 + n.i AS TEXT), 1000 + n.i, \
         1 + (n.i * 37) % 255, CASE n.i % 4 WHEN 0 THEN 'accept' WHEN 1 THEN 'reject' WHEN 2 THEN 'drain' \
         ELSE 'backup' END, CASE n.i % 3 WHEN 0 THEN 'UP' WHEN 1 THEN 'DOWN' ELSE 'unknown' END, {}",
        kept.split(", ").map(|c| format!("t.{c}")).collect::<Vec<_>>().join(", ")
    );
    let template = format!("SELECT * FROM nodebalancer_nodes WHERE config_id = {cfg}");
    db_exec(&s, &copies(&s, "nodebalancer_nodes", &cols, &exprs, &template, 5_200)).await;

    let configs = format!("/nodebalancers/{nb}/configs");
    let nodes = format!("{configs}/{cfg}/nodes");
    let lists: [(&str, &str, &str, &[&str]); 2] = [
        (&configs, "nodebalancer_configs", r#""port": {"+gte": 0}"#, &["protocol", "algorithm", "stickiness", "check"]),
        (&nodes, "nodebalancer_nodes", r#""label": {"+gte": ""}"#, &["status", "mode", "weight"]),
    ];
    let check = async |lists: &[(&str, &str, &str, &[&str])]| {
        for (path, _, every, fields) in lists {
            for field in *fields {
                order_pages_agree(&s, path, field, 500, every).await;
            }
        }
    };
    for (_, kind, _, fields) in &lists {
        for field in *fields {
            fences_placed(&s, &format!("{kind}.{field}")).await;
        }
    }
    check(&lists).await;
    // Rows change field and go: the fence counts follow in the same transactions.
    db_exec(
        &s,
        &format!("UPDATE nodebalancer_configs SET algorithm = 'source' WHERE nodebalancer_id = {nb} AND port % 11 = 3"),
    )
    .await;
    db_exec(
        &s,
        &format!("UPDATE nodebalancer_nodes SET weight = 7, status = 'DOWN' WHERE config_id = {cfg} AND port % 13 = 5"),
    )
    .await;
    db_exec(&s, &format!("DELETE FROM nodebalancer_nodes WHERE config_id = {cfg} AND port % 17 = 2")).await;
    check(&lists).await;

    // Past the budget a filter on each field is served, with its count.
    let of = |table: &str, scope: &str, cond: &str| format!("SELECT COUNT(*) FROM {table} WHERE {scope} AND {cond}");
    let in_balancer = format!("nodebalancer_id = {nb}");
    let in_config = format!("config_id = {cfg}");
    for (path, filter, count) in [
        (&configs, r#"{"protocol": "udp"}"#, of("nodebalancer_configs", &in_balancer, "protocol = 'udp'")),
        (
            &configs,
            r#"{"algorithm": "leastconn"}"#,
            of("nodebalancer_configs", &in_balancer, "algorithm = 'leastconn'"),
        ),
        (
            &configs,
            r#"{"stickiness": {"+neq": "table"}}"#,
            of("nodebalancer_configs", &in_balancer, "stickiness <> 'table'"),
        ),
        (
            &configs,
            r#"{"check": "http", "protocol": "tcp"}"#,
            of("nodebalancer_configs", &in_balancer, "check_type = 'http' AND protocol = 'tcp'"),
        ),
        (&nodes, r#"{"status": "UP"}"#, of("nodebalancer_nodes", &in_config, "status = 'UP'")),
        (&nodes, r#"{"mode": "drain"}"#, of("nodebalancer_nodes", &in_config, "mode = 'drain'")),
        (&nodes, r#"{"weight": {"+gte": 200}}"#, of("nodebalancer_nodes", &in_config, "weight >= 200")),
    ] {
        let page = api.get_filtered(&format!("{path}?page=2&page_size=100"), filter).await;
        let want = db_scalar(&s, &count).await;
        assert!(want > 200, "{filter}: {want}");
        assert_eq!(page.ok()["results"], want, "{filter}");
    }
}

/// A page of instances shows each instance's own addresses (public IPv4 first, then private, and
/// its SLAAC address), read by instance from one index that holds every column the page shows:
/// no look-up of the address rows, no sort, on both engines.
#[tokio::test]
async fn an_instance_pages_addresses_come_from_one_covering_index() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut made = Vec::new();
    for (i, region) in ["us-east", "us-west", "us-east"].iter().enumerate() {
        made.push(crate::instances::create_instance(&api, region, json!({"label": format!("shown-{i}")})).await);
    }
    // A private address on the middle one: it follows the public one, and only there.
    let private =
        api.post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": made[1]["id"]})).await;
    let private = private.ok()["address"].as_str().unwrap().to_string();
    let page = api.get("/linode/instances?page_size=25").await.ok().clone();
    let listed = page["data"].as_array().unwrap();
    assert_eq!(listed.len(), 3, "{page}");
    for (i, inst) in listed.iter().enumerate() {
        assert_eq!(inst["id"], made[i]["id"]);
        let ipv4: Vec<&str> = inst["ipv4"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        let want = if i == 1 {
            vec![made[1]["ipv4"][0].as_str().unwrap(), private.as_str()]
        } else {
            vec![made[i]["ipv4"][0].as_str().unwrap()]
        };
        assert_eq!(ipv4, want, "instance {i}");
        let slaac =
            api.get(&format!("/linode/instances/{}/ips", inst["id"])).await.ok()["ipv6"]["slaac"]["address"].clone();
        assert_eq!(inst["ipv6"], json!(format!("{}/128", slaac.as_str().unwrap())), "instance {i}");
    }
    let (head, tail) = nubis_store::ips::SHOWN_IPS;
    let plan = db_plan(&s, &format!("{head}(1, 2, 3){tail}")).await;
    let alone = if s.database.starts_with("sqlite://") {
        plan.contains("COVERING INDEX ip_addresses_instance") && !plan.contains("TEMP B-TREE")
    } else {
        plan.contains("Index Only Scan using ip_addresses_instance") && !plan.contains("Sort")
    };
    assert!(alone, "{plan}");
}

/// On SQLite the kept counts are stored in their key's order (WITHOUT ROWID): a deep page's walk
/// over 64 consecutive block counts reads them from the key alone, with no look-up of a row; and
/// the counts the triggers keep there still follow every write.
#[tokio::test]
async fn the_kept_counts_are_read_from_their_key_alone() {
    let s = TestServer::start().await;
    let api = s.api();
    for i in 0..3 {
        api.post("/vpcs", json!({"label": format!("kept-{i}"), "region": "us-east"})).await.ok();
    }
    let id = api.get("/vpcs?page_size=25").await.ok()["data"][0]["id"].as_i64().unwrap();
    api.delete(&format!("/vpcs/{id}")).await.ok();
    assert_eq!(api.get("/vpcs?page=2&page_size=25").await.ok()["results"], 2);
    if !s.database.starts_with("sqlite://") {
        return;
    }
    for read in [
        "SELECT block, n FROM row_blocks WHERE kind = 'events' AND scope_id = 1 AND level = 1 AND block >= 0 AND block < 64 ORDER BY block",
        "SELECT n FROM row_counts WHERE account_id = 1 AND kind = 'vpcs'",
        "SELECT fence, n FROM order_fence_counts WHERE kind = 'vpcs.label' AND scope_id = 1 ORDER BY fence",
    ] {
        let plan = db_plan(&s, read).await;
        assert!(plan.contains("USING PRIMARY KEY") && !plan.contains("TEMP B-TREE"), "{read}\n{plan}");
    }
}

/// The account's VPC address lists (`/v4/vpcs/ips`, `/v4/vpcs/ipv6s`) read a page in their own
/// order from an index on (account, id) that holds their rows alone (migration 77), as each VPC's
/// lists do: not every interface of the account (public, VLAN) in id order, filtered, and not
/// every VPC interface through an index in another order, sorted. The statement is the one a
/// shallow page runs (the scope written as a range, `sql::push_scope_led`).
#[tokio::test]
async fn the_accounts_vpc_address_lists_read_an_index_of_their_own_rows() {
    let s = TestServer::start().await;
    let api = s.api();
    for path in ["/vpcs/ips", "/vpcs/ipv6s"] {
        assert_eq!(api.get(path).await.ok()["results"], 0, "{path}");
    }
    for (and, index) in [
        ("", "instance_interfaces_vpc_account_id"),
        (" AND f.vpc_ipv6_range IS NOT NULL", "instance_interfaces_v6_account_id"),
    ] {
        let page = format!(
            "SELECT f.id FROM instance_interfaces f JOIN instances i ON i.id = f.instance_id \
             JOIN vpc_subnets s ON s.id = f.subnet_id WHERE f.account_id >= 1 AND f.account_id <= 1 \
             AND f.purpose = 'vpc'{and} ORDER BY f.account_id ASC, f.id LIMIT 100 OFFSET 100"
        );
        let plan = db_plan(&s, &page).await;
        assert!(plan.contains(index) && !plan.contains("TEMP B-TREE") && !plan.contains("Sort"), "{page}\n{plan}");
    }
}
