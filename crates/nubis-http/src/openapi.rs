//! The OpenAPI document, generated from the handlers' annotations, so it always describes what
//! the server does.

use serde_json::{Value, json};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::error::ErrorEnvelope;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "nubis",
        description = "nubis: a self-hostable cloud control plane serving an API in the style of the Linode API v4.",
        license(name = "Apache-2.0"),
    ),
    // Records that request schemas built by `schema_with` refer to (utoipa cannot see those).
    components(schemas(
        ErrorEnvelope,
        nubis_model::FieldError,
        nubis_app::instance::InterfaceRequest,
        nubis_app::instance::InterfaceIpv4Request,
        nubis_app::ip::Assignment
    )),
    modifiers(&Bearer),
    security(("bearer" = [])),
)]
pub struct ApiDoc;

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        doc.info.version = env!("CARGO_PKG_VERSION").to_string();
    }
}

/// The standard answers every operation can give besides its own, added to the document in one
/// place so that documenting an operation stays local to its handler's annotation:
///
/// - `400` (the envelope names each field): operations that take a body, change something (a
///   refusal), or read a list (paging and `X-Filter`);
/// - `401` and `403`: every operation that needs a token (`403`: scope, grants);
/// - `404`: operations on a path with an id (absent, or another account's);
/// - `413`: operations that take a body;
/// - `429`: every operation that needs a token (rate limit per token).
///
/// Public operations (the policy table's `public` rows) are marked as needing no authentication
/// (`security: []`). Lists get their `page`, `page_size` and `X-Filter` parameters.
pub fn contract(doc: &utoipa::openapi::OpenApi) -> Value {
    let mut v = serde_json::to_value(doc).unwrap_or_else(|_| json!({}));
    let schemas = v.pointer("/components/schemas").cloned().unwrap_or_else(|| json!({}));
    if let Some(paths) = v.get_mut("paths").and_then(Value::as_object_mut) {
        for (path, item) in paths.iter_mut() {
            let Some(item) = item.as_object_mut() else { continue };
            for (method, op) in item.iter_mut() {
                if !matches!(method.as_str(), "get" | "post" | "put" | "delete" | "patch") {
                    continue;
                }
                document_operation(path, method, op, &schemas);
                optional_body(op, &schemas);
            }
        }
        add_links(paths);
    }
    v
}

/// The test controls' document with the same standard answers as the API's ([`contract`]), but
/// `429`: the controls are not rate-limited.
pub fn controls_contract(doc: &utoipa::openapi::OpenApi) -> Value {
    let mut v = contract(doc);
    if let Some(paths) = v.get_mut("paths").and_then(Value::as_object_mut) {
        for op in paths.values_mut().filter_map(Value::as_object_mut).flat_map(|item| item.values_mut()) {
            if let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) {
                responses.remove("429");
            }
            // A text body may be empty (an empty fixture file loads nothing).
            if let Some(body) = op.get_mut("requestBody").and_then(Value::as_object_mut)
                && body.get("content").and_then(|c| c.get("application/json")).is_none()
            {
                body.insert("required".into(), json!(false));
            }
        }
    }
    v
}

/// The body field that names a created record in the path of its own operations.
fn id_field(param: &str) -> Option<&'static str> {
    match param {
        "username" => Some("username"),
        "address" => Some("address"),
        "token" => Some("token"),
        p if p.ends_with("_id") => Some("id"),
        _ => None,
    }
}

/// Links from each create (`POST` on a collection) to the operations on the record it made
/// (`{collection}/{param}...`), so that contract testers can follow them (stateful testing).
fn add_links(paths: &mut serde_json::Map<String, Value>) {
    // Operations on the record that answer JSON: a GET of something the record may not have yet
    // (an OAuth client's thumbnail image) is not a read of the record.
    let ops: Vec<(String, String)> = paths
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .into_iter()
                .flatten()
                .filter(|(method, op)| {
                    *method != "get" || op.pointer("/responses/200/content/application~1json").is_some()
                })
                .filter_map(|(_, op)| op.get("operationId").and_then(Value::as_str))
                .map(move |id| (path.clone(), id.to_string()))
        })
        .collect();
    let creates: Vec<String> = paths
        .iter()
        .filter(|(_, item)| item.pointer("/post/responses/200/content").is_some())
        .map(|(p, _)| p.clone())
        .collect();
    for collection in creates {
        let parent_params: Vec<String> = params_of(&collection);
        let mut links = serde_json::Map::new();
        for (path, op_id) in &ops {
            let Some(rest) = path.strip_prefix(&format!("{collection}/{{")) else { continue };
            let Some((param, tail)) = rest.split_once('}') else { continue };
            if tail.contains('{') {
                continue;
            }
            let Some(field) = id_field(param) else { continue };
            let mut parameters = serde_json::Map::new();
            for p in &parent_params {
                parameters.insert(p.clone(), json!(format!("$request.path.{p}")));
            }
            parameters.insert(param.to_string(), json!(format!("$response.body#/{field}")));
            links.insert(op_id.clone(), json!({"operationId": op_id, "parameters": parameters}));
        }
        if !links.is_empty()
            && let Some(r) = paths.get_mut(&collection).and_then(|i| i.pointer_mut("/post/responses/200"))
            && let Some(r) = r.as_object_mut()
        {
            r.insert("links".into(), Value::Object(links));
        }
    }
}

fn params_of(path: &str) -> Vec<String> {
    path.split('{').skip(1).filter_map(|s| s.split_once('}').map(|(p, _)| p.to_string())).collect()
}

/// A JSON body whose schema requires no field may be left out: the server reads an empty body
/// as `{}` (`extract::parse_json`), so the document says the body is optional.
fn optional_body(op: &mut Value, schemas: &Value) {
    let Some(schema) = op.pointer("/requestBody/content/application~1json/schema") else { return };
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => r.strip_prefix("#/components/schemas/").and_then(|name| schemas.get(name)),
        None => Some(schema),
    };
    let Some(schema) = schema else { return };
    let object = schema.get("type").and_then(Value::as_str) == Some("object") || schema.get("properties").is_some();
    let requires = schema.get("required").and_then(Value::as_array).is_some_and(|r| !r.is_empty());
    if object
        && !requires
        && let Some(body) = op.get_mut("requestBody").and_then(Value::as_object_mut)
    {
        body.insert("required".into(), json!(false));
    }
}

fn error_response(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}
    })
}

/// The filterable fields of each list (the same constants the handlers parse `X-Filter` with).
fn filterable(path: &str) -> Option<&'static [&'static str]> {
    use crate::routes::{billing::MAINTENANCE_FILTERABLE, instances::INSTANCE_NODEBALANCER_FILTERABLE};
    use crate::routes::{profile::TOKEN_FILTERABLE, users::USER_FILTERABLE};
    use nubis_model::billing::*;
    use nubis_model::catalog::*;
    use nubis_model::event::EVENT_FILTERABLE;
    use nubis_model::firewall::{DEVICE_FILTERABLE, FIREWALL_FILTERABLE};
    use nubis_model::instance::{INSTANCE_FILTERABLE, VLAN_FILTERABLE};
    use nubis_model::ip::*;
    use nubis_model::nodebalancer::*;
    use nubis_model::service_transfer::SERVICE_TRANSFER_FILTERABLE;
    use nubis_model::signin::*;
    use nubis_model::vpc::*;
    Some(match path {
        "/v4/account/payment-methods" => PAYMENT_METHOD_FILTERABLE,
        "/v4/account/payments" => PAYMENT_FILTERABLE,
        "/v4/account/invoices" => INVOICE_FILTERABLE,
        "/v4/account/invoices/{invoice_id}/items" => INVOICE_ITEM_FILTERABLE,
        "/v4/account/maintenance" => MAINTENANCE_FILTERABLE,
        "/v4/regions" => REGION_FILTERABLE,
        "/v4/compute/types" => TYPE_FILTERABLE,
        "/v4/images" => IMAGE_FILTERABLE,
        "/v4/account/child-accounts" => CHILD_ACCOUNT_FILTERABLE,
        "/v4/account/events" => EVENT_FILTERABLE,
        "/v4/networking/firewalls"
        | "/v4/nodebalancers/{nodebalancer_id}/firewalls"
        | "/v4/compute/instances/{instance_id}/firewalls" => FIREWALL_FILTERABLE,
        "/v4/networking/firewalls/{firewall_id}/devices" => DEVICE_FILTERABLE,
        "/v4/compute/instances" => INSTANCE_FILTERABLE,
        "/v4/compute/instances/{instance_id}/nodebalancers" => INSTANCE_NODEBALANCER_FILTERABLE,
        "/v4/networking/ips" => IP_FILTERABLE,
        "/v4/networking/vlans" => VLAN_FILTERABLE,
        "/v4/networking/ipv6/pools" => IPV6_POOL_FILTERABLE,
        "/v4/networking/ipv6/ranges" => IPV6_RANGE_FILTERABLE,
        "/v4/account/logins" | "/v4/profile/logins" => LOGIN_FILTERABLE,
        "/v4/nodebalancers" => NODEBALANCER_FILTERABLE,
        "/v4/nodebalancers/{nodebalancer_id}/configs" => CONFIG_FILTERABLE,
        "/v4/nodebalancers/{nodebalancer_id}/configs/{config_id}/nodes" => NODE_FILTERABLE,
        "/v4/account/oauth-clients" => CLIENT_FILTERABLE,
        "/v4/profile/tokens" => TOKEN_FILTERABLE,
        "/v4/account/users" => USER_FILTERABLE,
        "/v4/account/service-transfers" | "/v4/account/entity-transfers" => SERVICE_TRANSFER_FILTERABLE,
        "/v4/vpcs" => VPC_FILTERABLE,
        "/v4/vpcs/ips" | "/v4/vpcs/{vpc_id}/ips" => VPC_IP_FILTERABLE,
        "/v4/vpcs/ipv6s" | "/v4/vpcs/{vpc_id}/ipv6s" => nubis_model::vpc::VPC_IPV6_FILTERABLE,
        "/v4/vpcs/{vpc_id}/subnets" => SUBNET_FILTERABLE,
        "/v4/compute/instances/{instance_id}/configs" => nubis_model::instance_profile::CONFIG_FILTERABLE,
        "/v4/compute/instances/{instance_id}/disks" => nubis_model::instance_profile::DISK_FILTERABLE,
        "/v4/compute/instances/{instance_id}/interfaces/history" => {
            nubis_model::instance_profile::INTERFACE_HISTORY_FILTERABLE
        }
        "/v4/compute/instances/{instance_id}/interfaces/{interface_id}/firewalls" => FIREWALL_FILTERABLE,
        "/v4/profile/sshkeys" => nubis_model::instance_profile::SSH_KEY_FILTERABLE,
        _ => return None,
    })
}

/// The property at a dotted path of a record schema (following `$ref`s into `schemas`).
fn property<'s>(schemas: &'s Value, mut schema: &'s Value, path: &str) -> Option<&'s Value> {
    let resolve = |s: &'s Value| -> &'s Value {
        match s.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/")) {
            Some(name) => schemas.get(name).unwrap_or(s),
            None => s,
        }
    };
    for part in path.split('.') {
        schema = resolve(schema);
        let found = schema.pointer(&format!("/properties/{part}")).or_else(|| {
            schema
                .get("oneOf")
                .and_then(Value::as_array)
                .and_then(|alts| alts.iter().find_map(|a| resolve(a).pointer(&format!("/properties/{part}"))))
        })?;
        schema = found;
    }
    Some(resolve(schema))
}

/// The JSON type a filter compares a field's value with: its own type, or its items' (a list of
/// tags or addresses is filtered by one element).
fn filter_type(schema: &Value) -> Option<&'static str> {
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => schema.get("enum").map(|_| vec!["string"]).unwrap_or_default(),
    };
    let t = types.into_iter().find(|t| *t != "null")?;
    Some(match t {
        "integer" => "integer",
        "number" => "number",
        "boolean" => "boolean",
        "array" => return schema.get("items").and_then(filter_type),
        "object" => return None,
        _ => "string",
    })
}

/// The `X-Filter` header of a list: a JSON object (`content: application/json`) of field
/// conditions on the list's filterable fields, with `+order_by` (a field that is not a list) and
/// `+order` (which needs `+order_by`). Field conditions are documented as equality with a value
/// of the field's type; the operators (`+gt`, `+contains`, `+and`, `+or`, ...) are described in
/// prose.
fn x_filter(path: &str, op: &Value, schemas: &Value) -> Value {
    let item = op
        .pointer("/responses/200/content/application~1json/schema/$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
        .and_then(|page| schemas.get(page))
        .and_then(|page| page.pointer("/properties/data/items"))
        .cloned()
        .unwrap_or_else(|| json!({}));
    let fields = filterable(path).unwrap_or_default();
    let mut properties = serde_json::Map::new();
    let mut orderable = Vec::new();
    for f in fields {
        let field = property(schemas, &item, f);
        let t = field.and_then(filter_type).unwrap_or("string");
        let value = match t {
            // Compared with a 64-bit column.
            "integer" => json!({"type": t, "minimum": i64::MIN, "maximum": i64::MAX}),
            // Amounts in dollars, compared in cents.
            "number" => json!({"type": t, "minimum": -9.0e15, "maximum": 9.0e15}),
            _ => json!({"type": t}),
        };
        properties.insert((*f).to_string(), value);
        if field.and_then(|s| s.get("type")).and_then(Value::as_str) != Some("array") {
            orderable.push(*f);
        }
    }
    if !orderable.is_empty() {
        properties.insert("+order_by".into(), json!({"type": "string", "enum": orderable}));
        properties.insert("+order".into(), json!({"type": "string", "enum": ["asc", "desc"]}));
    }
    json!({
        "name": "X-Filter", "in": "header", "required": false,
        "description": "A JSON object filtering and ordering the list on its filterable fields: `{\"field\": value}` \
            for equality, `{\"field\": {\"+gt\": v}}` (`+gte`, `+lt`, `+lte`, `+neq`, `+contains`), `+and`/`+or` \
            arrays of such objects, `+order_by` with `+order` (`asc` or `desc`).",
        "content": {"application/json": {"schema": {
            "type": "object",
            "properties": properties,
            "additionalProperties": false,
            "dependentRequired": {"+order": ["+order_by"]},
        }}}
    })
}

fn document_operation(path: &str, method: &str, op: &mut Value, schemas: &Value) {
    let id = op.get("operationId").and_then(Value::as_str).unwrap_or_default().to_string();
    let public = nubis_app::Op::from_name(&id).is_some_and(|o| o.policy().public);
    let has_body = op.get("requestBody").is_some();
    let is_list = method == "get"
        && op
            .pointer("/responses/200/content/application~1json/schema/$ref")
            .and_then(Value::as_str)
            .is_some_and(|r| r.starts_with("#/components/schemas/Page_"));
    if is_list {
        let filter = x_filter(path, op, schemas);
        let params = op.as_object_mut().map(|o| o.entry("parameters").or_insert_with(|| json!([])));
        if let Some(Value::Array(params)) = params {
            params.push(
                json!({"name": "page", "in": "query", "required": false, "description": "The page to return (from 1)",
                "schema": {"type": "integer", "minimum": 1}}),
            );
            params.push(json!({"name": "page_size", "in": "query", "required": false, "description": "Records per page",
                "schema": {"type": "integer", "format": "int64", "minimum": nubis_model::page::MIN_PAGE_SIZE, "maximum": nubis_model::page::MAX_PAGE_SIZE}}));
            params.push(filter);
        }
    }
    let has_query = op
        .get("parameters")
        .and_then(Value::as_array)
        .is_some_and(|ps| ps.iter().any(|p| p.get("in").and_then(Value::as_str) == Some("query")));
    let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else { return };
    // OpenAPI requires a description on every response.
    for r in responses.values_mut() {
        if let Some(r) = r.as_object_mut() {
            r.entry("description").or_insert_with(|| json!("Success"));
        }
    }
    let mut add = |code: &str, description: &str| {
        responses.entry(code.to_string()).or_insert_with(|| error_response(description));
    };
    if has_body || method != "get" || is_list || has_query {
        add("400", "Invalid request or refused: the envelope names each field at fault");
    }
    if !public {
        add("401", "No token, or an invalid, expired or revoked one");
        add("403", "The token's scopes or the user's grants do not allow this operation");
        add("429", "Too many requests for this token; retry after `Retry-After` seconds");
    }
    if path.contains('{') {
        add("404", "No such record in this account");
    }
    if has_body {
        add("413", "Request body too large");
    }
    if public && let Some(o) = op.as_object_mut() {
        o.insert("security".into(), json!([]));
    }
}
