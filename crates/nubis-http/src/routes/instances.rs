//! Compute instances: records, power actions, their addresses, and the firewalls and load
//! balancers they belong to.

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::instance::{BootRequest, InstanceCreate, InstanceUpdate};
use nubis_app::ip::{InstanceIpAllocate, IpUpdate};
use nubis_model::firewall::{FIREWALL_FILTERABLE, Firewall};
use nubis_model::instance::{INSTANCE_FILTERABLE, Instance};
use nubis_model::ip::{InstanceIps, IpAddress};
use nubis_model::nodebalancer::NodeBalancer;
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::routes::empty;

/// The filterable fields of an instance's balancers.
pub(crate) const INSTANCE_NODEBALANCER_FILTERABLE: &[&str] = &["id", "label", "region"];

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(instance_list, instance_create))
        .routes(routes!(instance_get, instance_update, instance_delete))
        .routes(routes!(instance_boot))
        .routes(routes!(instance_shutdown))
        .routes(routes!(instance_reboot))
        .routes(routes!(instance_ips_list, instance_ip_allocate))
        .routes(routes!(instance_ip_get, instance_ip_update, instance_ip_delete))
        .routes(routes!(instance_firewalls_list))
        .routes(routes!(instance_nodebalancers_list))
        .merge(super::instance_configs::router())
        .merge(super::instance_disks::router())
        .merge(super::instance_actions::router())
        .merge(super::instance_backups::router())
        .merge(super::instance_interfaces::router())
}

#[utoipa::path(get, path = "/v4/compute/instances", tag = "instances", responses((status = 200, description = "A page of instances", body = Page<Instance>)))]
async fn instance_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = crate::list::filter_of(&q, INSTANCE_FILTERABLE)?;
    Ok(Json(app.instance_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/compute/instances", tag = "instances", request_body = InstanceCreate, responses((status = 200, body = Instance)))]
async fn instance_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<InstanceCreate>,
) -> ApiResult<Json<Instance>> {
    Ok(Json(app.instance_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, body = Instance)))]
async fn instance_get(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Instance>> {
    Ok(Json(app.instance_get(&actor, id).await?))
}

#[utoipa::path(put, path = "/v4/compute/instances/{instance_id}", tag = "instances", params(("instance_id" = i64, Path)), request_body = InstanceUpdate, responses((status = 200, body = Instance)))]
async fn instance_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<InstanceUpdate>,
) -> ApiResult<Json<Instance>> {
    Ok(Json(app.instance_update(&actor, id, body).await?))
}

#[utoipa::path(delete, path = "/v4/compute/instances/{instance_id}", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "Deleted; its addresses are freed")))]
async fn instance_delete(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Value>> {
    app.instance_delete(&actor, id).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/boot", tag = "instances", params(("instance_id" = i64, Path)), request_body = BootRequest, responses((status = 200, description = "Boot started")))]
async fn instance_boot(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<BootRequest>,
) -> ApiResult<Json<Value>> {
    app.instance_boot_with(&actor, id, body).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/shutdown", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "Shutdown started")))]
async fn instance_shutdown(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Value>> {
    app.instance_shutdown(&actor, id).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/reboot", tag = "instances", params(("instance_id" = i64, Path)), request_body = BootRequest, responses((status = 200, description = "Reboot started")))]
async fn instance_reboot(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<BootRequest>,
) -> ApiResult<Json<Value>> {
    app.instance_reboot_with(&actor, id, body).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/ips", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, body = InstanceIps)))]
async fn instance_ips_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<InstanceIps>> {
    Ok(Json(app.instance_ips_list(&actor, id).await?))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/ips", tag = "instances", params(("instance_id" = i64, Path)), request_body = InstanceIpAllocate, responses((status = 200, body = IpAddress)))]
async fn instance_ip_allocate(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<InstanceIpAllocate>,
) -> ApiResult<Json<IpAddress>> {
    Ok(Json(app.instance_ip_allocate(&actor, id, body).await?))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/ips/{address}", tag = "instances", params(("instance_id" = i64, Path), ("address" = String, Path)), responses((status = 200, body = IpAddress)))]
async fn instance_ip_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, address)): ApiPath<(i64, String)>,
) -> ApiResult<Json<IpAddress>> {
    Ok(Json(app.instance_ip_get(&actor, id, &address).await?))
}

#[utoipa::path(put, path = "/v4/compute/instances/{instance_id}/ips/{address}", tag = "instances", params(("instance_id" = i64, Path), ("address" = String, Path)), request_body = IpUpdate, responses((status = 200, body = IpAddress)))]
async fn instance_ip_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, address)): ApiPath<(i64, String)>,
    ApiJson(body): ApiJson<IpUpdate>,
) -> ApiResult<Json<IpAddress>> {
    Ok(Json(app.instance_ip_update(&actor, id, &address, body).await?))
}

#[utoipa::path(delete, path = "/v4/compute/instances/{instance_id}/ips/{address}", tag = "instances", params(("instance_id" = i64, Path), ("address" = String, Path)), responses((status = 200, description = "Removed")))]
async fn instance_ip_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, address)): ApiPath<(i64, String)>,
) -> ApiResult<Json<Value>> {
    app.instance_ip_delete(&actor, id, &address).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/firewalls", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "A page of the instance's firewalls", body = Page<Firewall>)))]
async fn instance_firewalls_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = crate::list::filter_of(&q, FIREWALL_FILTERABLE)?;
    Ok(Json(app.instance_firewalls_list(&actor, id, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/nodebalancers", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "A page of the load balancers the instance is a back end of", body = Page<NodeBalancer>)))]
async fn instance_nodebalancers_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = crate::list::filter_of(&q, INSTANCE_NODEBALANCER_FILTERABLE)?;
    Ok(Json(app.instance_nodebalancers_list(&actor, id, &filter, q.page).await?).into_response())
}
