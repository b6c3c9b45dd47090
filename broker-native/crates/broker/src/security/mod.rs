//! What a listener asks of a client before it serves it: a TLS handshake
//! (`tls`), and SASL authentication (`sasl`, with `scram` for the
//! SCRAM-SHA-* exchange). Built once per listener from the config; no I/O
//! after that (the server drives the handshake, the handlers the SASL steps).

pub mod sasl;
pub mod scram;
pub mod tls;

use crate::config::Security;
use crate::error::Result;
use std::sync::Arc;

/// One listener's security, ready to use.
#[derive(Default)]
pub struct Listener {
    /// Wraps every accepted stream in TLS.
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    /// Every connection authenticates before anything but ApiVersions.
    pub sasl: Option<Arc<sasl::Authenticator>>,
}

impl Listener {
    /// Reads the TLS files and salts the users' passwords.
    pub fn open(security: &Security) -> Result<Listener> {
        Ok(Listener {
            tls: security.tls.as_ref().map(tls::acceptor).transpose()?,
            sasl: security
                .sasl
                .as_ref()
                .map(|sasl| sasl::Authenticator::new(sasl).map(Arc::new))
                .transpose()?,
        })
    }

    /// A listener that asks nothing (PLAINTEXT).
    pub fn plaintext() -> Listener {
        Listener::default()
    }
}
