//! Service transfers, and the deprecated entity-transfer operations on the same records, which
//! answer with a deprecation indication in their headers (`Deprecation: true` and a `Link` to the
//! successor operations).

use crate::json::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::service_transfer::{TransferCreate, Via};
use nubis_model::page::Page;
use nubis_model::service_transfer::{SERVICE_TRANSFER_FILTERABLE, ServiceTransfer};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::list::filter_of;
use crate::routes::empty;

// The entity-transfer handlers carry `#[deprecated]` so that the OpenAPI document marks them.
#[expect(deprecated)]
pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(service_transfer_list, service_transfer_create))
        .routes(routes!(service_transfer_get, service_transfer_cancel))
        .routes(routes!(service_transfer_accept))
        .routes(routes!(entity_transfer_list, entity_transfer_create))
        .routes(routes!(entity_transfer_get, entity_transfer_cancel))
        .routes(routes!(entity_transfer_accept))
}

async fn list(app: &App, actor: &Auth, via: Via, q: &ListQuery) -> ApiResult<Response> {
    let filter = filter_of(q, SERVICE_TRANSFER_FILTERABLE)?;
    Ok(Json(app.service_transfer_list(actor, via, &filter, q.page).await?).into_response())
}

/// Marks a response (success or error) of a deprecated entity-transfer operation.
fn deprecated<T: IntoResponse>(r: ApiResult<T>) -> Response {
    let mut r = match r {
        Ok(v) => v.into_response(),
        Err(e) => e.into_response(),
    };
    let h = r.headers_mut();
    h.insert("deprecation", HeaderValue::from_static("true"));
    h.insert("link", HeaderValue::from_static("</v4/account/service-transfers>; rel=\"successor-version\""));
    r
}

#[utoipa::path(get, path = "/v4/account/service-transfers", tag = "account", responses((status = 200, description = "A page of the transfers the account created or accepted", body = Page<ServiceTransfer>)))]
async fn service_transfer_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    list(&app, &actor, Via::Service, &q).await
}

#[utoipa::path(post, path = "/v4/account/service-transfers", tag = "account", request_body = TransferCreate, responses((status = 200, body = ServiceTransfer)))]
async fn service_transfer_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<TransferCreate>,
) -> ApiResult<Json<ServiceTransfer>> {
    Ok(Json(app.service_transfer_create(&actor, Via::Service, body).await?))
}

#[utoipa::path(get, path = "/v4/account/service-transfers/{token}", tag = "account", params(("token" = String, Path, description = "The transfer's UUID")), responses((status = 200, body = ServiceTransfer)))]
async fn service_transfer_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(token): ApiPath<String>,
) -> ApiResult<Json<ServiceTransfer>> {
    Ok(Json(app.service_transfer_get(&actor, Via::Service, &token).await?))
}

#[utoipa::path(delete, path = "/v4/account/service-transfers/{token}", tag = "account", params(("token" = String, Path, description = "The transfer's UUID")), responses((status = 200, description = "Canceled")))]
async fn service_transfer_cancel(
    State(app): State<App>,
    actor: Auth,
    ApiPath(token): ApiPath<String>,
) -> ApiResult<Response> {
    app.service_transfer_cancel(&actor, Via::Service, &token).await?;
    Ok(empty().into_response())
}

#[utoipa::path(post, path = "/v4/account/service-transfers/{token}/accept", tag = "account", params(("token" = String, Path, description = "The transfer's UUID")), responses((status = 200, description = "Accepted; the instances move shortly")))]
async fn service_transfer_accept(
    State(app): State<App>,
    actor: Auth,
    ApiPath(token): ApiPath<String>,
) -> ApiResult<Response> {
    app.service_transfer_accept(&actor, Via::Service, &token).await?;
    Ok(empty().into_response())
}

#[utoipa::path(get, path = "/v4/account/entity-transfers", tag = "account", responses((status = 200, description = "Deprecated: use GET /v4/account/service-transfers", body = Page<ServiceTransfer>)))]
#[deprecated]
async fn entity_transfer_list(State(app): State<App>, actor: Auth, q: ListQuery) -> Response {
    deprecated(list(&app, &actor, Via::Entity, &q).await)
}

#[utoipa::path(post, path = "/v4/account/entity-transfers", tag = "account", request_body = TransferCreate, responses((status = 200, body = ServiceTransfer, description = "Deprecated: use POST /v4/account/service-transfers")))]
#[deprecated]
async fn entity_transfer_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<TransferCreate>,
) -> Response {
    deprecated(app.service_transfer_create(&actor, Via::Entity, body).await.map(Json).map_err(Into::into))
}

#[utoipa::path(get, path = "/v4/account/entity-transfers/{token}", tag = "account", params(("token" = String, Path, description = "The transfer's UUID")), responses((status = 200, body = ServiceTransfer, description = "Deprecated: use GET /v4/account/service-transfers/{token}")))]
#[deprecated]
async fn entity_transfer_get(State(app): State<App>, actor: Auth, ApiPath(token): ApiPath<String>) -> Response {
    deprecated(app.service_transfer_get(&actor, Via::Entity, &token).await.map(Json).map_err(Into::into))
}

#[utoipa::path(delete, path = "/v4/account/entity-transfers/{token}", tag = "account", params(("token" = String, Path, description = "The transfer's UUID")), responses((status = 200, description = "Deprecated: use DELETE /v4/account/service-transfers/{token}")))]
#[deprecated]
async fn entity_transfer_cancel(State(app): State<App>, actor: Auth, ApiPath(token): ApiPath<String>) -> Response {
    deprecated(app.service_transfer_cancel(&actor, Via::Entity, &token).await.map(|()| empty()).map_err(Into::into))
}

#[utoipa::path(post, path = "/v4/account/entity-transfers/{token}/accept", tag = "account", params(("token" = String, Path, description = "The transfer's UUID")), responses((status = 200, description = "Deprecated: use POST /v4/account/service-transfers/{token}/accept")))]
#[deprecated]
async fn entity_transfer_accept(State(app): State<App>, actor: Auth, ApiPath(token): ApiPath<String>) -> Response {
    deprecated(app.service_transfer_accept(&actor, Via::Entity, &token).await.map(|()| empty()).map_err(Into::into))
}
