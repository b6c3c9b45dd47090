//! One topic-partition: an ordered set of segments, the log start and end
//! offsets, the high watermark, and watches that wake long-polling fetches
//! (on high-watermark changes) and followers and acks=all waiters (on
//! every append).
//!
//! Locking: appends serialise on `append_lock` (held across the write of
//! this partition only, never across an fsync); the segment map's lock is
//! held only to look up, add or remove segments, never across file I/O.
//! Lock order: `append_lock`, then `producers`, then `epochs`; `durable`
//! is taken alone or last.

use super::batch::{
    check_batch_sizes, set_base_offset, set_leader_epoch, split_and_validate,
    stamp_log_append_time, Appended,
};
use super::epoch_cache::LeaderEpochCache;
use super::file_cache::FileCache;
use super::producer_state::{self, ProducerStateTable, Verdict};
use super::retention;
use super::segment::{Segment, DEFAULT_INDEX_INTERVAL};
use super::shared::LogShared;
use crate::clock::now_ms;
use crate::config::FsyncPolicy;
use crate::error::{Error, Result};
use crate::stats::StorageStats;
use crate::topic_config::{TimestampType, TopicConfig};
use bytes::Bytes;
use kafka_protocol::ResponseError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::watch;

/// Group commit and what each fsync policy asks of an append.
mod durability;
/// Opening the directory and recovering its tail.
mod load;
/// Idempotent producers' state and its snapshots.
mod producers;
/// High watermark, leader epochs, follower appends and truncation.
mod replication;
/// The segments themselves (Apache Kafka's `LocalLog`).
mod segments;

use durability::GroupCommit;
use load::Loaded;
pub use load::RecoveryReport;
use producers::{remove_snapshots_past, Producers};
use segments::LocalLog;

/// A topic's configuration, shared by its partitions and changed at runtime
/// (storage reads it each time it decides to roll or delete).
pub type SharedTopicConfig = Arc<RwLock<TopicConfig>>;

/// Broker-wide storage settings.
#[derive(Debug, Clone)]
pub struct LogConfig {
    /// `segment.bytes` of topics created without one.
    pub segment_bytes: u64,
    pub index_interval: u64,
    /// The broker's fsync policy; topics may override it (`flush.messages`,
    /// `flush.ms`).
    pub fsync: FsyncPolicy,
    /// Open segment files, shared by every partition.
    pub files: Arc<FileCache>,
    /// fsync counts and latency, shared by every partition.
    pub stats: Arc<StorageStats>,
    /// Partitions one topic may have.
    pub max_partitions_per_topic: i32,
    /// Partitions the log may hold, all topics together.
    pub max_partitions: usize,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: crate::config::DEFAULT_SEGMENT_BYTES,
            index_interval: DEFAULT_INDEX_INTERVAL,
            fsync: FsyncPolicy::None,
            files: Arc::new(FileCache::default()),
            stats: Arc::new(StorageStats::default()),
            max_partitions_per_topic: crate::config::DEFAULT_MAX_PARTITIONS_PER_TOPIC,
            max_partitions: crate::config::DEFAULT_MAX_PARTITIONS,
        }
    }
}

/// Batches read for a fetch, with the offsets the response reports.
#[derive(Debug, Clone)]
pub struct PartitionRead {
    pub records: Bytes,
    pub high_watermark: i64,
    pub log_start_offset: i64,
}

/// What appends serialise on, and the leader epoch they stamp.
#[derive(Debug)]
struct AppendState {
    /// Stamped into every batch `append` writes (Kafka's
    /// `partition_leader_epoch`); until `set_leader_epoch`, the epoch
    /// cache's latest, or 0.
    leader_epoch: i32,
    /// `leader_epoch` is not yet in the epoch cache: the next append
    /// records it, starting at its base offset.
    epoch_pending: bool,
    /// Whether `set_leader_epoch` was called.
    epoch_set: bool,
}

#[derive(Debug)]
pub struct Partition {
    dir: PathBuf,
    config: LogConfig,
    topic_config: SharedTopicConfig,
    /// The segments: roll, read, retention, truncation.
    local: LocalLog,
    /// Serialises appends, rolls and truncation of this partition.
    append_lock: Mutex<AppendState>,
    /// Log end offset, watched by followers and acks=all waiters (and by
    /// fetches while the partition is not replicated, when it is also the
    /// high watermark).
    log_end: watch::Sender<i64>,
    /// The high watermark while replicated, watched by fetches.
    high_watermark: watch::Sender<i64>,
    replicated: AtomicBool,
    /// First offset still in the log; retention moves it forward.
    log_start_offset: AtomicI64,
    shared: Arc<LogShared>,
    /// Idempotent producers' recent batches; taken after `append_lock`.
    producers: Mutex<Producers>,
    /// Leader epochs and where they start; taken after `producers`.
    epochs: Mutex<LeaderEpochCache>,
    durable: GroupCommit,
    recovery: RecoveryReport,
}

impl Partition {
    /// Opens `dir`, recovering the last segment, or creates it empty (a
    /// partition on its own: no clean-shutdown marker, no shared flusher).
    pub fn open(
        dir: &Path,
        config: LogConfig,
        topic_config: SharedTopicConfig,
        total_size: Arc<AtomicU64>,
    ) -> Result<Partition> {
        let shared = Arc::new(LogShared::new(total_size, None));
        Partition::open_in(dir, config, topic_config, shared, false)
    }

    /// Opens `dir` as a partition of a log. After a clean shutdown the last
    /// segment's size and indexes are trusted (`Segment::open_trusted`);
    /// otherwise it is scanned and a torn or corrupt tail truncated.
    pub fn open_in(
        dir: &Path,
        config: LogConfig,
        topic_config: SharedTopicConfig,
        shared: Arc<LogShared>,
        clean_shutdown: bool,
    ) -> Result<Partition> {
        let Loaded {
            segments,
            snapshots,
            has_checkpoint,
            report,
            log_start_offset,
            log_end,
            size,
        } = load::load(dir, &config, clean_shutdown)?;
        shared.total_size.fetch_add(size, Ordering::Relaxed);

        let mut epochs = if has_checkpoint {
            LeaderEpochCache::load(dir)?
        } else {
            LeaderEpochCache::empty(dir)
        };
        if epochs.truncate_past(log_end) {
            epochs.persist()?;
        }
        let mut producers = Producers {
            table: ProducerStateTable::default(),
            snapshots,
        };
        remove_snapshots_past(dir, &mut producers.snapshots, log_end);
        if size == 0 {
            // No batches, so no producers.
            producers.table.mark_loaded();
        }
        Ok(Partition {
            dir: dir.to_path_buf(),
            config,
            topic_config,
            local: LocalLog::new(segments),
            append_lock: Mutex::new(AppendState {
                leader_epoch: epochs.latest_epoch().unwrap_or(0),
                epoch_pending: false,
                epoch_set: false,
            }),
            log_end: watch::Sender::new(log_end),
            high_watermark: watch::Sender::new(log_end),
            replicated: AtomicBool::new(false),
            log_start_offset: AtomicI64::new(log_start_offset),
            shared,
            producers: Mutex::new(producers),
            epochs: Mutex::new(epochs),
            durable: GroupCommit::new(log_end),
            recovery: report,
        })
    }

    /// What opening this partition found.
    pub fn recovery(&self) -> RecoveryReport {
        self.recovery
    }

    /// The offset the next appended batch gets (LEO).
    pub fn log_end_offset(&self) -> i64 {
        *self.log_end.borrow()
    }

    /// The offset below which batches are committed and served to
    /// consumers: the log end offset unless the partition is replicated.
    pub fn high_watermark(&self) -> i64 {
        if self.replicated.load(Ordering::Acquire) {
            *self.high_watermark.borrow()
        } else {
            self.log_end_offset()
        }
    }

    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset.load(Ordering::Acquire)
    }

    /// The topic configuration this partition follows.
    pub fn topic_config(&self) -> &SharedTopicConfig {
        &self.topic_config
    }

    /// A receiver that changes whenever the high watermark moves (on
    /// every append while the partition is not replicated), for
    /// long-polling consumer fetches.
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        if self.replicated.load(Ordering::Acquire) {
            self.high_watermark.subscribe()
        } else {
            self.log_end.subscribe()
        }
    }

    /// A receiver that changes on every append (and truncation), for
    /// followers and acks=all waiters.
    pub fn subscribe_log_end(&self) -> watch::Receiver<i64> {
        self.log_end.subscribe()
    }

    pub fn size_bytes(&self) -> u64 {
        self.local.size_bytes()
    }

    /// The fsync policy in force: the topic's override or the broker's.
    pub fn fsync_policy(&self) -> FsyncPolicy {
        let config = *self.topic_config.read().expect("topic config lock");
        config.fsync_policy(self.config.fsync)
    }

    /// Validates the batches in `records`, assigns them offsets, stamps
    /// them with the leader epoch and appends them, rolling to a new
    /// segment by size (segment.bytes) or age (segment.ms). Nothing is
    /// written when any batch is invalid. With the `Batch` fsync policy it
    /// returns once the batches are on disk.
    pub fn append(&self, records: &[u8]) -> Result<Appended> {
        let mut batches = split_and_validate(records)?;
        let mut chunk = records.to_vec();
        let (appended, policy, active) = {
            let mut state = self.append_lock.lock().expect("append lock");
            let mut producers = self.producers.lock().expect("producers lock");
            let config = *self.topic_config.read().expect("topic config lock");
            let policy = config.fsync_policy(self.config.fsync);
            if let Verdict::Duplicate(appended) =
                self.check_producers(&mut producers, records, &batches)?
            {
                drop(producers);
                drop(state);
                if policy == FsyncPolicy::Batch {
                    self.sync_through(appended.last_offset + 1)?;
                }
                return Ok(appended);
            }
            let base_offset = self.log_end_offset();
            let mut next = base_offset;
            let mut max_timestamp = -1;
            for (at, header) in batches.iter_mut() {
                set_base_offset(&mut chunk[*at..], next);
                set_leader_epoch(&mut chunk[*at..], state.leader_epoch);
                header.base_offset = next;
                header.leader_epoch = state.leader_epoch;
                next = header.next_offset();
                max_timestamp = max_timestamp.max(header.max_timestamp);
            }
            if state.epoch_pending {
                self.record_epochs(&[(state.leader_epoch, base_offset)])?;
                state.epoch_pending = false;
            }
            let active = self.roll_if_due(
                &mut producers,
                &config,
                chunk.len() as u64,
                max_timestamp,
                base_offset,
            )?;
            active.append(&chunk, &batches)?;
            self.shared.clean.note_change();
            self.shared
                .total_size
                .fetch_add(chunk.len() as u64, Ordering::Relaxed);
            self.log_end.send_replace(next);
            if producers.table.is_loaded() {
                producers
                    .table
                    .record_appended(&producer_state::with_bytes(&chunk, &batches));
            }
            let appended = Appended {
                base_offset,
                last_offset: next - 1,
            };
            (appended, policy, active)
        };
        self.after_append(policy, &active, appended.last_offset + 1)?;
        Ok(appended)
    }

    /// Appends a client's batches under the topic's `config` (as read for
    /// this request): a batch above max.message.bytes is MESSAGE_TOO_LARGE,
    /// and a LogAppendTime topic stamps the batches with the time now,
    /// which it returns.
    pub fn append_from_client(
        &self,
        records: &[u8],
        config: &TopicConfig,
    ) -> Result<(Appended, Option<i64>)> {
        check_batch_sizes(records, config.max_message_bytes)?;
        match config.timestamp_type {
            TimestampType::CreateTime => Ok((self.append(records)?, None)),
            TimestampType::LogAppendTime => {
                let now = now_ms();
                let stamped = stamp_log_append_time(records, now)?;
                Ok((self.append(&stamped)?, Some(now)))
            }
        }
    }

    /// Rolls to a new segment at `base_offset` when the active one is full
    /// by size or age for a chunk of `incoming` bytes, snapshotting the
    /// producer state there. Returns the segment to append to.
    fn roll_if_due(
        &self,
        producers: &mut Producers,
        config: &TopicConfig,
        incoming: u64,
        max_timestamp: i64,
        base_offset: i64,
    ) -> Result<Arc<Segment>> {
        // Index positions are u32: a segment never passes 4 GiB.
        let segment_bytes = config.segment_bytes.min(u32::MAX as u64);
        let active = self.local.active();
        if active.size() == 0
            || (active.size() + incoming <= segment_bytes
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

    /// Whole batches from `offset`, up to `max_bytes` (see
    /// `Segment::read`), for consumers: only batches wholly below the high
    /// watermark. An offset past the log end or below the log start is
    /// OFFSET_OUT_OF_RANGE; one between the high watermark and the log end
    /// reads nothing (as Kafka does).
    pub fn read(&self, offset: i64, max_bytes: usize, min_one: bool) -> Result<PartitionRead> {
        let high_watermark = self.high_watermark();
        let log_end = self.log_end_offset();
        let log_start_offset = self.log_start_offset();
        let mut read = PartitionRead {
            records: Bytes::new(),
            high_watermark,
            log_start_offset,
        };
        if offset < log_start_offset || offset > log_end {
            return Err(out_of_range(offset, log_start_offset, log_end));
        }
        if offset >= high_watermark {
            return Ok(read);
        }
        read.records = self
            .local
            .read_range(offset, max_bytes, min_one, high_watermark)?;
        Ok(read)
    }

    /// Offset of the first batch with a timestamp at or after `timestamp`:
    /// the first segment whose largest timestamp reaches it, then its time
    /// index.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<i64>> {
        let candidates = self.local.reaching_timestamp(timestamp);
        for segment in candidates {
            if let Some(offset) = segment.offset_for_timestamp(timestamp)? {
                return Ok(Some(offset.max(self.log_start_offset())));
            }
        }
        Ok(None)
    }

    /// Deletes whole sealed segments past retention.ms (by their largest
    /// timestamp, against `now_ms`) or beyond retention.bytes, oldest first,
    /// never the active one, and moves the log start offset forward
    /// (removing producer-state snapshots below it). Returns how many
    /// segments went.
    pub fn enforce_retention(&self, now_ms: i64) -> Result<usize> {
        let (retention_ms, retention_bytes) = {
            let config = self.topic_config.read().expect("topic config lock");
            (config.retention_ms, config.retention_bytes)
        };
        let doomed = self.local.remove_oldest(
            |facts| retention::expired_prefix(facts, retention_ms, retention_bytes, now_ms),
            |first| {
                self.log_start_offset.fetch_max(first, Ordering::AcqRel);
            },
        );
        for segment in &doomed {
            self.shared
                .total_size
                .fetch_sub(segment.size(), Ordering::Relaxed);
            segment.delete()?;
        }
        if !doomed.is_empty() {
            let log_start = self.log_start_offset();
            let mut producers = self.producers.lock().expect("producers lock");
            producers.remove_snapshots_below(&self.dir, log_start);
        }
        Ok(doomed.len())
    }

    pub fn segment_count(&self) -> usize {
        self.local.count()
    }

    /// Base offsets of the segments, oldest first.
    pub fn segment_base_offsets(&self) -> Vec<i64> {
        self.local.base_offsets()
    }

    /// Offsets of the producer-state snapshots on disk, oldest first.
    pub fn producer_snapshot_offsets(&self) -> Vec<i64> {
        let producers = self.producers.lock().expect("producers lock");
        producers.snapshots.iter().copied().collect()
    }

    /// Everything a clean restart trusts, on disk: written bytes of every
    /// segment (fdatasync), the active segment's indexes, and a
    /// producer-state snapshot at the log end (when the state is loaded).
    /// Deletes every segment's files and closes them, for a deleted topic:
    /// its disk space comes back at once rather than when the file cache
    /// happens to close the files. Readers still holding a segment get
    /// OFFSET_OUT_OF_RANGE.
    pub fn delete_segments(&self) -> Result<()> {
        let _appending = self.append_lock.lock().expect("append lock");
        for segment in &self.local.all() {
            segment.delete()?;
        }
        Ok(())
    }

    pub fn flush(&self) -> Result<()> {
        let _appending = self.append_lock.lock().expect("append lock");
        for segment in &self.local.all() {
            segment.sync(&self.config.stats)?;
        }
        self.local.active().write_indexes()?;
        let mut producers = self.producers.lock().expect("producers lock");
        if producers.table.is_loaded() && self.log_end_offset() > self.log_start_offset() {
            self.snapshot_producers(&mut producers)?;
        }
        Ok(())
    }
}

fn out_of_range(offset: i64, log_start: i64, log_end: i64) -> Error {
    Error::kafka(
        ResponseError::OffsetOutOfRange,
        format!("offset {offset} outside [{log_start}, {log_end}]"),
    )
}

#[cfg(test)]
mod tests {
    use super::super::batch::test_support::batch;
    use super::super::time_index::test_support::batch_at;
    use super::*;
    use crate::storage::producer_state::snapshot_file_name;

    fn open_with(dir: &Path, topic_config: TopicConfig) -> Partition {
        Partition::open(
            dir,
            LogConfig::default(),
            Arc::new(RwLock::new(topic_config)),
            Arc::new(AtomicU64::new(0)),
        )
        .unwrap()
    }

    fn open(dir: &Path, segment_bytes: u64) -> Partition {
        open_with(
            dir,
            TopicConfig {
                segment_bytes,
                ..TopicConfig::default()
            },
        )
    }

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
    fn reopen_keeps_offsets_and_data() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(2, 50);
        {
            let partition = open(dir.path(), one.len() as u64 * 2);
            for _ in 0..5 {
                partition.append(&one).unwrap();
            }
        }
        let partition = open(dir.path(), one.len() as u64 * 2);
        assert_eq!(partition.high_watermark(), 10);
        assert_eq!(partition.append(&one).unwrap().base_offset, 10);
        let read = partition.read(4, 1 << 20, false).unwrap();
        assert_eq!(
            split_and_validate(&read.records).unwrap()[0].1.base_offset,
            4
        );
    }

    #[test]
    fn read_past_the_end_is_offset_out_of_range() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open(dir.path(), 1 << 30);
        partition.append(&batch(1, 10)).unwrap();
        assert!(partition.read(1, 100, true).unwrap().records.is_empty());
        let err = partition.read(2, 100, true).unwrap_err();
        assert_eq!(err.code(), ResponseError::OffsetOutOfRange.code());
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
    fn offset_for_timestamp_finds_the_first_later_batch() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open(dir.path(), 1 << 30);
        partition.append(&batch(3, 10)).unwrap();
        partition.append(&batch(3, 10)).unwrap();
        assert_eq!(partition.offset_for_timestamp(0).unwrap(), Some(0));
        assert_eq!(partition.offset_for_timestamp(i64::MAX).unwrap(), None);
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
    fn time_index_lookup_picks_the_segment_by_its_max_timestamp() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch_at(1, 100, 0);
        let partition = open(dir.path(), one.len() as u64 * 4);
        for i in 0..20 {
            partition
                .append(&batch_at(1, 100, 1_000 + i * 100))
                .unwrap();
        }
        assert_eq!(partition.segment_count(), 5);
        assert_eq!(partition.offset_for_timestamp(1_950).unwrap(), Some(10));
        assert_eq!(partition.offset_for_timestamp(2_000).unwrap(), Some(10));
        assert_eq!(partition.offset_for_timestamp(2_901).unwrap(), None);
    }

    #[test]
    fn retention_by_bytes_deletes_whole_old_segments_and_advances_log_start() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(1, 200);
        let partition = open(dir.path(), one.len() as u64 * 2);
        for _ in 0..10 {
            partition.append(&one).unwrap();
        }
        assert_eq!(partition.segment_count(), 5);
        partition.topic_config().write().unwrap().retention_bytes = Some(one.len() as i64 * 5);
        assert_eq!(partition.enforce_retention(0).unwrap(), 2);
        assert_eq!(partition.segment_base_offsets(), vec![4, 6, 8]);
        assert_eq!(partition.log_start_offset(), 4);
        assert!(!dir.path().join("00000000000000000000.log").exists());
        assert!(!dir.path().join("00000000000000000002.index").exists());
        let read = partition.read(4, 1 << 20, true).unwrap();
        assert_eq!(read.log_start_offset, 4);
        assert_eq!(
            split_and_validate(&read.records).unwrap()[0].1.base_offset,
            4
        );
    }

    #[test]
    fn retention_by_time_deletes_segments_older_than_retention_ms_but_never_the_active_one() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch_at(1, 200, 0);
        let partition = open_with(
            dir.path(),
            TopicConfig {
                segment_bytes: one.len() as u64 * 2,
                retention_ms: Some(1_000),
                ..TopicConfig::default()
            },
        );
        for i in 0..6 {
            partition
                .append(&batch_at(1, 200, 10_000 + i * 1_000))
                .unwrap();
        }
        // Segments' largest timestamps: 11_000, 13_000, 15_000 (active).
        assert_eq!(partition.enforce_retention(13_500).unwrap(), 1);
        assert_eq!(partition.log_start_offset(), 2);
        assert_eq!(partition.enforce_retention(1_000_000).unwrap(), 1);
        assert_eq!(partition.segment_base_offsets(), vec![4]);
        assert_eq!(partition.log_start_offset(), 4);
    }

    #[test]
    fn fetch_below_log_start_is_offset_out_of_range() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(1, 200);
        let partition = open(dir.path(), one.len() as u64);
        for _ in 0..3 {
            partition.append(&one).unwrap();
        }
        partition.topic_config().write().unwrap().retention_bytes = Some(0);
        partition.enforce_retention(0).unwrap();
        assert_eq!(partition.log_start_offset(), 2);
        let err = partition.read(1, 1 << 20, true).unwrap_err();
        assert_eq!(err.code(), ResponseError::OffsetOutOfRange.code());
    }

    #[test]
    fn log_start_survives_reopen_after_retention() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(1, 200);
        {
            let partition = open(dir.path(), one.len() as u64);
            for _ in 0..3 {
                partition.append(&one).unwrap();
            }
            partition.topic_config().write().unwrap().retention_bytes = Some(0);
            partition.enforce_retention(0).unwrap();
        }
        let partition = open(dir.path(), one.len() as u64);
        assert_eq!(partition.log_start_offset(), 2);
        assert_eq!(partition.high_watermark(), 3);
    }

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
        use super::super::producer_state::test_support::idempotent_batch;
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

    #[test]
    fn a_producer_whose_batches_are_only_in_an_older_segment_survives_a_crash() {
        use super::super::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let filler = batch(1, 200);
        let segment_bytes = filler.len() as u64 * 2;
        let once = idempotent_batch(7, 0, 0, 3);
        {
            let partition = open(dir.path(), segment_bytes);
            assert_eq!(partition.append(&once).unwrap().base_offset, 0);
            for _ in 0..6 {
                partition.append(&filler).unwrap();
            }
            assert!(partition.segment_count() >= 3);
            assert!(!partition.producer_snapshot_offsets().is_empty());
            // Dropped without a flush: as after a crash.
        }
        let partition = open(dir.path(), segment_bytes);
        let active_base = *partition.segment_base_offsets().last().unwrap();
        assert!(
            active_base > 2,
            "the producer's batch is not in the last segment"
        );
        let dup = partition.append(&once).unwrap();
        assert_eq!((dup.base_offset, dup.last_offset), (0, 2));
        assert_eq!(partition.log_end_offset(), 9);
        let gap = partition.append(&idempotent_batch(7, 0, 5, 1)).unwrap_err();
        assert_eq!(gap.code(), ResponseError::OutOfOrderSequenceNumber.code());
        assert_eq!(
            partition
                .append(&idempotent_batch(7, 0, 3, 1))
                .unwrap()
                .base_offset,
            9
        );
    }

    #[test]
    fn producer_state_comes_from_the_snapshot_once_its_batches_left_the_log() {
        use super::super::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let filler = batch(1, 200);
        let segment_bytes = filler.len() as u64;
        let once = idempotent_batch(8, 0, 0, 1);
        {
            let partition = open(dir.path(), segment_bytes);
            partition.append(&once).unwrap();
            for _ in 0..3 {
                partition.append(&filler).unwrap();
            }
            partition.topic_config().write().unwrap().retention_bytes = Some(0);
            partition.enforce_retention(0).unwrap();
            assert_eq!(partition.log_start_offset(), 3);
        }
        // No batch of producer 8 is left to replay; the snapshot at 3 has it.
        let partition = open(dir.path(), segment_bytes);
        let dup = partition.append(&once).unwrap();
        assert_eq!((dup.base_offset, dup.last_offset), (0, 0));
        assert_eq!(partition.log_end_offset(), 4);
    }

    #[test]
    fn a_flush_snapshots_producers_at_the_log_end_and_reopen_needs_no_replay() {
        use super::super::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let once = idempotent_batch(9, 2, 0, 2);
        {
            let partition = open(dir.path(), 1 << 30);
            partition.append(&batch(3, 10)).unwrap();
            partition.append(&once).unwrap();
            partition.flush().unwrap();
            assert_eq!(partition.producer_snapshot_offsets(), vec![5]);
        }
        let partition = open(dir.path(), 1 << 30);
        let dup = partition.append(&once).unwrap();
        assert_eq!((dup.base_offset, dup.last_offset), (3, 4));
        let stale = partition.append(&idempotent_batch(9, 1, 0, 1)).unwrap_err();
        assert_eq!(stale.code(), ResponseError::InvalidProducerEpoch.code());
    }

    #[test]
    fn snapshots_past_the_log_end_are_removed_on_open_and_damaged_ones_skipped() {
        use super::super::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let once = idempotent_batch(4, 0, 0, 1);
        {
            let partition = open(dir.path(), 1 << 30);
            partition.append(&once).unwrap();
            partition.append(&batch(1, 10)).unwrap();
            partition.flush().unwrap();
        }
        std::fs::write(dir.path().join(snapshot_file_name(50)), b"from the future").unwrap();
        std::fs::write(dir.path().join(snapshot_file_name(1)), b"damaged").unwrap();
        let partition = open(dir.path(), 1 << 30);
        assert_eq!(partition.producer_snapshot_offsets(), vec![1, 2]);
        assert!(!dir.path().join(snapshot_file_name(50)).exists());
        assert_eq!(partition.append(&once).unwrap().base_offset, 0);
        std::fs::remove_file(dir.path().join(snapshot_file_name(2))).unwrap();
        drop(partition);
        // With only the damaged one left, it is removed and the log replayed.
        let partition = open(dir.path(), 1 << 30);
        assert_eq!(partition.append(&once).unwrap().base_offset, 0);
        assert_eq!(partition.producer_snapshot_offsets(), Vec::<i64>::new());
    }

    #[test]
    fn a_new_snapshot_replaces_older_ones_inside_the_active_segment() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(1, 200);
        let partition = open(dir.path(), one.len() as u64 * 4);
        for _ in 0..5 {
            partition.append(&one).unwrap();
            partition.flush().unwrap();
        }
        // Rolled at 4 (kept), flushed at 1, 2, 3 (replaced), 4 and 5.
        assert_eq!(partition.producer_snapshot_offsets(), vec![4, 5]);
        assert!(!dir.path().join(snapshot_file_name(3)).exists());
    }

    #[test]
    fn retention_removes_snapshots_below_the_log_start() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(1, 200);
        let partition = open(dir.path(), one.len() as u64);
        for _ in 0..4 {
            partition.append(&one).unwrap();
        }
        assert_eq!(partition.producer_snapshot_offsets(), vec![1, 2, 3]);
        partition.topic_config().write().unwrap().retention_bytes = Some(0);
        partition.enforce_retention(0).unwrap();
        assert_eq!(partition.log_start_offset(), 3);
        assert_eq!(partition.producer_snapshot_offsets(), vec![3]);
        assert!(!dir.path().join(snapshot_file_name(1)).exists());
    }

    #[test]
    fn batches_are_stamped_with_leader_epoch_zero_by_default() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open(dir.path(), 1 << 30);
        let mut sent = batch(2, 10);
        super::super::batch::set_leader_epoch(&mut sent, -1);
        partition.append(&sent).unwrap();
        let read = partition.read(0, 1 << 20, true).unwrap();
        assert_eq!(
            split_and_validate(&read.records).unwrap()[0].1.leader_epoch,
            0
        );
        assert_eq!(partition.latest_epoch(), None);
    }
}
