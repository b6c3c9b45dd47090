//! What the engine's connections are opened with (see kbench-client).

use std::time::Duration;

use kafka_protocol::protocol::StrBytes;
use kbench_client::{Backoff, ConnectOptions, Security, SimpleClient};

use crate::error::Result;

const CLIENT_ID: &str = "kbench-native";
/// The wait after a failed connect before the engine tries that broker again.
pub(crate) const RETRY_BACKOFF: Duration = Duration::from_millis(100);

/// Options for connections that let `window` requests await an answer, secured as asked (the
/// TLS configuration is shared, not rebuilt: cloning `Security` clones pointers).
pub(crate) fn options(window: usize, security: &Security) -> ConnectOptions {
    ConnectOptions::new(StrBytes::from_static_str(CLIENT_ID))
        .with_window(window)
        .with_backoff(Backoff::constant(RETRY_BACKOFF))
        .with_security(security.clone())
}

/// A connection of its own for one call at a time (metadata, setup and group calls).
pub(crate) async fn simple(addr: &str, security: &Security) -> Result<SimpleClient> {
    Ok(SimpleClient::connect(addr, &options(1, security)).await?)
}
