//! Firewall rule sets, a firewall's expanded rules, the prefix lists, and an instance's
//! firewalls replaced or applied again.

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::firewall::{RuleSetCreate, RuleSetUpdate};
use nubis_app::instance::InstanceFirewallsUpdate;
use nubis_model::firewall::{ExpandedRules, Firewall, PREFIX_LIST_FILTERABLE, PrefixList, RULESET_FILTERABLE, RuleSet};
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
        .routes(routes!(firewall_ruleset_list, firewall_ruleset_create))
        .routes(routes!(firewall_ruleset_get, firewall_ruleset_update, firewall_ruleset_delete))
        .routes(routes!(firewall_rules_expansion_get))
        .routes(routes!(prefix_list_list))
        .routes(routes!(prefix_list_get))
        .routes(routes!(instance_firewalls_update))
        .routes(routes!(instance_firewalls_apply))
}

#[utoipa::path(get, path = "/v4/networking/firewalls/rulesets", tag = "firewalls", responses((status = 200, description = "A page of rule sets", body = Page<RuleSet>)))]
async fn firewall_ruleset_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, RULESET_FILTERABLE)?;
    Ok(Json(app.firewall_ruleset_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/networking/firewalls/rulesets", tag = "firewalls", request_body = RuleSetCreate, responses((status = 200, body = RuleSet)))]
async fn firewall_ruleset_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<RuleSetCreate>,
) -> ApiResult<Json<RuleSet>> {
    Ok(Json(app.firewall_ruleset_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/networking/firewalls/rulesets/{ruleset_id}", tag = "firewalls", params(("ruleset_id" = i64, Path)), responses((status = 200, body = RuleSet)))]
async fn firewall_ruleset_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<RuleSet>> {
    Ok(Json(app.firewall_ruleset_get(&actor, id).await?))
}

/// Changes label, description and rules; new rules reach every firewall that references the set.
#[utoipa::path(put, path = "/v4/networking/firewalls/rulesets/{ruleset_id}", tag = "firewalls", params(("ruleset_id" = i64, Path)), request_body = RuleSetUpdate, responses((status = 200, body = RuleSet)))]
async fn firewall_ruleset_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<RuleSetUpdate>,
) -> ApiResult<Json<RuleSet>> {
    Ok(Json(app.firewall_ruleset_update(&actor, id, body).await?))
}

/// Refused while a firewall references the set.
#[utoipa::path(delete, path = "/v4/networking/firewalls/rulesets/{ruleset_id}", tag = "firewalls", params(("ruleset_id" = i64, Path)), responses((status = 200, description = "Deleted")))]
async fn firewall_ruleset_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Value>> {
    app.firewall_ruleset_delete(&actor, id).await?;
    Ok(empty())
}

/// The firewall's rules with rule sets and prefix lists expanded: what it enforces.
#[utoipa::path(get, path = "/v4/networking/firewalls/{firewall_id}/rules/expansion", tag = "firewalls", params(("firewall_id" = i64, Path)), responses((status = 200, body = ExpandedRules)))]
async fn firewall_rules_expansion_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<ExpandedRules>> {
    Ok(Json(app.firewall_rules_expansion_get(&actor, id).await?))
}

/// The prefix lists nubis provides (from its configuration; read-only).
#[utoipa::path(get, path = "/v4/networking/prefixlists", tag = "firewalls", responses((status = 200, description = "A page of prefix lists", body = Page<PrefixList>)))]
async fn prefix_list_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    page_of(&app.prefix_list_list(&actor).await?, &q, PREFIX_LIST_FILTERABLE)
}

#[utoipa::path(get, path = "/v4/networking/prefixlists/{prefixlist_id}", tag = "firewalls", params(("prefixlist_id" = i64, Path)), responses((status = 200, body = PrefixList)))]
async fn prefix_list_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<PrefixList>> {
    Ok(Json(app.prefix_list_get(&actor, id).await?))
}

/// Replaces the instance's firewalls (an empty list removes them all); answers its firewalls.
#[utoipa::path(put, path = "/v4/compute/instances/{instance_id}/firewalls", tag = "instances", params(("instance_id" = i64, Path)), request_body = InstanceFirewallsUpdate, responses((status = 200, description = "A page of the instance's firewalls", body = Page<Firewall>)))]
async fn instance_firewalls_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<InstanceFirewallsUpdate>,
) -> ApiResult<Json<Page<Firewall>>> {
    Ok(Json(app.instance_firewalls_update(&actor, id, body).await?))
}

/// Applies the instance's firewalls again.
#[utoipa::path(post, path = "/v4/compute/instances/{instance_id}/firewalls/apply", tag = "instances", params(("instance_id" = i64, Path)), responses((status = 200, description = "Applied again")))]
async fn instance_firewalls_apply(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Value>> {
    app.instance_firewalls_apply(&actor, id).await?;
    Ok(empty())
}
