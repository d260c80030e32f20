//! No acknowledged write is lost: for every record that has a partial update, several clients at
//! once each set a different field (through two API replicas, on SQLite and on PostgreSQL), and
//! afterwards every field a 200 acknowledged holds its value. A write that reads what it
//! changes outside its own transaction (from the read cache, say) and writes the record back
//! whole loses some of them; the grants did until they were read inside the write.
//!
//! Rounds are random from a seed printed in the output (`NUBIS_TEST_SEED` replays them).

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Value, json};

use crate::billing_invoices::add_card;
use crate::instances::create_instance;
use crate::support::*;

/// splitmix64: a small deterministic generator for the rounds' choices.
pub(crate) struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn word(&mut self) -> String {
        format!("w{:08x}", self.next() as u32)
    }
}

pub(crate) fn seed() -> u64 {
    std::env::var("NUBIS_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20_261_125)
}

/// The request that sets a field to a value: (method, path, body).
type Setter = Box<dyn Fn(&Value) -> (&'static str, String, Value) + Send + Sync>;
/// A new value of a field, given its current one.
type NextValue = Box<dyn Fn(&mut Rng, &Value) -> Value + Send + Sync>;

/// One field of a record: how a request sets it to `v`, and where a read of the record shows it.
struct Field {
    name: String,
    set: Setter,
    /// (path, JSON pointer) of the value after a read.
    read: (String, String),
    next: NextValue,
}

fn field(
    name: impl Into<String>,
    read: (String, String),
    set: impl Fn(&Value) -> (&'static str, String, Value) + Send + Sync + 'static,
    next: impl Fn(&mut Rng, &Value) -> Value + Send + Sync + 'static,
) -> Field {
    Field { name: name.into(), set: Box::new(set), read, next: Box::new(next) }
}

fn flip(_: &mut Rng, cur: &Value) -> Value {
    json!(!cur.as_bool().unwrap_or(false))
}

fn word(rng: &mut Rng, _: &Value) -> Value {
    json!(rng.word())
}

/// A `PUT path {key: v}` field read back at `read_path` under `pointer`.
fn put(path: &str, key: &'static str, pointer: &str, next: fn(&mut Rng, &Value) -> Value) -> Field {
    let p = path.to_string();
    field(key, (path.to_string(), pointer.to_string()), move |v| ("PUT", p.clone(), json!({ key: v })), next)
}

async fn send(api: &Api, method: &str, path: &str, body: Value) -> Resp {
    match method {
        "PUT" => api.put(path, body).await,
        "POST" => api.post(path, body).await,
        other => panic!("method {other}"),
    }
}

/// Several rounds over one record: each round, 2 to 4 of its fields are set at once by
/// different clients through random replicas; then every acknowledged value must be read back.
async fn race(apis: &[Api], rng: &mut Rng, what: &str, fields: &[Field], rounds: usize) -> usize {
    let mut lost = Vec::new();
    let mut acknowledged = 0;
    for round in 0..rounds {
        let mut chosen: Vec<usize> = (0..fields.len()).collect();
        for i in (1..chosen.len()).rev() {
            chosen.swap(i, rng.below(i + 1));
        }
        chosen.truncate(2 + rng.below(3.min(fields.len() - 1)));
        let mut sends = Vec::new();
        for &i in &chosen {
            let f = &fields[i];
            let (path, pointer) = &f.read;
            let cur = apis[0].get(path).await.ok().pointer(pointer).cloned().unwrap_or(Value::Null);
            let v = (f.next)(rng, &cur);
            let (method, url, body) = (f.set)(&v);
            let api = apis[rng.below(apis.len())].clone();
            sends.push((i, v, tokio::spawn(async move { send(&api, method, &url, body).await })));
        }
        let mut wanted = Vec::new();
        for (i, v, t) in sends {
            let r = t.await.unwrap();
            assert!(r.status < 500, "{what}: setting {} answered {}: {}", fields[i].name, r.status, r.text);
            if r.status == 200 {
                wanted.push((i, v));
            }
        }
        acknowledged += wanted.len();
        // Read back (through every replica: another replica hears of a change within milliseconds).
        for api in apis {
            for (i, v) in &wanted {
                let (path, pointer) = &fields[*i].read;
                let seen = read_until(api, path, pointer, v).await;
                if &seen != v {
                    lost.push(format!("round {round}: {} set to {v} was acknowledged, reads {seen}", fields[*i].name));
                }
            }
        }
    }
    assert!(lost.is_empty(), "{what}: acknowledged writes lost:\n{}", lost.join("\n"));
    acknowledged
}

/// The value at `pointer`, once it equals `want` or after a few seconds.
async fn read_until(api: &Api, path: &str, pointer: &str, want: &Value) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    loop {
        let seen = api.get(path).await.ok().pointer(pointer).cloned().unwrap_or(Value::Null);
        if &seen == want || std::time::Instant::now() > deadline {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

const FLAGS: &[&str] = &[
    "add_vpcs",
    "add_firewalls",
    "add_nodebalancers",
    "add_instances",
    "add_domains",
    "add_volumes",
    "add_images",
    "add_stackscripts",
    "cancel_account",
];

/// DNS for the reverse-DNS race: the first public addresses of us-east resolve from two names.
const DNS: &str = r#"
[dns]
offline = true
[dns.static_records]
"a2.example.test" = ["127.10.0.2"]
"b2.example.test" = ["127.10.0.2"]
"a3.example.test" = ["127.10.0.3"]
"b3.example.test" = ["127.10.0.3"]
"a4.example.test" = ["127.10.0.4"]
"b4.example.test" = ["127.10.0.4"]
"a5.example.test" = ["127.10.0.5"]
"b5.example.test" = ["127.10.0.5"]
"#;

/// Two replicas on one database (an API replica and a full one).
pub(crate) async fn two_replicas() -> Vec<TestServer> {
    let config = format!("{}{}", TEST_CONFIG.replace("[dns]\noffline = true\n", ""), DNS);
    let first = TestServer::start_with(Options { config: config.clone(), ..Default::default() }).await;
    let second = TestServer::start_with(Options {
        config,
        database: Some(first.database.clone()),
        extra_args: vec!["--role".into(), "api".into()],
        ..Default::default()
    })
    .await;
    vec![first, second]
}

#[tokio::test]
async fn concurrent_partial_updates_of_every_record_keep_every_acknowledged_field() {
    let seed = seed();
    eprintln!("lost updates: seed {seed} (NUBIS_TEST_SEED={seed} replays the rounds)");
    let servers = two_replicas().await;
    let apis: Vec<Api> = servers.iter().map(|s| s.api_with(&servers[0].token)).collect();
    let api = &apis[0];
    let mut rng = Rng(seed);
    let rounds = std::env::var("NUBIS_TEST_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(8);
    let mut total = 0;

    // Grants: global flags, and per-entity permissions.
    let (u, _) = user_with_token(&servers[0], &unique("racer"), true, "*").await;
    let g = format!("/account/users/{}/grants", u["username"].as_str().unwrap());
    let mut fields: Vec<Field> = FLAGS
        .iter()
        .map(|f| {
            let path = g.clone();
            field(
                format!("global.{f}"),
                (g.clone(), format!("/global/{f}")),
                move |v| ("PUT", path.clone(), json!({"global": { *f: v }})),
                flip,
            )
        })
        .collect();
    {
        let path = g.clone();
        fields.push(field(
            "global.account_access",
            (g.clone(), "/global/account_access".into()),
            move |v| ("PUT", path.clone(), json!({"global": {"account_access": v}})),
            |_, cur| json!(if cur == "read_only" { "read_write" } else { "read_only" }),
        ));
    }
    total += race(&apis, &mut rng, "global grants", &fields, rounds).await;
    let mut vpcs = Vec::new();
    for i in 0..4 {
        let v = api.post("/vpcs", json!({"label": unique(&format!("race{i}")), "region": "us-east"})).await;
        vpcs.push(v.ok()["id"].as_i64().unwrap());
    }
    let fields: Vec<Field> = vpcs
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let (path, id) = (g.clone(), *id);
            field(
                format!("vpc {id} grant"),
                (g.clone(), format!("/vpc/{i}/permissions")),
                move |v| ("PUT", path.clone(), json!({"vpc": [{"id": id, "permissions": v}]})),
                |_, cur| json!(if cur == "read_only" { "read_write" } else { "read_only" }),
            )
        })
        .collect();
    total += race(&apis, &mut rng, "entity grants", &fields, rounds).await;

    // The account, its settings, a user, the profile.
    let fields: Vec<Field> = ["address_1", "address_2", "city", "phone", "tax_id", "first_name", "last_name"]
        .iter()
        .map(|k| put("/account", k, &format!("/{k}"), word))
        .collect();
    total += race(&apis, &mut rng, "account", &fields, rounds).await;
    let fields = vec![
        put("/account/settings", "backups_enabled", "/backups_enabled", flip),
        put("/account/settings", "network_helper", "/network_helper", flip),
    ];
    total += race(&apis, &mut rng, "account settings", &fields, rounds).await;
    let user = format!("/account/users/{}", u["username"].as_str().unwrap());
    let fields = vec![
        field(
            "email",
            (user.clone(), "/email".into()),
            {
                let p = user.clone();
                move |v| ("PUT", p.clone(), json!({"email": v}))
            },
            |r, _| json!(format!("{}@example.com", r.word())),
        ),
        put(&user, "restricted", "/restricted", flip),
    ];
    total += race(&apis, &mut rng, "user", &fields, rounds).await;
    let fields = vec![
        put("/profile", "email_notifications", "/email_notifications", flip),
        put("/profile", "ip_whitelist_enabled", "/ip_whitelist_enabled", flip),
        put("/profile", "timezone", "/timezone", |r, _| {
            json!(["UTC", "US/Eastern", "Europe/Paris", "Asia/Tokyo"][r.below(4)])
        }),
        field(
            "lish_auth_method",
            ("/profile".into(), "/lish_auth_method".into()),
            |v| ("PUT", "/profile".into(), json!({"lish_auth_method": v})),
            |_, cur| json!(if cur == "keys_only" { "password_keys" } else { "keys_only" }),
        ),
    ];
    total += race(&apis, &mut rng, "profile", &fields, rounds).await;

    // VPCs and subnets.
    let v = api
        .post("/vpcs", json!({"label": unique("racevpc"), "region": "us-east", "subnets": [{"label": "s0", "ipv4": "10.9.0.0/24"}]}))
        .await;
    let (vid, sid) = (v.ok()["id"].as_i64().unwrap(), v.ok()["subnets"][0]["id"].as_i64().unwrap());
    let vp = format!("/vpcs/{vid}");
    let fields = vec![put(&vp, "label", "/label", word), put(&vp, "description", "/description", word)];
    total += race(&apis, &mut rng, "vpc", &fields, rounds).await;
    let sp = format!("/vpcs/{vid}/subnets/{sid}");
    race_one_field(&apis, &mut rng, "subnet label", &put(&sp, "label", "/label", word), rounds).await;

    // Firewalls, their rules and devices.
    let f = api
        .post(
            "/networking/firewalls",
            json!({"label": unique("racefw"), "rules": {"inbound_policy": "ACCEPT", "outbound_policy": "ACCEPT"}}),
        )
        .await;
    let fid = f.ok()["id"].as_i64().unwrap();
    let fp = format!("/networking/firewalls/{fid}");
    let fields = vec![
        put(&fp, "label", "/label", word),
        put(&fp, "tags", "/tags", |r, _| json!([r.word()])),
        put(&fp, "status", "/status", |_, cur| json!(if cur == "enabled" { "disabled" } else { "enabled" })),
    ];
    total += race(&apis, &mut rng, "firewall", &fields, rounds).await;
    let rp = format!("{fp}/rules");
    let fields = vec![
        put(&rp, "inbound_policy", "/inbound_policy", |_, cur| json!(if cur == "ACCEPT" { "DROP" } else { "ACCEPT" })),
        put(&rp, "outbound_policy", "/outbound_policy", |_, cur| {
            json!(if cur == "ACCEPT" { "DROP" } else { "ACCEPT" })
        }),
    ];
    total += race(&apis, &mut rng, "firewall rules", &fields, rounds).await;

    // Instances (several fields of one, and the reverse DNS of several addresses).
    let mut instances = Vec::new();
    for _ in 0..4 {
        instances.push(create_instance(api, "us-east", json!({"booted": false})).await);
    }
    let ip = format!("/compute/instances/{}", instances[0]["id"]);
    let fields = vec![
        put(&ip, "label", "/label", |r, _| json!(format!("inst-{}", r.word()))),
        put(&ip, "group", "/group", word),
        put(&ip, "tags", "/tags", |r, _| json!([r.word()])),
        put(&ip, "watchdog_enabled", "/watchdog_enabled", flip),
        alert(&ip, "cpu", 90),
        alert(&ip, "io", 100_000),
        alert(&ip, "network_in", 100_000),
        alert(&ip, "network_out", 100_000),
        alert(&ip, "transfer_quota", 100),
    ];
    total += race(&apis, &mut rng, "instance", &fields, rounds).await;
    let fields: Vec<Field> = instances
        .iter()
        .map(|i| {
            let addr = i["ipv4"][0].as_str().unwrap().to_string();
            let n = addr.rsplit('.').next().unwrap().to_string();
            let path = format!("/networking/ips/{addr}");
            field(
                format!("rdns of {addr}"),
                (path.clone(), "/rdns".into()),
                move |v| ("PUT", path.clone(), json!({"rdns": v})),
                move |_, cur| {
                    json!(if cur == &json!(format!("a{n}.example.test")) {
                        format!("b{n}.example.test")
                    } else {
                        format!("a{n}.example.test")
                    })
                },
            )
        })
        .collect();
    total += race(&apis, &mut rng, "reverse DNS", &fields, rounds).await;

    // A firewall's devices: each client adds a different instance.
    let rules = json!({"inbound_policy": "ACCEPT", "outbound_policy": "ACCEPT"});
    let f2 = api.post("/networking/firewalls", json!({"label": unique("racedev"), "rules": rules})).await;
    let f2 = f2.ok()["id"].as_i64().unwrap();
    let adds: Vec<_> = instances
        .iter()
        .map(|i| {
            let (a, id) = (apis[rng.below(apis.len())].clone(), i["id"].as_i64().unwrap());
            tokio::spawn(async move {
                a.post(&format!("/networking/firewalls/{f2}/devices"), json!({"id": id, "type": "instance"}))
                    .await
                    .status
            })
        })
        .collect();
    let mut added = 0;
    for t in adds {
        let st = t.await.unwrap();
        assert_eq!(st, 200, "adding a device");
        added += 1;
    }
    let devices = api.get(&format!("/networking/firewalls/{f2}/devices")).await.ok()["results"].as_i64().unwrap();
    assert_eq!(devices, added, "every acknowledged device is on the firewall");

    // Balancers, their configs and nodes.
    let nb = api.post("/nodebalancers", json!({"region": "us-east", "label": unique("racenb")})).await;
    let nbid = nb.ok()["id"].as_i64().unwrap();
    let np = format!("/nodebalancers/{nbid}");
    let fields = vec![
        put(&np, "label", "/label", |r, _| json!(format!("nb-{}", r.word()))),
        put(&np, "client_conn_throttle", "/client_conn_throttle", |r, _| json!(1 + r.below(20))),
        put(&np, "tags", "/tags", |r, _| json!([r.word()])),
    ];
    total += race(&apis, &mut rng, "balancer", &fields, rounds).await;
    let c = api.post(&format!("{np}/configs"), json!({"port": 8080, "protocol": "http", "check": "none"})).await;
    let cid = c.ok()["id"].as_i64().unwrap();
    let cp = format!("{np}/configs/{cid}");
    let fields = vec![
        put(&cp, "check_interval", "/check_interval", |r, _| json!(5 + r.below(100))),
        put(&cp, "check_timeout", "/check_timeout", |r, _| json!(1 + r.below(4))),
        put(&cp, "check_attempts", "/check_attempts", |r, _| json!(1 + r.below(30))),
        put(&cp, "algorithm", "/algorithm", |_, cur| {
            json!(if cur == "roundrobin" { "leastconn" } else { "roundrobin" })
        }),
        put(&cp, "stickiness", "/stickiness", |_, cur| json!(if cur == "none" { "table" } else { "none" })),
        put(&cp, "check_path", "/check_path", |r, _| json!(format!("/{}", r.word()))),
    ];
    total += race(&apis, &mut rng, "balancer config", &fields, rounds).await;
    let private =
        api.post("/networking/ips", json!({"type": "ipv4", "public": false, "instance_id": instances[1]["id"]})).await;
    let addr = format!("{}:80", private.ok()["address"].as_str().unwrap());
    let n = api.post(&format!("{cp}/nodes"), json!({"label": "node-a", "address": addr})).await;
    let nid = n.ok()["id"].as_i64().unwrap();
    let nodep = format!("{cp}/nodes/{nid}");
    let fields = vec![
        put(&nodep, "label", "/label", |r, _| json!(format!("n-{}", r.word()))),
        put(&nodep, "weight", "/weight", |r, _| json!(1 + r.below(255))),
        put(&nodep, "mode", "/mode", |_, cur| json!(if cur == "accept" { "drain" } else { "accept" })),
    ];
    total += race(&apis, &mut rng, "balancer node", &fields, rounds).await;

    // OAuth clients and personal access tokens.
    let oc = api
        .post("/account/oauth-clients", json!({"label": "race", "redirect_uri": "https://app.example.com/cb"}))
        .await;
    let ocp = format!("/account/oauth-clients/{}", oc.ok()["id"].as_str().unwrap());
    let fields = vec![
        put(&ocp, "label", "/label", word),
        put(&ocp, "redirect_uri", "/redirect_uri", |r, _| json!(format!("https://app.example.com/{}", r.word()))),
    ];
    total += race(&apis, &mut rng, "OAuth client", &fields, rounds).await;
    let mut tokens = Vec::new();
    for i in 0..3 {
        let t = api.post("/profile/tokens", json!({"label": format!("race-{i}"), "scopes": "*"})).await;
        tokens.push(t.ok()["id"].as_i64().unwrap());
    }
    let fields: Vec<Field> =
        tokens.iter().map(|t| put(&format!("/profile/tokens/{t}"), "label", "/label", word)).collect();
    total += race(&apis, &mut rng, "tokens", &fields, rounds).await;

    // The default payment method: concurrent make-default of different methods leaves exactly
    // one default, one of those acknowledged.
    let mut methods = Vec::new();
    for _ in 0..3 {
        methods.push(add_card(api, "4111111111111111", false).await.ok()["id"].as_i64().unwrap());
    }
    for _ in 0..rounds {
        let sends: Vec<_> = methods
            .iter()
            .map(|m| {
                let (a, m) = (apis[rng.below(apis.len())].clone(), *m);
                tokio::spawn(async move {
                    (m, a.post_empty(&format!("/account/payment-methods/{m}/make-default")).await.status)
                })
            })
            .collect();
        let mut acked = BTreeSet::new();
        for t in sends {
            let (m, st) = t.await.unwrap();
            assert!(st < 500);
            if st == 200 {
                acked.insert(m);
            }
        }
        let all = api.get("/account/payment-methods").await.ok()["data"].as_array().unwrap().clone();
        let defaults: Vec<i64> =
            all.iter().filter(|m| m["is_default"] == true).map(|m| m["id"].as_i64().unwrap()).collect();
        assert_eq!(defaults.len(), 1, "exactly one default payment method: {all:?}");
        assert!(acked.contains(&defaults[0]), "the default is one of the acknowledged: {defaults:?} {acked:?}");
    }
    eprintln!("lost updates: {total} acknowledged partial updates, none lost");
    assert!(total > 200, "too few updates were acknowledged to mean anything: {total}");
}

fn alert(path: &str, key: &'static str, max: usize) -> Field {
    let p = path.to_string();
    field(
        format!("alerts.{key}"),
        (path.to_string(), format!("/alerts/{key}")),
        move |v| ("PUT", p.clone(), json!({"alerts": { key: v }})),
        move |r, cur| {
            let mut v = r.below(max + 1) as i64;
            if Some(v) == cur.as_i64() {
                v = (v + 1) % (max as i64 + 1);
            }
            json!(v)
        },
    )
}

/// A record with one changeable field: clients racing on it all get a 200 and the record ends
/// with one of their values.
async fn race_one_field(apis: &[Api], rng: &mut Rng, what: &str, f: &Field, rounds: usize) {
    for _ in 0..rounds {
        let mut sends = Vec::new();
        let mut values = Vec::new();
        for _ in 0..3 {
            let v = (f.next)(rng, &Value::Null);
            let (method, url, body) = (f.set)(&v);
            let api = apis[rng.below(apis.len())].clone();
            values.push(v);
            sends.push(tokio::spawn(async move { send(&api, method, &url, body).await.status }));
        }
        for t in sends {
            assert_eq!(t.await.unwrap(), 200, "{what}");
        }
        let (path, pointer) = &f.read;
        let seen = apis[0].get(path).await.ok().pointer(pointer).cloned().unwrap_or(Value::Null);
        assert!(values.contains(&seen), "{what}: reads {seen}, none of {values:?}");
    }
}

/// The operator's trial: a restricted user, four `PUT .../grants` at once, each setting a
/// different global grant, through two replicas; read back, all four are there, 100 rounds of 100.
#[tokio::test]
async fn four_concurrent_grant_updates_through_two_replicas_keep_all_four() {
    let servers = two_replicas().await;
    let apis: Vec<Api> = servers.iter().map(|s| s.api_with(&servers[0].token)).collect();
    let (u, _) = user_with_token(&servers[0], &unique("four"), true, "*").await;
    let path = format!("/account/users/{}/grants", u["username"].as_str().unwrap());
    const FOUR: [&str; 4] = ["add_vpcs", "add_firewalls", "add_nodebalancers", "add_instances"];
    let flags = FOUR;
    let mut lost = Vec::new();
    for round in 0..100 {
        let off: serde_json::Map<String, Value> = flags.iter().map(|f| (f.to_string(), json!(false))).collect();
        apis[0].put(&path, json!({ "global": off })).await.ok();
        let sends: Vec<_> = flags
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let (api, path, f) = (apis[i % 2].clone(), path.clone(), *f);
                tokio::spawn(async move { api.put(&path, json!({"global": { f: true }})).await.status })
            })
            .collect();
        for t in sends {
            assert_eq!(t.await.unwrap(), 200);
        }
        for api in &apis {
            // Another replica hears of a change within milliseconds: a few looks at most.
            let mut missing = Vec::new();
            for _ in 0..20 {
                let g = api.get(&path).await.ok()["global"].clone();
                missing = flags.iter().filter(|f| g[**f] != true).collect();
                if missing.is_empty() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if !missing.is_empty() {
                lost.push(format!("round {round}: {missing:?} lost"));
            }
        }
    }
    assert!(lost.is_empty(), "acknowledged grants lost in {} reads:\n{}", lost.len(), lost.join("\n"));
}
