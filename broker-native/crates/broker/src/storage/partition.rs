//! One topic-partition: an ordered set of segments, the log start and end
//! offsets and a watch that wakes long-polling fetches on append.
//!
//! Locking: appends serialise on `append_lock` (held across the write of
//! this partition only); the segment map's lock is held only to look up,
//! add or remove segments, never across file I/O.

use super::batch::{set_base_offset, split_and_validate};
use super::file_cache::FileCache;
use super::producer_state::{self, ProducerStateTable, Verdict};
use super::retention;
use super::segment::{now_ms, Segment, DEFAULT_INDEX_INTERVAL};
use crate::config::FsyncPolicy;
use crate::error::{Error, Result};
use crate::topic_config::TopicConfig;
use bytes::Bytes;
use kafka_protocol::ResponseError;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::watch;

/// A topic's configuration, shared by its partitions and changed at runtime
/// (storage reads it each time it decides to roll or delete).
pub type SharedTopicConfig = Arc<RwLock<TopicConfig>>;

/// Broker-wide storage settings.
#[derive(Debug, Clone)]
pub struct LogConfig {
    /// `segment.bytes` of topics created without one.
    pub segment_bytes: u64,
    pub index_interval: u64,
    pub fsync: FsyncPolicy,
    /// Open segment files, shared by every partition.
    pub files: Arc<FileCache>,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: crate::config::DEFAULT_SEGMENT_BYTES,
            index_interval: DEFAULT_INDEX_INTERVAL,
            fsync: FsyncPolicy::None,
            files: Arc::new(FileCache::default()),
        }
    }
}

/// Offsets of one successful append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Appended {
    pub base_offset: i64,
    pub last_offset: i64,
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
    /// Segments by base offset.
    segments: RwLock<BTreeMap<i64, Arc<Segment>>>,
    /// Serialises appends (and rolls) to this partition.
    append_lock: Mutex<()>,
    /// Log end offset (= high watermark on a single node), watched by fetches.
    log_end: watch::Sender<i64>,
    /// First offset still in the log; retention moves it forward.
    log_start_offset: AtomicI64,
    /// Bytes across all partitions of the broker, for stats.
    total_size: Arc<AtomicU64>,
    /// Idempotent producers' recent batches; taken after `append_lock`.
    producers: Mutex<ProducerStateTable>,
}

impl Partition {
    /// Opens `dir`, recovering the last segment, or creates it empty.
    pub fn open(
        dir: &Path,
        config: LogConfig,
        topic_config: SharedTopicConfig,
        total_size: Arc<AtomicU64>,
    ) -> Result<Partition> {
        // A directory made just now has nothing to list (saves a read_dir
        // per partition when creating many topics).
        let fresh = match std::fs::create_dir(dir) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
            Err(_) => {
                std::fs::create_dir_all(dir)?;
                false
            }
        };
        let mut bases: Vec<i64> = if fresh {
            Vec::new()
        } else {
            std::fs::read_dir(dir)?
                .filter_map(|entry| {
                    let name = entry.ok()?.file_name().into_string().ok()?;
                    name.strip_suffix(".log")?.parse().ok()
                })
                .collect()
        };
        bases.sort_unstable();
        let mut segments = BTreeMap::new();
        for (i, base) in bases.iter().enumerate() {
            let last = i + 1 == bases.len();
            let (segment, recovery) = Segment::open(
                dir,
                *base,
                config.index_interval,
                last,
                config.files.clone(),
            )?;
            if recovery.truncated_bytes > 0 {
                tracing::warn!(
                    dir = %dir.display(),
                    truncated = recovery.truncated_bytes,
                    "truncated a torn or corrupt log tail"
                );
            }
            if recovery.rebuilt_index && !last {
                tracing::warn!(segment = %segment.log_path().display(), "rebuilt a missing or bad index");
            }
            segments.insert(*base, Arc::new(segment));
        }
        if segments.is_empty() {
            let segment = Segment::create(dir, 0, config.index_interval, config.files.clone())?;
            segments.insert(0, Arc::new(segment));
        }
        let log_start_offset = *segments.keys().next().expect("one segment");
        let log_end = segments
            .values()
            .next_back()
            .expect("one segment")
            .next_offset();
        let size: u64 = segments.values().map(|s| s.size()).sum();
        total_size.fetch_add(size, Ordering::Relaxed);
        Ok(Partition {
            dir: dir.to_path_buf(),
            config,
            topic_config,
            segments: RwLock::new(segments),
            append_lock: Mutex::new(()),
            log_end: watch::Sender::new(log_end),
            log_start_offset: AtomicI64::new(log_start_offset),
            total_size,
            producers: Mutex::new(ProducerStateTable::default()),
        })
    }

    pub fn log_end_offset(&self) -> i64 {
        *self.log_end.borrow()
    }

    pub fn high_watermark(&self) -> i64 {
        self.log_end_offset()
    }

    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset.load(Ordering::Acquire)
    }

    /// The topic configuration this partition follows.
    pub fn topic_config(&self) -> &SharedTopicConfig {
        &self.topic_config
    }

    /// A receiver that changes whenever records are appended.
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.log_end.subscribe()
    }

    pub fn size_bytes(&self) -> u64 {
        self.segments
            .read()
            .expect("segments lock")
            .values()
            .map(|s| s.size())
            .sum()
    }

    fn active(&self) -> Arc<Segment> {
        self.segments
            .read()
            .expect("segments lock")
            .values()
            .next_back()
            .expect("one segment")
            .clone()
    }

    /// Validates the batches in `records`, assigns them offsets and appends
    /// them, rolling to a new segment by size (segment.bytes) or age
    /// (segment.ms). Nothing is written when any batch is invalid.
    pub fn append(&self, records: &[u8]) -> Result<Appended> {
        let mut batches = split_and_validate(records)?;
        let mut chunk = records.to_vec();
        let _appending = self.append_lock.lock().expect("append lock");
        let mut producers = self.producers.lock().expect("producers lock");
        if let Verdict::Duplicate(appended) =
            self.check_producers(&mut producers, records, &batches)?
        {
            return Ok(appended);
        }
        let base_offset = self.log_end_offset();
        let mut next = base_offset;
        let mut max_timestamp = -1;
        for (at, header) in batches.iter_mut() {
            set_base_offset(&mut chunk[*at..], next);
            header.base_offset = next;
            next = header.next_offset();
            max_timestamp = max_timestamp.max(header.max_timestamp);
        }
        let (segment_bytes, segment_ms) = {
            let config = self.topic_config.read().expect("topic config lock");
            // Index positions are u32: a segment never passes 4 GiB.
            (config.segment_bytes.min(u32::MAX as u64), config.segment_ms)
        };
        let mut active = self.active();
        if active.size() > 0
            && (active.size() + chunk.len() as u64 > segment_bytes
                || active.is_older_than(segment_ms, max_timestamp, now_ms()))
        {
            active.seal()?;
            active = Arc::new(Segment::create(
                &self.dir,
                base_offset,
                self.config.index_interval,
                self.config.files.clone(),
            )?);
            self.segments
                .write()
                .expect("segments lock")
                .insert(base_offset, active.clone());
        }
        active.append(&chunk, &batches)?;
        match self.config.fsync {
            FsyncPolicy::None => {}
        }
        self.total_size
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        self.log_end.send_replace(next);
        producers.record_appended(&producer_state::with_bytes(&chunk, &batches));
        Ok(Appended {
            base_offset,
            last_offset: next - 1,
        })
    }

    /// Idempotence checks for one payload (see `producer_state`), first
    /// rebuilding the state from the last segment if this is the first
    /// producer id since the partition was opened.
    fn check_producers(
        &self,
        producers: &mut ProducerStateTable,
        records: &[u8],
        batches: &[(usize, super::batch::BatchHeader)],
    ) -> Result<Verdict> {
        let batches = producer_state::with_bytes(records, batches);
        if !producers.is_loaded() && producer_state::any_idempotent(&batches) {
            let start = self.active().base_offset();
            producer_state::rebuild(producers, start, self.log_end_offset(), |offset| {
                Ok(self.read(offset, 1 << 20, true)?.records)
            })?;
        }
        producers.check(&batches)
    }

    /// Whole batches from `offset`, up to `max_bytes` (see `Segment::read`).
    pub fn read(&self, offset: i64, max_bytes: usize, min_one: bool) -> Result<PartitionRead> {
        let high_watermark = self.high_watermark();
        let log_start_offset = self.log_start_offset();
        let mut read = PartitionRead {
            records: Bytes::new(),
            high_watermark,
            log_start_offset,
        };
        if offset < log_start_offset || offset > high_watermark {
            return Err(Error::kafka(
                ResponseError::OffsetOutOfRange,
                format!("offset {offset} outside [{log_start_offset}, {high_watermark}]"),
            ));
        }
        if offset == high_watermark {
            return Ok(read);
        }
        let mut segment = self.segment_for(offset);
        while let Some(current) = segment {
            let records = current.read(offset, max_bytes, min_one)?;
            if !records.is_empty() {
                read.records = records;
                break;
            }
            segment = self.segment_after(current.base_offset());
        }
        Ok(read)
    }

    fn segment_for(&self, offset: i64) -> Option<Arc<Segment>> {
        let segments = self.segments.read().expect("segments lock");
        segments
            .range(..=offset)
            .next_back()
            .map(|(_, s)| s.clone())
    }

    fn segment_after(&self, base_offset: i64) -> Option<Arc<Segment>> {
        let segments = self.segments.read().expect("segments lock");
        segments
            .range((Bound::Excluded(base_offset), Bound::Unbounded))
            .next()
            .map(|(_, s)| s.clone())
    }

    /// Offset of the first batch with a timestamp at or after `timestamp`:
    /// the first segment whose largest timestamp reaches it, then its time
    /// index.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<i64>> {
        let candidates: Vec<Arc<Segment>> = self
            .segments
            .read()
            .expect("segments lock")
            .values()
            .filter(|s| s.max_timestamp() >= timestamp)
            .cloned()
            .collect();
        for segment in candidates {
            if let Some(offset) = segment.offset_for_timestamp(timestamp)? {
                return Ok(Some(offset.max(self.log_start_offset())));
            }
        }
        Ok(None)
    }

    /// Deletes whole sealed segments past retention.ms (by their largest
    /// timestamp, against `now_ms`) or beyond retention.bytes, oldest first,
    /// never the active one, and moves the log start offset forward.
    /// Returns how many segments went.
    pub fn enforce_retention(&self, now_ms: i64) -> Result<usize> {
        let (retention_ms, retention_bytes) = {
            let config = self.topic_config.read().expect("topic config lock");
            (config.retention_ms, config.retention_bytes)
        };
        let doomed: Vec<Arc<Segment>> = {
            let mut segments = self.segments.write().expect("segments lock");
            let sizes: Vec<retention::SegmentFacts> = segments
                .values()
                .map(|s| retention::SegmentFacts {
                    size: s.size(),
                    max_timestamp: s.max_timestamp(),
                })
                .collect();
            let count = retention::expired_prefix(&sizes, retention_ms, retention_bytes, now_ms);
            let bases: Vec<i64> = segments.keys().take(count).copied().collect();
            let doomed = bases.iter().filter_map(|b| segments.remove(b)).collect();
            if let Some(first) = segments.keys().next() {
                self.log_start_offset.fetch_max(*first, Ordering::AcqRel);
            }
            doomed
        };
        for segment in &doomed {
            self.total_size.fetch_sub(segment.size(), Ordering::Relaxed);
            segment.delete()?;
        }
        Ok(doomed.len())
    }

    pub fn segment_count(&self) -> usize {
        self.segments.read().expect("segments lock").len()
    }

    /// Base offsets of the segments, oldest first.
    pub fn segment_base_offsets(&self) -> Vec<i64> {
        self.segments
            .read()
            .expect("segments lock")
            .keys()
            .copied()
            .collect()
    }

    /// Forces written bytes to disk.
    pub fn flush(&self) -> Result<()> {
        self.active().sync()
    }
}

#[cfg(test)]
mod tests {
    use super::super::batch::test_support::batch;
    use super::super::time_index::test_support::batch_at;
    use super::*;

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
}
