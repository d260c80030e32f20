//! VPCs, their subnets and the addresses of VPC interfaces.

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::vpc::{SubnetCreate, SubnetUpdate, VpcCreate, VpcUpdate};
use nubis_model::page::Page;
use nubis_model::vpc::{
    SUBNET_FILTERABLE, Subnet, VPC_FILTERABLE, VPC_IP_FILTERABLE, VPC_IPV6_FILTERABLE, Vpc, VpcDefaultRanges, VpcIp,
    VpcIpv6,
};
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::list::filter_of;
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(vpc_list, vpc_create))
        .routes(routes!(vpc_ips_list_all))
        .routes(routes!(vpc_get, vpc_update, vpc_delete))
        .routes(routes!(vpc_ips_list))
        .routes(routes!(vpc_ipv6s_list_all))
        .routes(routes!(vpc_ipv6s_list))
        .routes(routes!(vpc_default_ranges))
        .routes(routes!(subnet_list, subnet_create))
        .routes(routes!(subnet_get, subnet_update, subnet_delete))
}

#[utoipa::path(get, path = "/v4/vpcs", tag = "vpcs", responses((status = 200, description = "A page of VPCs", body = Page<Vpc>)))]
async fn vpc_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, VPC_FILTERABLE)?;
    Ok(crate::json::JsonOnce(app.vpc_list_shared(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/vpcs", tag = "vpcs", request_body = VpcCreate, responses((status = 200, body = Vpc)))]
async fn vpc_create(State(app): State<App>, actor: Auth, ApiJson(body): ApiJson<VpcCreate>) -> ApiResult<Json<Vpc>> {
    Ok(Json(app.vpc_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/vpcs/ips", tag = "vpcs", responses((status = 200, description = "A page of the addresses of every VPC interface", body = Page<VpcIp>)))]
async fn vpc_ips_list_all(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, VPC_IP_FILTERABLE)?;
    Ok(Json(app.vpc_ips_list_all(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/vpcs/{vpc_id}", tag = "vpcs", params(("vpc_id" = i64, Path)), responses((status = 200, body = Vpc)))]
async fn vpc_get(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Vpc>> {
    Ok(Json(app.vpc_get(&actor, id).await?))
}

#[utoipa::path(put, path = "/v4/vpcs/{vpc_id}", tag = "vpcs", params(("vpc_id" = i64, Path)), request_body = VpcUpdate, responses((status = 200, body = Vpc)))]
async fn vpc_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<VpcUpdate>,
) -> ApiResult<Json<Vpc>> {
    Ok(Json(app.vpc_update(&actor, id, body).await?))
}

#[utoipa::path(delete, path = "/v4/vpcs/{vpc_id}", tag = "vpcs", params(("vpc_id" = i64, Path)), responses((status = 200, description = "Deleted with its subnets")))]
async fn vpc_delete(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Value>> {
    app.vpc_delete(&actor, id).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/vpcs/{vpc_id}/ips", tag = "vpcs", params(("vpc_id" = i64, Path)), responses((status = 200, description = "A page of the VPC's interface addresses", body = Page<VpcIp>)))]
async fn vpc_ips_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = filter_of(&q, VPC_IP_FILTERABLE)?;
    Ok(Json(app.vpc_ips_list(&actor, id, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/vpcs/{vpc_id}/subnets", tag = "vpcs", params(("vpc_id" = i64, Path)), responses((status = 200, description = "A page of subnets", body = Page<Subnet>)))]
async fn subnet_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = filter_of(&q, SUBNET_FILTERABLE)?;
    Ok(Json(app.subnet_list(&actor, id, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/vpcs/{vpc_id}/subnets", tag = "vpcs", params(("vpc_id" = i64, Path)), request_body = SubnetCreate, responses((status = 200, body = Subnet)))]
async fn subnet_create(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<SubnetCreate>,
) -> ApiResult<Json<Subnet>> {
    Ok(Json(app.subnet_create(&actor, id, body).await?))
}

#[utoipa::path(get, path = "/v4/vpcs/{vpc_id}/subnets/{vpc_subnet_id}", tag = "vpcs", params(("vpc_id" = i64, Path), ("vpc_subnet_id" = i64, Path)), responses((status = 200, body = Subnet)))]
async fn subnet_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((vpc_id, id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Subnet>> {
    Ok(Json(app.subnet_get(&actor, vpc_id, id).await?))
}

#[utoipa::path(put, path = "/v4/vpcs/{vpc_id}/subnets/{vpc_subnet_id}", tag = "vpcs", params(("vpc_id" = i64, Path), ("vpc_subnet_id" = i64, Path)), request_body = SubnetUpdate, responses((status = 200, body = Subnet)))]
async fn subnet_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath((vpc_id, id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<SubnetUpdate>,
) -> ApiResult<Json<Subnet>> {
    Ok(Json(app.subnet_update(&actor, vpc_id, id, body).await?))
}

#[utoipa::path(delete, path = "/v4/vpcs/{vpc_id}/subnets/{vpc_subnet_id}", tag = "vpcs", params(("vpc_id" = i64, Path), ("vpc_subnet_id" = i64, Path)), responses((status = 200, description = "Deleted")))]
async fn subnet_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath((vpc_id, id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Value>> {
    app.subnet_delete(&actor, vpc_id, id).await?;
    Ok(empty())
}

/// The IPv6 (SLAAC /64 and address) of every VPC interface with IPv6 of the account.
#[utoipa::path(get, path = "/v4/vpcs/ipv6s", tag = "vpcs", responses((status = 200, description = "A page of the IPv6 ranges of every VPC interface", body = Page<VpcIpv6>)))]
async fn vpc_ipv6s_list_all(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, VPC_IPV6_FILTERABLE)?;
    Ok(Json(app.vpc_ipv6s_list_all(&actor, &filter, q.page).await?).into_response())
}

/// The IPv6 (SLAAC /64 and address) of the VPC's interfaces with IPv6.
#[utoipa::path(get, path = "/v4/vpcs/{vpc_id}/ipv6s", tag = "vpcs", params(("vpc_id" = i64, Path)), responses((status = 200, description = "A page of the VPC's interface IPv6 ranges", body = Page<VpcIpv6>)))]
async fn vpc_ipv6s_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = filter_of(&q, VPC_IPV6_FILTERABLE)?;
    Ok(Json(app.vpc_ipv6s_list(&actor, id, &filter, q.page).await?).into_response())
}

/// The default IPv4 ranges of VPCs and the range no subnet may overlap.
#[utoipa::path(get, path = "/v4/vpcs/default-ranges", tag = "vpcs", responses((status = 200, body = VpcDefaultRanges)))]
async fn vpc_default_ranges(State(app): State<App>, actor: Auth) -> ApiResult<Json<VpcDefaultRanges>> {
    Ok(Json(app.vpc_default_ranges(&actor).await?))
}
