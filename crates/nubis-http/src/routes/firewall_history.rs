//! Firewall rule versions, the account's default firewalls and the firewall templates.

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::firewall::FirewallSettingsUpdate;
use nubis_model::firewall::{FirewallSettings, FirewallTemplate, RULE_VERSION_FILTERABLE, RuleVersion, VersionedRules};
use nubis_model::page::Page;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::list::{filter_of, page_of};

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(firewall_history_list))
        .routes(routes!(firewall_history_get))
        .routes(routes!(firewall_settings_get, firewall_settings_update))
        .routes(routes!(firewall_template_list))
        .routes(routes!(firewall_template_get))
}

/// Every version of the firewall's rules, oldest first, with the firewall's status then.
#[utoipa::path(get, path = "/v4/networking/firewalls/{firewall_id}/history", tag = "firewalls", params(("firewall_id" = i64, Path)), responses((status = 200, description = "A page of the firewall's rule versions", body = Page<RuleVersion>)))]
async fn firewall_history_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = filter_of(&q, RULE_VERSION_FILTERABLE)?;
    Ok(Json(app.firewall_history_list(&actor, id, &filter, q.page).await?).into_response())
}

/// The rules of one version.
#[utoipa::path(get, path = "/v4/networking/firewalls/{firewall_id}/history/rules/{version}", tag = "firewalls", params(("firewall_id" = i64, Path), ("version" = i64, Path)), responses((status = 200, body = VersionedRules)))]
async fn firewall_history_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, version)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<VersionedRules>> {
    Ok(Json(app.firewall_history_get(&actor, id, version).await?))
}

#[utoipa::path(get, path = "/v4/networking/firewalls/settings", tag = "firewalls", responses((status = 200, body = FirewallSettings)))]
async fn firewall_settings_get(State(app): State<App>, actor: Auth) -> ApiResult<Json<FirewallSettings>> {
    Ok(Json(app.firewall_settings_get(&actor).await?))
}

/// Sets the account's default firewalls (an id sets one, null clears it, an omitted key keeps it).
#[utoipa::path(put, path = "/v4/networking/firewalls/settings", tag = "firewalls", request_body = FirewallSettingsUpdate, responses((status = 200, body = FirewallSettings)))]
async fn firewall_settings_update(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<FirewallSettingsUpdate>,
) -> ApiResult<Json<FirewallSettings>> {
    Ok(Json(app.firewall_settings_update(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/networking/firewalls/templates", tag = "firewalls", responses((status = 200, description = "A page of firewall templates", body = Page<FirewallTemplate>)))]
async fn firewall_template_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    page_of(&app.firewall_template_list(&actor).await?, &q, &["slug"])
}

#[utoipa::path(get, path = "/v4/networking/firewalls/templates/{slug}", tag = "firewalls", params(("slug" = String, Path)), responses((status = 200, body = FirewallTemplate)))]
async fn firewall_template_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(slug): ApiPath<String>,
) -> ApiResult<Json<FirewallTemplate>> {
    Ok(Json(app.firewall_template_get(&actor, &slug).await?))
}
