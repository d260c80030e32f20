//! Lifecycle actions and usage of instances beyond boot and shutdown (the hosted API's rebuild,
//! resize, mutate, migrate, clone, password, rescue, transfer and stats).

use crate::json::Json;
use axum::extract::State;
use nubis_app::App;
use nubis_app::instance::{
    CloneRequest, MigrateRequest, MutateRequest, PasswordRequest, RebuildRequest, RescueRequest, ResizeRequest,
};
use nubis_model::instance::Instance;
use nubis_model::instance_profile::{InstanceStats, InstanceTransfer, InstanceTransferMonth};
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiResult, ErrorEnvelope};
use crate::extract::{ApiJson, ApiPath, ApiState, Auth};
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(instance_rebuild))
        .routes(routes!(instance_resize))
        .routes(routes!(instance_mutate))
        .routes(routes!(instance_migrate))
        .routes(routes!(instance_clone))
        .routes(routes!(instance_password_reset))
        .routes(routes!(instance_rescue))
        .routes(routes!(instance_transfer_get))
        .routes(routes!(instance_transfer_month))
        .routes(routes!(instance_stats_get))
        .routes(routes!(instance_stats_month))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/rebuild", tag = "instances", params(("instance_id" = i64, Path)), request_body = RebuildRequest, responses((status = 200, description = "Rebuild started", body = Instance)))]
async fn instance_rebuild(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<RebuildRequest>,
) -> ApiResult<Json<Instance>> {
    Ok(Json(app.instance_rebuild(&actor, id, body).await?))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/resize", tag = "instances", params(("instance_id" = i64, Path)), request_body = ResizeRequest, responses((status = 200, description = "Resize started")))]
async fn instance_resize(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<ResizeRequest>,
) -> ApiResult<Json<Value>> {
    app.instance_resize(&actor, id, body).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/mutate", tag = "instances", params(("instance_id" = i64, Path)), request_body = MutateRequest, responses((status = 200, description = "Upgrade started")))]
async fn instance_mutate(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<MutateRequest>,
) -> ApiResult<Json<Value>> {
    app.instance_mutate(&actor, id, body).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/migrate", tag = "instances", params(("instance_id" = i64, Path)), request_body = MigrateRequest, responses((status = 200, description = "Migration started")))]
async fn instance_migrate(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<MigrateRequest>,
) -> ApiResult<Json<Value>> {
    app.instance_migrate(&actor, id, body).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/clone", tag = "instances", params(("instance_id" = i64, Path)), request_body = CloneRequest, responses((status = 200, description = "The instance cloned to", body = Instance)))]
async fn instance_clone(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<CloneRequest>,
) -> ApiResult<Json<Instance>> {
    Ok(Json(app.instance_clone(&actor, id, body).await?))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/password", tag = "instances", params(("instance_id" = i64, Path)), request_body = PasswordRequest, responses((status = 200, description = "Root's password is reset")))]
async fn instance_password_reset(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<PasswordRequest>,
) -> ApiResult<Json<Value>> {
    app.instance_password_reset(&actor, id, body).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/rescue", tag = "instances", params(("instance_id" = i64, Path)), request_body = RescueRequest, responses((status = 200, description = "Rescue boot started")))]
async fn instance_rescue(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<RescueRequest>,
) -> ApiResult<Json<Value>> {
    app.instance_rescue(&actor, id, body).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/transfer", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, body = InstanceTransfer)))]
async fn instance_transfer_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<InstanceTransfer>> {
    Ok(Json(app.instance_transfer_get(&actor, id).await?))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/transfer/{year}/{month}", tag = "instances", params(("instance_id" = i64, Path), ("year" = i64, Path), ("month" = i64, Path)), responses((status = 200, body = InstanceTransferMonth), (status = 400, description = "A month to come", body = ErrorEnvelope)))]
async fn instance_transfer_month(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, year, month)): ApiPath<(i64, i64, i64)>,
) -> ApiResult<Json<InstanceTransferMonth>> {
    Ok(Json(app.instance_transfer_month(&actor, id, year, month).await?))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/stats", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, body = InstanceStats)))]
async fn instance_stats_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<InstanceStats>> {
    Ok(Json(app.instance_stats_get(&actor, id).await?))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/stats/{year}/{month}", tag = "instances", params(("instance_id" = i64, Path), ("year" = i64, Path), ("month" = i64, Path)), responses((status = 200, body = InstanceStats), (status = 400, description = "A month to come", body = ErrorEnvelope)))]
async fn instance_stats_month(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, year, month)): ApiPath<(i64, i64, i64)>,
) -> ApiResult<Json<InstanceStats>> {
    Ok(Json(app.instance_stats_month(&actor, id, year, month).await?))
}
