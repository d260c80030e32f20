//! The pages, one module per area. Each handler calls the application with the signed-in
//! user's actor and renders what it answers.

pub mod account;
pub mod apps;
pub mod balancers;
pub mod dashboard;
pub mod events;
pub mod firewalls;
pub mod instances;
pub mod transfers;
pub mod users;
pub mod vpcs;
pub mod walkthrough;

use nubis_model::filter::{Filter, Order};
use nubis_model::page::{MAX_PAGE_SIZE, PageRequest};

/// The first page of a list, as large as the API allows.
pub fn big() -> PageRequest {
    PageRequest { page: 1, page_size: MAX_PAGE_SIZE }
}

/// The newest `n` records first (`n` at least the API's smallest page).
pub fn newest(n: u64) -> (Filter, PageRequest) {
    (Filter { cond: None, order_by: Some("id".into()), order: Order::Desc }, PageRequest { page: 1, page_size: n })
}

/// The choices of a select: (value, text).
pub type Options = Vec<(String, String)>;

/// The regions with a capability, as choices.
pub fn regions(app: &nubis_app::App, capability: &str) -> Options {
    app.region_list()
        .into_iter()
        .filter(|r| r.capabilities.iter().any(|c| c == capability))
        .map(|r| (r.id.clone(), format!("{} ({})", r.label, r.id)))
        .collect()
}
