//! The caller's profile SSH keys (`/v4/profile/sshkeys`).

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::sshkeys::{SshKeyCreate, SshKeyUpdate};
use nubis_model::instance_profile::{SSH_KEY_FILTERABLE, SshKey};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new().routes(routes!(ssh_key_list, ssh_key_create)).routes(routes!(
        ssh_key_get,
        ssh_key_update,
        ssh_key_delete
    ))
}

#[utoipa::path(get, path = "/v4/profile/sshkeys", tag = "profile", responses((status = 200, description = "A page of the caller's SSH keys", body = Page<SshKey>)))]
async fn ssh_key_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = crate::list::filter_of(&q, SSH_KEY_FILTERABLE)?;
    Ok(Json(app.ssh_key_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/profile/sshkeys", tag = "profile", request_body = SshKeyCreate, responses((status = 200, body = SshKey)))]
async fn ssh_key_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<SshKeyCreate>,
) -> ApiResult<Json<SshKey>> {
    Ok(Json(app.ssh_key_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/profile/sshkeys/{ssh_key_id}", tag = "profile", params(("ssh_key_id" = i64, Path)), responses((status = 200, body = SshKey)))]
async fn ssh_key_get(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<SshKey>> {
    Ok(Json(app.ssh_key_get(&actor, id).await?))
}

#[utoipa::path(put, path = "/v4/profile/sshkeys/{ssh_key_id}", tag = "profile", params(("ssh_key_id" = i64, Path)), request_body = SshKeyUpdate, responses((status = 200, body = SshKey)))]
async fn ssh_key_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<SshKeyUpdate>,
) -> ApiResult<Json<SshKey>> {
    Ok(Json(app.ssh_key_update(&actor, id, body).await?))
}

#[utoipa::path(delete, path = "/v4/profile/sshkeys/{ssh_key_id}", tag = "profile", params(("ssh_key_id" = i64, Path)), responses((status = 200, description = "Deleted")))]
async fn ssh_key_delete(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Value>> {
    app.ssh_key_delete(&actor, id).await?;
    Ok(empty())
}
