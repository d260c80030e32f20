//! VPCs and VLANs are real, isolated networks.

use serde_json::{Value, json};

use crate::common::*;
use crate::support::{eventually, unique};

async fn vpc(api: &crate::support::Api) -> i64 {
    let r = api
        .post(
            "/vpcs",
            json!({ "label": unique("vpc"), "region": "us-east",
                    "subnets": [{ "label": "s1", "ipv4": "10.0.0.0/24" }] }),
        )
        .await;
    r.ok()["subnets"][0]["id"].as_i64().unwrap()
}

async fn member(api: &crate::support::Api, label: &str, iface: Value) -> i64 {
    let i = instance(
        api,
        json!({ "label": label, "interfaces": [{ "purpose": "public" }, iface],
                "metadata": { "user_data": http_server_user_data(8000) } }),
    )
    .await;
    i["id"].as_i64().unwrap()
}

/// Waits until instance `id` answers on `addr:8000` from its own namespace (its server is up).
async fn serving(id: i64, addr: &str) {
    let url = format!("http://{addr}:8000/");
    eventually(30, &format!("instance {id} serving at {addr}"), || {
        let url = url.clone();
        async move { get_from(id, &url, &[]).filter(|r| r.0 == 200).map(|_| ()) }
    })
    .await;
}

#[tokio::test]
async fn instances_of_one_vpc_reach_each_other_and_not_those_of_another_vpc() {
    let _sweep = Sweeper::new();
    let server = server().await;
    let api = server.api();
    let (sa, sb) = (vpc(&api).await, vpc(&api).await);
    let a1 = member(&api, "vpc-a1", json!({ "purpose": "vpc", "subnet_id": sa, "ipv4": { "vpc": "10.0.0.10" } })).await;
    let a2 = member(&api, "vpc-a2", json!({ "purpose": "vpc", "subnet_id": sa, "ipv4": { "vpc": "10.0.0.11" } })).await;
    // The same subnet range in the other VPC: only the network separates them.
    let b1 = member(&api, "vpc-b1", json!({ "purpose": "vpc", "subnet_id": sb, "ipv4": { "vpc": "10.0.0.12" } })).await;
    serving(a2, "10.0.0.11").await;
    serving(b1, "10.0.0.12").await;
    assert_eq!(get_from(a1, "http://10.0.0.11:8000/", &[]).map(|r| r.1), Some("I am vpc-a2".into()));
    assert_eq!(get_from(a1, "http://10.0.0.12:8000/", &[]), None, "a VPC reached another VPC");
    assert_eq!(get_from(b1, "http://10.0.0.11:8000/", &[]), None, "a VPC reached another VPC");
}

#[tokio::test]
async fn a_vlan_reaches_only_its_members() {
    let _sweep = Sweeper::new();
    let server = server().await;
    let api = server.api();
    let vlan = |label: &str, ipam: &str| json!({ "purpose": "vlan", "label": label, "ipam_address": ipam });
    let m1 = member(&api, "vlan-m1", vlan("backend", "10.9.0.1/24")).await;
    let m2 = member(&api, "vlan-m2", vlan("backend", "10.9.0.2/24")).await;
    let other = member(&api, "vlan-o1", vlan("storage", "10.9.0.3/24")).await;
    serving(m2, "10.9.0.2").await;
    serving(other, "10.9.0.3").await;
    assert_eq!(get_from(m1, "http://10.9.0.2:8000/", &[]).map(|r| r.1), Some("I am vlan-m2".into()));
    assert_eq!(get_from(m1, "http://10.9.0.3:8000/", &[]), None, "a VLAN reached another VLAN");
    // Leaving the VLAN (deleting the instance) takes its address off the network.
    api.delete(&format!("/linode/instances/{m2}")).await.ok();
    eventually(10, "the deleted member gone", || async move {
        get_from(m1, "http://10.9.0.2:8000/", &[]).is_none().then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_vpc_only_instance_is_reached_at_its_1_1_nat_address() {
    let _sweep = Sweeper::new();
    let server = server().await;
    let api = server.api();
    let subnet = vpc(&api).await;
    let i = instance(
        &api,
        json!({ "label": "nat-only", "private_ip": false, "metadata": { "user_data": http_server_user_data(8000) },
                "interfaces": [{ "purpose": "vpc", "subnet_id": subnet, "primary": true,
                                 "ipv4": { "vpc": "10.0.0.20", "nat_1_1": "any" } }] }),
    )
    .await;
    let id = i["id"].as_i64().unwrap();
    let ips = api.get(&format!("/linode/instances/{id}/ips")).await;
    let vpc_ip = &ips.ok()["ipv4"]["vpc"][0];
    let public = vpc_ip["nat_1_1"].as_str().expect("a 1:1 NAT address").to_string();
    serving(id, "10.0.0.20").await;
    let url = format!("http://{public}:8000/");
    let body = eventually(30, "the NAT address answering", || {
        let url = url.clone();
        async move { host_get(&url).await }
    })
    .await;
    assert_eq!(body, "I am nat-only");
}
