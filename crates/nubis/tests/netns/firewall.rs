//! Cloud Firewalls enforced on an instance's packets.

use serde_json::json;

use crate::common::*;

fn nft_of(id: i64) -> String {
    in_ns(id, &["nft", "list", "ruleset"]).1
}

#[tokio::test]
async fn a_rule_dropping_tcp_80_from_the_balancer_takes_the_node_down_and_its_removal_brings_it_back() {
    let _sweep = Sweeper::new();
    let server = server().await;
    let api = server.api();
    let web = instance(
        &api,
        json!({ "label": "web-fw", "private_ip": true, "metadata": { "user_data": http_server_user_data(80) } }),
    )
    .await;
    let id = web["id"].as_i64().unwrap();
    let (lb, config, vip) = balancer(&api, &[private_of(&web)]).await;
    wait_nodes(&api, lb, config, 1, 0).await;
    let fw = api
        .post(
            "/networking/firewalls",
            json!({ "label": "drop-lb", "devices": { "linodes": [id] }, "rules": {
                "inbound_policy": "ACCEPT", "outbound_policy": "ACCEPT",
                "inbound": [{ "action": "DROP", "protocol": "TCP", "ports": "80",
                              "addresses": { "ipv4": [format!("{vip}/32")] } }],
            }}),
        )
        .await;
    let fw = fw.ok()["id"].as_i64().unwrap();
    wait_nodes(&api, lb, config, 0, 1).await;
    assert!(nft_of(id).contains(&format!("ip saddr {vip} tcp dport 80 drop")), "{}", nft_of(id));
    // Other sources still reach it: the rule is about the balancer's address only.
    let public = web["ipv4"][0].as_str().unwrap();
    assert_eq!(host_get(&format!("http://{public}/")).await.as_deref(), Some("I am web-fw"));

    api.put(
        &format!("/networking/firewalls/{fw}/rules"),
        json!({ "inbound": [], "inbound_policy": "ACCEPT", "outbound": [], "outbound_policy": "ACCEPT" }),
    )
    .await
    .ok();
    wait_nodes(&api, lb, config, 1, 0).await;

    // A DROP policy filters everything else; disabling the firewall stops filtering.
    api.put(
        &format!("/networking/firewalls/{fw}/rules"),
        json!({ "inbound": [], "inbound_policy": "DROP", "outbound": [], "outbound_policy": "ACCEPT" }),
    )
    .await
    .ok();
    wait_nodes(&api, lb, config, 0, 1).await;
    assert_eq!(host_get(&format!("http://{public}/")).await, None);
    api.put(&format!("/networking/firewalls/{fw}"), json!({ "status": "disabled" })).await.ok();
    wait_nodes(&api, lb, config, 1, 0).await;
    assert!(!nft_of(id).contains("chain input"), "{}", nft_of(id));
}
