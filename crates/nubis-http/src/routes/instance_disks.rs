//! Disks of instances (the hosted API's `/linode/instances/{linodeId}/disks`).

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::instance::{DiskCreate, DiskPassword, DiskResize, DiskUpdate};
use nubis_model::instance_profile::{DISK_FILTERABLE, Disk};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(instance_disk_list, instance_disk_create))
        .routes(routes!(instance_disk_get, instance_disk_update, instance_disk_delete))
        .routes(routes!(instance_disk_clone))
        .routes(routes!(instance_disk_resize))
        .routes(routes!(instance_disk_password_reset))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/disks", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "A page of the instance's disks", body = Page<Disk>)))]
async fn instance_disk_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = crate::list::filter_of(&q, DISK_FILTERABLE)?;
    Ok(Json(app.instance_disk_list(&actor, id, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/disks", tag = "instances", params(("instance_id" = i64, Path)), request_body = DiskCreate, responses((status = 200, body = Disk)))]
async fn instance_disk_create(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<DiskCreate>,
) -> ApiResult<Json<Disk>> {
    Ok(Json(app.instance_disk_create(&actor, id, body).await?))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/disks/{disk_id}", tag = "instances", params(("instance_id" = i64, Path), ("disk_id" = i64, Path)), responses((status = 200, body = Disk)))]
async fn instance_disk_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, disk_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Disk>> {
    Ok(Json(app.instance_disk_get(&actor, id, disk_id).await?))
}

#[utoipa::path(put, path = "/v4/compute/instances/{instance_id}/disks/{disk_id}", tag = "instances", params(("instance_id" = i64, Path), ("disk_id" = i64, Path)), request_body = DiskUpdate, responses((status = 200, body = Disk)))]
async fn instance_disk_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, disk_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<DiskUpdate>,
) -> ApiResult<Json<Disk>> {
    Ok(Json(app.instance_disk_update(&actor, id, disk_id, body).await?))
}

#[utoipa::path(delete, path = "/v4/compute/instances/{instance_id}/disks/{disk_id}", tag = "instances", params(("instance_id" = i64, Path), ("disk_id" = i64, Path)), responses((status = 200, description = "Deleted; profiles naming it forget it")))]
async fn instance_disk_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, disk_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Value>> {
    app.instance_disk_delete(&actor, id, disk_id).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/disks/{disk_id}/clone", tag = "instances", params(("instance_id" = i64, Path), ("disk_id" = i64, Path)), responses((status = 200, description = "The copy", body = Disk)))]
async fn instance_disk_clone(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, disk_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Disk>> {
    Ok(Json(app.instance_disk_clone(&actor, id, disk_id).await?))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/disks/{disk_id}/resize", tag = "instances", params(("instance_id" = i64, Path), ("disk_id" = i64, Path)), request_body = DiskResize, responses((status = 200, description = "Resized")))]
async fn instance_disk_resize(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, disk_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<DiskResize>,
) -> ApiResult<Json<Value>> {
    app.instance_disk_resize(&actor, id, disk_id, body).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/disks/{disk_id}/password", tag = "instances", params(("instance_id" = i64, Path), ("disk_id" = i64, Path)), request_body = DiskPassword, responses((status = 200, description = "Root's password on the disk is reset")))]
async fn instance_disk_password_reset(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, disk_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<DiskPassword>,
) -> ApiResult<Json<Value>> {
    app.instance_disk_password_reset(&actor, id, disk_id, body).await?;
    Ok(empty())
}
