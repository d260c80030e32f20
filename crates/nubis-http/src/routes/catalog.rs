//! Regions, instance types and images (public, from the configuration).

use crate::json::Json;
use axum::extract::State;
use axum::response::Response;
use nubis_app::App;
use nubis_model::catalog::{IMAGE_FILTERABLE, Image, InstanceType, REGION_FILTERABLE, Region, TYPE_FILTERABLE};
use nubis_model::page::Page;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiPath, ApiState, ListQuery};
use crate::list::page_of;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(region_list))
        .routes(routes!(region_get))
        .routes(routes!(type_list))
        .routes(routes!(type_get))
        .routes(routes!(image_list))
        .routes(routes!(image_get))
        .route("/v4/images/{vendor}/{name}", axum::routing::get(image_get_split))
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
