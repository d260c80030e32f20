//! Load balancers under concurrent requests: creates never share an address or a port, and a
//! node added while its instance is deleted never outlives it.

use serde_json::json;

use crate::lb_support::*;
use crate::nodebalancers::{count, id, new_balancer};

#[tokio::test]
async fn concurrent_creates_never_share_an_address_or_a_port() {
    let s = lb_server().await;
    let api = s.api();
    // Balancers and instances created at once, from one pool: every address differs.
    let mut tasks = Vec::new();
    for i in 0..8 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            if i % 2 == 0 {
                api.post("/nodebalancers", json!({"region": "us-east"})).await.ok()["ipv4"]
                    .as_str()
                    .unwrap()
                    .to_string()
            } else {
                let body = json!({"region": "us-east", "type": "g6-nanode-1", "booted": false});
                api.post("/compute/instances", body).await.ok()["ipv4"][0].as_str().unwrap().to_string()
            }
        }));
    }
    let mut addrs = Vec::new();
    for t in tasks {
        addrs.push(t.await.unwrap());
    }
    let n = addrs.len();
    addrs.sort();
    addrs.dedup();
    assert_eq!(addrs.len(), n, "{addrs:?}");
    // Configs on one port at once: exactly one wins, the others are told why.
    let nb = id(&new_balancer(&api, json!({"region": "us-east"})).await);
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let api = api.clone();
        tasks.push(tokio::spawn(async move {
            api.post(&format!("/nodebalancers/{nb}/configs"), json!({"port": 9090})).await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        let r = t.await.unwrap();
        if r.status == 200 {
            ok += 1;
        } else {
            r.expect_error(400, "port");
        }
    }
    assert_eq!(ok, 1);
    assert_eq!(api.get(&format!("/nodebalancers/{nb}/configs")).await.ok()["results"], 1);
}

#[tokio::test]
async fn a_node_added_while_its_instance_is_deleted_never_outlives_it() {
    let s = lb_server().await;
    let api = s.api();
    let nb = id(&new_balancer(&api, json!({"region": "us-east"})).await);
    let cid = id(&api.post(&format!("/nodebalancers/{nb}/configs"), json!({})).await.ok().clone());
    for round in 0..3 {
        let (iid, p) = backend_instance(&api, "us-east").await;
        let (a, b) = (api.clone(), api.clone());
        let label = format!("race-{round}");
        let add = tokio::spawn(async move {
            a.post(
                &format!("/nodebalancers/{nb}/configs/{cid}/nodes"),
                json!({"label": label, "address": format!("{p}:80")}),
            )
            .await
        });
        let del = tokio::spawn(async move { b.delete(&format!("/compute/instances/{iid}")).await });
        let (add, del) = (add.await.unwrap(), del.await.unwrap());
        // The delete always goes through (it takes the instance's nodes with it); a node added
        // first went with it, one added after found no instance behind its address.
        del.ok();
        if add.status != 200 {
            add.expect_error(400, "address");
        }
        api.get(&format!("/compute/instances/{iid}")).await.status_is(404);
        assert_eq!(count(&s, "nodebalancer_nodes").await, 0, "round {round}: no node outlives its instance");
    }
}
