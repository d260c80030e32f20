//! The two generations of instance interfaces, and the account setting
//! `interfaces_for_new_linodes` that says which a new instance gets.

/// Interfaces on configuration profiles.
pub(crate) const LEGACY: &str = "legacy_config";
/// Linode interfaces, on the instance itself.
pub(crate) const LINODE: &str = "linode";

/// The values of `interfaces_for_new_linodes`.
pub(crate) const SETTINGS: [&str; 4] = [
    "legacy_config_only",
    "legacy_config_default_but_linode_allowed",
    "linode_default_but_legacy_config_allowed",
    "linode_only",
];

/// The setting of an account that never set it: new instances get profile interfaces unless
/// they ask for Linode interfaces.
pub(crate) const DEFAULT_SETTING: &str = "legacy_config_default_but_linode_allowed";

/// The generation a new instance gets under `setting` when it asks for `requested` (or nothing),
/// or the reason it may not have it.
pub(crate) fn generation_for(setting: &str, requested: Option<&str>) -> Result<&'static str, String> {
    let (default, allows_legacy, allows_linode) = match setting {
        "legacy_config_only" => (LEGACY, true, false),
        "linode_default_but_legacy_config_allowed" => (LINODE, true, true),
        "linode_only" => (LINODE, false, true),
        _ => (LEGACY, true, true),
    };
    match requested {
        None => Ok(default),
        Some(LEGACY) if allows_legacy => Ok(LEGACY),
        Some(LINODE) if allows_linode => Ok(LINODE),
        Some(g @ (LEGACY | LINODE)) => {
            Err(format!("The account's interfaces_for_new_linodes setting ({setting}) does not allow {g} interfaces"))
        }
        Some(_) => Err(format!("Must be {LEGACY} or {LINODE}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_account_setting_decides_and_limits_the_generation() {
        assert_eq!(generation_for(DEFAULT_SETTING, None), Ok(LEGACY));
        assert_eq!(generation_for(DEFAULT_SETTING, Some(LINODE)), Ok(LINODE));
        assert!(generation_for("legacy_config_only", Some(LINODE)).is_err());
        assert_eq!(generation_for("linode_only", None), Ok(LINODE));
        assert!(generation_for("linode_only", Some(LEGACY)).is_err());
        assert_eq!(generation_for("linode_default_but_legacy_config_allowed", Some(LEGACY)), Ok(LEGACY));
        assert!(generation_for(DEFAULT_SETTING, Some("v3")).is_err());
    }
}
