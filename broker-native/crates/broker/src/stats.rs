//! Cheap counters the JS handle and the binary read.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct Stats {
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
    pub produce_requests: AtomicU64,
    pub fetch_requests: AtomicU64,
    /// Open connections right now.
    pub connections: AtomicU64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatsSnapshot {
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub produce_requests: u64,
    pub fetch_requests: u64,
    pub connections: u64,
    pub log_size_bytes: u64,
}

impl Stats {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn snapshot(&self, log_size_bytes: u64) -> StatsSnapshot {
        StatsSnapshot {
            bytes_in: self.bytes_in.load(Ordering::Relaxed),
            bytes_out: self.bytes_out.load(Ordering::Relaxed),
            produce_requests: self.produce_requests.load(Ordering::Relaxed),
            fetch_requests: self.fetch_requests.load(Ordering::Relaxed),
            connections: self.connections.load(Ordering::Relaxed),
            log_size_bytes,
        }
    }
}
