//! Kafka-protocol client plumbing shared by producers and consumers.

pub mod connection;

pub use connection::{decode_response, Connection, Response, SimpleClient};
