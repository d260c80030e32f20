//! The catalog as the hosted API lists it: its public images (every id the official clients'
//! docs and tests use), plan prices per region, load balancer types, network transfer prices,
//! and public images refusing changes.

use serde_json::{Value, json};

use crate::support::{Options, TEST_CONFIG, TestServer, db_scalar};

/// Image ids the official SDKs' and CLI's docs, examples and tests deploy or look up.
const CLIENT_IMAGES: &[&str] = &[
    "linode/debian8",
    "linode/debian9",
    "linode/debian10",
    "linode/debian11",
    "linode/debian12",
    "linode/debian13",
    "linode/ubuntu16.04lts",
    "linode/ubuntu17.04",
    "linode/ubuntu18.04",
    "linode/ubuntu20.04",
    "linode/ubuntu21.10",
    "linode/ubuntu22.04",
    "linode/ubuntu24.04",
    "linode/alpine3.16",
    "linode/alpine3.17",
    "linode/alpine3.18",
    "linode/alpine3.19",
    "linode/alpine3.20",
    "linode/alpine3.22",
    "linode/alpine3.23",
    "linode/arch",
    "linode/centos7",
    "linode/fedora26",
    "linode/rocky9",
    "linode/almalinux9",
];

async fn all(api: &crate::support::Api, path: &str) -> Vec<Value> {
    let r = api.get(&format!("{path}?page_size=500")).await;
    r.ok()["data"].as_array().unwrap().clone()
}

#[tokio::test]
async fn every_image_the_official_clients_use_is_listed_and_found() {
    let s = TestServer::start().await;
    let anon = s.api().anonymous();
    let images = all(&anon, "/images").await;
    for id in CLIENT_IMAGES {
        let i = images.iter().find(|i| i["id"] == *id).unwrap_or_else(|| panic!("{id} is not listed"));
        assert_eq!(i["is_public"], true);
        assert_eq!(i["tags"], json!([]), "{id}");
        assert_eq!(i["regions"], json!([]), "{id}");
        assert_eq!(i["total_size"], i["size"], "{id}");
        anon.get(&format!("/images/{}", id.replace('/', "%2F"))).await.ok();
    }
    // Retired releases are listed as deprecated, current ones are not.
    let get = |id: &str| images.iter().find(|i| i["id"] == id).unwrap().clone();
    assert_eq!(get("linode/debian9")["deprecated"], true);
    assert_eq!(get("linode/debian12")["deprecated"], false);
    // An image the clients use can be deployed.
    let r = s
        .api()
        .post(
            "/compute/instances",
            json!({"region": "us-east", "type": "g6-nanode-1", "image": "linode/debian11",
                   "root_pass": "aComplex!Passw0rd-1", "booted": false}),
        )
        .await;
    assert_eq!(r.ok()["image"], "linode/debian11");
    // Kubernetes node images are not of nubis's products.
    assert!(images.iter().all(|i| !i["id"].as_str().unwrap().contains("-kube")));
}

#[tokio::test]
async fn public_images_refuse_changes_with_403_and_unknown_images_are_not_found() {
    let s = TestServer::start().await;
    let api = s.api();
    for path in ["/images/linode%2Fdebian12", "/images/linode/debian12"] {
        api.delete(path).await.expect_error(403, "-");
        api.put(path, json!({"label": "mine"})).await.expect_error(403, "-");
        api.anonymous().delete(path).await.status_is(401);
    }
    api.delete("/images/linode%2Fnothing").await.expect_error(404, "-");
    api.put("/images/linode/nothing", json!({"label": "x"})).await.expect_error(404, "-");
    // The image is still there.
    api.get("/images/linode%2Fdebian12").await.ok();
}

#[tokio::test]
async fn types_list_their_prices_in_the_regions_priced_apart() {
    let s = TestServer::start().await;
    let anon = s.api().anonymous();
    for t in all(&anon, "/compute/types").await {
        let rp = t["region_prices"].as_array().unwrap();
        let ids: Vec<&str> = rp.iter().map(|p| p["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["id-cgk", "br-gru"], "{}", t["id"]);
        let base = t["price"]["monthly"].as_f64().unwrap();
        assert!((rp[0]["monthly"].as_f64().unwrap() - base * 1.2).abs() < 1e-6, "{t}");
        assert!((rp[1]["monthly"].as_f64().unwrap() - base * 1.4).abs() < 1e-6, "{t}");
        assert!(rp[0]["hourly"].as_f64().unwrap() > t["price"]["hourly"].as_f64().unwrap());
        let backups = &t["addons"]["backups"];
        assert_eq!(backups["region_prices"].as_array().unwrap().len(), 2, "{t}");
        assert!((backups["region_prices"][1]["monthly"].as_f64().unwrap() - base * 1.4 / 4.0).abs() < 0.01, "{t}");
    }
    let nano = anon.get("/compute/types/g6-nanode-1").await;
    assert_eq!(nano.ok()["region_prices"][0], json!({"id": "id-cgk", "hourly": 0.0084, "monthly": 6.0}));
    // The hosted API's name for the same list.
    let hosted = anon.get("/linode/types/g6-nanode-1").await;
    assert_eq!(hosted.ok()["region_prices"], nano.body["region_prices"]);
}

#[tokio::test]
async fn balancer_types_and_network_transfer_prices_are_public_lists() {
    let s = TestServer::start().await;
    let anon = s.api().anonymous();
    let r = anon.get("/nodebalancers/types").await;
    assert_eq!(r.ok()["results"], 1);
    assert_eq!(
        r.body["data"][0],
        json!({"id": "nodebalancer", "label": "NodeBalancer", "price": {"hourly": 0.015, "monthly": 10.0},
               "region_prices": [{"id": "id-cgk", "hourly": 0.018, "monthly": 12.0},
                                 {"id": "br-gru", "hourly": 0.021, "monthly": 14.0}],
               "transfer": 0})
    );
    let r = anon.get("/network-transfer/prices").await;
    assert_eq!(r.ok()["results"], 2);
    let nt = r.body["data"].as_array().unwrap().iter().find(|p| p["id"] == "network_transfer").unwrap().clone();
    assert_eq!(nt["price"], json!({"hourly": 0.005, "monthly": null}));
    assert_eq!(nt["region_prices"][0], json!({"id": "id-cgk", "hourly": 0.015, "monthly": null}));
    let filtered = anon.get_filtered("/network-transfer/prices", r#"{"id": "distributed_network_transfer"}"#).await;
    assert_eq!(filtered.ok()["results"], 1);
    assert_eq!(filtered.body["data"][0]["region_prices"], json!([]));
}

/// A region priced apart bills its price: an instance and a balancer created there are metered
/// at the region's price, not the base price.
#[tokio::test]
async fn a_region_priced_apart_is_billed_at_its_price() {
    let config = format!(
        r#"{TEST_CONFIG}
[[regions]]
id = "br-gru"
label = "Sao Paulo, BR"
country = "br"
capabilities = ["Linodes", "NodeBalancers"]
public_ipv4 = "127.20.0.0/16"
ipv6_pool = "2001:db8:20::/64"
ipv6_ranges = "2001:db8:2000::/40"

[[regions]]
id = "us-east"
label = "Newark, NJ"
country = "us"
capabilities = ["Linodes", "NodeBalancers"]
public_ipv4 = "127.10.0.0/16"
ipv6_pool = "2001:db8:a::/64"
ipv6_ranges = "2001:db8:a00::/40"
"#
    );
    let s = TestServer::start_with(Options { config, ..Default::default() }).await;
    let api = s.api();
    let mut ids = Vec::new();
    for region in ["br-gru", "us-east"] {
        let i = api.post("/compute/instances", json!({"region": region, "type": "g6-nanode-1", "booted": false})).await;
        let b = api.post("/nodebalancers", json!({"region": region})).await;
        ids.push((i.ok()["id"].as_i64().unwrap(), b.ok()["id"].as_i64().unwrap()));
    }
    let meter = |kind: &'static str, id: i64| {
        format!("SELECT monthly_micro FROM meters WHERE service_type = '{kind}' AND service_id = {id}")
    };
    assert_eq!(db_scalar(&s, &meter("instance", ids[0].0)).await, 7_000_000);
    assert_eq!(db_scalar(&s, &meter("instance", ids[1].0)).await, 5_000_000);
    assert_eq!(db_scalar(&s, &meter("nodebalancer", ids[0].1)).await, 14_000_000);
    assert_eq!(db_scalar(&s, &meter("nodebalancer", ids[1].1)).await, 10_000_000);
}

#[tokio::test]
async fn a_region_priced_twice_is_refused_at_start() {
    let config = format!(
        r#"{TEST_CONFIG}
[[types]]
id = "t1"
label = "T1"
class = "standard"
disk = 1000
memory = 1024
vcpus = 1
network_out = 1000
transfer = 1000
hourly = "0.01"
monthly = "5"
region_prices = [{{ id = "br-gru", hourly = "0.02", monthly = "7" }}, {{ id = "br-gru", hourly = "0.02", monthly = "7" }}]
"#
    );
    let dir = std::env::temp_dir().join(crate::support::unique("nubis-prices-"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), config).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_nubis"))
        .args(["serve", "--listen", "127.0.0.1:0", "--database", "sqlite::memory:", "--data-dir"])
        .arg(&dir)
        .arg("--config")
        .arg(dir.join("config.toml"))
        .env("NUBIS_LOG", "error")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("br-gru is priced twice"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
