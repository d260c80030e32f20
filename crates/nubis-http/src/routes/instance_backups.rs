//! The Backup service of instances (the hosted API's `/linode/instances/{linodeId}/backups`) and
//! an instance's volumes.

use crate::json::Json;
use axum::extract::State;
use nubis_app::App;
use nubis_app::instance::{Backup, BackupList, RestoreRequest, SnapshotRequest, Volume};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(instance_backup_list, instance_snapshot_create))
        .routes(routes!(instance_backups_cancel))
        .routes(routes!(instance_backups_enable))
        .routes(routes!(instance_backup_get))
        .routes(routes!(instance_backup_restore))
        .routes(routes!(instance_volume_list))
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/backups", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "The instance's automatic backups and its snapshot slot", body = BackupList)))]
async fn instance_backup_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<BackupList>> {
    Ok(Json(app.instance_backup_list(&actor, id).await?))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/backups", tag = "instances", params(("instance_id" = i64, Path)), request_body = SnapshotRequest, responses((status = 200, description = "The snapshot (it replaces the previous one)", body = Backup)))]
async fn instance_snapshot_create(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<SnapshotRequest>,
) -> ApiResult<Json<Backup>> {
    Ok(Json(app.instance_snapshot_create(&actor, id, body).await?))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/backups/cancel", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "The Backup service is canceled and the instance's backups are deleted")))]
async fn instance_backups_cancel(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Value>> {
    app.instance_backups_cancel(&actor, id).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/backups/enable", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "The Backup service is enabled (and billed)")))]
async fn instance_backups_enable(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Value>> {
    app.instance_backups_enable(&actor, id).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/backups/{backup_id}", tag = "instances", params(("instance_id" = i64, Path), ("backup_id" = i64, Path)), responses((status = 200, body = Backup)))]
async fn instance_backup_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, backup_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Backup>> {
    Ok(Json(app.instance_backup_get(&actor, id, backup_id).await?))
}

#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/backups/{backup_id}/restore", tag = "instances", params(("instance_id" = i64, Path), ("backup_id" = i64, Path)), request_body = RestoreRequest, responses((status = 200, description = "The backup's disks and profiles are on the target instance")))]
async fn instance_backup_restore(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, backup_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<RestoreRequest>,
) -> ApiResult<Json<Value>> {
    app.instance_backup_restore(&actor, id, backup_id, body).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/compute/instances/{instance_id}/volumes", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "The instance's volumes: none (volumes are not offered)", body = Page<Volume>)))]
async fn instance_volume_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Json<Page<Volume>>> {
    Ok(Json(app.instance_volume_list(&actor, id, q.page).await?))
}
