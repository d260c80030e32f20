//! The public API as one router: every area's routes with their OpenAPI descriptions, the
//! document as served, and the list of its operations (for the route table of the request
//! pipeline and the routes the test controls may inject faults into).

use axum::http::Method;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use crate::extract::ApiState;
use crate::{openapi, routes};

/// Every route of the API with its OpenAPI description.
pub fn api_router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .merge(routes::catalog::router())
        .merge(routes::profile::router())
        .merge(routes::sshkeys::router())
        .merge(routes::users::router())
        .merge(routes::account::router())
        .merge(routes::billing::router())
        .merge(routes::events::router())
        .merge(routes::vpcs::router())
        .merge(routes::instances::router())
        .merge(routes::ips::router())
        .merge(routes::ipv6::router())
        .merge(routes::firewalls::router())
        .merge(routes::nodebalancers::router())
        .merge(routes::firewall_history::router())
        .merge(routes::firewall_rulesets::router())
        .merge(routes::oauth_clients::router())
        .merge(routes::logins::router())
        .merge(routes::child_accounts::router())
        .merge(routes::service_transfers::router())
}

/// The OpenAPI document of the whole API, as served (with the standard answers of
/// [`openapi::contract`]).
pub fn openapi_document() -> serde_json::Value {
    openapi::contract(&api_router().into_openapi())
}

/// (method, path template, operationId) of every documented operation.
pub fn operations(doc: &utoipa::openapi::OpenApi) -> Vec<(Method, String, String)> {
    let mut out = Vec::new();
    for (path, item) in &doc.paths.paths {
        let ops = [
            (Method::GET, &item.get),
            (Method::POST, &item.post),
            (Method::PUT, &item.put),
            (Method::DELETE, &item.delete),
            (Method::PATCH, &item.patch),
        ];
        for (m, op) in ops {
            if let Some(op) = op {
                out.push((m, path.clone(), op.operation_id.clone().unwrap_or_default()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_contract_pass_completes_the_document() {
        let doc = super::openapi_document();
        let put = &doc["paths"]["/v4/vpcs/{vpc_id}"]["put"]["responses"];
        for code in ["200", "400", "401", "403", "404", "413", "429"] {
            assert!(put.get(code).is_some(), "PUT /v4/vpcs/{{vpc_id}} documents {code}: {put}");
        }
        assert_eq!(doc["paths"]["/v4/regions"]["get"]["security"], serde_json::json!([]));
        let list = &doc["paths"]["/v4/compute/instances"]["get"];
        let params: Vec<&str> =
            list["parameters"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
        assert_eq!(params, ["page", "page_size", "X-Filter"]);
        let page = &list["responses"]["200"]["content"]["application/json"]["schema"]["$ref"];
        assert_eq!(page, "#/components/schemas/Page_Instance");
        let page = &doc["components"]["schemas"]["Page_Instance"];
        assert_eq!(page["required"], serde_json::json!(["data", "page", "pages", "results"]));
        let item = &page["properties"]["data"]["items"];
        assert_eq!(item["properties"]["status"]["$ref"], "#/components/schemas/Status", "{page}");
        assert!(doc["paths"]["/v4/regions"]["get"]["responses"].get("401").is_none());
        // A body without required fields may be left out (read as `{}`); one with them may not.
        assert_eq!(doc["paths"]["/v4/account/cancel"]["post"]["requestBody"]["required"], false);
        let create = &doc["paths"]["/v4/networking/firewalls"]["post"]["requestBody"];
        assert_eq!(create["required"], true);
        // X-Filter is a JSON object of the list's filterable fields, typed as the record's.
        let filter = &list["parameters"][2]["content"]["application/json"]["schema"];
        assert_eq!(filter["properties"]["id"]["type"], "integer", "{filter}");
        assert_eq!(filter["properties"]["label"]["type"], "string", "{filter}");
        assert_eq!(filter["additionalProperties"], false);
        // Creates link to the operations on what they made.
        let links = &doc["paths"]["/v4/nodebalancers/{nodebalancer_id}/configs"]["post"]["responses"]["200"]["links"];
        assert_eq!(
            links["nodebalancer_config_get"]["parameters"],
            serde_json::json!({"nodebalancer_id": "$request.path.nodebalancer_id", "config_id": "$response.body#/id"})
        );
    }
}
