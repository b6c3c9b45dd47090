//! The wire layouts, generated from Apache Kafka's message definitions by
//! `scripts/gen-shapes.mjs`.

pub mod data;
pub mod headers;
pub mod requests;
pub mod responses;
