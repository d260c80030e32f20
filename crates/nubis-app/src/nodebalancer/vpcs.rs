//! A balancer's VPC configurations (`GET /v4/nodebalancers/{id}/vpcs[/{vpc_config_id}]`). nubis
//! refuses `vpcs` when a balancer is created, so a balancer has none: the list is empty and any
//! configuration id is not found, for whoever may read the balancer.

use nubis_model::nodebalancer::NodeBalancerVpcConfig;
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Result};
use nubis_store::nodebalancers::BalancerRow;

use crate::App;
use crate::auth::{Actor, Op};

impl App {
    pub async fn nodebalancer_vpc_list(
        &self,
        actor: &Actor,
        nb_id: i64,
        page: PageRequest,
    ) -> Result<Page<NodeBalancerVpcConfig>> {
        self.lookup_for::<BalancerRow>(actor, Op::NodebalancerVpcList, nb_id).await?;
        Ok(Page::new(Vec::new(), page, 0))
    }

    pub async fn nodebalancer_vpc_get(&self, actor: &Actor, nb_id: i64, _id: i64) -> Result<NodeBalancerVpcConfig> {
        self.lookup_for::<BalancerRow>(actor, Op::NodebalancerVpcGet, nb_id).await?;
        Err(Error::NotFound)
    }
}
