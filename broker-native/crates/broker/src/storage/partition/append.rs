//! The append path: a client's batches validated, given their offsets and
//! the leader epoch and written to the active segment, rolling to a new
//! one by size (segment.bytes) or age (segment.ms); the write a leader's
//! and a follower's appends share.

use super::super::batch::{
    check_batch_sizes, check_offset_range, set_base_offset, set_leader_epoch, split_and_validate,
    stamp_log_append_time, Appended, BatchHeader,
};
use super::super::producer_state::{self, Verdict};
use super::super::segment::Segment;
use super::producers::Producers;
use super::{Durability, Partition};
use crate::clock::now_ms;
use crate::error::Result;
use crate::topic_config::{TimestampType, TopicConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl Partition {
    /// Validates the batches in `records`, assigns them offsets, stamps
    /// them with the leader epoch and appends them, rolling to a new
    /// segment by size (segment.bytes) or age (segment.ms). Nothing is
    /// written when any batch is invalid. With the `Batch` fsync policy it
    /// returns once the batches are on disk (blocking: async callers use
    /// [`Partition::append_pending`]).
    pub fn append(&self, records: &[u8]) -> Result<Appended> {
        let (appended, durability) = self.append_pending(records)?;
        durability.wait_blocking()?;
        Ok(appended)
    }

    /// [`Partition::append`] without waiting for the sync: the batches
    /// are written (to the page cache) when it returns, and the
    /// [`Durability`] resolves once the `batch` policy's flusher has
    /// synced them (at once under `none` and `interval`).
    pub fn append_pending(&self, records: &[u8]) -> Result<(Appended, Durability)> {
        let mut batches = split_and_validate(records)?;
        for (_, header) in &batches {
            check_offset_range(header)?;
        }
        let mut chunk = records.to_vec();
        let (appended, policy) = {
            let mut stamped = self.append_lock.lock().expect("append lock");
            let mut producers = self.producers.lock().expect("producers lock");
            let config = *self.topic_config.read().expect("topic config lock");
            let policy = config.fsync_policy(self.config.fsync);
            let journal = self.journal_for(policy)?;
            if let Verdict::Duplicate(appended) =
                self.check_producers(&mut producers, records, &batches)?
            {
                drop(producers);
                drop(stamped);
                // A retry is acknowledged once the first copy is durable.
                let durability = self.durability(policy, appended.last_offset + 1);
                return Ok((appended, durability));
            }
            let base_offset = self.log_end_offset();
            let epoch = stamped.epoch();
            let mut next = base_offset;
            let mut max_timestamp = -1;
            for (at, header) in batches.iter_mut() {
                set_base_offset(&mut chunk[*at..], next);
                set_leader_epoch(&mut chunk[*at..], epoch);
                header.base_offset = next;
                header.leader_epoch = epoch;
                next = header.next_offset();
                max_timestamp = max_timestamp.max(header.max_timestamp);
            }
            if let Some(epoch) = stamped.pending() {
                self.epochs.record(&[(epoch, base_offset)])?;
                stamped.recorded();
            }
            let active = self.write_locked(
                &mut producers,
                &config,
                &chunk,
                &batches,
                base_offset,
                max_timestamp,
            )?;
            self.after_write(policy, journal.as_ref(), &active, &chunk, base_offset, next)?;
            let appended = Appended {
                base_offset,
                last_offset: next - 1,
            };
            (appended, policy)
        };
        let durability = self.durability(policy, appended.last_offset + 1);
        Ok((appended, durability))
    }

    /// Appends a client's batches under the topic's `config` (as read for
    /// this request): a batch above max.message.bytes is MESSAGE_TOO_LARGE,
    /// and a LogAppendTime topic stamps the batches with the time now,
    /// which it returns. The [`Durability`] is the `batch` policy's wait
    /// for the sync.
    pub fn append_from_client(
        &self,
        records: &[u8],
        config: &TopicConfig,
    ) -> Result<(Appended, Option<i64>, Durability)> {
        check_batch_sizes(records, config.max_message_bytes)?;
        match config.timestamp_type {
            TimestampType::CreateTime => {
                let (appended, durability) = self.append_pending(records)?;
                Ok((appended, None, durability))
            }
            TimestampType::LogAppendTime => {
                let now = now_ms();
                let stamped = stamp_log_append_time(records, now)?;
                let (appended, durability) = self.append_pending(&stamped)?;
                Ok((appended, Some(now), durability))
            }
        }
    }

    /// Writes `bytes`, whose `batches` already carry their offsets and
    /// epochs (the first at the log end, `base_offset`), to the active
    /// segment (rolling first when due), moves the log end past them and
    /// notes them in the producer state. Returns the segment written to.
    /// Callers hold `append_lock` and `producers`.
    pub(super) fn write_locked(
        &self,
        producers: &mut Producers,
        config: &TopicConfig,
        bytes: &[u8],
        batches: &[(usize, BatchHeader)],
        base_offset: i64,
        max_timestamp: i64,
    ) -> Result<Arc<Segment>> {
        let next = batches
            .last()
            .map_or(base_offset, |(_, last)| last.next_offset());
        let active = self.roll_if_due(
            producers,
            config,
            bytes.len() as u64,
            max_timestamp,
            base_offset,
            next,
        )?;
        active.append(bytes, batches)?;
        self.shared.clean.note_change();
        self.shared
            .total_size
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        if let Some((_, last)) = batches.last() {
            self.offsets.appended(last.next_offset());
        }
        if producers.table.is_loaded() {
            producers
                .table
                .record_appended(&producer_state::with_bytes(bytes, batches));
        }
        Ok(active)
    }

    /// Rolls to a new segment at `base_offset` when the active one is full
    /// by size or age for a chunk of `incoming` bytes, or when the chunk's
    /// offsets (up to `next`) would pass what its 32-bit relative offsets
    /// hold (as Kafka rolls at Int.MaxValue), snapshotting the producer
    /// state there. Returns the segment to append to.
    fn roll_if_due(
        &self,
        producers: &mut Producers,
        config: &TopicConfig,
        incoming: u64,
        max_timestamp: i64,
        base_offset: i64,
        next: i64,
    ) -> Result<Arc<Segment>> {
        // Index positions are u32: a segment never passes 4 GiB.
        let segment_bytes = config.segment_bytes.min(u32::MAX as u64);
        let active = self.local.active();
        let offsets_fit = next - 1 - active.base_offset() <= i64::from(i32::MAX);
        if active.size() == 0
            || (active.size() + incoming <= segment_bytes
                && offsets_fit
                && !active.is_older_than(config.segment_ms, max_timestamp, now_ms()))
        {
            return Ok(active);
        }
        active.seal()?;
        if let Err(e) = self.snapshot_producers(producers) {
            tracing::warn!(dir = %self.dir.display(), error = %e, "could not snapshot producer state");
        }
        let rolled = Arc::new(Segment::create(
            &self.dir,
            base_offset,
            self.config.index_interval,
            self.config.files.clone(),
        )?);
        self.local.insert(base_offset, rolled.clone());
        Ok(rolled)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{open, open_with};
    use crate::storage::batch::split_and_validate;
    use crate::storage::batch::test_support::batch;
    use crate::storage::time_index::test_support::batch_at;
    use crate::topic_config::TopicConfig;
    use kafka_protocol::ResponseError;

    #[test]
    fn appends_assign_consecutive_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open(dir.path(), 1 << 30);
        assert_eq!(partition.append(&batch(3, 10)).unwrap().base_offset, 0);
        let second = partition.append(&batch(2, 10)).unwrap();
        assert_eq!((second.base_offset, second.last_offset), (3, 4));
        assert_eq!(partition.high_watermark(), 5);
    }

    #[test]
    fn segments_roll_by_size_and_reads_cross_them() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(1, 200);
        let partition = open(dir.path(), one.len() as u64 * 3);
        for _ in 0..10 {
            partition.append(&one).unwrap();
        }
        assert_eq!(partition.segment_count(), 4);
        assert!(dir.path().join("00000000000000000003.log").exists());
        for offset in 0..10 {
            let read = partition.read(offset, 1 << 20, true).unwrap();
            let batches = split_and_validate(&read.records).unwrap();
            assert_eq!(batches[0].1.base_offset, offset);
        }
    }

    #[test]
    fn corrupt_batch_is_rejected_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open(dir.path(), 1 << 30);
        let mut bad = batch(2, 10);
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let err = partition.append(&bad).unwrap_err();
        assert_eq!(err.code(), ResponseError::CorruptMessage.code());
        assert_eq!(partition.high_watermark(), 0);
        assert_eq!(partition.size_bytes(), 0);
    }

    #[test]
    fn segments_roll_by_age_when_segment_ms_passes() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open_with(
            dir.path(),
            TopicConfig {
                segment_ms: 1_000,
                ..TopicConfig::default()
            },
        );
        partition.append(&batch_at(1, 10, 10_000)).unwrap();
        partition.append(&batch_at(1, 10, 10_999)).unwrap();
        assert_eq!(partition.segment_count(), 1);
        partition.append(&batch_at(1, 10, 11_000)).unwrap();
        assert_eq!(partition.segment_base_offsets(), vec![0, 2]);
    }

    #[test]
    fn segment_ms_changed_at_runtime_applies_to_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open(dir.path(), 1 << 30);
        partition.append(&batch_at(1, 10, 10_000)).unwrap();
        partition.append(&batch_at(1, 10, 20_000)).unwrap();
        assert_eq!(partition.segment_count(), 1);
        partition.topic_config().write().unwrap().segment_ms = 5;
        partition.append(&batch_at(1, 10, 20_001)).unwrap();
        assert_eq!(partition.segment_count(), 2);
    }

    #[test]
    fn batches_are_stamped_with_leader_epoch_zero_by_default() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open(dir.path(), 1 << 30);
        let mut sent = batch(2, 10);
        crate::storage::batch::set_leader_epoch(&mut sent, -1);
        partition.append(&sent).unwrap();
        let read = partition.read(0, 1 << 20, true).unwrap();
        assert_eq!(
            split_and_validate(&read.records).unwrap()[0].1.leader_epoch,
            0
        );
        assert_eq!(partition.latest_epoch(), None);
    }
}
