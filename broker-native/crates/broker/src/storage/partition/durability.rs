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
