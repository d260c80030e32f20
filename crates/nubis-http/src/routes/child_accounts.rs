//! Child accounts of a parent account and proxy-user tokens.

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_model::page::Page;
use nubis_model::signin::{CHILD_ACCOUNT_FILTERABLE, ChildAccount, ProxyUserToken};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiPath, ApiState, Auth, ListQuery};
use crate::list::filter_of;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(child_account_list))
        .routes(routes!(child_account_get))
        .routes(routes!(child_account_token))
}

#[utoipa::path(get, path = "/v4/account/child-accounts", tag = "account", responses((status = 200, description = "A page of child accounts", body = Page<ChildAccount>)))]
async fn child_account_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, CHILD_ACCOUNT_FILTERABLE)?;
    Ok(Json(app.child_account_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/account/child-accounts/{euuid}", tag = "account", params(("euuid" = String, Path)), responses((status = 200, body = ChildAccount)))]
async fn child_account_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(euuid): ApiPath<String>,
) -> ApiResult<Json<ChildAccount>> {
    Ok(Json(app.child_account_get(&actor, &euuid).await?))
}

#[utoipa::path(post, path = "/v4/account/child-accounts/{euuid}/token", tag = "account", params(("euuid" = String, Path)), responses((status = 200, body = ProxyUserToken, description = "The proxy-user token, shown this once")))]
async fn child_account_token(
    State(app): State<App>,
    actor: Auth,
    ApiPath(euuid): ApiPath<String>,
) -> ApiResult<Json<ProxyUserToken>> {
    Ok(Json(app.child_account_token(&actor, &euuid).await?))
}
