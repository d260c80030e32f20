//! The OAuth 2 rules of the authorization server: checking an authorization request
//! (RFC 6749 4.1.1, PKCE of RFC 7636) and issuing single-use short-lived codes, each the start
//! of a grant. The token and revocation endpoints are in [`super::grants`]. Access tokens are
//! ordinary rows of `tokens` carrying exactly the granted scopes, so the API enforces them like
//! personal access tokens.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use nubis_model::scope::Scopes;
use nubis_model::signin::OAuthClient;
use nubis_model::{Error, Result, Timestamp};
use nubis_store::oauth::{CodeGrant, NewGrant};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::App;
use crate::auth::{hash_secret_hex, new_secret};

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
    pub(super) fn new(status: u16, error: &'static str, description: impl Into<String>) -> OAuthError {
        OAuthError { status, error, error_description: description.into() }
    }
    pub(super) fn invalid_grant(description: &str) -> OAuthError {
        OAuthError::new(400, "invalid_grant", description)
    }
    pub(super) fn invalid_client() -> OAuthError {
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
pub(super) fn is_verifier(v: &str) -> bool {
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

/// Everything but the unreserved characters of RFC 3986 (2.3).
const NOT_UNRESERVED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Percent-encodes everything but the unreserved characters.
fn urlencode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, NOT_UNRESERVED).to_string()
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
        // The console's system client redirects only to the console's callback of the
        // configuration; other clients to the URI registered for them.
        let client = match self.oauth_client_find(client_id).await? {
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

    /// Issues a code for the user of a sign-in session, the start of a new grant, and returns
    /// the redirect to the client; `None` when the session has ended (the user signs in again).
    /// The session and the client are read in the transaction that issues the code.
    pub async fn authorize_grant(&self, session: &str, a: &Authorization) -> Result<Option<String>> {
        let code = new_secret();
        let grant_id = new_secret();
        let now = Timestamp::now();
        let expiry = now.plus_seconds(self.config.signin.code_secs);
        let (code_hash, session_hash) = (hash_secret_hex(&code), hash_secret_hex(session));
        let (code_hash, session_hash, grant_id) = (&code_hash, &session_hash, &grant_id);
        let system = self.system_client(&a.client.id).is_some();
        let issued = self
            .write(|tx| {
                Box::pin(async move {
                    let user_id = match tx.session_user(session_hash).await? {
                        Some((uid, until)) if until > now => uid,
                        _ => return Ok(false),
                    };
                    if !system && tx.oauth_client_get(&a.client.id).await?.is_none_or(|(c, _)| c.status != "active") {
                        return Err(Error::NotFound);
                    }
                    self.grants_purge_now_and_then(tx, now).await?;
                    let new_grant = NewGrant {
                        id: grant_id,
                        client_id: &a.client.id,
                        user_id,
                        session_hash: Some(session_hash),
                        expiry,
                    };
                    tx.oauth_grant_insert(&new_grant).await?;
                    let code = CodeGrant {
                        grant_id: grant_id.clone(),
                        client_id: a.client.id.clone(),
                        user_id,
                        // Empty when the request did not name it.
                        redirect_uri: if a.redirect_uri_given { a.redirect_uri.clone() } else { String::new() },
                        scopes: a.scopes.clone(),
                        code_challenge: a.code_challenge.clone(),
                        expiry,
                    };
                    tx.oauth_code_insert(code_hash, &code).await?;
                    Ok(true)
                })
            })
            .await?;
        if !issued {
            return Ok(None);
        }
        let mut pairs = vec![("code", code.as_str())];
        if let Some(s) = &a.state {
            pairs.push(("state", s));
        }
        Ok(Some(with_query(&a.redirect_uri, &pairs)))
    }

    /// The redirect telling the client the user declined.
    pub fn authorize_denied(&self, a: &Authorization) -> String {
        match redirect_error(&a.redirect_uri, "access_denied", "The user declined", a.state.as_deref()) {
            AuthorizeError::Redirect(u) | AuthorizeError::Page(u) => u,
        }
    }
}

pub(super) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    bool::from(subtle::ConstantTimeEq::ct_eq(a, b))
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
