//! Operations data: maintenance windows (scheduled by operators for instances) and
//! notifications, derived from the account's state at the time of the request.

use nubis_model::billing::{
    Cents, MAINTENANCE_STATUSES, MAINTENANCE_TYPES, Maintenance, MaintenanceEntity, Notification, NotificationEntity,
};
use nubis_model::filter::Filter;
use nubis_model::page::{Page, PageRequest};
use nubis_model::{Error, Result, Timestamp};
use nubis_store::billing::MaintenanceRow;

use super::standing::{PAST_DUE_DAYS, past_due_cents, recent_since};

use crate::App;
use crate::auth::{Actor, Op};

/// Days before a promotion's expiry from which a notification announces it.
const PROMOTION_NOTICE_DAYS: i64 = 30;

fn maintenance_view(m: &MaintenanceRow) -> Maintenance {
    Maintenance {
        entity: MaintenanceEntity {
            id: m.instance_id,
            label: m.instance_label.clone(),
            kind: "instance".into(),
            url: format!("/v4/compute/instances/{}", m.instance_id),
        },
        reason: m.reason.clone(),
        status: m.status.clone(),
        kind: m.kind.clone(),
        when: m.when,
    }
}

impl App {
    /// `GET /v4/account/maintenance`: windows of the instances the caller can view, canceled
    /// ones omitted.
    pub async fn maintenance_list(
        &self,
        actor: &Actor,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<Maintenance>> {
        self.authorize(actor, Op::MaintenanceList).await?;
        let restricted = actor.restricted().then_some(actor.user_id());
        let (rows, n) =
            self.store.maintenance_page(actor.account_id(), restricted, filter, page.page, page.page_size).await?;
        Ok(Page::new(rows.iter().map(maintenance_view).collect(), page, n))
    }

    /// `GET /v4/account/notifications`: a past-due balance, scheduled maintenance of instances
    /// the caller can view, a promotion about to expire. Each disappears with its cause.
    pub async fn notification_list(&self, actor: &Actor, page: PageRequest) -> Result<Page<Notification>> {
        self.authorize(actor, Op::NotificationList).await?;
        let now = Timestamp::now();
        let mut out = Vec::new();
        let b = self.store.billing_get(actor.account_id()).await?.ok_or(Error::NotFound)?;
        let recent = self.store.invoices_total_since(actor.account_id(), recent_since(now)).await?;
        let past_due = past_due_cents(b.balance, recent);
        if past_due > 0 {
            out.push(Notification {
                body: None,
                entity: Some(NotificationEntity {
                    id: Some(actor.account_id()),
                    label: None,
                    kind: "account".into(),
                    url: Some("/v4/account".into()),
                }),
                label: "Your account has a past-due balance".into(),
                message: format!(
                    "${} of your balance of ${} is more than {PAST_DUE_DAYS} days past its invoice date. Make a payment to keep your services running.",
                    Cents(past_due).dollars(),
                    Cents(b.balance).dollars()
                ),
                severity: "critical".into(),
                kind: "payment_due".into(),
                until: None,
                when: None,
            });
        }
        // The pending windows of the page alone: the notifications before them (a past-due
        // balance) and after them (a promotion) are at most one each.
        let head = out.len() as u64;
        let offset = page.offset().saturating_sub(head);
        let take = page.page_size.saturating_sub(head.saturating_sub(page.offset()));
        let restricted = actor.restricted().then_some(actor.user_id());
        let (pending, windows) =
            self.store.maintenance_pending_window(actor.account_id(), restricted, offset, take).await?;
        for m in pending {
            let kind = if m.kind == "reboot" { "reboot_scheduled" } else { "migration_scheduled" };
            out.push(Notification {
                body: Some(m.reason.clone()),
                entity: Some(NotificationEntity {
                    id: Some(m.instance_id),
                    label: Some(m.instance_label.clone()),
                    kind: "instance".into(),
                    url: Some(format!("/v4/compute/instances/{}", m.instance_id)),
                }),
                label: format!("Maintenance is scheduled for {}", m.instance_label),
                message: format!("A {} of {} is scheduled for {}.", m.kind.replace('_', " "), m.instance_label, m.when),
                severity: "major".into(),
                kind: kind.into(),
                until: None,
                when: Some(m.when),
            });
        }
        let mut tail = Vec::new();
        if let Some(p) = self.store.promotion_get(actor.account_id()).await?
            && p.remaining > 0
            && p.expires > now
            && p.expires <= now.plus_seconds(PROMOTION_NOTICE_DAYS * 86_400)
        {
            tail.push(Notification {
                body: None,
                entity: Some(NotificationEntity { id: None, label: None, kind: "promotion".into(), url: None }),
                label: "Your promotional credit expires soon".into(),
                message: format!(
                    "${} of promotional credit ({}) expires on {}.",
                    Cents(p.remaining).dollars(),
                    p.code,
                    p.expires
                ),
                severity: "minor".into(),
                kind: "promotion".into(),
                until: Some(p.expires),
                when: None,
            });
        }
        // `out` holds the head and the page's windows; the head's items before the page are
        // dropped, the tail's items after the windows taken.
        let results = head + windows + tail.len() as u64;
        let head_skipped = page.offset().min(head) as usize;
        let windows_end = head + windows;
        let tail_from = page.offset().saturating_sub(windows_end) as usize;
        let data = out
            .into_iter()
            .skip(head_skipped)
            .chain(tail.into_iter().skip(tail_from))
            .take(page.page_size as usize)
            .collect();
        Ok(Page::new(data, page, results))
    }

    /// Operators: schedules a maintenance window for an instance. Returns its id.
    pub async fn admin_maintenance_schedule(
        &self,
        _admin: &crate::admin::Admin,
        instance_id: i64,
        kind: &str,
        when: Timestamp,
        reason: &str,
    ) -> Result<i64> {
        if !MAINTENANCE_TYPES.contains(&kind) {
            return Err(Error::invalid("type", format!("Must be one of {}", MAINTENANCE_TYPES.join(", "))));
        }
        let i = self
            .store
            .instance_by_id(instance_id)
            .await?
            .ok_or_else(|| Error::invalid("instance", "No such instance"))?;
        self.write(|tx| {
            Box::pin(async move {
                let id = tx.maintenance_insert(i.account_id, instance_id, kind, reason, when).await?;
                Ok(id)
            })
        })
        .await
    }

    /// Operators: moves a maintenance window on (`started`, `completed`) or cancels it.
    pub async fn admin_maintenance_set_status(
        &self,
        _admin: &crate::admin::Admin,
        id: i64,
        status: &str,
    ) -> Result<()> {
        if !MAINTENANCE_STATUSES.contains(&status) {
            return Err(Error::invalid("status", format!("Must be one of {}", MAINTENANCE_STATUSES.join(", "))));
        }
        let found = self
            .write(|tx| {
                Box::pin(async move {
                    let found = tx.maintenance_set_status(id, status).await?;
                    Ok(found)
                })
            })
            .await?;
        if !found {
            return Err(Error::invalid("id", "No such maintenance window"));
        }
        Ok(())
    }
}
