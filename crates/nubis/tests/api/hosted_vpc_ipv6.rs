//! VPC and subnet IPv6 as the hosted API has them: a VPC's /52 from its region's IPv6 block
//! (the block routed /56 and /64 ranges come from, one allocator), subnet ranges inside their
//! VPC's, VPC interfaces with a /64 SLAAC range of their subnet, the `/v4/vpcs/ipv6s` lists and
//! `/v4/vpcs/default-ranges`.

use std::net::Ipv6Addr;

use serde_json::{Value, json};

use crate::instances::{create_instance, id};
use crate::support::*;

/// `(network, prefix length)` of a CIDR string.
fn net(r: &Value) -> (u128, u8) {
    let s = r.as_str().unwrap_or_else(|| panic!("not a range: {r}"));
    let (a, p) = s.split_once('/').unwrap();
    (u128::from(a.parse::<Ipv6Addr>().unwrap()), p.parse().unwrap())
}

fn last(n: (u128, u8)) -> u128 {
    n.0 | (u128::MAX >> n.1)
}

fn inside(inner: (u128, u8), outer: (u128, u8)) -> bool {
    inner.1 >= outer.1 && inner.0 >= outer.0 && last(inner) <= last(outer)
}

fn overlap(a: (u128, u8), b: (u128, u8)) -> bool {
    a.0 <= last(b) && b.0 <= last(a)
}

async fn vpc(api: &Api, label: &str, ipv6: Value, subnets: Value) -> Value {
    let mut body = json!({"label": label, "region": "us-east", "subnets": subnets});
    if !ipv6.is_null() {
        body["ipv6"] = ipv6;
    }
    api.post("/vpcs", body).await.ok().clone()
}

#[tokio::test]
async fn a_vpc_gets_a_52_of_the_region_block_and_subnets_get_ranges_inside_it() {
    let s = TestServer::start().await;
    let api = s.api();
    let avail = api.anonymous().get("/regions/us-east/vpc-availability").await;
    assert_eq!(avail.ok()["available_ipv6_prefix_lengths"], json!([52]));
    let a = vpc(
        &api,
        "a",
        json!([{"range": "auto"}]),
        json!([{"label": "s1", "ipv4": "10.0.0.0/24", "ipv6": [{"range": "auto"}]},
               {"label": "s2", "ipv4": "10.0.1.0/24", "ipv6": [{"range": "/60"}]},
               {"label": "s3", "ipv4": "10.0.2.0/24"}]),
    )
    .await;
    let ra = net(&a["ipv6"][0]["range"]);
    assert_eq!(ra.1, 52, "{a}");
    assert!(inside(ra, (u128::from("2001:db8::".parse::<Ipv6Addr>().unwrap()), 32)), "{a}");
    let (s1, s2) = (net(&a["subnets"][0]["ipv6"][0]["range"]), net(&a["subnets"][1]["ipv6"][0]["range"]));
    assert_eq!((s1.1, s2.1), (56, 60));
    assert!(inside(s1, ra) && inside(s2, ra) && !overlap(s1, s2), "{a}");
    assert_eq!(a["subnets"][2]["ipv6"], json!([]));
    // A prefix length as the request; a subnet created later gets a free range inside.
    let b = vpc(&api, "b", json!([{"range": "/52"}]), json!([])).await;
    let rb = net(&b["ipv6"][0]["range"]);
    assert!(rb.1 == 52 && !overlap(ra, rb), "{a} {b}");
    let aid = id(&a);
    let s4 =
        api.post(&format!("/vpcs/{aid}/subnets"), json!({"label": "s4", "ipv4": "10.0.3.0/24", "ipv6": [{}]})).await;
    let r4 = net(&s4.ok()["ipv6"][0]["range"]);
    assert!(inside(r4, ra) && !overlap(r4, s1) && !overlap(r4, s2), "{}", s4.body);
    // Read back: the VPC, its subnets, and a VPC without IPv6.
    let got = api.get(&format!("/vpcs/{aid}")).await;
    assert_eq!(got.ok()["ipv6"], a["ipv6"]);
    assert_eq!(got.body["subnets"][1]["ipv6"], a["subnets"][1]["ipv6"]);
    let sub = api.get(&format!("/vpcs/{aid}/subnets/{}", id(&s4.body))).await;
    assert_eq!(sub.ok()["ipv6"], s4.body["ipv6"]);
    let plain = vpc(&api, "plain", Value::Null, json!([])).await;
    assert_eq!(plain["ipv6"], json!([]));
    let listed = api.get("/vpcs").await;
    assert_eq!(listed.ok()["data"][0]["ipv6"], a["ipv6"]);
}

#[tokio::test]
async fn vpc_ranges_never_overlap_and_explicit_ranges_are_checked() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = vpc(&api, "a", json!([{"range": "auto"}]), json!([])).await;
    let ra = a["ipv6"][0]["range"].as_str().unwrap().to_string();
    let post = |label: &str, range: Value| {
        let api = api.clone();
        let body = json!({"label": label, "region": "us-east", "ipv6": [{"range": range}]});
        async move { api.post("/vpcs", body).await }
    };
    // Another VPC's range, a prefix length not offered, host bits, nonsense, outside the block.
    post("x1", json!(ra)).await.expect_error(400, "ipv6[0].range");
    post("x2", json!("/48")).await.expect_error(400, "ipv6[0].range");
    post("x3", json!("/56")).await.expect_error(400, "ipv6[0].range");
    let host_bits = ra.replace("::/52", "::1/52");
    post("x4", json!(host_bits)).await.expect_error(400, "ipv6[0].range");
    post("x5", json!("not-a-range")).await.expect_error(400, "ipv6[0].range");
    post("x6", json!("2001:db9::/52")).await.expect_error(400, "ipv6[0].range");
    let r = api.post("/vpcs", json!({"label": "x7", "region": "us-east", "ipv6": [{}, {}]})).await;
    r.expect_error(400, "ipv6");
    let r = api
        .post("/vpcs", json!({"label": "x8", "region": "us-east", "ipv6": [{"allocation_range": "2001:db8::/32"}]}))
        .await;
    r.expect_error(400, "ipv6[0].allocation_range");
    assert_eq!(api.get("/vpcs").await.ok()["results"], 1);
    // An explicit free /52 of the block is taken as given.
    let free = vpc(&api, "b", json!([{"range": "auto"}]), json!([])).await;
    let rb = free["ipv6"][0]["range"].as_str().unwrap().to_string();
    api.delete(&format!("/vpcs/{}", id(&free))).await.ok();
    let c = vpc(&api, "c", json!([{"range": rb}]), json!([])).await;
    assert_eq!(c["ipv6"][0]["range"], json!(rb));
    // Routed ranges come from the same block and avoid the VPC ranges.
    let i = create_instance(&api, "us-east", json!({"booted": false})).await;
    let routed = api.post("/networking/ipv6/ranges", json!({"prefix_length": 56, "instance_id": id(&i)})).await;
    let rr = net(&json!(routed.ok()["range"]));
    assert!(!overlap(rr, net(&json!(ra))) && !overlap(rr, net(&json!(rb))), "{} {ra} {rb}", routed.body);
    // ... and a VPC never gets a range that is routed.
    let d = vpc(&api, "d", json!([{}]), json!([])).await;
    assert!(!overlap(net(&d["ipv6"][0]["range"]), rr), "{d}");
}

#[tokio::test]
async fn subnet_ranges_lie_inside_the_vpc_range_and_need_one() {
    let s = TestServer::start().await;
    let api = s.api();
    // A subnet with IPv6 in a VPC without: refused, and nothing is made.
    let r = api
        .post(
            "/vpcs",
            json!({"label": "v", "region": "us-east",
                   "subnets": [{"label": "s", "ipv4": "10.0.0.0/24", "ipv6": [{"range": "auto"}]}]}),
        )
        .await;
    r.expect_error(400, "subnets[0].ipv6[0].range");
    assert_eq!(api.get("/vpcs").await.ok()["results"], 0);
    let plain = vpc(&api, "plain", Value::Null, json!([])).await;
    let r = api
        .post(&format!("/vpcs/{}/subnets", id(&plain)), json!({"label": "s", "ipv4": "10.0.0.0/24", "ipv6": [{}]}))
        .await;
    r.expect_error(400, "ipv6[0].range");
    assert_eq!(api.get(&format!("/vpcs/{}/subnets", id(&plain))).await.ok()["results"], 0);
    // One subnet's bad range refuses the whole VPC, which then takes no range either.
    let r = api
        .post(
            "/vpcs",
            json!({"label": "v", "region": "us-east", "ipv6": [{"range": "auto"}],
                   "subnets": [{"label": "a", "ipv4": "10.0.0.0/24", "ipv6": [{"range": "auto"}]},
                               {"label": "b", "ipv4": "10.0.1.0/24", "ipv6": [{"range": "2001:db9::/56"}]}]}),
        )
        .await;
    r.expect_error(400, "subnets[1].ipv6[0].range");
    assert_eq!(api.get("/vpcs").await.ok()["results"], 1);
    let v =
        vpc(&api, "v", json!([{}]), json!([{"label": "a", "ipv4": "10.0.0.0/24", "ipv6": [{"range": "/56"}]}])).await;
    let (vr, ar) = (net(&v["ipv6"][0]["range"]), v["subnets"][0]["ipv6"][0]["range"].clone());
    let sub = |label: &str, range: Value| {
        let api = api.clone();
        let path = format!("/vpcs/{}/subnets", id(&v));
        let body = json!({"label": label, "ipv4": format!("10.9.{}.0/24", label.len()), "ipv6": [{"range": range}]});
        async move { api.post(&path, body).await }
    };
    sub("x", ar.clone()).await.expect_error(400, "ipv6[0].range");
    sub("xx", json!("/63")).await.expect_error(400, "ipv6[0].range");
    sub("xxx", json!("/51")).await.expect_error(400, "ipv6[0].range");
    let outside = last(vr) + 1;
    sub("xxxx", json!(format!("{}/56", Ipv6Addr::from(outside)))).await.expect_error(400, "ipv6[0].range");
    // A /52 subnet would need the whole VPC range, which subnet a uses part of.
    sub("xxxxx", json!("/52")).await.expect_error(400, "ipv6[0].range");
    // Inside, free: taken as given.
    let inner = format!("{}/60", Ipv6Addr::from(last(vr) - ((1u128 << 68) - 1)));
    let ok = sub("y", json!(inner)).await;
    assert_eq!(ok.ok()["ipv6"][0]["range"], json!(inner));
    // Two subnets of one create with the same range: the second is refused.
    let r = api
        .post(
            "/vpcs",
            json!({"label": "w", "region": "us-east", "ipv6": [{}],
                   "subnets": [{"label": "a", "ipv4": "10.0.0.0/24", "ipv6": [{"range": "/56"}]},
                               {"label": "b", "ipv4": "10.0.1.0/24", "ipv6": [{"range": "/52"}]}]}),
        )
        .await;
    r.expect_error(400, "subnets[1].ipv6[0].range");
}

#[tokio::test]
async fn deleting_a_vpc_releases_its_range() {
    let s = TestServer::start().await;
    let api = s.api();
    let a = vpc(&api, "a", json!([{}]), json!([{"label": "s", "ipv4": "10.0.0.0/24", "ipv6": [{}]}])).await;
    let b = vpc(&api, "b", json!([{}]), json!([])).await;
    let ra = a["ipv6"][0]["range"].clone();
    assert_ne!(ra, b["ipv6"][0]["range"]);
    api.delete(&format!("/vpcs/{}", id(&a))).await.ok();
    let c = vpc(&api, "c", json!([{"range": "auto"}]), json!([])).await;
    assert_eq!(c["ipv6"][0]["range"], ra, "the first free /52 is the one released");
}

fn vpc_iface(subnet_id: i64, ipv6: Value) -> Value {
    json!({"purpose": "vpc", "subnet_id": subnet_id, "ipv6": ipv6})
}

#[tokio::test]
async fn vpc_interfaces_get_a_64_of_their_subnet_and_the_lists_show_them() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = vpc(
        &api,
        "v",
        json!([{}]),
        json!([{"label": "six", "ipv4": "10.0.0.0/24", "ipv6": [{}]}, {"label": "four", "ipv4": "10.0.1.0/24"}]),
    )
    .await;
    let (six, four) = (id(&v["subnets"][0]), id(&v["subnets"][1]));
    let sr = net(&v["subnets"][0]["ipv6"][0]["range"]);
    let a = create_instance(
        &api,
        "us-east",
        json!({"label": "vm-a", "booted": false, "interfaces": [{"purpose": "public"}, vpc_iface(six, json!({"is_public": true}))]}),
    )
    .await;
    let configs = api.get(&format!("/compute/instances/{}/configs", id(&a))).await;
    let fa = configs.ok()["data"][0]["interfaces"][1].clone();
    let v6 = &fa["ipv6"];
    let slaac = net(&v6["slaac"][0]["range"]);
    assert!(slaac.1 == 64 && inside(slaac, sr), "{fa}");
    let addr = u128::from(v6["slaac"][0]["address"].as_str().unwrap().parse::<Ipv6Addr>().unwrap());
    assert!(addr >= slaac.0 && addr <= last(slaac), "{fa}");
    assert_eq!((v6["is_public"].clone(), v6["ranges"].clone()), (json!(true), json!([])));
    assert_eq!(configs.body["data"][0]["interfaces"][0]["ipv6"], Value::Null);
    // A second interface: another /64, and a routed range of the subnet.
    let b = create_instance(
        &api,
        "us-east",
        json!({"label": "vm-b", "booted": false,
               "interfaces": [vpc_iface(six, json!({"slaac": [{"range": "auto"}], "ranges": [{"range": "/64"}]}))]}),
    )
    .await;
    let fb = api.get(&format!("/compute/instances/{}/configs", id(&b))).await.ok()["data"][0]["interfaces"][0].clone();
    let (sb, rb) = (net(&fb["ipv6"]["slaac"][0]["range"]), net(&fb["ipv6"]["ranges"][0]["range"]));
    assert!(!overlap(sb, slaac) && !overlap(rb, slaac) && !overlap(rb, sb) && inside(rb, sr), "{fb}");
    assert_eq!(fb["ipv6"]["is_public"], false);
    // An interface without IPv6 on the same subnet, and one on the IPv4-only subnet.
    create_instance(
        &api,
        "us-east",
        json!({"label": "vm-c", "booted": false, "interfaces": [vpc_iface(six, Value::Null)]}),
    )
    .await;
    // The lists.
    let all = api.get("/vpcs/ipv6s").await;
    assert_eq!(all.ok()["results"], 2, "{}", all.body);
    let e = all.body["data"].as_array().unwrap().iter().find(|e| e["instance_id"] == a["id"]).unwrap().clone();
    assert_eq!(e["ipv6_range"], v6["slaac"][0]["range"]);
    assert_eq!(e["ipv6_addresses"], json!([{"slaac_address": v6["slaac"][0]["address"]}]));
    assert_eq!(
        (e["ipv6_is_public"].clone(), e["vpc_id"].clone(), e["subnet_id"].clone()),
        (json!(true), v["id"].clone(), json!(six))
    );
    assert_eq!(
        (e["interface_id"].clone(), e["active"].clone(), e["region"].clone()),
        (fa["id"].clone(), json!(false), json!("us-east"))
    );
    assert!(e["config_id"].is_i64(), "{e}");
    assert_eq!(api.get(&format!("/vpcs/{}/ipv6s", id(&v))).await.ok()["results"], 2);
    let only_b = api.get_filtered("/vpcs/ipv6s", &json!({"instance_id": id(&b)}).to_string()).await;
    assert_eq!(only_b.ok()["results"], 1);
    assert_eq!(only_b.body["data"][0]["ipv6_range"], fb["ipv6"]["slaac"][0]["range"]);
    let paged = api.get("/vpcs/ipv6s?page=1&page_size=25").await;
    assert_eq!((paged.ok()["page"].clone(), paged.body["pages"].clone()), (json!(1), json!(1)));
    api.get("/vpcs/ipv6s?page_size=1").await.expect_error(400, "page_size");
    let other = vpc(&api, "other", json!([{}]), json!([])).await;
    assert_eq!(api.get(&format!("/vpcs/{}/ipv6s", id(&other))).await.ok()["results"], 0);
    // Refusals: a subnet without IPv6, a public interface, a /64 in use, one outside the subnet.
    let post = |ifaces: Value| {
        let api = api.clone();
        let body = json!({"region": "us-east", "type": "g6-nanode-1", "booted": false, "interfaces": ifaces});
        async move { api.post("/compute/instances", body).await }
    };
    post(json!([vpc_iface(four, json!({}))])).await.expect_error(400, "interfaces[0].ipv6");
    post(json!([{"purpose": "public", "ipv6": {}}])).await.expect_error(400, "interfaces[0].ipv6");
    let used = v6["slaac"][0]["range"].clone();
    post(json!([vpc_iface(six, json!({"slaac": [{"range": used}]}))]))
        .await
        .expect_error(400, "interfaces[0].ipv6.slaac[0].range");
    post(json!([vpc_iface(six, json!({"slaac": [{"range": "2001:db9::/64"}]}))]))
        .await
        .expect_error(400, "interfaces[0].ipv6.slaac[0].range");
    post(json!([vpc_iface(six, json!({"slaac": [{"range": "/56"}]}))]))
        .await
        .expect_error(400, "interfaces[0].ipv6.slaac[0].range");
    post(json!([vpc_iface(six, json!({"ranges": [{}]}))]))
        .await
        .expect_error(400, "interfaces[0].ipv6.ranges[0].range");
    assert_eq!(api.get("/vpcs/ipv6s").await.ok()["results"], 2);
}

#[tokio::test]
async fn linode_interfaces_take_vpc_ipv6_too() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = vpc(
        &api,
        "v",
        json!([{}]),
        json!([{"label": "six", "ipv4": "10.0.0.0/24", "ipv6": [{}]}, {"label": "four", "ipv4": "10.0.1.0/24"}]),
    )
    .await;
    let (six, four) = (id(&v["subnets"][0]), id(&v["subnets"][1]));
    let body = |subnet: i64| {
        json!({"region": "us-east", "type": "g6-nanode-1", "booted": false, "interface_generation": "linode",
               "interfaces": [{"public": {}}, {"vpc": {"subnet_id": subnet, "ipv6": {"slaac": [{"range": "auto"}]}}}]})
    };
    let i = api.post("/compute/instances", body(six)).await.ok().clone();
    let list = api.get(&format!("/compute/instances/{}/interfaces", id(&i))).await;
    let f = list.ok()["interfaces"].as_array().unwrap().iter().find(|f| !f["vpc"].is_null()).unwrap().clone();
    let slaac = net(&f["vpc"]["ipv6"]["slaac"][0]["range"]);
    assert!(slaac.1 == 64 && inside(slaac, net(&v["subnets"][0]["ipv6"][0]["range"])), "{f}");
    assert!(f["vpc"]["ipv6"]["slaac"][0]["address"].is_string(), "{f}");
    let all = api.get(&format!("/vpcs/{}/ipv6s", id(&v))).await;
    assert_eq!(all.ok()["results"], 1);
    assert_eq!(
        (all.body["data"][0]["interface_id"].clone(), all.body["data"][0]["config_id"].clone()),
        (f["id"].clone(), Value::Null)
    );
    api.post("/compute/instances", body(four)).await.expect_error(400, "interfaces[1].vpc.ipv6");
}

#[tokio::test]
async fn default_ranges_are_served() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.get("/vpcs/default-ranges").await;
    assert_eq!(
        r.ok(),
        &json!({"default_ipv4_ranges": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/17"],
                "forbidden_ipv4_ranges": ["192.168.128.0/17"]})
    );
    api.anonymous().get("/vpcs/default-ranges").await.status_is(401);
}

#[tokio::test]
async fn a_running_instance_has_its_vpc_ipv6_address_on_its_vpc_link() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = vpc(&api, "v", json!([{}]), json!([{"label": "six", "ipv4": "10.0.0.0/24", "ipv6": [{}]}])).await;
    let six = id(&v["subnets"][0]);
    let i = create_instance(
        &api,
        "us-east",
        json!({"label": "vm-six", "interfaces": [{"purpose": "public"}, vpc_iface(six, json!({}))]}),
    )
    .await;
    crate::instances::wait_status(&api, id(&i), "running").await;
    let configs = api.get(&format!("/compute/instances/{}/configs", id(&i))).await;
    let address = configs.ok()["data"][0]["interfaces"][1]["ipv6"]["slaac"][0]["address"].as_str().unwrap().to_string();
    let list = api.get(&format!("/vpcs/{}/ipv6s", id(&v))).await;
    assert_eq!(list.ok()["data"][0]["active"], true, "{}", list.body);
    assert_eq!(list.body["data"][0]["ipv6_addresses"][0]["slaac_address"], json!(address));
    if netns() {
        // The interface's SLAAC address is configured on eth1 inside the instance's namespace.
        let ns = instance_netns(&api, id(&i));
        eventually(20, "the VPC IPv6 address in the instance's namespace", || {
            let (ns, address) = (ns.clone(), address.clone());
            async move {
                let out = std::process::Command::new("ip")
                    .args(["-n", &ns, "-6", "addr", "show", "dev", "eth1"])
                    .output()
                    .ok()?;
                String::from_utf8_lossy(&out.stdout).contains(&format!("{address}/64")).then_some(())
            }
        })
        .await;
    }
}
