//! The TLS acceptor of a listener: a certificate chain and key from PEM
//! files, and, with a CA, client certificates required (mutual TLS).

use crate::config::TlsFiles;
use crate::error::{Error, Result};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{self, RootCertStore, ServerConfig};
use tokio_rustls::TlsAcceptor;

/// Builds the acceptor, naming the file and the option when one is wrong.
pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = certificates(&files.cert, "tls-cert")?;
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| bad("tls-key", &files.key, e.to_string()))?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| bad("tls-cert", &files.cert, e.to_string()))?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in certificates(ca, "tls-ca")? {
                roots
                    .add(cert)
                    .map_err(|e| bad("tls-ca", ca, e.to_string()))?;
            }
            let verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| bad("tls-ca", ca, e.to_string()))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| bad("tls-key", &files.key, e.to_string()))?;
    // Kafka clients speak their own protocol over TLS, without ALPN.
    config.alpn_protocols.clear();
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn certificates(path: &Path, option: &'static str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(option, path, e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(option, path, e.to_string()))?;
    if certs.is_empty() {
        return Err(bad(option, path, "no certificate in the file".into()));
    }
    Ok(certs)
}

fn bad(name: &'static str, path: &Path, message: String) -> Error {
    Error::InvalidOption {
        name,
        message: format!("{}: {message}", path.display()),
    }
}
