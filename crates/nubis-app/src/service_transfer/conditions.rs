//! The conditions of spec 4.4 that a transfer's accounts and instances must meet, at creation,
//! at acceptance and again at completion. Each unmet condition is one error that names what is
//! wrong and the instance it concerns; all of them are reported at once.

use nubis_model::{FieldError, Result};
use nubis_store::Tx;
use nubis_store::instances::InstanceRow;

/// What the transfer rules need to know about an account's billing (the billing area's
/// standing and settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Standing {
    pub has_payment_method: bool,
    pub past_due: bool,
    /// The account is under a managed service (all its instances are then "assigned to" it).
    pub managed: bool,
    /// A limitation of the account: it is cancelled.
    pub limited: bool,
}

/// The one place that reads an account's billing standing, inside the transaction.
pub(crate) async fn standing(tx: &mut Tx<'_>, account_id: i64) -> Result<Standing> {
    let s = crate::billing::standing::account_standing(tx, account_id).await?;
    let b = tx.billing_lock(account_id).await?;
    Ok(Standing {
        has_payment_method: s.has_payment_method,
        past_due: s.past_due,
        managed: b.managed,
        limited: b.canceled.is_some(),
    })
}

/// `entities.instances[k]`: the field of the k-th instance of a transfer.
pub(crate) fn instance_field(k: usize) -> String {
    format!("entities.instances[{k}]")
}

fn name(i: &InstanceRow) -> String {
    format!("Instance '{}' ({})", i.label, i.id)
}

/// The conditions of the creating account (whose standing is `s`): no past-due balance, no
/// terms-of-service violation.
pub(crate) async fn sender_problems(
    tx: &mut Tx<'_>,
    account_id: i64,
    s: &Standing,
    out: &mut Vec<FieldError>,
) -> Result<()> {
    if s.past_due {
        out.push(FieldError::general("The account that creates the transfer has a past-due balance"));
    }
    if tx.account_tos_violation(account_id).await? {
        out.push(FieldError::general("The account that creates the transfer has an active terms-of-service violation"));
    }
    Ok(())
}

/// The conditions of the accepting account: a payment method, no past-due balance, no other
/// limitation, no terms-of-service violation.
pub(crate) async fn receiver_problems(tx: &mut Tx<'_>, account_id: i64, out: &mut Vec<FieldError>) -> Result<()> {
    let s = standing(tx, account_id).await?;
    if !s.has_payment_method {
        out.push(FieldError::general("Your account needs a registered payment method to accept a transfer"));
    }
    if s.past_due {
        out.push(FieldError::general("Your account has a past-due balance"));
    }
    if s.limited {
        out.push(FieldError::general("Your account is limited (cancelled or inactive) and cannot receive services"));
    }
    if tx.account_tos_violation(account_id).await? {
        out.push(FieldError::general("Your account has an active terms-of-service violation"));
    }
    Ok(())
}

/// The conditions of one instance (the k-th of the transfer) that the spec lists for creation
/// and acceptance: no balancer, firewall, VLAN, VPC, managed service, shared address or IPv6
/// range. nubis has no block-storage volumes, so "no attached volume" always holds.
pub(crate) async fn instance_problems(
    tx: &mut Tx<'_>,
    k: usize,
    i: &InstanceRow,
    managed: bool,
    out: &mut Vec<FieldError>,
) -> Result<()> {
    let field = instance_field(k);
    let b = tx.instance_transfer_blockers(i.id).await?;
    let mut add = |reason: String| out.push(FieldError::new(field.clone(), reason));
    for (id, label) in &b.balancers {
        add(format!(
            "{} is a back-end node of load balancer '{label}' ({id}); remove it from the balancer first",
            name(i)
        ));
    }
    for (id, label) in &b.firewalls {
        add(format!("{} is a device of firewall '{label}' ({id}); remove it from the firewall first", name(i)));
    }
    for label in &b.vlans {
        add(format!("{} has an interface on VLAN '{label}'; remove that interface first", name(i)));
    }
    for vpc in &b.vpcs {
        add(format!("{} has an interface on VPC {vpc}; remove that interface first", name(i)));
    }
    if managed {
        add(format!("{} is under a managed service", name(i)));
    }
    for a in &b.shared {
        add(format!("{} shares address {a} with another instance; stop sharing it first", name(i)));
    }
    for r in &b.ranges {
        add(format!("{} has IPv6 range {r} assigned; delete or move the range first", name(i)));
    }
    Ok(())
}

pub(crate) fn not_owned(k: usize, id: i64, whose: &str) -> FieldError {
    FieldError::new(instance_field(k), format!("Instance {id} is not an instance of {whose}"))
}

pub(crate) fn in_other_transfer(k: usize, i: &InstanceRow) -> FieldError {
    FieldError::new(
        instance_field(k),
        format!("{} is already in another service transfer that is pending or not yet complete", name(i)),
    )
}

pub(crate) fn label_taken(k: usize, i: &InstanceRow) -> FieldError {
    FieldError::new(
        instance_field(k),
        format!(
            "{}: the receiving account already has an instance labelled '{}'; rename one of them first",
            name(i),
            i.label
        ),
    )
}
