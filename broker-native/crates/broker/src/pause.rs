//! Fault injection: a node told to pause holds its requests, its
//! replication and its cluster upkeep until a wall-clock time, so that a
//! long enough pause moves leadership away from it.

use crate::clock::now_ms;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

/// Shared by a node's server, its replica fetchers and its upkeep.
#[derive(Debug, Default)]
pub struct Pause {
    /// Wall-clock ms until which the node is paused; 0 if it never was.
    until_ms: AtomicI64,
}

impl Pause {
    pub fn pause_for(&self, ms: i64) {
        self.until_ms.store(now_ms() + ms, Ordering::Release);
    }

    /// True while paused. A node never paused reads no clock.
    pub fn paused(&self) -> bool {
        let until = self.until_ms.load(Ordering::Acquire);
        until != 0 && until > now_ms()
    }

    /// Returns once the pause (if any) is over.
    pub async fn wait(&self) {
        loop {
            let left = self.until_ms.load(Ordering::Acquire) - now_ms();
            if left <= 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(left as u64)).await;
        }
    }
}
