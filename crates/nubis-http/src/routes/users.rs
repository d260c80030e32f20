//! Users of the account and their grants.

use crate::json::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::users::{UserCreate, UserUpdate};
use nubis_model::account::User;
use nubis_model::grants::{GrantsUpdate, GrantsView};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiResult, ErrorEnvelope};
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::routes::empty;

pub const USER_FILTERABLE: &[&str] = &["username", "email", "restricted", "user_type"];

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(user_list, user_create))
        .routes(routes!(user_get, user_update, user_delete))
        .routes(routes!(user_grants_get, user_grants_update))
}

#[utoipa::path(get, path = "/v4/account/users", tag = "account", responses((status = 200, description = "A page of users", body = Page<User>)))]
async fn user_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = crate::list::filter_of(&q, USER_FILTERABLE)?;
    Ok(Json(app.user_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/account/users", tag = "account", request_body = UserCreate, responses((status = 200, body = User)))]
async fn user_create(State(app): State<App>, actor: Auth, ApiJson(body): ApiJson<UserCreate>) -> ApiResult<Json<User>> {
    Ok(Json(app.user_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/account/users/{username}", tag = "account", params(("username" = String, Path)), responses((status = 200, body = User)))]
async fn user_get(State(app): State<App>, actor: Auth, ApiPath(username): ApiPath<String>) -> ApiResult<Json<User>> {
    Ok(Json(app.user_get(&actor, &username).await?))
}

#[utoipa::path(put, path = "/v4/account/users/{username}", tag = "account", params(("username" = String, Path)), request_body = UserUpdate, responses((status = 200, body = User)))]
async fn user_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(username): ApiPath<String>,
    ApiJson(body): ApiJson<UserUpdate>,
) -> ApiResult<Json<User>> {
    Ok(Json(app.user_update(&actor, &username, body).await?))
}

#[utoipa::path(delete, path = "/v4/account/users/{username}", tag = "account", params(("username" = String, Path)), responses((status = 200, description = "Deleted")))]
async fn user_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath(username): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    app.user_delete(&actor, &username).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/account/users/{username}/grants", tag = "account", params(("username" = String, Path)), responses((status = 200, body = GrantsView), (status = 204, description = "Unrestricted user: no grants apply"), (status = 400, body = ErrorEnvelope, description = "The account owner or the current user (their grants are read elsewhere)")))]
async fn user_grants_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(username): ApiPath<String>,
) -> ApiResult<Response> {
    Ok(match app.user_grants_get(&actor, &username).await? {
        Some(g) => Json(g).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

#[utoipa::path(put, path = "/v4/account/users/{username}/grants", tag = "account", params(("username" = String, Path)), request_body = GrantsUpdate, responses((status = 200, body = GrantsView)))]
async fn user_grants_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(username): ApiPath<String>,
    ApiJson(body): ApiJson<GrantsUpdate>,
) -> ApiResult<Json<GrantsView>> {
    Ok(Json(app.user_grants_update(&actor, &username, body).await?))
}
