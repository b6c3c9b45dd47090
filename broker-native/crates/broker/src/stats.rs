//! Cheap counters the JS handle and the binary read.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(Debug, Default)]
pub struct Stats {
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
    pub produce_requests: AtomicU64,
    pub fetch_requests: AtomicU64,
    /// Open connections right now.
    pub connections: AtomicU64,
}

/// What storage counts itself: fdatasyncs of log segments (the fsync
/// policy's cost) and their latency. Shared with every partition through
/// `LogConfig::stats`.
#[derive(Debug, Default)]
pub struct StorageStats {
    pub fsyncs: AtomicU64,
    pub fsync_micros_total: AtomicU64,
    pub fsync_micros_max: AtomicU64,
}

impl StorageStats {
    /// Counts one fdatasync that took `took`.
    pub fn record_fsync(&self, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        self.fsync_micros_total.fetch_add(micros, Ordering::Relaxed);
        self.fsync_micros_max.fetch_max(micros, Ordering::Relaxed);
    }
}

/// What a cluster node counts of its replication (see
/// `ClusterNode::add_stats`).
#[derive(Debug, Default)]
pub struct ClusterStats {
    pub isr_shrinks: AtomicU64,
    pub isr_expands: AtomicU64,
    pub leader_elections: AtomicU64,
    pub replicated_bytes: AtomicU64,
}

impl ClusterStats {
    pub fn replicated_bytes(&self, n: usize) {
        self.replicated_bytes.fetch_add(n as u64, Ordering::Relaxed);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatsSnapshot {
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub produce_requests: u64,
    pub fetch_requests: u64,
    pub connections: u64,
    pub log_size_bytes: u64,
    /// fdatasyncs of log segments since start.
    pub fsyncs: u64,
    /// Their total and largest duration, in microseconds.
    pub fsync_micros_total: u64,
    pub fsync_micros_max: u64,
    /// Cluster nodes only: partitions led here with fewer in-sync replicas
    /// than replicas, ISR changes written by this node, leaderships taken,
    /// and bytes this node appended as a follower.
    pub under_replicated: u64,
    pub isr_shrinks: u64,
    pub isr_expands: u64,
    pub leader_elections: u64,
    pub replicated_bytes: u64,
}

impl Stats {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn snapshot(&self, log_size_bytes: u64, storage: &StorageStats) -> StatsSnapshot {
        StatsSnapshot {
            bytes_in: self.bytes_in.load(Ordering::Relaxed),
            bytes_out: self.bytes_out.load(Ordering::Relaxed),
            produce_requests: self.produce_requests.load(Ordering::Relaxed),
            fetch_requests: self.fetch_requests.load(Ordering::Relaxed),
            connections: self.connections.load(Ordering::Relaxed),
            log_size_bytes,
            fsyncs: storage.fsyncs.load(Ordering::Relaxed),
            fsync_micros_total: storage.fsync_micros_total.load(Ordering::Relaxed),
            fsync_micros_max: storage.fsync_micros_max.load(Ordering::Relaxed),
            ..StatsSnapshot::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsyncs_add_up_and_keep_the_largest() {
        let storage = StorageStats::default();
        storage.record_fsync(Duration::from_micros(30));
        storage.record_fsync(Duration::from_micros(500));
        storage.record_fsync(Duration::from_micros(70));
        let s = Stats::default().snapshot(7, &storage);
        assert_eq!(
            (
                s.fsyncs,
                s.fsync_micros_total,
                s.fsync_micros_max,
                s.log_size_bytes
            ),
            (3, 600, 500, 7)
        );
    }
}
