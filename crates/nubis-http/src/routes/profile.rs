//! The caller's profile, grants and personal access tokens.

use crate::json::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::profile::ProfileUpdate;
use nubis_app::tokens::{TokenCreate, TokenUpdate};
use nubis_model::account::{Profile, Token};
use nubis_model::grants::GrantsView;
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::routes::empty;

pub const TOKEN_FILTERABLE: &[&str] = &["id", "label", "created", "expiry"];

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(profile_get, profile_update))
        .routes(routes!(profile_grants))
        .routes(routes!(token_list, token_create))
        .routes(routes!(token_get, token_update, token_delete))
}

#[utoipa::path(get, path = "/v4/profile", tag = "profile", responses((status = 200, body = Profile)))]
async fn profile_get(State(app): State<App>, actor: Auth) -> ApiResult<Json<Profile>> {
    Ok(Json(app.profile_get(&actor).await?))
}

#[utoipa::path(put, path = "/v4/profile", tag = "profile", request_body = ProfileUpdate, responses((status = 200, body = Profile)))]
async fn profile_update(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<ProfileUpdate>,
) -> ApiResult<Json<Profile>> {
    Ok(Json(app.profile_update(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/profile/grants", tag = "profile", responses((status = 200, body = GrantsView), (status = 204, description = "Unrestricted user: no grants apply")))]
async fn profile_grants(State(app): State<App>, actor: Auth) -> ApiResult<Response> {
    Ok(match app.profile_grants(&actor).await? {
        Some(g) => Json(g).into_response(),
        None => StatusCode::NO_CONTENT.into_response(),
    })
}

#[utoipa::path(get, path = "/v4/profile/tokens", tag = "profile", responses((status = 200, description = "A page of tokens", body = Page<Token>)))]
async fn token_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = crate::list::filter_of(&q, TOKEN_FILTERABLE)?;
    Ok(Json(app.token_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/profile/tokens", tag = "profile", request_body = TokenCreate, responses((status = 200, body = Token)))]
async fn token_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<TokenCreate>,
) -> ApiResult<Json<Token>> {
    Ok(Json(app.token_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/profile/tokens/{token_id}", tag = "profile", params(("token_id" = i64, Path)), responses((status = 200, body = Token)))]
async fn token_get(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Token>> {
    Ok(Json(app.token_get(&actor, id).await?))
}

#[utoipa::path(put, path = "/v4/profile/tokens/{token_id}", tag = "profile", params(("token_id" = i64, Path)), request_body = TokenUpdate, responses((status = 200, body = Token)))]
async fn token_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<TokenUpdate>,
) -> ApiResult<Json<Token>> {
    Ok(Json(app.token_update(&actor, id, body).await?))
}

#[utoipa::path(delete, path = "/v4/profile/tokens/{token_id}", tag = "profile", params(("token_id" = i64, Path)), responses((status = 200, description = "Revoked")))]
async fn token_delete(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Value>> {
    app.token_delete(&actor, id).await?;
    Ok(empty())
}
