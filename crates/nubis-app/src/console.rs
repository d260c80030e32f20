//! The web console's registration with the authorization server: the console is a public OAuth
//! client (PKCE, no secret) with a fixed client ID. It is a system client: it belongs to no
//! account, is defined by the configuration rather than stored, and its only redirect URI is the
//! console's own callback (`<public URL><console base path>/callback`). No account's OAuth-client
//! operations can list, read or change it (they answer 404 as for an unknown ID), so nobody can
//! point it elsewhere, delete it or reset its secret.

use nubis_model::Result;
use nubis_model::signin::{OAuthClient, REDACTED};

use crate::App;

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

    /// Where the authorization server sends the browser back to the console.
    pub fn console_redirect_uri(&self) -> String {
        format!("{}{}/callback", self.public_url(), self.console_base_path())
    }

    /// A system client of nubis itself (the console's, while the console is served), or `None`
    /// for any other ID.
    pub fn system_client(&self, id: &str) -> Option<OAuthClient> {
        (id == CONSOLE_CLIENT_ID && self.config.console.enabled).then(|| OAuthClient {
            id: CONSOLE_CLIENT_ID.to_string(),
            label: CONSOLE_CLIENT_LABEL.to_string(),
            redirect_uri: self.console_redirect_uri(),
            public: true,
            status: "active".to_string(),
            secret: REDACTED.to_string(),
            thumbnail_url: None,
            account_id: 0,
            has_thumbnail: false,
        })
    }

    /// The client an authorization or token request names: a system client, or a client of
    /// some account with the hash of its secret.
    pub(crate) async fn oauth_client_find(&self, id: &str) -> Result<Option<(OAuthClient, Option<String>)>> {
        if let Some(c) = self.system_client(id) {
            return Ok(Some((c, None)));
        }
        Ok(self.store.oauth_client_get(id).await?.map(|(c, hash)| (c, Some(hash))))
    }
}
