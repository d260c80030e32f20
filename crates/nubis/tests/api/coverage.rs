//! Authorization coverage: every route of the OpenAPI document has a row in the policy table,
//! and every route refuses what its row says it must refuse (no token, a token without the scope,
//! a restricted user on unrestricted-only operations, another account's entities).

use std::collections::HashMap;

use nubis_app::Op;
use serde_json::{Value, json};

use crate::support::*;

/// Every documented operation: (method, path template, operationId).
async fn operations(s: &TestServer) -> Vec<(String, String, String)> {
    let doc = s.api().anonymous().get("/openapi.json").await.ok().clone();
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if let Some(id) = op["operationId"].as_str() {
                out.push((method.to_uppercase(), path.clone(), id.to_string()));
            }
        }
    }
    out
}

/// Real values for the path parameters of every route, made in the first account.
struct Fixtures(HashMap<&'static str, String>);

impl Fixtures {
    async fn make(s: &TestServer) -> Fixtures {
        let api = s.api();
        let mut m = HashMap::new();
        api.post("/account/users", json!({"username": "fixture-user", "email": "f@example.com", "restricted": true}))
            .await
            .ok();
        m.insert("username", "fixture-user".to_string());
        let t = api.post("/profile/tokens", json!({"label": "fixture"})).await;
        m.insert("token_id", t.ok()["id"].to_string());
        let e = api.get("/account/events").await;
        m.insert("event_id", e.ok()["data"][0]["id"].to_string());
        let v = api
            .post("/vpcs", json!({"label": "fixture-vpc", "region": "us-east", "subnets": [{"label": "s", "ipv4": "10.0.0.0/24"}]}))
            .await;
        m.insert("vpc_id", v.ok()["id"].to_string());
        m.insert("vpc_subnet_id", v.body["subnets"][0]["id"].to_string());
        let i = api
            .post(
                "/compute/instances",
                json!({"region": "us-east", "type": "g6-nanode-1", "label": "fixture-instance", "booted": false, "private_ip": true}),
            )
            .await;
        m.insert("instance_id", i.ok()["id"].to_string());
        m.insert("address", i.body["ipv4"][0].as_str().unwrap().to_string());
        // A profile, a disk and an SSH key of the fixtures' own; interface ids and months need
        // no entity (another account's or a restricted user's call is refused before them).
        let iid = i.body["id"].as_i64().unwrap();
        crate::instances::wait_status(&api, iid, "offline").await;
        let c =
            api.post(&format!("/compute/instances/{iid}/configs"), json!({"label": "fixture", "devices": {}})).await;
        m.insert("instance_config_id", c.ok()["id"].to_string());
        let d = api.post(&format!("/compute/instances/{iid}/disks"), json!({"label": "fixture", "size": 100})).await;
        m.insert("disk_id", d.ok()["id"].to_string());
        m.insert("interface_id", "999999".to_string());
        m.insert("year", "2024".to_string());
        m.insert("month", "1".to_string());
        let k = api.post("/profile/sshkeys", json!({"label": "fixture", "ssh_key": FIXTURE_KEY})).await;
        m.insert("ssh_key_id", k.ok()["id"].to_string());
        let r = api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": i.body["id"]})).await;
        m.insert("range", r.ok()["range"].as_str().unwrap().split('/').next().unwrap().to_string());
        let private = i.body["ipv4"][1].as_str().unwrap().to_string();
        let nb = api.post("/nodebalancers", json!({"region": "us-east", "label": "fixture-lb"})).await;
        let nb_id = nb.ok()["id"].to_string();
        let c = api.post(&format!("/nodebalancers/{nb_id}/configs"), json!({"port": 80})).await;
        let config_id = c.ok()["id"].to_string();
        let n = api
            .post(
                &format!("/nodebalancers/{nb_id}/configs/{config_id}/nodes"),
                json!({"label": "fixture-node", "address": format!("{private}:80")}),
            )
            .await;
        m.insert("node_id", n.ok()["id"].to_string());
        m.insert("nodebalancer_id", nb_id);
        m.insert("config_id", config_id);
        m.insert("region_id", "us-east".to_string());
        m.insert("type_id", "g6-nanode-1".to_string());
        m.insert("image_id", "linode%2Fdebian12".to_string());
        let fw = api
            .post(
                "/networking/firewalls",
                json!({"label": "fixture-fw", "rules": {"inbound_policy": "DROP", "outbound_policy": "ACCEPT"},
                       "devices": {"instances": [m["instance_id"].parse::<i64>().unwrap()]}}),
            )
            .await;
        m.insert("firewall_id", fw.ok()["id"].to_string());
        let set = json!({"label": "fixture-set", "type": "inbound", "rules": []});
        m.insert("ruleset_id", api.post("/networking/firewalls/rulesets", set).await.ok()["id"].to_string());
        // The private pool's list (nubis's prefix lists are the same for every account).
        m.insert("prefixlist_id", "1".to_string());
        m.insert("version", "1".to_string());
        m.insert("slug", "public".to_string());
        let devices = api.get(&format!("/networking/firewalls/{}/devices", m["firewall_id"])).await;
        m.insert("device_id", devices.ok()["data"][0]["id"].to_string());
        // A canceled service transfer: only its creating account may see it.
        let ti = api
            .post(
                "/compute/instances",
                json!({"region": "us-east", "type": "g6-nanode-1", "label": "fixture-transferred", "booted": false}),
            )
            .await;
        let t = api.post("/account/service-transfers", json!({"entities": {"instances": [ti.ok()["id"]]}})).await;
        let token = t.ok()["token"].as_str().unwrap().to_string();
        api.delete(&format!("/account/service-transfers/{token}")).await.ok();
        m.insert("token", token);
        // Billing: a card, a payment, and an invoice of the fixtures' usage so far.
        let pm = api
            .post(
                "/account/payment-methods",
                json!({"type": "credit_card", "is_default": true,
                       "data": {"card_number": "4111111111111111", "cvv": "123", "expiry_month": 12, "expiry_year": 2099}}),
            )
            .await;
        m.insert("payment_method_id", pm.ok()["id"].to_string());
        let pay = api.post("/account/payments", json!({"usd": "5.00"})).await;
        m.insert("payment_id", pay.ok()["id"].to_string());
        // The usage so far began a day ago (an invoice covers at least a second).
        let day_ago = (chrono::Utc::now().naive_utc() - chrono::Duration::days(1)).format("%Y-%m-%dT%H:%M:%S");
        crate::billing_invoices::db_exec(
            s,
            &format!(
                "UPDATE accounts SET created = '{day_ago}' WHERE id = 1; \
                 UPDATE account_billing SET billed_through = '{day_ago}' WHERE account_id = 1; \
                 UPDATE meters SET started = '{day_ago}'"
            ),
        )
        .await;
        let (ok, _, err) = s.admin(&["billing", "close"]);
        assert!(ok, "{err}");
        let inv = api.get("/account/invoices").await;
        m.insert("invoice_id", inv.ok()["data"][0]["id"].to_string());
        let c = api
            .post(
                "/account/oauth-clients",
                json!({"label": "fixture-client", "redirect_uri": "https://example.org/cb"}),
            )
            .await;
        m.insert("client_id", c.ok()["id"].as_str().unwrap().to_string());
        // No sign-in happens in the fixtures: an id no account has still exercises 401, 403 and
        // 404 (another account's logins are not found either).
        m.insert("login_id", "999999".to_string());
        // A child account of the first account.
        let (ok, out, err) = s.admin(&["account", "list"]);
        assert!(ok, "{err}");
        let parent = out.lines().nth(1).and_then(|l| l.split_whitespace().next()).unwrap().to_string();
        let (ok, out, err) = s.admin(&[
            "account",
            "create",
            "--company",
            "Fixture Child",
            "--username",
            "fixture-child-owner",
            "--email",
            "c@example.com",
            "--parent",
            &parent,
        ]);
        assert!(ok, "{err}");
        m.insert("euuid", out.split_whitespace().nth(1).unwrap().to_string());
        // No load balancer can be created through the API in this branch yet: an id no account
        // has still exercises no token (401), no scope (403) and another account (404).
        m.entry("nodebalancer_id").or_insert_with(|| "999999".to_string());
        // A balancer has no VPC configuration (nubis places none in a VPC): any id is not found.
        m.insert("vpc_config_id", "1".to_string());

        // A backup id no instance has: the instance's checks come first.
        m.entry("backup_id").or_insert_with(|| "999999".to_string());
        Fixtures(m)
    }

    /// The path with its parameters filled; panics on a parameter without a fixture, so a new
    /// route cannot go untested.
    fn url(&self, template: &str) -> String {
        let mut out = String::new();
        let mut rest = template.trim_start_matches("/v4");
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let end = rest[start..].find('}').unwrap() + start;
            let name = &rest[start + 1..end];
            let v =
                self.0.get(name).unwrap_or_else(|| panic!("no fixture for path parameter {{{name}}} of {template}"));
            out.push_str(v);
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        out
    }
}

/// A public SSH key (ed25519, 32 zero bytes).
pub const FIXTURE_KEY: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA fixture";

/// Parameters naming catalog entries, which are not account entities.
const CATALOG_PARAMS: &[&str] = &["{region_id}", "{type_id}", "{image_id}", "{slug}", "{prefixlist_id}"];

async fn call(api: &Api, method: &str, url: &str) -> Resp {
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let body: Option<Value> = (m == reqwest::Method::POST || m == reqwest::Method::PUT).then(|| json!({}));
    api.send(m, url, body.as_ref(), &[]).await
}

#[tokio::test]
async fn every_route_has_a_policy_declaration() {
    let s = TestServer::start().await;
    let ops = operations(&s).await;
    assert!(ops.len() >= 25);
    for (m, path, id) in &ops {
        assert!(Op::from_name(id).is_some(), "{m} {path} ({id}) has no row in the policy table");
    }
    for op in Op::ALL {
        assert!(ops.iter().any(|(_, _, id)| id == op.name()), "policy row {} has no route", op.name());
    }
}

#[tokio::test]
async fn every_route_needs_a_token_unless_public() {
    let s = TestServer::start().await;
    let fx = Fixtures::make(&s).await;
    let anon = s.api().anonymous();
    for (m, path, id) in operations(&s).await {
        let op = Op::from_name(&id).unwrap();
        let r = call(&anon, &m, &fx.url(&path)).await;
        if op.policy().public {
            assert_ne!(r.status, 401, "{m} {path} is public");
        } else {
            assert_eq!(r.status, 401, "{m} {path} without a token: {}", r.text);
            r.expect_envelope();
        }
    }
}

#[tokio::test]
async fn every_scoped_route_refuses_a_token_without_its_scope() {
    let s = TestServer::start().await;
    let fx = Fixtures::make(&s).await;
    // A scope no operation uses.
    let t = s.api().post("/profile/tokens", json!({"scopes": "longview:read_only"})).await;
    let api = s.api_with(t.ok()["token"].as_str().unwrap());
    for (m, path, id) in operations(&s).await {
        let op = Op::from_name(&id).unwrap();
        if op.policy().scope.is_none() {
            continue;
        }
        let r = call(&api, &m, &fx.url(&path)).await;
        assert_eq!(r.status, 403, "{m} {path} with a token lacking {:?}: {}", op.policy().scope, r.text);
        r.expect_envelope();
        assert_eq!(r.header("x-accepted-oauth-scopes"), Some(op.policy().accepted_scopes().as_str()), "{m} {path}");
    }
}

#[tokio::test]
async fn every_unrestricted_only_route_refuses_restricted_users() {
    let s = TestServer::start().await;
    let fx = Fixtures::make(&s).await;
    let (_, restricted) = user_with_token(&s, "restricted-caller", true, "*").await;
    for (m, path, id) in operations(&s).await {
        let op = Op::from_name(&id).unwrap();
        if !op.policy().unrestricted_only {
            continue;
        }
        let r = call(&restricted, &m, &fx.url(&path)).await;
        assert_eq!(r.status, 403, "{m} {path} as a restricted user: {}", r.text);
    }
}

#[tokio::test]
async fn every_route_hides_another_accounts_entities() {
    let s = TestServer::start().await;
    let fx = Fixtures::make(&s).await;
    let other = other_account(&s);
    for (m, path, _) in operations(&s).await {
        if !path.contains('{') || CATALOG_PARAMS.iter().any(|p| path.contains(p)) {
            continue;
        }
        let r = call(&other, &m, &fx.url(&path)).await;
        assert_eq!(r.status, 404, "{m} {path} from another account: {}", r.text);
    }
    // And nothing was changed by those attempts.
    s.api().get("/account/users/fixture-user").await.ok();
}

/// The areas of VPCs, instances and addresses.
fn is_network_area(path: &str) -> bool {
    ["/v4/vpcs", "/v4/compute/instances", "/v4/networking"].iter().any(|p| path.starts_with(p))
}

#[tokio::test]
async fn a_restricted_user_without_grants_finds_no_entity_cannot_create_and_sees_empty_lists() {
    let s = TestServer::start().await;
    let fx = Fixtures::make(&s).await;
    let (_, bob) = user_with_token(&s, "no-grants", true, "*").await;
    let mut checked = 0;
    for (m, path, id) in operations(&s).await {
        // The account's default firewalls, the templates, the rule sets (read by every user of the
        // account), the prefix lists (nubis's own) and the VPC default ranges are no entities with
        // grants.
        let not_entities = [
            "/v4/networking/firewalls/settings",
            "/v4/networking/firewalls/templates",
            "/v4/networking/firewalls/rulesets",
            "/v4/networking/prefixlists",
            "/v4/vpcs/default-ranges",
        ];
        if !is_network_area(&path) || not_entities.iter().any(|p| path.starts_with(p)) {
            continue;
        }
        let r = call(&bob, &m, &fx.url(&path)).await;
        if path.contains('{') {
            assert_eq!(r.status, 404, "{m} {path} for a restricted user without grants: {}", r.text);
        } else if id == "vpc_create" || id == "instance_create" {
            assert_eq!(r.status, 403, "{m} {path} without the global grant: {}", r.text);
        } else if m == "GET" {
            assert_eq!(r.status, 200, "{m} {path}: {}", r.text);
            assert_eq!(r.body["results"], 0, "{m} {path} shows entities without grants: {}", r.text);
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} routes checked");
    // The owner still has everything.
    assert!(s.api().get("/compute/instances").await.ok()["results"].as_u64().unwrap() >= 1);
}
