//! Linode interfaces of instances (the hosted API's `/linode/instances/{linodeId}/interfaces`),
//! their settings and history, the firewalls of one, and the upgrade from profile interfaces.

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::instance::{InterfaceSettingsUpdate, InterfacesUpgradeRequest, LinodeInterfaceRequest};
use nubis_model::firewall::{FIREWALL_FILTERABLE, Firewall};
use nubis_model::instance_profile::{
    INTERFACE_HISTORY_FILTERABLE, InterfaceHistory, InterfaceSettings, InterfacesUpgrade, LinodeInterface,
    LinodeInterfaces,
};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiResult, ErrorEnvelope};
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(instance_interface_list, instance_interface_create))
        .routes(routes!(instance_interface_history))
        .routes(routes!(instance_interface_settings_get, instance_interface_settings_update))
        .routes(routes!(instance_interface_get, instance_interface_update, instance_interface_delete))
        .routes(routes!(instance_interface_firewalls_list))
        .routes(routes!(instance_interfaces_upgrade))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/interfaces", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, body = LinodeInterfaces), (status = 400, description = "The instance uses profile interfaces", body = ErrorEnvelope)))]
async fn instance_interface_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<LinodeInterfaces>> {
    Ok(Json(app.instance_interface_list(&actor, id).await?))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/interfaces", tag = "instances", params(("instance_id" = i64, Path)), request_body = LinodeInterfaceRequest, responses((status = 200, body = LinodeInterface)))]
async fn instance_interface_create(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<LinodeInterfaceRequest>,
) -> ApiResult<Json<LinodeInterface>> {
    Ok(Json(app.instance_interface_create(&actor, id, body).await?))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/interfaces/history", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "A page of the versions of the instance's Linode interfaces", body = Page<InterfaceHistory>)))]
async fn instance_interface_history(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = crate::list::filter_of(&q, INTERFACE_HISTORY_FILTERABLE)?;
    Ok(Json(app.instance_interface_history(&actor, id, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/interfaces/settings", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, body = InterfaceSettings), (status = 400, description = "The instance uses profile interfaces", body = ErrorEnvelope)))]
async fn instance_interface_settings_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<InterfaceSettings>> {
    Ok(Json(app.instance_interface_settings_get(&actor, id).await?))
}

#[utoipa::path(put, path = "/v4/compute/instances/{instance_id}/interfaces/settings", tag = "instances", params(("instance_id" = i64, Path)), request_body = InterfaceSettingsUpdate, responses((status = 200, body = InterfaceSettings)))]
async fn instance_interface_settings_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<InterfaceSettingsUpdate>,
) -> ApiResult<Json<InterfaceSettings>> {
    Ok(Json(app.instance_interface_settings_update(&actor, id, body).await?))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/interfaces/{interface_id}", tag = "instances", params(("instance_id" = i64, Path), ("interface_id" = i64, Path)), responses((status = 200, body = LinodeInterface), (status = 400, description = "The instance uses profile interfaces", body = ErrorEnvelope)))]
async fn instance_interface_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, interface_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<LinodeInterface>> {
    Ok(Json(app.instance_interface_get(&actor, id, interface_id).await?))
}

#[utoipa::path(put, path = "/v4/compute/instances/{instance_id}/interfaces/{interface_id}", tag = "instances", params(("instance_id" = i64, Path), ("interface_id" = i64, Path)), request_body = LinodeInterfaceRequest, responses((status = 200, body = LinodeInterface)))]
async fn instance_interface_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, interface_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<LinodeInterfaceRequest>,
) -> ApiResult<Json<LinodeInterface>> {
    Ok(Json(app.instance_interface_update(&actor, id, interface_id, body).await?))
}

#[utoipa::path(delete, path = "/v4/compute/instances/{instance_id}/interfaces/{interface_id}", tag = "instances", params(("instance_id" = i64, Path), ("interface_id" = i64, Path)), responses((status = 200, description = "Deleted")))]
async fn instance_interface_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, interface_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Value>> {
    app.instance_interface_delete(&actor, id, interface_id).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/interfaces/{interface_id}/firewalls", tag = "instances", params(("instance_id" = i64, Path), ("interface_id" = i64, Path)), responses((status = 200, description = "A page of the firewalls of the interface", body = Page<Firewall>)))]
async fn instance_interface_firewalls_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, interface_id)): ApiPath<(i64, i64)>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = crate::list::filter_of(&q, FIREWALL_FILTERABLE)?;
    Ok(Json(app.instance_interface_firewalls_list(&actor, id, interface_id, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/upgrade-interfaces", tag = "instances", params(("instance_id" = i64, Path)), request_body = InterfacesUpgradeRequest, responses((status = 200, body = InterfacesUpgrade)))]
async fn instance_interfaces_upgrade(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<InterfacesUpgradeRequest>,
) -> ApiResult<Json<InterfacesUpgrade>> {
    Ok(Json(app.instance_interfaces_upgrade(&actor, id, body).await?))
}
