//! TLS for a server started with [`crate::ApiServerBuilder::tls`]: a certificate authority
//! minted at start signs the serving certificate (for `127.0.0.1` and `localhost`) and client
//! certificates. A client certificate authenticates as kube-apiserver's x509 authenticator reads
//! one — the user is the subject's common name, the groups its organizations — and is asked for
//! but not required, so token and anonymous requests still work over TLS. The CA's key never
//! leaves the process, so only certificates issued here verify; the server knows each one's
//! identity from when it issued it (rcgen writes one organization per subject, so a
//! certificate carries its first group only, the server the whole list).
//!
//! kubectl sends a kubeconfig's credentials only to https servers, so token and certificate
//! kubeconfigs for kubectl need this.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::RootCertStore;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio_rustls::TlsAcceptor;

use super::user::UserInfo;

/// A certificate issued by the server's CA and its key, PEM-encoded.
#[derive(Debug, Clone)]
pub(crate) struct IssuedCertificate {
    /// The certificate.
    pub(crate) cert_pem: String,
    /// Its private key (PKCS#8).
    pub(crate) key_pem: String,
}

/// The server's certificate authority and TLS acceptor.
pub(crate) struct Tls {
    ca: CertifiedIssuer<'static, KeyPair>,
    acceptor: TlsAcceptor,
    /// Issued client certificates (DER) and the users they were issued for.
    clients: Mutex<HashMap<Vec<u8>, UserInfo>>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls").finish_non_exhaustive()
    }
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Tls {
    /// A fresh CA, serving certificate and acceptor.
    pub(crate) fn new() -> Result<Self, String> {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "kubeward-testing-ca");
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(err)?)
            .map_err(err)?;
        let (server_cert, server_key) = serving_certificate(&ca)?;

        let mut roots = RootCertStore::empty();
        roots.add(ca.der().clone()).map_err(err)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .allow_unauthenticated()
                .build()
                .map_err(err)?;
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(err)?
            .with_client_cert_verifier(verifier)
            .with_single_cert(vec![server_cert.der().clone()], key)
            .map_err(err)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            ca,
            acceptor: TlsAcceptor::from(Arc::new(config)),
            clients: Mutex::new(HashMap::new()),
        })
    }

    /// The acceptor for incoming connections.
    pub(crate) fn acceptor(&self) -> TlsAcceptor {
        self.acceptor.clone()
    }

    /// The CA certificate, PEM-encoded (a kubeconfig's `certificate-authority-data`).
    pub(crate) fn ca_pem(&self) -> String {
        self.ca.pem()
    }

    /// The CA certificate, DER-encoded (a kube client's root certificate).
    pub(crate) fn ca_der(&self) -> Vec<u8> {
        self.ca.der().to_vec()
    }

    /// Issues another serving certificate for `127.0.0.1` and `localhost` (a real
    /// kube-apiserver's, behind the fault proxy that serves this one's).
    pub(crate) fn issue_serving(&self) -> Result<IssuedCertificate, String> {
        let (cert, key) = serving_certificate(&self.ca)?;
        Ok(IssuedCertificate {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// The CA's root store (to verify a server whose certificate this CA issued).
    pub(crate) fn roots(&self) -> Result<RootCertStore, String> {
        let mut roots = RootCertStore::empty();
        roots.add(self.ca.der().clone()).map_err(err)?;
        Ok(roots)
    }

    /// Issues a client certificate for `user`: common name the user name, organization the
    /// first group.
    pub(crate) fn issue(&self, user: &UserInfo) -> Result<IssuedCertificate, String> {
        let key = KeyPair::generate().map_err(err)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
        params
            .distinguished_name
            .push(DnType::CommonName, user.name.as_str());
        if let Some(group) = user.groups.first() {
            params
                .distinguished_name
                .push(DnType::OrganizationName, group.as_str());
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&key, &self.ca).map_err(err)?;
        self.clients
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(cert.der().to_vec(), user.clone());
        Ok(IssuedCertificate {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// The user of a verified client certificate.
    pub(crate) fn user_of(&self, cert: &CertificateDer<'_>) -> Option<UserInfo> {
        self.clients
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(cert.as_ref())
            .cloned()
    }
}

/// A serving certificate for `127.0.0.1` and `localhost` issued by `ca`, and its key.
fn serving_certificate(
    ca: &CertifiedIssuer<'static, KeyPair>,
) -> Result<(rcgen::Certificate, KeyPair), String> {
    let key = KeyPair::generate().map_err(err)?;
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .map_err(err)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.signed_by(&key, ca).map_err(err)?;
    Ok((cert, key))
}
