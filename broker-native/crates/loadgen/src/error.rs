//! The load engine's error type.

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("protocol: {0}")]
    Protocol(String),
    #[error("{api} failed with {}", kafka_error(*code))]
    Kafka { api: &'static str, code: i16 },
    #[error("invalid configuration: {0}")]
    Config(String),
    #[error("no broker reachable among {0:?}")]
    NoBroker(Vec<String>),
    /// A request unanswered within the client's request timeout.
    #[error("{0}")]
    TimedOut(String),
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

/// A Kafka error code as people look it up: `Kafka error code 56 (KAFKA_STORAGE_ERROR)`, the name
/// as Kafka's protocol guide spells it (the code alone when the protocol does not know it).
pub fn kafka_error(code: i16) -> String {
    let name = kafka_protocol::ResponseError::try_from_code(code).map(|e| format!("{e:?}"));
    match name {
        // A code the protocol does not name comes back as `Unknown(code)`.
        Some(name) if !name.contains('(') => {
            format!("Kafka error code {code} ({})", upper_snake(&name))
        }
        _ => format!("Kafka error code {code}"),
    }
}

/// `KafkaStorageError` as `KAFKA_STORAGE_ERROR`.
fn upper_snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 8);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_kafka_error_code_as_the_protocol_guide_does() {
        assert_eq!(kafka_error(56), "Kafka error code 56 (KAFKA_STORAGE_ERROR)");
        assert_eq!(
            kafka_error(6),
            "Kafka error code 6 (NOT_LEADER_OR_FOLLOWER)"
        );
        assert_eq!(kafka_error(-32000), "Kafka error code -32000");
    }
}
