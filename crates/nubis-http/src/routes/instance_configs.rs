//! Configuration profiles of instances and their interfaces (the hosted API's
//! `/linode/instances/{linodeId}/configs`).

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::instance::{ConfigInterfaceUpdate, InstanceConfigRequest, InterfaceRequest, InterfacesOrder};
use nubis_model::instance::Interface;
use nubis_model::instance_profile::{CONFIG_FILTERABLE, Config};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(instance_config_list, instance_config_create))
        .routes(routes!(instance_config_get, instance_config_update, instance_config_delete))
        .routes(routes!(instance_config_interface_list, instance_config_interface_create))
        .routes(routes!(instance_config_interfaces_order))
        .routes(routes!(
            instance_config_interface_get,
            instance_config_interface_update,
            instance_config_interface_delete
        ))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/configs", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "A page of the instance's configuration profiles", body = Page<Config>)))]
async fn instance_config_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = crate::list::filter_of(&q, CONFIG_FILTERABLE)?;
    Ok(Json(app.instance_config_list(&actor, id, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/configs", tag = "instances", params(("instance_id" = i64, Path)), request_body = InstanceConfigRequest, responses((status = 200, body = Config)))]
async fn instance_config_create(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<InstanceConfigRequest>,
) -> ApiResult<Json<Config>> {
    Ok(Json(app.instance_config_create(&actor, id, body).await?))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/configs/{instance_config_id}", tag = "instances", params(("instance_id" = i64, Path), ("instance_config_id" = i64, Path)), responses((status = 200, body = Config)))]
async fn instance_config_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Config>> {
    Ok(Json(app.instance_config_get(&actor, id, config_id).await?))
}

#[utoipa::path(put, path = "/v4/compute/instances/{instance_id}/configs/{instance_config_id}", tag = "instances", params(("instance_id" = i64, Path), ("instance_config_id" = i64, Path)), request_body = InstanceConfigRequest, responses((status = 200, body = Config)))]
async fn instance_config_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<InstanceConfigRequest>,
) -> ApiResult<Json<Config>> {
    Ok(Json(app.instance_config_update(&actor, id, config_id, body).await?))
}

#[utoipa::path(delete, path = "/v4/compute/instances/{instance_id}/configs/{instance_config_id}", tag = "instances", params(("instance_id" = i64, Path), ("instance_config_id" = i64, Path)), responses((status = 200, description = "Deleted with its interfaces")))]
async fn instance_config_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Value>> {
    app.instance_config_delete(&actor, id, config_id).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/configs/{instance_config_id}/interfaces", tag = "instances", params(("instance_id" = i64, Path), ("instance_config_id" = i64, Path)), responses((status = 200, description = "The profile's interfaces, eth0 first", body = Vec<Interface>)))]
async fn instance_config_interface_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Vec<Interface>>> {
    Ok(Json(app.instance_config_interface_list(&actor, id, config_id).await?))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/configs/{instance_config_id}/interfaces", tag = "instances", params(("instance_id" = i64, Path), ("instance_config_id" = i64, Path)), request_body = InterfaceRequest, responses((status = 200, body = Interface)))]
async fn instance_config_interface_create(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<InterfaceRequest>,
) -> ApiResult<Json<Interface>> {
    Ok(Json(app.instance_config_interface_create(&actor, id, config_id, body).await?))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/configs/{instance_config_id}/interfaces/order", tag = "instances", params(("instance_id" = i64, Path), ("instance_config_id" = i64, Path)), request_body = InterfacesOrder, responses((status = 200, description = "Reordered")))]
async fn instance_config_interfaces_order(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<InterfacesOrder>,
) -> ApiResult<Json<Value>> {
    app.instance_config_interfaces_order(&actor, id, config_id, body).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/configs/{instance_config_id}/interfaces/{interface_id}", tag = "instances", params(("instance_id" = i64, Path), ("instance_config_id" = i64, Path), ("interface_id" = i64, Path)), responses((status = 200, body = Interface)))]
async fn instance_config_interface_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id, interface_id)): ApiPath<(i64, i64, i64)>,
) -> ApiResult<Json<Interface>> {
    Ok(Json(app.instance_config_interface_get(&actor, id, config_id, interface_id).await?))
}

#[utoipa::path(put, path = "/v4/compute/instances/{instance_id}/configs/{instance_config_id}/interfaces/{interface_id}", tag = "instances", params(("instance_id" = i64, Path), ("instance_config_id" = i64, Path), ("interface_id" = i64, Path)), request_body = ConfigInterfaceUpdate, responses((status = 200, body = Interface)))]
async fn instance_config_interface_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id, interface_id)): ApiPath<(i64, i64, i64)>,
    ApiJson(body): ApiJson<ConfigInterfaceUpdate>,
) -> ApiResult<Json<Interface>> {
    Ok(Json(app.instance_config_interface_update(&actor, id, config_id, interface_id, body).await?))
}

#[utoipa::path(delete, path = "/v4/compute/instances/{instance_id}/configs/{instance_config_id}/interfaces/{interface_id}", tag = "instances", params(("instance_id" = i64, Path), ("instance_config_id" = i64, Path), ("interface_id" = i64, Path)), responses((status = 200, description = "Deleted")))]
async fn instance_config_interface_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id, interface_id)): ApiPath<(i64, i64, i64)>,
) -> ApiResult<Json<Value>> {
    app.instance_config_interface_delete(&actor, id, config_id, interface_id).await?;
    Ok(empty())
}
