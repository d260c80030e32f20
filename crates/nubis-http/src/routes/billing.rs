//! The account record, settings and availability, and billing: payment methods, payments,
//! PayPal (disabled), invoices, promo codes, cancellation, maintenance and notifications.

use crate::json::Json;
use axum::extract::State;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use nubis_app::App;
use nubis_app::billing::account::{AccountUpdate, CancelRequest, SettingsUpdate};
use nubis_app::billing::methods::{CardInput, PaymentMethodCreate};
use nubis_app::billing::payments::{PaymentCreate, PaypalExecute, PaypalStage};
use nubis_app::billing::promo::PromoCodeAdd;
use nubis_model::billing::{
    AccountSettings, AccountView, Availability, INVOICE_FILTERABLE, INVOICE_ITEM_FILTERABLE, Invoice, InvoiceItem,
    Maintenance, Notification, PAYMENT_FILTERABLE, PAYMENT_METHOD_FILTERABLE, Payment, PaymentMethod, Promotion,
};
use nubis_model::page::Page;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{ApiJson, ApiPath, ApiState, Auth, ListQuery};
use crate::list::filter_of;
use crate::routes::empty;

/// Filterable fields of the maintenance list.
pub(crate) const MAINTENANCE_FILTERABLE: &[&str] = &["status", "type", "when"];

pub fn router() -> OpenApiRouter<ApiState> {
    OpenApiRouter::new()
        .routes(routes!(account_get, account_update))
        .routes(routes!(account_availability_list))
        .routes(routes!(account_availability_get))
        .routes(routes!(account_cancel))
        .routes(routes!(account_settings_get, account_settings_update))
        .routes(routes!(account_managed_enable))
        .routes(routes!(promo_code_add))
        .routes(routes!(credit_card_add))
        .routes(routes!(payment_method_list, payment_method_create))
        .routes(routes!(payment_method_get, payment_method_delete))
        .routes(routes!(payment_method_make_default))
        .routes(routes!(payment_list, payment_create))
        .routes(routes!(payment_get))
        .routes(routes!(paypal_stage))
        .routes(routes!(paypal_execute))
        .routes(routes!(invoice_list))
        .routes(routes!(invoice_get))
        .routes(routes!(invoice_item_list))
        .routes(routes!(maintenance_list))
        .routes(routes!(notification_list))
}

#[utoipa::path(get, path = "/v4/account", tag = "account", responses((status = 200, body = AccountView)))]
async fn account_get(State(app): State<App>, actor: Auth) -> ApiResult<Json<AccountView>> {
    Ok(Json(app.account_get(&actor).await?))
}

#[utoipa::path(put, path = "/v4/account", tag = "account", request_body = AccountUpdate, responses((status = 200, body = AccountView)))]
async fn account_update(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<AccountUpdate>,
) -> ApiResult<Json<AccountView>> {
    Ok(Json(app.account_update(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/account/availability", tag = "account", responses((status = 200, description = "A page of regions with the services available and unavailable", body = Page<Availability>)))]
async fn account_availability_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    Ok(Json(app.account_availability_list(&actor, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/account/availability/{region_id}", tag = "account", params(("region_id" = String, Path)), responses((status = 200, body = Availability)))]
async fn account_availability_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(region): ApiPath<String>,
) -> ApiResult<Json<Availability>> {
    Ok(Json(app.account_availability_get(&actor, &region).await?))
}

#[utoipa::path(post, path = "/v4/account/cancel", tag = "account", request_body = CancelRequest, responses((status = 200, description = "Canceled")))]
async fn account_cancel(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<CancelRequest>,
) -> ApiResult<Json<Value>> {
    app.account_cancel(&actor, body).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/account/settings", tag = "account", responses((status = 200, body = AccountSettings)))]
async fn account_settings_get(State(app): State<App>, actor: Auth) -> ApiResult<Json<AccountSettings>> {
    Ok(Json(app.account_settings_get(&actor).await?))
}

#[utoipa::path(put, path = "/v4/account/settings", tag = "account", request_body = SettingsUpdate, responses((status = 200, body = AccountSettings)))]
async fn account_settings_update(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<SettingsUpdate>,
) -> ApiResult<Json<AccountSettings>> {
    Ok(Json(app.account_settings_update(&actor, body).await?))
}

#[utoipa::path(post, path = "/v4/account/settings/managed-enable", tag = "account", responses((status = 200, description = "Managed service enabled")))]
async fn account_managed_enable(State(app): State<App>, actor: Auth) -> ApiResult<Json<Value>> {
    app.account_managed_enable(&actor).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/account/promo-codes", tag = "account", request_body = PromoCodeAdd, responses((status = 200, body = Promotion)))]
async fn promo_code_add(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<PromoCodeAdd>,
) -> ApiResult<Json<Promotion>> {
    Ok(Json(app.promo_code_add(&actor, body).await?))
}

/// Deprecated: answers with `Deprecation` and a `Link` to the payment-methods operation.
#[utoipa::path(post, path = "/v4/account/credit-card", tag = "account", request_body = CardInput, responses((status = 200, description = "The card is the default payment method")))]
async fn credit_card_add(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<CardInput>,
) -> ApiResult<Response> {
    app.credit_card_add(&actor, body).await?;
    let mut r = empty().into_response();
    let h = r.headers_mut();
    h.insert("deprecation", HeaderValue::from_static("true"));
    h.insert("link", HeaderValue::from_static("</v4/account/payment-methods>; rel=\"successor-version\""));
    h.insert("warning", HeaderValue::from_static("299 - \"Deprecated: use POST /v4/account/payment-methods\""));
    Ok(r)
}

#[utoipa::path(get, path = "/v4/account/payment-methods", tag = "account", responses((status = 200, description = "A page of active payment methods", body = Page<PaymentMethod>)))]
async fn payment_method_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, PAYMENT_METHOD_FILTERABLE)?;
    Ok(Json(app.payment_method_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/account/payment-methods", tag = "account", request_body = PaymentMethodCreate, responses((status = 200, body = PaymentMethod)))]
async fn payment_method_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<PaymentMethodCreate>,
) -> ApiResult<Json<PaymentMethod>> {
    Ok(Json(app.payment_method_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/account/payment-methods/{payment_method_id}", tag = "account", params(("payment_method_id" = i64, Path)), responses((status = 200, body = PaymentMethod)))]
async fn payment_method_get(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<PaymentMethod>> {
    Ok(Json(app.payment_method_get(&actor, id).await?))
}

#[utoipa::path(delete, path = "/v4/account/payment-methods/{payment_method_id}", tag = "account", params(("payment_method_id" = i64, Path)), responses((status = 200, description = "Deactivated")))]
async fn payment_method_delete(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Value>> {
    app.payment_method_delete(&actor, id).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/account/payment-methods/{payment_method_id}/make-default", tag = "account", params(("payment_method_id" = i64, Path)), responses((status = 200, description = "Now the default")))]
async fn payment_method_make_default(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
) -> ApiResult<Json<Value>> {
    app.payment_method_make_default(&actor, id).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/account/payments", tag = "account", responses((status = 200, description = "A page of payments, newest first", body = Page<Payment>)))]
async fn payment_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, PAYMENT_FILTERABLE)?;
    Ok(Json(app.payment_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(post, path = "/v4/account/payments", tag = "account", request_body = PaymentCreate, responses((status = 200, body = Payment)))]
async fn payment_create(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<PaymentCreate>,
) -> ApiResult<Json<Payment>> {
    Ok(Json(app.payment_create(&actor, body).await?))
}

#[utoipa::path(get, path = "/v4/account/payments/{payment_id}", tag = "account", params(("payment_id" = i64, Path)), responses((status = 200, body = Payment)))]
async fn payment_get(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Payment>> {
    Ok(Json(app.payment_get(&actor, id).await?))
}

#[utoipa::path(post, path = "/v4/account/payments/paypal", tag = "account", request_body = PaypalStage, responses((status = 400, description = "PayPal payments are disabled")))]
async fn paypal_stage(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<PaypalStage>,
) -> ApiResult<Json<Value>> {
    app.paypal_stage(&actor, body).await?;
    Ok(empty())
}

#[utoipa::path(post, path = "/v4/account/payments/paypal/execute", tag = "account", request_body = PaypalExecute, responses((status = 400, description = "PayPal payments are disabled")))]
async fn paypal_execute(
    State(app): State<App>,
    actor: Auth,
    ApiJson(body): ApiJson<PaypalExecute>,
) -> ApiResult<Json<Value>> {
    app.paypal_execute(&actor, body).await?;
    Ok(empty())
}

#[utoipa::path(get, path = "/v4/account/invoices", tag = "account", responses((status = 200, description = "A page of invoices, newest first", body = Page<Invoice>)))]
async fn invoice_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, INVOICE_FILTERABLE)?;
    Ok(Json(app.invoice_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/account/invoices/{invoice_id}", tag = "account", params(("invoice_id" = i64, Path)), responses((status = 200, body = Invoice)))]
async fn invoice_get(State(app): State<App>, actor: Auth, ApiPath(id): ApiPath<i64>) -> ApiResult<Json<Invoice>> {
    Ok(Json(app.invoice_get(&actor, id).await?))
}

#[utoipa::path(get, path = "/v4/account/invoices/{invoice_id}/items", tag = "account", params(("invoice_id" = i64, Path)), responses((status = 200, description = "A page of the invoice's items", body = Page<InvoiceItem>)))]
async fn invoice_item_list(
    State(app): State<App>,
    actor: Auth,
    ApiPath(id): ApiPath<i64>,
    q: ListQuery,
) -> ApiResult<Response> {
    let filter = filter_of(&q, INVOICE_ITEM_FILTERABLE)?;
    Ok(Json(app.invoice_item_list(&actor, id, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/account/maintenance", tag = "account", responses((status = 200, description = "A page of maintenance windows", body = Page<Maintenance>)))]
async fn maintenance_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    let filter = filter_of(&q, MAINTENANCE_FILTERABLE)?;
    Ok(Json(app.maintenance_list(&actor, &filter, q.page).await?).into_response())
}

#[utoipa::path(get, path = "/v4/account/notifications", tag = "account", responses((status = 200, description = "A page of notifications", body = Page<Notification>)))]
async fn notification_list(State(app): State<App>, actor: Auth, q: ListQuery) -> ApiResult<Response> {
    Ok(Json(app.notification_list(&actor, q.page).await?).into_response())
}
