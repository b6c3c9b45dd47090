//! What the engine's connections are opened with (see kbench-client).

use std::time::Duration;

use kafka_protocol::protocol::StrBytes;
use kbench_client::{Backoff, ConnectOptions, SimpleClient};

use crate::error::Result;

const CLIENT_ID: &str = "kbench-native";
/// The wait after a failed connect before the engine tries that broker again.
pub(crate) const RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// Options for connections that let `window` requests await an answer.
pub(crate) fn options(window: usize) -> ConnectOptions {
    ConnectOptions::new(StrBytes::from_static_str(CLIENT_ID))
        .with_window(window)
        .with_backoff(Backoff::constant(RETRY_BACKOFF))
}

/// A connection of its own for one call at a time (metadata, setup and group calls).
pub(crate) async fn simple(addr: &str) -> Result<SimpleClient> {
    Ok(SimpleClient::connect(addr, &options(1)).await?)
}
