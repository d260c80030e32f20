//! The billing engine: metering, invoices closed at month end and by the operator, promo credits.

use serde_json::{Value, json};

use crate::support::*;

/// Runs one statement on the server's database (to move recorded times into the past, which
/// the API cannot do).
pub async fn db_exec(server: &TestServer, sql: &str) {
    if let Some(path) = server.database.strip_prefix("sqlite://") {
        let c = rusqlite::Connection::open(path).expect("open the test database");
        // The server's own writer (the fence keeper after a bulk insert, the statistics refresh)
        // may hold the write lock for seconds on a loaded machine.
        c.busy_timeout(std::time::Duration::from_secs(60)).unwrap();
        c.execute_batch(sql).expect("statement");
        return;
    }
    use sqlx::Connection;
    let mut conn = sqlx::PgConnection::connect(&server.database).await.expect("connect to the test database");
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string())).execute(&mut conn).await.expect("statement");
    let _ = conn.close().await;
}

/// `YYYY-MM-DDTHH:MM:SS` of a chrono time.
fn ts(t: chrono::NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S").to_string()
}

fn month_start(t: chrono::NaiveDateTime) -> chrono::NaiveDateTime {
    use chrono::Datelike;
    chrono::NaiveDate::from_ymd_opt(t.year(), t.month(), 1).unwrap().and_hms_opt(0, 0, 0).unwrap()
}

/// Moves the account (id 1, the bootstrap account) and its usage so far back to `start`.
async fn backdate_account(s: &TestServer, account_id: i64, start: &str) {
    db_exec(
        s,
        &format!(
            "UPDATE accounts SET created = '{start}' WHERE id = {account_id}; \
             UPDATE account_billing SET billed_through = '{start}' WHERE account_id = {account_id};"
        ),
    )
    .await;
}

fn cents(v: &Value) -> i64 {
    (v.as_f64().unwrap() * 100.0).round() as i64
}

pub async fn add_card(api: &Api, number: &str, is_default: bool) -> crate::support::Resp {
    api.post(
        "/account/payment-methods",
        json!({"type": "credit_card", "is_default": is_default,
               "data": {"card_number": number, "cvv": "123", "expiry_month": 12, "expiry_year": 2099}}),
    )
    .await
}

#[tokio::test]
async fn month_end_closes_one_invoice_per_month_with_exact_items_and_adds_it_to_the_balance() {
    let s = TestServer::start().await;
    let api = s.api();
    let i = api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1", "label": "web1"})).await;
    let iid = i.ok()["id"].as_i64().unwrap();
    let gone =
        api.post("/compute/instances", json!({"region": "us-east", "type": "g6-standard-1", "label": "gone"})).await;
    let gid = gone.ok()["id"].as_i64().unwrap();
    let nb = api.post("/nodebalancers", json!({"region": "us-east", "label": "lb1"})).await;
    let nbid = nb.ok()["id"].as_i64().unwrap();
    // Deleted mid-month: its meter stops.
    eventually(10, "instance offline or running", || {
        let api = api.clone();
        async move {
            let st = api.get(&format!("/compute/instances/{gid}")).await.body["status"].as_str()?.to_string();
            (st != "provisioning").then_some(())
        }
    })
    .await;
    api.delete(&format!("/compute/instances/{gid}")).await.ok();

    // Move everything into the previous month: the account from its first day, the nanode
    // and the balancer from 10:00 on its 3rd day (still running), the deleted one for 90 minutes.
    let now = chrono::Utc::now().naive_utc();
    let this_month = month_start(now);
    let prev = month_start(this_month - chrono::Duration::days(1));
    let started = prev + chrono::Duration::days(2) + chrono::Duration::hours(10);
    backdate_account(&s, 1, &ts(prev)).await;
    db_exec(
        &s,
        &format!(
            "UPDATE meters SET started = '{st}' WHERE service_id IN ({iid}, {nbid}) AND service_type IN ('instance', 'nodebalancer') AND ended IS NULL; \
             UPDATE meters SET started = '{st}', ended = '{en}' WHERE service_type = 'instance' AND service_id = {gid};",
            st = ts(started),
            en = ts(started + chrono::Duration::minutes(90)),
        ),
    )
    .await;

    let (ok, out, err) = s.admin(&["billing", "close-due"]);
    assert!(ok, "{err}");
    assert!(out.contains("1 invoice"), "{out}");
    // Idempotent: a second run closes nothing.
    let (ok, out, _) = s.admin(&["billing", "close-due"]);
    assert!(ok && out.contains("0 invoice"), "{out}");

    let list = api.get("/account/invoices").await;
    assert_eq!(list.ok()["results"], 1);
    let inv = &list.body["data"][0];
    assert_eq!(inv["date"], ts(this_month));
    let id = inv["id"].as_i64().unwrap();
    let items = api.get(&format!("/account/invoices/{id}/items")).await;
    let items = items.ok()["data"].as_array().unwrap().clone();
    assert_eq!(items.len(), 3, "{items:?}");
    let hours = ((this_month - started).num_seconds() + 3599) / 3600;
    let by_id =
        |needle: String| items.iter().find(|it| it["label"].as_str().unwrap().contains(&needle)).unwrap().clone();
    let nano = by_id(format!("web1 ({iid})"));
    assert_eq!(nano["quantity"], hours);
    assert_eq!(nano["unit_price"], "0.007");
    assert_eq!(nano["type"], "hourly");
    assert_eq!(nano["region"], "us-east");
    assert_eq!(nano["from"], ts(started));
    assert_eq!(nano["to"], ts(this_month));
    // hours x 0.007, capped at the monthly 5.00, rounded to cents once.
    let expect = ((hours * 7_000).min(5_000_000) + 5_000) / 10_000;
    assert_eq!(cents(&nano["amount"]), expect);
    let lb = items.iter().find(|it| it["label"].as_str().unwrap().starts_with("NodeBalancer")).unwrap().clone();
    assert!(lb["label"].as_str().unwrap().ends_with(&format!("({nbid})")));
    assert_eq!(lb["unit_price"], "0.015");
    assert_eq!(cents(&lb["amount"]), ((hours * 15_000).min(10_000_000) + 5_000) / 10_000);
    let short = by_id(format!("gone ({gid})"));
    assert_eq!(short["quantity"], 2, "90 minutes are two started hours");
    assert_eq!(cents(&short["amount"]), (2 * 16_000 + 5_000) / 10_000);
    assert_eq!(short["to"], ts(started + chrono::Duration::minutes(90)));

    let sum: i64 = items.iter().map(|it| cents(&it["total"])).sum();
    assert_eq!(cents(&inv["total"]), sum);
    assert_eq!(cents(&inv["subtotal"]), sum);
    let got = api.get(&format!("/account/invoices/{id}")).await;
    assert_eq!(got.ok()["total"], inv["total"]);
    let account = api.get("/account").await;
    assert_eq!(cents(&account.ok()["balance"]), sum);
    // This month's usage is accrued, not invoiced: the two running services since the 1st.
    let this_hours = ((now - this_month).num_seconds() + 3599) / 3600;
    let accrued = ((this_hours * 7_000).min(5_000_000) + 5_000) / 10_000
        + ((this_hours * 15_000).min(10_000_000) + 5_000) / 10_000;
    let uninvoiced = cents(&account.body["balance_uninvoiced"]);
    assert!((accrued..=accrued + 3).contains(&uninvoiced), "uninvoiced {uninvoiced}, expected about {accrued}");
}

#[tokio::test]
async fn an_operator_closes_the_usage_so_far_and_nothing_is_billed_twice() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1"})).await.ok();
    db_exec(&s, "UPDATE meters SET started = '2000-01-01T00:00:00'").await;
    let now = chrono::Utc::now().naive_utc();
    // The account began 50.5 hours ago (away from an hour boundary of the meter).
    let start = ts(now - chrono::Duration::hours(50) - chrono::Duration::minutes(30));
    backdate_account(&s, 1, &start).await;
    db_exec(&s, &format!("UPDATE meters SET started = '{start}'")).await;
    let before = api.get("/account").await;
    assert!(cents(&before.ok()["balance_uninvoiced"]) > 0);
    let (ok, _, err) = s.admin(&["billing", "close"]);
    assert!(ok, "{err}");
    let invoices = api.get("/account/invoices").await;
    let n = invoices.ok()["results"].as_u64().unwrap();
    assert!(n >= 1);
    let total: i64 = invoices.body["data"].as_array().unwrap().iter().map(|i| cents(&i["total"])).sum();
    let after = api.get("/account").await;
    assert_eq!(cents(&after.ok()["balance"]), total);
    assert!(cents(&after.body["balance_uninvoiced"]) <= 1, "{}", after.text);
    // Closing again right away writes nothing new.
    let (ok, _, _) = s.admin(&["billing", "close"]);
    assert!(ok);
    assert_eq!(api.get("/account/invoices").await.ok()["results"].as_u64().unwrap(), n);
}

#[tokio::test]
async fn invoices_page_in_sql_and_belong_to_their_account() {
    let s = TestServer::start().await;
    let api = s.api();
    api.post("/compute/instances", json!({"region": "us-east", "type": "g6-nanode-1"})).await.ok();
    // Thirty months back: one invoice per month.
    let now = chrono::Utc::now().naive_utc();
    let mut start = month_start(now);
    for _ in 0..30 {
        start = month_start(start - chrono::Duration::days(1));
    }
    backdate_account(&s, 1, &ts(start)).await;
    db_exec(&s, &format!("UPDATE meters SET started = '{}'", ts(start))).await;
    let (ok, out, err) = s.admin(&["billing", "close-due"]);
    assert!(ok, "{err}");
    assert!(out.starts_with("30 invoice"), "{out}");
    let p2 = api.get("/account/invoices?page=2&page_size=25").await;
    assert_eq!(p2.ok()["results"], 30);
    assert_eq!(p2.body["pages"], 2);
    assert_eq!(p2.body["data"].as_array().unwrap().len(), 5);
    // A whole month of a nanode is its monthly price.
    let full = api.get_filtered("/account/invoices", r#"{"+order_by": "date", "+order": "asc"}"#).await;
    let second = &full.ok()["data"][1];
    assert_eq!(cents(&second["total"]), 500);
    // A filter on the total is in dollars, as the record shows it.
    let five = api.get_filtered("/account/invoices", r#"{"total": 5.0}"#).await;
    assert!(five.ok()["data"].as_array().unwrap().iter().all(|i| cents(&i["total"]) == 500), "{}", five.text);
    assert!(five.body["results"].as_u64().unwrap() >= 1);
    assert_eq!(api.get_filtered("/account/invoices", r#"{"total": 500}"#).await.ok()["results"], 0);
    let id = second["id"].as_i64().unwrap();
    let other = other_account(&s);
    other.get(&format!("/account/invoices/{id}")).await.status_is(404);
    other.get(&format!("/account/invoices/{id}/items")).await.status_is(404);
    assert_eq!(other.get("/account/invoices").await.ok()["results"], 0);
}

#[tokio::test]
async fn promo_codes_are_checked_and_their_credit_pays_invoices() {
    let s = TestServer::start().await;
    let api = s.api();
    let (ok, _, err) = s.admin(&[
        "promo",
        "create",
        "--code",
        "WELCOME10",
        "--credit",
        "10.00",
        "--monthly-cap",
        "3.00",
        "--expires",
        "2099-01-01T00:00:00",
    ]);
    assert!(ok, "{err}");
    let (ok, _, _) =
        s.admin(&["promo", "create", "--code", "OLD", "--credit", "10.00", "--expires", "2001-01-01T00:00:00"]);
    assert!(ok);
    api.post("/account/promo-codes", json!({})).await.expect_error(400, "promo_code");
    api.post("/account/promo-codes", json!({"promo_code": "x".repeat(33)})).await.expect_error(400, "promo_code");
    api.post("/account/promo-codes", json!({"promo_code": "NOPE"})).await.expect_error(400, "promo_code");
    api.post("/account/promo-codes", json!({"promo_code": "OLD"})).await.expect_error(400, "promo_code");
    let (_, restricted) = user_with_token(&s, "promo-restricted", true, "*").await;
    restricted.post("/account/promo-codes", json!({"promo_code": "WELCOME10"})).await.status_is(403);
    assert_eq!(api.get("/account").await.ok()["active_promotions"].as_array().unwrap().len(), 0);

    let p = api.post("/account/promo-codes", json!({"promo_code": "WELCOME10"})).await;
    assert_eq!(p.ok()["credit_remaining"], "10.00");
    assert_eq!(p.body["credit_monthly_cap"], "3.00");
    let promos = api.get("/account").await.ok()["active_promotions"].clone();
    assert_eq!(promos[0]["credit_remaining"], "10.00");
    // Only one promo credit per account.
    api.post("/account/promo-codes", json!({"promo_code": "WELCOME10"})).await.status_is(400).expect_envelope();

    // A month of a standard-1 (0.016 an hour up to 12.00) gets 3.00 off.
    api.post("/compute/instances", json!({"region": "us-east", "type": "g6-standard-1"})).await.ok();
    let now = chrono::Utc::now().naive_utc();
    let prev = month_start(month_start(now) - chrono::Duration::days(1));
    backdate_account(&s, 1, &ts(prev)).await;
    db_exec(&s, &format!("UPDATE meters SET started = '{}'", ts(prev))).await;
    let (ok, _, err) = s.admin(&["billing", "close-due"]);
    assert!(ok, "{err}");
    let inv = api.get("/account/invoices").await;
    let hours = (month_start(now) - prev).num_hours();
    let usage = ((hours * 16_000).min(12_000_000) + 5_000) / 10_000;
    assert_eq!(cents(&inv.ok()["data"][0]["total"]), usage - 300);
    let id = inv.body["data"][0]["id"].as_i64().unwrap();
    let items = api.get(&format!("/account/invoices/{id}/items")).await;
    let misc: Vec<&Value> = items.ok()["data"].as_array().unwrap().iter().filter(|i| i["type"] == "misc").collect();
    assert_eq!(cents(&misc[0]["amount"]), -300);
    assert_eq!(api.get("/account").await.ok()["active_promotions"][0]["credit_remaining"], "7.00");
}

#[tokio::test]
async fn promo_codes_need_a_young_account_and_come_from_the_configuration_too() {
    let s = TestServer::start_with(Options {
        config: format!(
            "{TEST_CONFIG}\n[[billing.promo_codes]]\ncode = \"CONF5\"\ncredit = \"5.00\"\nexpires = \"2099-01-01T00:00:00\"\n"
        ),
        ..Default::default()
    })
    .await;
    let (ok, out, _) = s.admin(&["promo", "list"]);
    assert!(ok && out.contains("CONF5"), "{out}");
    let other = other_account(&s);
    other.post("/account/promo-codes", json!({"promo_code": "CONF5"})).await.ok();
    // An account of 91 days cannot.
    let old = ts(chrono::Utc::now().naive_utc() - chrono::Duration::days(91));
    backdate_account(&s, 1, &old).await;
    eventually(5, "the account's age to be read", || {
        let api = s.api();
        async move {
            let r = api.post("/account/promo-codes", json!({"promo_code": "CONF5"})).await;
            (r.status == 400).then_some(r)
        }
    })
    .await
    .expect_envelope();
}

#[tokio::test]
async fn concurrent_promo_codes_give_one_credit() {
    let s = TestServer::start().await;
    let api = s.api();
    for code in ["A1", "B2", "C3"] {
        assert!(
            s.admin(&["promo", "create", "--code", code, "--credit", "10.00", "--expires", "2099-01-01T00:00:00"]).0
        );
    }
    let mut tasks = Vec::new();
    for code in ["A1", "B2", "C3", "A1", "B2", "C3"] {
        let api = api.clone();
        tasks.push(tokio::spawn(
            async move { api.post("/account/promo-codes", json!({"promo_code": code})).await.status },
        ));
    }
    let mut codes = Vec::new();
    for t in tasks {
        codes.push(t.await.unwrap());
    }
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 1, "{codes:?}");
    assert!(codes.iter().all(|c| *c == 200 || *c == 400), "{codes:?}");
    assert_eq!(api.get("/account").await.ok()["active_promotions"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn creating_and_deleting_services_opens_and_closes_their_meters() {
    let s = TestServer::start().await;
    let api = s.api();
    let nb = api.post("/nodebalancers", json!({"region": "us-east", "label": "metered"})).await;
    let nbid = nb.ok()["id"].as_i64().unwrap();
    let i =
        api.post("/compute/instances", json!({"region": "us-west", "type": "g6-standard-2", "booted": false})).await;
    let iid = i.ok()["id"].as_i64().unwrap();
    let open = |kind: &str, id: i64| {
        format!("SELECT COUNT(*) FROM meters WHERE service_type = '{kind}' AND service_id = {id} AND ended IS NULL")
    };
    assert_eq!(db_scalar(&s, &open("nodebalancer", nbid)).await, 1);
    assert_eq!(db_scalar(&s, &open("instance", iid)).await, 1);
    // The type's hourly price (0.033 for g6-standard-2) in millionths of a dollar.
    let hourly = db_scalar(
        &s,
        &format!("SELECT hourly_micro FROM meters WHERE service_id = {iid} AND service_type = 'instance'"),
    )
    .await;
    let t = api.get("/compute/types/g6-standard-2").await;
    assert_eq!(hourly, (t.ok()["price"]["hourly"].as_f64().unwrap() * 1_000_000.0).round() as i64);
    api.delete(&format!("/nodebalancers/{nbid}")).await.ok();
    wait_status_not_provisioning(&api, iid).await;
    api.delete(&format!("/compute/instances/{iid}")).await.ok();
    assert_eq!(db_scalar(&s, &open("nodebalancer", nbid)).await, 0);
    assert_eq!(db_scalar(&s, &open("instance", iid)).await, 0);
    assert_eq!(db_scalar(&s, "SELECT COUNT(*) FROM meters WHERE ended IS NOT NULL").await, 2);
}

async fn wait_status_not_provisioning(api: &Api, id: i64) {
    eventually(10, "instance provisioned", || {
        let api = api.clone();
        async move {
            let st = api.get(&format!("/compute/instances/{id}")).await.body["status"].as_str()?.to_string();
            (st != "provisioning").then_some(())
        }
    })
    .await;
}
