//! nubis domain types: records, validated values, errors, the X-Filter language, scopes and grants.
//!
//! Everything here is plain data and pure functions: no IO. The other crates share these types, so
//! one rule lives in one place.

pub mod account;
pub mod balancer;
pub mod billing;
pub mod catalog;
pub mod catalog_data;
pub mod config;
pub mod error;
pub mod event;
pub mod filter;
pub mod firewall;
pub mod grants;
pub mod instance;
pub mod instance_profile;
pub mod ip;
pub mod money;
pub mod nodebalancer;
pub mod object;
pub mod page;
pub mod rendered;
pub mod schema;
pub mod scope;
pub mod service_transfer;
pub mod signin;
pub mod time;
pub mod validate;
pub mod vpc;

pub use error::{Error, FieldError, Problems, Result};
pub use time::Timestamp;
