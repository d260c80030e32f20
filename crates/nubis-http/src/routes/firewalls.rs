//! Firewalls, their rules and devices, and the firewalls of a load balancer.

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::firewall::{DeviceCreate, FirewallCreate, FirewallUpdate};
use nubis_app::nodebalancer::NodeBalancerFirewallsUpdate;
use nubis_model::firewall::{DEVICE_FILTERABLE, FIREWALL_FILTERABLE, Firewall, FirewallDevice, VersionedRules};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::list::filter_of;
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(firewall_list, firewall_create))
        .routes(routes!(firewall_get, firewall_update, firewall_delete))
        .routes(routes!(firewall_rules_get, firewall_rules_update))
        .routes(routes!(firewall_device_list, firewall_device_create))
        .routes(routes!(firewall_device_get, firewall_device_delete))
        .routes(routes!(nodebalancer_firewalls_list, nodebalancer_firewalls_update))
}

#[utoipa::path(get, path = "/v4/networking/firewalls", tag = "firewalls", responses((status = 200, description = "A page of firewalls", body = Page<Firewall>)))]
async fn firewall_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, FIREWALL_FILTERABLE)?;
    Ok(Json(app.firewall_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/networking/firewalls", tag = "firewalls", request_body = FirewallCreate, responses((status = 200, body = Firewall)))]
async fn firewall_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<FirewallCreate>,
) -> ApiResult<Json<Firewall>> {
    Ok(Json(app.firewall_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/networking/firewalls/{firewall_id}", tag = "firewalls", params(("firewall_id" = i64, Path)), responses((status = 200, body = Firewall)))]
async fn firewall_get(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Firewall>> {
    Ok(Json(app.firewall_get(&actor, id).await?))
}

#[utoipa::path(put, path = "/v4/networking/firewalls/{firewall_id}", tag = "firewalls", params(("firewall_id" = i64, Path)), request_body = FirewallUpdate, responses((status = 200, body = Firewall)))]
async fn firewall_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<FirewallUpdate>,
) -> ApiResult<Json<Firewall>> {
    Ok(Json(app.firewall_update(&actor, id, body).await?))
}

#[utoipa::path(delete, path = "/v4/networking/firewalls/{firewall_id}", tag = "firewalls", params(("firewall_id" = i64, Path)), responses((status = 200, description = "Deleted; its rules leave every service it was assigned to")))]
async fn firewall_delete(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Value>> {
    app.firewall_delete(&actor, id).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/networking/firewalls/{firewall_id}/rules", tag = "firewalls", params(("firewall_id" = i64, Path)), responses((status = 200, body = VersionedRules)))]
async fn firewall_rules_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<VersionedRules>> {
    Ok(Json(app.firewall_rules_get(&actor, id).await?))
}

#[utoipa::path(put, path = "/v4/networking/firewalls/{firewall_id}/rules", tag = "firewalls", params(("firewall_id" = i64, Path)), request_body = nubis_app::firewall::RulesUpdate, responses((status = 200, body = VersionedRules)))]
async fn firewall_rules_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<VersionedRules>> {
    Ok(Json(app.firewall_rules_update(&actor, id, body).await?))
}

#[utoipa::path(get, path = "/v4/networking/firewalls/{firewall_id}/devices", tag = "firewalls", params(("firewall_id" = i64, Path)), responses((status = 200, description = "A page of the firewall's devices", body = Page<FirewallDevice>)))]
async fn firewall_device_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = filter_of(&q, DEVICE_FILTERABLE)?;
    Ok(Json(app.firewall_device_list(&actor, id, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/networking/firewalls/{firewall_id}/devices", tag = "firewalls", params(("firewall_id" = i64, Path)), request_body = DeviceCreate, responses((status = 200, body = FirewallDevice)))]
async fn firewall_device_create(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<DeviceCreate>,
) -> ApiResult<Json<FirewallDevice>> {
    Ok(Json(app.firewall_device_create(&actor, id, body).await?))
}

#[utoipa::path(get, path = "/v4/networking/firewalls/{firewall_id}/devices/{device_id}", tag = "firewalls", params(("firewall_id" = i64, Path), ("device_id" = i64, Path)), responses((status = 200, body = FirewallDevice)))]
async fn firewall_device_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((firewall_id, id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<FirewallDevice>> {
    Ok(Json(app.firewall_device_get(&actor, firewall_id, id).await?))
}

#[utoipa::path(delete, path = "/v4/networking/firewalls/{firewall_id}/devices/{device_id}", tag = "firewalls", params(("firewall_id" = i64, Path), ("device_id" = i64, Path)), responses((status = 200, description = "Removed; the firewall's rules leave the service")))]
async fn firewall_device_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath((firewall_id, id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Value>> {
    app.firewall_device_delete(&actor, firewall_id, id).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/nodebalancers/{nodebalancer_id}/firewalls", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path)), responses((status = 200, description = "A page of the load balancer's firewalls", body = Page<Firewall>)))]
async fn nodebalancer_firewalls_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = filter_of(&q, FIREWALL_FILTERABLE)?;
    Ok(Json(app.nodebalancer_firewalls_list(&actor, id, &filter, q.page).await?).into_response())
}

#[utoipa::path(put, path = "/v4/nodebalancers/{nodebalancer_id}/firewalls", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path)), request_body = NodeBalancerFirewallsUpdate, responses((status = 200, description = "A page of the load balancer's firewalls after the change", body = Page<Firewall>)))]
async fn nodebalancer_firewalls_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<NodeBalancerFirewallsUpdate>,
) -> ApiResult<Json<Page<Firewall>>> {
    Ok(Json(app.nodebalancer_firewalls_update(&actor, id, body).await?))
}
