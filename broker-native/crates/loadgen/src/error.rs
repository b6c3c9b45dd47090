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
}

impl Error {
    pub fn protocol(e: impl std::fmt::Display) -> Error {
        Error::Protocol(e.to_string())
    }
}
