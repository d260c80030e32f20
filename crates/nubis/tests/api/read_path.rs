//! Reads that do not grow with the account: lists are paged, filtered, ordered and counted in
//! SQL (with a kept count per account), and filters SQL cannot express are refused.

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::support::*;

fn labels(page: &Value) -> Vec<String> {
    page["data"].as_array().unwrap().iter().map(|v| v["label"].as_str().unwrap().to_string()).collect()
}

fn ids(page: &Value) -> Vec<i64> {
    page["data"].as_array().unwrap().iter().map(|v| v["id"].as_i64().unwrap()).collect()
}

/// Creates `n` VPCs `n-000`, `n-001`, ... alternating us-east and us-west, `par` at a time.
async fn create_vpcs(api: &Api, n: usize, par: usize) -> Vec<i64> {
    let mut out = Vec::new();
    for chunk in (0..n).collect::<Vec<_>>().chunks(par) {
        let reqs = chunk.iter().map(|i| {
            let region = if i % 2 == 0 { "us-east" } else { "us-west" };
            api.post(
                "/vpcs",
                json!({"label": format!("n-{i:03}"), "region": region, "description": format!("d{}", i % 7)}),
            )
        });
        for r in join_all(reqs).await {
            out.push(r.ok()["id"].as_i64().unwrap());
        }
    }
    out
}

#[tokio::test]
async fn large_vpc_lists_are_paged_filtered_and_ordered_with_exact_counts() {
    let s = TestServer::start().await;
    let api = s.api();
    let created = create_vpcs(&api, 260, 8).await;
    let mut sorted = created.clone();
    sorted.sort_unstable();

    let p1 = api.get("/vpcs").await;
    assert_eq!(p1.ok()["results"], 260);
    assert_eq!(p1.body["pages"], 3);
    assert_eq!(ids(&p1.body), sorted[..100].to_vec(), "the first page is the first 100 by id");
    let p3 = api.get("/vpcs?page=3").await;
    assert_eq!(ids(p3.ok()), sorted[200..].to_vec());
    let p4 = api.get("/vpcs?page=4").await;
    assert_eq!(p4.ok()["data"].as_array().unwrap().len(), 0);
    assert_eq!(p4.body["results"], 260);
    let p2 = api.get("/vpcs?page=2&page_size=25").await;
    assert_eq!(ids(p2.ok()), sorted[25..50].to_vec());
    assert_eq!(p2.body["pages"], 11);

    let west = api.get_filtered("/vpcs?page=2&page_size=25", r#"{"region": "us-west"}"#).await;
    assert_eq!(west.ok()["results"], 130);
    assert_eq!(west.body["pages"], 6);
    assert!(west.body["data"].as_array().unwrap().iter().all(|v| v["region"] == "us-west"));

    let or = api.get_filtered("/vpcs", r#"{"+or": [{"label": "n-005"}, {"label": "n-250"}, {"label": "nope"}]}"#).await;
    assert_eq!(labels(or.ok()), ["n-005", "n-250"]);
    assert_eq!(or.body["results"], 2);

    let and = api
        .get_filtered(
            "/vpcs",
            r#"{"+and": [{"region": "us-east"}, {"description": "d3"}], "+order_by": "label", "+order": "desc"}"#,
        )
        .await;
    let want: Vec<String> = (0..260).rev().filter(|i| i % 2 == 0 && i % 7 == 3).map(|i| format!("n-{i:03}")).collect();
    assert_eq!(labels(and.ok()), want);
    assert_eq!(and.body["results"], want.len());

    let cut = sorted[99];
    let gt = api.get_filtered("/vpcs?page_size=25", &format!(r#"{{"id": {{"+gt": {cut}}}}}"#)).await;
    assert_eq!(gt.ok()["results"], 160);
    assert_eq!(ids(&gt.body), sorted[100..125].to_vec());
    let range =
        api.get_filtered("/vpcs", &format!(r#"{{"id": {{"+gte": {}, "+lt": {}}}}}"#, sorted[10], sorted[20])).await;
    assert_eq!(ids(range.ok()), sorted[10..20].to_vec());
    let neq = api.get_filtered("/vpcs", r#"{"region": {"+neq": "us-east"}}"#).await;
    assert_eq!(neq.ok()["results"], 130);
    let contains = api.get_filtered("/vpcs", r#"{"label": {"+contains": "-25"}, "+order_by": "label"}"#).await;
    assert_eq!(
        labels(contains.ok()),
        ["n-250", "n-251", "n-252", "n-253", "n-254", "n-255", "n-256", "n-257", "n-258", "n-259"]
    );

    let desc = api.get_filtered("/vpcs?page=2", r#"{"+order_by": "label", "+order": "desc"}"#).await;
    assert_eq!(desc.ok()["data"][0]["label"], "n-159");
    assert_eq!(desc.body["results"], 260);

    // Deletes are counted too.
    for id in &created[..10] {
        api.delete(&format!("/vpcs/{id}")).await.ok();
    }
    assert_eq!(api.get("/vpcs").await.ok()["results"], 250);
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM vpcs").await, 250);
}

#[tokio::test]
async fn the_kept_vpc_count_matches_the_rows_after_concurrent_creates_and_deletes() {
    let s = TestServer::start().await;
    let api = s.api();
    let created = create_vpcs(&api, 120, 12).await;
    let paths: Vec<String> = created.iter().step_by(3).map(|id| format!("/vpcs/{id}")).collect();
    for r in join_all(paths.iter().map(|p| api.delete(p))).await {
        r.ok();
    }
    let rows = db_scalar(&s, "SELECT COUNT(*) FROM vpcs").await;
    assert_eq!(rows, 80);
    assert_eq!(api.get("/vpcs?page_size=25").await.ok()["results"], rows);
    assert_eq!(db_scalar(&s, "SELECT CAST(SUM(n) AS BIGINT) FROM row_counts WHERE kind = 'vpcs'").await, rows);
}

#[tokio::test]
async fn filters_sql_cannot_express_are_refused_on_x_filter() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/vpcs", json!({"label": "one", "region": "us-east"})).await.ok();
    for (path, filter) in [
        ("/vpcs", r#"{"id": "seven"}"#),
        ("/vpcs", r#"{"id": {"+contains": "7"}}"#),
        ("/vpcs", r#"{"label": 5}"#),
        ("/vpcs", r#"{"label": {"+gt": 5}}"#),
        ("/vpcs", r#"{"region": true}"#),
        ("/vpcs", r#"{"subnets": 1}"#),
        ("/vpcs", r#"{"+order_by": "subnets"}"#),
        ("/vpcs/ips", r#"{"active": {"+gt": true}}"#),
        ("/vpcs/ips", r#"{"active": "yes"}"#),
        ("/vpcs/ips", r#"{"vpc_id": 1.5}"#),
    ] {
        let r = api.get_filtered(path, filter).await;
        r.expect_error(400, "X-Filter");
    }
    // What SQL can express is answered.
    api.get_filtered("/vpcs/ips", r#"{"active": false}"#).await.ok();
}

#[tokio::test]
async fn a_restricted_users_vpc_list_counts_only_what_it_is_granted() {
    let s = TestServer::start().await;
    let api = s.api();
    let created = create_vpcs(&api, 40, 8).await;
    let (_, bob) = user_with_token(&s, "bobpages", true, "*").await;
    let granted: Vec<Value> =
        created.iter().step_by(10).map(|id| json!({"id": id, "permissions": "read_only"})).collect();
    api.put("/account/users/bobpages/grants", json!({"vpc": granted})).await.ok();
    let page = bob.get("/vpcs?page_size=25").await;
    assert_eq!(page.ok()["results"], 4);
    assert_eq!(page.body["pages"], 1);
    let mut want: Vec<i64> = created.iter().step_by(10).copied().collect();
    want.sort_unstable();
    assert_eq!(ids(&page.body), want);
    let west = bob.get_filtered("/vpcs", r#"{"region": "us-west"}"#).await;
    assert_eq!(west.ok()["results"], 0, "every granted VPC is in us-east (even positions)");
    bob.get(&format!("/vpcs/{}", created[1])).await.expect_error(404, "-");
    bob.get(&format!("/vpcs/{}", created[10])).await.ok();
}

#[tokio::test]
async fn a_restricted_users_address_list_holds_and_counts_only_its_instances_entries() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut instances = Vec::new();
    for (i, region) in ["us-east", "us-west", "ap-south"].into_iter().enumerate() {
        let body = json!({"region": region, "type": "g6-nanode-1", "image": "linode/debian12", "root_pass": "aComplexP@ssw0rd!", "label": format!("ips-{i}")});
        let id = api.post("/compute/instances", body).await.ok()["id"].as_i64().unwrap();
        api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id})).await.ok();
        instances.push(id);
    }
    let (_, bob) = user_with_token(&s, "bobips", true, "*").await;
    let granted: Vec<Value> = instances[1..].iter().map(|id| json!({"id": id, "permissions": "read_only"})).collect();
    api.put("/account/users/bobips/grants", json!({"linode": granted})).await.ok();
    // What the account's list shows of the granted instances, in the list's order.
    let whole = api.get("/networking/ips?page_size=500").await.ok().clone();
    let of_granted: Vec<Value> = (whole["data"].as_array().unwrap().iter())
        .filter(|e| instances[1..].contains(&e["instance_id"].as_i64().unwrap_or(0)))
        .cloned()
        .collect();
    assert!(of_granted.iter().any(|e| e["type"] == "ipv6/range"), "{of_granted:?}");
    let mine = bob.get("/networking/ips?page_size=500").await;
    assert_eq!(mine.ok()["results"], of_granted.len());
    assert_eq!(mine.body["data"].as_array().unwrap(), &of_granted);
    // A page past the entries: none, and still counted.
    let past = bob.get("/networking/ips?page=2&page_size=25").await;
    assert_eq!((past.ok()["results"].as_u64(), past.body["data"].as_array().map(Vec::len)), (Some(6), Some(0)));
    assert_eq!(of_granted.len(), 6, "an IPv4 address, a SLAAC address and a range of each granted instance");
    let ranges = bob.get_filtered("/networking/ips", r#"{"type": "ipv6/range", "+order_by": "region"}"#).await;
    let regions: Vec<&str> =
        ranges.ok()["data"].as_array().unwrap().iter().map(|e| e["region"].as_str().unwrap()).collect();
    assert_eq!((ranges.body["results"].as_i64(), regions), (Some(2), vec!["ap-south", "us-west"]));
}

#[tokio::test]
async fn firewall_lists_are_paged_and_filtered_in_sql_including_tags() {
    let s = TestServer::start().await;
    let api = s.api();
    for i in 0..60 {
        let tags = if i % 3 == 0 { json!(["blue", "edge"]) } else { json!(["green"]) };
        crate::firewalls::create_firewall(&api, &format!("fw-{i:02}"), json!({"tags": tags})).await;
    }
    let p = api.get("/networking/firewalls?page=3&page_size=25").await;
    assert_eq!(p.ok()["results"], 60);
    assert_eq!(p.body["pages"], 3);
    assert_eq!(labels(&p.body), (50..60).map(|i| format!("fw-{i:02}")).collect::<Vec<_>>());
    let blue = api.get_filtered("/networking/firewalls", r#"{"tags": "blue"}"#).await;
    assert_eq!(blue.ok()["results"], 20);
    assert!(
        blue.body["data"].as_array().unwrap().iter().all(|f| f["tags"].as_array().unwrap().contains(&json!("blue")))
    );
    let not_blue = api.get_filtered("/networking/firewalls", r#"{"tags": {"+neq": "blue"}}"#).await;
    assert_eq!(not_blue.ok()["results"], 40);
    let part = api.get_filtered("/networking/firewalls", r#"{"tags": {"+contains": "ree"}}"#).await;
    assert_eq!(part.ok()["results"], 40);
    let both = api
        .get_filtered(
            "/networking/firewalls",
            r#"{"+and": [{"tags": "edge"}, {"label": {"+gte": "fw-30"}}], "+order_by": "label", "+order": "desc"}"#,
        )
        .await;
    assert_eq!(
        labels(both.ok()),
        ["fw-57", "fw-54", "fw-51", "fw-48", "fw-45", "fw-42", "fw-39", "fw-36", "fw-33", "fw-30"]
    );
    api.get_filtered("/networking/firewalls", r#"{"tags": {"+gt": "a"}}"#).await.expect_error(400, "X-Filter");
    api.get_filtered("/networking/firewalls", r#"{"tags": 3}"#).await.expect_error(400, "X-Filter");
}

#[tokio::test]
async fn balancer_config_and_node_lists_are_paged_and_filtered_in_sql() {
    let s = crate::lb_support::lb_server().await;
    let api = s.api();
    let mut nbs = Vec::new();
    for i in 0..4 {
        let tags = if i % 2 == 0 { json!(["even"]) } else { json!([]) };
        let b =
            api.post("/nodebalancers", json!({"region": "us-east", "label": format!("lb-{i}"), "tags": tags})).await;
        nbs.push(b.ok()["id"].as_i64().unwrap());
    }
    let even = api.get_filtered("/nodebalancers", r#"{"tags": "even", "+order_by": "label", "+order": "desc"}"#).await;
    assert_eq!(labels(even.ok()), ["lb-2", "lb-0"]);
    assert_eq!(even.body["results"], 2);
    let p2 = api.get("/nodebalancers?page=2&page_size=25").await;
    assert_eq!(p2.ok()["results"], 4);
    assert_eq!(p2.body["data"].as_array().unwrap().len(), 0);

    let nb = nbs[0];
    for (port, protocol) in [(80, "http"), (81, "tcp"), (82, "tcp")] {
        api.post(&format!("/nodebalancers/{nb}/configs"), json!({"port": port, "protocol": protocol})).await.ok();
    }
    let tcp =
        api.get_filtered(&format!("/nodebalancers/{nb}/configs"), r#"{"protocol": "tcp", "port": {"+gt": 81}}"#).await;
    assert_eq!(tcp.ok()["results"], 1);
    assert_eq!(tcp.body["data"][0]["port"], 82);
    api.get_filtered(&format!("/nodebalancers/{nb}/configs"), r#"{"port": "eighty"}"#)
        .await
        .expect_error(400, "X-Filter");
    let cid = tcp.body["data"][0]["id"].as_i64().unwrap();
    let (_, private) = crate::lb_support::backend_instance(&api, "us-east").await;
    let nodes = format!("/nodebalancers/{nb}/configs/{cid}/nodes");
    for (label, weight) in [("node-a", 10), ("node-b", 50), ("node-c", 90)] {
        api.post(&nodes, json!({"label": label, "address": format!("{private}:{}", 8000 + weight), "weight": weight}))
            .await
            .ok();
    }
    let heavy = api.get_filtered(&nodes, r#"{"weight": {"+gte": 50}, "+order_by": "weight", "+order": "desc"}"#).await;
    assert_eq!(labels(heavy.ok()), ["node-c", "node-b"]);
    assert_eq!(heavy.body["results"], 2);
    let one = heavy.body["data"][1]["id"].as_i64().unwrap();
    assert_eq!(api.get(&format!("{nodes}/{one}")).await.ok()["label"], "node-b");
    api.get(&format!("/nodebalancers/{}/configs/{cid}/nodes/{one}", nbs[1])).await.expect_error(404, "-");
}

#[tokio::test]
async fn instance_lists_filter_on_addresses_and_tags_in_sql() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut made = Vec::new();
    for i in 0..3 {
        let tags = if i == 1 { json!(["database"]) } else { json!([]) };
        let extra = json!({"label": format!("inst-{i}"), "tags": tags, "booted": false});
        made.push(crate::instances::create_instance(&api, "us-east", extra).await);
    }
    let addr = made[2]["ipv4"][0].as_str().unwrap().to_string();
    let by_ip = api.get_filtered("/compute/instances", &format!(r#"{{"ipv4": "{addr}"}}"#)).await;
    assert_eq!(labels(by_ip.ok()), ["inst-2"]);
    let not_ip = api.get_filtered("/compute/instances", &format!(r#"{{"ipv4": {{"+neq": "{addr}"}}}}"#)).await;
    assert_eq!(labels(not_ip.ok()), ["inst-0", "inst-1"]);
    let db = api.get_filtered("/compute/instances", r#"{"tags": "database"}"#).await;
    assert_eq!(labels(db.ok()), ["inst-1"]);
    let desc =
        api.get_filtered("/compute/instances?page=2&page_size=25", r#"{"+order_by": "label", "+order": "desc"}"#).await;
    assert_eq!(desc.ok()["results"], 3);
    api.get_filtered("/compute/instances", r#"{"+order_by": "ipv4"}"#).await.expect_error(400, "X-Filter");
    let one = api.get(&format!("/compute/instances/{}", made[2]["id"])).await;
    assert_eq!(one.ok()["ipv4"], made[2]["ipv4"]);
}

#[tokio::test]
async fn the_address_list_is_paged_filtered_and_counted_in_sql_with_its_derived_fields() {
    let s = TestServer::start().await;
    let api = s.api();
    let mut made = Vec::new();
    for i in 0..3 {
        let extra = json!({"label": format!("ips-{i}"), "booted": false});
        made.push(crate::instances::create_instance(&api, "us-east", extra).await);
    }
    let range = api.post("/networking/ipv6/ranges", json!({"instance_id": made[0]["id"], "prefix_length": 64})).await;
    range.ok();
    // Three public IPv4, three SLAAC and one range; a page past the end still counts all seven.
    let all = api.get("/networking/ips?page_size=500").await.ok().clone();
    assert_eq!(all["results"], 7, "{all}");
    let p2 = api.get("/networking/ips?page=2&page_size=25").await.ok().clone();
    assert_eq!((p2["results"].as_i64(), p2["data"].as_array().map(Vec::len)), (Some(7), Some(0)), "{p2}");
    // prefix, type and rdns are filtered as the records show them (pool prefix, default name).
    let v4 = &all["data"].as_array().unwrap().iter().find(|a| a["type"] == "ipv4").unwrap().clone();
    let by_prefix = api.get_filtered("/networking/ips", &format!(r#"{{"prefix": {}}}"#, v4["prefix"])).await;
    let prefixed = by_prefix.ok()["data"].as_array().unwrap();
    assert!(!prefixed.is_empty() && prefixed.iter().all(|a| a["prefix"] == v4["prefix"]), "{prefixed:?}");
    let by_rdns = api.get_filtered("/networking/ips", &format!(r#"{{"rdns": {}}}"#, v4["rdns"])).await;
    assert_eq!(by_rdns.ok()["data"][0]["address"], v4["address"]);
    assert_eq!(by_rdns.body["results"], 1);
    let ranges = api.get_filtered("/networking/ips", r#"{"type": "ipv6/range"}"#).await;
    assert_eq!(ranges.ok()["results"], 1);
    assert_eq!(ranges.body["data"][0]["instance_id"], made[0]["id"]);
    let one = api.get_filtered("/networking/ips", &format!(r#"{{"instance_id": {}}}"#, made[1]["id"])).await;
    assert_eq!(one.ok()["results"], 2);
    let ordered = api.get_filtered("/networking/ips", r#"{"+order_by": "address", "+order": "desc"}"#).await;
    let addrs: Vec<&str> =
        ordered.ok()["data"].as_array().unwrap().iter().map(|a| a["address"].as_str().unwrap()).collect();
    let mut sorted = addrs.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(addrs, sorted);
    api.get_filtered("/networking/ips", r#"{"gateway": "x"}"#).await.expect_error(400, "X-Filter");
}
