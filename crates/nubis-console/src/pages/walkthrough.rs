use axum::Router;

use crate::Console;

pub fn routes(_c: &Console) -> Router<Console> {
    Router::new()
}
