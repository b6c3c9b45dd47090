//! What replication needs from a partition: a high watermark apart from
//! the log end offset (`offsets`), leader epochs stamped into batches and
//! remembered in the epoch cache (`epochs`), appends of the leader's
//! batches as they are, reads up to the log end for followers, and
//! truncation of a diverging tail.

use super::producers::remove_snapshots_past;
use super::{Appended, Partition, PartitionRead};
use crate::error::{Error, Result};
use crate::storage::batch::split_and_validate;
use kafka_protocol::ResponseError;
use std::sync::atomic::Ordering;

impl Partition {
    /// Whether the partition is replicated. While it is not (the default)
    /// the high watermark is the log end offset. Turning it on keeps the
    /// high watermark where it is (the log end offset) and from then on
    /// only `set_high_watermark` and truncation move it.
    pub fn set_replicated(&self, replicated: bool) {
        let _appending = self.append_lock.lock().expect("append lock");
        self.offsets.set_replicated(replicated);
    }

    pub fn is_replicated(&self) -> bool {
        self.offsets.is_replicated()
    }

    /// Moves the high watermark of a replicated partition forward to `hw`,
    /// clamped to [log start, log end]; a lower value is ignored (only
    /// truncation lowers it). Ignored when the partition is not
    /// replicated. Wakes `subscribe` watchers when it moves.
    pub fn set_high_watermark(&self, hw: i64) {
        self.offsets.advance_high_watermark(hw);
    }

    /// Whole batches from `offset` up to the log end, for a follower: at
    /// most `max_bytes`, but at least the first batch. An offset outside
    /// [log start, log end] is OFFSET_OUT_OF_RANGE.
    pub fn read_replica(&self, offset: i64, max_bytes: usize) -> Result<PartitionRead> {
        let bounds = self.offsets.bounds_for_read(offset)?;
        let records = if offset == bounds.log_end {
            bytes::Bytes::new()
        } else {
            self.local
                .read_range(offset, max_bytes, true, bounds.log_end)?
        };
        Ok(PartitionRead {
            records,
            high_watermark: bounds.high_watermark,
            log_start_offset: bounds.log_start,
        })
    }

    /// Sets the leader epoch that `append` stamps into every batch from
    /// now on; the first append in it records (epoch, its base offset) in
    /// the epoch cache. An epoch older than the cache's latest is refused
    /// (logged and ignored).
    pub fn set_leader_epoch(&self, epoch: i32) {
        let mut stamped = self.append_lock.lock().expect("append lock");
        let latest = self.epochs.latest();
        if !stamped.set(epoch, latest) {
            tracing::warn!(dir = %self.dir.display(), epoch, ?latest, "ignoring an older leader epoch");
        }
    }

    /// The epoch `append` stamps (until `set_leader_epoch`, the epoch
    /// cache's latest, or 0).
    pub fn leader_epoch(&self) -> i32 {
        self.append_lock.lock().expect("append lock").epoch()
    }

    /// The newest epoch in the epoch cache (the epoch of the last batch
    /// that recorded one).
    pub fn latest_epoch(&self) -> Option<i32> {
        self.epochs.latest()
    }

    /// OffsetsForLeaderEpoch: the largest known epoch at or below `epoch`
    /// and the start offset of the next larger one (the log end offset if
    /// it is the latest); (-1, -1) if `epoch` is older than every known
    /// epoch or none is known.
    pub fn end_offset_for_epoch(&self, epoch: i32) -> (i32, i64) {
        self.epochs.end_offset_for(epoch, self.log_end_offset())
    }

    /// Every (epoch, start offset) in the epoch cache, oldest first.
    pub fn epoch_entries(&self) -> Vec<(i32, i64)> {
        self.epochs.entries()
    }

    /// Appends batches fetched from the leader as they are (offsets and
    /// leader epochs kept): each is validated (size, CRC, magic 2) as
    /// `append` does, they must follow one another, and the first must
    /// start at the log end offset (else OFFSET_OUT_OF_RANGE, and nothing
    /// is written). Epochs newer than the cache's latest are recorded; an
    /// older one is an error. Rolls segments and follows the fsync policy
    /// like `append`, without waiting for the sync: a follower reports
    /// its durable position (`durable_end`) apart from its log end.
    pub fn append_as_follower(&self, records: &[u8]) -> Result<Appended> {
        self.append_as_sent(records, true)
    }

    /// [`Partition::append_as_follower`] for a journal replay at open: the
    /// records are already in the journal (and the replay syncs the
    /// segments), so the fsync policy asks nothing of them.
    pub(crate) fn append_replayed(&self, records: &[u8]) -> Result<Appended> {
        self.append_as_sent(records, false)
    }

    fn append_as_sent(&self, records: &[u8], apply_policy: bool) -> Result<Appended> {
        let batches = split_and_validate(records)?;
        for pair in batches.windows(2) {
            if pair[1].1.base_offset != pair[0].1.next_offset() {
                return Err(Error::kafka(
                    ResponseError::CorruptMessage,
                    format!(
                        "batch at offset {} does not follow the batch ending at {}",
                        pair[1].1.base_offset,
                        pair[0].1.last_offset()
                    ),
                ));
            }
        }
        let (first, last) = (batches[0].1, batches[batches.len() - 1].1);
        {
            let _appending = self.append_lock.lock().expect("append lock");
            let mut producers = self.producers.lock().expect("producers lock");
            let log_end = self.log_end_offset();
            if first.base_offset != log_end {
                return Err(Error::kafka(
                    ResponseError::OffsetOutOfRange,
                    format!(
                        "follower append starts at offset {} but the log ends at {log_end}",
                        first.base_offset
                    ),
                ));
            }
            let config = *self.topic_config.read().expect("topic config lock");
            let policy = config.fsync_policy(self.config.fsync);
            let journal = match apply_policy {
                true => self.journal_for(policy)?,
                false => None,
            };
            let starts = self.epochs.starts_in(&batches)?;
            self.epochs.record(&starts)?;
            let max_timestamp = batches
                .iter()
                .map(|(_, h)| h.max_timestamp)
                .max()
                .unwrap_or(-1);
            let active = self.write_locked(
                &mut producers,
                &config,
                records,
                &batches,
                log_end,
                max_timestamp,
            )?;
            if apply_policy {
                self.after_write(
                    policy,
                    journal.as_ref(),
                    &active,
                    records,
                    log_end,
                    last.next_offset(),
                )?;
            }
        }
        Ok(Appended {
            base_offset: first.base_offset,
            last_offset: last.last_offset(),
        })
    }

    /// Removes every batch at or after `offset` (from the batch holding
    /// it, when it falls inside one): later segments are deleted, the one
    /// holding it is cut (log, offset index and time index), the log end
    /// offset (and the high watermark, if above) drop to the cut, epochs
    /// starting there or later leave the epoch cache, and the producer
    /// state is reloaded on next need. Nothing happens at or past the log
    /// end; below the log start it empties the log down to the log start.
    pub fn truncate_to(&self, offset: i64) -> Result<()> {
        let mut stamped = self.append_lock.lock().expect("append lock");
        let mut producers = self.producers.lock().expect("producers lock");
        if offset >= self.log_end_offset() {
            return Ok(());
        }
        let offset = offset.max(self.log_start_offset());
        let (kept, doomed) = self.local.split_at(offset);
        for segment in &doomed {
            self.shared
                .total_size
                .fetch_sub(segment.size(), Ordering::Relaxed);
            segment.delete()?;
        }
        let size_before = kept.size();
        let log_end = kept.truncate_to(offset)?;
        self.shared
            .total_size
            .fetch_sub(size_before - kept.size(), Ordering::Relaxed);
        self.shared.clean.note_change();
        self.offsets.truncated(log_end);
        let latest = self.epochs.truncate_from(log_end)?;
        stamped.after_truncation(latest);
        producers.table.reset();
        remove_snapshots_past(&self.dir, &mut producers.snapshots, log_end);
        let generation = self.durable.truncated(log_end);
        self.journal_truncation(log_end, generation);
        tracing::info!(dir = %self.dir.display(), log_end, removed_segments = doomed.len(), "truncated");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LogConfig, Partition};
    use crate::storage::batch::{
        set_base_offset, set_leader_epoch, split_and_validate, test_support::batch,
    };
    use crate::storage::epoch_cache::CHECKPOINT_FILE;
    use crate::storage::producer_state::test_support::idempotent_batch;
    use crate::storage::time_index::test_support::batch_at;
    use crate::topic_config::TopicConfig;
    use kafka_protocol::ResponseError;
    use std::path::Path;
    use std::sync::atomic::AtomicU64;
    use std::sync::{Arc, RwLock};

    fn open(dir: &Path, segment_bytes: u64) -> Partition {
        Partition::open(
            dir,
            LogConfig {
                index_interval: 256,
                ..LogConfig::default()
            },
            Arc::new(RwLock::new(TopicConfig {
                segment_bytes,
                ..TopicConfig::default()
            })),
            Arc::new(AtomicU64::new(0)),
        )
        .unwrap()
    }

    /// Base offsets and leader epochs of the batches in `records`.
    fn batches(records: &[u8]) -> Vec<(i64, i32)> {
        split_and_validate(records)
            .unwrap()
            .iter()
            .map(|(_, h)| (h.base_offset, h.leader_epoch))
            .collect()
    }

    /// A batch as a leader would send it: offset and epoch set.
    fn leader_batch(base_offset: i64, epoch: i32, count: usize) -> Vec<u8> {
        let mut bytes = batch(count, 20);
        set_base_offset(&mut bytes, base_offset);
        set_leader_epoch(&mut bytes, epoch);
        bytes
    }

    #[test]
    fn the_high_watermark_is_the_log_end_until_replicated() {
        let dir = tempfile::tempdir().unwrap();
        let p = open(dir.path(), 1 << 30);
        p.append(&batch(3, 10)).unwrap();
        p.set_high_watermark(1);
        assert_eq!((p.log_end_offset(), p.high_watermark()), (3, 3));
        p.set_replicated(true);
        p.append(&batch(2, 10)).unwrap();
        assert_eq!((p.log_end_offset(), p.high_watermark()), (5, 3));
        p.set_high_watermark(4);
        assert_eq!(p.high_watermark(), 4);
        p.set_high_watermark(2);
        assert_eq!(p.high_watermark(), 4, "never lowered");
        p.set_high_watermark(99);
        assert_eq!(p.high_watermark(), 5, "clamped to the log end");
        p.append(&batch(1, 10)).unwrap();
        p.set_replicated(false);
        assert_eq!(p.high_watermark(), 6);
    }

    #[test]
    fn consumers_read_whole_batches_below_the_high_watermark_and_followers_to_the_log_end() {
        let dir = tempfile::tempdir().unwrap();
        let p = open(dir.path(), 1 << 30);
        p.set_replicated(true);
        for _ in 0..3 {
            p.append(&batch(2, 10)).unwrap();
        }
        p.set_high_watermark(3);
        let read = p.read(0, 1 << 20, true).unwrap();
        assert_eq!(read.high_watermark, 3);
        assert_eq!(
            batches(&read.records),
            vec![(0, 0)],
            "batch 2..3 straddles the HW"
        );
        p.set_high_watermark(4);
        assert_eq!(batches(&p.read(0, 1 << 20, true).unwrap().records).len(), 2);
        // Between the high watermark and the log end: nothing, no error.
        assert!(p.read(4, 1 << 20, true).unwrap().records.is_empty());
        assert!(p.read(6, 1 << 20, true).unwrap().records.is_empty());
        let err = p.read(7, 1 << 20, true).unwrap_err();
        assert_eq!(err.code(), ResponseError::OffsetOutOfRange.code());
        let replica = p.read_replica(2, 1 << 20).unwrap();
        assert_eq!(replica.high_watermark, 4);
        assert_eq!(batches(&replica.records), vec![(2, 0), (4, 0)]);
        assert!(p.read_replica(6, 100).unwrap().records.is_empty());
        let err = p.read_replica(7, 100).unwrap_err();
        assert_eq!(err.code(), ResponseError::OffsetOutOfRange.code());
        // At least one batch, even over max_bytes.
        assert_eq!(batches(&p.read_replica(0, 1).unwrap().records).len(), 1);
    }

    #[tokio::test]
    async fn consumer_watchers_wake_on_the_high_watermark_and_replica_watchers_on_appends() {
        let dir = tempfile::tempdir().unwrap();
        let p = open(dir.path(), 1 << 30);
        p.set_replicated(true);
        let mut consumers = p.subscribe();
        let mut followers = p.subscribe_log_end();
        consumers.borrow_and_update();
        followers.borrow_and_update();
        p.append(&batch(2, 10)).unwrap();
        assert!(followers.has_changed().unwrap());
        assert_eq!(*followers.borrow_and_update(), 2);
        assert!(!consumers.has_changed().unwrap());
        p.set_high_watermark(2);
        assert!(consumers.has_changed().unwrap());
        assert_eq!(*consumers.borrow_and_update(), 2);
        p.truncate_to(0).unwrap();
        assert!(followers.has_changed().unwrap());
        assert!(consumers.has_changed().unwrap());
        assert_eq!(*consumers.borrow(), 0);
    }

    #[test]
    fn appends_stamp_the_leader_epoch_and_the_cache_records_where_it_starts() {
        let dir = tempfile::tempdir().unwrap();
        {
            let p = open(dir.path(), 1 << 30);
            p.append(&batch(2, 10)).unwrap();
            p.set_leader_epoch(3);
            assert_eq!(p.latest_epoch(), None, "recorded at the first append");
            p.append(&batch(2, 10)).unwrap();
            p.set_leader_epoch(5);
            p.append(&batch(1, 10)).unwrap();
            p.append(&batch(1, 10)).unwrap();
            assert_eq!(p.epoch_entries(), vec![(3, 2), (5, 4)]);
            let read = p.read(0, 1 << 20, true).unwrap();
            assert_eq!(batches(&read.records), vec![(0, 0), (2, 3), (4, 5), (5, 5)]);
            // Older epochs are refused.
            p.set_leader_epoch(4);
            assert_eq!(p.leader_epoch(), 5);
        }
        assert!(dir.path().join(CHECKPOINT_FILE).exists());
        let p = open(dir.path(), 1 << 30);
        assert_eq!(p.epoch_entries(), vec![(3, 2), (5, 4)]);
        assert_eq!(p.latest_epoch(), Some(5));
        assert_eq!(p.end_offset_for_epoch(2), (-1, -1));
        assert_eq!(p.end_offset_for_epoch(3), (3, 4));
        assert_eq!(p.end_offset_for_epoch(4), (3, 4));
        assert_eq!(p.end_offset_for_epoch(5), (5, 6));
        assert_eq!(p.end_offset_for_epoch(8), (5, 6));
        // Leading again in the same epoch after a restart adds nothing.
        p.set_leader_epoch(5);
        p.append(&batch(1, 10)).unwrap();
        assert_eq!(p.epoch_entries(), vec![(3, 2), (5, 4)]);
    }

    #[test]
    fn followers_append_the_leaders_batches_as_they_are() {
        let dir = tempfile::tempdir().unwrap();
        let p = open(dir.path(), 1 << 30);
        let mut fetched = leader_batch(0, 1, 3);
        fetched.extend(leader_batch(3, 2, 2));
        let appended = p.append_as_follower(&fetched).unwrap();
        assert_eq!((appended.base_offset, appended.last_offset), (0, 4));
        assert_eq!(p.log_end_offset(), 5);
        assert_eq!(p.epoch_entries(), vec![(1, 0), (2, 3)]);
        let read = p.read_replica(0, 1 << 20).unwrap();
        assert_eq!(&read.records[..], &fetched[..]);
        // Not at the log end: refused, nothing written.
        let err = p.append_as_follower(&leader_batch(7, 2, 1)).unwrap_err();
        assert_eq!(err.code(), ResponseError::OffsetOutOfRange.code());
        let err = p.append_as_follower(&leader_batch(4, 2, 1)).unwrap_err();
        assert_eq!(err.code(), ResponseError::OffsetOutOfRange.code());
        // An older epoch than the cache knows: refused.
        let err = p.append_as_follower(&leader_batch(5, 1, 1)).unwrap_err();
        assert_eq!(err.code(), ResponseError::FencedLeaderEpoch.code());
        // A corrupt batch: refused.
        let mut bad = leader_batch(5, 2, 1);
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let err = p.append_as_follower(&bad).unwrap_err();
        assert_eq!(err.code(), ResponseError::CorruptMessage.code());
        // Batches that do not follow one another: refused.
        let mut gap = leader_batch(5, 2, 1);
        gap.extend(leader_batch(7, 2, 1));
        assert!(p.append_as_follower(&gap).is_err());
        assert_eq!(p.log_end_offset(), 5);
        assert_eq!(p.size_bytes(), fetched.len() as u64);
    }

    #[test]
    fn followers_roll_segments_and_keep_producer_state_for_when_they_lead() {
        let dir = tempfile::tempdir().unwrap();
        let p = open(dir.path(), 300);
        let mut next = 0;
        let mut idempotent = idempotent_batch(11, 0, 0, 2);
        set_base_offset(&mut idempotent, 0);
        set_leader_epoch(&mut idempotent, 1);
        next += p.append_as_follower(&idempotent).unwrap().last_offset + 1;
        for _ in 0..4 {
            next = p
                .append_as_follower(&leader_batch(next, 1, 2))
                .unwrap()
                .last_offset
                + 1;
        }
        assert!(p.segment_count() > 1);
        // Becomes the leader: the producer's retry is recognised.
        p.set_leader_epoch(2);
        let dup = p.append(&idempotent_batch(11, 0, 0, 2)).unwrap();
        assert_eq!((dup.base_offset, dup.last_offset), (0, 1));
        assert_eq!(p.append(&batch(1, 10)).unwrap().base_offset, next);
        assert_eq!(p.epoch_entries(), vec![(1, 0), (2, next)]);
    }

    #[test]
    fn truncation_inside_a_batch_cuts_at_its_base_and_later_segments_go() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch_at(2, 100, 1_000);
        let p = open(dir.path(), one.len() as u64 * 3);
        p.set_replicated(true);
        p.set_leader_epoch(1);
        for i in 0..5 {
            p.append(&batch_at(2, 100, 1_000 + i * 10)).unwrap();
        }
        p.set_leader_epoch(2);
        for i in 5..10 {
            p.append(&batch_at(2, 100, 1_000 + i * 10)).unwrap();
        }
        assert_eq!(p.segment_base_offsets(), vec![0, 6, 12, 18]);
        assert_eq!(p.epoch_entries(), vec![(1, 0), (2, 10)]);
        p.set_high_watermark(20);
        let size_before = p.size_bytes();
        // Offset 9 is inside the batch 8..9.
        p.truncate_to(9).unwrap();
        assert_eq!(p.log_end_offset(), 8);
        assert_eq!(p.high_watermark(), 8);
        assert_eq!(p.segment_base_offsets(), vec![0, 6]);
        assert_eq!(p.size_bytes(), one.len() as u64 * 4);
        assert!(size_before > p.size_bytes());
        assert!(!dir.path().join("00000000000000000012.log").exists());
        assert_eq!(
            std::fs::metadata(dir.path().join("00000000000000000006.log"))
                .unwrap()
                .len(),
            one.len() as u64
        );
        assert_eq!(p.epoch_entries(), vec![(1, 0)]);
        assert_eq!(p.end_offset_for_epoch(2), (1, 8));
        assert_eq!(p.offset_for_timestamp(1_030).unwrap(), Some(6));
        assert_eq!(p.offset_for_timestamp(1_031).unwrap(), None);
        let err = p.read(9, 1 << 20, true).unwrap_err();
        assert_eq!(err.code(), ResponseError::OffsetOutOfRange.code());
        // Appends go on from the cut, in the truncated segment, and the
        // leader's epoch is recorded again where it now starts.
        assert_eq!(p.append(&batch_at(2, 100, 2_000)).unwrap().base_offset, 8);
        assert_eq!(p.segment_base_offsets(), vec![0, 6]);
        assert_eq!(p.epoch_entries(), vec![(1, 0), (2, 8)]);
        assert_eq!(p.offset_for_timestamp(1_500).unwrap(), Some(8));
        p.set_high_watermark(10);
        let read = p.read(6, 1 << 20, true).unwrap();
        assert_eq!(batches(&read.records), vec![(6, 1), (8, 2)]);
        // At or past the log end: nothing happens.
        p.truncate_to(10).unwrap();
        p.truncate_to(50).unwrap();
        assert_eq!(p.log_end_offset(), 10);
    }

    #[test]
    fn truncation_survives_a_reopen_clean_or_not() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(2, 100);
        {
            let p = open(dir.path(), one.len() as u64 * 3);
            for _ in 0..8 {
                p.append(&one).unwrap();
            }
            p.truncate_to(7).unwrap();
            assert_eq!(p.log_end_offset(), 6);
        }
        let p = open(dir.path(), one.len() as u64 * 3);
        assert_eq!(p.log_end_offset(), 6);
        assert_eq!(p.segment_base_offsets(), vec![0, 6]);
        assert_eq!(p.append(&one).unwrap().base_offset, 6);
        p.truncate_to(3).unwrap();
        p.flush().unwrap();
        drop(p);
        let p = open(dir.path(), one.len() as u64 * 3);
        assert_eq!(p.log_end_offset(), 2);
        assert_eq!(p.segment_base_offsets(), vec![0]);
        let read = p.read(0, 1 << 20, true).unwrap();
        assert_eq!(batches(&read.records), vec![(0, 0)]);
    }

    #[test]
    fn truncation_to_the_log_start_empties_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let p = open(dir.path(), 1 << 30);
        p.append(&batch(3, 10)).unwrap();
        p.truncate_to(0).unwrap();
        assert_eq!((p.log_end_offset(), p.size_bytes()), (0, 0));
        assert_eq!(p.append(&batch(1, 10)).unwrap().base_offset, 0);
    }

    #[test]
    fn truncation_forgets_producers_whose_batches_went_and_old_snapshots() {
        let dir = tempfile::tempdir().unwrap();
        let filler = batch(1, 200);
        let p = open(dir.path(), filler.len() as u64);
        p.append(&filler).unwrap();
        p.append(&filler).unwrap();
        let first = idempotent_batch(21, 0, 0, 1);
        assert_eq!(p.append(&first).unwrap().base_offset, 2);
        p.append(&filler).unwrap();
        p.append(&filler).unwrap();
        assert_eq!(p.producer_snapshot_offsets(), vec![1, 2, 3, 4]);
        p.truncate_to(2).unwrap();
        assert_eq!(p.producer_snapshot_offsets(), vec![1, 2]);
        assert!(!dir.path().join("00000000000000000004.snapshot").exists());
        // The batch is gone, so the same batch is a new append, not a
        // duplicate; and the sequence goes on from it.
        assert_eq!(p.append(&first).unwrap().base_offset, 2);
        let err = p.append(&idempotent_batch(21, 0, 3, 1)).unwrap_err();
        assert_eq!(err.code(), ResponseError::OutOfOrderSequenceNumber.code());
    }
}
