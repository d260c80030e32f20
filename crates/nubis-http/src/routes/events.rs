//! The account's events.

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_model::event::{EVENT_FILTERABLE, Event};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiPath, ApiState, Auth, ListQuery};
use crate::list::filter_of;
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(event_list))
        .routes(routes!(event_get))
        .routes(routes!(event_read))
        .routes(routes!(event_seen))
}

#[utoipa::path(get, path = "/v4/account/events", tag = "account", responses((status = 200, description = "A page of events, newest first", body = Page<Event>)))]
async fn event_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, EVENT_FILTERABLE)?;
    Ok(Json(app.event_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/account/events/{event_id}", tag = "account", params(("event_id" = i64, Path)), responses((status = 200, body = Event)))]
async fn event_get(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Event>> {
    Ok(Json(app.event_get(&actor, id).await?))
}

#[utoipa::path(post, path = "/v4/account/events/{event_id}/read", tag = "account", params(("event_id" = i64, Path)), responses((status = 200, description = "Marked read")))]
async fn event_read(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Value>> {
    app.event_read(&actor, id).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/account/events/{event_id}/seen", tag = "account", params(("event_id" = i64, Path)), responses((status = 200, description = "Marked seen")))]
async fn event_seen(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Value>> {
    app.event_seen(&actor, id).await?;
    Ok(empty())
}
