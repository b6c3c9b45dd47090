//! The client's error type.

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("i/o with {addr}: {source}")]
    Io {
        addr: String,
        source: std::io::Error,
    },
    /// Bytes from the broker that are not a fair answer (sizes, shapes, correlation ids).
    #[error("protocol: {0}")]
    Protocol(String),
    #[error("connection to {0} closed")]
    Closed(String),
    /// A request beyond the connection's window of requests awaiting an answer.
    #[error("{addr}: {window} requests already await an answer")]
    WindowFull { addr: String, window: usize },
    /// A connect to `addr` failed recently and its back-off has not passed.
    #[error("{addr}: backing off after a failed connect")]
    BackingOff { addr: String },
    /// The TLS handshake failed (rustls's words: an unknown issuer, a name the certificate does
    /// not carry, an alert from the broker).
    #[error("TLS handshake with {addr} failed: {message}")]
    Tls { addr: String, message: String },
    /// The broker refused the SASL exchange (a mechanism it does not enable, a failed login).
    #[error("SASL with {addr}: {message}")]
    Sasl { addr: String, message: String },
    /// Security options that cannot be used (a PEM without a certificate, an unreadable token).
    #[error("invalid configuration: {0}")]
    Config(String),
}

impl Error {
    pub fn protocol(e: impl std::fmt::Display) -> Error {
        Error::Protocol(e.to_string())
    }

    pub(crate) fn io(addr: &str) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Io {
            addr: addr.to_string(),
            source,
        }
    }
}
