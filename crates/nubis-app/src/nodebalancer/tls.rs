//! Checks of a config's certificate and key (spec section 1 step 8, reference `ssl_cert`,
//! `ssl_key`): the certificate chain parses, its subject is not blank, the key parses and belongs
//! to the first certificate. `ssl_commonname` and `ssl_fingerprint` are read from the
//! certificate. Key material never appears in an error or a log line.

use nubis_model::Problems;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// What the API shows of a certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CertInfo {
    /// The subject's common name ("" when the subject has none).
    pub commonname: String,
    /// SHA-1 of the DER certificate, upper-case hex pairs joined by colons (the reference's
    /// format: `00:01:...:13`).
    pub fingerprint: String,
    /// The certificate's SubjectPublicKeyInfo (DER), to match the key against.
    spki: Vec<u8>,
}

/// Parses the certificate chain of `ssl_cert`; problems are reported on `field`.
pub(crate) fn check_cert(p: &mut Problems, field: &str, pem: &str) -> Option<CertInfo> {
    let certs: Vec<CertificateDer<'static>> = match CertificateDer::pem_slice_iter(pem.as_bytes()).collect() {
        Ok(c) => c,
        Err(_) => {
            p.add(field, "Invalid certificate: the PEM does not parse");
            return None;
        }
    };
    let Some(leaf) = certs.first() else {
        p.add(field, "Invalid certificate: no certificate found in the PEM");
        return None;
    };
    for (i, c) in certs.iter().enumerate() {
        if x509_parser::parse_x509_certificate(c.as_ref()).is_err() {
            let which =
                if i == 0 { "the certificate".to_string() } else { format!("certificate {} of the chain", i + 1) };
            p.add(field, format!("Invalid certificate: {which} is not a valid X.509 certificate"));
            return None;
        }
    }
    let (_, cert) = x509_parser::parse_x509_certificate(leaf.as_ref()).ok()?;
    let subject = cert.subject();
    let mut values = Vec::new();
    for rdn in subject.iter() {
        for attr in rdn.iter() {
            values.push(attr.as_str().map(|s| s.trim().to_string()).unwrap_or_default());
        }
    }
    if values.is_empty() || values.iter().any(String::is_empty) {
        p.add(field, "Invalid certificate: its subject fields (country, common name and so on) must not be blank");
        return None;
    }
    let commonname =
        subject.iter_common_name().next().and_then(|cn| cn.as_str().ok()).map(str::to_string).unwrap_or_default();
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, leaf.as_ref());
    let fingerprint = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(":");
    Some(CertInfo { commonname, fingerprint, spki: cert.public_key().raw.to_vec() })
}

/// A parsed private key: only its public half is kept.
pub(crate) struct KeyInfo {
    spki: Vec<u8>,
}

/// Parses `ssl_key` (PKCS#8, PKCS#1 RSA or SEC1 EC, as PEM); problems are reported on `field`.
pub(crate) fn check_key(p: &mut Problems, field: &str, pem: &str) -> Option<KeyInfo> {
    let Ok(key) = PrivateKeyDer::from_pem_slice(pem.as_bytes()) else {
        p.add(field, "Invalid private key: the PEM does not parse");
        return None;
    };
    let provider = rustls::crypto::ring::default_provider();
    let Ok(signing) = provider.key_provider.load_private_key(key) else {
        p.add(field, "Invalid private key: unsupported or malformed key");
        return None;
    };
    let Some(spki) = signing.public_key() else {
        p.add(field, "Invalid private key: its public key cannot be derived");
        return None;
    };
    Some(KeyInfo { spki: spki.as_ref().to_vec() })
}

/// True when the key is the private half of the certificate's public key.
pub(crate) fn key_matches(cert: &CertInfo, key: &KeyInfo) -> bool {
    cert.spki == key.spki
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(p: Problems) -> Vec<String> {
        match p.finish() {
            Ok(()) => Vec::new(),
            Err(nubis_model::Error::Invalid(v)) => v.into_iter().map(|f| f.field.unwrap_or_default()).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn garbage_is_refused_on_the_right_field() {
        let mut p = Problems::new();
        assert!(check_cert(&mut p, "ssl_cert", "not a certificate").is_none());
        assert!(
            check_key(&mut p, "ssl_key", "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n").is_none()
        );
        assert_eq!(fields(p), ["ssl_cert", "ssl_key"]);
    }
}
