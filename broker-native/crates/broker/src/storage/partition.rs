//! One topic-partition, split by job as Apache Kafka splits its log: the
//! segments (`segments`), opening and recovery (`load`), the append path
//! (`append`), durability and group commit (`durability`), idempotent
//! producers and their snapshots (`producers`), the log start, log end and
//! high watermark with their watches (`offsets`), leader epochs
//! (`epochs`), and what replication asks (`replication`). This file holds
//! them together: opening, reads, retention, flush and delete.
//!
//! Locking: appends serialise on `append_lock` (held across the write of
//! this partition only, never across an fsync); the segment map's lock is
//! held only to look up, add or remove segments, never across file I/O.
//! Lock order: `append_lock`, then `producers`, then `epochs`; `durable`
//! is taken alone or last.

use super::batch::Appended;
use super::file_cache::FileCache;
pub use super::group_commit::Durability;
use super::group_commit::GroupCommit;
use super::journal::{JournalConfig, JournalKey};
use super::producer_state::ProducerStateTable;
use super::retention;
use super::segment::DEFAULT_INDEX_INTERVAL;
use super::shared::LogShared;
use crate::config::FsyncPolicy;
use crate::error::Result;
use crate::stats::StorageStats;
use crate::topic_config::TopicConfig;
use bytes::Bytes;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::watch;

/// A client's batches given offsets and the epoch, and written.
mod append;
/// Group commit and what each fsync policy asks of an append.
mod durability;
/// The epoch appends stamp and the leader-epoch cache.
mod epochs;
/// Opening the directory and recovering its tail.
mod load;
/// Log start, log end and high watermark, and their watches.
mod offsets;
/// Idempotent producers' state and its snapshots.
mod producers;
/// Follower appends, truncation, and the high watermark and epochs as
/// replication sets them.
mod replication;
/// The segments themselves (Apache Kafka's `LocalLog`).
mod segments;

use epochs::{Epochs, StampedEpoch};
use load::Loaded;
pub use load::RecoveryReport;
use offsets::Offsets;
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
    /// How the `batch` policy's journal writes.
    pub journal: JournalConfig,
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
            journal: JournalConfig::default(),
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

#[derive(Debug)]
pub struct Partition {
    dir: PathBuf,
    config: LogConfig,
    topic_config: SharedTopicConfig,
    /// The segments: roll, read, retention, truncation.
    local: LocalLog,
    /// Serialises appends, rolls and truncation of this partition, and
    /// holds the leader epoch they stamp.
    append_lock: Mutex<StampedEpoch>,
    /// Log start, log end and high watermark.
    offsets: Offsets,
    shared: Arc<LogShared>,
    /// Idempotent producers' recent batches; taken after `append_lock`.
    producers: Mutex<Producers>,
    /// Leader epochs and where they start; locked after `producers`.
    epochs: Epochs,
    durable: Arc<GroupCommit>,
    /// How the log's journal names this partition.
    journal_key: JournalKey,
    recovery: RecoveryReport,
}

impl Partition {
    /// Opens `dir`, recovering the last segment, or creates it empty (a
    /// partition on its own: no clean-shutdown marker, and no journal, so
    /// it refuses appends under fsync `batch`).
    pub fn open(
        dir: &Path,
        config: LogConfig,
        topic_config: SharedTopicConfig,
        total_size: Arc<AtomicU64>,
    ) -> Result<Partition> {
        let shared = Arc::new(LogShared::new(total_size, None));
        let key = JournalKey {
            topic_id: uuid::Uuid::nil(),
            partition: 0,
        };
        Partition::open_in(dir, config, topic_config, shared, false, key)
    }

    /// Opens `dir` as partition `key` of a log. After a clean shutdown the
    /// last segment's size and indexes are trusted (`Segment::open_trusted`);
    /// otherwise it is scanned and a torn or corrupt tail truncated.
    pub fn open_in(
        dir: &Path,
        config: LogConfig,
        topic_config: SharedTopicConfig,
        shared: Arc<LogShared>,
        clean_shutdown: bool,
        key: JournalKey,
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

        let epochs = Epochs::open(dir, has_checkpoint, log_end)?;
        let mut producers = Producers {
            table: ProducerStateTable::default(),
            snapshots,
        };
        remove_snapshots_past(dir, &mut producers.snapshots, log_end);
        if size == 0 {
            // No batches, so no producers.
            producers.table.mark_loaded();
        }
        let durable = Arc::new(GroupCommit::new(log_end));
        Ok(Partition {
            dir: dir.to_path_buf(),
            config,
            topic_config,
            local: LocalLog::new(segments),
            append_lock: Mutex::new(StampedEpoch::new(epochs.latest())),
            offsets: Offsets::new(log_start_offset, log_end),
            shared,
            producers: Mutex::new(producers),
            epochs,
            durable,
            journal_key: key,
            recovery: report,
        })
    }

    /// What opening this partition found.
    pub fn recovery(&self) -> RecoveryReport {
        self.recovery
    }

    /// The offset the next appended batch gets (LEO).
    pub fn log_end_offset(&self) -> i64 {
        self.offsets.log_end()
    }

    /// The offset below which batches are committed and served to
    /// consumers: the log end offset unless the partition is replicated.
    pub fn high_watermark(&self) -> i64 {
        self.offsets.high_watermark()
    }

    pub fn log_start_offset(&self) -> i64 {
        self.offsets.log_start()
    }

    /// The topic configuration this partition follows.
    pub fn topic_config(&self) -> &SharedTopicConfig {
        &self.topic_config
    }

    /// A receiver that changes whenever the high watermark moves (on
    /// every append while the partition is not replicated), for
    /// long-polling consumer fetches.
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.offsets.subscribe()
    }

    /// A receiver that changes on every append (and truncation), for
    /// followers and acks=all waiters.
    pub fn subscribe_log_end(&self) -> watch::Receiver<i64> {
        self.offsets.subscribe_log_end()
    }

    pub fn size_bytes(&self) -> u64 {
        self.local.size_bytes()
    }

    /// The fsync policy in force: the topic's override or the broker's.
    pub fn fsync_policy(&self) -> FsyncPolicy {
        let config = *self.topic_config.read().expect("topic config lock");
        config.fsync_policy(self.config.fsync)
    }

    /// Whole batches from `offset`, up to `max_bytes` (see
    /// `Segment::read`), for consumers: only batches wholly below the high
    /// watermark. An offset past the log end or below the log start is
    /// OFFSET_OUT_OF_RANGE; one between the high watermark and the log end
    /// reads nothing (as Kafka does).
    pub fn read(&self, offset: i64, max_bytes: usize, min_one: bool) -> Result<PartitionRead> {
        let bounds = self.offsets.bounds_for_read(offset)?;
        let records = if offset >= bounds.high_watermark {
            Bytes::new()
        } else {
            self.local
                .read_range(offset, max_bytes, min_one, bounds.high_watermark)?
        };
        Ok(PartitionRead {
            records,
            high_watermark: bounds.high_watermark,
            log_start_offset: bounds.log_start,
        })
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
            |first| self.offsets.advance_log_start(first),
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

    /// After a journal replay's `flush`: everything in the log is on disk.
    pub(crate) fn replay_synced(&self) {
        self.durable.synced(self.log_end_offset());
    }

    /// The directory of this partition's files.
    pub fn dir(&self) -> &Path {
        &self.dir
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

#[cfg(test)]
mod test_support {
    use super::{LogConfig, Partition};
    use crate::topic_config::TopicConfig;
    use std::path::Path;
    use std::sync::atomic::AtomicU64;
    use std::sync::{Arc, RwLock};

    pub fn open_with(dir: &Path, topic_config: TopicConfig) -> Partition {
        Partition::open(
            dir,
            LogConfig::default(),
            Arc::new(RwLock::new(topic_config)),
            Arc::new(AtomicU64::new(0)),
        )
        .unwrap()
    }

    pub fn open(dir: &Path, segment_bytes: u64) -> Partition {
        open_with(
            dir,
            TopicConfig {
                segment_bytes,
                ..TopicConfig::default()
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::batch::split_and_validate;
    use super::super::batch::test_support::batch;
    use super::super::time_index::test_support::batch_at;
    use super::test_support::{open, open_with};
    use crate::topic_config::TopicConfig;
    use kafka_protocol::ResponseError;

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

    /// `batch(count, 10)` with its record count and last offset delta set as given, its CRC
    /// recomputed, as a hostile client could send it.
    fn claiming(count: i32, last_offset_delta: i32) -> Vec<u8> {
        let mut bytes = batch(1, 10);
        bytes[23..27].copy_from_slice(&last_offset_delta.to_be_bytes());
        bytes[57..61].copy_from_slice(&count.to_be_bytes());
        let crc = crc32c::crc32c(&bytes[21..]);
        bytes[17..21].copy_from_slice(&crc.to_be_bytes());
        bytes
    }

    #[test]
    fn a_batch_whose_offset_range_is_not_its_record_count_is_invalid_record() {
        // Before, a batch of no records claiming 2^31 - 1 more offsets took them: two such put
        // the next acknowledged batch past a segment's 32-bit relative offsets, and a recovery
        // after kill -9 cut it off.
        let dir = tempfile::tempdir().unwrap();
        let partition = open(dir.path(), 1 << 30);
        partition.append(&batch(1, 10)).unwrap();
        for (count, delta) in [(0, i32::MAX), (-1, 0), (1, i32::MAX), (3, 1), (i32::MAX, 0)] {
            let err = partition.append(&claiming(count, delta)).unwrap_err();
            assert_eq!(err.code(), ResponseError::InvalidRecord.code(), "{err}");
        }
        assert_eq!(partition.log_end_offset(), 1);
        assert_eq!(partition.append(&claiming(1, 0)).unwrap().base_offset, 1);
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
    fn offset_for_timestamp_finds_the_first_later_batch() {
        let dir = tempfile::tempdir().unwrap();
        let partition = open(dir.path(), 1 << 30);
        partition.append(&batch(3, 10)).unwrap();
        partition.append(&batch(3, 10)).unwrap();
        assert_eq!(partition.offset_for_timestamp(0).unwrap(), Some(0));
        assert_eq!(partition.offset_for_timestamp(i64::MAX).unwrap(), None);
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
    fn a_sealed_segment_that_does_not_hold_together_is_cut_and_the_ones_after_it_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(1, 200);
        {
            let partition = open(dir.path(), one.len() as u64 * 4);
            for _ in 0..12 {
                partition.append(&one).unwrap();
            }
            assert_eq!(partition.segment_base_offsets(), vec![0, 4, 8]);
        }
        // A crash lost the middle segment's pages: zeros at its full size.
        let middle = dir.path().join("00000000000000000004.log");
        let len = std::fs::metadata(&middle).unwrap().len() as usize;
        std::fs::write(&middle, vec![0u8; len]).unwrap();
        std::fs::remove_file(dir.path().join("00000000000000000004.index")).unwrap();
        let partition = open(dir.path(), one.len() as u64 * 4);
        assert_eq!(partition.segment_base_offsets(), vec![0, 4]);
        assert_eq!(partition.log_end_offset(), 4);
        assert!(partition.recovery().truncated_bytes >= len as u64);
        assert!(!dir.path().join("00000000000000000008.log").exists());
        assert_eq!(partition.append(&one).unwrap().base_offset, 4);
        let read = partition.read(4, 1 << 20, true).unwrap();
        assert_eq!(
            split_and_validate(&read.records).unwrap()[0].1.base_offset,
            4
        );
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
}
