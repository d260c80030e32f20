//! OAuth clients of the account and their thumbnails.

use crate::json::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::oauth_clients::{ClientCreate, ClientUpdate};
use nubis_model::page::Page;
use nubis_model::signin::{CLIENT_FILTERABLE, OAuthClient};
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::list::filter_of;
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(oauth_client_list, oauth_client_create))
        .routes(routes!(oauth_client_get, oauth_client_update, oauth_client_delete))
        .routes(routes!(oauth_client_reset_secret))
        .routes(routes!(oauth_client_thumbnail_get, oauth_client_thumbnail_update))
}

#[utoipa::path(get, path = "/v4/account/oauth-clients", tag = "account", responses((status = 200, description = "A page of OAuth clients", body = Page<OAuthClient>)))]
async fn oauth_client_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, CLIENT_FILTERABLE)?;
    Ok(Json(app.oauth_client_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/account/oauth-clients", tag = "account", request_body = ClientCreate, responses((status = 200, body = OAuthClient, description = "The client with its secret, shown this once")))]
async fn oauth_client_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<ClientCreate>,
) -> ApiResult<Json<OAuthClient>> {
    Ok(Json(app.oauth_client_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/account/oauth-clients/{client_id}", tag = "account", params(("client_id" = String, Path)), responses((status = 200, body = OAuthClient)))]
async fn oauth_client_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<OAuthClient>> {
    Ok(Json(app.oauth_client_get(&actor, &id).await?))
}

#[utoipa::path(put, path = "/v4/account/oauth-clients/{client_id}", tag = "account", params(("client_id" = String, Path)), request_body = ClientUpdate, responses((status = 200, body = OAuthClient)))]
async fn oauth_client_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<ClientUpdate>,
) -> ApiResult<Json<OAuthClient>> {
    Ok(Json(app.oauth_client_update(&actor, &id, body).await?))
}

#[utoipa::path(delete, path = "/v4/account/oauth-clients/{client_id}", tag = "account", params(("client_id" = String, Path)), responses((status = 200, description = "Deleted; its tokens stop working")))]
async fn oauth_client_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    app.oauth_client_delete(&actor, &id).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/account/oauth-clients/{client_id}/reset-secret", tag = "account", params(("client_id" = String, Path)), responses((status = 200, body = OAuthClient, description = "The client with its new secret, shown this once")))]
async fn oauth_client_reset_secret(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<OAuthClient>> {
    Ok(Json(app.oauth_client_reset_secret(&actor, &id).await?))
}

#[utoipa::path(get, path = "/v4/account/oauth-clients/{client_id}/thumbnail", tag = "account", security(()), params(("client_id" = String, Path)), responses((status = 200, description = "The thumbnail (PNG or JPEG)", content_type = "image/png")))]
async fn oauth_client_thumbnail_get(State(app): State<App>, ApiPath(id): ApiPath<String>) -> ApiResult<Response> {
    let (content_type, bytes) = app.oauth_client_thumbnail_get(&id).await?;
    Ok(([(header::CONTENT_TYPE, content_type)], bytes).into_response())
}

/// An image file as the body of a request: bytes, not JSON.
struct Image;

impl utoipa::PartialSchema for Image {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        nubis_model::schema::schema(serde_json::json!({"type": "string", "format": "binary"})).into()
    }
}

impl utoipa::ToSchema for Image {}

#[utoipa::path(put, path = "/v4/account/oauth-clients/{client_id}/thumbnail", tag = "account", params(("client_id" = String, Path)), request_body(content = Image, content_type = "image/png", description = "A PNG or JPEG image"), responses((status = 200, description = "Thumbnail set")))]
async fn oauth_client_thumbnail_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<String>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    app.oauth_client_thumbnail_update(&actor, &id, &body).await?;
    Ok(empty())
}
