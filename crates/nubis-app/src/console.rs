//! The web console's registration with the authorization server: the console is a public OAuth
//! client (PKCE, no secret) with a fixed client ID, kept in the account of the first owner
//! `admin` and pointed at the console's callback each time `nubis serve` needs it.

use nubis_model::{Error, Result, Timestamp};
use nubis_store::oauth::NewClient;

use crate::auth::hash_secret_hex;
use crate::{App, retry};

/// The console's OAuth client ID.
pub const CONSOLE_CLIENT_ID: &str = "nubis-console";
const CONSOLE_CLIENT_LABEL: &str = "nubis console";

impl App {
    /// The console's base path from the configuration, normalized: empty for the site's root,
    /// otherwise `/x` (no trailing slash).
    pub fn console_base_path(&self) -> String {
        let p = self.config.console.base_path.trim_matches('/');
        if p.is_empty() { String::new() } else { format!("/{p}") }
    }

    /// Makes sure the console's public client exists, is public and redirects to
    /// `redirect_uri`; returns its client ID. The client belongs to the account of `admin`.
    pub async fn console_client_ensure(&self, redirect_uri: &str) -> Result<String> {
        if let Some((c, _)) = self.store.oauth_client_get(CONSOLE_CLIENT_ID).await?
            && c.public
            && c.redirect_uri == redirect_uri
        {
            return Ok(c.id);
        }
        let owner = self
            .store
            .user_by_username(crate::admin::BOOTSTRAP_USERNAME)
            .await?
            .ok_or_else(|| Error::invalid("client_id", "The console needs the account owner 'admin'"))?;
        // Public clients have no secret; the column holds the hash of a value nobody knows.
        let secret_hash = hash_secret_hex(&crate::auth::new_secret());
        let r = retry(|| async {
            let mut tx = self.store.begin().await?;
            match self.store.oauth_client_get(CONSOLE_CLIENT_ID).await? {
                Some(_) => {
                    tx.oauth_client_update(CONSOLE_CLIENT_ID, None, Some(redirect_uri), Some(true)).await?;
                }
                None => {
                    tx.oauth_client_insert(&NewClient {
                        id: CONSOLE_CLIENT_ID,
                        account_id: owner.account_id,
                        label: CONSOLE_CLIENT_LABEL,
                        redirect_uri,
                        public: true,
                        secret_hash: &secret_hash,
                        created: Timestamp::now(),
                    })
                    .await?;
                }
            }
            tx.commit().await
        })
        .await;
        match r {
            // Another request registered it at the same moment.
            Ok(()) | Err(Error::Unique(_)) => Ok(CONSOLE_CLIENT_ID.to_string()),
            Err(e) => Err(e),
        }
    }
}
