//! Service transfers (issue 13, spec 3.2, 4.4, 9): create, read, cancel, accept, completion,
//! expiry, visibility, the deprecated entity-transfer operations, and the races of the issue.
//! The refusals of 4.4 are in `service_transfer_conditions`.

use serde_json::{Value, json};

use crate::billing_invoices::db_exec;
use crate::instances::create_instance;
use crate::support::*;

/// An instance of the API's account with a private address, not booted.
pub(crate) async fn inst(api: &Api, label: &str) -> Value {
    create_instance(api, "us-east", json!({"label": label, "booted": false, "private_ip": true})).await
}

pub(crate) fn id(v: &Value) -> i64 {
    v["id"].as_i64().unwrap()
}

pub(crate) async fn create(api: &Api, ids: &[i64]) -> Resp {
    api.post("/account/service-transfers", json!({"entities": {"instances": ids}})).await
}

pub(crate) async fn created(api: &Api, ids: &[i64]) -> String {
    create(api, ids).await.ok()["token"].as_str().unwrap().to_string()
}

pub(crate) fn path(token: &str) -> String {
    format!("/account/service-transfers/{token}")
}

pub(crate) async fn accept(api: &Api, token: &str) -> Resp {
    api.post_empty(&format!("{}/accept", path(token))).await
}

/// Waits until the transfer reads `status` for `api`.
pub(crate) async fn wait_transfer(api: &Api, token: &str, status: &str) -> Value {
    eventually(15, &format!("transfer {token} to be {status}"), || {
        let api = api.clone();
        let p = path(token);
        let status = status.to_string();
        async move {
            let r = api.get(&p).await;
            (r.body["status"] == status.as_str()).then(|| r.body.clone())
        }
    })
    .await
}

/// A new account made with `nubis admin account create`: its owner's API, its euuid and its
/// contact address.
pub(crate) fn account(s: &TestServer) -> (Api, String, String) {
    let owner = unique("owner");
    let email = format!("{owner}@example.com");
    let (ok, out, err) = s.admin(&["account", "create", "--company", &owner, "--username", &owner, "--email", &email]);
    assert!(ok, "{err}");
    let euuid = out.split_whitespace().nth(1).unwrap().to_string();
    (s.api_with(&s.token_for(&owner, "*")), euuid, email)
}

/// The euuid of the first account (the bootstrap owner's, company `nubis`).
pub(crate) fn first_euuid(s: &TestServer) -> String {
    let (ok, out, err) = s.admin(&["account", "list"]);
    assert!(ok, "{err}");
    let line = out.lines().find(|l| l.split_whitespace().nth(2) == Some("nubis")).expect("the first account");
    line.split_whitespace().next().unwrap().to_string()
}

pub(crate) const FIRST_EMAIL: &str = "admin@nubis.invalid";

/// Gives the API's account a registered payment method (the simulated gateway's test card).
pub(crate) async fn add_payment_method(api: &Api) {
    api.post(
        "/account/payment-methods",
        json!({"type": "credit_card", "is_default": true,
               "data": {"card_number": "4111111111111111", "cvv": "123", "expiry_month": 12, "expiry_year": 2099}}),
    )
    .await
    .ok();
}

/// Gives the account a balance owed for longer than the payment term (no invoice of the last
/// 30 days covers it).
pub(crate) async fn make_past_due(s: &TestServer, euuid: &str) {
    db_exec(
        s,
        &format!(
            "INSERT INTO account_billing (account_id, billed_through) SELECT id, created FROM accounts \
             WHERE euuid = '{euuid}' ON CONFLICT (account_id) DO NOTHING; \
             UPDATE account_billing SET balance = 5000 WHERE account_id = (SELECT id FROM accounts WHERE euuid = '{euuid}')"
        ),
    )
    .await;
}

/// Pays the account's balance off (the test card is charged).
pub(crate) async fn pay_off(api: &Api) {
    api.post("/account/payments", json!({"usd": "50.00"})).await.ok();
}

/// An account that can receive transfers: made with `nubis admin`, with a payment method.
pub(crate) async fn receiver_account(s: &TestServer) -> Api {
    let (api, _, _) = account(s);
    add_payment_method(&api).await;
    api
}

/// Lets the first account receive transfers too.
pub(crate) async fn first_can_receive(s: &TestServer) {
    add_payment_method(&s.api()).await;
}

/// Events of an account with this action, newest first.
pub(crate) async fn events_of(api: &Api, action: &str) -> Vec<Value> {
    let r = api.get_filtered("/account/events?page_size=500", &json!({"action": action}).to_string()).await;
    r.ok()["data"].as_array().unwrap().clone()
}

/// Subjects of the messages queued to `recipient`.
fn outbox_subjects(s: &TestServer, recipient: &str) -> Vec<String> {
    let (ok, out, err) = s.admin(&["outbox"]);
    assert!(ok, "{err}");
    out.lines()
        .filter(|l| l.contains(&format!(" to {recipient} ")))
        .filter_map(|l| l.split('"').nth(1).map(str::to_string))
        .collect()
}

/// A config with a short expiry and a sweep every `sweep_ms`.
pub(crate) fn expiring_config(expiry_secs: u64, sweep_ms: u64) -> String {
    format!("{TEST_CONFIG}\n[transfers]\nexpiry_secs = {expiry_secs}\nsweep_interval_ms = {sweep_ms}\n")
}

#[tokio::test]
async fn a_transfer_of_two_instances_moves_them_with_their_addresses_to_the_receiver() {
    let s = TestServer::start().await;
    let sender = s.api();
    let (receiver, receiver_euuid, _) = account(&s);
    add_payment_method(&receiver).await;
    let (_, list, _) = s.admin(&["account", "list"]);
    let receiver_company =
        list.lines().find(|l| l.starts_with(&receiver_euuid)).unwrap().split_whitespace().nth(2).unwrap().to_string();
    let a = inst(&sender, "alpha").await;
    let b = inst(&sender, "bravo").await;
    let t = create(&sender, &[id(&a), id(&b)]).await.ok().clone();
    assert_eq!(t["status"], "pending");
    assert_eq!(t["is_sender"], true);
    assert_eq!(t["entities"]["instances"], json!([id(&a), id(&b)]));
    let token = t["token"].as_str().unwrap();
    let seen = receiver.get(&path(token)).await.ok().clone();
    assert_eq!(seen["is_sender"], false);
    assert_eq!(seen["status"], "pending");

    accept(&receiver, token).await.ok();
    let done = wait_transfer(&receiver, token, "completed").await;
    assert_eq!(done["is_sender"], false);
    assert_eq!(sender.get(&path(token)).await.ok()["status"], "completed");

    for before in [&a, &b] {
        let iid = id(before);
        let now = receiver.get(&format!("/compute/instances/{iid}")).await.ok().clone();
        assert_eq!(now["ipv4"], before["ipv4"], "public and private IPv4 travel with the instance");
        assert_eq!(now["ipv6"], before["ipv6"], "the SLAAC address travels with the instance");
        sender.get(&format!("/compute/instances/{iid}")).await.status_is(404);
        for addr in before["ipv4"].as_array().unwrap() {
            let addr = addr.as_str().unwrap();
            receiver.get(&format!("/networking/ips/{addr}")).await.ok();
            sender.get(&format!("/networking/ips/{addr}")).await.status_is(404);
        }
        let slaac = before["ipv6"].as_str().unwrap().split('/').next().unwrap();
        receiver.get(&format!("/networking/ips/{slaac}")).await.ok();
    }
    assert_eq!(sender.get("/compute/instances").await.ok()["results"], 0);
    assert_eq!(receiver.get("/compute/instances").await.ok()["results"], 2);
    // Billing for them moved with them: each has one open meter, the receiver's.
    for before in [&a, &b] {
        let open = format!(
            "SELECT COUNT(*) FROM meters m JOIN accounts x ON x.id = m.account_id WHERE m.service_type = 'instance' \
             AND m.service_id = {} AND m.ended IS NULL AND x.company = '{receiver_company}'",
            id(before)
        );
        assert_eq!(db_scalar(&s, &open).await, 1);
        let closed = format!(
            "SELECT COUNT(*) FROM meters WHERE service_type = 'instance' AND service_id = {} AND ended IS NOT NULL",
            id(before)
        );
        assert_eq!(db_scalar(&s, &closed).await, 1);
    }

    // A balancer of the sender can no longer use the instance's private address.
    let nb = sender.post("/nodebalancers", json!({"region": "us-east", "label": "sender-lb"})).await.ok().clone();
    let c = sender.post(&format!("/nodebalancers/{}/configs", nb["id"]), json!({"port": 80})).await.ok().clone();
    let private = a["ipv4"][1].as_str().unwrap();
    sender
        .post(
            &format!("/nodebalancers/{}/configs/{}/nodes", nb["id"], c["id"]),
            json!({"label": "gone", "address": format!("{private}:80")}),
        )
        .await
        .expect_error(400, "address");

    // Events in both accounts; the accept events are finished by the completion.
    assert_eq!(events_of(&sender, "entity_transfer_create").await.len(), 1);
    for api in [&sender, &receiver] {
        let acc = events_of(api, "entity_transfer_accept").await;
        assert_eq!(acc.len(), 1);
        assert_eq!(acc[0]["status"], "finished");
        assert_eq!(acc[0]["entity"]["type"], "entity_transfer");
        assert_eq!(acc[0]["entity"]["label"], token);
    }
    // The receiver gets the instances' history (the sender keeps its own), and the kept counts
    // followed the move.
    let created: Vec<Value> = events_of(&receiver, "instance_create").await;
    for before in [&a, &b] {
        assert!(created.iter().any(|e| e["entity"]["id"] == before["id"]), "history of {}: {created:?}", before["id"]);
    }
    assert_eq!(events_of(&sender, "instance_create").await.len(), 2);
    // (a page past the end answers `results` from the kept count, not from the rows)
    assert_eq!(sender.get("/compute/instances?page=2").await.ok()["results"], 0);
    assert_eq!(receiver.get("/compute/instances?page=2").await.ok()["results"], 2);
    // And the instances' new events are the receiver's (once provisioned: with the netns
    // driver that takes as long as making the namespace).
    crate::instances::wait_status(&receiver, id(&a), "offline").await;
    receiver.post_empty(&format!("/compute/instances/{}/boot", id(&a))).await.ok();
    assert!(!events_of(&receiver, "instance_boot").await.is_empty());
    assert!(events_of(&sender, "instance_boot").await.is_empty());
}

#[tokio::test]
async fn an_instance_transferred_while_it_provisions_finishes_provisioning_for_the_receiver() {
    let slow = TEST_CONFIG.replace("provision_ms = 20", "provision_ms = 3000");
    let s = TestServer::start_with(Options { config: slow, ..Default::default() }).await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let a = inst(&sender, "early").await;
    let token = create(&sender, &[id(&a)]).await.ok()["token"].as_str().unwrap().to_string();
    accept(&receiver, &token).await.ok();
    wait_transfer(&receiver, &token, "completed").await;
    assert_eq!(receiver.get(&format!("/compute/instances/{}", id(&a))).await.ok()["status"], "provisioning");
    crate::instances::wait_status(&receiver, id(&a), "offline").await;
}

#[tokio::test]
async fn the_token_is_a_uuid_and_a_malformed_token_names_no_transfer() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    let t = create(&api, &[id(&a)]).await.ok().clone();
    let token = t["token"].as_str().unwrap();
    assert_eq!(token.len(), 36);
    assert!(token.chars().enumerate().all(|(i, c)| if [8, 13, 18, 23].contains(&i) {
        c == '-'
    } else {
        c.is_ascii_hexdigit()
    }));
    for key in ["token", "status", "created", "updated", "is_sender", "expiry", "entities"] {
        assert!(t.get(key).is_some(), "no {key} in {t}");
    }
    api.get(&path(&token.to_uppercase())).await.ok();
    api.get(&path("not-a-uuid")).await.expect_envelope().status_is(404);
}

#[tokio::test]
async fn the_list_shows_the_transfers_an_account_created_and_accepted() {
    let s = TestServer::start().await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let a = inst(&sender, "alpha").await;
    let b = inst(&sender, "bravo").await;
    let t1 = created(&sender, &[id(&a)]).await;
    let t2 = created(&sender, &[id(&b)]).await;
    assert_eq!(
        receiver.get("/account/service-transfers").await.ok()["results"],
        0,
        "pending ones of others are not listed"
    );
    accept(&receiver, &t1).await.ok();
    let mine = sender.get("/account/service-transfers").await.ok().clone();
    assert_eq!(mine["results"], 2);
    let theirs = receiver.get("/account/service-transfers").await.ok().clone();
    assert_eq!(theirs["results"], 1);
    assert_eq!(theirs["data"][0]["token"], t1.as_str());
    assert_eq!(theirs["data"][0]["is_sender"], false);
    let pending = sender.get_filtered("/account/service-transfers", r#"{"status": "pending"}"#).await.ok().clone();
    assert_eq!(pending["results"], 1);
    assert_eq!(pending["data"][0]["token"], t2.as_str());
    let sent = receiver.get_filtered("/account/service-transfers", r#"{"is_sender": true}"#).await.ok().clone();
    assert_eq!(sent["results"], 0);
    let paged = sender.get("/account/service-transfers?page=2&page_size=25").await.ok().clone();
    assert_eq!(paged["data"], json!([]));
    assert_eq!(paged["results"], 2);
}

#[tokio::test]
async fn a_pending_transfer_reads_stale_after_its_expiry_even_before_the_sweep() {
    // The sweep runs once at start, then not for an hour; the clock moves without running it.
    let (s, ctl) = crate::controls::controlled(&[], Some(expiring_config(600, 3_600_000))).await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let a = inst(&sender, "alpha").await;
    let t = create(&sender, &[id(&a)]).await.ok().clone();
    let token = t["token"].as_str().unwrap();
    let (created_at, expiry) = (t["created"].as_str().unwrap(), t["expiry"].as_str().unwrap());
    assert!(expiry > created_at, "{t}");
    receiver.get(&path(token)).await.ok();
    ctl.post("/clock/advance", json!({"seconds": 601, "run_hooks": false})).await.ok();
    assert_eq!(sender.get(&path(token)).await.ok()["status"], "stale");
    assert!(events_of(&sender, "entity_transfer_stale").await.is_empty(), "no sweep has run yet");
    let listed = sender.get_filtered("/account/service-transfers", r#"{"status": "stale"}"#).await.ok().clone();
    assert_eq!(listed["results"], 1);
    receiver.get(&path(token)).await.status_is(404);
    accept(&receiver, token).await.status_is(404);
    let r = sender.delete(&path(token)).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("expired"), "{}", r.text);
    // The instance is free: a new transfer expires the old one on its way.
    created(&sender, &[id(&a)]).await;
    assert_eq!(events_of(&sender, "entity_transfer_stale").await.len(), 1);
}

#[tokio::test]
async fn the_sweep_expires_due_transfers_with_an_event_to_the_creator() {
    let s = TestServer::start_with(Options { config: expiring_config(1, 100), ..Default::default() }).await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    let token = created(&api, &[id(&a)]).await;
    let ev = eventually(10, "the stale event", || {
        let api = api.clone();
        async move { events_of(&api, "entity_transfer_stale").await.into_iter().next() }
    })
    .await;
    assert_eq!(ev["entity"]["label"], token.as_str());
    assert_eq!(
        db_scalar(&s, "SELECT COUNT(*) FROM service_transfers WHERE status = 'stale'").await,
        1,
        "the sweep wrote the state"
    );
}

#[tokio::test]
async fn the_sweep_expires_every_due_transfer_however_many_fell_due_at_once() {
    // The sweep reads the due transfers in batches of 500; 1,203 fall due together.
    let (s, ctl) = crate::controls::controlled(&[], Some(expiring_config(600, 3_600_000))).await;
    let api = s.api();
    let (_, account) = crate::list_pages::owner(&s).await;
    let cols = "token, account_id, status, created, updated, expiry";
    let exprs = format!(
        "'due-' || CAST(n.i AS TEXT), {account}, 'pending', '2026-01-01T00:00:00', '2026-01-01T00:00:00', \
         '2026-01-01T00:10:00'"
    );
    db_exec(&s, &crate::list_pages::copies(&s, "service_transfers", cols, &exprs, "SELECT 1 AS one", 1_203)).await;
    let a = inst(&api, "alpha").await;
    let kept = created(&api, &[id(&a)]).await;
    // A new transfer expires only the transfers holding its instances, not every one due.
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM service_transfers WHERE status = 'pending'").await, 1_204);
    ctl.post("/clock/advance", json!({"seconds": 60, "run_hooks": true})).await.ok();
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM service_transfers WHERE status = 'pending'").await, 1);
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM service_transfers WHERE status = 'stale'").await, 1_203);
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM events WHERE action = 'entity_transfer_stale'").await, 1_203);
    assert_eq!(api.get(&path(&kept)).await.ok()["status"], "pending", "not due yet");
    let stale = api.get_filtered("/account/service-transfers", r#"{"status": "stale"}"#).await.ok().clone();
    assert_eq!(stale["results"], 1_203);
}

#[tokio::test]
async fn messages_go_to_the_creator_on_create_and_cancel_and_to_both_on_accept() {
    let s = TestServer::start().await;
    let sender = s.api();
    let (receiver, _, receiver_mail) = account(&s);
    add_payment_method(&receiver).await;
    let sender_mail = FIRST_EMAIL;
    let a = inst(&sender, "alpha").await;
    let b = inst(&sender, "bravo").await;
    let t1 = created(&sender, &[id(&a)]).await;
    let t2 = created(&sender, &[id(&b)]).await;
    sender.delete(&path(&t1)).await.ok();
    accept(&receiver, &t2).await.ok();
    let to_sender = outbox_subjects(&s, sender_mail);
    for subject in ["Service transfer created", "Service transfer canceled", "Service transfer accepted"] {
        assert!(to_sender.iter().any(|x| x == subject), "{subject} not in {to_sender:?}");
    }
    let to_receiver = outbox_subjects(&s, &receiver_mail);
    assert_eq!(to_receiver, vec!["Service transfer accepted".to_string()]);
    // The confirmation carries the token.
    let (_, out, _) = s.admin(&["outbox"]);
    assert!(out.contains("Service transfer created"), "{out}");
    let eml = eventually(10, "the confirmation file", || {
        let dir = s.dir.join("outbox");
        let t1 = t1.clone();
        async move {
            std::fs::read_dir(&dir)
                .ok()?
                .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
                .find(|m| m.contains("Service transfer created") && m.contains(&t1))
        }
    })
    .await;
    assert!(eml.contains(&t1));
}

#[tokio::test]
async fn entity_transfer_operations_act_on_the_same_records_and_say_they_are_deprecated() {
    let s = TestServer::start().await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let a = inst(&sender, "alpha").await;
    let b = inst(&sender, "bravo").await;
    let r = sender.post("/account/entity-transfers", json!({"entities": {"linodes": [id(&a)]}})).await;
    assert_eq!(r.header("deprecation"), Some("true"));
    let token = r.ok()["token"].as_str().unwrap().to_string();
    assert_eq!(sender.get(&path(&token)).await.ok()["status"], "pending");
    let listed = sender.get("/account/entity-transfers").await;
    assert_eq!(listed.header("deprecation"), Some("true"));
    assert_eq!(listed.ok()["data"][0]["token"], token.as_str());
    let got = receiver.get(&format!("/account/entity-transfers/{token}")).await;
    assert_eq!(got.header("deprecation"), Some("true"));
    got.ok();
    let acc = receiver.post_empty(&format!("/account/entity-transfers/{token}/accept")).await;
    assert_eq!(acc.header("deprecation"), Some("true"));
    acc.ok();
    wait_transfer(&receiver, &token, "completed").await;
    let t2 = created(&sender, &[id(&b)]).await;
    let del = sender.delete(&format!("/account/entity-transfers/{t2}")).await;
    assert_eq!(del.header("deprecation"), Some("true"));
    del.ok();
    assert_eq!(sender.get(&path(&t2)).await.ok()["status"], "canceled");
    // Errors say so too, and the service-transfer operations do not.
    let missing = sender.get("/account/entity-transfers/00000000-0000-4000-8000-000000000000").await;
    assert_eq!(missing.header("deprecation"), Some("true"));
    missing.status_is(404);
    assert_eq!(sender.get("/account/service-transfers").await.header("deprecation"), None);
}

#[tokio::test]
async fn two_accounts_accepting_at_once_one_wins() {
    let s = TestServer::start().await;
    let sender = s.api();
    first_can_receive(&s).await;
    let a = inst(&sender, "alpha").await;
    for round in 0..3 {
        let r1 = receiver_account(&s).await;
        let r2 = receiver_account(&s).await;
        let token = created(&sender, &[id(&a)]).await;
        let (x, y) = tokio::join!(accept(&r1, &token), accept(&r2, &token));
        let wins = [&x, &y].iter().filter(|r| r.status == 200).count();
        assert_eq!(wins, 1, "round {round}: {} / {}", x.text, y.text);
        let (winner, loser) = if x.status == 200 { (&r1, &r2) } else { (&r2, &r1) };
        let lost = if x.status == 200 { &y } else { &x };
        // The loser's acceptance reads the transfer inside its write, after the winner's: an
        // accepted transfer is visible only to its two accounts, so it is not found.
        lost.status_is(404);
        wait_transfer(winner, &token, "completed").await;
        loser.get(&format!("/compute/instances/{}", id(&a))).await.status_is(404);
        // Hand it back for the next round.
        let back = created(winner, &[id(&a)]).await;
        accept(&sender, &back).await.ok();
        wait_transfer(&sender, &back, "completed").await;
        sender.get(&format!("/compute/instances/{}", id(&a))).await.ok();
    }
}

#[tokio::test]
async fn an_accept_racing_a_cancel_has_one_outcome() {
    let s = TestServer::start().await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    first_can_receive(&s).await;
    let a = inst(&sender, "alpha").await;
    for round in 0..5 {
        let token = created(&sender, &[id(&a)]).await;
        let p = path(&token);
        let (acc, del) = tokio::join!(accept(&receiver, &token), sender.delete(&p));
        assert!(acc.status == 200 || del.status == 200, "round {round}: {} / {}", acc.text, del.text);
        assert!(!(acc.status == 200 && del.status == 200), "round {round}: both won");
        if acc.status == 200 {
            wait_transfer(&sender, &token, "completed").await;
            let back = created(&receiver, &[id(&a)]).await;
            accept(&sender, &back).await.ok();
            wait_transfer(&sender, &back, "completed").await;
        } else {
            assert_eq!(sender.get(&path(&token)).await.ok()["status"], "canceled");
            receiver.get(&format!("/compute/instances/{}", id(&a))).await.status_is(404);
        }
        sender.get(&format!("/compute/instances/{}", id(&a))).await.ok();
    }
}

#[tokio::test]
async fn a_transfer_racing_a_balancer_attach_of_its_instance_has_one_outcome() {
    let s = TestServer::start().await;
    let api = s.api();
    let nb = api.post("/nodebalancers", json!({"region": "us-east", "label": "lb-one"})).await.ok().clone();
    let c = api.post(&format!("/nodebalancers/{}/configs", nb["id"]), json!({"port": 80})).await.ok().clone();
    let nodes = format!("/nodebalancers/{}/configs/{}/nodes", nb["id"], c["id"]);
    for round in 0..6 {
        let a = inst(&api, &format!("racer-{round}")).await;
        let private = a["ipv4"][1].as_str().unwrap();
        let ids = [id(&a)];
        let (t, n) = tokio::join!(
            create(&api, &ids),
            api.post(&nodes, json!({"label": format!("node-{round}"), "address": format!("{private}:80")}))
        );
        assert!(t.status == 200 || n.status == 200, "round {round}: {} / {}", t.text, n.text);
        assert!(!(t.status == 200 && n.status == 200), "round {round}: the instance is both a node and in a transfer");
        if t.status == 200 {
            n.expect_error(400, "address");
        } else {
            t.expect_error(400, "entities.instances[0]");
        }
    }
}

#[tokio::test]
async fn two_transfers_of_one_instance_at_once_leave_one() {
    let s = TestServer::start().await;
    let api = s.api();
    for round in 0..5 {
        let a = inst(&api, &format!("twice-{round}")).await;
        let ids = [id(&a)];
        let (x, y) = tokio::join!(create(&api, &ids), create(&api, &ids));
        assert_eq!([&x, &y].iter().filter(|r| r.status == 200).count(), 1, "round {round}: {} / {}", x.text, y.text);
        let lost = if x.status == 200 { &y } else { &x };
        lost.expect_error(400, "entities.instances[0]");
    }
}

#[tokio::test]
async fn an_instance_in_a_pending_transfer_cannot_be_deleted() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    let token = created(&api, &[id(&a)]).await;
    api.delete(&format!("/compute/instances/{}", id(&a))).await.expect_error(400, "-");
    api.delete(&path(&token)).await.ok();
    api.delete(&format!("/compute/instances/{}", id(&a))).await.ok();
}

#[tokio::test]
async fn grants_on_a_transferred_instance_are_withdrawn_and_the_receivers_restricted_users_need_new_ones() {
    let s = TestServer::start().await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let a = inst(&sender, "alpha").await;
    let (_, bob) = user_with_token(&s, "bob-sender", true, "*").await;
    sender
        .put("/account/users/bob-sender/grants", json!({"instance": [{"id": id(&a), "permissions": "read_write"}]}))
        .await
        .ok();
    bob.get(&format!("/compute/instances/{}", id(&a))).await.ok();
    let (_, carol) = {
        let u = receiver
            .post("/account/users", json!({"username": "carol-recv", "email": "c@example.com", "restricted": true}))
            .await
            .ok()
            .clone();
        (u, s.api_with(&s.token_for("carol-recv", "*")))
    };
    let token = created(&sender, &[id(&a)]).await;
    accept(&receiver, &token).await.ok();
    wait_transfer(&receiver, &token, "completed").await;
    bob.get(&format!("/compute/instances/{}", id(&a))).await.status_is(404);
    let g = sender.get("/account/users/bob-sender/grants").await.ok().clone();
    assert!(g["instance"].as_array().unwrap().iter().all(|e| e["id"] != id(&a)), "{g}");
    carol.get(&format!("/compute/instances/{}", id(&a))).await.status_is(404);
    receiver
        .put("/account/users/carol-recv/grants", json!({"instance": [{"id": id(&a), "permissions": "read_only"}]}))
        .await
        .ok();
    carol.get(&format!("/compute/instances/{}", id(&a))).await.ok();
}

#[tokio::test]
async fn a_condition_broken_between_acceptance_and_completion_fails_the_transfer_and_nothing_moves() {
    let mut config = TEST_CONFIG.to_string();
    config.push_str("\n[transfers]\ncomplete_after_ms = 3000\n");
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let a = inst(&sender, "alpha").await;
    let token = created(&sender, &[id(&a)]).await;
    accept(&receiver, &token).await.ok();
    assert_eq!(receiver.get(&path(&token)).await.ok()["status"], "accepted");
    sender
        .post(
            "/networking/firewalls",
            json!({"label": "late-fw", "rules": {"inbound_policy": "DROP", "outbound_policy": "ACCEPT"},
                   "devices": {"instances": [id(&a)]}}),
        )
        .await
        .ok();
    wait_transfer(&receiver, &token, "failed").await;
    sender.get(&format!("/compute/instances/{}", id(&a))).await.ok();
    receiver.get(&format!("/compute/instances/{}", id(&a))).await.status_is(404);
    for api in [&sender, &receiver] {
        let fail = events_of(api, "entity_transfer_fail").await;
        assert_eq!(fail.len(), 1);
        assert!(fail[0]["message"].as_str().unwrap().contains("late-fw"), "{}", fail[0]);
        assert_eq!(events_of(api, "entity_transfer_accept").await[0]["status"], "failed");
    }
    // The instance is free for another transfer once the firewall is gone.
    let fw = sender.get("/networking/firewalls").await.ok()["data"][0]["id"].clone();
    sender.delete(&format!("/networking/firewalls/{fw}")).await.ok();
    created(&sender, &[id(&a)]).await;
}
