//! kbench's native load engine: producers and consumers that speak the Kafka protocol
//! themselves, against any Kafka-protocol broker.

pub mod batch;
pub mod batch_reader;
mod connect;
pub mod consumer;
mod engine_task;
pub mod error;
pub mod group;
pub mod histogram;
pub mod metadata;
pub mod options;
pub mod partitioner;
pub mod payload;
pub mod producer;
pub mod stats;
pub mod verify;

pub use batch::Compression;
pub use consumer::{Consumer, ConsumerConfig, ConsumerProperties, StartAt};
pub use error::{Error, Result};
pub use histogram::{Histogram, HistogramSnapshot};
/// TLS and SASL for the engine's connections, as kbench-client takes them.
pub use kbench_client::{Sasl, ScramHash, Security, Tls, TlsOptions, TokenSource};
pub use options::{ConsumerOptions, ProducerOptions};
pub use producer::{Keys, Producer, ProducerConfig, ProducerProperties, Size};
pub use stats::IntervalStats;
