//! What newcomers meet first in the walkthrough: a node added to a config is checked at once, a
//! new `check_interval` applies from the next check, and `roundrobin` is one rotation per config
//! across all the data plane's worker threads.

mod common;

use std::time::Duration;

use common::*;
use nubis_model::balancer::*;

/// Settings with the configs' own check intervals (no test override) and several workers.
fn real_intervals() -> nubis_dataplane::DataplaneSettings {
    nubis_dataplane::DataplaneSettings { check_interval_override: None, worker_threads: 4, ..test_settings() }
}

async fn within(secs: u64, what: &str, f: impl Future<Output = ()>) {
    tokio::time::timeout(Duration::from_secs(secs), f).await.unwrap_or_else(|_| panic!("{what} took over {secs} s"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roundrobin_alternates_strictly_across_worker_threads() {
    let a = backend("127.168.40.1:0", "a", Kind::Http).await;
    let b = backend("127.168.40.2:0", "b", Kind::Http).await;
    let c = config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept), node(2, &b, 1, NodeMode::Accept)]);
    let settings = nubis_dataplane::DataplaneSettings { worker_threads: 4, ..test_settings() };
    let dp = Dp::start(settings, vec![balancer(40, "127.10.40.1", vec![c])]).await;
    let lb = dp.listening(40, 1).await;
    dp.wait_status(40, 1, 1, NodeStatus::Up).await;
    dp.wait_status(40, 1, 2, NodeStatus::Up).await;
    // One new connection per request, as `curl` in a loop: they land on different workers.
    let mut names = Vec::new();
    for _ in 0..24 {
        names.push(get(lb, "/").await.unwrap().backend().to_string());
    }
    for w in names.windows(2) {
        assert_ne!(w[0], w[1], "consecutive requests went to the same node: {names:?}");
    }
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_added_to_a_config_is_checked_at_once() {
    let a = backend("127.168.41.1:0", "a", Kind::Http).await;
    let b = backend("127.168.41.2:0", "b", Kind::Http).await;
    let mut c = config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)]);
    c.check.interval_secs = 30;
    let mut dp = Dp::start(real_intervals(), vec![balancer(41, "127.10.41.1", vec![c.clone()])]).await;
    dp.listening(41, 1).await;
    within(5, "the first check", dp.wait_status(41, 1, 1, NodeStatus::Up)).await;
    c.nodes.push(node(2, &b, 1, NodeMode::Accept));
    dp.publish(vec![balancer(41, "127.10.41.1", vec![c])]);
    within(5, "the check of the added node", dp.wait_status(41, 1, 2, NodeStatus::Up)).await;
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_check_interval_applies_from_the_next_check() {
    let a = backend("127.168.42.1:0", "a", Kind::Http).await;
    let mut c = config(1, 8080, Protocol::Http, vec![node(1, &a, 1, NodeMode::Accept)]);
    c.check.interval_secs = 30;
    c.check.attempts = 1;
    c.check.passive = false;
    let mut dp = Dp::start(real_intervals(), vec![balancer(42, "127.10.42.1", vec![c.clone()])]).await;
    dp.listening(42, 1).await;
    within(5, "the first check", dp.wait_status(42, 1, 1, NodeStatus::Up)).await;
    c.check.interval_secs = 1;
    dp.publish(vec![balancer(42, "127.10.42.1", vec![c])]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    a.stop().await;
    // With the old interval the failure would be seen 30 s after the first check.
    within(6, "the node going down", dp.wait_status(42, 1, 1, NodeStatus::Down)).await;
    dp.handle.shutdown().await;
}
