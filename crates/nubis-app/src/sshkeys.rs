//! The profile's public SSH keys (`/v4/profile/sshkeys`): each user's own, named by
//! `authorized_users` when an image is deployed (instance create, rebuild, disk create), whose
//! keys are then installed for root with the `authorized_keys` given.

use nubis_model::filter::Filter;
use nubis_model::instance_profile::SshKey;
use nubis_model::page::{Page, PageRequest};
use nubis_model::validate::len_between;
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::Tx;
use nubis_store::sshkeys::SshKeyRow;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op};

/// `POST /v4/profile/sshkeys`.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct SshKeyCreate {
    /// 0-64 characters.
    #[schema(schema_with = label_schema)]
    pub label: Option<String>,
    /// An OpenSSH public key: `ssh-rsa`, `ssh-dss`, `ecdsa-sha2-nistp256/384/521`, `ssh-ed25519`,
    /// `sk-ecdsa-sha2-nistp256@openssh.com` or `sk-ssh-ed25519@openssh.com`, then the base64 key,
    /// then an optional comment.
    #[schema(required = true, value_type = String)]
    pub ssh_key: Option<String>,
}

/// `PUT /v4/profile/sshkeys/{ssh_key_id}`: only the label changes.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct SshKeyUpdate {
    #[schema(schema_with = label_schema)]
    pub label: Option<String>,
}

const LABEL_MAX: usize = 64;

fn label_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{or_null, schema, text};
    schema(or_null(text(0, LABEL_MAX)))
}

/// The key types the reference accepts.
const KEY_TYPES: &[&str] = &[
    "ssh-rsa",
    "ssh-dss",
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "sk-ssh-ed25519@openssh.com",
];

/// An OpenSSH public key line: a known type, then base64 whose decoded blob begins with the
/// same type name (the wire format's first string), then an optional comment.
pub(crate) fn ssh_key_ok(key: &str) -> bool {
    use base64::Engine;
    let mut parts = key.split_whitespace();
    let (Some(kind), Some(body)) = (parts.next(), parts.next()) else { return false };
    if !KEY_TYPES.contains(&kind) {
        return false;
    }
    let Ok(blob) = base64::engine::general_purpose::STANDARD.decode(body) else { return false };
    let Some(len) = blob.get(..4).map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize) else {
        return false;
    };
    blob.get(4..4 + len).is_some_and(|name| name == kind.as_bytes()) && blob.len() > 4 + len
}

pub(crate) const BAD_KEY: &str = "Must be an OpenSSH public key (ssh-rsa, ssh-dss, ecdsa-sha2-nistp*, ssh-ed25519 or \
                                  sk-*), base64-encoded, with an optional comment";

fn view(k: &SshKeyRow) -> SshKey {
    SshKey { id: k.id, label: k.label.clone(), ssh_key: k.ssh_key.clone(), created: k.created }
}

fn check_label(p: &mut Problems, label: &str) {
    p.check(len_between(label, 0, LABEL_MAX), "label", "Must be at most 64 characters");
}

impl App {
    pub async fn ssh_key_list(&self, actor: &Actor, filter: &Filter, page: PageRequest) -> Result<Page<SshKey>> {
        self.authorize(actor, Op::SshKeyList).await?;
        let (rows, total) = self.store.ssh_keys_page(actor.user_id(), filter, page.page, page.page_size).await?;
        Ok(Page::new(rows.iter().map(view).collect(), page, total))
    }

    pub async fn ssh_key_get(&self, actor: &Actor, id: i64) -> Result<SshKey> {
        self.authorize(actor, Op::SshKeyGet).await?;
        Ok(view(&self.store.ssh_key_get(actor.user_id(), id).await?.ok_or(Error::NotFound)?))
    }

    pub async fn ssh_key_create(&self, actor: &Actor, input: SshKeyCreate) -> Result<SshKey> {
        self.authorize(actor, Op::SshKeyCreate).await?;
        let mut p = Problems::new();
        let label = input.label.unwrap_or_default();
        check_label(&mut p, &label);
        let key = match input.ssh_key.as_deref().map(str::trim) {
            None | Some("") => {
                p.add("ssh_key", "An SSH public key is required");
                String::new()
            }
            Some(k) => {
                p.check(ssh_key_ok(k), "ssh_key", BAD_KEY);
                k.to_string()
            }
        };
        p.finish()?;
        let (label, key) = (&label, &key);
        let row = self
            .write(|tx| Box::pin(async move { tx.ssh_key_insert(actor.user_id(), label, key, Timestamp::now()).await }))
            .await?;
        Ok(view(&row))
    }

    pub async fn ssh_key_update(&self, actor: &Actor, id: i64, input: SshKeyUpdate) -> Result<SshKey> {
        self.authorize(actor, Op::SshKeyUpdate).await?;
        let input = &input;
        let row = self
            .write(|tx| {
                Box::pin(async move {
                    let k = tx.ssh_key_lock(actor.user_id(), id).await?.ok_or(Error::NotFound)?;
                    let Some(label) = &input.label else { return Ok(k) };
                    let mut p = Problems::new();
                    check_label(&mut p, label);
                    p.finish()?;
                    tx.ssh_key_set_label(id, label).await
                })
            })
            .await?;
        Ok(view(&row))
    }

    pub async fn ssh_key_delete(&self, actor: &Actor, id: i64) -> Result<()> {
        self.authorize(actor, Op::SshKeyDelete).await?;
        self.write(|tx| {
            Box::pin(async move {
                tx.ssh_key_lock(actor.user_id(), id).await?.ok_or(Error::NotFound)?;
                tx.ssh_key_delete(id).await
            })
        })
        .await
    }
}

/// The public keys a deployment installs for root: the `authorized_keys` given, then the profile
/// keys of every user `authorized_users` names (users of the account, read inside the
/// transaction; an unknown one is a 400 on its field). Keys appear once each, in that order.
pub(crate) async fn authorized_keys(
    tx: &mut Tx<'_>,
    account_id: i64,
    keys: &[String],
    users: &[String],
) -> Result<Vec<String>> {
    let known = tx.usernames_of_account(account_id, users).await?;
    let mut p = Problems::new();
    for (i, u) in users.iter().enumerate() {
        p.check(known.contains(u), format!("authorized_users[{i}]"), "User not found");
    }
    p.finish()?;
    let mut out: Vec<String> = Vec::new();
    for k in keys.iter().map(|k| k.trim().to_string()) {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    for (_, k) in tx.ssh_keys_of_usernames(account_id, users).await? {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    Ok(out)
}

/// Checks `authorized_keys` of a request (before any transaction).
pub(crate) fn check_keys(p: &mut Problems, keys: Option<&Vec<String>>) {
    for (i, k) in keys.into_iter().flatten().enumerate() {
        p.check(ssh_key_ok(k.trim()), format!("authorized_keys[{i}]"), BAD_KEY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_must_be_openssh_public_keys() {
        // ssh-ed25519 with 32 zero bytes as the key.
        let ok = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA user@host";
        assert!(ssh_key_ok(ok));
        assert!(ssh_key_ok(ok.trim_end_matches(" user@host")));
        // The type named does not match the blob's.
        assert!(!ssh_key_ok(&ok.replacen("ssh-ed25519", "ssh-rsa", 1)));
        assert!(!ssh_key_ok("ssh-ed25519 not-base64!"));
        assert!(!ssh_key_ok("ssh-foo AAAA"));
        assert!(!ssh_key_ok(""));
    }
}
