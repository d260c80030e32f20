//! The one-active-firewall and one-balancer rules under concurrent requests (issue 5,
//! "Concurrency"): requests that would each break a rule race, and at most one succeeds.

use serde_json::json;

use crate::firewall_devices::{add_device, balancer, instance, instance_firewall_ids};
use crate::firewalls::{create_firewall, fw_path, id};
use crate::support::*;

/// Active firewalls per instance, straight from the database.
async fn max_active_per_instance(s: &TestServer) -> i64 {
    db_scalar(
        s,
        "SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n FROM firewall_devices d \
         JOIN firewalls f ON f.id = d.firewall_id WHERE f.status = 'enabled' AND d.instance_id IS NOT NULL \
         GROUP BY d.instance_id) t",
    )
    .await
}

#[tokio::test]
async fn concurrent_adds_of_one_instance_to_two_enabled_firewalls_leave_one_active() {
    let s = TestServer::start().await;
    let api = s.api();
    let f1 = create_firewall(&api, "race-1", json!({})).await;
    let f2 = create_firewall(&api, "race-2", json!({})).await;
    let mut instances = Vec::new();
    for i in 0..6 {
        instances.push(instance(&api, &format!("race-{i}")).await);
    }
    let mut tasks = Vec::new();
    for inst in &instances {
        for f in [&f1, &f2] {
            let (api, f, iid) = (api.clone(), f.clone(), id(inst));
            tasks.push(tokio::spawn(async move { (iid, add_device(&api, &f, "instance", iid).await) }));
        }
    }
    let mut ok_per_instance = std::collections::HashMap::<i64, usize>::new();
    for t in tasks {
        let (iid, r) = t.await.unwrap();
        match r.status {
            200 => *ok_per_instance.entry(iid).or_default() += 1,
            400 => {
                r.expect_error(400, "id");
            }
            other => panic!("unexpected {other}: {}", r.text),
        }
    }
    for inst in &instances {
        assert_eq!(ok_per_instance.get(&id(inst)), Some(&1), "exactly one firewall for {}", inst["label"]);
        assert_eq!(instance_firewall_ids(&api, id(inst)).await.len(), 1);
    }
    assert_eq!(max_active_per_instance(&s).await, 1);
}

#[tokio::test]
async fn concurrent_enables_of_two_firewalls_on_one_service_leave_one_active() {
    let s = TestServer::start().await;
    let api = s.api();
    for round in 0..4 {
        let x = instance(&api, &format!("both-{round}")).await;
        let mut fws = Vec::new();
        for k in 0..2 {
            let f = create_firewall(&api, &format!("en-{round}-{k}"), json!({})).await;
            api.put(&fw_path(&f), json!({"status": "disabled"})).await.ok();
            add_device(&api, &f, "instance", id(&x)).await.ok();
            fws.push(f);
        }
        let tasks: Vec<_> = fws
            .iter()
            .map(|f| {
                let (api, p) = (api.clone(), fw_path(f));
                tokio::spawn(async move { api.put(&p, json!({"status": "enabled"})).await })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            let r = t.await.unwrap();
            match r.status {
                200 => ok += 1,
                400 => {
                    r.expect_error(400, "status");
                }
                other => panic!("unexpected {other}: {}", r.text),
            }
        }
        assert_eq!(ok, 1, "round {round}: exactly one enable succeeds");
        let statuses: Vec<String> = firewall_statuses(&api, &fws).await;
        assert_eq!(statuses.iter().filter(|s| *s == "enabled").count(), 1, "{statuses:?}");
    }
    assert_eq!(max_active_per_instance(&s).await, 1);
}

async fn firewall_statuses(api: &Api, fws: &[serde_json::Value]) -> Vec<String> {
    let mut out = Vec::new();
    for f in fws {
        out.push(api.get(&fw_path(f)).await.ok()["status"].as_str().unwrap().to_string());
    }
    out
}

#[tokio::test]
async fn a_concurrent_enable_and_device_add_leave_one_active_firewall() {
    let s = TestServer::start().await;
    let api = s.api();
    for round in 0..4 {
        let x = instance(&api, &format!("mixed-{round}")).await;
        let disabled = create_firewall(&api, &format!("dis-{round}"), json!({})).await;
        api.put(&fw_path(&disabled), json!({"status": "disabled"})).await.ok();
        add_device(&api, &disabled, "instance", id(&x)).await.ok();
        let enabled = create_firewall(&api, &format!("ena-{round}"), json!({})).await;
        let enable = {
            let (api, p) = (api.clone(), fw_path(&disabled));
            tokio::spawn(async move { api.put(&p, json!({"status": "enabled"})).await })
        };
        let attach = {
            let (api, f, iid) = (api.clone(), enabled.clone(), id(&x));
            tokio::spawn(async move { add_device(&api, &f, "instance", iid).await })
        };
        let (e, a) = (enable.await.unwrap(), attach.await.unwrap());
        assert!(e.status == 200 || e.status == 400, "{}", e.text);
        assert!(a.status == 200 || a.status == 400, "{}", a.text);
        assert_eq!((e.status == 200) as u8 + (a.status == 200) as u8, 1, "round {round}: {} / {}", e.text, a.text);
    }
    assert_eq!(max_active_per_instance(&s).await, 1);
}

#[tokio::test]
async fn concurrent_balancer_adds_keep_one_balancer_per_firewall_and_one_active_firewall_per_balancer() {
    let s = TestServer::start().await;
    let api = s.api();
    for round in 0..4 {
        // Two balancers racing onto one firewall.
        let b1 = balancer(&api, &format!("nb-a-{round}")).await;
        let b2 = balancer(&api, &format!("nb-b-{round}")).await;
        let f = create_firewall(&api, &format!("one-nb-{round}"), json!({})).await;
        let tasks: Vec<_> = [b1, b2]
            .into_iter()
            .map(|b| {
                let (api, f) = (api.clone(), f.clone());
                tokio::spawn(async move { add_device(&api, &f, "nodebalancer", b).await })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            let r = t.await.unwrap();
            assert!(r.status == 200 || r.status == 400, "{}", r.text);
            ok += usize::from(r.status == 200);
        }
        assert_eq!(ok, 1, "round {round}: one balancer per firewall");
        // One balancer racing onto two enabled firewalls.
        let b3 = balancer(&api, &format!("nb-c-{round}")).await;
        let g1 = create_firewall(&api, &format!("g1-{round}"), json!({})).await;
        let g2 = create_firewall(&api, &format!("g2-{round}"), json!({})).await;
        let tasks: Vec<_> = [g1, g2]
            .into_iter()
            .map(|g| {
                let api = api.clone();
                tokio::spawn(async move { add_device(&api, &g, "nodebalancer", b3).await })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            let r = t.await.unwrap();
            assert!(r.status == 200 || r.status == 400, "{}", r.text);
            ok += usize::from(r.status == 200);
        }
        assert_eq!(ok, 1, "round {round}: one active firewall per balancer");
        assert_eq!(api.get(&format!("/nodebalancers/{b3}/firewalls")).await.ok()["results"], 1);
    }
    let most_balancers = db_scalar(
        &s,
        "SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n FROM firewall_devices \
         WHERE nodebalancer_id IS NOT NULL GROUP BY firewall_id) t",
    )
    .await;
    assert_eq!(most_balancers, 1);
}
