//! The broker's one error type.

use kafka_protocol::ResponseError;

/// Everything that can go wrong inside the broker.
///
/// `Kafka` carries a protocol error code so a handler can turn a storage or
/// validation failure into a per-partition error instead of dropping the
/// connection.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("io: {0}")]
    Io(#[from] std::io::Error),

    #[error("{message} (kafka error {code:?})")]
    Kafka {
        code: ResponseError,
        message: String,
    },

    #[error("frame of {size} bytes exceeds the maximum of {max}")]
    FrameTooLarge { size: usize, max: usize },

    #[error("malformed request: {0}")]
    Malformed(String),

    #[error("unsupported api key {api_key} version {version}")]
    UnsupportedApi { api_key: i16, version: i16 },

    #[error("invalid option {name}: {message}")]
    InvalidOption { name: &'static str, message: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn kafka(code: ResponseError, message: impl Into<String>) -> Self {
        Error::Kafka {
            code,
            message: message.into(),
        }
    }

    /// The Kafka error code a response should carry for this failure.
    pub fn code(&self) -> i16 {
        match self {
            Error::Kafka { code, .. } => code.code(),
            Error::Io(_) => ResponseError::KafkaStorageError.code(),
            Error::FrameTooLarge { .. } | Error::Malformed(_) => {
                ResponseError::InvalidRequest.code()
            }
            Error::UnsupportedApi { .. } => ResponseError::UnsupportedVersion.code(),
            Error::InvalidOption { .. } => ResponseError::InvalidConfig.code(),
        }
    }
}
