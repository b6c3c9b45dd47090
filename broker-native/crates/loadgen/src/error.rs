//! The load engine's error type.

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("i/o with {addr}: {source}")]
    Io {
        addr: String,
        source: std::io::Error,
    },
    #[error("protocol: {0}")]
    Protocol(String),
    #[error("{api} failed with Kafka error code {code}")]
    Kafka { api: &'static str, code: i16 },
    #[error("connection to {0} closed")]
    Closed(String),
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("no broker reachable among {0:?}")]
    NoBroker(Vec<String>),
    /// The client's other refusals (a full window, a connect backing off).
    #[error(transparent)]
    Client(kbench_client::Error),
}

impl From<kbench_client::Error> for Error {
    fn from(e: kbench_client::Error) -> Error {
        match e {
            kbench_client::Error::Io { addr, source } => Error::Io { addr, source },
            kbench_client::Error::Protocol(message) => Error::Protocol(message),
            kbench_client::Error::Closed(addr) => Error::Closed(addr),
            other => Error::Client(other),
        }
    }
}

impl Error {
    pub fn protocol(e: impl std::fmt::Display) -> Error {
        Error::Protocol(e.to_string())
    }
}
