//! Service transfers (spec 3.2, 4.4, 9): one account offers instances under a token (a UUID),
//! an unrestricted user of another account accepts, and nubis then moves the instances with
//! their addresses to the receiving account, promptly and asynchronously.
//!
//! - States: `pending` -> `accepted` -> `completed` (or `failed` when a condition broke before
//!   completion), `pending` -> `canceled`, `pending` -> `stale` at the expiry
//!   (`transfers.expiry_secs`, 24 hours). A pending transfer past its expiry reads as stale
//!   before the sweep writes it.
//! - Every condition of 4.4 is checked inside the write transaction that depends on it, and an
//!   instance is in at most one active transfer by a unique index.
//! - The deprecated `/v4/account/entity-transfers` operations are the same functions ([`Via`]).

mod conditions;
mod lifecycle;

use nubis_model::event::{EventEntity, NewEvent};
use nubis_model::filter::Filter;
use nubis_model::page::{Page, PageRequest};
use nubis_model::service_transfer::{ServiceTransfer, TransferEntities, TransferStatus};
use nubis_model::{Error, FieldError, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::service_transfers::{NewTransfer, TransferRow};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};
use crate::events::event;

/// Which form of the API a call came through: the service-transfer operations or their
/// deprecated entity-transfer equivalents (the same records and rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Service,
    Entity,
}

impl Via {
    fn op(self, service: Op, entity: Op) -> Op {
        match self {
            Via::Service => service,
            Via::Entity => entity,
        }
    }
}

/// `POST /v4/account/service-transfers`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct TransferCreate {
    #[schema(required = true, value_type = TransferCreateEntities)]
    #[serde(default, deserialize_with = "nubis_model::object::object")]
    pub entities: Option<TransferCreateEntities>,
}

/// The services to transfer: only instances can be transferred.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct TransferCreateEntities {
    /// Ids of instances of the caller's account (also accepted as `linodes`).
    #[serde(alias = "linodes")]
    #[schema(required = true, schema_with = instances_schema)]
    pub instances: Option<Vec<i64>>,
}

/// The instance ids of a create request, checked for shape.
fn check_create(input: &TransferCreate) -> Result<Vec<i64>> {
    let mut p = Problems::new();
    let ids = match input.entities.as_ref().and_then(|e| e.instances.as_ref()) {
        None => {
            p.add("entities.instances", "Name the instances to transfer");
            Vec::new()
        }
        Some(v) if v.is_empty() => {
            p.add("entities.instances", "Name at least one instance to transfer");
            Vec::new()
        }
        Some(v) => {
            for (k, id) in v.iter().enumerate() {
                if v[..k].contains(id) {
                    p.add(conditions::instance_field(k), format!("Instance {id} is named twice"));
                }
            }
            v.clone()
        }
    };
    p.finish()?;
    Ok(ids)
}

/// The stored form of a token: a UUID, lower case and hyphenated; anything else names no
/// transfer.
fn canonical(token: &str) -> Result<String> {
    uuid::Uuid::parse_str(token).map(|u| u.hyphenated().to_string()).map_err(|_| Error::NotFound)
}

/// Whether `account_id` may see the transfer (spec 4.4): while pending, any account that has
/// its token; after acceptance only the two accounts; when canceled or expired only the creator.
fn visible_to(t: &TransferRow, account_id: i64, now: Timestamp) -> bool {
    match t.status.as_of(t.expiry, now) {
        TransferStatus::Pending => true,
        TransferStatus::Accepted | TransferStatus::Completed | TransferStatus::Failed => {
            account_id == t.account_id || t.receiver_account_id == Some(account_id)
        }
        TransferStatus::Canceled | TransferStatus::Stale => account_id == t.account_id,
    }
}

fn view(t: &TransferRow, account_id: i64, now: Timestamp) -> ServiceTransfer {
    ServiceTransfer {
        token: t.token.clone(),
        status: t.status.as_of(t.expiry, now),
        created: t.created,
        updated: t.updated,
        is_sender: t.account_id == account_id,
        expiry: t.expiry,
        entities: TransferEntities { instances: t.instances.clone() },
    }
}

pub(crate) fn transfer_entity(t: &TransferRow) -> EventEntity {
    EventEntity::new("entity_transfer", t.id, &t.token, format!("/v4/account/service-transfers/{}", t.token))
}

/// An event about a transfer in an account other than the actor's, or caused by nubis itself
/// (no username: one account does not learn the other's users).
pub(crate) fn account_event(
    account_id: i64,
    action: &'static str,
    t: &TransferRow,
    status: &'static str,
    message: String,
) -> NewEvent {
    NewEvent {
        account_id,
        action,
        entity: Some(transfer_entity(t)),
        secondary: None,
        username: None,
        status,
        message: Some(message),
        visible_with: None,
        subject_user_id: None,
    }
}

/// Queues a message to an account (its contact address) inside the transaction.
pub(crate) async fn mail_account(tx: &mut Tx<'_>, account_id: i64, subject: &str, body: &str) -> Result<()> {
    let Some(a) = tx.account_get(account_id).await? else { return Ok(()) };
    if a.email.is_empty() {
        return Ok(());
    }
    tx.outbox_insert(Some(account_id), &a.email, subject, body).await?;
    Ok(())
}

fn ids_text(ids: &[i64]) -> String {
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
}

impl App {
    pub async fn service_transfer_list(
        &self,
        actor: &Actor,
        via: Via,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<ServiceTransfer>> {
        self.authorize(actor, via.op(Op::ServiceTransferList, Op::EntityTransferList)).await?;
        let now = Timestamp::now();
        let (rows, total) =
            self.store.transfers_page(actor.account_id(), now, filter, page.page, page.page_size).await?;
        Ok(Page::new(rows.iter().map(|t| view(t, actor.account_id(), now)).collect(), page, total))
    }

    pub async fn service_transfer_get(&self, actor: &Actor, via: Via, token: &str) -> Result<ServiceTransfer> {
        self.authorize(actor, via.op(Op::ServiceTransferGet, Op::EntityTransferGet)).await?;
        let token = canonical(token)?;
        let now = Timestamp::now();
        let t = self.store.transfer_by_token(&token).await?.ok_or(Error::NotFound)?;
        if !visible_to(&t, actor.account_id(), now) {
            return Err(Error::NotFound);
        }
        Ok(view(&t, actor.account_id(), now))
    }

    /// Creates a pending transfer of instances of the actor's account, when every creation
    /// condition of 4.4 holds; sends the token to the account.
    pub async fn service_transfer_create(
        &self,
        actor: &Actor,
        via: Via,
        input: TransferCreate,
    ) -> Result<ServiceTransfer> {
        self.authorize(actor, via.op(Op::ServiceTransferCreate, Op::EntityTransferCreate)).await?;
        let ids = check_create(&input)?;
        let ids = &ids;
        let t = self.write(|tx| Box::pin(async move {
            let now = Timestamp::now();
            // Transfers past their expiry that hold these instances free them first.
            self.expire_in(tx, now, Some(ids.as_slice())).await?;
            let mut errors = Vec::new();
            let standing = conditions::standing(tx, actor.account_id()).await?;
            conditions::sender_problems(tx, actor.account_id(), &standing, &mut errors).await?;
            for (k, id) in ids.iter().enumerate() {
                let Some(i) = tx.instance_lock(*id, actor.account_id()).await? else {
                    errors.push(conditions::not_owned(k, *id, "your account"));
                    continue;
                };
                if tx.instance_active_transfer(i.id, now).await?.is_some() {
                    errors.push(conditions::in_other_transfer(k, &i));
                }
                conditions::instance_problems(tx, k, &i, standing.managed, &mut errors).await?;
            }
            if !errors.is_empty() {
                return Err(Error::Invalid(errors));
            }
            let token = uuid::Uuid::new_v4().hyphenated().to_string();
            let t = tx
                .transfer_insert(&NewTransfer {
                    token: &token,
                    account_id: actor.account_id(),
                    instances: ids,
                    created: now,
                    expiry: now.plus_seconds(self.config.transfers.expiry_secs),
                })
                .await
                .map_err(|e| {
                    e.unique_as(
                        "entities.instances",
                        "An instance is already in another service transfer that is pending or not yet complete",
                    )
                })?;
            tx.event_insert(&event(actor, "entity_transfer_create", transfer_entity(&t)).build()).await?;
            let body = format!(
                "A service transfer of instances {} was created by {}.\n\nToken: {}\n\nAn unrestricted user of the \
                 receiving account accepts it with POST /v4/account/service-transfers/{}/accept before {} (UTC).\n",
                ids_text(&t.instances),
                actor.username(),
                t.token,
                t.token,
                t.expiry
            );
            mail_account(tx, actor.account_id(), "Service transfer created", &body).await?;
            Ok(t)
}))
        .await?;
        Ok(view(&t, actor.account_id(), Timestamp::now()))
    }

    /// Cancels a pending transfer of the actor's account.
    pub async fn service_transfer_cancel(&self, actor: &Actor, via: Via, token: &str) -> Result<()> {
        self.authorize(actor, via.op(Op::ServiceTransferCancel, Op::EntityTransferCancel)).await?;
        let token = &canonical(token)?;
        self.write(|tx| Box::pin(async move {
            let now = Timestamp::now();
            let t = tx.transfer_lock(token).await?.ok_or(Error::NotFound)?;
            if !visible_to(&t, actor.account_id(), now) {
                return Err(Error::NotFound);
            }
            if t.account_id != actor.account_id() {
                return Err(Error::Forbidden("Only the account that created this transfer can cancel it".into()));
            }
            match t.status.as_of(t.expiry, now) {
                TransferStatus::Pending => {}
                TransferStatus::Stale => {
                    return Err(Error::refused("This transfer has expired and cannot be canceled"));
                }
                TransferStatus::Canceled => return Err(Error::refused("This transfer is already canceled")),
                TransferStatus::Accepted | TransferStatus::Completed | TransferStatus::Failed => {
                    return Err(Error::refused("This transfer has been accepted and cannot be canceled"));
                }
            }
            tx.transfer_end(t.id, TransferStatus::Canceled, now).await?;
            tx.event_insert(&event(actor, "entity_transfer_cancel", transfer_entity(&t)).build()).await?;
            let body = format!(
                "The service transfer {} of instances {} was canceled by {}; its token can no longer be accepted.\n",
                t.token,
                ids_text(&t.instances),
                actor.username()
            );
            mail_account(tx, t.account_id, "Service transfer canceled", &body).await?;
            Ok(())
}))
        .await?;
        Ok(())
    }

    /// Accepts a pending transfer into the actor's account when every acceptance condition of
    /// 4.4 holds; the instances move shortly after, asynchronously.
    pub async fn service_transfer_accept(&self, actor: &Actor, via: Via, token: &str) -> Result<()> {
        self.authorize(actor, via.op(Op::ServiceTransferAccept, Op::EntityTransferAccept)).await?;
        let token = &canonical(token)?;
        self.write(|tx| {
            Box::pin(async move {
                let now = Timestamp::now();
                let t = tx.transfer_lock(token).await?.ok_or(Error::NotFound)?;
                if !visible_to(&t, actor.account_id(), now) {
                    return Err(Error::NotFound);
                }
                if t.account_id == actor.account_id() {
                    return Err(Error::refused("Users of the account that created this transfer cannot accept it"));
                }
                match t.status.as_of(t.expiry, now) {
                    TransferStatus::Pending => {}
                    s => {
                        return Err(Error::refused(format!(
                            "Only a pending transfer can be accepted; this one is {}",
                            s.name()
                        )));
                    }
                }
                let mut errors: Vec<FieldError> = Vec::new();
                conditions::receiver_problems(tx, actor.account_id(), &mut errors).await?;
                if tx.account_tos_violation(t.account_id).await? {
                    errors.push(FieldError::general(
                        "The account that created this transfer has an active terms-of-service violation",
                    ));
                }
                let standing = conditions::standing(tx, t.account_id).await?;
                if standing.limited {
                    // Its services were stopped and their billing ended with the account.
                    errors.push(FieldError::general("The account that created this transfer is cancelled"));
                }
                for (k, id) in t.instances.iter().enumerate() {
                    let Some(i) = tx.instance_lock(*id, t.account_id).await? else {
                        errors.push(conditions::not_owned(k, *id, "the account that created this transfer"));
                        continue;
                    };
                    conditions::instance_problems(tx, k, &i, standing.managed, &mut errors).await?;
                    if tx.instance_label_taken(actor.account_id(), &i.label).await? {
                        errors.push(conditions::label_taken(k, &i));
                    }
                }
                if !errors.is_empty() {
                    return Err(Error::Invalid(errors));
                }
                let msg = format!("Transfer of instances {} accepted; moving them", ids_text(&t.instances));
                let mine = tx
                    .event_insert(
                        &event(actor, "entity_transfer_accept", transfer_entity(&t))
                            .status("started")
                            .message(&msg)
                            .build(),
                    )
                    .await?;
                let theirs =
                    tx.event_insert(&account_event(t.account_id, "entity_transfer_accept", &t, "started", msg)).await?;
                tx.transfer_accept(t.id, actor.account_id(), theirs, mine, now).await?;
                let body = format!(
                    "The service transfer {} of instances {} was accepted. The instances move to the receiving account \
                 shortly; billing for them moves with them.\n",
                    t.token,
                    ids_text(&t.instances)
                );
                mail_account(tx, t.account_id, "Service transfer accepted", &body).await?;
                mail_account(tx, actor.account_id(), "Service transfer accepted", &body).await?;
                Ok(())
            })
        })
        .await?;
        let app = self.clone();
        let token = token.clone();
        let delay = std::time::Duration::from_millis(self.config.transfers.complete_after_ms);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if let Err(e) = app.transfer_complete(&token).await {
                tracing::warn!(error = %e, "completing a service transfer failed; the sweep retries it");
            }
        });
        Ok(())
    }
}

/// At least one instance, none twice.
fn instances_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(serde_json::json!({
        "type": "array", "minItems": 1, "uniqueItems": true, "items": {"type": "integer", "format": "int64"}
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(status: TransferStatus, receiver: Option<i64>) -> TransferRow {
        let t = Timestamp::parse("2026-01-01T00:00:00").unwrap();
        TransferRow {
            id: 1,
            token: "0f6a3c2e-1d2b-4c5d-8e9f-a0b1c2d3e4f5".into(),
            account_id: 10,
            receiver_account_id: receiver,
            status,
            created: t,
            updated: t,
            expiry: t.plus_seconds(86_400),
            accepted: None,
            completed: None,
            sender_event_id: None,
            receiver_event_id: None,
            instances: vec![1, 2],
        }
    }

    #[test]
    fn visibility_follows_the_status() {
        let early = Timestamp::parse("2026-01-01T01:00:00").unwrap();
        let late = Timestamp::parse("2026-01-03T00:00:00").unwrap();
        let pending = row(TransferStatus::Pending, None);
        assert!(visible_to(&pending, 10, early) && visible_to(&pending, 99, early));
        // Past its expiry a pending transfer is stale: only its creator sees it.
        assert!(visible_to(&pending, 10, late) && !visible_to(&pending, 99, late));
        for s in [TransferStatus::Accepted, TransferStatus::Completed, TransferStatus::Failed] {
            let t = row(s, Some(20));
            assert!(visible_to(&t, 10, late) && visible_to(&t, 20, late) && !visible_to(&t, 99, early));
        }
        let canceled = row(TransferStatus::Canceled, None);
        assert!(visible_to(&canceled, 10, early) && !visible_to(&canceled, 99, early));
        assert_eq!(view(&pending, 99, late).status, TransferStatus::Stale);
        assert!(!view(&pending, 99, early).is_sender);
    }

    #[test]
    fn tokens_are_uuids_in_any_case() {
        let t = "0F6A3C2E-1D2B-4C5D-8E9F-A0B1C2D3E4F5";
        assert_eq!(canonical(t).unwrap(), t.to_lowercase());
        assert_eq!(canonical("1"), Err(Error::NotFound));
    }

    #[test]
    fn a_create_names_each_instance_once() {
        let input = |v: Option<Vec<i64>>| TransferCreate { entities: Some(TransferCreateEntities { instances: v }) };
        assert_eq!(check_create(&input(Some(vec![3, 4]))).unwrap(), vec![3, 4]);
        let Err(Error::Invalid(e)) = check_create(&input(Some(vec![3, 4, 3]))) else { panic!("accepted a duplicate") };
        assert_eq!(e[0].field.as_deref(), Some("entities.instances[2]"));
        assert!(check_create(&input(Some(vec![]))).is_err());
        assert!(check_create(&input(None)).is_err());
        assert!(check_create(&TransferCreate::default()).is_err());
    }
}
