//! IPv6 pools and ranges, and VLANs (`/v4/networking/ipv6/*`, `/v4/networking/vlans`).

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::ipv6::Ipv6RangeCreate;
use nubis_model::instance::{VLAN_FILTERABLE, Vlan};
use nubis_model::ip::{
    IPV6_POOL_FILTERABLE, IPV6_RANGE_FILTERABLE, Ipv6Pool, Ipv6Range, Ipv6RangeCreated, Ipv6RangeView,
};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::list::{filter_of, page_of};
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(ipv6_pool_list))
        .routes(routes!(ipv6_range_list, ipv6_range_create))
        .routes(routes!(ipv6_range_get, ipv6_range_delete))
        .routes(routes!(vlan_list))
}

#[utoipa::path(get, path = "/v4/networking/ipv6/pools", tag = "networking", responses((status = 200, description = "A page of IPv6 pools", body = Page<Ipv6Pool>)))]
async fn ipv6_pool_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    page_of(&app.ipv6_pool_list(&actor).await?, &q, IPV6_POOL_FILTERABLE)
}

#[utoipa::path(get, path = "/v4/networking/ipv6/ranges", tag = "networking", responses((status = 200, description = "A page of IPv6 ranges", body = Page<Ipv6Range>)))]
async fn ipv6_range_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    page_of(&app.ipv6_range_list(&actor).await?, &q, IPV6_RANGE_FILTERABLE)
}

#[utoipa::path(post, path = "/v4/networking/ipv6/ranges", tag = "networking", request_body = Ipv6RangeCreate, responses((status = 200, body = Ipv6RangeCreated)))]
async fn ipv6_range_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<Ipv6RangeCreate>,
) -> ApiResult<Json<Ipv6RangeCreated>> {
    Ok(Json(app.ipv6_range_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/networking/ipv6/ranges/{range}", tag = "networking", params(("range" = String, Path, description = "The range's first address, without prefix length")), responses((status = 200, body = Ipv6RangeView)))]
async fn ipv6_range_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(range): ApiPath<String>,
) -> ApiResult<Json<Ipv6RangeView>> {
    Ok(Json(app.ipv6_range_get(&actor, &range).await?))
}

#[utoipa::path(delete, path = "/v4/networking/ipv6/ranges/{range}", tag = "networking", params(("range" = String, Path, description = "The range's first address, without prefix length")), responses((status = 200, description = "Deleted")))]
async fn ipv6_range_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath(range): ApiPath<String>,
) -> ApiResult<Json<Value>> {
    app.ipv6_range_delete(&actor, &range).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/networking/vlans", tag = "networking", responses((status = 200, description = "A page of VLANs", body = Page<Vlan>)))]
async fn vlan_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, VLAN_FILTERABLE)?;
    Ok(Json(app.vlan_list(&actor, &filter, q.page).await?).into_response())
}
