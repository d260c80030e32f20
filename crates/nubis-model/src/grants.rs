//! Grants of restricted users: per-entity permissions and the `global` grants (spec 2.6).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Access to one entity. `None` (JSON null) means no access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    ReadOnly,
    ReadWrite,
}

impl Permission {
    pub fn name(self) -> &'static str {
        match self {
            Permission::ReadOnly => "read_only",
            Permission::ReadWrite => "read_write",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "read_only" => Some(Permission::ReadOnly),
            "read_write" => Some(Permission::ReadWrite),
            _ => None,
        }
    }
}

/// The kinds of entity that carry per-entity grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GrantKind {
    Database,
    Domain,
    Firewall,
    Image,
    Instance,
    Longview,
    Nodebalancer,
    Stackscript,
    Volume,
    Vpc,
}

impl GrantKind {
    pub const ALL: [GrantKind; 10] = [
        GrantKind::Database,
        GrantKind::Domain,
        GrantKind::Firewall,
        GrantKind::Image,
        GrantKind::Instance,
        GrantKind::Longview,
        GrantKind::Nodebalancer,
        GrantKind::Stackscript,
        GrantKind::Volume,
        GrantKind::Vpc,
    ];
    pub fn name(self) -> &'static str {
        match self {
            GrantKind::Database => "database",
            GrantKind::Domain => "domain",
            GrantKind::Firewall => "firewall",
            GrantKind::Image => "image",
            GrantKind::Instance => "instance",
            GrantKind::Longview => "longview",
            GrantKind::Nodebalancer => "nodebalancer",
            GrantKind::Stackscript => "stackscript",
            GrantKind::Volume => "volume",
            GrantKind::Vpc => "vpc",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        GrantKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// A global grant that is a yes/no flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GlobalFlag {
    AddDatabases,
    AddDomains,
    AddFirewalls,
    AddImages,
    AddInstances,
    AddLongview,
    AddNodebalancers,
    AddStackscripts,
    AddVolumes,
    AddVpcs,
    CancelAccount,
    LongviewSubscription,
    ChildAccountAccess,
}

/// The `global` object of a grants structure.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct GlobalGrants {
    pub account_access: Option<Permission>,
    pub add_databases: bool,
    pub add_domains: bool,
    pub add_firewalls: bool,
    pub add_images: bool,
    pub add_instances: bool,
    pub add_longview: bool,
    pub add_nodebalancers: bool,
    pub add_stackscripts: bool,
    pub add_volumes: bool,
    pub add_vpcs: bool,
    pub cancel_account: bool,
    /// Null for accounts that are not parent accounts.
    pub child_account_access: Option<bool>,
    pub longview_subscription: bool,
}

impl GlobalGrants {
    pub fn flag(&self, f: GlobalFlag) -> bool {
        match f {
            GlobalFlag::AddDatabases => self.add_databases,
            GlobalFlag::AddDomains => self.add_domains,
            GlobalFlag::AddFirewalls => self.add_firewalls,
            GlobalFlag::AddImages => self.add_images,
            GlobalFlag::AddInstances => self.add_instances,
            GlobalFlag::AddLongview => self.add_longview,
            GlobalFlag::AddNodebalancers => self.add_nodebalancers,
            GlobalFlag::AddStackscripts => self.add_stackscripts,
            GlobalFlag::AddVolumes => self.add_volumes,
            GlobalFlag::AddVpcs => self.add_vpcs,
            GlobalFlag::CancelAccount => self.cancel_account,
            GlobalFlag::LongviewSubscription => self.longview_subscription,
            GlobalFlag::ChildAccountAccess => self.child_account_access == Some(true),
        }
    }
}

/// A `global` object in a grants update: every field optional; omitted fields stay unchanged.
/// `account_access` and `child_account_access` distinguish "omitted" from an explicit null.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobalGrantsPatch {
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<Permission>)]
    pub account_access: Option<Option<Permission>>,
    pub add_databases: Option<bool>,
    pub add_domains: Option<bool>,
    pub add_firewalls: Option<bool>,
    pub add_images: Option<bool>,
    pub add_instances: Option<bool>,
    pub add_longview: Option<bool>,
    pub add_nodebalancers: Option<bool>,
    pub add_stackscripts: Option<bool>,
    pub add_volumes: Option<bool>,
    pub add_vpcs: Option<bool>,
    pub cancel_account: Option<bool>,
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<bool>)]
    pub child_account_access: Option<Option<bool>>,
    pub longview_subscription: Option<bool>,
}

/// Deserializes a field that may be absent (outer None), null (Some(None)) or a value.
pub fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

impl GlobalGrantsPatch {
    pub fn apply(&self, g: &mut GlobalGrants) {
        macro_rules! set {
            ($($f:ident),*) => { $( if let Some(v) = self.$f { g.$f = v; } )* };
        }
        set!(
            add_databases,
            add_domains,
            add_firewalls,
            add_images,
            add_instances,
            add_longview,
            add_nodebalancers,
            add_stackscripts,
            add_volumes,
            add_vpcs,
            cancel_account,
            longview_subscription
        );
        if let Some(a) = self.account_access {
            g.account_access = a;
        }
        if let Some(c) = self.child_account_access {
            g.child_account_access = c;
        }
    }
}

/// One entry of a grants array.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct EntityGrant {
    pub id: i64,
    pub permissions: Option<Permission>,
    #[serde(default)]
    pub label: String,
}

/// An entry of a grants update request.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct EntityGrantUpdate {
    pub id: i64,
    pub permissions: Option<Permission>,
    /// Read-only; accepted and ignored so that a fetched structure can be sent back as it is.
    #[serde(default)]
    #[allow(dead_code)]
    pub label: Option<String>,
}

/// The grants structure of a user, as GET returns it and PUT accepts it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct GrantsView {
    pub global: GlobalGrants,
    pub database: Vec<EntityGrant>,
    pub domain: Vec<EntityGrant>,
    pub firewall: Vec<EntityGrant>,
    pub image: Vec<EntityGrant>,
    pub instance: Vec<EntityGrant>,
    pub longview: Vec<EntityGrant>,
    pub nodebalancer: Vec<EntityGrant>,
    pub stackscript: Vec<EntityGrant>,
    pub volume: Vec<EntityGrant>,
    pub vpc: Vec<EntityGrant>,
}

impl GrantsView {
    pub fn kind_mut(&mut self, k: GrantKind) -> &mut Vec<EntityGrant> {
        match k {
            GrantKind::Database => &mut self.database,
            GrantKind::Domain => &mut self.domain,
            GrantKind::Firewall => &mut self.firewall,
            GrantKind::Image => &mut self.image,
            GrantKind::Instance => &mut self.instance,
            GrantKind::Longview => &mut self.longview,
            GrantKind::Nodebalancer => &mut self.nodebalancer,
            GrantKind::Stackscript => &mut self.stackscript,
            GrantKind::Volume => &mut self.volume,
            GrantKind::Vpc => &mut self.vpc,
        }
    }
}

/// A grants update: omitted kinds and omitted entities stay unchanged.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantsUpdate {
    #[serde(default, deserialize_with = "crate::object::object")]
    pub global: Option<GlobalGrantsPatch>,
    #[serde(default, deserialize_with = "crate::object::objects")]
    pub database: Option<Vec<EntityGrantUpdate>>,
    #[serde(default, deserialize_with = "crate::object::objects")]
    pub domain: Option<Vec<EntityGrantUpdate>>,
    #[serde(default, deserialize_with = "crate::object::objects")]
    pub firewall: Option<Vec<EntityGrantUpdate>>,
    #[serde(default, deserialize_with = "crate::object::objects")]
    pub image: Option<Vec<EntityGrantUpdate>>,
    #[serde(default, deserialize_with = "crate::object::objects")]
    pub instance: Option<Vec<EntityGrantUpdate>>,
    #[serde(default, deserialize_with = "crate::object::objects")]
    pub longview: Option<Vec<EntityGrantUpdate>>,
    #[serde(default, deserialize_with = "crate::object::objects")]
    pub nodebalancer: Option<Vec<EntityGrantUpdate>>,
    #[serde(default, deserialize_with = "crate::object::objects")]
    pub stackscript: Option<Vec<EntityGrantUpdate>>,
    #[serde(default, deserialize_with = "crate::object::objects")]
    pub volume: Option<Vec<EntityGrantUpdate>>,
    #[serde(default, deserialize_with = "crate::object::objects")]
    pub vpc: Option<Vec<EntityGrantUpdate>>,
}

impl GrantsUpdate {
    pub fn kinds(&self) -> Vec<(GrantKind, &Vec<EntityGrantUpdate>)> {
        let all = [
            (GrantKind::Database, &self.database),
            (GrantKind::Domain, &self.domain),
            (GrantKind::Firewall, &self.firewall),
            (GrantKind::Image, &self.image),
            (GrantKind::Instance, &self.instance),
            (GrantKind::Longview, &self.longview),
            (GrantKind::Nodebalancer, &self.nodebalancer),
            (GrantKind::Stackscript, &self.stackscript),
            (GrantKind::Volume, &self.volume),
            (GrantKind::Vpc, &self.vpc),
        ];
        all.into_iter().filter_map(|(k, v)| v.as_ref().map(|v| (k, v))).collect()
    }
}

/// The grants of one user as authorization reads them.
#[derive(Debug, Clone, Default)]
pub struct UserGrants {
    pub global: GlobalGrants,
    pub entities: std::collections::HashMap<(GrantKind, i64), Permission>,
}

impl UserGrants {
    pub fn permission(&self, kind: GrantKind, id: i64) -> Option<Permission> {
        self.entities.get(&(kind, id)).copied()
    }
}
