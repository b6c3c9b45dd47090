//! The load engine's error type.

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("protocol: {0}")]
    Protocol(String),
    #[error("{api} failed with Kafka error code {code}")]
    Kafka { api: &'static str, code: i16 },
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("no broker reachable among {0:?}")]
    NoBroker(Vec<String>),
    /// From a connection: i/o, a closed connection, bytes from a broker refused, ...
    #[error(transparent)]
    Client(#[from] kbench_client::Error),
}

impl Error {
    pub fn protocol(e: impl std::fmt::Display) -> Error {
        Error::Protocol(e.to_string())
    }

    /// The connection failed or closed: worth connecting again.
    pub fn is_connection_lost(&self) -> bool {
        matches!(
            self,
            Error::Client(kbench_client::Error::Io { .. } | kbench_client::Error::Closed(_))
        )
    }
}
