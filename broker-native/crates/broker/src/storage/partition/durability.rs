//! Durability: what each fsync policy asks of an append, and group commit
//! for `FsyncPolicy::Batch` (one appender syncs everything written so far
//! while the others whose offsets it covers wait for it, then return).

use super::super::segment::Segment;
use super::Partition;
use crate::config::FsyncPolicy;
use crate::error::Result;
use std::sync::{Arc, Condvar, Mutex};

/// Group commit (`FsyncPolicy::Batch`): offsets below `through` are on
/// disk; one appender syncs at a time while the others wait for it.
#[derive(Debug)]
struct Durable {
    through: i64,
    syncing: bool,
    /// Bumped by truncation, so a sync that raced it does not vouch for
    /// offsets it never saw.
    generation: u64,
}

/// Offsets below `through` are on disk; a condition variable wakes the
/// appenders waiting for a sync in progress. Taken alone or last.
#[derive(Debug)]
pub(super) struct GroupCommit {
    durable: Mutex<Durable>,
    changed: Condvar,
}

impl GroupCommit {
    /// Everything below `through` (the log end on open) is on disk.
    pub fn new(through: i64) -> GroupCommit {
        GroupCommit {
            durable: Mutex::new(Durable {
                through,
                syncing: false,
                generation: 0,
            }),
            changed: Condvar::new(),
        }
    }

    /// Returns once `through` passes `next`: waits for a sync in progress,
    /// or syncs itself with `sync_from` (from the first offset not yet
    /// durable), vouching for everything below `log_end()` as read once
    /// the sync is claimed.
    pub fn sync_through(
        &self,
        next: i64,
        log_end: impl FnOnce() -> i64,
        sync_from: impl FnOnce(i64) -> Result<()>,
    ) -> Result<()> {
        let mut durable = self.durable.lock().expect("durable lock");
        loop {
            if durable.through >= next {
                return Ok(());
            }
            if !durable.syncing {
                break;
            }
            durable = self.changed.wait(durable).expect("durable lock");
        }
        durable.syncing = true;
        let (from, generation) = (durable.through, durable.generation);
        drop(durable);
        let target = log_end();
        let result = sync_from(from);
        let mut durable = self.durable.lock().expect("durable lock");
        durable.syncing = false;
        if result.is_ok() && durable.generation == generation {
            durable.through = durable.through.max(target);
        }
        self.changed.notify_all();
        result
    }

    /// Offsets below this are on disk.
    #[cfg(test)]
    pub fn through(&self) -> i64 {
        self.durable.lock().expect("durable lock").through
    }

    /// The log was cut at `log_end`: nothing at or past it is durable,
    /// and a sync in progress no longer vouches for what it read.
    pub fn truncated(&self, log_end: i64) {
        let mut durable = self.durable.lock().expect("durable lock");
        durable.through = durable.through.min(log_end);
        durable.generation += 1;
    }
}

impl Partition {
    /// What the fsync policy asks of an append that wrote up to `next`
    /// into `active`: nothing, a (group) sync, or a place in the interval
    /// flusher's queue.
    pub(super) fn after_append(
        &self,
        policy: FsyncPolicy,
        active: &Arc<Segment>,
        next: i64,
    ) -> Result<()> {
        match policy {
            FsyncPolicy::None => Ok(()),
            FsyncPolicy::Batch => self.sync_through(next),
            FsyncPolicy::Interval(every) => {
                // An interval too long to represent means never.
                if let Some(at) = std::time::Instant::now().checked_add(every) {
                    if active.mark_queued() {
                        self.shared.flush_queue.push(at, active.clone());
                    }
                }
                Ok(())
            }
        }
    }

    /// Returns once every offset below `next` is on disk. One caller at a
    /// time syncs, everything written so far; callers whose offsets that
    /// sync covered return without syncing (group commit).
    pub fn sync_through(&self, next: i64) -> Result<()> {
        self.durable.sync_through(
            next,
            || self.log_end_offset(),
            |from| self.sync_segments_from(from),
        )
    }

    /// Syncs the segments that may hold offsets at or after `from`.
    fn sync_segments_from(&self, from: i64) -> Result<()> {
        for segment in self.local.holding_from(from) {
            segment.sync(&self.config.stats)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LogConfig, Partition};
    use crate::config::FsyncPolicy;
    use crate::storage::batch::test_support::batch;
    use crate::topic_config::TopicConfig;
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
        assert!(partition.durable.through() >= 4);
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
