//! Load balancers (NodeBalancers): balancers, their configs (ports) and nodes (back ends),
//! stats and firewalls.

use crate::json::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use nubis_app::nodebalancer::{ConfigRequest, NodeBalancerCreate, NodeBalancerUpdate, NodeRequest};
use nubis_app::{App, Op};
use nubis_model::nodebalancer::{
    CONFIG_FILTERABLE, NODE_FILTERABLE, NODEBALANCER_FILTERABLE, NodeBalancer, NodeBalancerConfig, NodeBalancerNode,
    NodeBalancerStats, NodeBalancerVpcConfig,
};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::list::filter_of;
use crate::routes::empty;

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(nodebalancer_list, nodebalancer_create))
        .routes(routes!(nodebalancer_get, nodebalancer_update, nodebalancer_delete))
        .routes(routes!(nodebalancer_stats))
        .routes(routes!(nodebalancer_config_list, nodebalancer_config_create))
        .routes(routes!(
            nodebalancer_config_get,
            nodebalancer_config_update,
            nodebalancer_config_delete,
            nodebalancer_config_node_create
        ))
        .routes(routes!(nodebalancer_config_rebuild))
        .routes(routes!(nodebalancer_node_list, nodebalancer_node_create))
        .routes(routes!(nodebalancer_node_get, nodebalancer_node_update, nodebalancer_node_delete))
        .routes(routes!(nodebalancer_vpc_list))
        .routes(routes!(nodebalancer_vpc_get))
}

#[utoipa::path(get, path = "/v4/nodebalancers/{nodebalancer_id}/vpcs", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path)), responses((status = 200, description = "A page of the balancer's VPC configurations (always empty: nubis places no balancer in a VPC)", body = Page<NodeBalancerVpcConfig>)))]
async fn nodebalancer_vpc_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    Ok(Json(app.nodebalancer_vpc_list(&actor, id, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/nodebalancers/{nodebalancer_id}/vpcs/{vpc_config_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("vpc_config_id" = i64, Path)), responses((status = 200, body = NodeBalancerVpcConfig)))]
async fn nodebalancer_vpc_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((nb_id, id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<NodeBalancerVpcConfig>> {
    Ok(Json(app.nodebalancer_vpc_get(&actor, nb_id, id).await?))
}

#[utoipa::path(get, path = "/v4/nodebalancers", tag = "nodebalancers", responses((status = 200, description = "A page of NodeBalancers", body = Page<NodeBalancer>)))]
async fn nodebalancer_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, NODEBALANCER_FILTERABLE)?;
    Ok(Json(app.nodebalancer_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/nodebalancers", tag = "nodebalancers", request_body = NodeBalancerCreate, responses((status = 200, body = NodeBalancer)))]
async fn nodebalancer_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<NodeBalancerCreate>,
) -> ApiResult<Json<NodeBalancer>> {
    Ok(Json(app.nodebalancer_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/nodebalancers/{nodebalancer_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path)), responses((status = 200, body = NodeBalancer)))]
async fn nodebalancer_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<NodeBalancer>> {
    Ok(Json(app.nodebalancer_get(&actor, id).await?))
}

#[utoipa::path(put, path = "/v4/nodebalancers/{nodebalancer_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path)), request_body = NodeBalancerUpdate, responses((status = 200, body = NodeBalancer)))]
async fn nodebalancer_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<NodeBalancerUpdate>,
) -> ApiResult<Json<NodeBalancer>> {
    Ok(Json(app.nodebalancer_update(&actor, id, body).await?))
}

#[utoipa::path(delete, path = "/v4/nodebalancers/{nodebalancer_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path)), responses((status = 200, description = "Deleted with its configs and nodes")))]
async fn nodebalancer_delete(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Value>> {
    app.nodebalancer_delete(&actor, id).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/nodebalancers/{nodebalancer_id}/stats", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path)), responses((status = 200, body = NodeBalancerStats)))]
async fn nodebalancer_stats(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<NodeBalancerStats>> {
    Ok(Json(app.nodebalancer_stats(&actor, id).await?))
}

#[utoipa::path(get, path = "/v4/nodebalancers/{nodebalancer_id}/configs", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path)), responses((status = 200, description = "A page of configs", body = Page<NodeBalancerConfig>)))]
async fn nodebalancer_config_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = filter_of(&q, CONFIG_FILTERABLE)?;
    Ok(Json(app.nodebalancer_config_list(&actor, id, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/nodebalancers/{nodebalancer_id}/configs", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path)), request_body = ConfigRequest, responses((status = 200, body = NodeBalancerConfig)))]
async fn nodebalancer_config_create(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<ConfigRequest>,
) -> ApiResult<Json<NodeBalancerConfig>> {
    Ok(Json(app.nodebalancer_config_create(&actor, id, body).await?))
}

#[utoipa::path(get, path = "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("config_id" = i64, Path)), responses((status = 200, body = NodeBalancerConfig)))]
async fn nodebalancer_config_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<NodeBalancerConfig>> {
    Ok(Json(app.nodebalancer_config_get(&actor, id, config_id).await?))
}

#[utoipa::path(put, path = "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("config_id" = i64, Path)), request_body = ConfigRequest, responses((status = 200, body = NodeBalancerConfig)))]
async fn nodebalancer_config_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<ConfigRequest>,
) -> ApiResult<Json<NodeBalancerConfig>> {
    Ok(Json(app.nodebalancer_config_update(&actor, id, config_id, body).await?))
}

#[utoipa::path(delete, path = "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("config_id" = i64, Path)), responses((status = 200, description = "Deleted with its nodes")))]
async fn nodebalancer_config_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
) -> ApiResult<Json<Value>> {
    app.nodebalancer_config_delete(&actor, id, config_id).await?;
    Ok(empty())
}

/// The walkthrough's form of adding a back end (spec section 1 step 6): `label` and `address`.
#[utoipa::path(post, path = "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("config_id" = i64, Path)), request_body = NodeRequest, responses((status = 200, body = NodeBalancerNode)))]
async fn nodebalancer_config_node_create(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<NodeRequest>,
) -> ApiResult<Json<NodeBalancerNode>> {
    Ok(Json(app.nodebalancer_node_create(&actor, Op::NodebalancerConfigNodeCreate, id, config_id, body).await?))
}

#[utoipa::path(post, path = "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}/rebuild", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("config_id" = i64, Path)), request_body = ConfigRequest, responses((status = 200, body = NodeBalancerConfig)))]
async fn nodebalancer_config_rebuild(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<ConfigRequest>,
) -> ApiResult<Json<NodeBalancerConfig>> {
    Ok(Json(app.nodebalancer_config_rebuild(&actor, id, config_id, body).await?))
}

#[utoipa::path(get, path = "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}/nodes", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("config_id" = i64, Path)), responses((status = 200, description = "A page of nodes", body = Page<NodeBalancerNode>)))]
async fn nodebalancer_node_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = filter_of(&q, NODE_FILTERABLE)?;
    Ok(Json(app.nodebalancer_node_list(&actor, id, config_id, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}/nodes", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("config_id" = i64, Path)), request_body = NodeRequest, responses((status = 200, body = NodeBalancerNode)))]
async fn nodebalancer_node_create(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id)): ApiPath<(i64, i64)>,
    ApiJson(body): ApiJson<NodeRequest>,
) -> ApiResult<Json<NodeBalancerNode>> {
    Ok(Json(app.nodebalancer_node_create(&actor, Op::NodebalancerNodeCreate, id, config_id, body).await?))
}

#[utoipa::path(get, path = "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}/nodes/{node_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("config_id" = i64, Path), ("node_id" = i64, Path)), responses((status = 200, body = NodeBalancerNode)))]
async fn nodebalancer_node_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id, node_id)): ApiPath<(i64, i64, i64)>,
) -> ApiResult<Json<NodeBalancerNode>> {
    Ok(Json(app.nodebalancer_node_get(&actor, id, config_id, node_id).await?))
}

#[utoipa::path(put, path = "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}/nodes/{node_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("config_id" = i64, Path), ("node_id" = i64, Path)), request_body = NodeRequest, responses((status = 200, body = NodeBalancerNode)))]
async fn nodebalancer_node_update(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id, node_id)): ApiPath<(i64, i64, i64)>,
    ApiJson(body): ApiJson<NodeRequest>,
) -> ApiResult<Json<NodeBalancerNode>> {
    Ok(Json(app.nodebalancer_node_update(&actor, id, config_id, node_id, body).await?))
}

#[utoipa::path(delete, path = "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}/nodes/{node_id}", tag = "nodebalancers", params(("nodebalancer_id" = i64, Path), ("config_id" = i64, Path), ("node_id" = i64, Path)), responses((status = 200, description = "Deleted")))]
async fn nodebalancer_node_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath((id, config_id, node_id)): ApiPath<(i64, i64, i64)>,
) -> ApiResult<Json<Value>> {
    app.nodebalancer_node_delete(&actor, id, config_id, node_id).await?;
    Ok(empty())
}
