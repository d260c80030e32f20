//! The load-balancer walkthrough with nothing started by hand: two instances whose user data
//! serves HTTP, a balancer in front; one shut down through the API.

use std::collections::BTreeSet;

use serde_json::json;

use crate::common::*;
use crate::support::eventually;

#[tokio::test]
async fn two_instances_behind_a_balancer_answer_and_a_shut_down_one_leaves_the_rotation() {
    let _sweep = Sweeper::new();
    let server = server().await;
    let api = server.api();
    let ud = http_server_user_data(80);
    let a = instance(&api, json!({ "label": "web-a", "private_ip": true, "metadata": { "user_data": ud } })).await;
    let b = instance(&api, json!({ "label": "web-b", "private_ip": true, "metadata": { "user_data": ud } })).await;
    let (lb, config, vip) = balancer(&api, &[private_of(&a), private_of(&b)]).await;
    assert!(vip.starts_with("198.18."), "netns pools come from 198.18.0.0/15: {vip}");
    wait_nodes(&api, lb, config, 2, 0).await;
    let url = format!("http://{vip}/");
    let seen = eventually(30, "both back ends answering", || {
        let url = url.clone();
        async move {
            let mut seen = BTreeSet::new();
            for _ in 0..6 {
                seen.insert(host_get(&url).await?);
            }
            (seen.len() == 2).then_some(seen)
        }
    })
    .await;
    assert_eq!(seen, BTreeSet::from(["I am web-a".to_string(), "I am web-b".to_string()]));
    // The user data ran at boot, its output kept as the console log.
    let log = console(&server, a["id"].as_i64().unwrap());
    assert!(log.contains("serving on 80"), "console of web-a:\n{log}");
    // The balancer's address answers from inside an instance too.
    let from_inside = get_from(a["id"].as_i64().unwrap(), &url, &[]).expect("the balancer answers an instance");
    assert_eq!(from_inside.0, 200);

    let bid = b["id"].as_i64().unwrap();
    api.post_empty(&format!("/linode/instances/{bid}/shutdown")).await.ok();
    wait_status(&api, bid, "offline").await;
    wait_nodes(&api, lb, config, 1, 1).await;
    for _ in 0..6 {
        assert_eq!(host_get(&url).await.as_deref(), Some("I am web-a"));
    }
}

#[tokio::test]
async fn an_instance_whose_init_dies_goes_offline_with_an_event() {
    let _sweep = Sweeper::new();
    let server = server().await;
    let api = server.api();
    let a = instance(&api, json!({ "label": "crashy" })).await;
    let id = a["id"].as_i64().unwrap();
    // PID 1 of the instance is the child of the `unshare` holding its PID namespace.
    let ns = ns_of(id);
    let tag = ns.trim_start_matches("nubis").split('-').next().unwrap().to_string();
    let pid: u32 =
        std::fs::read_to_string(format!("/run/nubis/nubis{tag}/i{id}/init.pid")).unwrap().trim().parse().unwrap();
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
    let init: i32 = children.split_whitespace().next().unwrap().parse().unwrap();
    assert!(std::process::Command::new("kill").args(["-KILL", &init.to_string()]).status().unwrap().success());
    wait_status(&api, id, "offline").await;
    let events = api.get("/account/events").await;
    let e = events.ok()["data"].as_array().unwrap().iter().find(|e| e["entity"]["id"] == id).cloned().unwrap();
    assert_eq!(e["action"], "instance_shutdown");
    assert!(e["message"].as_str().unwrap_or_default().contains("init"), "{e}");
    // It boots again through the API.
    api.post_empty(&format!("/linode/instances/{id}/boot")).await.ok();
    wait_status(&api, id, "running").await;
}
