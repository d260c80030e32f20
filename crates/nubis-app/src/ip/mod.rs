//! IP addresses (spec 2.9, 4.10): the account's addresses, one address, allocating an IPv4
//! address to an instance (a private one only if it has none, a public one only if operators
//! enabled more for it), and an instance's addresses.

mod assign;
mod rdns;
mod share;
mod view;

use nubis_model::grants::GrantKind;
use nubis_model::ip::IpAddress;
use nubis_model::{Error, Problems, Result};
use nubis_store::instances::InstanceRow;
use nubis_store::ip_list::{IpListed, IpListing, PublicPool};
use nubis_store::ips::{IpKind, IpRow};
use serde::Deserialize;
use utoipa::ToSchema;

pub use assign::{Assignment, IpAssign};
pub use rdns::IpUpdate;
pub use share::IpShare;
pub(crate) use view::{AddressBook, canonical_ip};

use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;
use crate::instance::instance_entity;

/// `POST /v4/networking/ips` (with `instance_id`) and `POST .../instances/{id}/ips` (without).
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct IpAllocate {
    /// Only `ipv4`.
    #[serde(rename = "type")]
    #[schema(required = true, schema_with = ipv4_only)]
    pub kind: Option<String>,
    /// A public address needs operators to have enabled more for the instance; a private one is
    /// given only to an instance without one.
    #[schema(required = true, value_type = bool)]
    pub public: Option<bool>,
    #[schema(required = true, value_type = i64)]
    pub instance_id: Option<i64>,
}

/// `POST /v4/compute/instances/{instance_id}/ips`: the instance is the path's.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct InstanceIpAllocate {
    /// Only `ipv4`.
    #[serde(rename = "type")]
    #[schema(required = true, schema_with = ipv4_only)]
    pub kind: Option<String>,
    /// A public address needs operators to have enabled more for the instance; a private one is
    /// given only to an instance without one.
    #[schema(required = true, value_type = bool)]
    pub public: Option<bool>,
}

impl App {
    /// `GET /v4/networking/ips`: public IPv4, SLAAC addresses and ranges of the instances the
    /// actor may see (private and link-local addresses are not listed), one page read in SQL.
    pub async fn ip_list(
        &self,
        actor: &Actor,
        skip_ipv6_rdns: bool,
        filter: &nubis_model::filter::Filter,
        page: nubis_model::page::PageRequest,
    ) -> Result<nubis_model::page::Page<IpAddress>> {
        self.authorize(actor, Op::IpList).await?;
        let public_pools: Vec<PublicPool> = (self.catalog.regions.iter())
            .filter_map(|r| {
                let pool = self.public_pool(&r.view.id)?;
                let (first, last) = (u32::from(pool.net().network()), u32::from(pool.net().broadcast()));
                let (prefix, first, last) = (i64::from(pool.subnet_prefix()), i64::from(first), i64::from(last));
                Some(PublicPool { region: r.view.id.clone(), prefix, first, last })
            })
            .collect();
        let suffix = self.config.dns.default_rdns_suffix.as_deref().unwrap_or(view::DEFAULT_RDNS_SUFFIX);
        let listing = IpListing {
            public_pools: &public_pools,
            rdns_suffix: &format!(".{}", suffix.trim_matches('.')),
            regions: self.catalog.regions.len(),
        };
        let (rows, results) = self
            .store
            .ips_page(actor.account_id(), Self::grant_user(actor), &listing, filter, page.page, page.page_size)
            .await?;
        let ips: Vec<IpRow> =
            rows.iter().filter_map(|r| if let IpListed::Ip(i) = r { Some(i.clone()) } else { None }).collect();
        let book = self.address_book_of_ips(&ips).await?;
        let out = rows
            .iter()
            .map(|r| match r {
                IpListed::Ip(i) => book.record(i, skip_ipv6_rdns),
                IpListed::Range(r) => book.range_record(r),
            })
            .collect();
        Ok(nubis_model::page::Page::new(out, page, results))
    }

    /// `GET /v4/networking/ips/{address}`.
    pub async fn ip_get(&self, actor: &Actor, address: &str) -> Result<IpAddress> {
        let ip = self.lookup_for::<IpRow>(actor, Op::IpGet, address.to_string()).await?.into_inner();
        Ok(self.address_book_of_ips(std::slice::from_ref(&ip)).await?.record(&ip, false))
    }

    /// `GET /v4/compute/instances/{instance_id}/ips/{address}`: an address the instance owns.
    pub async fn instance_ip_get(&self, actor: &Actor, instance_id: i64, address: &str) -> Result<IpAddress> {
        self.lookup_for::<InstanceRow>(actor, Op::InstanceIpGet, instance_id).await?.into_inner();
        let canonical = canonical_ip(address).ok_or(Error::NotFound)?;
        let ip = self.store.ips_by_addresses(actor.account_id(), &[canonical]).await?.pop();
        let ip = ip.filter(|i| i.instance_id == instance_id).ok_or(Error::NotFound)?;
        Ok(self.address_book_of_ips(std::slice::from_ref(&ip)).await?.record(&ip, false))
    }

    /// `POST /v4/networking/ips`.
    pub async fn ip_allocate(&self, actor: &Actor, input: IpAllocate) -> Result<IpAddress> {
        self.authorize_policy(actor, Op::IpAllocate).await?;
        let mut p = Problems::new();
        check_allocate(&mut p, input.kind.as_deref(), input.public);
        if input.instance_id.is_none() {
            p.add("instance_id", "instance_id is required");
        }
        p.finish()?;
        let id = input.instance_id.unwrap_or_default();
        let inst = match self.lookup_for::<InstanceRow>(actor, Op::IpAllocate, id).await {
            Ok(i) => i,
            Err(Error::NotFound) => return Err(Error::invalid("instance_id", "Instance not found")),
            Err(e) => return Err(e),
        };
        self.allocate_for(actor, &inst, input.public.unwrap_or(false)).await
    }

    /// `POST /v4/compute/instances/{instance_id}/ips`.
    pub async fn instance_ip_allocate(
        &self,
        actor: &Actor,
        instance_id: i64,
        input: InstanceIpAllocate,
    ) -> Result<IpAddress> {
        let inst = self.lookup_for::<InstanceRow>(actor, Op::InstanceIpAllocate, instance_id).await?.into_inner();
        let mut p = Problems::new();
        check_allocate(&mut p, input.kind.as_deref(), input.public);
        p.finish()?;
        self.allocate_for(actor, &inst, input.public.unwrap_or(false)).await
    }

    async fn allocate_for(&self, actor: &Actor, inst: &InstanceRow, public: bool) -> Result<IpAddress> {
        let id = inst.id;
        let row = self.write(|tx| Box::pin(async move {
            let i = tx.instance_lock(id, actor.account_id()).await?.ok_or(Error::NotFound)?;
            let mine = tx.ips_of_instance(id).await?;
            let pool = if public {
                if !i.extra_ipv4_allowed {
                    return Err(Error::invalid(
                        "public",
                        "Additional public IPv4 addresses need a support request: operators must enable them for \
                         this instance first",
                    ));
                }
                self.public_pool(&i.region)
                    .ok_or_else(|| Error::internal(format!("region {} has no public pool", i.region)))?
            } else {
                if mine.iter().any(|a| a.kind == IpKind::Ipv4 && !a.public) {
                    return Err(Error::invalid("public", "The instance already has a private IPv4 address"));
                }
                self.private_pool
            };
            let a = crate::instance::allocate_ipv4(tx, &pool, actor.account_id(), &i.region, id, public).await?;
            tx.event_insert(
                &event(actor, "instance_addip", instance_entity(&i))
                    .visible_with(GrantKind::Instance, id)
                    .message(format!("Added {}", a.address))
                    .build(),
            )
            .await?;
            Ok(a)
}))
        .await?;
        Ok(self.address_book_of_ips(std::slice::from_ref(&row)).await?.record(&row, false))
    }
}

fn check_allocate(p: &mut Problems, kind: Option<&str>, public: Option<bool>) {
    match kind {
        None => p.add("type", "type is required"),
        Some("ipv4") => {}
        Some(_) => p.add("type", "Only ipv4 addresses can be allocated"),
    }
    if public.is_none() {
        p.add("public", "public is required");
    }
}

fn ipv4_only() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(nubis_model::schema::one_of(&["ipv4"]))
}
