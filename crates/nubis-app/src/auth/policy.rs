//! The policy table: for every operation of the API, the OAuth scope it needs, whether it is for
//! unrestricted users only, and which grant it needs. Each operation is declared exactly once,
//! here; its name is also the handler's name and the OpenAPI `operationId`, and a test walks every
//! route and fails if one has no row.
//!
//! Where the spec names no scope, reads need the area's `read_only` scope and writes its
//! `read_write` scope, as in the reference.

use nubis_model::grants::{GlobalFlag, GrantKind, Permission};
use nubis_model::scope::{Area, Level, Scope};

/// The grant an operation needs from a restricted user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    None,
    /// A global flag such as `add_vpcs`.
    Global(GlobalFlag),
    /// `global.account_access` at this level or better.
    AccountAccess(Permission),
    /// A permission on the entity the operation targets.
    Entity(GrantKind, Permission),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// No authentication at all (the catalog).
    pub public: bool,
    pub scope: Option<Scope>,
    /// A second scope the token must also carry: the reference names two for some operations
    /// (allocating, assigning and sharing addresses need `ips:read_write` and
    /// `instances:read_write`).
    pub also: Option<Scope>,
    pub unrestricted_only: bool,
    pub grant: Grant,
    /// A billing write: refused to users of a child account (billing is the parent's).
    pub billing_write: bool,
}

impl Policy {
    /// The scopes the operation accepts, as the `X-Accepted-OAuth-Scopes` header shows them.
    pub fn accepted_scopes(&self) -> String {
        [self.scope, self.also].iter().flatten().map(|s| s.to_string()).collect::<Vec<_>>().join(" ")
    }
}

const RO: Level = Level::ReadOnly;
const RW: Level = Level::ReadWrite;
const P_RO: Permission = Permission::ReadOnly;
const P_RW: Permission = Permission::ReadWrite;

const fn scope(area: Area, level: Level) -> Option<Scope> {
    Some(Scope { area, level })
}

const fn public() -> Policy {
    Policy { public: true, scope: None, also: None, unrestricted_only: false, grant: Grant::None, billing_write: false }
}
const fn any_token() -> Policy {
    Policy {
        public: false,
        scope: None,
        also: None,
        unrestricted_only: false,
        grant: Grant::None,
        billing_write: false,
    }
}
const fn scoped(area: Area, level: Level) -> Policy {
    Policy {
        public: false,
        scope: scope(area, level),
        also: None,
        unrestricted_only: false,
        grant: Grant::None,
        billing_write: false,
    }
}
const fn unrestricted(area: Area, level: Level) -> Policy {
    Policy {
        public: false,
        scope: scope(area, level),
        also: None,
        unrestricted_only: true,
        grant: Grant::None,
        billing_write: false,
    }
}
const fn global(area: Area, flag: GlobalFlag) -> Policy {
    Policy {
        public: false,
        scope: scope(area, RW),
        also: None,
        unrestricted_only: false,
        grant: Grant::Global(flag),
        billing_write: false,
    }
}
const fn entity(area: Area, level: Level, kind: GrantKind, p: Permission) -> Policy {
    Policy {
        public: false,
        scope: scope(area, level),
        also: None,
        unrestricted_only: false,
        grant: Grant::Entity(kind, p),
        billing_write: false,
    }
}

/// Needs `global.account_access` at `p` or better from restricted users.
const fn account(area: Area, level: Level, p: Permission) -> Policy {
    Policy {
        public: false,
        scope: scope(area, level),
        also: None,
        unrestricted_only: false,
        grant: Grant::AccountAccess(p),
        billing_write: false,
    }
}
/// A child-account operation: `child_account:level`, and the grant `child_account_access` from
/// restricted users.
const fn child(level: Level) -> Policy {
    Policy {
        public: false,
        scope: scope(Area::ChildAccount, level),
        also: None,
        unrestricted_only: false,
        grant: Grant::Global(GlobalFlag::ChildAccountAccess),
        billing_write: false,
    }
}
/// `p`, a billing write: refused to users of a child account.
const fn billing(mut p: Policy) -> Policy {
    p.billing_write = true;
    p
}
/// `p`, also requiring `area:level`.
const fn and(mut p: Policy, area: Area, level: Level) -> Policy {
    p.also = scope(area, level);
    p
}

macro_rules! ops {
    ($($variant:ident = $name:literal => $policy:expr;)*) => {
        /// Every operation of the API.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Op { $($variant),* }

        impl Op {
            pub const ALL: &'static [Op] = &[$(Op::$variant),*];

            /// The operation's name: the handler name and the OpenAPI `operationId`.
            pub fn name(self) -> &'static str {
                match self { $(Op::$variant => $name),* }
            }

            pub fn policy(self) -> Policy {
                match self { $(Op::$variant => $policy),* }
            }

            pub fn from_name(name: &str) -> Option<Op> {
                match name { $($name => Some(Op::$variant),)* _ => None }
            }
        }
    };
}

ops! {
    // Catalog (public, as in the reference).
    RegionList = "region_list" => public();
    RegionGet = "region_get" => public();
    TypeList = "type_list" => public();
    TypeGet = "type_get" => public();
    ImageList = "image_list" => public();
    ImageGet = "image_get" => public();

    // Profile and personal access tokens.
    ProfileGet = "profile_get" => any_token();
    ProfileUpdate = "profile_update" => scoped(Area::Account, RW);
    ProfileGrants = "profile_grants" => any_token();
    TokenList = "token_list" => scoped(Area::Account, RO);
    TokenCreate = "token_create" => scoped(Area::Account, RW);
    TokenGet = "token_get" => scoped(Area::Account, RO);
    TokenUpdate = "token_update" => scoped(Area::Account, RW);
    TokenDelete = "token_delete" => scoped(Area::Account, RW);

    // Users and grants (unrestricted users only).
    AccountTransfer = "account_transfer" => account(Area::Account, RO, P_RO);
    UserList = "user_list" => unrestricted(Area::Account, RO);
    UserCreate = "user_create" => unrestricted(Area::Account, RW);
    UserGet = "user_get" => unrestricted(Area::Account, RO);
    UserUpdate = "user_update" => unrestricted(Area::Account, RW);
    UserDelete = "user_delete" => unrestricted(Area::Account, RW);
    UserGrantsGet = "user_grants_get" => unrestricted(Area::Account, RO);
    UserGrantsUpdate = "user_grants_update" => unrestricted(Area::Account, RW);

    // Service transfers (spec 4.4) and the deprecated entity-transfer forms of the same
    // operations (spec 9): unrestricted users only.
    ServiceTransferList = "service_transfer_list" => unrestricted(Area::Account, RO);
    ServiceTransferCreate = "service_transfer_create" => unrestricted(Area::Account, RW);
    ServiceTransferGet = "service_transfer_get" => unrestricted(Area::Account, RO);
    ServiceTransferCancel = "service_transfer_cancel" => unrestricted(Area::Account, RW);
    ServiceTransferAccept = "service_transfer_accept" => unrestricted(Area::Account, RW);
    EntityTransferList = "entity_transfer_list" => unrestricted(Area::Account, RO);
    EntityTransferCreate = "entity_transfer_create" => unrestricted(Area::Account, RW);
    EntityTransferGet = "entity_transfer_get" => unrestricted(Area::Account, RO);
    EntityTransferCancel = "entity_transfer_cancel" => unrestricted(Area::Account, RW);
    EntityTransferAccept = "entity_transfer_accept" => unrestricted(Area::Account, RW);

    // Account and billing (spec 4.2, 4.3). Restricted users need `account_access`; billing
    // writes are also refused to child-account users (spec 5 and 7).
    AccountGet = "account_get" => account(Area::Account, RO, P_RO);
    AccountUpdate = "account_update" => billing(account(Area::Account, RW, P_RW));
    AccountAvailabilityList = "account_availability_list" => scoped(Area::Account, RO);
    AccountAvailabilityGet = "account_availability_get" => scoped(Area::Account, RO);
    AccountCancel = "account_cancel" => billing(unrestricted(Area::Account, RW));
    AccountSettingsGet = "account_settings_get" => account(Area::Account, RO, P_RO);
    AccountSettingsUpdate = "account_settings_update" => account(Area::Account, RW, P_RW);
    AccountManagedEnable = "account_managed_enable" => account(Area::Account, RW, P_RW);
    // The spec names `account:read_only` for promo codes and payment-method delete.
    PromoCodeAdd = "promo_code_add" => billing(unrestricted(Area::Account, RO));
    CreditCardAdd = "credit_card_add" => billing(account(Area::Account, RW, P_RW));
    PaymentMethodList = "payment_method_list" => account(Area::Account, RO, P_RO);
    PaymentMethodCreate = "payment_method_create" => billing(account(Area::Account, RW, P_RW));
    PaymentMethodGet = "payment_method_get" => account(Area::Account, RO, P_RO);
    PaymentMethodDelete = "payment_method_delete" => billing(account(Area::Account, RO, P_RW));
    PaymentMethodMakeDefault = "payment_method_make_default" => billing(account(Area::Account, RW, P_RW));
    PaymentList = "payment_list" => account(Area::Account, RO, P_RO);
    PaymentCreate = "payment_create" => billing(account(Area::Account, RW, P_RW));
    PaymentGet = "payment_get" => account(Area::Account, RO, P_RO);
    PaypalStage = "paypal_stage" => account(Area::Account, RW, P_RW);
    PaypalExecute = "paypal_execute" => account(Area::Account, RW, P_RW);
    InvoiceList = "invoice_list" => account(Area::Account, RO, P_RO);
    InvoiceGet = "invoice_get" => account(Area::Account, RO, P_RO);
    InvoiceItemList = "invoice_item_list" => account(Area::Account, RO, P_RO);
    MaintenanceList = "maintenance_list" => scoped(Area::Account, RO);
    NotificationList = "notification_list" => scoped(Area::Account, RO);

    // Events.
    EventList = "event_list" => scoped(Area::Events, RO);
    EventGet = "event_get" => scoped(Area::Events, RO);
    EventRead = "event_read" => scoped(Area::Events, RO);
    EventSeen = "event_seen" => scoped(Area::Events, RO);

    // VPCs and subnets (spec 4.1). Reads name no scope in the spec: `vpc:read_only`.
    VpcList = "vpc_list" => scoped(Area::Vpc, RO);
    VpcCreate = "vpc_create" => global(Area::Vpc, GlobalFlag::AddVpcs);
    VpcIpsListAll = "vpc_ips_list_all" => scoped(Area::Ips, RO);
    VpcGet = "vpc_get" => entity(Area::Vpc, RO, GrantKind::Vpc, P_RO);
    VpcUpdate = "vpc_update" => entity(Area::Vpc, RW, GrantKind::Vpc, P_RW);
    VpcDelete = "vpc_delete" => entity(Area::Vpc, RW, GrantKind::Vpc, P_RW);
    VpcIpsList = "vpc_ips_list" => entity(Area::Ips, RO, GrantKind::Vpc, P_RO);
    SubnetList = "subnet_list" => entity(Area::Vpc, RO, GrantKind::Vpc, P_RO);
    SubnetCreate = "subnet_create" => entity(Area::Vpc, RW, GrantKind::Vpc, P_RW);
    SubnetGet = "subnet_get" => entity(Area::Vpc, RO, GrantKind::Vpc, P_RO);
    SubnetUpdate = "subnet_update" => entity(Area::Vpc, RW, GrantKind::Vpc, P_RW);
    SubnetDelete = "subnet_delete" => entity(Area::Vpc, RW, GrantKind::Vpc, P_RW);

    // Compute instances.
    InstanceList = "instance_list" => scoped(Area::Instances, RO);
    InstanceCreate = "instance_create" => global(Area::Instances, GlobalFlag::AddInstances);
    InstanceGet = "instance_get" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceUpdate = "instance_update" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceDelete = "instance_delete" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceBoot = "instance_boot" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceShutdown = "instance_shutdown" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceReboot = "instance_reboot" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceIpsList = "instance_ips_list" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceIpAllocate = "instance_ip_allocate" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceIpGet = "instance_ip_get" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceIpUpdate = "instance_ip_update" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceIpDelete = "instance_ip_delete" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceFirewallsList = "instance_firewalls_list" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceNodebalancersList = "instance_nodebalancers_list" =>
        entity(Area::Instances, RO, GrantKind::Instance, P_RO);

    // IP addresses (spec 4.10). An address's grant is its instance's.
    IpList = "ip_list" => scoped(Area::Ips, RO);
    IpAllocate = "ip_allocate" => and(entity(Area::Ips, RW, GrantKind::Instance, P_RW), Area::Instances, RW);
    IpGet = "ip_get" => entity(Area::Ips, RO, GrantKind::Instance, P_RO);
    IpUpdate = "ip_update" => entity(Area::Ips, RW, GrantKind::Instance, P_RW);
    // Assign and share check read_write on every instance involved themselves.
    IpAssign = "ip_assign" => and(scoped(Area::Ips, RW), Area::Instances, RW);
    Ipv4Assign = "ipv4_assign" => and(scoped(Area::Ips, RW), Area::Instances, RW);
    IpShare = "ip_share" => and(scoped(Area::Ips, RW), Area::Instances, RW);
    Ipv4Share = "ipv4_share" => and(scoped(Area::Ips, RW), Area::Instances, RW);

    // IPv6 pools and ranges; a range's grant is its instance's.
    Ipv6PoolList = "ipv6_pool_list" => scoped(Area::Ips, RO);
    Ipv6RangeList = "ipv6_range_list" => scoped(Area::Ips, RO);
    Ipv6RangeCreate = "ipv6_range_create" => and(scoped(Area::Ips, RW), Area::Instances, RW);
    Ipv6RangeGet = "ipv6_range_get" => entity(Area::Ips, RO, GrantKind::Instance, P_RO);
    Ipv6RangeDelete = "ipv6_range_delete" => entity(Area::Ips, RW, GrantKind::Instance, P_RW);

    // VLANs.
    VlanList = "vlan_list" => scoped(Area::Instances, RO);

    // Firewalls (spec 4.9) and the firewalls of a load balancer.
    FirewallList = "firewall_list" => scoped(Area::Firewall, RO);
    FirewallCreate = "firewall_create" => global(Area::Firewall, GlobalFlag::AddFirewalls);
    FirewallGet = "firewall_get" => entity(Area::Firewall, RO, GrantKind::Firewall, P_RO);
    FirewallUpdate = "firewall_update" => entity(Area::Firewall, RW, GrantKind::Firewall, P_RW);
    FirewallDelete = "firewall_delete" => entity(Area::Firewall, RW, GrantKind::Firewall, P_RW);
    FirewallRulesGet = "firewall_rules_get" => entity(Area::Firewall, RO, GrantKind::Firewall, P_RO);
    FirewallRulesUpdate = "firewall_rules_update" => entity(Area::Firewall, RW, GrantKind::Firewall, P_RW);
    FirewallDeviceList = "firewall_device_list" => entity(Area::Firewall, RO, GrantKind::Firewall, P_RO);
    FirewallDeviceCreate = "firewall_device_create" => entity(Area::Firewall, RW, GrantKind::Firewall, P_RW);
    FirewallDeviceGet = "firewall_device_get" => entity(Area::Firewall, RO, GrantKind::Firewall, P_RO);
    FirewallDeviceDelete = "firewall_device_delete" => entity(Area::Firewall, RW, GrantKind::Firewall, P_RW);

    // Load balancers (spec section 1, reference `/nodebalancers`). Rebuild needs read_write on
    // the balancer; node reads need `nodebalancers:read_only` like every other read.
    NodebalancerList = "nodebalancer_list" => scoped(Area::Nodebalancers, RO);
    NodebalancerCreate = "nodebalancer_create" => global(Area::Nodebalancers, GlobalFlag::AddNodebalancers);
    NodebalancerGet = "nodebalancer_get" => entity(Area::Nodebalancers, RO, GrantKind::Nodebalancer, P_RO);
    NodebalancerUpdate = "nodebalancer_update" => entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);
    NodebalancerDelete = "nodebalancer_delete" => entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);
    NodebalancerStats = "nodebalancer_stats" => entity(Area::Nodebalancers, RO, GrantKind::Nodebalancer, P_RO);
    NodebalancerFirewallsList = "nodebalancer_firewalls_list" =>
        entity(Area::Nodebalancers, RO, GrantKind::Nodebalancer, P_RO);
    NodebalancerConfigList = "nodebalancer_config_list" =>
        entity(Area::Nodebalancers, RO, GrantKind::Nodebalancer, P_RO);
    NodebalancerConfigCreate = "nodebalancer_config_create" =>
        entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);
    NodebalancerConfigGet = "nodebalancer_config_get" =>
        entity(Area::Nodebalancers, RO, GrantKind::Nodebalancer, P_RO);
    NodebalancerConfigUpdate = "nodebalancer_config_update" =>
        entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);
    NodebalancerConfigDelete = "nodebalancer_config_delete" =>
        entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);
    NodebalancerConfigRebuild = "nodebalancer_config_rebuild" =>
        entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);
    NodebalancerConfigNodeCreate = "nodebalancer_config_node_create" =>
        entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);
    NodebalancerNodeList = "nodebalancer_node_list" =>
        entity(Area::Nodebalancers, RO, GrantKind::Nodebalancer, P_RO);
    NodebalancerNodeCreate = "nodebalancer_node_create" =>
        entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);
    NodebalancerNodeGet = "nodebalancer_node_get" => entity(Area::Nodebalancers, RO, GrantKind::Nodebalancer, P_RO);
    NodebalancerNodeUpdate = "nodebalancer_node_update" =>
        entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);
    NodebalancerNodeDelete = "nodebalancer_node_delete" =>
        entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);

    // Sign-in and delegation (spec 4.3 logins, 4.5, 4.7). OAuth clients need the account_access
    // grant (`x-linode-grant` of the reference); the thumbnail view needs no authentication.
    OauthClientList = "oauth_client_list" => account(Area::Account, RO, P_RO);
    OauthClientCreate = "oauth_client_create" => account(Area::Account, RW, P_RW);
    OauthClientGet = "oauth_client_get" => account(Area::Account, RO, P_RO);
    OauthClientUpdate = "oauth_client_update" => account(Area::Account, RW, P_RW);
    OauthClientDelete = "oauth_client_delete" => account(Area::Account, RW, P_RW);
    OauthClientResetSecret = "oauth_client_reset_secret" => account(Area::Account, RW, P_RW);
    OauthClientThumbnailGet = "oauth_client_thumbnail_get" => public();
    OauthClientThumbnailUpdate = "oauth_client_thumbnail_update" => account(Area::Account, RW, P_RW);
    AccountLoginList = "account_login_list" => unrestricted(Area::Account, RO);
    AccountLoginGet = "account_login_get" => unrestricted(Area::Account, RO);
    ProfileLogins = "profile_logins" => scoped(Area::Account, RO);
    ChildAccountList = "child_account_list" => child(RO);
    ChildAccountGet = "child_account_get" => child(RO);
    ChildAccountToken = "child_account_token" => child(RW);

    // Instances beyond the spec's resources, as the hosted API serves them: configuration
    // profiles and their interfaces, disks, lifecycle actions, usage and Linode interfaces (each
    // needs the instance's grant: read_only to read, read_write to change; a clone reads its
    // source and checks `add_instances` itself). SSH keys are the caller's own profile's.
    InstanceConfigList = "instance_config_list" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceConfigCreate = "instance_config_create" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceConfigGet = "instance_config_get" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceConfigUpdate = "instance_config_update" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceConfigDelete = "instance_config_delete" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceConfigInterfaceList = "instance_config_interface_list" =>
        entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceConfigInterfaceCreate = "instance_config_interface_create" =>
        entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceConfigInterfaceGet = "instance_config_interface_get" =>
        entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceConfigInterfaceUpdate = "instance_config_interface_update" =>
        entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceConfigInterfaceDelete = "instance_config_interface_delete" =>
        entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceConfigInterfacesOrder = "instance_config_interfaces_order" =>
        entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceDiskList = "instance_disk_list" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceDiskCreate = "instance_disk_create" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceDiskGet = "instance_disk_get" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceDiskUpdate = "instance_disk_update" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceDiskDelete = "instance_disk_delete" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceDiskClone = "instance_disk_clone" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceDiskResize = "instance_disk_resize" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceDiskPasswordReset = "instance_disk_password_reset" =>
        entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceRebuild = "instance_rebuild" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceResize = "instance_resize" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceMutate = "instance_mutate" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceMigrate = "instance_migrate" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceClone = "instance_clone" => entity(Area::Instances, RW, GrantKind::Instance, P_RO);
    InstancePasswordReset = "instance_password_reset" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceRescue = "instance_rescue" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceTransferGet = "instance_transfer_get" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceTransferMonth = "instance_transfer_month" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceStatsGet = "instance_stats_get" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceStatsMonth = "instance_stats_month" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceInterfaceList = "instance_interface_list" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceInterfaceCreate = "instance_interface_create" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceInterfaceGet = "instance_interface_get" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceInterfaceUpdate = "instance_interface_update" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceInterfaceDelete = "instance_interface_delete" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceInterfaceHistory = "instance_interface_history" =>
        entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceInterfaceSettingsGet = "instance_interface_settings_get" =>
        entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceInterfaceSettingsUpdate = "instance_interface_settings_update" =>
        entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceInterfaceFirewallsList = "instance_interface_firewalls_list" =>
        entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceInterfacesUpgrade = "instance_interfaces_upgrade" =>
        entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    SshKeyList = "ssh_key_list" => scoped(Area::Account, RO);
    SshKeyCreate = "ssh_key_create" => scoped(Area::Account, RW);
    SshKeyGet = "ssh_key_get" => scoped(Area::Account, RO);
    SshKeyUpdate = "ssh_key_update" => scoped(Area::Account, RW);
    SshKeyDelete = "ssh_key_delete" => scoped(Area::Account, RW);

    // The hosted API around the spec's resources: the rest of the catalog (public), public
    // images refused to writes (they belong to no account).
    NodebalancerTypeList = "nodebalancer_type_list" => public();
    NetworkTransferPriceList = "network_transfer_price_list" => public();
    ImageUpdate = "image_update" => scoped(Area::Images, RW);
    ImageDelete = "image_delete" => scoped(Area::Images, RW);
    ProfileLoginGet = "profile_login_get" => scoped(Area::Account, RO);
    // Firewall rule versions (the firewall's grant), the account's default firewalls (read by
    // any user of the account, set by unrestricted users), the templates.
    FirewallHistoryList = "firewall_history_list" => entity(Area::Firewall, RO, GrantKind::Firewall, P_RO);
    FirewallHistoryGet = "firewall_history_get" => entity(Area::Firewall, RO, GrantKind::Firewall, P_RO);
    FirewallSettingsGet = "firewall_settings_get" => scoped(Area::Firewall, RO);
    FirewallSettingsUpdate = "firewall_settings_update" => unrestricted(Area::Firewall, RW);
    FirewallTemplateList = "firewall_template_list" => scoped(Area::Firewall, RO);
    FirewallTemplateGet = "firewall_template_get" => scoped(Area::Firewall, RO);
    // Maintenance policies: what any user of an account may read (the account's choice is an
    // account setting).
    MaintenancePolicyList = "maintenance_policy_list" => any_token();
    // The rest of `/regions` (public, as in the hosted document).
    RegionAvailabilityList = "region_availability_list" => public();
    RegionAvailabilityGet = "region_availability_get" => public();
    VpcAvailabilityList = "vpc_availability_list" => public();
    VpcAvailabilityGet = "vpc_availability_get" => public();
    // The IPv6 ranges of VPC interfaces, as their IPv4 addresses.
    VpcIpv6sListAll = "vpc_ipv6s_list_all" => scoped(Area::Ips, RO);
    VpcIpv6sList = "vpc_ipv6s_list" => entity(Area::Ips, RO, GrantKind::Vpc, P_RO);
    // A balancer's firewalls replaced at once, and its VPC configurations (4.229 operations).
    NodebalancerFirewallsUpdate = "nodebalancer_firewalls_update" =>
        entity(Area::Nodebalancers, RW, GrantKind::Nodebalancer, P_RW);
    NodebalancerVpcList = "nodebalancer_vpc_list" => entity(Area::Nodebalancers, RO, GrantKind::Nodebalancer, P_RO);
    NodebalancerVpcGet = "nodebalancer_vpc_get" => entity(Area::Nodebalancers, RO, GrantKind::Nodebalancer, P_RO);

    // The Backup service of an instance (the instance's grant; changes need read_write) and its
    // volumes (none: volumes are not offered).
    InstanceBackupList = "instance_backup_list" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceBackupGet = "instance_backup_get" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);
    InstanceSnapshotCreate = "instance_snapshot_create" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceBackupsEnable = "instance_backups_enable" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceBackupsCancel = "instance_backups_cancel" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceBackupRestore = "instance_backup_restore" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceVolumeList = "instance_volume_list" => entity(Area::Instances, RO, GrantKind::Instance, P_RO);

    // Firewall rule sets (read by any user of the account, written by unrestricted users: a set
    // has no grant and reaches every firewall that references it), the expanded rules (the
    // firewall's grant), the prefix lists nubis provides, and an instance's firewalls replaced
    // or applied again (read_write on the instance; each firewall added or removed is checked
    // as a device change).
    FirewallRulesetList = "firewall_ruleset_list" => scoped(Area::Firewall, RO);
    FirewallRulesetGet = "firewall_ruleset_get" => scoped(Area::Firewall, RO);
    FirewallRulesetCreate = "firewall_ruleset_create" => unrestricted(Area::Firewall, RW);
    FirewallRulesetUpdate = "firewall_ruleset_update" => unrestricted(Area::Firewall, RW);
    FirewallRulesetDelete = "firewall_ruleset_delete" => unrestricted(Area::Firewall, RW);
    FirewallRulesExpansionGet = "firewall_rules_expansion_get" => entity(Area::Firewall, RO, GrantKind::Firewall, P_RO);
    PrefixListList = "prefix_list_list" => scoped(Area::Firewall, RO);
    PrefixListGet = "prefix_list_get" => scoped(Area::Firewall, RO);
    InstanceFirewallsUpdate = "instance_firewalls_update" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);
    InstanceFirewallsApply = "instance_firewalls_apply" => entity(Area::Instances, RW, GrantKind::Instance, P_RW);

    // The default and forbidden IPv4 ranges of VPCs (the same for every account).
    VpcDefaultRanges = "vpc_default_ranges" => scoped(Area::Vpc, RO);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for op in Op::ALL {
            assert!(seen.insert(op.name()), "duplicate operation name {}", op.name());
            assert_eq!(Op::from_name(op.name()), Some(*op));
        }
    }

    #[test]
    fn writes_need_read_write_scopes() {
        for op in Op::ALL {
            let p = op.policy();
            let name = op.name();
            let is_write = ["_create", "_update", "_delete"].iter().any(|s| name.ends_with(s));
            // Spec 4.3 names `account:read_only` for deleting a payment method.
            let spec_read_only = name == "payment_method_delete";
            if is_write
                && !spec_read_only
                && let Some(s) = p.scope
            {
                assert_eq!(s.level, Level::ReadWrite, "{name} writes with a read-only scope");
            }
        }
    }
}
