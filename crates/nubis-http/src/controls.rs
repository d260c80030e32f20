//! The test-control API under `/nubis/v1`: its own router and its own OpenAPI document
//! (`/nubis/v1/openapi.json`), reached only with an operator token, absent altogether when the
//! controls are disabled. The request-pipeline step that applies injected HTTP faults is
//! [`crate::faults`].

use std::sync::Arc;

use crate::json::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::header;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use nubis_app::App;
use nubis_app::controls::clock::{ClockAdvance, ClockSet};
use nubis_app::controls::fixtures::FixtureReport;
use nubis_app::controls::state::{Snapshot, SnapshotCreate, StateChange};
use nubis_app::controls::{Clock, Fault, FaultCreate, Operator};
use nubis_model::Error;
use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiError, ApiResult, ErrorEnvelope};
use crate::extract::{ApiJson, ApiPath, ApiState, bearer};
use crate::routes::empty;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "nubis test controls",
        description = "The operators' control API of nubis for test suites: the clock, injected faults, snapshots, resets and fixtures. Every operation needs an operator token (`nubis admin token create --operator`).",
        license(name = "Apache-2.0"),
    ),
    components(schemas(ErrorEnvelope, nubis_model::FieldError)),
    modifiers(&OperatorBearer),
    security(("operator" = [])),
)]
struct ControlsDoc;

struct OperatorBearer;

impl Modify for OperatorBearer {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "operator",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    }
}

/// Every route of the control API with its OpenAPI description.
pub fn controls_router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::with_openapi(ControlsDoc::openapi())
        .routes(routes!(clock_get))
        .routes(routes!(clock_advance))
        .routes(routes!(clock_set))
        .routes(routes!(clock_reset))
        .routes(routes!(fault_list, fault_create))
        .routes(routes!(fault_delete))
        .routes(routes!(snapshot_list, snapshot_create))
        .routes(routes!(snapshot_delete))
        .routes(routes!(snapshot_restore))
        .routes(routes!(state_reset))
        .routes(routes!(fixtures_load))
}

/// The control API's routes and `/nubis/v1/openapi.json`, ready to merge.
pub fn router() -> axum::Router<ApiState> {
    let (router, doc) = controls_router().split_for_parts();
    let doc_json =
        Arc::new(serde_json::to_string(&crate::openapi::controls_contract(&doc)).unwrap_or_else(|_| "{}".into()));
    router.route(
        "/nubis/v1/openapi.json",
        get(move || {
            let d = doc_json.clone();
            async move { ([(header::CONTENT_TYPE, "application/json")], (*d).clone()) }
        }),
    )
}

/// The authenticated operator.
pub struct Op(pub Operator);

impl FromRequestParts<ApiState> for Op {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &ApiState) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or_else(|| ApiError(Error::Unauthenticated("Invalid Token".into())))?;
        Ok(Op(state.app.authenticate_operator(token).await?))
    }
}

/// A list of the control API: `data` with the page fields of the public API (one page).
#[derive(Serialize)]
struct List<T> {
    data: Vec<T>,
    page: u32,
    pages: u32,
    results: usize,
}

fn list<T: Serialize>(data: Vec<T>) -> Json<List<T>> {
    let results = data.len();
    Json(List { data, page: 1, pages: 1, results })
}

#[utoipa::path(get, path = "/nubis/v1/clock", tag = "clock", responses((status = 200, body = Clock)))]
async fn clock_get(State(app): State<App>, Op(op): Op) -> Json<Clock> {
    Json(app.clock_get(&op))
}

#[utoipa::path(post, path = "/nubis/v1/clock/advance", tag = "clock", request_body = ClockAdvance, responses((status = 200, body = Clock)))]
async fn clock_advance(
    State(app): State<App>,
    Op(op): Op,
    ApiJson(body): ApiJson<ClockAdvance>,
) -> ApiResult<Json<Clock>> {
    Ok(Json(app.clock_advance(&op, body).await?))
}

#[utoipa::path(post, path = "/nubis/v1/clock/set", tag = "clock", request_body = ClockSet, responses((status = 200, body = Clock)))]
async fn clock_set(State(app): State<App>, Op(op): Op, ApiJson(body): ApiJson<ClockSet>) -> ApiResult<Json<Clock>> {
    Ok(Json(app.clock_set(&op, body).await?))
}

#[utoipa::path(post, path = "/nubis/v1/clock/reset", tag = "clock", responses((status = 200, body = Clock)))]
async fn clock_reset(State(app): State<App>, Op(op): Op) -> Json<Clock> {
    Json(app.clock_reset(&op).await)
}

#[utoipa::path(get, path = "/nubis/v1/faults", tag = "faults", responses((status = 200, description = "The active faults")))]
async fn fault_list(State(app): State<App>, Op(op): Op) -> Response {
    list(app.fault_list(&op)).into_response()
}

#[utoipa::path(post, path = "/nubis/v1/faults", tag = "faults", request_body = FaultCreate, responses((status = 200, body = Fault)))]
async fn fault_create(
    State(app): State<App>,
    Op(op): Op,
    ApiJson(body): ApiJson<FaultCreate>,
) -> ApiResult<Json<Fault>> {
    let known = public_routes();
    let fault = app.fault_create(&op, body, |m, t| known.iter().any(|(km, kt)| km == m && kt == t)).await?;
    Ok(Json(fault))
}

#[utoipa::path(delete, path = "/nubis/v1/faults/{fault_id}", tag = "faults", params(("fault_id" = i64, Path)), responses((status = 200, description = "Deleted")))]
async fn fault_delete(State(app): State<App>, Op(op): Op, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Value>> {
    app.fault_delete(&op, id).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/nubis/v1/snapshots", tag = "state", responses((status = 200, description = "The saved snapshots")))]
async fn snapshot_list(State(app): State<App>, Op(op): Op) -> ApiResult<Response> {
    Ok(list(app.snapshot_list(&op).await?).into_response())
}

#[utoipa::path(post, path = "/nubis/v1/snapshots", tag = "state", request_body = SnapshotCreate, responses((status = 200, body = Snapshot)))]
async fn snapshot_create(
    State(app): State<App>,
    Op(op): Op,
    ApiJson(body): ApiJson<SnapshotCreate>,
) -> ApiResult<Json<Snapshot>> {
    Ok(Json(app.snapshot_create(&op, body).await?))
}

#[utoipa::path(delete, path = "/nubis/v1/snapshots/{name}", tag = "state", params(("name" = String, Path)), responses((status = 200, description = "Deleted")))]
async fn snapshot_delete(State(app): State<App>, Op(op): Op, ApiPath(name): ApiPath<String>) -> ApiResult<Json<Value>> {
    app.snapshot_delete(&op, &name).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/nubis/v1/snapshots/{name}/restore", tag = "state", params(("name" = String, Path)), responses((status = 200, body = StateChange)))]
async fn snapshot_restore(
    State(app): State<App>,
    Op(op): Op,
    ApiPath(name): ApiPath<String>,
) -> ApiResult<Json<StateChange>> {
    Ok(Json(app.snapshot_restore(&op, &name).await?))
}

#[utoipa::path(post, path = "/nubis/v1/reset", tag = "state", responses((status = 200, body = StateChange)))]
async fn state_reset(State(app): State<App>, Op(op): Op) -> ApiResult<Json<StateChange>> {
    Ok(Json(app.state_reset(&op).await?))
}

/// The body is the fixture file itself, YAML or JSON.
#[utoipa::path(post, path = "/nubis/v1/fixtures", tag = "state", request_body(content = nubis_app::controls::fixtures::FixtureFile, content_type = "application/yaml", description = "The fixture file (YAML or JSON); an empty one loads nothing"), responses((status = 200, body = FixtureReport)))]
async fn fixtures_load(State(app): State<App>, Op(op): Op, body: axum::body::Bytes) -> ApiResult<Json<FixtureReport>> {
    let text = std::str::from_utf8(&body).map_err(|_| ApiError(Error::invalid("fixtures", "Must be UTF-8 text")))?;
    Ok(Json(app.fixtures_load(&op, text).await?))
}

/// (method, template) of every route of the public API.
fn public_routes() -> &'static [(String, String)] {
    static ROUTES: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
    ROUTES.get_or_init(|| {
        crate::api::operations(&crate::api::api_router().into_openapi())
            .into_iter()
            .map(|(m, p, _)| (m.to_string(), p))
            .collect()
    })
}
