//! Kafka wire shapes and a bounds walker, for bytes from the network.
//!
//! kafka-protocol's decoders reserve a vector from an array's count as read from the wire
//! (`Vec::with_capacity(n)`), so a message of a few bytes claiming 0x7fffffff elements makes the
//! process ask for gigabytes and abort. Whatever decodes bytes from a peer walks them first with
//! this crate: the broker its requests, the load engine a broker's responses and the consumer
//! protocol messages other group members wrote. The shapes ([`shapes`]) are generated from Apache
//! Kafka's message definitions by `scripts/gen-shapes.mjs`; a test writes random messages from
//! each shape and checks kafka-protocol decodes them to the last byte.

mod shape;
pub mod shapes;
mod walk;

pub use shape::{Field, Shape, Ty};
pub use walk::walk;

/// Why bytes were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No shape was generated for this API (add it to `scripts/gen-shapes.mjs`).
    #[error("no {kind} shape for API key {api_key}")]
    NoShape { kind: &'static str, api_key: i16 },
    #[error("{name} version {version} is not defined")]
    UnknownVersion { name: &'static str, version: i16 },
    /// A count, size or field that does not fit in the bytes given.
    #[error("{name} v{version}: {reason}")]
    Malformed {
        name: &'static str,
        version: i16,
        reason: String,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Checks a request body (the bytes after the request header) of `api_key` at `version`.
/// An API without a shape is [`Error::NoShape`]; a broker may leave those to its decoder, which
/// refuses them.
pub fn check_request(api_key: i16, version: i16, body: &[u8]) -> Result<()> {
    let shape = shapes::requests::by_key(api_key).ok_or(Error::NoShape {
        kind: "request",
        api_key,
    })?;
    walk(shape, version, body).map(drop)
}

/// Checks a response frame (after its size prefix: the response header, then the body) of
/// `api_key` at `version`.
pub fn check_response(api_key: i16, version: i16, frame: &[u8]) -> Result<()> {
    let shape = shapes::responses::by_key(api_key).ok_or(Error::NoShape {
        kind: "response",
        api_key,
    })?;
    let header_version = response_header_version(shape, version);
    let header = walk(&shapes::headers::RESPONSE_HEADER, header_version, frame)?;
    walk(shape, version, &frame[header..]).map(drop)
}

/// The response header's version for a response of `shape` at `version`: 1 (with tagged fields)
/// in flexible versions, except ApiVersions, whose header stays at 0 so that a client can read
/// the versions a broker supports before it knows them.
pub fn response_header_version(shape: &Shape, version: i16) -> i16 {
    const API_VERSIONS: i16 = 18;
    i16::from(shape.is_flexible(version) && shape.api_key != API_VERSIONS)
}
