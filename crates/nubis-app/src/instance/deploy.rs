//! Deploying an image to an instance (create, rebuild): the disks it gets (the image's disk and a
//! swap disk, sized to fit the plan), the configuration profile that boots them, the root
//! password's argon2 hash and the public keys installed for root. Also the kernels a profile may
//! name and the checks shared by every request that deploys an image.

use nubis_model::catalog::Image;
use nubis_model::instance_profile::{Device, Devices, Helpers};
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::configs::{ConfigRow, ConfigValues};
use nubis_store::disks::{DiskRow, NewDisk};

/// The kernels a profile may boot (the reference's common ones; `linode/grub2` boots the
/// distribution's own kernel).
pub(crate) const KERNELS: &[&str] = &[
    "linode/grub2",
    "linode/latest-64bit",
    "linode/latest-32bit",
    "linode/direct-disk",
    "linode/grub-legacy",
    "linode/pv-grub_x86_64",
    "linode/pv-grub_x86_32",
];

/// The kernel of a profile when none is named, and of the profile an image deployment makes.
pub(crate) const DEFAULT_KERNEL: &str = "linode/latest-64bit";
pub(crate) const IMAGE_KERNEL: &str = "linode/grub2";

/// Swap disk of an image deployment when `swap_size` is not given, MB.
pub(crate) const DEFAULT_SWAP_MB: i64 = 512;
/// The range of `swap_size`, MB.
pub(crate) const SWAP: (i64, i64) = (0, 1_048_576);

pub(crate) fn check_kernel(p: &mut Problems, field: &str, kernel: &str) {
    p.check(KERNELS.contains(&kernel), field, format!("Kernel not found; one of: {}", KERNELS.join(", ")));
}

/// The reference's message for a weak password.
pub(crate) const WEAK_PASSWORD: &str = "Password does not meet strength requirement: use 7-128 characters with at least \
                                        three of lowercase letters, uppercase letters, digits and other characters";

/// The root password's rule: 7..128 characters (the reference's `minLength`/`maxLength`) and a
/// strength requirement, here at least three of the four character classes.
pub(crate) fn root_pass_ok(pw: &str) -> bool {
    let n = pw.chars().count();
    let classes = [
        pw.chars().any(|c| c.is_lowercase()),
        pw.chars().any(|c| c.is_uppercase()),
        pw.chars().any(|c| c.is_ascii_digit()),
        pw.chars().any(|c| !c.is_alphanumeric()),
    ];
    (7..=128).contains(&n) && classes.iter().filter(|x| **x).count() >= 3
}

/// An image deployment needs a way in for root: a password, or keys (`authorized_keys`, or the
/// profile keys of `authorized_users`). A password given must be strong.
pub(crate) fn check_root_access(
    p: &mut Problems,
    root_pass: Option<&str>,
    keys: Option<&Vec<String>>,
    users: Option<&Vec<String>>,
    field: &str,
) {
    match root_pass {
        Some(pw) => p.check(root_pass_ok(pw), field, WEAK_PASSWORD),
        None if keys.is_some_and(|k| !k.is_empty()) || users.is_some_and(|u| !u.is_empty()) => {}
        None => p.add(
            field,
            format!("{field} is required when deploying an image without authorized_keys or authorized_users"),
        ),
    }
}

/// The argon2id hash (PHC string) of a password; the password itself is never stored.
pub(crate) fn hash_password(pw: &str) -> Result<String> {
    use argon2::{Argon2, PasswordHash, PasswordHasher};
    let h: PasswordHash =
        Argon2::default().hash_password(pw.as_bytes()).map_err(|e| Error::internal(format!("argon2: {e}")))?;
    Ok(h.to_string())
}

/// [`hash_password`] off the async threads (argon2 is slow on purpose); `None` stays `None`.
pub(crate) async fn hash_opt(pw: Option<&str>) -> Result<Option<String>> {
    let Some(pw) = pw.map(str::to_string) else { return Ok(None) };
    let h = tokio::task::spawn_blocking(move || hash_password(&pw))
        .await
        .map_err(|e| Error::internal(format!("password hashing: {e}")))??;
    Ok(Some(h))
}

/// What an image deployment writes.
pub(crate) struct Deployment<'a> {
    pub image: &'a Image,
    pub root_pass_hash: Option<&'a str>,
    /// Installed for root.
    pub keys: &'a [String],
    /// The swap disk, MB (0: none).
    pub swap_mb: i64,
    /// The image's disk, MB; the rest of the plan when `None`.
    pub boot_size: Option<i64>,
    /// The plan's disk, MB.
    pub plan_disk_mb: i64,
    /// The profile's kernel.
    pub kernel: &'a str,
    /// The profile's Network Helper.
    pub network_helper: bool,
}

/// The sizes of the image's disk and the swap disk, or the reason they do not fit the plan
/// (`field` names the request field at fault).
pub(crate) fn deployment_sizes(
    image: &Image,
    plan_disk_mb: i64,
    swap_mb: i64,
    boot_size: Option<i64>,
) -> std::result::Result<(i64, i64), (&'static str, String)> {
    let main = boot_size.unwrap_or(plan_disk_mb - swap_mb);
    if let Some(b) = boot_size
        && b + swap_mb > plan_disk_mb
    {
        return Err((
            "boot_size",
            format!("The disks ({b} MB and {swap_mb} MB of swap) exceed the plan's {plan_disk_mb} MB"),
        ));
    }
    if main < image.size {
        let field = if boot_size.is_some() { "boot_size" } else { "swap_size" };
        return Err((field, format!("The image {} needs a disk of at least {} MB", image.id, image.size)));
    }
    Ok((main, swap_mb))
}

/// Writes the image's disk, the swap disk and a profile that boots them, inside the
/// transaction; returns the profile. The sizes were checked by [`deployment_sizes`].
pub(crate) async fn deploy_image(
    tx: &mut Tx<'_>,
    instance_id: i64,
    d: &Deployment<'_>,
    now: Timestamp,
) -> Result<(ConfigRow, Vec<DiskRow>)> {
    let (main, swap) =
        deployment_sizes(d.image, d.plan_disk_mb, d.swap_mb, d.boot_size).map_err(|(f, r)| Error::invalid(f, r))?;
    let label = format!("{} Disk", d.image.label);
    let main = tx
        .disk_insert(&NewDisk {
            instance_id,
            label: &truncated(&label, 48),
            size: main,
            filesystem: "ext4",
            status: "ready",
            image: Some(&d.image.id),
            root_pass_hash: d.root_pass_hash,
            authorized_keys: d.keys,
            created: now,
        })
        .await?;
    let mut devices = Devices { sda: Some(Device { disk_id: Some(main.id), volume_id: None }), ..Default::default() };
    let mut disks = vec![main];
    if swap > 0 {
        let s = tx
            .disk_insert(&NewDisk {
                instance_id,
                label: &format!("{swap} MB Swap Image"),
                size: swap,
                filesystem: "swap",
                status: "ready",
                image: None,
                root_pass_hash: None,
                authorized_keys: &[],
                created: now,
            })
            .await?;
        devices.sdb = Some(Device { disk_id: Some(s.id), volume_id: None });
        disks.push(s);
    }
    let helpers = Helpers::defaults(d.network_helper);
    let config = tx
        .config_insert(
            instance_id,
            &ConfigValues {
                label: &truncated(&format!("My {} Disk Profile", d.image.label), 48),
                kernel: d.kernel,
                comments: None,
                memory_limit: 0,
                root_device: "/dev/sda",
                run_level: "default",
                virt_mode: "paravirt",
                helpers: &helpers,
                devices: &devices,
            },
            now,
        )
        .await?;
    Ok((config, disks))
}

/// A profile without devices (it holds the interfaces of an instance created without an image).
pub(crate) async fn empty_profile(
    tx: &mut Tx<'_>,
    instance_id: i64,
    network_helper: bool,
    now: Timestamp,
) -> Result<ConfigRow> {
    tx.config_insert(
        instance_id,
        &ConfigValues {
            label: "My Profile",
            kernel: DEFAULT_KERNEL,
            comments: None,
            memory_limit: 0,
            root_device: "/dev/sda",
            run_level: "default",
            virt_mode: "paravirt",
            helpers: &Helpers::defaults(network_helper),
            devices: &Devices::default(),
        },
        now,
    )
    .await
}

fn truncated(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_passwords_need_length_and_three_character_classes() {
        for ok in ["aComplexP@ssword", "Abcdef1", "abc-DEF-123", "пароль1Z!"] {
            assert!(root_pass_ok(ok), "{ok}");
        }
        for bad in
            ["Abc1!", "password", "password123", "PASSWORD!!", "aaaaaaaaaaaa", &format!("Aa1{}", "x".repeat(126))]
        {
            assert!(!root_pass_ok(bad), "{bad}");
        }
    }

    #[test]
    fn hashes_are_argon2id_and_salted() {
        let a = hash_password("aComplexP@ssword").unwrap();
        let b = hash_password("aComplexP@ssword").unwrap();
        assert!(a.starts_with("$argon2id$"), "{a}");
        assert_ne!(a, b);
        assert!(!a.contains("aComplexP@ssword"));
    }

    fn image(size: i64) -> Image {
        let t = Timestamp::parse("2024-01-01T00:00:00").unwrap();
        Image {
            id: "linode/debian12".into(),
            label: "Debian 12".into(),
            description: None,
            created: t,
            updated: t,
            created_by: "linode".into(),
            deprecated: false,
            is_public: true,
            size,
            kind: "manual".into(),
            vendor: None,
            status: "available".into(),
            expiry: None,
            eol: None,
            capabilities: Vec::new(),
            regions: Vec::new(),
            tags: Vec::new(),
            total_size: size,
        }
    }

    #[test]
    fn deployed_disks_fill_the_plan_and_must_fit_it() {
        assert_eq!(deployment_sizes(&image(1500), 25600, 512, None), Ok((25088, 512)));
        assert_eq!(deployment_sizes(&image(1500), 25600, 0, Some(2000)), Ok((2000, 0)));
        assert_eq!(deployment_sizes(&image(1500), 25600, 512, Some(25600)).unwrap_err().0, "boot_size");
        assert_eq!(deployment_sizes(&image(1500), 25600, 512, Some(1000)).unwrap_err().0, "boot_size");
        assert_eq!(deployment_sizes(&image(30000), 25600, 512, None).unwrap_err().0, "swap_size");
    }
}
