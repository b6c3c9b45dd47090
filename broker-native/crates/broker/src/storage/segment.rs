//! One log segment: a file of record batches exactly as clients sent them
//! (base offsets patched), named by its base offset, with a sparse offset
//! index and a sparse time index. Split by job, as redpanda splits its
//! segment into appender, reader and index: this file holds the segment's
//! state, its files and their lifecycle (create, sync, delete); `open`
//! opens and recovers them, `write` appends and truncates, `read` reads
//! batches, and `indexes` keeps the offset and time indexes.
//!
//! The file handle comes from the broker's bounded `FileCache`; the indexes
//! live in memory (loaded on first use for sealed segments) and are written
//! out when the segment is sealed, and for the active segment at a clean
//! shutdown (so that the next start can trust them instead of scanning).

use super::file_cache::FileCache;
use super::index::{in_partition_dir, OffsetIndex};
use super::time_index::TimeIndex;
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::stats::StorageStats;
use kafka_protocol::ResponseError;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The offset and time indexes: in memory, loaded, rebuilt and written.
mod indexes;
/// Opening a segment's files, and recovery of a torn or corrupt tail.
mod open;
/// Whole batches from an offset, and the offset for a timestamp.
mod read;
/// Appends and truncation.
mod write;

use indexes::Indexes;
pub use open::Recovery;

/// Bytes of log between two index entries.
pub const DEFAULT_INDEX_INTERVAL: u64 = 4096;

/// No timestamp seen (Kafka's `RecordBatch.NO_TIMESTAMP`).
pub const NO_TIMESTAMP: i64 = -1;

pub fn log_file_name(base_offset: i64) -> String {
    format!("{base_offset:020}.log")
}

pub fn index_file_name(base_offset: i64) -> String {
    format!("{base_offset:020}.index")
}

pub fn time_index_file_name(base_offset: i64) -> String {
    format!("{base_offset:020}.timeindex")
}

#[derive(Debug)]
pub struct Segment {
    base_offset: i64,
    dir: PathBuf,
    files: Arc<FileCache>,
    file_key: u64,
    indexes: Mutex<Indexes>,
    /// Bytes written to the file (page cache); readers never look past it,
    /// so a batch is visible only once it is wholly written.
    dirty_size: AtomicU64,
    /// Offset the next appended batch gets.
    next_offset: AtomicI64,
    /// Log bytes appended since the last index entry; only the appender
    /// (serialised by the partition) touches it.
    bytes_since_index: AtomicU64,
    index_interval: u64,
    /// Largest batch timestamp in the segment and the batch that has it.
    max_timestamp: AtomicI64,
    offset_of_max_timestamp: AtomicI64,
    /// The first batch's max timestamp: segment.ms counts from it.
    first_timestamp: AtomicI64,
    /// Wall clock (ms) when this process created or opened the segment;
    /// segment.ms counts from it when batches carry no timestamps.
    created_ms: i64,
    deleted: AtomicBool,
    /// The log file exists; false for a segment made by `create_lazily`
    /// until its first write.
    on_disk: AtomicBool,
    /// Serialises making the file of a lazily created segment.
    create_lock: Mutex<()>,
    /// Appended since the last sync (so flushing 100K idle partitions
    /// opens and fsyncs nothing).
    unsynced: AtomicBool,
    /// Held across a sync, so that a caller who finds nothing left to sync
    /// knows the sync that took it has finished.
    sync_lock: Mutex<()>,
    /// In the interval flusher's queue (see `FlushQueue`).
    queued: AtomicBool,
    /// The in-memory indexes changed since they were last written.
    indexes_dirty: AtomicBool,
    /// Held while the index files are written or removed (seal, a clean
    /// shutdown's write, truncation, a rebuilt index written back, delete):
    /// they all go through `<path>.tmp` and a rename, and a write must not
    /// bring back the files of a deleted segment.
    index_files: Mutex<()>,
}

impl Segment {
    fn new(
        dir: &Path,
        base_offset: i64,
        index_interval: u64,
        files: Arc<FileCache>,
        size: u64,
    ) -> Segment {
        let file_key = files.new_key();
        Segment {
            base_offset,
            dir: dir.to_path_buf(),
            files,
            file_key,
            indexes: Mutex::new(Indexes::default()),
            dirty_size: AtomicU64::new(size),
            next_offset: AtomicI64::new(base_offset),
            bytes_since_index: AtomicU64::new(0),
            index_interval,
            max_timestamp: AtomicI64::new(NO_TIMESTAMP),
            offset_of_max_timestamp: AtomicI64::new(base_offset),
            first_timestamp: AtomicI64::new(NO_TIMESTAMP),
            created_ms: now_ms(),
            deleted: AtomicBool::new(false),
            on_disk: AtomicBool::new(true),
            create_lock: Mutex::new(()),
            unsynced: AtomicBool::new(false),
            sync_lock: Mutex::new(()),
            queued: AtomicBool::new(false),
            indexes_dirty: AtomicBool::new(false),
            index_files: Mutex::new(()),
        }
    }

    /// Creates an empty segment (replacing any file of the same name), and
    /// the partition's directory if it has none yet.
    pub fn create(
        dir: &Path,
        base_offset: i64,
        index_interval: u64,
        files: Arc<FileCache>,
    ) -> Result<Segment> {
        let segment = Segment::create_lazily(dir, base_offset, index_interval, files);
        segment.make_file()?;
        Ok(segment)
    }

    /// An empty segment whose log file (and the partition's directory, if
    /// it has none) is made by its first write: a topic that is created and
    /// never written costs no inode, so creating 100K of them is bound by the
    /// catalog, not by the file system. Nothing reads an empty segment's
    /// file (reads stop at its size, 0), and a sync finds nothing unsynced.
    pub fn create_lazily(
        dir: &Path,
        base_offset: i64,
        index_interval: u64,
        files: Arc<FileCache>,
    ) -> Segment {
        let segment = Segment::new(dir, base_offset, index_interval, files, 0);
        segment.on_disk.store(false, Ordering::Relaxed);
        *segment.indexes.lock().expect("index lock") = Indexes {
            offsets: Some(OffsetIndex::new()),
            times: Some(TimeIndex::new()),
        };
        segment
    }

    /// Makes the empty log file (replacing any file of the same name, and
    /// removing index files left from one) and opens it.
    fn make_file(&self) -> Result<Arc<File>> {
        let path = self.log_path();
        let log = Arc::new(in_partition_dir(&path, || {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)
        })?);
        for stale in [self.index_path(), self.time_index_path()] {
            match std::fs::remove_file(stale) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                _ => {}
            }
        }
        self.files.insert(self.file_key, log.clone());
        self.on_disk.store(true, Ordering::Release);
        Ok(log)
    }

    fn file(&self) -> Result<Arc<File>> {
        if !self.on_disk.load(Ordering::Acquire) {
            let _creating = self.create_lock.lock().expect("create lock");
            if self.deleted.load(Ordering::Acquire) {
                return Err(self.gone());
            }
            if !self.on_disk.load(Ordering::Acquire) {
                return self.make_file();
            }
        }
        match self.files.get(self.file_key, &self.log_path()) {
            Err(Error::Io(e))
                if e.kind() == std::io::ErrorKind::NotFound
                    && self.deleted.load(Ordering::Acquire) =>
            {
                Err(self.gone())
            }
            other => other,
        }
    }

    fn gone(&self) -> Error {
        Error::kafka(
            ResponseError::OffsetOutOfRange,
            format!("segment {} was deleted by retention", self.base_offset),
        )
    }

    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    pub fn next_offset(&self) -> i64 {
        self.next_offset.load(Ordering::Acquire)
    }

    pub fn size(&self) -> u64 {
        self.dirty_size.load(Ordering::Acquire)
    }

    /// The largest batch timestamp, or `NO_TIMESTAMP` when empty.
    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp.load(Ordering::Acquire)
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join(log_file_name(self.base_offset))
    }

    pub fn index_path(&self) -> PathBuf {
        self.dir.join(index_file_name(self.base_offset))
    }

    pub fn time_index_path(&self) -> PathBuf {
        self.dir.join(time_index_file_name(self.base_offset))
    }

    fn relative(&self, offset: i64) -> u32 {
        offset
            .saturating_sub(self.base_offset)
            .clamp(0, u32::MAX as i64) as u32
    }

    /// Whether a batch with `incoming_timestamp` is due for a new segment by
    /// age (Kafka's rule: from the first batch's timestamp, or from when the
    /// segment was created when batches carry none).
    pub fn is_older_than(&self, segment_ms: u64, incoming_timestamp: i64, now_ms: i64) -> bool {
        if self.size() == 0 {
            return false;
        }
        let first = self.first_timestamp.load(Ordering::Relaxed);
        let waited = if first >= 0 && incoming_timestamp >= 0 {
            incoming_timestamp - first
        } else {
            now_ms - self.created_ms
        };
        waited >= segment_ms.min(i64::MAX as u64) as i64
    }

    /// Forces the written bytes to disk (fdatasync, counted in `stats`)
    /// unless nothing was written since the last sync. Returns once every
    /// byte written before the call is durable, even when a concurrent
    /// caller did the sync.
    pub fn sync(&self, stats: &StorageStats) -> Result<()> {
        let _syncing = self.sync_lock.lock().expect("sync lock");
        if self.unsynced.swap(false, Ordering::AcqRel) {
            let started = std::time::Instant::now();
            match self.file().and_then(|f| Ok(f.sync_data()?)) {
                Ok(()) => {
                    stats.slow_disk(); // fault injection: a slow-disk delay, if any
                    stats.record_fsync(started.elapsed());
                }
                Err(_) if self.deleted.load(Ordering::Acquire) => {}
                Err(e) => {
                    self.unsynced.store(true, Ordering::Release);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Whether bytes were written since the last sync.
    pub fn is_unsynced(&self) -> bool {
        self.unsynced.load(Ordering::Acquire)
    }

    /// Marks the segment as queued for the interval flusher; false when it
    /// already was.
    pub fn mark_queued(&self) -> bool {
        !self.queued.swap(true, Ordering::AcqRel)
    }

    pub fn clear_queued(&self) {
        self.queued.store(false, Ordering::Release);
    }

    /// Removes the segment's files; readers that still hold it get
    /// OFFSET_OUT_OF_RANGE.
    pub fn delete(&self) -> Result<()> {
        let _index_files = self.index_files.lock().expect("index files lock");
        self.deleted.store(true, Ordering::Release);
        self.unsynced.store(false, Ordering::Release);
        self.files.remove(self.file_key);
        for path in [self.log_path(), self.index_path(), self.time_index_path()] {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::Segment;
    use crate::storage::batch::{set_base_offset, split_and_validate, test_support::batch};
    use crate::storage::file_cache::FileCache;
    use crate::storage::time_index::test_support::batch_at;
    use std::path::Path;
    use std::sync::Arc;

    pub fn cache() -> Arc<FileCache> {
        Arc::new(FileCache::new(16))
    }

    pub fn append_bytes(segment: &Segment, mut bytes: Vec<u8>) -> i64 {
        let base = segment.next_offset();
        set_base_offset(&mut bytes, base);
        let batches = split_and_validate(&bytes).unwrap();
        segment.append(&bytes, &batches).unwrap();
        base
    }

    pub fn append_batch(segment: &Segment, count: usize, value_len: usize) -> i64 {
        append_bytes(segment, batch(count, value_len))
    }

    pub fn timed_segment(dir: &Path, count: i64) -> Segment {
        let segment = Segment::create(dir, 0, 256, cache()).unwrap();
        for i in 0..count {
            append_bytes(&segment, batch_at(1, 100, 1_000 + i));
        }
        segment
    }

    pub fn index_entries(segment: &Segment) -> (Vec<crate::storage::index::IndexEntry>, usize) {
        let offsets = segment.with_offsets(|o| o.entries().to_vec()).unwrap();
        (offsets, segment.time_index_entry_count().unwrap())
    }
}
