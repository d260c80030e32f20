//! Maintenance policies (`/v4/maintenance/policies`) and the account's choice among them
//! (`maintenance_policy` of the account settings), as the hosted API has them.

use nubis_model::Result;
use nubis_model::catalog::MaintenancePolicy;

use crate::App;
use crate::auth::{Actor, Op};

/// The policy of an account that never chose one.
pub const DEFAULT_POLICY: &str = "linode/migrate";

/// The hosted API's two public policies.
pub fn policies() -> Vec<MaintenancePolicy> {
    vec![
        MaintenancePolicy {
            slug: "linode/migrate".into(),
            label: "Migrate".into(),
            description: "Migrates the Linode to a new host while it remains fully operational. Recommended for \
                          maximizing availability."
                .into(),
            kind: "migrate".into(),
            notification_period_sec: 3600,
            is_default: true,
        },
        MaintenancePolicy {
            slug: "linode/power_off_on".into(),
            label: "Power Off/Power On".into(),
            description: "Powers off the Linode at the start of the maintenance event and reboots it once the \
                          maintenance finishes. Recommended for maximizing performance."
                .into(),
            kind: "power_off_on".into(),
            notification_period_sec: 1800,
            is_default: false,
        },
    ]
}

/// Why `slug` cannot be chosen, if it cannot: the hosted API's words for a slug that is not
/// `<namespace>/<name>`, and a slug of no policy.
pub(crate) fn policy_problem(slug: &str) -> Option<String> {
    let well_formed = slug.split_once('/').is_some_and(|(a, b)| !a.is_empty() && !b.is_empty() && !b.contains('/'));
    if !well_formed {
        return Some("Unsupported maintenance policy slug format.".into());
    }
    if !policies().iter().any(|p| p.slug == slug) {
        let slugs: Vec<String> = policies().into_iter().map(|p| p.slug).collect();
        return Some(format!("Maintenance policy not found: must be one of {}", slugs.join(", ")));
    }
    None
}

impl App {
    pub async fn maintenance_policy_list(&self, actor: &Actor) -> Result<Vec<MaintenancePolicy>> {
        self.authorize(actor, Op::MaintenancePolicyList).await?;
        Ok(policies())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_checked_for_form_then_existence() {
        assert_eq!(policy_problem("linode/migrate"), None);
        assert_eq!(policy_problem("linode/power_off_on"), None);
        assert_eq!(policy_problem("invalid_policy").as_deref(), Some("Unsupported maintenance policy slug format."));
        assert!(policy_problem("linode/").is_some());
        assert!(policy_problem("linode/nothing").unwrap().starts_with("Maintenance policy not found"));
        assert_eq!(policies().iter().filter(|p| p.is_default).count(), 1);
        assert!(policies().iter().any(|p| p.slug == DEFAULT_POLICY && p.is_default));
    }
}
