//! The account and its billing: contact and address, balance, payment methods (cards are never
//! shown back beyond their type and last four digits), payments and invoices.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use nubis_app::billing::account::AccountUpdate;
use nubis_app::billing::methods::PaymentMethodCreate;
use nubis_app::billing::payments::PaymentCreate;
use nubis_model::filter::Filter;

use super::{Options, newest};
use crate::Console;
use crate::form::{Fields, Form, read};
use crate::render::{Nav, error_page, html, when};
use crate::session::{Post, Signed, redirect};

pub fn routes(c: &Console) -> Router<Console> {
    Router::new()
        .route(&c.p("/account"), get(show).post(update))
        .route(&c.p("/account/payment-methods"), post(card_add))
        .route(&c.p("/account/payment-methods/{id}/default"), post(card_default))
        .route(&c.p("/account/payment-methods/{id}/delete"), post(card_delete))
        .route(&c.p("/account/payments"), post(pay))
}

const ACCOUNT_FIELDS: &[&str] = &[
    "company",
    "email",
    "first_name",
    "last_name",
    "phone",
    "address_1",
    "address_2",
    "city",
    "state",
    "zip",
    "country",
    "tax_id",
];

pub struct Method {
    pub id: i64,
    pub text: String,
    pub expiry: String,
    pub is_default: bool,
}

pub struct Money {
    pub id: i64,
    pub date: String,
    pub label: String,
    pub usd: String,
}

#[derive(Template)]
#[template(path = "console/account.html")]
struct Account {
    nav: Nav,
    euuid: String,
    balance: String,
    uninvoiced: String,
    f: Form,
    card: Form,
    payment: Form,
    methods: Vec<Method>,
    method_options: Options,
    payments: Vec<Money>,
    invoices: Vec<Money>,
}

enum Again {
    None,
    Account(Form),
    Card(Form),
    Payment(Form),
}

async fn render(c: &Console, s: &Signed, again: Again) -> Response {
    let (app, a) = (&c.app, &s.actor);
    let nav = || s.nav("account");
    let acc = match app.account_get(a).await {
        Ok(v) => v,
        Err(e) => return error_page(c, Some(nav()), e),
    };
    let v = serde_json::to_value(&acc).unwrap_or_default();
    let mut f = Form::default();
    for k in ACCOUNT_FIELDS {
        f.vals.insert(k.to_string(), v[k].as_str().unwrap_or_default().to_string());
    }
    let (mut card, mut payment) = (Form::new(&[("type", "credit_card")]), Form::default());
    let status = match again {
        Again::None => StatusCode::OK,
        Again::Account(x) => {
            f = x;
            StatusCode::BAD_REQUEST
        }
        Again::Card(x) => {
            card = x;
            StatusCode::BAD_REQUEST
        }
        Again::Payment(x) => {
            payment = x;
            StatusCode::BAD_REQUEST
        }
    };
    let (nf, np) = newest(100);
    let methods: Vec<Method> = app
        .payment_method_list(a, &Filter::default(), np)
        .await
        .map(|p| {
            p.data
                .into_iter()
                .map(|m| Method {
                    id: m.id,
                    text: format!("{} ending in {}", m.data.card_type, m.data.last_four),
                    expiry: m.data.expiry,
                    is_default: m.is_default,
                })
                .collect()
        })
        .unwrap_or_default();
    let method_options = methods.iter().map(|m| (m.id.to_string(), m.text.clone())).collect();
    let payments = app
        .payment_list(a, &nf, np)
        .await
        .map(|p| {
            p.data
                .into_iter()
                .map(|x| Money { id: x.id, date: when(&x.date), label: String::new(), usd: x.usd.dollars() })
                .collect()
        })
        .unwrap_or_default();
    let invoices = app
        .invoice_list(a, &nf, np)
        .await
        .map(|p| {
            p.data
                .into_iter()
                .map(|x| Money { id: x.id, date: when(&x.date), label: x.label, usd: x.total.dollars() })
                .collect()
        })
        .unwrap_or_default();
    let page = Account {
        nav: nav(),
        euuid: acc.euuid.clone(),
        balance: acc.balance.dollars(),
        uninvoiced: acc.balance_uninvoiced.dollars(),
        f,
        card,
        payment,
        methods,
        method_options,
        payments,
        invoices,
    };
    html(status, &page)
}

async fn show(State(c): State<Console>, s: Signed) -> Response {
    render(&c, &s, Again::None).await
}

async fn update(State(c): State<Console>, p: Post) -> Response {
    // Every field is sent, so a cleared input clears the field.
    let mut body = serde_json::Map::new();
    for k in ACCOUNT_FIELDS {
        body.insert(k.to_string(), p.f.get(k).trim().into());
    }
    let r = match read::<AccountUpdate>(body.into()) {
        Ok(input) => c.app.account_update(&p.s.actor, input).await.map(|_| ()),
        Err(e) => Err(e),
    };
    match r {
        Ok(()) => redirect(&c.p("/account")),
        Err(e) => render(&c, &p.s, Again::Account(Form::from_fields(&p.f).with_error(&e, ACCOUNT_FIELDS))).await,
    }
}

/// The card form without the number and CVV (never shown back).
fn card_again(f: &Fields) -> Form {
    let mut form = Form::from_fields(f);
    form.vals.remove("data.card_number");
    form.vals.remove("data.cvv");
    form
}

async fn card_add(State(c): State<Console>, p: Post) -> Response {
    let r = match read::<PaymentMethodCreate>(p.f.to_json(&["expiry_month", "expiry_year"], &["is_default"], &[])) {
        Ok(input) => c.app.payment_method_create(&p.s.actor, input).await.map(|_| ()),
        Err(e) => Err(e),
    };
    match r {
        Ok(()) => redirect(&c.p("/account")),
        Err(e) => {
            let known = ["data.card_number", "data.cvv", "data.expiry_month", "data.expiry_year", "is_default"];
            render(&c, &p.s, Again::Card(card_again(&p.f).with_error(&e, &known))).await
        }
    }
}

async fn card_default(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    match c.app.payment_method_make_default(&p.s.actor, id).await {
        Ok(()) => redirect(&c.p("/account")),
        Err(e) => error_page(&c, Some(p.s.nav("account")), e),
    }
}

async fn card_delete(State(c): State<Console>, Path(id): Path<i64>, p: Post) -> Response {
    match c.app.payment_method_delete(&p.s.actor, id).await {
        Ok(()) => redirect(&c.p("/account")),
        Err(e) => error_page(&c, Some(p.s.nav("account")), e),
    }
}

async fn pay(State(c): State<Console>, p: Post) -> Response {
    let r = match read::<PaymentCreate>(p.f.to_json(&["payment_method_id"], &[], &[])) {
        Ok(input) => c.app.payment_create(&p.s.actor, input).await.map(|_| ()),
        Err(e) => Err(e),
    };
    match r {
        Ok(()) => redirect(&c.p("/account")),
        Err(e) => {
            let f = Form::from_fields(&p.f).with_error(&e, &["payment_method_id", "usd"]);
            render(&c, &p.s, Again::Payment(f)).await
        }
    }
}
