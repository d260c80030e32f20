//! OAuth clients of the account (spec 4.7): the secret is returned on create and reset only and
//! stored as its SHA-256; deleting a client or resetting its secret ends every token issued to
//! it at once. Thumbnails are PNG or JPEG, checked by content, publicly viewable.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use nubis_model::event::EventEntity;
use nubis_model::filter::Filter;
use nubis_model::page::{Page, PageRequest};
use nubis_model::signin::OAuthClient;
use nubis_model::validate::len_between;
use nubis_model::{Error, Problems, Result, Timestamp};
use nubis_store::oauth::NewClient;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::App;
use crate::auth::{Actor, Op, hash_secret_hex, new_secret};
use crate::events::event;

#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ClientCreate {
    /// 1..512 characters (required).
    #[schema(required = true, schema_with = label_schema)]
    pub label: Option<String>,
    /// Where the authorization server sends the user back with a code (required): an `https`
    /// URL with a host (`http` only for a loopback host: 127.0.0.0/8, `[::1]` or `localhost`), a
    /// port of 1-65535 if any, no fragment, at most 2048 characters.
    #[schema(required = true, schema_with = redirect_uri_schema)]
    pub redirect_uri: Option<String>,
    /// Public clients (apps that cannot keep a secret) use PKCE instead. Default false.
    pub public: Option<bool>,
}

/// `PUT /v4/account/oauth-clients/{client_id}`: the fields given change.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct ClientUpdate {
    #[schema(schema_with = optional_label_schema)]
    pub label: Option<String>,
    #[schema(schema_with = optional_redirect_uri_schema)]
    pub redirect_uri: Option<String>,
    pub public: Option<bool>,
}

const LABEL_RULE: &str = "Length must be 1-512 characters";
const URI_RULE: &str = "Must be an absolute https URL without a fragment (http only for a loopback host: \
     127.0.0.0/8, [::1] or localhost), with a port of 1-65535 if any";
const URI_MAX_LEN: usize = 2048;
/// The characters of a host name (RFC 3986 `reg-name`: ASCII letters, digits, `-._~`, the
/// sub-delimiters and percent signs).
const HOST_CHARS: &str = "-._~!$&'()*+,;=%";
/// [`is_redirect_uri`] as a pattern, exactly: `https://` with `[::1]` or a host name of
/// [`HOST_CHARS`] and letters and digits, or `http://` with a loopback host (`[::1]`,
/// `localhost` in any case, an address of 127.0.0.0/8); an optional port of 1-65535 without a
/// leading zero; then a path or query without a fragment; no whitespace or control characters.
const URI_PATTERN: &str = concat!(
    r"^(https://(\[::1\]|[A-Za-z0-9\-._~!$&'()*+,;=%]+)",
    r"|http://(\[::1\]|[Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt]|127(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}))",
    r"(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?",
    r"([/?][^#\s\x00-\x1f\x7f-\x9f]*)?$"
);

/// Whether a host is this machine's loopback: an address of 127.0.0.0/8, `[::1]` or
/// `localhost` (RFC 8252 7.3).
fn is_loopback_host(host: &str) -> bool {
    host == "[::1]"
        || host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::Ipv4Addr>().is_ok_and(|a| a.is_loopback())
}

/// An absolute `https://host[:port]...` URL without a fragment, whose host is an ASCII name
/// (RFC 3986 `reg-name`, which covers IPv4 addresses; no user part, no IPv6 literal but
/// `[::1]`), so that every URL parser reads the same host from it. Plain `http` only for a
/// loopback host (RFC 9700 2.1, RFC 8252 7.3: nothing else is protected in transit); a port, if
/// given, of 1-65535.
fn is_redirect_uri(u: &str) -> bool {
    let bad = |c: char| c.is_whitespace() || c.is_control();
    let (https, rest) = match (u.strip_prefix("https://"), u.strip_prefix("http://")) {
        (Some(r), _) => (true, r),
        (None, Some(r)) => (false, r),
        (None, None) => return false,
    };
    let authority = rest.split(['/', '?']).next().unwrap_or("");
    let split = if authority.starts_with('[') { authority.find(']').map(|i| i + 1) } else { authority.find(':') };
    let (host, port) = match split {
        Some(i) => authority.split_at(i),
        None if authority.starts_with('[') => return false,
        None => (authority, ""),
    };
    let host_ok = if host.starts_with('[') {
        host == "[::1]"
    } else {
        !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || HOST_CHARS.contains(c))
    };
    let port_ok = port.is_empty()
        || port.strip_prefix(':').is_some_and(|p| {
            !p.is_empty()
                && !p.starts_with('0')
                && p.len() <= 5
                && p.bytes().all(|b| b.is_ascii_digit())
                && (1..=65535).contains(&p.parse::<u32>().unwrap_or(0))
        });
    let scheme_ok = https || is_loopback_host(host);
    host_ok && port_ok && scheme_ok && !u.contains('#') && u.chars().count() <= URI_MAX_LEN && !u.chars().any(bad)
}

/// A client of the actor's account, read in a write transaction (404 as [`App::own_client`]).
async fn own_client_in(tx: &mut nubis_store::Tx<'_>, actor: &Actor, id: &str) -> Result<OAuthClient> {
    match tx.oauth_client_get(id).await? {
        Some((c, _)) if c.account_id == actor.account_id() => Ok(c),
        _ => Err(Error::NotFound),
    }
}

fn client_entity(c: &OAuthClient) -> EventEntity {
    EventEntity::new("oauth_client", 0, &c.label, format!("/v4/account/oauth-clients/{}", c.id))
}

/// The image type of a thumbnail, by its content.
pub fn image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else {
        None
    }
}

impl App {
    fn with_urls(&self, mut c: OAuthClient) -> OAuthClient {
        if c.has_thumbnail {
            c.thumbnail_url = Some(format!("{}/v4/account/oauth-clients/{}/thumbnail", self.public_url(), c.id));
        }
        c
    }

    /// A client of the actor's account (404 for other accounts' and for the console's system
    /// client, which is no row of any account).
    async fn own_client(&self, actor: &Actor, id: &str) -> Result<OAuthClient> {
        match self.store.oauth_client_get(id).await? {
            Some((c, _)) if c.account_id == actor.account_id() => Ok(c),
            _ => Err(Error::NotFound),
        }
    }

    pub async fn oauth_client_list(
        &self,
        actor: &Actor,
        filter: &Filter,
        page: PageRequest,
    ) -> Result<Page<OAuthClient>> {
        self.authorize(actor, Op::OauthClientList).await?;
        let (data, n) = self.store.oauth_clients_page(actor.account_id(), filter, page.page, page.page_size).await?;
        Ok(Page::new(data.into_iter().map(|c| self.with_urls(c)).collect(), page, n))
    }

    pub async fn oauth_client_get(&self, actor: &Actor, id: &str) -> Result<OAuthClient> {
        self.authorize(actor, Op::OauthClientGet).await?;
        Ok(self.with_urls(self.own_client(actor, id).await?))
    }

    pub async fn oauth_client_create(&self, actor: &Actor, input: ClientCreate) -> Result<OAuthClient> {
        self.authorize(actor, Op::OauthClientCreate).await?;
        let mut p = Problems::new();
        match &input.label {
            None => p.add("label", "Label is required"),
            Some(l) => p.check(len_between(l, LABEL_LEN.0, LABEL_LEN.1), "label", LABEL_RULE),
        }
        match &input.redirect_uri {
            None => p.add("redirect_uri", "redirect_uri is required"),
            Some(u) => p.check(is_redirect_uri(u), "redirect_uri", URI_RULE),
        }
        p.finish()?;
        let input = &input;
        self.write(|tx| {
            Box::pin(async move {
                let mut id_bytes = new_secret();
                id_bytes.truncate(20);
                let secret = new_secret();
                let mut c = tx
                    .oauth_client_insert(&NewClient {
                        id: &id_bytes,
                        account_id: actor.account_id(),
                        label: input.label.as_deref().unwrap_or_default(),
                        redirect_uri: input.redirect_uri.as_deref().unwrap_or_default(),
                        public: input.public.unwrap_or(false),
                        secret_hash: &hash_secret_hex(&secret),
                        created: Timestamp::now(),
                    })
                    .await?;
                tx.event_insert(&event(actor, "oauth_client_create", client_entity(&c)).build()).await?;
                c.secret = secret;
                Ok(c)
            })
        })
        .await
    }

    pub async fn oauth_client_update(&self, actor: &Actor, id: &str, input: ClientUpdate) -> Result<OAuthClient> {
        self.authorize(actor, Op::OauthClientUpdate).await?;
        self.own_client(actor, id).await?;
        let mut p = Problems::new();
        if let Some(l) = &input.label {
            p.check(len_between(l, LABEL_LEN.0, LABEL_LEN.1), "label", LABEL_RULE);
        }
        if let Some(u) = &input.redirect_uri {
            p.check(is_redirect_uri(u), "redirect_uri", URI_RULE);
        }
        p.finish()?;
        let input = &input;
        let c = self
            .write(|tx| {
                Box::pin(async move {
                    own_client_in(tx, actor, id).await?;
                    let c = tx
                        .oauth_client_update(id, input.label.as_deref(), input.redirect_uri.as_deref(), input.public)
                        .await?;
                    tx.event_insert(&event(actor, "oauth_client_update", client_entity(&c)).build()).await?;
                    Ok(c)
                })
            })
            .await?;
        Ok(self.with_urls(c))
    }

    /// Deletes a client: its ID and secret stop being accepted and its tokens stop working.
    pub async fn oauth_client_delete(&self, actor: &Actor, id: &str) -> Result<()> {
        self.authorize(actor, Op::OauthClientDelete).await?;
        self.own_client(actor, id).await?;
        self.write(|tx| {
            Box::pin(async move {
                let c = own_client_in(tx, actor, id).await?;
                tx.oauth_client_delete(id).await?;
                tx.event_insert(&event(actor, "oauth_client_delete", client_entity(&c)).build()).await?;
                Ok(())
            })
        })
        .await
    }

    /// A new secret, returned once; the old secret and every token issued to the client end.
    pub async fn oauth_client_reset_secret(&self, actor: &Actor, id: &str) -> Result<OAuthClient> {
        self.authorize(actor, Op::OauthClientResetSecret).await?;
        self.own_client(actor, id).await?;
        let c = self
            .write(|tx| {
                Box::pin(async move {
                    let secret = new_secret();
                    own_client_in(tx, actor, id).await?;
                    let mut c = tx.oauth_client_set_secret(id, &hash_secret_hex(&secret)).await?;
                    tx.event_insert(&event(actor, "oauth_client_secret_reset", client_entity(&c)).build()).await?;
                    c.secret = secret;
                    Ok(c)
                })
            })
            .await?;
        Ok(self.with_urls(c))
    }

    /// The public thumbnail: (content type, image bytes).
    pub async fn oauth_client_thumbnail_get(&self, id: &str) -> Result<(String, Vec<u8>)> {
        let (ct, b64) = self.store.oauth_client_thumbnail(id).await?.ok_or(Error::NotFound)?;
        let bytes = STANDARD.decode(b64).map_err(Error::internal)?;
        Ok((ct, bytes))
    }

    /// Sets the thumbnail: a PNG or JPEG image (by content) no larger than the configured limit.
    pub async fn oauth_client_thumbnail_update(&self, actor: &Actor, id: &str, image: &[u8]) -> Result<()> {
        self.authorize(actor, Op::OauthClientThumbnailUpdate).await?;
        self.own_client(actor, id).await?;
        let max = self.config.signin.thumbnail_max_bytes;
        let mut p = Problems::new();
        p.check(!image.is_empty(), "thumbnail", "An image is required");
        p.check(image.len() <= max, "thumbnail", format!("The image must be at most {max} bytes"));
        let ct = image_type(image);
        if !image.is_empty() {
            p.check(ct.is_some(), "thumbnail", "The image must be a PNG or JPEG file");
        }
        p.finish()?;
        let ct = ct.unwrap_or("image/png");
        let b64 = STANDARD.encode(image);
        let b64 = &b64;
        self.write(|tx| {
            Box::pin(async move {
                own_client_in(tx, actor, id).await?;
                tx.oauth_client_set_thumbnail(id, ct, b64).await?;
                Ok(())
            })
        })
        .await
    }
}

const LABEL_LEN: (usize, usize) = (1, 512);

fn label_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(nubis_model::schema::text(LABEL_LEN.0, LABEL_LEN.1))
}

fn redirect_uri_schema() -> utoipa::openapi::Schema {
    nubis_model::schema::schema(nubis_model::schema::pattern(8, URI_MAX_LEN, URI_PATTERN))
}

fn optional_label_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{or_null, schema, text};
    schema(or_null(text(LABEL_LEN.0, LABEL_LEN.1)))
}

fn optional_redirect_uri_schema() -> utoipa::openapi::Schema {
    use nubis_model::schema::{or_null, pattern, schema};
    schema(or_null(pattern(8, URI_MAX_LEN, URI_PATTERN)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_absolute_urls() {
        assert!(is_redirect_uri("https://example.org/oauth/callback"));
        assert!(is_redirect_uri("http://127.0.0.1:9999/cb?x=1"));
        assert!(!is_redirect_uri("/relative"));
        assert!(!is_redirect_uri("https://"));
        assert!(!is_redirect_uri("https://a/cb#frag"));
        assert!(!is_redirect_uri("ftp://a/cb"));
    }

    /// The served pattern and the check agree, so that every URL the document allows is
    /// accepted and none it refuses is.
    #[test]
    fn pattern_is_the_check() {
        let re = regex::Regex::new(URI_PATTERN).unwrap();
        let cases = [
            "https://example.org/oauth/callback",
            "https://a",
            "https://[::1]:8443/x",
            "https://0?000",
            "http://0?000",
            "http://127.0.0.1:9999/cb?x=1",
            "http://127.255.3.9",
            "http://127.0.0.01/",
            "http://128.0.0.1/",
            "http://LocalHost:1/",
            "http://[::1]/cb",
            "http://[::2]/cb",
            "https://[::2]/cb",
            "http://example.org/cb",
            "https://a:0/",
            "https://a:080/",
            "https://a:65535/",
            "https://a:65536/",
            "https://a:99999/",
            "https://a:/",
            "https://a/b c",
            "https://a/b#c",
            "https://a/\u{85}",
            "https://user@a/",
            "https://a?q=1",
            "ftp://a/cb",
            "https://",
        ];
        for c in cases {
            assert_eq!(re.is_match(c), is_redirect_uri(c), "{c}");
        }
    }

    #[test]
    fn plain_http_only_for_loopback_and_ports_in_range() {
        for ok in [
            "http://127.0.0.1/cb",
            "http://127.10.20.30:65535/cb",
            "http://localhost:8080",
            "http://LocalHost/cb",
            "http://[::1]:3000/cb",
            "https://[::1]/cb",
            "https://app.example:1/cb",
        ] {
            assert!(is_redirect_uri(ok), "{ok}");
        }
        for bad in [
            "http://app.example/cb",
            "http://10.0.0.1/cb",
            "http://128.0.0.1/cb",
            "http://127.1/cb",
            "http://localhost.evil.example/cb",
            "http://[::2]/cb",
            "http://[::1/cb",
            "https://app.example:0/cb",
            "https://app.example:65536/cb",
            "https://app.example:99999/cb",
            "https://app.example:000080/cb",
        ] {
            assert!(!is_redirect_uri(bad), "{bad}");
        }
    }

    #[test]
    fn images_are_recognized_by_content() {
        assert_eq!(image_type(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(image_type(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(image_type(b"GIF89a"), None);
    }
}
