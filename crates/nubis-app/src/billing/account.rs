//! The account record (`GET`/`PUT /v4/account`), its settings, the availability of services per
//! region, and cancellation.

use nubis_model::billing::{AccountSettings, AccountView, Availability, CreditCardSummary};
use nubis_model::instance::Status;
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Result, Timestamp};

use super::gateway::GatewayError;
use super::settle::PURPOSE_CANCEL;
use super::{engine, validate};
use crate::App;
use crate::auth::{Actor, Op};
use nubis_store::Tx;

pub use super::requests::{AccountUpdate, CancelRequest, SettingsUpdate};

/// Every service a region can offer, in the order the availability shows them.
const SERVICES: &[&str] = &[
    "Linodes",
    "NodeBalancers",
    "Block Storage",
    "Object Storage",
    "Kubernetes",
    "Cloud Firewall",
    "VPCs",
    "Vlans",
    "Managed Databases",
];

impl App {
    /// The account's capabilities: every service some region offers.
    fn capabilities(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.catalog.regions {
            for c in &r.view.capabilities {
                if !out.contains(c) {
                    out.push(c.clone());
                }
            }
        }
        out
    }

    /// The account as `GET /v4/account` shows it.
    pub(crate) async fn account_view(&self, account_id: i64) -> Result<AccountView> {
        let a = self.store.account_get(account_id).await?.ok_or(Error::NotFound)?;
        let b = self.store.billing_get(account_id).await?.ok_or(Error::NotFound)?;
        let card = self.store.payment_method_default(account_id).await?;
        let uninvoiced = self.billing_uninvoiced(account_id, b.billed_through).await?;
        let promotions = self.active_promotions(account_id).await?;
        Ok(AccountView {
            active_promotions: promotions,
            active_since: a.active_since,
            address_1: b.address_1,
            address_2: b.address_2,
            balance: nubis_model::billing::Cents(b.balance),
            balance_uninvoiced: nubis_model::billing::Cents(uninvoiced),
            billing_source: "linode".into(),
            capabilities: self.capabilities(),
            city: b.city,
            company: a.company,
            country: b.country,
            credit_card: CreditCardSummary {
                expiry: card.as_ref().map(|c| c.view.data.expiry.clone()),
                last_four: card.as_ref().map(|c| c.view.data.last_four.clone()),
            },
            email: a.email,
            euuid: a.euuid,
            first_name: a.first_name,
            last_name: a.last_name,
            phone: b.phone,
            state: b.state,
            tax_id: b.tax_id,
            zip: b.zip,
        })
    }

    pub async fn account_get(&self, actor: &Actor) -> Result<AccountView> {
        self.authorize(actor, Op::AccountGet).await?;
        self.account_view(actor.account_id()).await
    }

    /// `PUT /v4/account` (spec 2.4): all-or-nothing, every failing field reported at once.
    pub async fn account_update(&self, actor: &Actor, input: AccountUpdate) -> Result<AccountView> {
        self.authorize(actor, Op::AccountUpdate).await?;
        let input = &input;
        self.write(|tx| {
            Box::pin(async move {
                let b = tx.billing_lock(actor.account_id()).await?;
                let changes = validate::account_update(input, &b.country, &b.state, &b.zip)?;
                if let Some(c) = &changes.company {
                    let a = tx.account_get(actor.account_id()).await?.ok_or(Error::NotFound)?;
                    let is_parent = tx.account_is_parent(actor.account_id()).await?;
                    if is_parent && *c != a.company {
                        return Err(Error::invalid(
                            "company",
                            "The company name of a parent account cannot be changed",
                        ));
                    }
                }
                tx.billing_update_contact(actor.account_id(), &changes).await?;
                Ok(())
            })
        })
        .await?;
        self.account_view(actor.account_id()).await
    }

    fn settings_of(b: &nubis_store::billing::BillingRow, interfaces: Option<String>) -> AccountSettings {
        AccountSettings {
            backups_enabled: b.backups_enabled,
            interfaces_for_new_linodes: interfaces
                .unwrap_or_else(|| crate::instance::generation::DEFAULT_SETTING.to_string()),
            longview_subscription: None,
            managed: b.managed,
            network_helper: b.network_helper,
            object_storage: "disabled".into(),
        }
    }

    pub async fn account_settings_get(&self, actor: &Actor) -> Result<AccountSettings> {
        self.authorize(actor, Op::AccountSettingsGet).await?;
        let b = self.store.billing_get(actor.account_id()).await?.ok_or(Error::NotFound)?;
        Ok(Self::settings_of(&b, self.store.account_interfaces_setting(actor.account_id()).await?))
    }

    pub async fn account_settings_update(&self, actor: &Actor, input: SettingsUpdate) -> Result<AccountSettings> {
        self.authorize(actor, Op::AccountSettingsUpdate).await?;
        let input = &input;
        let b = self
            .write(|tx| {
                Box::pin(async move {
                    let b = tx.billing_lock(actor.account_id()).await?;
                    let mut p = nubis_model::Problems::new();
                    if input.managed.is_some_and(|m| m != b.managed) {
                        p.add(
                            "managed",
                            "Read-only: enable the managed service with POST /v4/account/settings/managed-enable",
                        );
                    }
                    if input.longview_subscription.is_some() {
                        p.add("longview_subscription", "Read-only: Longview is not offered by this cloud");
                    }
                    if let Some(v) = &input.interfaces_for_new_linodes {
                        p.check(
                            crate::instance::generation::SETTINGS.contains(&v.as_str()),
                            "interfaces_for_new_linodes",
                            format!("Must be one of {}", crate::instance::generation::SETTINGS.join(", ")),
                        );
                    }
                    p.finish()?;
                    tx.billing_set_settings(actor.account_id(), input.backups_enabled, input.network_helper, None)
                        .await?;
                    if let Some(v) = &input.interfaces_for_new_linodes {
                        tx.account_set_interfaces_setting(actor.account_id(), v).await?;
                    }
                    let interfaces = tx.account_interfaces_setting(actor.account_id()).await?;
                    Ok((tx.billing_lock(actor.account_id()).await?, interfaces))
                })
            })
            .await?;
        Ok(Self::settings_of(&b.0, b.1))
    }

    /// Turns the managed service on and sends the welcome message (once).
    pub async fn account_managed_enable(&self, actor: &Actor) -> Result<()> {
        self.authorize(actor, Op::AccountManagedEnable).await?;
        self.write(|tx| Box::pin(async move {
            let b = tx.billing_lock(actor.account_id()).await?;
            if b.managed {
                return Ok(());
            }
            tx.billing_set_settings(actor.account_id(), None, None, Some(true)).await?;
            let a = tx.account_get(actor.account_id()).await?.ok_or(Error::NotFound)?;
            tx.outbox_insert(
                Some(a.id),
                &a.email,
                "Welcome to the managed service",
                &format!(
                    "Hello,\n\n{} enabled the managed service for the nubis account {}.\n\
                     Add the services to monitor, and the contacts to reach, and we will watch them around the clock.\n\n\
                     -- nubis\n",
                    actor.username(), a.euuid
                ),
            )
            .await?;
            Ok(())
}))
        .await
    }

    fn availability_of(r: &crate::catalog::RegionInfo) -> Availability {
        let (available, unavailable) = SERVICES.iter().map(|s| s.to_string()).partition(|s| r.has(s));
        Availability { region: r.view.id.clone(), available, unavailable }
    }

    pub async fn account_availability_list(&self, actor: &Actor, page: PageRequest) -> Result<Page<Availability>> {
        self.authorize(actor, Op::AccountAvailabilityList).await?;
        let all: Vec<Availability> = self.catalog.regions.iter().map(Self::availability_of).collect();
        let results = all.len() as u64;
        let data =
            all.into_iter().skip(page.offset().min(usize::MAX as u64) as usize).take(page.page_size as usize).collect();
        Ok(Page::new(data, page, results))
    }

    pub async fn account_availability_get(&self, actor: &Actor, region: &str) -> Result<Availability> {
        self.authorize(actor, Op::AccountAvailabilityGet).await?;
        self.catalog.region(region).map(Self::availability_of).ok_or(Error::NotFound)
    }

    /// `POST /v4/account/cancel`: the balance and the usage not invoiced yet are charged to the
    /// default method first (a failed charge cancels nothing); then the usage is invoiced and
    /// paid, metering stops, instances shut down, balancers stop listening and every token of
    /// the account stops working. Operators still read the account with `nubis admin`.
    ///
    /// What is due is worked out inside a write that records its charge as pending (which
    /// holds the account's other payments back); the gateway is called after that write, and
    /// the cancellation is done in a second write. When it cannot be done after all, the charge
    /// is given back.
    pub async fn account_cancel(&self, actor: &Actor, input: CancelRequest) -> Result<()> {
        self.authorize(actor, Op::AccountCancel).await?;
        let comments = input.comments.unwrap_or_default();
        if comments.chars().count() > 2048 {
            return Err(Error::invalid("comments", "Must be at most 2048 characters"));
        }
        let (account_id, now, comments) = (actor.account_id(), Timestamp::now(), &comments);
        let key = uuid::Uuid::new_v4().simple().to_string();
        let key_ref = &key;
        let plan = self
            .write(|tx| {
                Box::pin(async move {
                    let b = tx.billing_lock(account_id).await?;
                    if b.canceled.is_some() {
                        return Err(Error::NotFound);
                    }
                    refuse_active_children(tx, account_id).await?;
                    if !tx.payments_pending_of(account_id).await?.is_empty() {
                        return Err(Error::refused("A payment of this account is under way; try again in a moment"));
                    }
                    let due = engine::amount_due(tx, account_id, now).await?;
                    if due <= 0 {
                        return Ok(Cancel::Done(cancel_now(tx, actor, now, comments).await?));
                    }
                    let method = tx.payment_method_default(account_id).await?.ok_or_else(|| {
                        Error::refused("The balance must be paid before canceling: add a payment method first")
                    })?;
                    let id = tx
                        .payment_pending_insert(account_id, method.view.id, due, now, key_ref, PURPOSE_CANCEL)
                        .await?;
                    Ok(Cancel::Charge { payment: id, card_ref: method.gateway_ref, due })
                })
            })
            .await?;
        let stopping = match plan {
            Cancel::Done(stopping) => stopping,
            Cancel::Charge { payment, card_ref, due } => {
                let reference = match self.charge(account_id, &card_ref, due, &key).await {
                    Ok(r) => r,
                    Err(e) => {
                        // Declined: nothing was charged. Unreachable: not known; the settler
                        // asks the gateway again and gives back what it finds.
                        if matches!(e, GatewayError::Declined(_)) {
                            self.payment_give_up(payment, None).await?;
                        }
                        return Err(match e {
                            GatewayError::Declined(m) => Error::refused(format!(
                                "Charging the balance to the default payment method failed: {m}"
                            )),
                            GatewayError::Unreachable(m) => {
                                Error::Unavailable(format!("The payment gateway is unreachable: {m}"))
                            }
                        });
                    }
                };
                let r = &reference;
                let done = self
                    .write(|tx| {
                        Box::pin(async move {
                            tx.payment_confirm(payment, r).await?.ok_or_else(|| {
                                Error::Unavailable("The cancellation could not be completed in time; try again".into())
                            })?;
                            tx.billing_balance_add(account_id, -due).await?;
                            refuse_active_children(tx, account_id).await?;
                            cancel_now(tx, actor, now, comments).await
                        })
                    })
                    .await;
                match done {
                    Ok(stopping) => stopping,
                    Err(e) => {
                        // Nothing was canceled: the charge goes back.
                        self.payment_give_up(payment, Some(&reference)).await?;
                        return Err(e);
                    }
                }
            }
        };
        for id in stopping {
            self.runtime_drive(id);
        }
        self.balancers_changed();
        Ok(())
    }
}

/// What the first write of a cancellation decided.
enum Cancel {
    /// Nothing was due: the account is canceled; these instances are shutting down.
    Done(Vec<i64>),
    /// What is due is to be charged first, as the pending payment `payment`.
    Charge { payment: i64, card_ref: String, due: i64 },
}

/// A parent account with an active child account cannot be canceled.
async fn refuse_active_children(tx: &mut Tx<'_>, account_id: i64) -> Result<()> {
    if tx.child_accounts_active(account_id).await? > 0 {
        return Err(Error::refused("A parent account with an active child account cannot be canceled"));
    }
    Ok(())
}

/// Cancels the account inside the transaction: its usage up to `now` is invoiced (and paid by
/// what was charged), metering stops, its instances shut down (returned, for the runtime) and
/// its tokens stop working.
async fn cancel_now(tx: &mut Tx<'_>, actor: &Actor, now: Timestamp, comments: &str) -> Result<Vec<i64>> {
    let account_id = actor.account_id();
    engine::close_until(tx, account_id, now).await?;
    tx.meters_close_account(account_id, now).await?;
    let mut stopping = Vec::new();
    for i in tx.instances_of_account(account_id).await? {
        let st = Status::parse(&i.status).unwrap_or(Status::Offline);
        // Running ones shut down; one still provisioning ends offline instead of booting.
        let next = match st {
            Status::Running | Status::Booting | Status::Rebooting => Some(Status::ShuttingDown),
            Status::Provisioning => Some(Status::Provisioning),
            _ => None,
        };
        if let Some(next) = next {
            tx.instance_start_transition(i.id, next.name(), Status::Offline.name(), None, actor.username(), now)
                .await?;
            stopping.push(i.id);
        }
    }
    tx.billing_cancel(account_id, now, comments).await?;
    Ok(stopping)
}

/// What an operator sees of an account (`nubis admin account show`), canceled or not.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AdminAccountView {
    #[serde(flatten)]
    pub account: AccountView,
    pub canceled: Option<Timestamp>,
    pub billed_through: Timestamp,
    pub past_due: bool,
    pub has_payment_method: bool,
}

impl App {
    /// Operators: an account's record and billing state by euuid.
    pub async fn admin_account_show(&self, _admin: &crate::admin::Admin, euuid: &str) -> Result<AdminAccountView> {
        let a =
            self.store.account_by_euuid(euuid).await?.ok_or_else(|| Error::invalid("account", "No such account"))?;
        let b = self.store.billing_get(a.id).await?.ok_or(Error::NotFound)?;
        let id = a.id;
        let standing =
            self.write(|tx| Box::pin(async move { super::standing::account_standing(tx, id).await })).await?;
        Ok(AdminAccountView {
            account: self.account_view(a.id).await?,
            canceled: b.canceled,
            billed_through: b.billed_through,
            past_due: standing.past_due,
            has_payment_method: standing.has_payment_method,
        })
    }

    /// Operators: the account id behind an euuid.
    pub async fn admin_account_id(&self, _admin: &crate::admin::Admin, euuid: &str) -> Result<i64> {
        Ok(self.store.account_by_euuid(euuid).await?.ok_or_else(|| Error::invalid("account", "No such account"))?.id)
    }
}
