//! One topic-partition: an ordered set of segments, the log end offset and
//! a watch that wakes long-polling fetches on append.

use super::batch::{set_base_offset, split_and_validate};
use super::segment::{Segment, DEFAULT_INDEX_INTERVAL};
use crate::config::FsyncPolicy;
use crate::error::{Error, Result};
use bytes::Bytes;
use kafka_protocol::ResponseError;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

#[derive(Debug, Clone, Copy)]
pub struct LogConfig {
    pub segment_bytes: u64,
    pub index_interval: u64,
    pub fsync: FsyncPolicy,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: crate::config::DEFAULT_SEGMENT_BYTES,
            index_interval: DEFAULT_INDEX_INTERVAL,
            fsync: FsyncPolicy::None,
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
    /// Segments by base offset; appends hold this lock, reads only to find
    /// their segment.
    segments: Mutex<BTreeMap<i64, Arc<Segment>>>,
    /// Log end offset (= high watermark on a single node), watched by fetches.
    log_end: watch::Sender<i64>,
    log_start_offset: i64,
    /// Bytes across all partitions of the broker, for stats.
    total_size: Arc<AtomicU64>,
}

impl Partition {
    /// Opens `dir`, recovering the last segment, or creates it empty.
    pub fn open(dir: &Path, config: LogConfig, total_size: Arc<AtomicU64>) -> Result<Partition> {
        std::fs::create_dir_all(dir)?;
        let mut bases: Vec<i64> = std::fs::read_dir(dir)?
            .filter_map(|entry| {
                let name = entry.ok()?.file_name().into_string().ok()?;
                name.strip_suffix(".log")?.parse().ok()
            })
            .collect();
        bases.sort_unstable();
        let mut segments = BTreeMap::new();
        for (i, base) in bases.iter().enumerate() {
            let last = i + 1 == bases.len();
            let (segment, recovery) = Segment::open(dir, *base, config.index_interval, last)?;
            if recovery.truncated_bytes > 0 {
                tracing::warn!(
                    dir = %dir.display(),
                    truncated = recovery.truncated_bytes,
                    "truncated a torn or corrupt log tail"
                );
            }
            segments.insert(*base, Arc::new(segment));
        }
        if segments.is_empty() {
            segments.insert(0, Arc::new(Segment::create(dir, 0, config.index_interval)?));
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
            segments: Mutex::new(segments),
            log_end: watch::Sender::new(log_end),
            log_start_offset,
            total_size,
        })
    }

    pub fn log_end_offset(&self) -> i64 {
        *self.log_end.borrow()
    }

    pub fn high_watermark(&self) -> i64 {
        self.log_end_offset()
    }

    pub fn log_start_offset(&self) -> i64 {
        self.log_start_offset
    }

    /// A receiver that changes whenever records are appended.
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.log_end.subscribe()
    }

    pub fn size_bytes(&self) -> u64 {
        self.segments
            .lock()
            .expect("segments lock")
            .values()
            .map(|s| s.size())
            .sum()
    }

    /// Validates the batches in `records`, assigns them offsets and appends
    /// them. Nothing is written when any batch is invalid.
    pub fn append(&self, records: &[u8]) -> Result<Appended> {
        let mut batches = split_and_validate(records)?;
        let mut chunk = records.to_vec();
        let mut segments = self.segments.lock().expect("segments lock");
        let base_offset = self.log_end_offset();
        let mut next = base_offset;
        for (at, header) in batches.iter_mut() {
            set_base_offset(&mut chunk[*at..], next);
            header.base_offset = next;
            next = header.next_offset();
        }
        let mut active = segments.values().next_back().expect("one segment").clone();
        if active.size() > 0 && active.size() + chunk.len() as u64 > self.config.segment_bytes {
            active = Arc::new(Segment::create(
                &self.dir,
                base_offset,
                self.config.index_interval,
            )?);
            segments.insert(base_offset, active.clone());
        }
        active.append(&chunk, &batches)?;
        match self.config.fsync {
            FsyncPolicy::None => {}
        }
        drop(segments);
        self.total_size
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
        self.log_end.send_replace(next);
        Ok(Appended {
            base_offset,
            last_offset: next - 1,
        })
    }

    /// Whole batches from `offset`, up to `max_bytes` (see `Segment::read`).
    pub fn read(&self, offset: i64, max_bytes: usize, min_one: bool) -> Result<PartitionRead> {
        let high_watermark = self.high_watermark();
        let log_start_offset = self.log_start_offset;
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
        let segments = self.segments.lock().expect("segments lock");
        segments
            .range(..=offset)
            .next_back()
            .map(|(_, s)| s.clone())
    }

    fn segment_after(&self, base_offset: i64) -> Option<Arc<Segment>> {
        let segments = self.segments.lock().expect("segments lock");
        segments
            .range((Bound::Excluded(base_offset), Bound::Unbounded))
            .next()
            .map(|(_, s)| s.clone())
    }

    /// Offset of the first batch with a timestamp at or after `timestamp`.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<i64>> {
        let segments: Vec<Arc<Segment>> = self
            .segments
            .lock()
            .expect("segments lock")
            .values()
            .cloned()
            .collect();
        for segment in segments {
            if let Some(offset) = segment.offset_for_timestamp(timestamp)? {
                return Ok(Some(offset));
            }
        }
        Ok(None)
    }

    pub fn segment_count(&self) -> usize {
        self.segments.lock().expect("segments lock").len()
    }

    /// Forces written bytes to disk.
    pub fn flush(&self) -> Result<()> {
        let active = self
            .segments
            .lock()
            .expect("segments lock")
            .values()
            .next_back()
            .cloned();
        if let Some(active) = active {
            active.sync()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::batch::test_support::batch;
    use super::*;

    fn open(dir: &Path, segment_bytes: u64) -> Partition {
        let config = LogConfig {
            segment_bytes,
            ..LogConfig::default()
        };
        Partition::open(dir, config, Arc::new(AtomicU64::new(0))).unwrap()
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
}
