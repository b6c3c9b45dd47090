//! Durability: what each fsync policy asks of an append. Under `batch` the
//! log's journal (storage/journal) records the append and makes it durable
//! off the append path, telling the partition's [`GroupCommit`]
//! (storage/group_commit.rs) how far; under `interval` the segment joins
//! the interval flusher's queue.

use super::super::group_commit::Durability;
use super::super::journal::Journal;
use super::super::segment::Segment;
use super::Partition;
use crate::config::FsyncPolicy;
use crate::error::{Error, Result};
use kafka_protocol::ResponseError;
use std::sync::Arc;
use tokio::sync::watch;

impl Partition {
    /// The journal an append under `policy` records in: under `batch` the
    /// log's (KAFKA_STORAGE_ERROR when there is none, or it has stopped),
    /// else none. Checked before anything is written.
    pub(super) fn journal_for(&self, policy: FsyncPolicy) -> Result<Option<Arc<Journal>>> {
        if policy != FsyncPolicy::Batch {
            return Ok(None);
        }
        let journal = self.shared.journal.get().ok_or_else(|| {
            Error::kafka(
                ResponseError::KafkaStorageError,
                "fsync batch needs the log's journal, and this partition was opened on its own",
            )
        })?;
        journal.check()?;
        Ok(Some(journal.clone()))
    }

    /// What the fsync policy asks of an append of `batches` (offsets
    /// `base_offset` up to `next`) into `active`, called under the append
    /// lock: nothing, a record in `journal` (from [`Partition::journal_for`]),
    /// or a place in the interval flusher's queue.
    pub(super) fn after_write(
        &self,
        policy: FsyncPolicy,
        journal: Option<&Arc<Journal>>,
        active: &Arc<Segment>,
        batches: &[u8],
        base_offset: i64,
        next: i64,
    ) -> Result<()> {
        match (policy, journal) {
            (FsyncPolicy::Batch, Some(journal)) => journal.append(
                self.journal_key,
                base_offset,
                batches,
                active,
                &self.durable,
                next,
                self.durable.generation(),
            ),
            (FsyncPolicy::Interval(every), _) => {
                // An interval too long to represent means never.
                if let Some(at) = std::time::Instant::now().checked_add(every) {
                    if active.mark_queued() {
                        self.shared.flush_queue.push(at, active.clone());
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Records a truncation to `log_end` in the journal under `batch`, so
    /// that a replay cuts there too; once it is written the partition is
    /// durable up to the cut (at the truncation's `generation`). Called
    /// under the append lock.
    pub(super) fn journal_truncation(&self, log_end: i64, generation: u64) {
        if self.fsync_policy() != FsyncPolicy::Batch {
            return;
        }
        let Some(journal) = self.shared.journal.get() else {
            return;
        };
        if let Err(e) = journal.truncated(self.journal_key, log_end, &self.durable, generation) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "could not record a truncation in the journal");
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

    /// Wakes when the durable offset (under `batch`) moves.
    pub fn subscribe_durable(&self) -> watch::Receiver<i64> {
        self.durable.subscribe()
    }

    /// Whether the active segment has bytes not yet synced (tests of what
    /// the journal leaves to its retirement).
    #[cfg(test)]
    pub(crate) fn active_is_unsynced(&self) -> bool {
        self.local.active().is_unsynced()
    }

    /// Blocks the log's journal writes while the guard lives (tests of
    /// what waits for durability).
    #[cfg(test)]
    pub(crate) fn hold_journal_writes(&self) -> std::sync::MutexGuard<'_, ()> {
        self.shared
            .journal
            .get()
            .expect("a partition of a log")
            .hold_writes()
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
    fn a_partition_opened_on_its_own_refuses_batch_appends() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open_fsync(dir.path(), FsyncPolicy::Batch, TopicConfig::default());
        let err = partition.append(&batch(1, 10)).unwrap_err();
        assert_eq!(err.code(), ResponseError::KafkaStorageError.code());
        assert!(err.to_string().contains("journal"), "{err}");
        assert_eq!(partition.log_end_offset(), 0);
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
}
