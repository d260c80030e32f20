//! `https` configs with real traffic on loopback: termination with the config's certificate,
//! cipher-suite sets, session resumption.

mod common;

use std::sync::Arc;

use common::*;
use nubis_model::balancer::*;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, HandshakeKind, RootCertStore};
use tokio_rustls::TlsConnector;

fn material() -> (TlsMaterial, CertificateDer<'static>) {
    let mut p = rcgen::CertificateParams::new(vec!["lb.test".to_string()]).unwrap();
    p.distinguished_name.push(rcgen::DnType::CommonName, "lb.test");
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = p.self_signed(&key).unwrap();
    (TlsMaterial { cert_pem: cert.pem(), key_pem: key.serialize_pem() }, cert.der().clone())
}

fn client(
    root: &CertificateDer<'static>,
    provider: Option<rustls::crypto::CryptoProvider>,
    tls12_only: bool,
) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(root.clone()).unwrap();
    let provider = Arc::new(provider.unwrap_or_else(rustls::crypto::ring::default_provider));
    let versions: &[&rustls::SupportedProtocolVersion] =
        if tls12_only { &[&rustls::version::TLS12] } else { &[&rustls::version::TLS13, &rustls::version::TLS12] };
    Arc::new(
        ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(versions)
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth(),
    )
}

async fn tls_get(
    cfg: &Arc<ClientConfig>,
    to: std::net::SocketAddr,
) -> std::io::Result<(Response, Option<HandshakeKind>, Option<rustls::SupportedCipherSuite>)> {
    let tcp = connect_from("127.0.0.1", to).await?;
    let tls = TlsConnector::from(cfg.clone()).connect(ServerName::try_from("lb.test").unwrap(), tcp).await?;
    let kind = tls.get_ref().1.handshake_kind();
    let suite = tls.get_ref().1.negotiated_cipher_suite();
    let mut c = Client::new(tls);
    let r = c.get("/", "").await.ok_or_else(|| std::io::Error::other("no response"))?;
    Ok((r, kind, suite))
}

fn https(id: i64, port: u16, b: &Backend, m: &TlsMaterial, suites: CipherSuite) -> ConfigSpec {
    let mut c = config(id, port, Protocol::Https, vec![node(1, b, 1, NodeMode::Accept)]);
    c.tls = Some(m.clone());
    c.cipher_suite = suites;
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_terminates_tls_with_the_config_certificate() {
    init();
    let (m, root) = material();
    let a = backend("127.168.30.1:0", "a", Kind::Http).await;
    let dp = Dp::start(
        test_settings(),
        vec![balancer(30, "127.10.30.1", vec![https(1, 8443, &a, &m, CipherSuite::Recommended)])],
    )
    .await;
    let lb = dp.listening(30, 1).await;
    let (r, _, suite) = tls_get(&client(&root, None, false), lb).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.backend(), "a");
    assert!(r.body.contains("X-Forwarded-Proto: https\r\n"), "{}", r.body);
    assert!(r.body.contains("X-Forwarded-For: 127.0.0.1\r\n"), "{}", r.body);
    assert_eq!(suite.unwrap().version(), &rustls::version::TLS13);
    // A client that does not trust the certificate fails.
    let (_, other_root) = material();
    assert!(tls_get(&client(&other_root, None, false), lb).await.is_err());
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cipher_suite_legacy_accepts_what_recommended_refuses() {
    init();
    let (m, root) = material();
    let a = backend("127.168.31.1:0", "a", Kind::Http).await;
    let dp = Dp::start(
        test_settings(),
        vec![balancer(
            31,
            "127.10.31.1",
            vec![https(1, 8443, &a, &m, CipherSuite::Recommended), https(2, 8444, &a, &m, CipherSuite::Legacy)],
        )],
    )
    .await;
    let rec = dp.listening(31, 1).await;
    let leg = dp.listening(31, 2).await;
    let chacha12 = rustls::crypto::CryptoProvider {
        cipher_suites: vec![
            rustls::crypto::ring::cipher_suite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
            rustls::crypto::ring::cipher_suite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        ],
        ..rustls::crypto::ring::default_provider()
    };
    let old_client = client(&root, Some(chacha12), true);
    assert!(tls_get(&old_client, rec).await.is_err(), "recommended refuses TLS 1.2 CHACHA20");
    let (r, _, suite) = tls_get(&old_client, leg).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(suite.unwrap().version(), &rustls::version::TLS12);
    // Both accept TLS 1.2 AES-GCM.
    let gcm12 = client(&root, None, true);
    assert_eq!(tls_get(&gcm12, rec).await.unwrap().0.status, 200);
    assert_eq!(nubis_dataplane::tls::cipher_suites(CipherSuite::Recommended).len(), 7);
    assert_eq!(nubis_dataplane::tls::cipher_suites(CipherSuite::Legacy).len(), 9);
    dp.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_sessions_resume() {
    init();
    let (m, root) = material();
    let a = backend("127.168.32.1:0", "a", Kind::Http).await;
    let dp = Dp::start(
        test_settings(),
        vec![balancer(32, "127.10.32.1", vec![https(1, 8443, &a, &m, CipherSuite::Recommended)])],
    )
    .await;
    let lb = dp.listening(32, 1).await;
    for tls12 in [false, true] {
        let cfg = client(&root, None, tls12);
        let (_, first, _) = tls_get(&cfg, lb).await.unwrap();
        assert_eq!(first, Some(HandshakeKind::Full));
        let (r, second, _) = tls_get(&cfg, lb).await.unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(second, Some(HandshakeKind::Resumed), "tls12 only: {tls12}");
    }
    dp.handle.shutdown().await;
}
