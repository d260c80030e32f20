//! Service transfers: every refusal of spec 4.4, at create and at accept, and of a canceled or
//! an accepted transfer (the helpers are those
//! of `service_transfers`).

use serde_json::json;

use crate::instances::create_instance;
use crate::service_transfers::*;
use crate::support::*;

#[tokio::test]
async fn create_needs_instances_named_once() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    api.post("/account/service-transfers", json!({})).await.expect_error(400, "entities.instances");
    create(&api, &[]).await.expect_error(400, "entities.instances");
    create(&api, &[id(&a), id(&a)]).await.expect_error(400, "entities.instances[1]");
    // The reference's name for the same field.
    api.post("/account/service-transfers", json!({"entities": {"linodes": [id(&a)]}})).await.ok();
}

#[tokio::test]
async fn create_refuses_instances_the_account_does_not_own() {
    let s = TestServer::start().await;
    let other = other_account(&s);
    let theirs = inst(&other, "theirs").await;
    let mine = inst(&s.api(), "mine").await;
    let r = create(&s.api(), &[id(&mine), id(&theirs), 999_999]).await;
    r.expect_error(400, "entities.instances[1]").expect_error(400, "entities.instances[2]");
    assert!(r.text.contains(&id(&theirs).to_string()), "{}", r.text);
    assert_eq!(s.api().get("/account/service-transfers").await.ok()["results"], 0, "nothing changes on a refusal");
}

#[tokio::test]
async fn create_refuses_an_instance_already_in_a_pending_transfer() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    let b = inst(&api, "bravo").await;
    created(&api, &[id(&a)]).await;
    let r = create(&api, &[id(&b), id(&a)]).await;
    r.expect_error(400, "entities.instances[1]");
    assert!(r.text.contains("alpha"), "{}", r.text);
}

#[tokio::test]
async fn create_refuses_an_instance_that_is_a_balancer_node() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    let nb = api.post("/nodebalancers", json!({"region": "us-east", "label": "lb-one"})).await.ok().clone();
    let c = api.post(&format!("/nodebalancers/{}/configs", nb["id"]), json!({"port": 80})).await.ok().clone();
    let private = a["ipv4"][1].as_str().unwrap();
    api.post(
        &format!("/nodebalancers/{}/configs/{}/nodes", nb["id"], c["id"]),
        json!({"label": "node-1", "address": format!("{private}:80")}),
    )
    .await
    .ok();
    let r = create(&api, &[id(&a)]).await;
    r.expect_error(400, "entities.instances[0]");
    assert!(r.text.contains("alpha") && r.text.contains("load balancer"), "{}", r.text);
}

#[tokio::test]
async fn create_refuses_an_instance_that_is_a_firewall_device() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    api.post(
        "/networking/firewalls",
        json!({"label": "fw-one", "rules": {"inbound_policy": "DROP", "outbound_policy": "ACCEPT"},
               "devices": {"instances": [id(&a)]}}),
    )
    .await
    .ok();
    let r = create(&api, &[id(&a)]).await;
    r.expect_error(400, "entities.instances[0]");
    assert!(r.text.contains("alpha") && r.text.contains("firewall 'fw-one'"), "{}", r.text);
}

#[tokio::test]
async fn create_refuses_an_instance_on_a_vlan() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = create_instance(
        &api,
        "us-east",
        json!({"label": "alpha", "booted": false, "interfaces": [{"purpose": "public"}, {"purpose": "vlan", "label": "back"}]}),
    )
    .await;
    let r = create(&api, &[id(&a)]).await;
    r.expect_error(400, "entities.instances[0]");
    assert!(r.text.contains("alpha") && r.text.contains("VLAN 'back'"), "{}", r.text);
}

#[tokio::test]
async fn create_refuses_an_instance_on_a_vpc() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = api
        .post("/vpcs", json!({"label": "net", "region": "us-east", "subnets": [{"label": "s", "ipv4": "10.0.0.0/24"}]}))
        .await
        .ok()
        .clone();
    let a = create_instance(
        &api,
        "us-east",
        json!({"label": "alpha", "booted": false, "interfaces": [{"purpose": "vpc", "subnet_id": v["subnets"][0]["id"]}]}),
    )
    .await;
    let r = create(&api, &[id(&a)]).await;
    r.expect_error(400, "entities.instances[0]");
    assert!(r.text.contains("alpha") && r.text.contains("VPC"), "{}", r.text);
}

#[tokio::test]
async fn create_refuses_an_instance_with_a_shared_address() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    let b = inst(&api, "bravo").await;
    api.post("/networking/ips/share", json!({"instance_id": id(&b), "ips": [a["ipv4"][0]]})).await.ok();
    // Both the instance whose address is shared and the one it is shared with are refused.
    let r = create(&api, &[id(&a), id(&b)]).await;
    r.expect_error(400, "entities.instances[0]").expect_error(400, "entities.instances[1]");
    assert!(r.text.contains(a["ipv4"][0].as_str().unwrap()), "{}", r.text);
}

#[tokio::test]
async fn create_refuses_an_instance_with_an_ipv6_range() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    api.post("/networking/ipv6/ranges", json!({"prefix_length": 64, "instance_id": id(&a)})).await.ok();
    let r = create(&api, &[id(&a)]).await;
    r.expect_error(400, "entities.instances[0]");
    assert!(r.text.contains("alpha") && r.text.contains("IPv6 range"), "{}", r.text);
}

#[tokio::test]
async fn create_refuses_an_account_with_a_terms_of_service_violation() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    let e = first_euuid(&s);
    let (ok, _, err) = s.admin(&["account", "tos-violation", &e, "--on"]);
    assert!(ok, "{err}");
    let r = create(&api, &[id(&a)]).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("terms-of-service"), "{}", r.text);
    let (ok, _, err) = s.admin(&["account", "tos-violation", &e, "--off"]);
    assert!(ok, "{err}");
    create(&api, &[id(&a)]).await.ok();
}

#[tokio::test]
async fn create_refuses_an_account_with_a_past_due_balance() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    make_past_due(&s, &first_euuid(&s)).await;
    let r = create(&api, &[id(&a)]).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("past-due"), "{}", r.text);
}

#[tokio::test]
async fn create_refuses_instances_under_a_managed_service() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    api.post_empty("/account/settings/managed-enable").await.ok();
    let r = create(&api, &[id(&a)]).await;
    r.expect_error(400, "entities.instances[0]");
    assert!(r.text.contains("alpha") && r.text.contains("managed service"), "{}", r.text);
}

#[tokio::test]
async fn accept_needs_a_payment_method_and_no_past_due_balance() {
    let s = TestServer::start().await;
    let sender = s.api();
    let (receiver, e, _) = account(&s);
    let a = inst(&sender, "alpha").await;
    let token = created(&sender, &[id(&a)]).await;
    let r = accept(&receiver, &token).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("payment method"), "{}", r.text);
    add_payment_method(&receiver).await;
    make_past_due(&s, &e).await;
    let r = accept(&receiver, &token).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("past-due"), "{}", r.text);
    pay_off(&receiver).await;
    accept(&receiver, &token).await.ok();
}

#[tokio::test]
async fn accept_refuses_instances_that_came_under_a_managed_service() {
    let s = TestServer::start().await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let a = inst(&sender, "alpha").await;
    let token = created(&sender, &[id(&a)]).await;
    sender.post_empty("/account/settings/managed-enable").await.ok();
    let r = accept(&receiver, &token).await;
    r.expect_error(400, "entities.instances[0]");
    assert!(r.text.contains("managed service"), "{}", r.text);
}

#[tokio::test]
async fn the_transfer_of_a_cancelled_account_cannot_be_accepted() {
    let s = TestServer::start().await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    first_can_receive(&s).await;
    let a = inst(&sender, "alpha").await;
    let token = created(&sender, &[id(&a)]).await;
    sender.post("/account/cancel", json!({"comments": "moving on"})).await.ok();
    let r = accept(&receiver, &token).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("cancelled"), "{}", r.text);
}

#[tokio::test]
async fn users_of_the_creating_account_cannot_accept() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = inst(&api, "alpha").await;
    let token = created(&api, &[id(&a)]).await;
    let (_, colleague) = user_with_token(&s, "colleague", false, "*").await;
    for who in [&api, &colleague] {
        let r = accept(who, &token).await;
        r.expect_error(400, "-");
        assert!(r.text.contains("created this transfer"), "{}", r.text);
    }
    assert_eq!(api.get(&path(&token)).await.ok()["status"], "pending");
}

#[tokio::test]
async fn accept_rechecks_the_instances_and_names_the_one_that_no_longer_qualifies() {
    let s = TestServer::start().await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let a = inst(&sender, "alpha").await;
    let b = inst(&sender, "bravo").await;
    let token = created(&sender, &[id(&a), id(&b)]).await;
    // The sender puts one instance behind a firewall while the transfer is pending.
    let fw = sender
        .post(
            "/networking/firewalls",
            json!({"label": "late-fw", "rules": {"inbound_policy": "DROP", "outbound_policy": "ACCEPT"},
                   "devices": {"instances": [id(&b)]}}),
        )
        .await
        .ok()
        .clone();
    let r = accept(&receiver, &token).await;
    r.expect_error(400, "entities.instances[1]");
    assert!(r.text.contains("bravo") && r.text.contains("late-fw"), "{}", r.text);
    assert_eq!(receiver.get(&path(&token)).await.ok()["status"], "pending", "nothing changes on a refusal");
    // Cured before the expiry, the transfer can be accepted.
    sender.delete(&format!("/networking/firewalls/{}", fw["id"])).await.ok();
    accept(&receiver, &token).await.ok();
    wait_transfer(&receiver, &token, "completed").await;
}

#[tokio::test]
async fn accept_refuses_a_terms_of_service_violation_of_either_account() {
    let s = TestServer::start().await;
    let sender = s.api();
    let (receiver, receiver_euuid, _) = account(&s);
    add_payment_method(&receiver).await;
    let a = inst(&sender, "alpha").await;
    let token = created(&sender, &[id(&a)]).await;
    for (e, words) in [(receiver_euuid, "Your account"), (first_euuid(&s), "created this transfer")] {
        assert!(s.admin(&["account", "tos-violation", &e, "--on"]).0);
        let r = accept(&receiver, &token).await;
        r.expect_error(400, "-");
        assert!(r.text.contains("terms-of-service") && r.text.contains(words), "{}", r.text);
        assert!(s.admin(&["account", "tos-violation", &e, "--off"]).0);
    }
    accept(&receiver, &token).await.ok();
}

#[tokio::test]
async fn accept_refuses_an_instance_whose_label_the_receiver_already_uses() {
    let s = TestServer::start().await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let a = inst(&sender, "same-name").await;
    inst(&receiver, "same-name").await;
    let token = created(&sender, &[id(&a)]).await;
    let r = accept(&receiver, &token).await;
    r.expect_error(400, "entities.instances[0]");
    assert!(r.text.contains("same-name"), "{}", r.text);
}

#[tokio::test]
async fn a_canceled_transfer_cannot_be_accepted_and_only_its_creator_sees_it() {
    let s = TestServer::start().await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let a = inst(&sender, "alpha").await;
    let token = created(&sender, &[id(&a)]).await;
    receiver.delete(&path(&token)).await.status_is(403);
    sender.delete(&path(&token)).await.ok();
    assert_eq!(sender.get(&path(&token)).await.ok()["status"], "canceled");
    receiver.get(&path(&token)).await.status_is(404);
    accept(&receiver, &token).await.status_is(404);
    sender.delete(&path(&token)).await.expect_error(400, "-");
    assert_eq!(events_of(&sender, "entity_transfer_cancel").await.len(), 1);
    // The instance is free for another transfer.
    created(&sender, &[id(&a)]).await;
}

#[tokio::test]
async fn an_accepted_transfer_cannot_be_canceled_and_only_the_two_accounts_see_it() {
    let s = TestServer::start().await;
    let sender = s.api();
    let receiver = receiver_account(&s).await;
    let third = receiver_account(&s).await;
    let a = inst(&sender, "alpha").await;
    let token = created(&sender, &[id(&a)]).await;
    third.get(&path(&token)).await.ok();
    accept(&receiver, &token).await.ok();
    let r = sender.delete(&path(&token)).await;
    r.expect_error(400, "-");
    assert!(r.text.contains("accepted"), "{}", r.text);
    third.get(&path(&token)).await.status_is(404);
    accept(&third, &token).await.status_is(404);
    receiver.get(&path(&token)).await.ok();
    sender.get(&path(&token)).await.ok();
    // A second accept by the receiver is refused.
    accept(&receiver, &token).await.expect_error(400, "-");
}
