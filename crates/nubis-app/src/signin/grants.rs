//! The token endpoint (RFC 6749 4.1.3 and 6) and revocation (RFC 7009), over grants: every
//! access and refresh token descends from one grant, the user's approval of one authorization
//! request (its code). The family ends together:
//!
//! - a code presented a second time is refused and its grant revoked (RFC 6749 4.1.2);
//! - a refresh token presented after it was rotated is refused and its grant revoked
//!   (RFC 9700 4.14.2);
//! - revoking a refresh token revokes its grant (RFC 7009 2.1);
//! - signing out of the console revokes the grant of its session's token and ends the sign-in
//!   session that approved it.
//!
//! Each exchange is one write transaction: the code or refresh token is used up, checked, and
//! the new tokens are issued (or the grant revoked) together, reading the client, the user and
//! the grant in that transaction.

use crate::write::Decided;
use std::sync::atomic::{AtomicI64, Ordering};

use nubis_model::scope::Scopes;
use nubis_model::signin::OAuthClient;
use nubis_model::{Result, Timestamp};
use nubis_store::oauth::{CodeGrant, Presented, RefreshGrant};
use nubis_store::tokens::NewToken;

use super::oauth::{
    OAuthError, RevokeRequest, TokenRequest, TokenResponse, constant_time_eq, is_verifier, pkce_challenge,
};
use crate::App;
use crate::auth::{hash_secret_hex, new_secret};
use crate::console::CONSOLE_CLIENT_ID;

/// A client that authenticated at the token or revocation endpoint, with the hash of the secret
/// it authenticated with (`None` for system clients, which have none).
struct Authenticated {
    client: OAuthClient,
    secret_hash: Option<String>,
}

type Answer<T> = std::result::Result<T, OAuthError>;

/// When grants, used codes and rotated refresh tokens past their expiry were last forgotten.
static LAST_PURGE: AtomicI64 = AtomicI64::new(0);
const PURGE_EVERY_SECS: i64 = 60;

/// The checks of a code's exchange once the code is used up: the client it was issued to, its
/// expiry, the redirect URI and PKCE.
fn check_code(client: &OAuthClient, req: &TokenRequest, g: &CodeGrant, now: Timestamp) -> Answer<()> {
    let bad = || OAuthError::invalid_grant("The code is invalid, used or expired");
    if g.client_id != client.id || g.expiry <= now {
        return Err(bad());
    }
    let uri_ok = match req.redirect_uri.as_deref() {
        None => g.redirect_uri.is_empty(),
        Some(u) => u == g.redirect_uri || (g.redirect_uri.is_empty() && u == client.redirect_uri),
    };
    if !uri_ok {
        return Err(OAuthError::invalid_grant("redirect_uri differs from the authorization request's"));
    }
    match (&g.code_challenge, req.code_verifier.as_deref()) {
        (Some(challenge), verifier) => {
            let verifier = verifier.unwrap_or("");
            if !is_verifier(verifier) || !constant_time_eq(pkce_challenge(verifier).as_bytes(), challenge.as_bytes()) {
                return Err(OAuthError::invalid_grant("The PKCE code_verifier does not match the code_challenge"));
            }
        }
        // A verifier for a code issued without a challenge (RFC 9700 2.1.1, RFC 7636 4.6): the
        // request did not come from whoever started the authorization.
        (None, Some(_)) => {
            return Err(OAuthError::invalid_grant(
                "A code_verifier was sent but the authorization had no code_challenge",
            ));
        }
        (None, None) => {}
    }
    Ok(())
}

/// The scopes a refresh asks for: the grant's, or a narrower set (RFC 6749 6), never a wider one.
fn refresh_scopes(asked: Option<&str>, had: &str) -> Answer<String> {
    let Some(s) = asked else { return Ok(had.to_string()) };
    let asked = Scopes::parse(s).map_err(|r| OAuthError::new(400, "invalid_scope", r))?;
    let had = Scopes::parse(had).map_err(|r| OAuthError::new(400, "invalid_scope", r))?;
    if !asked.within(&had) {
        return Err(OAuthError::new(400, "invalid_scope", "More scopes than the original grant"));
    }
    Ok(asked.to_string())
}

impl App {
    /// Authenticates the client of a token or revocation request: private clients by their
    /// secret, public clients by their ID alone (their codes are bound by PKCE instead).
    async fn client_authenticate(&self, id: Option<&str>, secret: Option<&str>) -> Answer<Authenticated> {
        let id = id.filter(|i| !i.is_empty()).ok_or_else(OAuthError::invalid_client)?;
        let (client, hash) = self.oauth_client_find(id).await?.ok_or_else(OAuthError::invalid_client)?;
        if client.status != "active" {
            return Err(OAuthError::invalid_client());
        }
        if !client.public {
            let (given, hash) = secret.zip(hash.as_deref()).ok_or_else(OAuthError::invalid_client)?;
            if !constant_time_eq(hash_secret_hex(given).as_bytes(), hash.as_bytes()) {
                return Err(OAuthError::invalid_client());
            }
        }
        Ok(Authenticated { client, secret_hash: hash })
    }

    /// `POST <base>/token`.
    pub async fn token_endpoint(&self, req: &TokenRequest, basic: Option<(String, String)>) -> Answer<TokenResponse> {
        let (id, secret) = match &basic {
            Some((i, s)) => (Some(i.as_str()), Some(s.as_str())),
            None => (req.client_id.as_deref(), req.client_secret.as_deref()),
        };
        let client = self.client_authenticate(id, secret).await?;
        match req.grant_type.as_deref() {
            Some("authorization_code") => self.grant_code(&client, req).await,
            Some("refresh_token") => self.grant_refresh(&client, req).await,
            Some(_) => Err(OAuthError::new(400, "unsupported_grant_type", "Use authorization_code or refresh_token")),
            None => Err(OAuthError::new(400, "invalid_request", "grant_type is required")),
        }
    }

    async fn grant_code(&self, c: &Authenticated, req: &TokenRequest) -> Answer<TokenResponse> {
        let code = req.code.as_deref().ok_or_else(|| OAuthError::new(400, "invalid_request", "code is required"))?;
        let hash = hash_secret_hex(code);
        let hash = &hash;
        self.write(|tx| {
            Box::pin(async move {
                let now = Timestamp::now();
                let g = match tx.oauth_code_use(hash).await? {
                    Presented::First(g) => g,
                    Presented::Unknown => {
                        return Ok(Err(OAuthError::invalid_grant("The code is invalid, used or expired")));
                    }
                    Presented::Again { grant_id } => {
                        tx.oauth_grant_revoke(&grant_id).await?;
                        tracing::warn!(target: "nubis::signin", "an authorization code was presented twice: its grant is revoked");
                        return Ok(Err(OAuthError::invalid_grant("The code is invalid, used or expired")));
                    }
                };
                // The code is used up whatever happens next: a code is good for one attempt only.
                match check_code(&c.client, req, &g, now) {
                    Ok(()) => self.issue_tokens(tx, c, &g.grant_id, g.user_id, &g.scopes, now).await,
                    Err(e) => Ok(Err(e)),
                }
            })
        })
        .await?
    }

    async fn grant_refresh(&self, c: &Authenticated, req: &TokenRequest) -> Answer<TokenResponse> {
        let token = req
            .refresh_token
            .as_deref()
            .ok_or_else(|| OAuthError::new(400, "invalid_request", "refresh_token is required"))?;
        let hash = hash_secret_hex(token);
        let hash = &hash;
        let bad = || OAuthError::invalid_grant("The refresh token is invalid, used or expired");
        self.write_or_roll_back(|tx| {
            Box::pin(async move {
                let now = Timestamp::now();
                let g: RefreshGrant = match tx.oauth_refresh_use(hash).await? {
                    Presented::First(g) => g,
                    Presented::Unknown => return Ok(Decided::Commit(Err(bad()))),
                    Presented::Again { grant_id } => {
                        tx.oauth_grant_revoke(&grant_id).await?;
                        tracing::warn!(target: "nubis::signin", "a rotated refresh token was presented again: its grant is revoked");
                        return Ok(Decided::Commit(Err(bad())));
                    }
                };
                if g.client_id != c.client.id || g.expiry <= now {
                    // Used up all the same (a refresh token presented by another client has leaked).
                    return Ok(Decided::Commit(Err(bad())));
                }
                // A refused scope leaves the refresh token as it was.
                let scopes = match refresh_scopes(req.scope.as_deref(), &g.scopes) {
                    Ok(s) => s,
                    Err(e) => return Ok(Decided::RollBack(Err(e))),
                };
                Ok(Decided::Commit(self.issue_tokens(tx, c, &g.grant_id, g.user_id, &scopes, now).await?))
            })
        })
        .await?
    }

    /// Issues an access token (exactly `scopes`) and a refresh token under a grant, inside the
    /// exchange's transaction, once the client, the user and the grant are still there.
    async fn issue_tokens(
        &self,
        tx: &mut nubis_store::Tx<'_>,
        c: &Authenticated,
        grant_id: &str,
        user_id: i64,
        scopes: &str,
        now: Timestamp,
    ) -> Result<Answer<TokenResponse>> {
        if self.system_client(&c.client.id).is_none() {
            // Deleted, or its secret reset, since it authenticated.
            match tx.oauth_client_get(&c.client.id).await? {
                Some((now_c, hash)) if now_c.status == "active" && Some(&hash) == c.secret_hash.as_ref() => {}
                _ => return Ok(Err(OAuthError::invalid_client())),
            }
        }
        if tx.signin_user_by_id(user_id).await?.is_none() {
            return Ok(Err(OAuthError::invalid_grant("The user no longer exists")));
        }
        let cfg = &self.config.signin;
        let refresh_expiry = now.plus_seconds(cfg.refresh_token_days * 86_400);
        if !tx.oauth_grant_extend(grant_id, refresh_expiry).await? {
            return Ok(Err(OAuthError::invalid_grant("The grant was revoked")));
        }
        let (access, refresh) = (new_secret(), new_secret());
        let label: String = c.client.label.chars().take(100).collect();
        let t = tx
            .token_insert(&NewToken {
                user_id,
                label: &label,
                scopes,
                secret_hash: &hash_secret_hex(&access),
                kind: "oauth",
                created: now,
                expiry: Some(now.plus_seconds(cfg.access_token_secs)),
            })
            .await?;
        tx.token_set_grant(t.id, &c.client.id, grant_id).await?;
        let r = RefreshGrant {
            grant_id: grant_id.to_string(),
            client_id: c.client.id.clone(),
            user_id,
            scopes: scopes.to_string(),
            access_token_id: Some(t.id),
            expiry: refresh_expiry,
        };
        tx.oauth_refresh_insert(&hash_secret_hex(&refresh), &r).await?;
        Ok(Ok(TokenResponse {
            access_token: access,
            token_type: "bearer",
            expires_in: cfg.access_token_secs,
            refresh_token: refresh,
            scope: scopes.to_string(),
        }))
    }

    /// `POST <base>/revoke` (RFC 7009): revokes an access token of the client, or a refresh
    /// token with its whole grant; an unknown token is not an error.
    pub async fn revoke_endpoint(&self, req: &RevokeRequest, basic: Option<(String, String)>) -> Answer<()> {
        let (id, secret) = match &basic {
            Some((i, s)) => (Some(i.as_str()), Some(s.as_str())),
            None => (req.client_id.as_deref(), req.client_secret.as_deref()),
        };
        let c = self.client_authenticate(id, secret).await?;
        let token = req.token.as_deref().ok_or_else(|| OAuthError::new(400, "invalid_request", "token is required"))?;
        let hash = hash_secret_hex(token);
        let (hash, cid) = (&hash, &c.client.id);
        // `token_type_hint` is not needed: both kinds are looked up, access tokens first
        // (RFC 7009 2.1 lets a server ignore the hint).
        self.write(|tx| {
            Box::pin(async move {
                if !tx.oauth_access_revoke(hash, cid).await?
                    && let Some(grant_id) = tx.oauth_refresh_grant(hash, cid).await?
                {
                    tx.oauth_grant_revoke(&grant_id).await?;
                }
                Ok(())
            })
        })
        .await?;
        Ok(())
    }

    /// Signing out of the console: the grant of the console session's access token is revoked
    /// (the token and its refresh tokens end) and the authorization server's sign-in session
    /// that approved it ends, so that its cookie no longer approves anything without the
    /// password.
    pub async fn console_signout(&self, access_token: &str) -> Result<()> {
        let hash = hash_secret_hex(access_token);
        let hash = &hash;
        self.write(|tx| {
            Box::pin(async move {
                match tx.oauth_access_grant(hash, CONSOLE_CLIENT_ID).await? {
                    Some(Some(grant_id)) => {
                        if let Some(session) = tx.oauth_grant_revoke(&grant_id).await? {
                            tx.session_delete(&session).await?;
                        }
                    }
                    Some(None) => {
                        tx.oauth_access_revoke(hash, CONSOLE_CLIENT_ID).await?;
                    }
                    None => {}
                }
                Ok(())
            })
        })
        .await
    }

    /// Forgets expired grants with their used codes and rotated refresh tokens, at most once a
    /// minute per process (inside a transaction that issues a code).
    pub(super) async fn grants_purge_now_and_then(&self, tx: &mut nubis_store::Tx<'_>, now: Timestamp) -> Result<()> {
        let secs = now.unix();
        let last = LAST_PURGE.load(Ordering::Relaxed);
        if secs - last < PURGE_EVERY_SECS
            || LAST_PURGE.compare_exchange(last, secs, Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return Ok(());
        }
        tx.oauth_grants_purge(now).await
    }
}
