//! IP addresses of the account (`/v4/networking/ips`).

use crate::json::Json;
use axum::extract::State;
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::Op;
use nubis_app::ip::{IpAllocate, IpAssign, IpShare, IpUpdate};
use nubis_model::ip::{IP_FILTERABLE, IpAddress};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery, query_flag};
use crate::list::filter_of;
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(ip_list, ip_allocate))
        .routes(routes!(ip_assign))
        .routes(routes!(ipv4_assign))
        .routes(routes!(ip_share))
        .routes(routes!(ipv4_share))
        .routes(routes!(ip_get, ip_update))
}

#[utoipa::path(get, path = "/v4/networking/ips", tag = "networking", params(("skip_ipv6_rdns" = Option<bool>, Query, description = "When true, rdns of IPv6 addresses is null")), responses((status = 200, description = "A page of the account's addresses, private ones excluded", body = Page<IpAddress>)))]
async fn ip_list(State(app): State<App>, actor: Auth, uri: Uri, q: ListQuery) -> ApiResult<Response> {
    let skip = query_flag(uri.query(), "skip_ipv6_rdns")?;
    let filter = filter_of(&q, IP_FILTERABLE)?;
    Ok(Json(app.ip_list(&actor, skip, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/networking/ips", tag = "networking", request_body = IpAllocate, responses((status = 200, body = IpAddress)))]
async fn ip_allocate(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<IpAllocate>,
) -> ApiResult<Json<IpAddress>> {
    Ok(Json(app.ip_allocate(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/networking/ips/{address}", tag = "networking", params(("address" = String, Path)), responses((status = 200, body = IpAddress)))]
async fn ip_get(State(app): State<App>, actor: Auth, ApiPath(address): ApiPath<String>) -> ApiResult<Json<IpAddress>> {
    Ok(Json(app.ip_get(&actor, &address).await?))
}

#[utoipa::path(put, path = "/v4/networking/ips/{address}", tag = "networking", params(("address" = String, Path)), request_body = IpUpdate, responses((status = 200, body = IpAddress)))]
async fn ip_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(address): ApiPath<String>,
    ApiJson(body): ApiJson<IpUpdate>,
) -> ApiResult<Json<IpAddress>> {
    Ok(Json(app.ip_update(&actor, &address, body).await?))
}

#[utoipa::path(post, path = "/v4/networking/ips/assign", tag = "networking", request_body = IpAssign, responses((status = 200, description = "Every assignment made")))]
async fn ip_assign(State(app): State<App>, actor: Auth, ApiJson(body): ApiJson<IpAssign>) -> ApiResult<Json<Value>> {
    app.ip_assign(&actor, Op::IpAssign, body).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/networking/ipv4/assign", tag = "networking", request_body = IpAssign, responses((status = 200, description = "Every assignment made")))]
async fn ipv4_assign(State(app): State<App>, actor: Auth, ApiJson(body): ApiJson<IpAssign>) -> ApiResult<Json<Value>> {
    app.ip_assign(&actor, Op::Ipv4Assign, body).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/networking/ips/share", tag = "networking", request_body = IpShare, responses((status = 200, description = "Sharing configured")))]
async fn ip_share(State(app): State<App>, actor: Auth, ApiJson(body): ApiJson<IpShare>) -> ApiResult<Json<Value>> {
    app.ip_share(&actor, Op::IpShare, body).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/networking/ipv4/share", tag = "networking", request_body = IpShare, responses((status = 200, description = "Sharing configured")))]
async fn ipv4_share(State(app): State<App>, actor: Auth, ApiJson(body): ApiJson<IpShare>) -> ApiResult<Json<Value>> {
    app.ip_share(&actor, Op::Ipv4Share, body).await?;
    Ok(empty())
}
