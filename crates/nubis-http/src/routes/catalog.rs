//! Regions, instance types and images (public, from the configuration).

use crate::json::Json;
use axum::extract::State;
use axum::response::Response;
use nubis_app::App;
use nubis_app::auth::Op;
use nubis_model::catalog::{
    BalancerType, IMAGE_FILTERABLE, Image, InstanceType, MAINTENANCE_POLICY_FILTERABLE, MaintenancePolicy,
    REGION_AVAILABILITY_FILTERABLE, REGION_FILTERABLE, Region, RegionAvailability, TYPE_FILTERABLE, TransferPrice,
    VPC_AVAILABILITY_FILTERABLE, VpcAvailability,
};
use nubis_model::page::Page;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::list::page_of;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(region_list))
        .routes(routes!(region_get))
        .routes(routes!(type_list))
        .routes(routes!(type_get))
        .routes(routes!(image_list))
        .routes(routes!(image_get, image_update, image_delete))
        .route(
            "/v4/images/{vendor}/{name}",
            axum::routing::get(image_get_split).put(image_update_split).delete(image_delete_split),
        )
        .routes(routes!(nodebalancer_type_list))
        .routes(routes!(network_transfer_price_list))
        .routes(routes!(maintenance_policy_list))
        .routes(routes!(region_availability_list))
        .routes(routes!(region_availability_get))
        .routes(routes!(vpc_availability_list))
        .routes(routes!(vpc_availability_get))
}

/// Which instance types can be created in which region.
#[utoipa::path(get, path = "/v4/regions/availability", tag = "regions", responses((status = 200, description = "A page of instance type availability per region", body = Page<RegionAvailability>)))]
async fn region_availability_list(State(app): State<App>, q: ListQuery) -> ApiResult<Response> {
    page_of(&app.region_availability_list(), &q, REGION_AVAILABILITY_FILTERABLE)
}

/// Which instance types can be created in one region (a list, not a page, as in the hosted API).
#[utoipa::path(get, path = "/v4/regions/{region_id}/availability", tag = "regions", params(("region_id" = String, Path)), responses((status = 200, body = Vec<RegionAvailability>)))]
async fn region_availability_get(
    State(app): State<App>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<Vec<RegionAvailability>>> {
    Ok(Json(app.region_availability_get(&id)?))
}

/// Whether VPCs can be created in each region, and with which IPv6 prefix lengths.
#[utoipa::path(get, path = "/v4/regions/vpc-availability", tag = "regions", responses((status = 200, description = "A page of VPC availability per region", body = Page<VpcAvailability>)))]
async fn vpc_availability_list(State(app): State<App>, q: ListQuery) -> ApiResult<Response> {
    page_of(&app.vpc_availability_list(), &q, VPC_AVAILABILITY_FILTERABLE)
}

#[utoipa::path(get, path = "/v4/regions/{region_id}/vpc-availability", tag = "regions", params(("region_id" = String, Path)), responses((status = 200, body = VpcAvailability)))]
async fn vpc_availability_get(
    State(app): State<App>,
    ApiPath(id): ApiPath<String>,
) -> ApiResult<Json<VpcAvailability>> {
    Ok(Json(app.vpc_availability_get(&id)?))
}

/// The maintenance policies an account may choose for its instances.
#[utoipa::path(get, path = "/v4/maintenance/policies", tag = "maintenance", responses((status = 200, description = "A page of maintenance policies", body = Page<MaintenancePolicy>)))]
async fn maintenance_policy_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    page_of(&app.maintenance_policy_list(&actor).await?, &q, MAINTENANCE_POLICY_FILTERABLE)
}

/// Balancer types and prices, with the regions priced apart.
#[utoipa::path(get, path = "/v4/nodebalancers/types", tag = "nodebalancers", responses((status = 200, description = "A page of load balancer types", body = Page<BalancerType>)))]
async fn nodebalancer_type_list(State(app): State<App>, q: ListQuery) -> ApiResult<Response> {
    page_of(app.balancer_type_list(), &q, &["id", "label"])
}

/// Network transfer prices (per GB over the pooled quota), with the regions priced apart.
#[utoipa::path(get, path = "/v4/network-transfer/prices", tag = "network-transfer", responses((status = 200, description = "A page of network transfer prices", body = Page<TransferPrice>)))]
async fn network_transfer_price_list(State(app): State<App>, q: ListQuery) -> ApiResult<Response> {
    page_of(app.transfer_price_list(), &q, &["id", "label"])
}

/// What a private image's update may change; public images refuse every change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct ImageUpdate {
    label: Option<String>,
    description: Option<String>,
    tags: Option<Vec<String>>,
}

/// Public images belong to no account: 403, as the hosted API answers.
#[utoipa::path(put, path = "/v4/images/{image_id}", tag = "images", params(("image_id" = String, Path)), request_body = ImageUpdate, responses((status = 200, body = Image)))]
async fn image_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<String>,
    ApiJson(_body): ApiJson<ImageUpdate>,
) -> ApiResult<Json<Image>> {
    app.image_change_refused(&actor, Op::ImageUpdate, &id).await?;
    Ok(Json(app.image_get(&id)?))
}

/// Public images belong to no account: 403, as the hosted API answers.
#[utoipa::path(delete, path = "/v4/images/{image_id}", tag = "images", params(("image_id" = String, Path)), responses((status = 200, description = "Deleted")))]
async fn image_delete(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Value>> {
    app.image_change_refused(&actor, Op::ImageDelete, &id).await?;
    Ok(crate::routes::empty())
}

async fn image_update_split(
    State(app): State<App>,
    actor: Auth,
    ApiPath((vendor, name)): ApiPath<(String, String)>,
    body: ApiJson<ImageUpdate>,
) -> ApiResult<Json<Image>> {
    image_update(State(app), actor, ApiPath(format!("{vendor}/{name}")), body).await
}

async fn image_delete_split(
    State(app): State<App>,
    actor: Auth,
    ApiPath((vendor, name)): ApiPath<(String, String)>,
) -> ApiResult<Json<Value>> {
    image_delete(State(app), actor, ApiPath(format!("{vendor}/{name}"))).await
}

#[utoipa::path(get, path = "/v4/regions", tag = "regions", responses((status = 200, description = "A page of regions", body = Page<Region>)))]
async fn region_list(State(app): State<App>, q: ListQuery) -> ApiResult<Response> {
    page_of(&app.region_list(), &q, REGION_FILTERABLE)
}

#[utoipa::path(get, path = "/v4/regions/{region_id}", tag = "regions", params(("region_id" = String, Path)), responses((status = 200, body = Region)))]
async fn region_get(State(app): State<App>, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Region>> {
    Ok(Json(app.region_get(&id)?))
}

#[utoipa::path(get, path = "/v4/compute/types", tag = "types", responses((status = 200, description = "A page of instance types", body = Page<InstanceType>)))]
async fn type_list(State(app): State<App>, q: ListQuery) -> ApiResult<Response> {
    page_of(app.type_list(), &q, TYPE_FILTERABLE)
}

#[utoipa::path(get, path = "/v4/compute/types/{type_id}", tag = "types", params(("type_id" = String, Path)), responses((status = 200, body = InstanceType)))]
async fn type_get(State(app): State<App>, ApiPath(id): ApiPath<String>) -> ApiResult<Json<InstanceType>> {
    Ok(Json(app.type_get(&id)?))
}

#[utoipa::path(get, path = "/v4/images", tag = "images", responses((status = 200, description = "A page of images", body = Page<Image>)))]
async fn image_list(State(app): State<App>, q: ListQuery) -> ApiResult<Response> {
    page_of(app.image_list(), &q, IMAGE_FILTERABLE)
}

/// Image ids contain a slash (`linode/debian12`): clients send it escaped (`linode%2Fdebian12`),
/// which this route takes, or as two segments, which [`image_get_split`] takes.
#[utoipa::path(get, path = "/v4/images/{image_id}", tag = "images", params(("image_id" = String, Path)), responses((status = 200, body = Image)))]
async fn image_get(State(app): State<App>, ApiPath(id): ApiPath<String>) -> ApiResult<Json<Image>> {
    Ok(Json(app.image_get(&id)?))
}

async fn image_get_split(
    State(app): State<App>,
    ApiPath((vendor, name)): ApiPath<(String, String)>,
) -> ApiResult<Json<Image>> {
    Ok(Json(app.image_get(&format!("{vendor}/{name}"))?))
}
