//! The rest of `/regions` as the hosted API serves it (plan and VPC availability).
//! VPC IPv6 itself is in `hosted_vpc_ipv6`, UDP balancing in `hosted_udp`.

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn plan_availability_is_listed_per_region_and_for_one_region() {
    let s = TestServer::start().await;
    let anon = s.api().anonymous();
    let types = anon.get("/compute/types").await.ok()["results"].as_u64().unwrap();
    let regions = anon.get("/regions").await.ok()["results"].as_u64().unwrap();
    let all = anon.get("/regions/availability?page_size=500").await;
    assert_eq!(all.ok()["results"].as_u64().unwrap(), types * regions);
    let e = &all.body["data"][0];
    assert!(e["region"].is_string() && e["plan"].is_string() && e["available"] == true, "{e}");
    let one = anon.get("/regions/us-east/availability").await;
    let list = one.ok().as_array().unwrap();
    assert_eq!(list.len() as u64, types);
    assert!(list.iter().all(|e| e["region"] == "us-east" && e["available"] == true));
    let f = anon.get_filtered("/regions/availability", r#"{"plan": "g6-nanode-1"}"#).await;
    assert_eq!(f.ok()["results"].as_u64().unwrap(), regions);
    anon.get("/regions/nowhere/availability").await.expect_error(404, "-");
}

#[tokio::test]
async fn vpc_availability_follows_the_vpcs_capability_and_offers_52_where_vpcs_are() {
    let s = TestServer::start().await;
    let anon = s.api().anonymous();
    let l = anon.get("/regions/vpc-availability").await;
    let data = l.ok()["data"].as_array().unwrap().clone();
    let east = data.iter().find(|e| e["region"] == "us-east").unwrap();
    assert_eq!(east, &json!({"region": "us-east", "available": true, "available_ipv6_prefix_lengths": [52]}));
    // ap-south has no VPCs capability in the default catalog.
    let south = anon.get("/regions/ap-south/vpc-availability").await;
    assert_eq!(south.ok(), &json!({"region": "ap-south", "available": false, "available_ipv6_prefix_lengths": []}));
    let f = anon.get_filtered("/regions/vpc-availability", r#"{"available": false}"#).await;
    assert_eq!(f.ok()["results"], 1);
    anon.get("/regions/nowhere/vpc-availability").await.expect_error(404, "-");
}

#[tokio::test]
async fn subnet_ipv6_without_vpc_ipv6_is_refused_naming_the_field_and_nothing_is_created() {
    let s = TestServer::start().await;
    let api = s.api();
    let r = api.post("/vpcs", json!({"label": "v6", "region": "us-east", "ipv6": [{"range": "/47"}]})).await;
    r.expect_error(400, "ipv6[0].range");
    let r = api
        .post(
            "/vpcs",
            json!({"label": "v6", "region": "us-east",
                              "subnets": [{"label": "s", "ipv4": "10.0.0.0/24", "ipv6": [{"range": "auto"}]}]}),
        )
        .await;
    r.expect_error(400, "subnets[0].ipv6[0].range");
    assert_eq!(api.get("/vpcs").await.ok()["results"], 0);
    let v = api.post("/vpcs", json!({"label": "v4-only", "region": "us-east"})).await;
    let id = v.ok()["id"].as_i64().unwrap();
    let r = api
        .post(&format!("/vpcs/{id}/subnets"), json!({"label": "s", "ipv4": "10.0.0.0/24", "ipv6": [{"range": "auto"}]}))
        .await;
    r.expect_error(400, "ipv6[0].range");
    assert_eq!(api.get(&format!("/vpcs/{id}/subnets")).await.ok()["results"], 0);
}

#[tokio::test]
async fn vpc_ipv6_lists_are_checked_like_the_ipv4_ones_and_empty_without_ipv6_interfaces() {
    let s = TestServer::start().await;
    let api = s.api();
    let v = api
        .post("/vpcs", json!({"label": "v", "region": "us-east", "subnets": [{"label": "s", "ipv4": "10.0.0.0/24"}]}))
        .await;
    let id = v.ok()["id"].as_i64().unwrap();
    let all = api.get("/vpcs/ipv6s").await;
    assert_eq!((all.ok()["results"].clone(), all.body["data"].clone()), (json!(0), json!([])));
    assert_eq!(api.get(&format!("/vpcs/{id}/ipv6s")).await.ok()["results"], 0);
    api.get_filtered("/vpcs/ipv6s", r#"{"nothing": 1}"#).await.status_is(400);
    other_account(&s).get(&format!("/vpcs/{id}/ipv6s")).await.expect_error(404, "-");
    api.get("/vpcs/999999/ipv6s").await.expect_error(404, "-");
    let (_, bob) = user_with_token(&s, "bob", true, "*").await;
    bob.get(&format!("/vpcs/{id}/ipv6s")).await.expect_error(404, "-");
    api.put("/account/users/bob/grants", json!({"vpc": [{"id": id, "permissions": "read_only"}]})).await.ok();
    assert_eq!(bob.get(&format!("/vpcs/{id}/ipv6s")).await.ok()["results"], 0);
    api.anonymous().get("/vpcs/ipv6s").await.status_is(401);
}
