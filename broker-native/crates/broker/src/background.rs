//! A running node's upkeep of its log: retention passes and interval
//! flushes, each on the blocking pool, until the lifecycle aborts them.

use crate::clock::now_ms;
use crate::storage::Log;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Starts the log's background tasks.
pub fn spawn(log: &Arc<Log>, retention_check_interval: Duration) -> Vec<JoinHandle<()>> {
    vec![
        tokio::spawn(enforce_retention(log.clone(), retention_check_interval)),
        tokio::spawn(flush_on_interval(log.clone())),
    ]
}

/// Runs a retention pass every `check_interval` (file deletion on the
/// blocking pool) until aborted.
async fn enforce_retention(log: Arc<Log>, check_interval: Duration) {
    let mut every = tokio::time::interval(check_interval);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    every.tick().await;
    loop {
        every.tick().await;
        let pass = log.clone();
        let outcome = tokio::task::spawn_blocking(move || pass.retention_pass(now_ms())).await;
        match outcome {
            Ok(Ok(0)) => {}
            Ok(Ok(deleted)) => tracing::info!(deleted, "retention deleted segments"),
            Ok(Err(e)) => tracing::warn!(error = %e, "retention pass failed"),
            Err(e) => tracing::warn!(error = %e, "retention pass panicked"),
        }
    }
}

/// Fsyncs the partitions whose `interval:<ms>` policy (broker-wide, or a
/// topic's flush.ms) is due, on the blocking pool, until aborted.
async fn flush_on_interval(log: Arc<Log>) {
    let mut every = tokio::time::interval(log.flush_check_interval());
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        if !log.flush_due() {
            continue;
        }
        let pass = log.clone();
        match tokio::task::spawn_blocking(move || pass.flush_dirty()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "interval flush failed"),
            Err(e) => tracing::warn!(error = %e, "interval flush panicked"),
        }
    }
}
