//! Cheap counters the JS handle and the binary read.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

#[derive(Debug, Default)]
pub struct Stats {
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
    pub records_in: AtomicU64,
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
    /// Fault injection (slow-disk): microseconds added to each fdatasync,
    /// until a wall-clock ms (i64::MAX: until healed; 0: no delay).
    sync_delay_micros: AtomicU64,
    sync_delay_until_ms: AtomicI64,
}

impl StorageStats {
    /// Adds `delay` to each fdatasync from now, for `ms` (None: until
    /// `slow_down` again with a zero delay).
    pub fn slow_down(&self, delay: Duration, ms: Option<i64>) {
        let micros = u64::try_from(delay.as_micros()).unwrap_or(u64::MAX);
        let until = match ms {
            _ if micros == 0 => 0,
            None => i64::MAX,
            Some(ms) => crate::clock::now_ms().saturating_add(ms.max(0)),
        };
        self.sync_delay_micros.store(micros, Ordering::Release);
        self.sync_delay_until_ms.store(until, Ordering::Release);
    }

    /// Sleeps on the syncing thread for the slow-disk delay, if one is in
    /// force. Reads no clock when none ever was.
    pub fn slow_disk(&self) {
        let until = self.sync_delay_until_ms.load(Ordering::Acquire);
        if until == 0 || until <= crate::clock::now_ms() {
            return;
        }
        let micros = self.sync_delay_micros.load(Ordering::Acquire);
        std::thread::sleep(Duration::from_micros(micros));
    }

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

/// The one list of the figures a broker reports, each a `u64` with its
/// doc and its kind (`counter`: only grows while the broker runs;
/// `gauge`: a level now): `StatsSnapshot` below, the addon's
/// `BrokerStats` object (crates/napi, and from it `BrokerStats` in
/// index.d.ts) and the `/metrics` exposition (`metrics`) are all built
/// from it, so a field is added here and nowhere else. Calls
/// `$emit! { #[doc = ".."] kind field, .. }`; the docs are `#[doc]`
/// attributes, not `///`, which would reach napi as raw strings it prints
/// with their `r"`.
#[macro_export]
macro_rules! broker_stats_fields {
    ($emit:path) => {
        $emit! {
            #[doc = "Bytes read from client and replica connections."]
            counter bytes_in,
            #[doc = "Bytes written to client and replica connections."]
            counter bytes_out,
            #[doc = "Records appended by Produce requests."]
            counter records_in,
            #[doc = "Produce requests handled."]
            counter produce_requests,
            #[doc = "Fetch requests handled (consumers and followers)."]
            counter fetch_requests,
            #[doc = "Open connections right now."]
            gauge connections,
            #[doc = "Partitions this node holds (led or followed)."]
            gauge partitions,
            #[doc = "Bytes of log segments on disk."]
            gauge log_size_bytes,
            #[doc = "fdatasyncs of log segments since start."]
            counter fsyncs,
            #[doc = "Their total duration, in microseconds."]
            counter fsync_micros_total,
            #[doc = "The largest fdatasync duration since start, in microseconds."]
            gauge fsync_micros_max,
            #[doc = "Cluster nodes only: partitions led here that are"]
            #[doc = "under-replicated now (fewer in-sync replicas than replicas)."]
            gauge under_replicated,
            #[doc = "Cluster nodes only: ISR changes written by this node."]
            counter isr_shrinks,
            #[doc = "Cluster nodes only: ISR expansions written by this node."]
            counter isr_expands,
            #[doc = "Cluster nodes only: leaderships taken."]
            counter leader_elections,
            #[doc = "Cluster nodes only: bytes this node appended as a follower."]
            counter replicated_bytes,
        }
    };
}

macro_rules! snapshot_struct {
    ($($(#[doc = $doc:literal])* $kind:ident $field:ident,)*) => {
        /// A broker's figures at one moment: see `broker_stats_fields!`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct StatsSnapshot {
            $($(#[doc = $doc])* pub $field: u64,)*
        }
    };
}

broker_stats_fields!(snapshot_struct);

impl Stats {
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub fn snapshot(
        &self,
        log_size_bytes: u64,
        partitions: u64,
        storage: &StorageStats,
    ) -> StatsSnapshot {
        StatsSnapshot {
            records_in: self.records_in.load(Ordering::Relaxed),
            partitions,
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
        let s = Stats::default().snapshot(7, 0, &storage);
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
