//! TLS for a connection: rustls over ring (the broker's listener uses the same stack). The
//! trusted CAs, a client certificate and key come as PEM text; the server name is the host
//! dialled unless one is given; `insecure` trusts any certificate and is only ever asked for.

use std::io;
use std::sync::Arc;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::crypto::{self, CryptoProvider};
use tokio_rustls::rustls::{self, ClientConfig, DigitallySignedStruct, RootCertStore};
use tokio_rustls::TlsConnector;

use crate::error::{Error, Result};

/// Where the system keeps its CA bundle, when no CA is given (as OpenSSL's SSL_CERT_FILE).
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
    "/usr/local/etc/openssl/cert.pem",
];

/// What a TLS client is made of, as a profile gives it (PEM text, not paths).
#[derive(Clone, Default)]
pub struct TlsOptions {
    /// CA certificates to trust; None: the system's bundle.
    pub ca_pem: Option<String>,
    /// Client certificate chain and its key (mutual TLS): both or neither.
    pub cert_pem: Option<String>,
    pub key_pem: Option<String>,
    /// The name to ask for (SNI) and check the certificate against, instead of the host dialled.
    pub server_name: Option<String>,
    /// Accept any certificate: no check of issuer or name. Only when explicitly asked.
    pub insecure: bool,
}

/// A client TLS configuration built once and shared by every connection of a client.
#[derive(Clone)]
pub struct Tls {
    connector: TlsConnector,
    server_name: Option<ServerName<'static>>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl Tls {
    /// Parses the PEMs and builds the configuration; an error names the option at fault.
    pub fn new(options: &TlsOptions) -> Result<Tls> {
        let provider = Arc::new(crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Config(format!("tls: {e}")))?;
        let builder = if options.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
        } else {
            let mut roots = RootCertStore::empty();
            let (pem, field) = match &options.ca_pem {
                Some(pem) => (pem.clone(), "tls.ca".to_string()),
                None => system_bundle()?,
            };
            for cert in certificates(&pem, &field)? {
                roots
                    .add(cert)
                    .map_err(|e| Error::Config(format!("{field}: {e}")))?;
            }
            builder.with_root_certificates(roots)
        };
        let mut config = match (&options.cert_pem, &options.key_pem) {
            (None, None) => builder.with_no_client_auth(),
            (Some(cert), Some(key)) => {
                let chain = certificates(cert, "tls.cert")?;
                let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(|_| {
                    Error::Config(
                        "tls.key: no unencrypted PKCS#8, PKCS#1 or SEC1 private key in the PEM"
                            .into(),
                    )
                })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| Error::Config(format!("tls.cert and tls.key: {e}")))?
            }
            _ => {
                return Err(Error::Config(
                    "a client certificate needs both tls.cert and tls.key".into(),
                ))
            }
        };
        // Kafka speaks its own protocol over TLS, without ALPN.
        config.alpn_protocols.clear();
        let server_name = match &options.server_name {
            Some(name) => Some(ServerName::try_from(name.clone()).map_err(|_| {
                Error::Config(format!("tls.servername: {name:?} is not a host name"))
            })?),
            None => None,
        };
        Ok(Tls {
            connector: TlsConnector::from(Arc::new(config)),
            server_name,
        })
    }

    /// Runs the handshake on a connected stream to `addr` ("host:port").
    pub(crate) async fn connect(
        &self,
        stream: TcpStream,
        addr: &str,
    ) -> Result<TlsStream<TcpStream>> {
        let name = match &self.server_name {
            Some(name) => name.clone(),
            None => ServerName::try_from(host_of(addr).to_string()).map_err(|_| Error::Tls {
                addr: addr.to_string(),
                message: format!("{:?} is not a host name; set tls.servername", host_of(addr)),
            })?,
        };
        self.connector
            .connect(name, stream)
            .await
            .map_err(|e| Error::Tls {
                addr: addr.to_string(),
                message: tls_error_text(&e),
            })
    }
}

/// The host of "host:port" or "[v6]:port".
fn host_of(addr: &str) -> &str {
    let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
    host.trim_start_matches('[').trim_end_matches(']')
}

/// rustls's words for a failed handshake (an io::Error wraps them).
fn tls_error_text(e: &io::Error) -> String {
    match e.get_ref() {
        Some(inner) => inner.to_string(),
        None => e.to_string(),
    }
}

fn certificates(pem: &str, field: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Config(format!("{field}: {e}")))?;
    if certs.is_empty() {
        return Err(Error::Config(format!("{field}: no certificate in the PEM")));
    }
    Ok(certs)
}

/// The system's CA bundle: $SSL_CERT_FILE, or the first of the usual places.
fn system_bundle() -> Result<(String, String)> {
    let from_env = std::env::var("SSL_CERT_FILE").ok();
    let paths = from_env
        .iter()
        .map(String::as_str)
        .chain(SYSTEM_BUNDLES.iter().copied());
    for path in paths {
        if let Ok(pem) = std::fs::read_to_string(path) {
            return Ok((pem, format!("the system CA bundle {path}")));
        }
    }
    Err(Error::Config(format!(
        "tls.ca: none given and no system CA bundle found (SSL_CERT_FILE, {})",
        SYSTEM_BUNDLES.join(", ")
    )))
}

/// `insecure`: any certificate is accepted; the handshake's signatures are still checked, so
/// the session is encrypted to whoever holds the key, whoever that is.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_of_strips_the_port_and_v6_brackets() {
        assert_eq!(host_of("b1.example.com:9093"), "b1.example.com");
        assert_eq!(host_of("127.0.0.1:9093"), "127.0.0.1");
        assert_eq!(host_of("[::1]:9093"), "::1");
    }

    #[test]
    fn bad_pems_name_their_field_without_quoting_them() {
        let err = Tls::new(&TlsOptions {
            ca_pem: Some("not a pem".into()),
            ..TlsOptions::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("tls.ca: no certificate"), "{err}");
        let secret = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n";
        let err = Tls::new(&TlsOptions {
            insecure: true,
            cert_pem: Some("x".into()),
            key_pem: Some(secret.into()),
            ..TlsOptions::default()
        })
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("invalid configuration: tls.cert"), "{err}");
        assert!(!err.contains("c2VjcmV0"), "{err}");
    }
}
