//! The OAuth 2 rules of the authorization server: checking an authorization request
//! (RFC 6749 4.1.1, PKCE of RFC 7636), issuing single-use short-lived codes, the token endpoint's
//! `authorization_code` and `refresh_token` grants with client authentication, and revocation
//! (RFC 7009). Access tokens are ordinary rows of `tokens` carrying exactly the granted scopes,
//! so the API enforces them like personal access tokens.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use nubis_model::account::User;
use nubis_model::scope::Scopes;
use nubis_model::signin::OAuthClient;
use nubis_model::{Error, Result, Timestamp};
use nubis_store::oauth::{CodeGrant, RefreshGrant};
use nubis_store::tokens::NewToken;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::auth::{hash_secret_hex, new_secret};
use crate::{App, retry};

/// The query of `GET <base>/authorize` (and the hidden fields of the sign-in form).
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct AuthorizeRequest {
    pub response_type: Option<String>,
    pub client_id: Option<String>,
    pub redirect_uri: Option<String>,
    pub scope: Option<String>,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
    pub code_challenge_method: Option<String>,
}

/// A checked authorization request: what the sign-in page shows and the code will carry.
#[derive(Debug, Clone)]
pub struct Authorization {
    pub client: OAuthClient,
    pub redirect_uri: String,
    /// The request named the redirect URI: the token request must then name it too (RFC 6749
    /// 4.1.3).
    pub redirect_uri_given: bool,
    pub scopes: String,
    pub state: Option<String>,
    pub code_challenge: Option<String>,
}

impl Authorization {
    /// The scopes, one per line, as the page lists them.
    pub fn scope_list(&self) -> Vec<String> {
        if self.scopes == "*" {
            return vec!["* (everything your user may do)".to_string()];
        }
        self.scopes.split(' ').map(str::to_string).collect()
    }
}

/// A refused authorization request: shown on the page when the client or its redirect URI
/// cannot be trusted (RFC 6749 4.1.2.1), otherwise sent back to the client's redirect URI.
#[derive(Debug, Clone)]
pub enum AuthorizeError {
    Page(String),
    Redirect(String),
}

/// An error of the token and revocation endpoints (RFC 6749 5.2).
#[derive(Debug, Clone, Serialize)]
pub struct OAuthError {
    #[serde(skip)]
    pub status: u16,
    pub error: &'static str,
    pub error_description: String,
}

impl OAuthError {
    fn new(status: u16, error: &'static str, description: impl Into<String>) -> OAuthError {
        OAuthError { status, error, error_description: description.into() }
    }
    fn invalid_grant(description: &str) -> OAuthError {
        OAuthError::new(400, "invalid_grant", description)
    }
    fn invalid_client() -> OAuthError {
        OAuthError::new(401, "invalid_client", "Client authentication failed")
    }
}

impl From<Error> for OAuthError {
    fn from(e: Error) -> OAuthError {
        match e {
            Error::Invalid(v) => {
                OAuthError::new(400, "invalid_request", v.into_iter().map(|f| f.reason).collect::<Vec<_>>().join("; "))
            }
            _ => {
                tracing::error!(target: "nubis::signin", error = %e, "token endpoint failed");
                OAuthError::new(500, "server_error", "The server could not answer")
            }
        }
    }
}

/// The form of `POST <base>/token` (client credentials may also come in HTTP Basic).
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct TokenRequest {
    pub grant_type: Option<String>,
    pub code: Option<String>,
    pub redirect_uri: Option<String>,
    pub code_verifier: Option<String>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

/// The form of `POST <base>/revoke`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct RevokeRequest {
    pub token: Option<String>,
    pub token_type_hint: Option<String>,
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
}

/// A successful token response (RFC 6749 5.1).
#[derive(Debug, Clone, Serialize)]
pub struct TokenResponse {
    pub access_token: String,
    pub token_type: &'static str,
    pub expires_in: i64,
    pub refresh_token: String,
    pub scope: String,
}

/// PKCE S256: BASE64URL(SHA256(verifier)) without padding.
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A verifier of RFC 7636 4.1: 43-128 characters of `[A-Za-z0-9-._~]`.
fn is_verifier(v: &str) -> bool {
    (43..=128).contains(&v.len()) && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b))
}

fn with_query(uri: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = uri.to_string();
    let mut sep = if uri.contains('?') { '&' } else { '?' };
    for (k, v) in pairs {
        out.push(sep);
        out.push_str(k);
        out.push('=');
        out.push_str(&urlencode(v));
        sep = '&';
    }
    out
}

/// Percent-encodes everything but the unreserved characters.
pub fn urlencode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The redirect carrying an error back to the client (RFC 6749 4.1.2.1).
fn redirect_error(uri: &str, error: &str, description: &str, state: Option<&str>) -> AuthorizeError {
    let mut pairs = vec![("error", error), ("error_description", description)];
    if let Some(s) = state {
        pairs.push(("state", s));
    }
    AuthorizeError::Redirect(with_query(uri, &pairs))
}

impl App {
    /// Checks an authorization request before the sign-in page is shown, and again when the
    /// form comes back.
    pub async fn authorize_check(
        &self,
        r: &AuthorizeRequest,
    ) -> Result<std::result::Result<Authorization, AuthorizeError>> {
        let Some(client_id) = r.client_id.as_deref().filter(|c| !c.is_empty()) else {
            return Ok(Err(AuthorizeError::Page(
                "The application did not say who it is (client_id is missing).".into(),
            )));
        };
        let client = match self.store.oauth_client_get(client_id).await? {
            Some((c, _)) if c.status == "active" => c,
            _ => {
                return Ok(Err(AuthorizeError::Page("This application is not registered (unknown client_id).".into())));
            }
        };
        if let Some(uri) = &r.redirect_uri
            && *uri != client.redirect_uri
        {
            return Ok(Err(AuthorizeError::Page(
                "The redirect_uri does not match the one registered for this application.".into(),
            )));
        }
        let uri = client.redirect_uri.clone();
        let state = r.state.as_deref();
        if r.response_type.as_deref() != Some("code") {
            return Ok(Err(redirect_error(&uri, "unsupported_response_type", "response_type must be code", state)));
        }
        let scopes = match Scopes::parse(r.scope.as_deref().unwrap_or("*")) {
            Ok(s) => s.to_string(),
            Err(reason) => return Ok(Err(redirect_error(&uri, "invalid_scope", &reason, state))),
        };
        let challenge = match (r.code_challenge.as_deref(), r.code_challenge_method.as_deref()) {
            (None, _) if client.public => {
                return Ok(Err(redirect_error(
                    &uri,
                    "invalid_request",
                    "Public clients must send a PKCE code_challenge (S256)",
                    state,
                )));
            }
            (None, _) => None,
            (Some(c), Some("S256")) if c.len() == 43 && URL_SAFE_NO_PAD.decode(c).is_ok() => Some(c.to_string()),
            (Some(_), Some("S256")) => {
                return Ok(Err(redirect_error(&uri, "invalid_request", "Malformed code_challenge", state)));
            }
            (Some(_), _) => {
                return Ok(Err(redirect_error(&uri, "invalid_request", "code_challenge_method must be S256", state)));
            }
        };
        Ok(Ok(Authorization {
            client,
            redirect_uri: uri,
            redirect_uri_given: r.redirect_uri.is_some(),
            scopes,
            state: r.state.clone(),
            code_challenge: challenge,
        }))
    }

    /// Issues a code for a signed-in user and returns the redirect to the client.
    pub async fn authorize_grant(&self, user: &User, a: &Authorization) -> Result<String> {
        let code = new_secret();
        let grant = CodeGrant {
            client_id: a.client.id.clone(),
            user_id: user.id,
            // Empty when the request did not name it.
            redirect_uri: if a.redirect_uri_given { a.redirect_uri.clone() } else { String::new() },
            scopes: a.scopes.clone(),
            code_challenge: a.code_challenge.clone(),
            expiry: Timestamp::now().plus_seconds(self.config.signin.code_secs),
        };
        let hash = hash_secret_hex(&code);
        let (hash, grant) = (&hash, &grant);
        retry(|| async move {
            let mut tx = self.store.begin().await?;
            tx.oauth_code_insert(hash, grant).await?;
            tx.commit().await
        })
        .await?;
        let mut pairs = vec![("code", code.as_str())];
        if let Some(s) = &a.state {
            pairs.push(("state", s));
        }
        Ok(with_query(&a.redirect_uri, &pairs))
    }

    /// The redirect telling the client the user declined.
    pub fn authorize_denied(&self, a: &Authorization) -> String {
        match redirect_error(&a.redirect_uri, "access_denied", "The user declined", a.state.as_deref()) {
            AuthorizeError::Redirect(u) | AuthorizeError::Page(u) => u,
        }
    }

    /// Authenticates the client of a token or revocation request: private clients by their
    /// secret, public clients by their ID alone (their codes are bound by PKCE instead).
    async fn client_authenticate(
        &self,
        id: Option<&str>,
        secret: Option<&str>,
    ) -> std::result::Result<OAuthClient, OAuthError> {
        let id = id.filter(|i| !i.is_empty()).ok_or_else(OAuthError::invalid_client)?;
        let (client, hash) = self.store.oauth_client_get(id).await?.ok_or_else(OAuthError::invalid_client)?;
        if client.status != "active" {
            return Err(OAuthError::invalid_client());
        }
        if !client.public {
            let given = secret.ok_or_else(OAuthError::invalid_client)?;
            if !constant_time_eq(hash_secret_hex(given).as_bytes(), hash.as_bytes()) {
                return Err(OAuthError::invalid_client());
            }
        }
        Ok(client)
    }

    /// `POST <base>/token`.
    pub async fn token_endpoint(
        &self,
        req: &TokenRequest,
        basic: Option<(String, String)>,
    ) -> std::result::Result<TokenResponse, OAuthError> {
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

    async fn grant_code(
        &self,
        client: &OAuthClient,
        req: &TokenRequest,
    ) -> std::result::Result<TokenResponse, OAuthError> {
        let code = req.code.as_deref().ok_or_else(|| OAuthError::new(400, "invalid_request", "code is required"))?;
        let hash = hash_secret_hex(code);
        let hash = &hash;
        // The code is removed whatever happens next: a code is good for one attempt only.
        let grant = retry(|| async move {
            let mut tx = self.store.begin().await?;
            let g = tx.oauth_code_take(hash).await?;
            tx.commit().await?;
            Ok(g)
        })
        .await?;
        let bad = || OAuthError::invalid_grant("The code is invalid, used or expired");
        let g = grant.ok_or_else(bad)?;
        if g.client_id != client.id || g.expiry <= Timestamp::now() {
            return Err(bad());
        }
        let uri_ok = match req.redirect_uri.as_deref() {
            None => g.redirect_uri.is_empty(),
            Some(u) => u == g.redirect_uri || (g.redirect_uri.is_empty() && u == client.redirect_uri),
        };
        if !uri_ok {
            return Err(OAuthError::invalid_grant("redirect_uri differs from the authorization request's"));
        }
        if let Some(challenge) = &g.code_challenge {
            let verifier = req.code_verifier.as_deref().unwrap_or("");
            if !is_verifier(verifier) || !constant_time_eq(pkce_challenge(verifier).as_bytes(), challenge.as_bytes()) {
                return Err(OAuthError::invalid_grant("The PKCE code_verifier does not match the code_challenge"));
            }
        }
        self.issue_tokens(client, g.user_id, &g.scopes).await
    }

    async fn grant_refresh(
        &self,
        client: &OAuthClient,
        req: &TokenRequest,
    ) -> std::result::Result<TokenResponse, OAuthError> {
        let token = req
            .refresh_token
            .as_deref()
            .ok_or_else(|| OAuthError::new(400, "invalid_request", "refresh_token is required"))?;
        let hash = hash_secret_hex(token);
        let hash = &hash;
        // Refresh tokens rotate: the used one is removed, whatever happens next (a refresh token
        // presented by another client is burnt too).
        let grant = retry(|| async move {
            let mut tx = self.store.begin().await?;
            let g = tx.oauth_refresh_take(hash).await?;
            tx.commit().await?;
            Ok(g)
        })
        .await?;
        let bad = || OAuthError::invalid_grant("The refresh token is invalid, used or expired");
        let g = grant.ok_or_else(bad)?;
        if g.client_id != client.id || g.expiry <= Timestamp::now() {
            return Err(bad());
        }
        // A narrower scope may be asked for (RFC 6749 6), never a wider one.
        let scopes = match req.scope.as_deref() {
            None => g.scopes.clone(),
            Some(s) => {
                let asked = Scopes::parse(s).map_err(|r| OAuthError::new(400, "invalid_scope", r))?;
                let had = Scopes::parse(&g.scopes).map_err(|r| OAuthError::new(400, "invalid_scope", r))?;
                if !asked.within(&had) {
                    return Err(OAuthError::new(400, "invalid_scope", "More scopes than the original grant"));
                }
                asked.to_string()
            }
        };
        self.issue_tokens(client, g.user_id, &scopes).await
    }

    /// Issues an access token (exactly `scopes`) and a refresh token for a user and client.
    async fn issue_tokens(
        &self,
        client: &OAuthClient,
        user_id: i64,
        scopes: &str,
    ) -> std::result::Result<TokenResponse, OAuthError> {
        let user = self
            .store
            .user_by_id(user_id)
            .await?
            .ok_or_else(|| OAuthError::invalid_grant("The user no longer exists"))?;
        let cfg = &self.config.signin;
        let access = new_secret();
        let refresh = new_secret();
        let now = Timestamp::now();
        let label: String = client.label.chars().take(100).collect();
        let (access_h, refresh_h) = (hash_secret_hex(&access), hash_secret_hex(&refresh));
        let (access_h, refresh_h, label, user) = (&access_h, &refresh_h, &label, &user);
        retry(|| async move {
            let mut tx = self.store.begin().await?;
            let t = tx
                .token_insert(&NewToken {
                    user_id: user.id,
                    label,
                    scopes,
                    secret_hash: access_h,
                    kind: "oauth",
                    created: now,
                    expiry: Some(now.plus_seconds(cfg.access_token_secs)),
                })
                .await?;
            tx.token_set_client(t.id, &client.id).await?;
            tx.oauth_refresh_insert(
                refresh_h,
                &RefreshGrant {
                    client_id: client.id.clone(),
                    user_id: user.id,
                    scopes: scopes.to_string(),
                    access_token_id: Some(t.id),
                    expiry: now.plus_seconds(cfg.refresh_token_days * 86_400),
                },
            )
            .await?;
            tx.commit().await
        })
        .await?;
        Ok(TokenResponse {
            access_token: access,
            token_type: "bearer",
            expires_in: cfg.access_token_secs,
            refresh_token: refresh,
            scope: scopes.to_string(),
        })
    }

    /// `POST <base>/revoke` (RFC 7009): revokes an access or refresh token of the client; an
    /// unknown token is not an error.
    pub async fn revoke_endpoint(
        &self,
        req: &RevokeRequest,
        basic: Option<(String, String)>,
    ) -> std::result::Result<(), OAuthError> {
        let (id, secret) = match &basic {
            Some((i, s)) => (Some(i.as_str()), Some(s.as_str())),
            None => (req.client_id.as_deref(), req.client_secret.as_deref()),
        };
        let client = self.client_authenticate(id, secret).await?;
        let token = req.token.as_deref().ok_or_else(|| OAuthError::new(400, "invalid_request", "token is required"))?;
        let hash = hash_secret_hex(token);
        let (hash, cid) = (&hash, &client.id);
        // `token_type_hint` is not needed: both kinds are looked up, access tokens first
        // (RFC 7009 2.1 lets a server ignore the hint). Revoking a refresh token also ends the
        // access token issued with it.
        retry(|| async move {
            let mut tx = self.store.begin().await?;
            if !tx.oauth_access_revoke(hash, cid).await?
                && let Some(Some(access_id)) = tx.oauth_refresh_revoke(hash, cid).await?
            {
                tx.oauth_access_delete(access_id).await?;
            }
            tx.commit().await
        })
        .await?;
        Ok(())
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256_matches_rfc7636_appendix_b() {
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn redirects_keep_existing_queries() {
        assert_eq!(with_query("https://a/cb", &[("code", "x y")]), "https://a/cb?code=x%20y");
        assert_eq!(with_query("https://a/cb?k=1", &[("state", "s")]), "https://a/cb?k=1&state=s");
    }
}
