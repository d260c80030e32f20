//! TLS termination for `https` configs: a rustls server configuration (ring provider only) built
//! from the config's PEM certificate chain and key, with the cipher-suite set the config names and
//! session resumption (stateless tickets and a server-side session cache).
//!
//! `cipher_suite` mapping (rustls implements only AEAD suites with forward secrecy, so neither set
//! can include CBC, RSA key exchange, or TLS < 1.2):
//!
//! | `cipher_suite` | TLS 1.3 | TLS 1.2 |
//! |---|---|---|
//! | `recommended` | AES-256-GCM, AES-128-GCM, CHACHA20-POLY1305 | ECDHE-{ECDSA,RSA}-AES-{256,128}-GCM |
//! | `legacy` | same | the above plus ECDHE-{ECDSA,RSA}-CHACHA20-POLY1305 (every TLS 1.2 suite rustls has) |
//!
//! Key material is never logged: errors name the problem, never the PEM.

use std::sync::Arc;

use nubis_model::balancer::{CipherSuite, TlsMaterial};
use rustls::crypto::ring as provider;
use rustls::server::ServerSessionMemoryCache;
use rustls::{ServerConfig, SupportedCipherSuite};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Server sessions remembered for stateful resumption (TLS 1.2 session ids).
pub const SESSION_CACHE_SIZE: usize = 20_000;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("the certificate PEM holds no certificate")]
    NoCertificate,
    #[error("the certificate PEM does not parse")]
    BadCertificate,
    #[error("the private key PEM does not parse")]
    BadKey,
    #[error("the TLS configuration was refused: {0}")]
    Rustls(#[from] rustls::Error),
}

/// The cipher suites a config's `cipher_suite` allows.
pub fn cipher_suites(c: CipherSuite) -> Vec<SupportedCipherSuite> {
    use provider::cipher_suite as cs;
    let mut v = vec![
        cs::TLS13_AES_256_GCM_SHA384,
        cs::TLS13_AES_128_GCM_SHA256,
        cs::TLS13_CHACHA20_POLY1305_SHA256,
        cs::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        cs::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        cs::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        cs::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    ];
    if c == CipherSuite::Legacy {
        v.push(cs::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256);
        v.push(cs::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256);
    }
    v
}

/// Builds the server configuration of an `https` config.
pub fn server_config(m: &TlsMaterial, suites: CipherSuite) -> Result<Arc<ServerConfig>, TlsError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(m.cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|_| TlsError::BadCertificate)?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate);
    }
    let key = PrivateKeyDer::from_pem_slice(m.key_pem.as_bytes()).map_err(|_| TlsError::BadKey)?;
    let prov = rustls::crypto::CryptoProvider { cipher_suites: cipher_suites(suites), ..provider::default_provider() };
    let mut cfg = ServerConfig::builder_with_provider(Arc::new(prov))
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    cfg.session_storage = ServerSessionMemoryCache::new(SESSION_CACHE_SIZE);
    cfg.ticketer = provider::Ticketer::new()?;
    Ok(Arc::new(cfg))
}
