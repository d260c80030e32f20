use axum::Router;
use nubis_app::Actor;
use nubis_model::filter::Filter;

use super::big;
use crate::Console;

pub fn routes(_c: &Console) -> Router<Console> {
    Router::new()
}

/// Nodes up and down over all of a balancer's configs.
pub async fn health(c: &Console, a: &Actor, id: i64) -> (i64, i64) {
    match c.app.nodebalancer_config_list(a, id, &Filter::default(), big()).await {
        Ok(p) => p.data.iter().fold((0, 0), |(u, d), cfg| (u + cfg.nodes_status.up, d + cfg.nodes_status.down)),
        Err(_) => (0, 0),
    }
}
