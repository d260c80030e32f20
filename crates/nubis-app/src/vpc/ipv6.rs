//! The IPv6 ranges of VPC interfaces (`/v4/vpcs/ipv6s`, `/v4/vpcs/{id}/ipv6s`). nubis's VPCs and
//! subnets have no IPv6 (a create asking for it is refused), so no interface has a range there:
//! the lists are served, checked like the IPv4 ones, and empty.

use nubis_model::Result;
use nubis_model::filter::Filter;
use nubis_model::page::{Page, PageRequest};
use nubis_model::vpc::VpcIpv6;
use nubis_store::vpcs::VpcRow;

use crate::App;
use crate::auth::{Actor, Op};

impl App {
    /// `GET /v4/vpcs/ipv6s`: the IPv6 ranges of every VPC interface of the account.
    pub async fn vpc_ipv6s_list_all(
        &self,
        actor: &Actor,
        _filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<VpcIpv6>> {
        self.authorize(actor, Op::VpcIpv6sListAll).await?;
        Ok(Page::new(Vec::new(), page, 0))
    }

    /// `GET /v4/vpcs/{vpc_id}/ipv6s`: the IPv6 ranges of the VPC's interfaces.
    pub async fn vpc_ipv6s_list(
        &self,
        actor: &Actor,
        vpc_id: i64,
        _filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<VpcIpv6>> {
        self.lookup_for::<VpcRow>(actor, Op::VpcIpv6sList, vpc_id).await?;
        Ok(Page::new(Vec::new(), page, 0))
    }
}
