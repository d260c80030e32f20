//! Logins: the account's (unrestricted users) and the caller's own.

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_model::page::Page;
use nubis_model::signin::{LOGIN_FILTERABLE, Login};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiPath, ApiState, Auth, ListQuery};
use crate::list::filter_of;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(account_login_list))
        .routes(routes!(account_login_get))
        .routes(routes!(profile_logins))
        .routes(routes!(profile_login_get))
}

#[utoipa::path(get, path = "/v4/account/logins", tag = "account", responses((status = 200, description = "A page of successful logins of the last 90 days, newest first", body = Page<Login>)))]
async fn account_login_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, LOGIN_FILTERABLE)?;
    Ok(Json(app.account_login_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/account/logins/{login_id}", tag = "account", params(("login_id" = i64, Path)), responses((status = 200, body = Login)))]
async fn account_login_get(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Login>> {
    Ok(Json(app.account_login_get(&actor, id).await?))
}

#[utoipa::path(get, path = "/v4/profile/logins", tag = "profile", responses((status = 200, description = "A page of the caller's successful logins", body = Page<Login>)))]
async fn profile_logins(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, LOGIN_FILTERABLE)?;
    Ok(Json(app.profile_logins(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/profile/logins/{login_id}", tag = "profile", params(("login_id" = i64, Path)), responses((status = 200, body = Login)))]
async fn profile_login_get(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Login>> {
    Ok(Json(app.profile_login_get(&actor, id).await?))
}
