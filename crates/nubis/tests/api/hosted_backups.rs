//! The Backup service of instances, as the hosted API has it (`/linode/instances/{id}/backups`
//! and `/compute/instances/{id}/backups`): enable and cancel (billed as an add-on), snapshots,
//! restore, the schedule of an instance update, the account-wide default; and the (empty)
//! volumes of an instance.

use serde_json::{Value, json};

use crate::billing_invoices::db_exec;
use crate::controls::controlled;
use crate::instances::{create_instance, id, wait_status};
use crate::support::*;

fn backups(i: i64) -> String {
    format!("/compute/instances/{i}/backups")
}

fn hosted(i: i64) -> String {
    format!("/linode/instances/{i}/backups")
}

/// An instance with an image (its disks and profile), offline, with backups enabled.
async fn backed_up(api: &Api, label: &str) -> i64 {
    let i = id(&create_instance(api, "us-east", json!({"label": label, "booted": false})).await);
    wait_status(api, i, "offline").await;
    api.post_empty(&format!("{}/enable", backups(i))).await.ok();
    i
}

/// An instance without disks, offline.
async fn empty_instance(api: &Api, region: &str, label: &str) -> i64 {
    let r = api.post("/compute/instances", json!({"region": region, "type": "g6-nanode-1", "label": label})).await;
    let i = id(r.ok());
    wait_status(api, i, "offline").await;
    i
}

async fn disks_of(api: &Api, i: i64) -> Vec<(String, i64, String)> {
    let r = api.get(&format!("/compute/instances/{i}/disks")).await;
    r.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (d["label"].as_str().unwrap().into(), d["size"].as_i64().unwrap(), d["filesystem"].as_str().unwrap().into())
        })
        .collect()
}

async fn config_labels(api: &Api, i: i64) -> Vec<String> {
    let r = api.get(&format!("/compute/instances/{i}/configs")).await;
    r.ok()["data"].as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap().to_string()).collect()
}

fn backup_disks(b: &Value) -> Vec<(String, i64, String)> {
    b["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (d["label"].as_str().unwrap().into(), d["size"].as_i64().unwrap(), d["filesystem"].as_str().unwrap().into())
        })
        .collect()
}

#[tokio::test]
async fn enabling_and_canceling_flip_the_service_choose_a_schedule_and_write_events() {
    let s = TestServer::start().await;
    let api = s.api();
    let i = id(&create_instance(&api, "us-east", json!({"label": "flip", "booted": false})).await);
    let before = api.get(&format!("/compute/instances/{i}")).await.ok()["backups"].clone();
    assert_eq!(before["enabled"], false);
    assert_eq!(before["available"], false);
    // The hosted API's path name.
    api.post_empty(&format!("{}/enable", hosted(i))).await.ok();
    let on = api.get(&format!("/linode/instances/{i}")).await.ok()["backups"].clone();
    assert_eq!(on["enabled"], true);
    assert!(on["schedule"]["day"].as_str().is_some_and(|d| d.ends_with("day")), "a day is chosen: {on}");
    assert!(on["schedule"]["window"].as_str().is_some_and(|w| w.starts_with('W')), "a window is chosen: {on}");
    wait_status(&api, i, "offline").await;
    api.post(&backups(i), json!({"label": "before-cancel"})).await.ok();
    api.post_empty(&format!("{}/cancel", backups(i))).await.ok();
    let off = api.get(&format!("/compute/instances/{i}")).await.ok()["backups"].clone();
    assert_eq!(off["enabled"], false);
    assert_eq!(off["available"], false, "cancel deletes the backups: {off}");
    let list = api.get(&backups(i)).await.ok().clone();
    assert_eq!(list["snapshot"]["current"], Value::Null, "{list}");
    let actions = event_actions(&api).await;
    for a in ["backups_enable", "backups_cancel"] {
        assert!(actions.contains(&a.to_string()), "{a} in {actions:?}");
    }
}

#[tokio::test]
async fn enabling_bills_the_backup_add_on_at_the_types_price() {
    let s = TestServer::start().await;
    let api = s.api();
    let i = id(&create_instance(&api, "us-east", json!({"label": "billed", "booted": false})).await);
    api.post_empty(&format!("{}/enable", backups(i))).await.ok();
    // Enabling again changes nothing (one add-on).
    api.post_empty(&format!("{}/enable", backups(i))).await.ok();
    let start = (chrono::Utc::now().naive_utc() - chrono::Duration::hours(50)).format("%Y-%m-%dT%H:%M:%S").to_string();
    db_exec(
        &s,
        &format!(
            "UPDATE meters SET started = '{start}'; UPDATE accounts SET created = '{start}' WHERE id = 1; \
             UPDATE account_billing SET billed_through = '{start}' WHERE account_id = 1;"
        ),
    )
    .await;
    let (ok, _, err) = s.admin(&["billing", "close"]);
    assert!(ok, "{err}");
    let t = api.get("/linode/types/g6-nanode-1").await.ok().clone();
    let price = t["addons"]["backups"]["price"]["hourly"].as_f64().unwrap();
    let invoices = api.get("/account/invoices").await.ok()["data"].as_array().unwrap().clone();
    let mut found = Vec::new();
    for inv in invoices {
        let items = api.get(&format!("/account/invoices/{}/items", inv["id"])).await;
        for it in items.ok()["data"].as_array().unwrap() {
            let label = it["label"].as_str().unwrap();
            if label.starts_with("Backups") && label.ends_with(&format!("({i})")) {
                found.push(it.clone());
            }
        }
    }
    assert!(!found.is_empty(), "an item of the backup add-on");
    let hours: i64 = found.iter().map(|it| it["quantity"].as_i64().unwrap()).sum();
    assert!((50..=52).contains(&hours), "one add-on metered since it was enabled: {found:?}");
    for it in &found {
        let unit: f64 = it["unit_price"].as_str().unwrap().parse().unwrap();
        assert!((unit - price).abs() < 1e-9, "{it} at {price}");
    }
}

#[tokio::test]
async fn a_snapshot_needs_the_service_and_holds_the_disks_and_profiles() {
    let s = TestServer::start().await;
    let api = s.api();
    let i = id(&create_instance(&api, "us-east", json!({"label": "snappy", "booted": false})).await);
    wait_status(&api, i, "offline").await;
    api.post(&backups(i), json!({"label": "first"})).await.expect_error(400, "-");
    api.post_empty(&format!("{}/enable", backups(i))).await.ok();
    api.post(&backups(i), json!({})).await.expect_error(400, "label");
    api.post(&backups(i), json!({"label": "x".repeat(256)})).await.expect_error(400, "label");
    let first = api.post(&hosted(i), json!({"label": "first"})).await.ok().clone();
    assert_eq!((first["type"].as_str(), first["status"].as_str()), (Some("snapshot"), Some("successful")));
    assert_eq!(first["label"], "first");
    assert_eq!(first["available"], true);
    assert!(first["finished"].is_string());
    assert_eq!(backup_disks(&first), disks_of(&api, i).await, "copies of the disks: {first}");
    let configs: Vec<String> =
        first["configs"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().into()).collect();
    assert_eq!(configs, config_labels(&api, i).await);
    // One slot: a new snapshot replaces the old one.
    let second = api.post(&backups(i), json!({"label": "second"})).await.ok().clone();
    let list = api.get(&hosted(i)).await.ok().clone();
    assert_eq!(list["automatic"], json!([]));
    assert_eq!(list["snapshot"]["current"]["id"], second["id"]);
    assert_eq!(list["snapshot"]["in_progress"], Value::Null);
    api.get(&format!("{}/{}", backups(i), id(&first))).await.expect_error(404, "-");
    assert_eq!(api.get(&format!("{}/{}", hosted(i), id(&second))).await.ok()["label"], "second");
    let rec = api.get(&format!("/compute/instances/{i}")).await.ok()["backups"].clone();
    assert_eq!(rec["available"], true);
    assert_eq!(rec["last_successful"], second["finished"]);
    // The list shows each instance's schedule and last backup, read together for the page:
    // this one's both, another's neither.
    let schedule = json!({"day": "Monday", "window": "W10"});
    api.put(&format!("/compute/instances/{i}"), json!({"backups": {"schedule": schedule.clone()}})).await.ok();
    let plain = id(&create_instance(&api, "us-east", json!({"label": "plain", "booted": false})).await);
    let page = api.get("/compute/instances?page_size=500").await.ok().clone();
    let listed = |wanted: i64| {
        page["data"].as_array().unwrap().iter().find(|r| r["id"] == wanted).expect("listed")["backups"].clone()
    };
    let (mine, theirs) = (listed(i), listed(plain));
    assert_eq!((mine["schedule"].clone(), mine["last_successful"].clone()), (schedule, second["finished"].clone()));
    assert_eq!(mine["available"], true);
    assert_eq!(theirs["schedule"], json!({"day": null, "window": null}), "{theirs}");
    assert_eq!((theirs["last_successful"].clone(), theirs["available"].clone()), (Value::Null, json!(false)));
    assert!(event_actions(&api).await.contains(&"instance_snapshot".to_string()));
    // Another account sees none of it.
    other_account(&s).get(&backups(i)).await.expect_error(404, "-");
}

#[tokio::test]
async fn a_restore_makes_the_backups_disks_and_profiles_on_the_target() {
    let s = TestServer::start().await;
    let api = s.api();
    let src = backed_up(&api, "source").await;
    let b = api.post(&backups(src), json!({"label": "snap"})).await.ok().clone();
    let bid = id(&b);
    // To another, empty instance: the disks fit.
    let empty = empty_instance(&api, "us-east", "empty").await;
    api.post(&format!("{}/{bid}/restore", hosted(src)), json!({"linode_id": empty, "overwrite": false})).await.ok();
    assert_eq!(disks_of(&api, empty).await, backup_disks(&b));
    assert_eq!(config_labels(&api, empty).await, config_labels(&api, src).await);
    let cfg = api.get(&format!("/compute/instances/{empty}/configs")).await.ok()["data"][0].clone();
    let restored: Vec<i64> = api.get(&format!("/compute/instances/{empty}/disks")).await.ok()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(id)
        .collect();
    assert!(
        restored.contains(&cfg["devices"]["sda"]["disk_id"].as_i64().unwrap()),
        "the profile names the new disks: {cfg}"
    );
    assert!(event_actions(&api).await.contains(&"backups_restore".to_string()));
    // To an instance whose disks fill its plan: only with overwrite.
    let full = id(&create_instance(&api, "us-east", json!({"label": "full", "booted": false})).await);
    wait_status(&api, full, "offline").await;
    let r = api.post(&format!("{}/{bid}/restore", backups(src)), json!({"instance_id": full})).await;
    r.expect_error(400, "overwrite");
    api.post(&format!("{}/{bid}/restore", backups(src)), json!({"instance_id": full, "overwrite": true})).await.ok();
    assert_eq!(disks_of(&api, full).await, backup_disks(&b), "its disks were replaced");
    assert_eq!(config_labels(&api, full).await.len(), b["configs"].as_array().unwrap().len());
    // Overwriting a running instance is refused.
    let running = id(&create_instance(&api, "us-east", json!({"label": "running"})).await);
    wait_status(&api, running, "running").await;
    api.post(&format!("{}/{bid}/restore", backups(src)), json!({"instance_id": running, "overwrite": true}))
        .await
        .expect_error(400, "overwrite");
    // To itself.
    api.post(&format!("{}/{bid}/restore", backups(src)), json!({"instance_id": src, "overwrite": true})).await.ok();
    assert_eq!(disks_of(&api, src).await, backup_disks(&b));
    // An unknown backup.
    api.post(&format!("{}/999999/restore", backups(src)), json!({"instance_id": empty})).await.expect_error(404, "-");
}

#[tokio::test]
async fn a_restore_stays_in_the_region_and_the_account_and_waits_for_a_busy_target() {
    let (s, ctl) = controlled(&[], None).await;
    let api = s.api();
    let src = backed_up(&api, "origin").await;
    let bid = id(api.post(&backups(src), json!({"label": "snap"})).await.ok());
    let restore = |target: Value| {
        let api = api.clone();
        async move { api.post(&format!("{}/{bid}/restore", backups(src)), json!({"instance_id": target})).await }
    };
    restore(Value::Null).await.expect_error(400, "instance_id");
    let west = empty_instance(&api, "us-west", "west").await;
    restore(json!(west)).await.expect_error(400, "instance_id");
    let other = other_account(&s);
    let theirs = id(&create_instance(&other, "us-east", json!({"label": "theirs"})).await);
    restore(json!(theirs)).await.expect_error(400, "instance_id");
    // A target that stays provisioning is busy.
    ctl.post("/faults", json!({"kind": "instance_provisioning", "count": 1})).await.ok();
    let stuck =
        api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": "stuck"})).await;
    let stuck = id(stuck.ok());
    eventually(10, "the fault to be used", || {
        let ctl = ctl.clone();
        async move { (ctl.get("/faults").await.body["results"] == 0).then_some(()) }
    })
    .await;
    assert_eq!(api.get(&format!("/compute/instances/{stuck}")).await.ok()["status"], "provisioning");
    let r = restore(json!(stuck)).await;
    r.expect_error(400, "instance_id");
    assert!(r.body["errors"][0]["reason"].as_str().unwrap().contains("busy"), "{}", r.text);
}

#[tokio::test]
async fn a_restricted_user_needs_read_write_to_change_backups() {
    let s = TestServer::start().await;
    let api = s.api();
    let i = backed_up(&api, "granted").await;
    let bid = id(api.post(&backups(i), json!({"label": "snap"})).await.ok());
    let target = empty_instance(&api, "us-east", "target").await;
    let (_, bob) = user_with_token(&s, "bobbackups", true, "*").await;
    api.put(
        "/account/users/bobbackups/grants",
        json!({"instance": [{"id": i, "permissions": "read_only"}, {"id": target, "permissions": "read_only"}]}),
    )
    .await
    .ok();
    bob.get(&backups(i)).await.ok();
    bob.get(&format!("{}/{bid}", backups(i))).await.ok();
    bob.get(&format!("/compute/instances/{i}/volumes")).await.ok();
    bob.post(&backups(i), json!({"label": "mine"})).await.expect_error(403, "-");
    bob.post_empty(&format!("{}/enable", backups(i))).await.expect_error(403, "-");
    bob.post_empty(&format!("{}/cancel", backups(i))).await.expect_error(403, "-");
    bob.post(&format!("{}/{bid}/restore", backups(i)), json!({"instance_id": target})).await.expect_error(403, "-");
    // read_write on the source only: the target still needs it.
    api.put("/account/users/bobbackups/grants", json!({"instance": [{"id": i, "permissions": "read_write"}]}))
        .await
        .ok();
    bob.post(&backups(i), json!({"label": "mine"})).await.ok();
    bob.post(&format!("{}/{bid}/restore", backups(i)), json!({"instance_id": target})).await.status_is(403);
}

#[tokio::test]
async fn the_update_sets_a_schedule_from_the_documents_enums() {
    let s = TestServer::start().await;
    let api = s.api();
    let i = id(&create_instance(&api, "us-east", json!({"label": "sched", "booted": false})).await);
    let path = format!("/compute/instances/{i}");
    let r = api.put(&path, json!({"backups": {"schedule": {"day": "Monday", "window": "W10"}}})).await;
    assert_eq!(r.ok()["backups"]["schedule"], json!({"day": "Monday", "window": "W10"}));
    // One of the two changes alone; `Scheduling` leaves it.
    let r = api.put(&path, json!({"backups": {"schedule": {"window": "W22", "day": "Scheduling"}}})).await;
    assert_eq!(r.ok()["backups"]["schedule"], json!({"day": "Monday", "window": "W22"}));
    api.put(&path, json!({"backups": {"schedule": {"day": "monday"}}})).await.expect_error(400, "backups.schedule.day");
    api.put(&path, json!({"backups": {"schedule": {"window": "W3"}}}))
        .await
        .expect_error(400, "backups.schedule.window");
    // Enabling keeps a chosen schedule.
    api.post_empty(&format!("{}/enable", backups(i))).await.ok();
    assert_eq!(api.get(&path).await.ok()["backups"]["schedule"], json!({"day": "Monday", "window": "W22"}));
    // A fetched record sent back is accepted.
    let rec = api.get(&path).await.ok().clone();
    api.put(&path, json!({"backups": rec["backups"]})).await.ok();
}

#[tokio::test]
async fn the_account_setting_enrolls_new_instances() {
    let s = TestServer::start().await;
    let api = s.api();
    let before = create_instance(&api, "us-east", json!({"label": "plain"})).await;
    assert_eq!(before["backups"]["enabled"], false);
    let asked = create_instance(&api, "us-east", json!({"label": "asked", "backups_enabled": true})).await;
    assert_eq!(asked["backups"]["enabled"], true);
    api.put("/account/settings", json!({"backups_enabled": true})).await.ok();
    let after = create_instance(&api, "us-east", json!({"label": "enrolled"})).await;
    assert_eq!(after["backups"]["enabled"], true);
    assert!(after["backups"]["schedule"]["day"].is_string(), "{after}");
}

#[tokio::test]
async fn an_instance_has_no_volumes() {
    let s = TestServer::start().await;
    let api = s.api();
    let i = id(&create_instance(&api, "us-east", json!({"label": "novol"})).await);
    for path in [format!("/compute/instances/{i}/volumes"), format!("/linode/instances/{i}/volumes")] {
        let r = api.get(&path).await;
        assert_eq!(r.ok().clone(), json!({"data": [], "page": 1, "pages": 1, "results": 0}), "{path}");
    }
    other_account(&s).get(&format!("/compute/instances/{i}/volumes")).await.expect_error(404, "-");
}

/// Open backup meters of instance `i`: (account id, hourly price in millionths).
async fn open_backup_meters(s: &TestServer, i: i64) -> Vec<(i64, i64)> {
    let count = db_scalar(
        s,
        &format!("SELECT COUNT(*) FROM meters WHERE service_type = 'backup' AND service_id = {i} AND ended IS NULL"),
    )
    .await;
    let account = db_scalar(
        s,
        &format!("SELECT COALESCE(MAX(account_id), 0) FROM meters WHERE service_type = 'backup' AND service_id = {i} AND ended IS NULL"),
    )
    .await;
    let hourly = db_scalar(
        s,
        &format!("SELECT COALESCE(MAX(hourly_micro), 0) FROM meters WHERE service_type = 'backup' AND service_id = {i} AND ended IS NULL"),
    )
    .await;
    (0..count).map(|_| (account, hourly)).collect()
}

fn backup_hourly_micros(t: &Value) -> i64 {
    (t["addons"]["backups"]["price"]["hourly"].as_f64().unwrap() * 1e6).round() as i64
}

#[tokio::test]
async fn a_resize_bills_the_backup_add_on_at_the_new_plans_price() {
    let s = TestServer::start().await;
    let api = s.api();
    let i = backed_up(&api, "resized-backups").await;
    let small = backup_hourly_micros(api.get("/linode/types/g6-nanode-1").await.ok());
    let large = backup_hourly_micros(api.get("/linode/types/g6-standard-1").await.ok());
    assert_ne!(small, large, "the two plans' backup prices differ");
    assert_eq!(open_backup_meters(&s, i).await, [(1, small)]);
    api.post(&format!("/compute/instances/{i}/resize"), json!({"type": "g6-standard-1"})).await.ok();
    // One add-on, at the new plan's price, once the resize is done.
    eventually(15, "the backup add-on at the new plan's price", || async {
        let open = open_backup_meters(&s, i).await;
        (open == [(1, large)]).then_some(())
    })
    .await;
    wait_status(&api, i, "offline").await;
    assert_eq!(open_backup_meters(&s, i).await, [(1, large)]);
}

#[tokio::test]
async fn a_service_transfer_moves_the_backup_add_on_with_the_instance() {
    use crate::service_transfers::{accept, created, receiver_account, wait_transfer};
    let s = TestServer::start().await;
    let api = s.api();
    let i = backed_up(&api, "moved-backups").await;
    let receiver = receiver_account(&s).await;
    let token = created(&api, &[i]).await;
    accept(&receiver, &token).await.ok();
    wait_transfer(&receiver, &token, "completed").await;
    let open = open_backup_meters(&s, i).await;
    assert_eq!(open.len(), 1, "{open:?}");
    assert_ne!(open[0].0, 1, "the add-on is billed to the receiving account now");
    let closed = db_scalar(
        &s,
        &format!("SELECT COUNT(*) FROM meters WHERE service_type = 'backup' AND service_id = {i} AND account_id = 1 AND ended IS NOT NULL"),
    )
    .await;
    assert_eq!(closed, 1, "the sender's add-on meter ended at the transfer");
}

#[tokio::test]
async fn an_instance_created_from_a_backup_gets_its_disks_and_profiles_and_boots() {
    let s = TestServer::start().await;
    let api = s.api();
    let src = backed_up(&api, "origin").await;
    let bid = id(api.post(&backups(src), json!({"label": "snap"})).await.ok());
    let base = json!({"region": "us-east", "type": "g6-nanode-1", "backup_id": bid});
    let with = |extra: Value| {
        let mut b = base.clone();
        b.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        b
    };
    // Refused on the field that breaks a rule, and nothing made.
    let before = api.get("/compute/instances").await.ok()["results"].clone();
    api.post("/compute/instances", with(json!({"image": "linode/debian12", "root_pass": "aComplexP@ssword-1"})))
        .await
        .expect_error(400, "image");
    api.post("/compute/instances", with(json!({"backup_id": 999_999}))).await.expect_error(400, "backup_id");
    api.post("/compute/instances", with(json!({"region": "us-west"}))).await.expect_error(400, "region");
    other_account(&s).post("/compute/instances", base.clone()).await.expect_error(400, "backup_id");
    assert_eq!(api.get("/compute/instances").await.ok()["results"], before);
    // Made: the backup's disks and profiles, booted by default (as an image deployment is).
    let made = id(api.post("/linode/instances", with(json!({"label": "from-backup"}))).await.ok());
    wait_status(&api, made, "running").await;
    assert_eq!(disks_of(&api, made).await, disks_of(&api, src).await);
    assert_eq!(config_labels(&api, made).await, config_labels(&api, src).await);
    // A restricted user needs read_write on the backup's instance.
    let (_, bob) = user_with_token(&s, "bobfrombackup", true, "*").await;
    api.put(
        "/account/users/bobfrombackup/grants",
        json!({"global": {"add_instances": true}, "instance": [{"id": src, "permissions": "read_only"}]}),
    )
    .await
    .ok();
    bob.post("/compute/instances", with(json!({"label": "bobs"}))).await.status_is(403);
    api.put("/account/users/bobfrombackup/grants", json!({"instance": [{"id": src, "permissions": "read_write"}]}))
        .await
        .ok();
    bob.post("/compute/instances", with(json!({"label": "bobs"}))).await.ok();
}

#[tokio::test]
async fn automatic_backups_are_taken_once_a_day_in_the_window_and_three_are_kept() {
    let (s, ctl) = controlled(&[], None).await;
    let api = s.api();
    let i = backed_up(&api, "daily").await;
    // A window about half a day away, so the steps below cross it exactly when they mean to.
    let now = ctl.get("/clock").await.ok()["now"].as_str().unwrap().to_string();
    let hour: i64 = now[11..13].parse().unwrap();
    let window = format!("W{}", (hour + 12) / 2 * 2 % 24);
    api.put(&format!("/compute/instances/{i}"), json!({"backups": {"schedule": {"window": window}}})).await.ok();
    let advance = |hours: i64| {
        let ctl = ctl.clone();
        async move { ctl.post("/clock/advance", json!({"seconds": hours * 3600})).await.ok().clone() }
    };
    let automatic = || {
        let api = api.clone();
        async move { api.get(&hosted(i)).await.ok()["automatic"].as_array().unwrap().clone() }
    };
    assert!(automatic().await.is_empty(), "none before a window passed");
    // A day later the window has come once: one automatic backup of the disks and profiles.
    advance(25).await;
    let one = automatic().await;
    assert_eq!(one.len(), 1, "{one:?}");
    assert_eq!((one[0]["type"].as_str(), one[0]["status"].as_str()), (Some("auto"), Some("successful")));
    assert_eq!(backup_disks(&one[0]), disks_of(&api, i).await);
    // Within the same day: no second one.
    advance(1).await;
    assert_eq!(automatic().await.len(), 1);
    // Each further day adds one; the newest three are kept, newest first.
    for expected in [2, 3, 3] {
        advance(24).await;
        assert_eq!(automatic().await.len(), expected);
    }
    let kept = automatic().await;
    assert!(kept[0]["created"].as_str() > kept[2]["created"].as_str(), "newest first: {kept:?}");
    assert_ne!(kept[2]["id"], one[0]["id"], "the oldest went");
    // A cancelled service takes none (and its backups are gone).
    api.post_empty(&format!("{}/cancel", backups(i))).await.ok();
    advance(25).await;
    assert!(automatic().await.is_empty());
}
