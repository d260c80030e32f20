//! VPCs and subnets (spec 2.2, 2.3, 4.1): create whole or not at all, labels unique by
//! constraint, subnets never overlapping within a VPC (checked inside the write transaction),
//! and deletes refused while an instance interface uses a subnet.

use std::sync::Arc;
pub(crate) mod ipv6;
mod validate;
mod view;

use nubis_model::event::EventEntity;
use nubis_model::filter::Filter;
use nubis_model::grants::{GrantKind, Permission};
use nubis_model::instance::Status;
use nubis_model::page::{Page, PageRequest};
use nubis_model::rendered::Rendered;
use nubis_model::vpc::{Subnet, Vpc, VpcIp};
use nubis_model::{Error, FieldError, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::vpcs::{NewSubnet, NewVpc, SubnetRow, VpcParts, VpcRow};

pub use ipv6::{InterfaceIpv6Request, Ipv6RangeRequest};
pub use validate::{SubnetCreate, SubnetUpdate, VpcCreate, VpcUpdate};
pub(crate) use view::{VpcWorld, interface_active};

use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

pub(crate) fn vpc_entity(v: &VpcRow) -> EventEntity {
    EventEntity::new("vpc", v.id, &v.label, format!("/v4/vpcs/{}", v.id))
}

pub(crate) fn subnet_entity(s: &SubnetRow) -> EventEntity {
    EventEntity::new("subnet", s.id, &s.label, format!("/v4/vpcs/{}/subnets/{}", s.vpc_id, s.id))
}

const LABEL_TAKEN: &str = "Label must be unique among your VPCs";
const SUBNET_LABEL_TAKEN: &str = "Label must be unique among the VPC's subnets";

impl App {
    /// What the records of these subnets are built from, read by key.
    async fn subnets_world(&self, subnets: Vec<SubnetRow>) -> Result<VpcWorld> {
        let ids: Vec<i64> = subnets.iter().map(|s| s.id).collect();
        let members = self.store.subnet_members(&ids).await?;
        Ok(VpcWorld::of_members(subnets, members))
    }

    /// The records of some VPCs: their subnets and the interfaces on them, read by key.
    async fn vpc_views(&self, vpcs: &[VpcRow]) -> Result<Vec<Vpc>> {
        let ids: Vec<i64> = vpcs.iter().map(|v| v.id).collect();
        let (subnets, members) = self.store.subnets_with_members(&ids).await?;
        let world = VpcWorld::of_members(subnets, members);
        Ok(vpcs.iter().map(|v| world.vpc(v)).collect())
    }

    async fn vpc_view(&self, v: &VpcRow) -> Result<Vpc> {
        self.vpc_views(std::slice::from_ref(v)).await?.pop().ok_or_else(|| Error::internal("no view of the VPC"))
    }

    async fn subnet_view(&self, s: SubnetRow) -> Result<Subnet> {
        let world = self.subnets_world(vec![s]).await?;
        Ok(world.subnet(&world.subnets[0]))
    }

    /// The user whose grants limit what a list shows: the actor, when restricted.
    pub(crate) fn grant_user(actor: &Actor) -> Option<i64> {
        actor.restricted().then_some(actor.user_id())
    }

    pub async fn vpc_list(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<Vpc>> {
        Ok(Arc::unwrap_or_clone(self.vpc_list_shared(actor, filter, page).await?).into_value())
    }

    /// [`App::vpc_list`], as kept in the read cache (shared, not copied, its JSON written once).
    pub async fn vpc_list_shared(
        &self,
        actor: &Actor,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Arc<Rendered<Page<Vpc>>>> {
        self.authorize(actor, Op::VpcList).await?;
        let user = Self::grant_user(actor);
        let query = format!("{filter:?} {} {}", page.page, page.page_size);
        self.store
            .cached_page("vpcs", nubis_store::vpcs::VPC_PAGE_TABLES, actor.account_id(), user, query, || async move {
                let (rows, results) =
                    self.store.vpcs_page(actor.account_id(), user, filter, page.page, page.page_size).await?;
                Ok(Rendered::new(Page::new(self.vpc_views(&rows).await?, page, results)))
            })
            .await
    }

    pub async fn vpc_get(&self, actor: &Actor, id: i64) -> Result<Vpc> {
        let parts = self.lookup_for::<Arc<VpcParts>>(actor, Op::VpcGet, id).await?;
        let world = VpcWorld::of_members(parts.subnets.clone(), parts.members.clone());
        Ok(world.vpc(&parts.vpc))
    }

    /// Creates a VPC with its subnets in one transaction: one bad subnet refuses the request and
    /// leaves nothing behind. A restricted creator gets read_write on the new VPC.
    pub async fn vpc_create(&self, actor: &Actor, input: VpcCreate) -> Result<Vpc> {
        self.authorize(actor, Op::VpcCreate).await?;
        let valid = validate::check_vpc_create(&self.catalog, &input)?;
        let valid = &valid;
        let region =
            self.catalog.region(&valid.region).ok_or_else(|| Error::invalid("region", "region is not valid"))?;
        let (v, subnets) = self
            .write(|tx| {
                Box::pin(async move {
                    let now = Timestamp::now();
                    let v6 = match valid.ipv6 {
                        None => None,
                        Some(ask) => {
                            Some(ipv6::allocate_vpc_range(tx, region, ask, "ipv6[0].range").await?.to_string())
                        }
                    };
                    let v = tx
                        .vpc_insert(&NewVpc {
                            account_id: actor.account_id(),
                            label: &valid.label,
                            description: &valid.description,
                            region: &valid.region,
                            ipv6_range: v6.as_deref(),
                            created: now,
                        })
                        .await
                        // A concurrent create took the same range: pick again.
                        .map_err(|e| match e {
                            Error::Unique(ref c) if c.contains("ipv6") => Error::Retry,
                            e => e.unique_as("label", LABEL_TAKEN),
                        })?;
                    tx.event_insert(
                        &event(actor, "vpc_create", vpc_entity(&v)).visible_with(GrantKind::Vpc, v.id).build(),
                    )
                    .await?;
                    let mut rows: Vec<SubnetRow> = Vec::new();
                    for (i, s) in valid.subnets.iter().enumerate() {
                        let v6 = match s.ipv6 {
                            None => None,
                            Some(ask) => {
                                let others = rows.iter().filter_map(|r| r.ipv6_range.as_deref());
                                let field = format!("subnets[{i}].ipv6[0].range");
                                Some(ipv6::subnet_range(&v, ask, others, &field)?.to_string())
                            }
                        };
                        let row = tx
                            .subnet_insert(&NewSubnet {
                                vpc_id: v.id,
                                account_id: actor.account_id(),
                                label: &s.label,
                                ipv4: &s.net.to_string(),
                                first_v4: s.first(),
                                last_v4: s.last(),
                                ipv6_range: v6.as_deref(),
                                created: now,
                            })
                            .await
                            .map_err(|e| e.unique_as(&format!("subnets[{i}].label"), SUBNET_LABEL_TAKEN))?;
                        tx.event_insert(&subnet_event(actor, "subnet_create", &row, &v)).await?;
                        rows.push(row);
                    }
                    if actor.restricted() {
                        tx.grant_set(actor.user_id(), GrantKind::Vpc, v.id, Some(Permission::ReadWrite)).await?;
                    }
                    Ok((v, rows))
                })
            })
            .await?;
        let world = VpcWorld::of_members(subnets, Vec::new());
        Ok(world.vpc(&v))
    }

    pub async fn vpc_update(&self, actor: &Actor, id: i64, input: VpcUpdate) -> Result<Vpc> {
        self.lookup_for::<VpcRow>(actor, Op::VpcUpdate, id).await?.into_inner();
        let mut p = Problems::new();
        if let Some(l) = &input.label {
            validate::check_label(&mut p, "label", l);
        }
        if let Some(d) = &input.description {
            validate::check_description(&mut p, d);
        }
        p.finish()?;
        let input = &input;
        let v = self
            .write(|tx| {
                Box::pin(async move {
                    tx.vpc_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let v = tx
                        .vpc_update(id, input.label.as_deref(), input.description.as_deref(), Timestamp::now())
                        .await
                        .map_err(|e| e.unique_as("label", LABEL_TAKEN))?;
                    tx.event_insert(
                        &event(actor, "vpc_update", vpc_entity(&v)).visible_with(GrantKind::Vpc, v.id).build(),
                    )
                    .await?;
                    Ok(v)
                })
            })
            .await?;
        self.vpc_view(&v).await
    }

    /// Deletes a VPC and its subnets, or nothing when any subnet is in use.
    pub async fn vpc_delete(&self, actor: &Actor, id: i64) -> Result<()> {
        self.lookup_for::<VpcRow>(actor, Op::VpcDelete, id).await?.into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let v = tx.vpc_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let subnets = tx.subnets_of_vpc(id).await?;
                refuse_used_subnets(tx, id, None, &subnets).await?;
                tx.event_insert(&event(actor, "vpc_delete", vpc_entity(&v)).visible_with(GrantKind::Vpc, v.id).build())
                    .await?;
                for s in &subnets {
                    tx.event_insert(&subnet_event(actor, "subnet_delete", s, &v)).await?;
                }
                tx.vpc_delete(id).await?;
                tx.grants_delete_entity(GrantKind::Vpc, id).await?;
                Ok(())
            })
        })
        .await
    }

    pub async fn subnet_list(
        &self,
        actor: &Actor,
        vpc_id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<Subnet>> {
        self.lookup_for::<VpcRow>(actor, Op::SubnetList, vpc_id).await?.into_inner();
        let (rows, results) = self.store.subnets_page(vpc_id, filter, page.page, page.page_size).await?;
        let world = self.subnets_world(rows).await?;
        Ok(Page::new(world.subnets.iter().map(|s| world.subnet(s)).collect(), page, results))
    }

    pub async fn subnet_get(&self, actor: &Actor, vpc_id: i64, id: i64) -> Result<Subnet> {
        self.lookup_for::<VpcRow>(actor, Op::SubnetGet, vpc_id).await?.into_inner();
        let s = self.store.subnet_get(vpc_id, id).await?.ok_or(Error::NotFound)?;
        self.subnet_view(s).await
    }

    /// Creates a subnet; the overlap check and the insert are one transaction, so concurrent
    /// creates of overlapping subnets leave exactly one.
    pub async fn subnet_create(&self, actor: &Actor, vpc_id: i64, input: SubnetCreate) -> Result<Subnet> {
        self.lookup_for::<VpcRow>(actor, Op::SubnetCreate, vpc_id).await?.into_inner();
        let (p, valid) = validate::check_subnet(&input);
        p.finish()?;
        let s = valid.ok_or_else(|| Error::internal("subnet passed its checks without a value"))?;
        let s = &s;
        let row = self
            .write(|tx| {
                Box::pin(async move {
                    let v = tx.vpc_lock(vpc_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    if let Some(o) = tx.subnet_overlapping(vpc_id, s.first(), s.last()).await? {
                        return Err(Error::invalid(
                            "ipv4",
                            format!("Overlaps subnet '{}' ({}) of this VPC", o.label, o.ipv4),
                        ));
                    }
                    let v6 = match s.ipv6 {
                        None => None,
                        Some(ask) => {
                            let others = tx.subnets_of_vpc(vpc_id).await?;
                            let others = others.iter().filter_map(|o| o.ipv6_range.as_deref());
                            Some(ipv6::subnet_range(&v, ask, others, "ipv6[0].range")?.to_string())
                        }
                    };
                    let row = tx
                        .subnet_insert(&NewSubnet {
                            vpc_id,
                            account_id: actor.account_id(),
                            label: &s.label,
                            ipv4: &s.net.to_string(),
                            first_v4: s.first(),
                            last_v4: s.last(),
                            ipv6_range: v6.as_deref(),
                            created: Timestamp::now(),
                        })
                        .await
                        .map_err(|e| e.unique_as("label", SUBNET_LABEL_TAKEN))?;
                    tx.event_insert(&subnet_event(actor, "subnet_create", &row, &v)).await?;
                    Ok(row)
                })
            })
            .await?;
        let world = VpcWorld::of_members(vec![row], Vec::new());
        Ok(world.subnet(&world.subnets[0]))
    }

    pub async fn subnet_update(&self, actor: &Actor, vpc_id: i64, id: i64, input: SubnetUpdate) -> Result<Subnet> {
        self.lookup_for::<VpcRow>(actor, Op::SubnetUpdate, vpc_id).await?.into_inner();
        self.store.subnet_get(vpc_id, id).await?.ok_or(Error::NotFound)?;
        let mut p = Problems::new();
        if input.ipv4.is_some() {
            p.add("ipv4", "The IPv4 range of a subnet cannot be changed");
        }
        if let Some(l) = &input.label {
            validate::check_label(&mut p, "label", l);
        }
        p.finish()?;
        let input = &input;
        let s = self
            .write(|tx| {
                Box::pin(async move {
                    let v = tx.vpc_lock(vpc_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let s = tx.subnet_lock(Some(vpc_id), id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let label = input.label.as_deref().unwrap_or(&s.label);
                    let s = tx
                        .subnet_update_label(id, label, Timestamp::now())
                        .await
                        .map_err(|e| e.unique_as("label", SUBNET_LABEL_TAKEN))?;
                    tx.event_insert(&subnet_event(actor, "subnet_update", &s, &v)).await?;
                    Ok(s)
                })
            })
            .await?;
        self.subnet_view(s).await
    }

    pub async fn subnet_delete(&self, actor: &Actor, vpc_id: i64, id: i64) -> Result<()> {
        self.lookup_for::<VpcRow>(actor, Op::SubnetDelete, vpc_id).await?.into_inner();
        self.write(|tx| {
            Box::pin(async move {
                let v = tx.vpc_lock(vpc_id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                let s = tx.subnet_lock(Some(vpc_id), id, actor.account_id()).await?.ok_or(Error::NotFound)?;
                refuse_used_subnets(tx, vpc_id, Some(id), std::slice::from_ref(&s)).await?;
                tx.subnet_delete(id).await?;
                tx.event_insert(&subnet_event(actor, "subnet_delete", &s, &v)).await?;
                Ok(())
            })
        })
        .await
    }

    /// `GET /v4/vpcs/ips`: the addresses of every VPC interface of the VPCs the actor may see.
    pub async fn vpc_ips_list_all(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<VpcIp>> {
        self.authorize(actor, Op::VpcIpsListAll).await?;
        self.vpc_ips_page(actor, None, filter, page).await
    }

    /// `GET /v4/vpcs/{vpc_id}/ips`.
    pub async fn vpc_ips_list(
        &self,
        actor: &Actor,
        vpc_id: i64,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<VpcIp>> {
        self.lookup_for::<VpcRow>(actor, Op::VpcIpsList, vpc_id).await?.into_inner();
        self.vpc_ips_page(actor, Some(vpc_id), filter, page).await
    }

    async fn vpc_ips_page(
        &self,
        actor: &Actor,
        vpc_id: Option<i64>,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<VpcIp>> {
        let (rows, results) = self
            .store
            .vpc_ips_page(actor.account_id(), vpc_id, Self::grant_user(actor), filter, page.page, page.page_size)
            .await?;
        let mut subnet_ids: Vec<i64> = rows.iter().filter_map(|f| f.interface.subnet_id).collect();
        subnet_ids.sort_unstable();
        subnet_ids.dedup();
        let subnets = self.store.subnets_by_ids(&subnet_ids).await?;
        let world = VpcWorld::of_subnets(subnets, rows);
        Ok(Page::new(world.ips(|_| true), page, results))
    }
}

fn subnet_event(actor: &Actor, action: &'static str, s: &SubnetRow, v: &VpcRow) -> nubis_model::event::NewEvent {
    event(actor, action, subnet_entity(s)).secondary(vpc_entity(v)).visible_with(GrantKind::Vpc, v.id).build()
}

/// Refuses (naming every subnet in use) when an instance interface is on one of `subnets`; a
/// subnet whose instance is powered on also needs that instance shut down first.
async fn refuse_used_subnets(tx: &mut Tx<'_>, vpc_id: i64, only: Option<i64>, subnets: &[SubnetRow]) -> Result<()> {
    let uses = tx.subnet_uses(vpc_id, only).await?;
    if uses.is_empty() {
        return Ok(());
    }
    let mut errors = Vec::new();
    for s in subnets {
        let on: Vec<_> = uses.iter().filter(|u| u.subnet_id == s.id).collect();
        if on.is_empty() {
            continue;
        }
        let mut names: Vec<String> = on.iter().map(|u| format!("'{}' ({})", u.instance_label, u.instance_id)).collect();
        names.dedup();
        let mut reason = format!(
            "Subnet '{}' ({}) is used by interfaces of instance {}: delete those interfaces first",
            s.label,
            s.id,
            names.join(", ")
        );
        let mut active: Vec<String> = on
            .iter()
            .filter(|u| Status::parse(&u.instance_status).is_some_and(Status::is_powered))
            .map(|u| format!("'{}' ({})", u.instance_label, u.instance_id))
            .collect();
        active.dedup();
        if !active.is_empty() {
            reason.push_str(&format!("; the interfaces are active, so shut down instance {} first", active.join(", ")));
        }
        errors.push(FieldError::general(reason));
    }
    Err(Error::Invalid(errors))
}
