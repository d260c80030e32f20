//! Balancer ownership across data-plane processes (issue 15, "Several replicas on one
//! PostgreSQL"): two `--role dataplane` processes and one `--role api` process on one
//! PostgreSQL, in loopback mode, with real traffic. Each balancer is served by exactly one data
//! plane (the one its lease names; the other has not bound its port), and when that process is
//! killed with SIGKILL the other serves its balancers within 10 seconds. And on both engines: a
//! `--role dataplane` process serves what a `--role api` process writes, and no API. And with two
//! API replicas and two data planes under load, one of each killed with SIGKILL: every
//! acknowledged write is there and the balancers keep serving.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::lb_support::*;
use crate::support::*;

/// Who holds each balancer's lease, straight from the database.
async fn lease_owners(s: &TestServer) -> BTreeMap<i64, String> {
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&s.database).await.expect("connect to the test database");
    let rows: Vec<(i64, String)> = sqlx::query_as("SELECT balancer_id, owner FROM dataplane_leases")
        .fetch_all(&mut conn)
        .await
        .expect("read the leases");
    let _ = conn.close().await;
    rows.into_iter().collect()
}

/// A data-plane process's `/healthz`.
async fn health(dp: &TestServer) -> Value {
    let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(5)).build().unwrap();
    let r = client.get(format!("http://{}/healthz", dp.addr)).send().await.expect("healthz");
    assert_eq!(r.status().as_u16(), 200);
    r.json().await.unwrap()
}

fn ids(v: &Value) -> Vec<i64> {
    v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect()
}

/// The balancers a data plane has bound a listener for.
fn bound(h: &Value) -> Vec<i64> {
    h["listening"].as_array().unwrap().iter().map(|l| l["balancer_id"].as_i64().unwrap()).collect()
}

#[tokio::test]
async fn each_balancer_is_served_by_one_data_plane_and_fails_over_after_a_kill() {
    if !on_postgres() {
        eprintln!(
            "skipped: several data-plane processes share balancers through PostgreSQL only (set TEST_DATABASE_URL)"
        );
        return;
    }
    let config = lb_config();
    let api_server = TestServer::start_with(Options {
        config: config.clone(),
        extra_args: vec!["--role".into(), "api".into()],
        ..Default::default()
    })
    .await;
    let dataplane = || {
        TestServer::start_with(Options {
            config: config.clone(),
            database: Some(api_server.database.clone()),
            extra_args: vec!["--role".into(), "dataplane".into()],
            ..Default::default()
        })
    };
    let mut dps = vec![dataplane().await, dataplane().await];
    let owner_of: Vec<String> = {
        let mut v = Vec::new();
        for dp in &dps {
            v.push(health(dp).await["owner"].as_str().unwrap().to_string());
        }
        v
    };
    assert_ne!(owner_of[0], owner_of[1]);
    // The API process runs no listener and the data-plane processes serve no API.
    let api = api_server.api();
    let r = Api::new(&dps[0].base, &api_server.token).get("/vpcs").await;
    assert_eq!(r.status, 404, "{}", r.text);

    let (_, private) = backend_instance(&api, "us-east").await;
    let _be = Backend::http("served", mapped(&private, 9300)).await;
    let mut balancers = BTreeMap::new();
    for _ in 0..4 {
        let nb = api.post("/nodebalancers", json!({"region": "us-east"})).await.ok().clone();
        let id = nb["id"].as_i64().unwrap();
        let c = api.post(&format!("/nodebalancers/{id}/configs"), json!({"port": 9301, "check": "none"})).await;
        let cid = c.ok()["id"].as_i64().unwrap();
        api.post(
            &format!("/nodebalancers/{id}/configs/{cid}/nodes"),
            json!({"label": "backend", "address": format!("{private}:9300")}),
        )
        .await
        .ok();
        balancers.insert(id, lb_addr(&nb, 9301));
    }
    // Every balancer answers through its address.
    for addr in balancers.values() {
        until_serving(*addr).await;
        assert_eq!(get(*addr, "/", None).await.unwrap().body, "served");
    }
    // Spread over both processes, each balancer leased to one and bound by that one only.
    let (leases, healths) = eventually(30, "the balancers spread over both data planes", || {
        let (dps, balancers, owner_of, api_server) = (&dps, &balancers, &owner_of, &api_server);
        async move {
            let leases = lease_owners(api_server).await;
            let healths = vec![health(&dps[0]).await, health(&dps[1]).await];
            let complete = balancers.keys().all(|id| leases.contains_key(id));
            let spread = owner_of.iter().all(|o| leases.values().filter(|v| *v == o).count() == 2);
            let settled = healths.iter().enumerate().all(|(i, h)| {
                let mut mine: Vec<i64> = leases.iter().filter(|(_, o)| **o == owner_of[i]).map(|(id, _)| *id).collect();
                mine.sort();
                let mut b = bound(h);
                b.sort();
                b.dedup();
                ids(&h["balancers"]) == mine && b == mine
            });
            (complete && spread && settled).then_some((leases, healths))
        }
    })
    .await;
    // The same through Prometheus.
    for dp in &dps {
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let text = client.get(format!("http://{}/metrics", dp.addr)).send().await.unwrap().text().await.unwrap();
        assert!(text.lines().any(|l| l == "nubis_dataplane_balancers_owned 2"), "{text}");
        assert!(text.lines().any(|l| l == "nubis_dataplane_listeners 2"), "{text}");
    }
    for (id, addr) in &balancers {
        let owner = &leases[id];
        let (i, other) = if *owner == owner_of[0] { (0, 1) } else { (1, 0) };
        assert!(ids(&healths[i]["balancers"]).contains(id));
        assert!(!ids(&healths[other]["balancers"]).contains(id), "{id} is owned by one process only");
        assert!(!bound(&healths[other]).contains(id), "the process that does not own {id} has not bound it");
        let listening = healths[other]["listening"].as_array().unwrap();
        assert!(listening.iter().all(|l| l["address"] != addr.to_string()), "{addr} bound by a non-owner");
        assert_eq!(get(*addr, "/", None).await.unwrap().body, "served");
    }

    // Kill -9 the first process: the second serves its balancers within 10 seconds.
    let victims: Vec<i64> = leases.iter().filter(|(_, o)| **o == owner_of[0]).map(|(id, _)| *id).collect();
    assert!(!victims.is_empty());
    // Steady traffic to the survivor's balancers meanwhile: none of it may fail.
    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for (id, addr) in balancers.iter().filter(|(id, _)| !victims.contains(id)) {
        let (id, addr, stop) = (*id, *addr, Arc::clone(&stop));
        load.push(tokio::spawn(async move {
            let (mut ok, mut failed) = (0u32, 0u32);
            while !stop.load(Ordering::Relaxed) {
                match get(addr, "/", None).await {
                    Ok(r) if r.status == 200 && r.body == "served" => ok += 1,
                    _ => failed += 1,
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (id, ok, failed)
        }));
    }
    dps[0].kill9();
    let killed = Instant::now();
    for id in &victims {
        let addr = balancers[id];
        eventually(10, &format!("balancer {id} served again after the kill"), || async move {
            get(addr, "/", None).await.ok().filter(|r| r.status == 200 && r.body == "served").map(|_| ())
        })
        .await;
    }
    let took = killed.elapsed();
    eprintln!("failover: the surviving data plane served the killed one's balancers {took:?} after SIGKILL");
    assert!(took < Duration::from_secs(10), "failover took {took:?}");
    stop.store(true, Ordering::Relaxed);
    for l in load {
        let (id, ok, failed) = l.await.unwrap();
        eprintln!("balancer {id} (owned by the survivor) during the failover: {ok} requests answered, {failed} failed");
        assert!(ok > 0 && failed == 0, "balancer {id}: {ok} answered, {failed} failed");
    }
    let leases = lease_owners(&api_server).await;
    for id in balancers.keys() {
        assert_eq!(leases.get(id), Some(&owner_of[1]), "balancer {id} now leased to the survivor");
    }
    let h = health(&dps[1]).await;
    let mut b = bound(&h);
    b.sort();
    b.dedup();
    assert_eq!(b, balancers.keys().copied().collect::<Vec<_>>());
    for addr in balancers.values() {
        assert_eq!(get(*addr, "/", None).await.unwrap().body, "served");
    }

    // The killed process comes back: the balancers spread over both again (the survivor lets go
    // of its surplus, which the newcomer then takes).
    dps[0].restart();
    let newcomer = health(&dps[0]).await["owner"].as_str().unwrap().to_string();
    assert_ne!(newcomer, owner_of[0], "a new process has a new owner id");
    let owners = [newcomer, owner_of[1].clone()];
    eventually(30, "the balancers spread over both data planes again", || {
        let (dps, owners, api_server) = (&dps, &owners, &api_server);
        async move {
            let leases = lease_owners(api_server).await;
            let mut settled = leases.len() == 4;
            for (i, dp) in dps.iter().enumerate() {
                let mine: Vec<i64> = leases.iter().filter(|(_, o)| **o == owners[i]).map(|(id, _)| *id).collect();
                let mut b = bound(&health(dp).await);
                b.sort();
                b.dedup();
                settled &= mine.len() == 2 && b == mine;
            }
            settled.then_some(())
        }
    })
    .await;
    for addr in balancers.values() {
        until_serving(*addr).await;
    }

    // A clean stop (SIGTERM) hands the balancers over at once: no lease is left to expire.
    assert!(dps[1].stop(), "a data-plane process stops cleanly on SIGTERM");
    let stopped = Instant::now();
    for addr in balancers.values() {
        let addr = *addr;
        eventually(10, &format!("{addr} served after a clean stop"), || async move {
            get(addr, "/", None).await.ok().filter(|r| r.status == 200 && r.body == "served").map(|_| ())
        })
        .await;
    }
    let took = stopped.elapsed();
    eprintln!("handover after SIGTERM: {took:?}");
    assert!(took < Duration::from_secs(4), "a clean stop hands over within a heartbeat or two: {took:?}");
    let leases = lease_owners(&api_server).await;
    assert!(leases.values().all(|o| *o == owners[0]), "{leases:?}");
}

#[tokio::test]
async fn a_data_plane_process_serves_what_an_api_process_writes_and_serves_no_api() {
    // Both engines: on SQLite the one data-plane process serves every balancer without leases.
    let config = lb_config();
    let api_server = TestServer::start_with(Options {
        config: config.clone(),
        extra_args: vec!["--role".into(), "api".into()],
        ..Default::default()
    })
    .await;
    let dp = TestServer::start_with(Options {
        config,
        database: Some(api_server.database.clone()),
        extra_args: vec!["--role".into(), "dataplane".into()],
        ..Default::default()
    })
    .await;
    let api = api_server.api();
    let (_, private) = backend_instance(&api, "us-east").await;
    let _be = Backend::http("split", mapped(&private, 9310)).await;
    let nb = api.post("/nodebalancers", json!({"region": "us-east"})).await.ok().clone();
    let id = nb["id"].as_i64().unwrap();
    let c = api.post(&format!("/nodebalancers/{id}/configs"), json!({"port": 9311, "check": "none"})).await;
    let cid = c.ok()["id"].as_i64().unwrap();
    let node = json!({"label": "backend", "address": format!("{private}:9310")});
    api.post(&format!("/nodebalancers/{id}/configs/{cid}/nodes"), node).await.ok();
    let addr = lb_addr(&nb, 9311);
    until_serving(addr).await;
    assert_eq!(get(addr, "/", None).await.unwrap().body, "split");
    // The data-plane process bound it (the API process did not: its bind would have failed).
    let h = health(&dp).await;
    assert_eq!(h["role"], "dataplane");
    assert_eq!(h["leased"], on_postgres(), "{h}");
    assert_eq!(ids(&h["balancers"]), vec![id]);
    assert!(h["listening"].as_array().unwrap().iter().any(|l| l["address"] == addr.to_string()), "{h}");
    // It answers no API request, with the error envelope.
    let r = Api::new(&dp.base, &api_server.token).get("/vpcs").await;
    r.expect_error(404, "-");
    // The balancer goes away with its delete, through the API process.
    api.delete(&format!("/nodebalancers/{id}")).await.ok();
    until_refused(addr).await;
}

/// A create through `base` that may fail to connect: the VPC's id when acknowledged (200).
async fn try_create_vpc(client: &reqwest::Client, base: &str, token: &str, label: &str) -> Option<i64> {
    let body = json!({"label": label, "region": "us-east"});
    let r = client.post(format!("{base}/vpcs")).bearer_auth(token).json(&body).send().await.ok()?;
    if r.status().as_u16() != 200 {
        assert!(r.status().as_u16() < 500 || r.status().as_u16() == 503, "{label}: {}", r.status());
        return None;
    }
    r.json::<Value>().await.ok()?["id"].as_i64()
}

#[tokio::test]
async fn an_api_replica_and_a_data_plane_killed_under_load_lose_nothing_acknowledged() {
    if !on_postgres() {
        eprintln!("skipped: several replicas share one database through PostgreSQL only (set TEST_DATABASE_URL)");
        return;
    }
    let config = lb_config();
    let start = |role: &str, database: Option<String>| {
        TestServer::start_with(Options {
            config: config.clone(),
            database,
            extra_args: vec!["--role".into(), role.into()],
            ..Default::default()
        })
    };
    let mut api1 = start("api", None).await;
    let api2 = start("api", Some(api1.database.clone())).await;
    let mut dps = vec![start("dataplane", Some(api1.database.clone())).await];
    dps.push(start("dataplane", Some(api1.database.clone())).await);
    let api = api2.api_with(&api1.token);
    let (_, private) = backend_instance(&api, "us-east").await;
    let _be = Backend::http("steady", mapped(&private, 9320)).await;
    let mut balancers = BTreeMap::new();
    for _ in 0..2 {
        let nb = api.post("/nodebalancers", json!({"region": "us-east"})).await.ok().clone();
        let id = nb["id"].as_i64().unwrap();
        let c = api.post(&format!("/nodebalancers/{id}/configs"), json!({"port": 9321, "check": "none"})).await;
        let cid = c.ok()["id"].as_i64().unwrap();
        let node = json!({"label": "backend", "address": format!("{private}:9320")});
        api.post(&format!("/nodebalancers/{id}/configs/{cid}/nodes"), node).await.ok();
        balancers.insert(id, lb_addr(&nb, 9321));
    }
    let owners = eventually(30, "one balancer on each data plane", || {
        let (dps, api1) = (&dps, &api1);
        async move {
            let leases = lease_owners(api1).await;
            let o0 = health(&dps[0]).await["owner"].as_str().unwrap().to_string();
            let spread = leases.len() == 2 && leases.values().filter(|o| **o == o0).count() == 1;
            spread.then_some(leases)
        }
    })
    .await;
    for addr in balancers.values() {
        until_serving(*addr).await;
    }
    let victim_owner = health(&dps[0]).await["owner"].as_str().unwrap().to_string();

    // Writers through both API replicas, traffic through both balancers.
    let stop = Arc::new(AtomicBool::new(false));
    let bases = [api1.base.clone(), api2.base.clone()];
    let mut writers = Vec::new();
    for w in 0..4 {
        let (stop, bases, token) = (Arc::clone(&stop), bases.clone(), api1.token.clone());
        writers.push(tokio::spawn(async move {
            let client = reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(10)).build().unwrap();
            let mut acknowledged = Vec::new();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let label = format!("w{w}-n{n}");
                if let Some(id) = try_create_vpc(&client, &bases[n % 2], &token, &label).await {
                    acknowledged.push((id, label));
                }
                n += 1;
            }
            acknowledged
        }));
    }
    let mut traffic = Vec::new();
    for (id, addr) in &balancers {
        let (id, addr, stop) = (*id, *addr, Arc::clone(&stop));
        traffic.push(tokio::spawn(async move {
            let (mut ok, mut failed, mut longest, mut since) = (0u32, 0u32, Duration::ZERO, None::<Instant>);
            while !stop.load(Ordering::Relaxed) {
                match get(addr, "/", None).await {
                    Ok(r) if r.status == 200 && r.body == "steady" => {
                        ok += 1;
                        if let Some(t) = since.take() {
                            longest = longest.max(t.elapsed());
                        }
                    }
                    _ => {
                        failed += 1;
                        since.get_or_insert_with(Instant::now);
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (id, ok, failed, longest, since.is_some())
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    api1.kill9();
    dps[0].kill9();
    tokio::time::sleep(Duration::from_secs(9)).await;
    stop.store(true, Ordering::Relaxed);

    let mut acknowledged = Vec::new();
    for w in writers {
        acknowledged.extend(w.await.unwrap());
    }
    for t in traffic {
        let (id, ok, failed, longest, still_down) = t.await.unwrap();
        eprintln!("balancer {id}: {ok} answered, {failed} failed, longest outage {longest:?}");
        assert!(!still_down, "balancer {id} is served again before the end");
        if owners[&id] == victim_owner {
            assert!(longest < Duration::from_secs(10), "balancer {id} was out for {longest:?}");
        } else {
            assert_eq!(failed, 0, "balancer {id} of the surviving data plane never failed");
        }
    }
    // Every acknowledged write is there, read through the surviving replica.
    assert!(acknowledged.len() > 20, "only {} writes were acknowledged", acknowledged.len());
    let mut stored = BTreeMap::new();
    for page in 1.. {
        let r = api.get(&format!("/vpcs?page={page}&page_size=500")).await;
        for v in r.ok()["data"].as_array().unwrap() {
            stored.insert(v["id"].as_i64().unwrap(), v["label"].as_str().unwrap().to_string());
        }
        if page >= r.body["pages"].as_i64().unwrap() {
            break;
        }
    }
    for (id, label) in &acknowledged {
        assert_eq!(stored.get(id), Some(label), "acknowledged VPC {id} ({label})");
    }
    eprintln!("{} acknowledged creates through two replicas, one killed with SIGKILL: all there", acknowledged.len());
}
