//! Durability: what each fsync policy asks of an append. Under `batch` the
//! partition's [`GroupCommit`] (storage/group_commit.rs) has the flusher
//! sync it off the append path; under `interval` the segment joins the
//! interval flusher's queue.

use super::super::group_commit::Durability;
use super::super::segment::Segment;
use super::Partition;
use crate::config::FsyncPolicy;
use crate::error::Result;
use std::sync::Arc;
use tokio::sync::watch;

impl Partition {
    /// What the fsync policy asks of an append that wrote up to `next`
    /// into `active`, called under the append lock: nothing, a place in
    /// the batch flusher's round, or a place in the interval flusher's
    /// queue.
    pub(super) fn after_write(&self, policy: FsyncPolicy, active: &Arc<Segment>, next: i64) {
        match policy {
            FsyncPolicy::None => {}
            FsyncPolicy::Batch => self.durable.written(active, next),
            FsyncPolicy::Interval(every) => {
                // An interval too long to represent means never.
                if let Some(at) = std::time::Instant::now().checked_add(every) {
                    if active.mark_queued() {
                        self.shared.flush_queue.push(at, active.clone());
                    }
                }
            }
        }
    }

    /// The wait for offsets below `next` to be durable: ready at once
    /// unless the policy is `batch`.
    pub(super) fn durability(&self, policy: FsyncPolicy, next: i64) -> Durability {
        match policy {
            FsyncPolicy::Batch => self.durable.wait_for(next),
            _ => Durability::ready(),
        }
    }

    /// Returns once every offset below `next` is on disk (blocking: not
    /// for tokio workers).
    pub fn sync_through(&self, next: i64) -> Result<()> {
        self.durable.wait_for(next).wait_blocking()
    }

    /// The end of what this replica has made durable, as the high
    /// watermark counts it: under `batch` the offsets synced so far, under
    /// `none` and `interval` the log end (durability is not waited for).
    pub fn durable_end(&self) -> i64 {
        let log_end = self.log_end_offset();
        match self.fsync_policy() {
            FsyncPolicy::Batch => self.durable.through().min(log_end),
            _ => log_end,
        }
    }

    /// The segment appends go to (tests that hold its sync).
    #[cfg(test)]
    pub(crate) fn local_active_for_tests(&self) -> Arc<Segment> {
        self.local.active()
    }

    /// Wakes when the durable offset (under `batch`) moves.
    pub fn subscribe_durable(&self) -> watch::Receiver<i64> {
        self.durable.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LogConfig, Partition};
    use crate::config::FsyncPolicy;
    use crate::storage::batch::test_support::batch;
    use crate::topic_config::TopicConfig;
    use kafka_protocol::ResponseError;
    use std::path::Path;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, RwLock};

    fn open_fsync(dir: &Path, fsync: FsyncPolicy, topic_config: TopicConfig) -> Partition {
        Partition::open(
            dir,
            LogConfig {
                fsync,
                ..LogConfig::default()
            },
            Arc::new(RwLock::new(topic_config)),
            Arc::new(AtomicU64::new(0)),
        )
        .unwrap()
    }

    fn fsyncs(partition: &Partition) -> u64 {
        partition.config.stats.fsyncs.load(Ordering::Relaxed)
    }

    #[test]
    fn no_fsync_policy_never_syncs_on_append() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open_fsync(dir.path(), FsyncPolicy::None, TopicConfig::default());
        for _ in 0..5 {
            partition.append(&batch(2, 10)).unwrap();
        }
        assert_eq!(fsyncs(&partition), 0);
        assert!(partition.shared.flush_queue.is_empty());
        assert!(partition.local.active().is_unsynced());
    }

    #[test]
    fn batch_policy_syncs_before_append_returns() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open_fsync(dir.path(), FsyncPolicy::Batch, TopicConfig::default());
        partition.append(&batch(2, 10)).unwrap();
        assert_eq!(fsyncs(&partition), 1);
        assert!(!partition.local.active().is_unsynced());
        partition.append(&batch(2, 10)).unwrap();
        assert_eq!(fsyncs(&partition), 2);
        let stats = &partition.config.stats;
        assert!(
            stats.fsync_micros_max.load(Ordering::Relaxed)
                <= stats.fsync_micros_total.load(Ordering::Relaxed)
        );
        // Offsets already on disk need no sync.
        partition.sync_through(4).unwrap();
        assert_eq!(fsyncs(&partition), 2);
    }

    #[test]
    fn concurrent_appenders_share_one_fsync() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open_fsync(dir.path(), FsyncPolicy::Batch, TopicConfig::default());
        let one = batch(1, 10);
        let active = partition.local.active();
        std::thread::scope(|scope| {
            let held = active.hold_sync();
            let appenders: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| partition.append(&one).unwrap()))
                .collect();
            // Every appender has written; the first one waits in fdatasync,
            // the others wait for it.
            while partition.log_end_offset() < 4 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            drop(held);
            for appender in appenders {
                appender.join().unwrap();
            }
        });
        assert_eq!(fsyncs(&partition), 1);
        assert!(partition.durable_end() >= 4);
    }

    #[test]
    fn a_retried_batch_under_batch_policy_is_acknowledged_once_durable() {
        use crate::storage::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let partition = open_fsync(dir.path(), FsyncPolicy::Batch, TopicConfig::default());
        let once = idempotent_batch(3, 0, 0, 2);
        partition.append(&once).unwrap();
        let dup = partition.append(&once).unwrap();
        assert_eq!((dup.base_offset, dup.last_offset), (0, 1));
        assert_eq!(partition.log_end_offset(), 2);
        assert_eq!(fsyncs(&partition), 1);
    }

    #[test]
    fn pending_appends_resolve_in_order_with_one_sync_per_round() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open_fsync(dir.path(), FsyncPolicy::Batch, TopicConfig::default());
        let active = partition.local.active();
        let held = active.hold_sync();
        // The flusher is stuck in the first round's sync: every append
        // returns at once, written but not durable.
        let waits: Vec<_> = (0..3)
            .map(|_| partition.append_pending(&batch(2, 10)).unwrap())
            .collect();
        assert_eq!(partition.log_end_offset(), 6);
        assert_eq!(partition.durable_end(), 0);
        assert!(waits.iter().all(|(_, d)| !d.is_ready()));
        drop(held);
        let mut bases = Vec::new();
        for (appended, durability) in waits {
            durability.wait_blocking().unwrap();
            bases.push(appended.base_offset);
        }
        assert_eq!(bases, vec![0, 2, 4]);
        assert_eq!(partition.durable_end(), 6);
        // One fdatasync covered all three (the second round found nothing
        // left unsynced).
        assert_eq!(fsyncs(&partition), 1);
    }

    #[test]
    fn a_failed_fdatasync_fails_the_waiting_appends_with_a_storage_error() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open_fsync(dir.path(), FsyncPolicy::Batch, TopicConfig::default());
        let active = partition.local.active();
        let held = active.hold_sync();
        let (_, durability) = partition.append_pending(&batch(2, 10)).unwrap();
        // The segment's file vanishes under the broker: the flusher cannot
        // reopen it to sync.
        partition.config.files.clear();
        std::fs::remove_file(active.log_path()).unwrap();
        drop(held);
        let err = durability.wait_blocking().unwrap_err();
        assert_eq!(err.code(), ResponseError::KafkaStorageError.code());
        assert!(err.to_string().contains("fdatasync failed"), "{err}");
        assert_eq!(partition.durable_end(), 0);
        assert_eq!(fsyncs(&partition), 0);
    }

    #[test]
    fn truncation_during_a_pending_sync_fails_only_the_cut_appends() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open_fsync(dir.path(), FsyncPolicy::Batch, TopicConfig::default());
        let active = partition.local.active();
        let held = active.hold_sync();
        let (_, kept) = partition.append_pending(&batch(2, 10)).unwrap();
        let (_, cut) = partition.append_pending(&batch(2, 10)).unwrap();
        partition.truncate_to(2).unwrap();
        let err = cut.wait_blocking().unwrap_err();
        assert_eq!(err.code(), ResponseError::NotLeaderOrFollower.code());
        drop(held);
        kept.wait_blocking().unwrap();
        assert_eq!(partition.log_end_offset(), 2);
        assert_eq!(partition.durable_end(), 2);
        // Appends after the cut are made durable as before.
        let (appended, durability) = partition.append_pending(&batch(1, 10)).unwrap();
        durability.wait_blocking().unwrap();
        assert_eq!(appended.base_offset, 2);
        assert_eq!(partition.durable_end(), 3);
    }

    #[test]
    fn interval_policy_queues_a_dirty_segment_once_and_flushes_it_when_due() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open_fsync(
            dir.path(),
            FsyncPolicy::Interval(std::time::Duration::from_millis(50)),
            TopicConfig::default(),
        );
        for _ in 0..3 {
            partition.append(&batch(1, 10)).unwrap();
        }
        assert_eq!(fsyncs(&partition), 0);
        let queue = &partition.shared.flush_queue;
        assert_eq!(queue.len(), 1);
        let stats = &partition.config.stats;
        let now = std::time::Instant::now();
        assert_eq!(queue.flush_due(now, stats).unwrap(), 0);
        let later = now + std::time::Duration::from_millis(60);
        assert_eq!(queue.flush_due(later, stats).unwrap(), 1);
        assert_eq!(fsyncs(&partition), 1);
        assert!(queue.is_empty());
        partition.append(&batch(1, 10)).unwrap();
        assert_eq!(queue.len(), 1);
    }

    #[test]
    fn topic_flush_configs_override_the_broker_policy() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open_fsync(
            dir.path(),
            FsyncPolicy::None,
            TopicConfig {
                flush_messages: Some(1),
                ..TopicConfig::default()
            },
        );
        partition.append(&batch(1, 10)).unwrap();
        assert_eq!(fsyncs(&partition), 1);
        {
            let mut config = partition.topic_config().write().unwrap();
            config.flush_messages = None;
            config.flush_ms = Some(0);
        }
        assert_eq!(
            partition.fsync_policy(),
            FsyncPolicy::Interval(std::time::Duration::ZERO)
        );
        partition.append(&batch(1, 10)).unwrap();
        assert_eq!(fsyncs(&partition), 1);
        let queue = &partition.shared.flush_queue;
        let stats = &partition.config.stats;
        assert_eq!(
            queue.flush_due(std::time::Instant::now(), stats).unwrap(),
            1
        );
        assert_eq!(fsyncs(&partition), 2);
    }
}
