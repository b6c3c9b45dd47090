//! A partition's leader epochs: the epoch `append` stamps into every batch
//! (held under the append lock), and the epoch cache (`epoch_cache.rs`,
//! Kafka's `LeaderEpochFileCache`) with what the partition asks of it:
//! record where an epoch starts, answer OffsetsForLeaderEpoch, forget
//! epochs a truncation cut, check a follower's batches against it.

use super::super::batch::BatchHeader;
use super::super::epoch_cache::LeaderEpochCache;
use crate::error::{Error, Result};
use kafka_protocol::ResponseError;
use std::path::Path;
use std::sync::Mutex;

/// The epoch appends stamp; the partition's `append_lock` guards it.
#[derive(Debug)]
pub(super) struct StampedEpoch {
    /// Stamped into every batch `append` writes (Kafka's
    /// `partition_leader_epoch`); until `set`, the epoch cache's latest,
    /// or 0.
    epoch: i32,
    /// `epoch` is not yet in the epoch cache: the next append records it,
    /// starting at its base offset.
    pending: bool,
    /// Whether `set` was called.
    set: bool,
}

impl StampedEpoch {
    /// On open: the cache's latest epoch, already recorded.
    pub fn new(latest: Option<i32>) -> StampedEpoch {
        StampedEpoch {
            epoch: latest.unwrap_or(0),
            pending: false,
            set: false,
        }
    }

    pub fn epoch(&self) -> i32 {
        self.epoch
    }

    /// Stamps `epoch` from now on, unless it is older than the cache's
    /// `latest` (or negative): then false, and nothing changes.
    pub fn set(&mut self, epoch: i32, latest: Option<i32>) -> bool {
        if epoch < 0 || latest.is_some_and(|l| epoch < l) {
            return false;
        }
        self.epoch = epoch;
        self.set = true;
        self.pending = latest != Some(epoch);
        true
    }

    /// The epoch the next append must record in the cache, if any.
    pub fn pending(&self) -> Option<i32> {
        self.pending.then_some(self.epoch)
    }

    /// The pending epoch is in the cache now.
    pub fn recorded(&mut self) {
        self.pending = false;
    }

    /// A truncation left `latest` as the cache's newest epoch: an epoch
    /// set earlier that is no longer there is recorded again on the next
    /// append.
    pub fn after_truncation(&mut self, latest: Option<i32>) {
        if self.set && latest != Some(self.epoch) {
            self.pending = true;
        }
    }
}

/// The epoch cache, behind its lock (taken after the producers' lock).
#[derive(Debug)]
pub(super) struct Epochs {
    cache: Mutex<LeaderEpochCache>,
}

impl Epochs {
    /// The cache of the partition in `dir` (read from its checkpoint when
    /// `has_checkpoint`), without epochs starting past `log_end`.
    pub fn open(dir: &Path, has_checkpoint: bool, log_end: i64) -> Result<Epochs> {
        let mut cache = if has_checkpoint {
            LeaderEpochCache::load(dir)?
        } else {
            LeaderEpochCache::empty(dir)
        };
        if cache.truncate_past(log_end) {
            cache.persist()?;
        }
        Ok(Epochs {
            cache: Mutex::new(cache),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LeaderEpochCache> {
        self.cache.lock().expect("epochs lock")
    }

    pub fn latest(&self) -> Option<i32> {
        self.lock().latest_epoch()
    }

    /// Records epochs that start at the given offsets and persists the
    /// cache if that changed it.
    pub fn record(&self, starts: &[(i32, i64)]) -> Result<()> {
        let mut cache = self.lock();
        let mut changed = false;
        for (epoch, start) in starts {
            changed |= cache.assign(*epoch, *start);
        }
        if changed {
            cache.persist()?;
        }
        Ok(())
    }

    /// See `Partition::end_offset_for_epoch`.
    pub fn end_offset_for(&self, epoch: i32, log_end: i64) -> (i32, i64) {
        self.lock().end_offset_for(epoch, log_end)
    }

    /// Every (epoch, start offset), oldest first.
    pub fn entries(&self) -> Vec<(i32, i64)> {
        self.lock()
            .entries()
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect()
    }

    /// Forgets epochs starting at or past `log_end` (persisting the change)
    /// and returns the newest one left.
    pub fn truncate_from(&self, log_end: i64) -> Result<Option<i32>> {
        let mut cache = self.lock();
        if cache.truncate_from(log_end) {
            cache.persist()?;
        }
        Ok(cache.latest_epoch())
    }

    /// Where the epochs of a leader's batches start, for those newer than
    /// the cache's latest; a batch with an older epoch than the one before
    /// it is FENCED_LEADER_EPOCH.
    pub fn starts_in(&self, batches: &[(usize, BatchHeader)]) -> Result<Vec<(i32, i64)>> {
        let mut latest = self.latest();
        let mut starts = Vec::new();
        for (_, header) in batches {
            let epoch = header.leader_epoch;
            match latest {
                _ if epoch < 0 => {}
                Some(l) if epoch < l => {
                    return Err(Error::kafka(
                        ResponseError::FencedLeaderEpoch,
                        format!(
                            "batch at offset {} has leader epoch {epoch}, older than {l}",
                            header.base_offset
                        ),
                    ))
                }
                Some(l) if epoch == l => {}
                _ => {
                    starts.push((epoch, header.base_offset));
                    latest = Some(epoch);
                }
            }
        }
        Ok(starts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_epoch_is_pending_until_recorded_and_again_after_a_truncation_drops_it() {
        let mut stamped = StampedEpoch::new(Some(2));
        assert_eq!((stamped.epoch(), stamped.pending()), (2, None));
        assert!(!stamped.set(1, Some(2)));
        assert!(stamped.set(3, Some(2)));
        assert_eq!(stamped.pending(), Some(3));
        stamped.recorded();
        assert_eq!(stamped.pending(), None);
        stamped.after_truncation(Some(3));
        assert_eq!(stamped.pending(), None);
        stamped.after_truncation(Some(2));
        assert_eq!(stamped.pending(), Some(3));
    }

    #[test]
    fn the_epoch_on_open_is_not_recorded_again_after_a_truncation() {
        let mut stamped = StampedEpoch::new(Some(4));
        stamped.after_truncation(None);
        assert_eq!((stamped.epoch(), stamped.pending()), (4, None));
    }
}
