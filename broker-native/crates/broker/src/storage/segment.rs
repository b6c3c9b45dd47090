//! One log segment: a file of record batches exactly as clients sent them
//! (base offsets patched), named by its base offset, with a sparse offset
//! index and a sparse time index.
//!
//! The file handle comes from the broker's bounded `FileCache`; the indexes
//! live in memory (loaded on first use for sealed segments) and are written
//! out when the segment is sealed, and for the active segment at a clean
//! shutdown (so that the next start can trust them instead of scanning).

use super::batch::{self, BatchHeader, HEADER_SIZE};
use super::file_cache::FileCache;
use super::index::{write_replacing, write_replacing_durably, OffsetIndex};
use super::time_index::TimeIndex;
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::stats::StorageStats;
use bytes::Bytes;
use kafka_protocol::ResponseError;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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

/// Both indexes; None until loaded (sealed segments load on first use).
#[derive(Debug, Default)]
struct Indexes {
    offsets: Option<OffsetIndex>,
    times: Option<TimeIndex>,
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
}

/// What recovery found in a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    pub valid_bytes: u64,
    pub truncated_bytes: u64,
    /// Whether the offset or time index had to be rebuilt from the log.
    pub rebuilt_index: bool,
    /// Whether every batch was read and checked (size and CRC).
    pub scanned: bool,
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
            unsynced: AtomicBool::new(false),
            sync_lock: Mutex::new(()),
            queued: AtomicBool::new(false),
            indexes_dirty: AtomicBool::new(false),
        }
    }

    /// Creates an empty segment (replacing any file of the same name).
    pub fn create(
        dir: &Path,
        base_offset: i64,
        index_interval: u64,
        files: Arc<FileCache>,
    ) -> Result<Segment> {
        let segment = Segment::new(dir, base_offset, index_interval, files, 0);
        let log = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(segment.log_path())?;
        for stale in [segment.index_path(), segment.time_index_path()] {
            match std::fs::remove_file(stale) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                _ => {}
            }
        }
        segment.files.insert(segment.file_key, Arc::new(log));
        *segment.indexes.lock().expect("index lock") = Indexes {
            offsets: Some(OffsetIndex::new()),
            times: Some(TimeIndex::new()),
        };
        Ok(segment)
    }

    /// Opens an existing segment. With `recover` (the last segment), every
    /// batch is checked (size and CRC), a torn or corrupt tail is truncated
    /// and both indexes are rebuilt. Otherwise (a sealed segment) the log is
    /// trusted, and an index file that is missing or malformed is rebuilt
    /// from the log.
    pub fn open(
        dir: &Path,
        base_offset: i64,
        index_interval: u64,
        recover: bool,
        files: Arc<FileCache>,
    ) -> Result<(Segment, Recovery)> {
        let log_path = dir.join(log_file_name(base_offset));
        let file_size = std::fs::metadata(&log_path)?.len();
        let segment = Segment::new(dir, base_offset, index_interval, files, file_size);
        if recover {
            let recovery = segment.recover(file_size)?;
            return Ok((segment, recovery));
        }
        let index_ok = std::fs::metadata(segment.index_path()).is_ok_and(|m| m.len() % 8 == 0);
        let last_time = TimeIndex::read_last(&segment.time_index_path())?;
        let rebuilt_index = match last_time {
            Some(last) if index_ok || file_size == 0 => {
                segment
                    .max_timestamp
                    .store(last.timestamp, Ordering::Relaxed);
                segment.offset_of_max_timestamp.store(
                    base_offset + i64::from(last.relative_offset),
                    Ordering::Relaxed,
                );
                segment.find_next_offset(file_size)?;
                false
            }
            _ => {
                let (offsets, times) = segment.rebuild_indexes(file_size)?;
                offsets.write(&segment.index_path())?;
                times.write(&segment.time_index_path())?;
                true
            }
        };
        Ok((
            segment,
            Recovery {
                valid_bytes: file_size,
                truncated_bytes: 0,
                rebuilt_index,
                scanned: false,
            },
        ))
    }

    /// Opens the last segment after a clean shutdown: its size and index
    /// files are trusted, without reading the batches. Only the headers
    /// from the last index entry to the end are walked, to find the next
    /// offset and to check that the files agree; if they do not, the
    /// segment is recovered as after a crash.
    pub fn open_trusted(
        dir: &Path,
        base_offset: i64,
        index_interval: u64,
        files: Arc<FileCache>,
    ) -> Result<(Segment, Recovery)> {
        let log_path = dir.join(log_file_name(base_offset));
        let file_size = std::fs::metadata(&log_path)?.len();
        let segment = Segment::new(dir, base_offset, index_interval, files, file_size);
        if segment.adopt_index_files(file_size)? {
            return Ok((
                segment,
                Recovery {
                    valid_bytes: file_size,
                    truncated_bytes: 0,
                    rebuilt_index: false,
                    scanned: false,
                },
            ));
        }
        tracing::warn!(segment = %segment.log_path().display(), "index files disagree with the log after a clean shutdown; scanning it");
        segment.reset_timestamps();
        let recovery = segment.recover(file_size)?;
        Ok((segment, recovery))
    }

    /// Loads both index files of the active segment into memory and walks
    /// the headers after the last index entry; false when anything does
    /// not add up (a missing or bad file, a header out of place, a time
    /// entry past the end).
    fn adopt_index_files(&self, file_size: u64) -> Result<bool> {
        let (mut offsets, mut times) = if file_size == 0 {
            (OffsetIndex::new(), TimeIndex::new())
        } else {
            let offsets = OffsetIndex::load(&self.index_path(), file_size)?;
            let times = TimeIndex::load(&self.time_index_path())?;
            match (offsets, times) {
                (Some(o), Some(t)) => (o, t),
                _ => return Ok(false),
            }
        };
        if file_size > 0 {
            match self.header_at(0, file_size) {
                Ok(Some(first)) if first.base_offset == self.base_offset => self
                    .first_timestamp
                    .store(first.max_timestamp, Ordering::Relaxed),
                _ => return Ok(false),
            }
        }
        if let Some(last) = times.last() {
            self.max_timestamp.store(last.timestamp, Ordering::Relaxed);
            self.offset_of_max_timestamp.store(
                self.base_offset + i64::from(last.relative_offset),
                Ordering::Relaxed,
            );
        }
        let (mut pos, mut next_offset) =
            offsets.entries().last().map_or((0, self.base_offset), |e| {
                (
                    u64::from(e.position),
                    self.base_offset + i64::from(e.relative_offset),
                )
            });
        let mut since_index = 0u64;
        while pos < file_size {
            match self.header_at(pos, file_size) {
                Ok(Some(h)) if h.base_offset == next_offset && pos + h.size as u64 <= file_size => {
                    self.note_batch(&h, pos, &mut since_index, &mut offsets, &mut times);
                    next_offset = h.next_offset();
                    pos += h.size as u64;
                }
                _ => return Ok(false),
            }
        }
        if times
            .last()
            .is_some_and(|t| self.base_offset + i64::from(t.relative_offset) >= next_offset)
        {
            return Ok(false);
        }
        self.next_offset.store(next_offset, Ordering::Release);
        self.bytes_since_index.store(since_index, Ordering::Relaxed);
        *self.indexes.lock().expect("index lock") = Indexes {
            offsets: Some(offsets),
            times: Some(times),
        };
        Ok(true)
    }

    fn reset_timestamps(&self) {
        self.first_timestamp.store(NO_TIMESTAMP, Ordering::Relaxed);
        self.max_timestamp.store(NO_TIMESTAMP, Ordering::Relaxed);
        self.offset_of_max_timestamp
            .store(self.base_offset, Ordering::Relaxed);
    }

    fn recover(&self, file_size: u64) -> Result<Recovery> {
        let mut offsets = OffsetIndex::new();
        let mut times = TimeIndex::new();
        let mut pos = 0u64;
        let mut since_index = 0u64;
        let mut next_offset = self.base_offset;
        if file_size > 0 {
            let log = self.file()?;
            let mut header_buf = [0u8; HEADER_SIZE];
            let mut whole = Vec::new();
            while pos + HEADER_SIZE as u64 <= file_size {
                log.read_exact_at(&mut header_buf, pos)?;
                let Ok(header) = BatchHeader::parse(&header_buf) else {
                    break;
                };
                if pos + header.size as u64 > file_size {
                    break;
                }
                whole.resize(header.size, 0);
                log.read_exact_at(&mut whole, pos)?;
                // The base offset is outside the CRC: a damaged one must
                // neither go back nor leave the segment's offset range.
                if batch::validate(&whole).is_err()
                    || header.base_offset < next_offset
                    || !header.fits_segment(self.base_offset)
                {
                    break;
                }
                self.note_batch(&header, pos, &mut since_index, &mut offsets, &mut times);
                next_offset = header.next_offset();
                pos += header.size as u64;
            }
            if pos < file_size {
                log.set_len(pos)?;
            }
        }
        self.dirty_size.store(pos, Ordering::Release);
        self.next_offset.store(next_offset, Ordering::Release);
        self.bytes_since_index.store(since_index, Ordering::Relaxed);
        *self.indexes.lock().expect("index lock") = Indexes {
            offsets: Some(offsets),
            times: Some(times),
        };
        // Rebuilt in memory only: the next clean flush writes them.
        self.indexes_dirty.store(pos > 0, Ordering::Relaxed);
        Ok(Recovery {
            valid_bytes: pos,
            truncated_bytes: file_size - pos,
            rebuilt_index: true,
            scanned: true,
        })
    }

    /// Rebuilds both indexes of a sealed segment from its batch headers.
    fn rebuild_indexes(&self, size: u64) -> Result<(OffsetIndex, TimeIndex)> {
        let mut offsets = OffsetIndex::new();
        let mut times = TimeIndex::new();
        let mut since_index = 0u64;
        let mut pos = 0u64;
        let mut next_offset = self.base_offset;
        while let Some(header) = self.header_at(pos, size)? {
            self.note_batch(&header, pos, &mut since_index, &mut offsets, &mut times);
            next_offset = header.next_offset();
            pos += header.size as u64;
        }
        self.seal_time_index(&mut times);
        self.next_offset.store(next_offset, Ordering::Release);
        Ok((offsets, times))
    }

    /// Accounts one batch at `pos`: timestamps, and index entries when an
    /// index interval has passed.
    fn note_batch(
        &self,
        header: &BatchHeader,
        pos: u64,
        since_index: &mut u64,
        offsets: &mut OffsetIndex,
        times: &mut TimeIndex,
    ) {
        if self.first_timestamp.load(Ordering::Relaxed) == NO_TIMESTAMP {
            self.first_timestamp
                .store(header.max_timestamp, Ordering::Relaxed);
        }
        if header.max_timestamp > self.max_timestamp.load(Ordering::Relaxed) {
            self.max_timestamp
                .store(header.max_timestamp, Ordering::Relaxed);
            self.offset_of_max_timestamp
                .store(header.base_offset, Ordering::Relaxed);
        }
        if *since_index >= self.index_interval {
            offsets.append(self.relative(header.base_offset), pos as u32);
            times.append(
                self.max_timestamp(),
                self.relative(self.offset_of_max_timestamp.load(Ordering::Relaxed)),
            );
            *since_index = 0;
        }
        *since_index += header.size as u64;
    }

    /// The final time entry: the segment's largest timestamp, so that a
    /// sealed segment's max timestamp is the file's last entry.
    fn seal_time_index(&self, times: &mut TimeIndex) {
        let max = self.max_timestamp();
        if max != NO_TIMESTAMP {
            times.append(
                max,
                self.relative(self.offset_of_max_timestamp.load(Ordering::Relaxed)),
            );
        }
    }

    /// Walks headers from the last index entry to learn the next offset.
    fn find_next_offset(&self, file_size: u64) -> Result<()> {
        let start = u64::from(self.with_offsets(|o| o.lookup(u32::MAX))?);
        let mut pos = start;
        let mut next_offset = self.base_offset;
        while let Some(header) = self.header_at(pos, file_size)? {
            next_offset = header.next_offset();
            pos += header.size as u64;
        }
        self.next_offset.store(next_offset, Ordering::Release);
        self.bytes_since_index.store(pos - start, Ordering::Relaxed);
        Ok(())
    }

    /// Loads a sealed segment's indexes if they are not in memory (I/O
    /// without the lock held; a rebuilt index is written back).
    fn ensure_indexes(&self) -> Result<()> {
        {
            let indexes = self.indexes.lock().expect("index lock");
            if indexes.offsets.is_some() && indexes.times.is_some() {
                return Ok(());
            }
        }
        let size = self.size();
        let offsets = OffsetIndex::load(&self.index_path(), size)?;
        let times = TimeIndex::load(&self.time_index_path())?;
        let (offsets, times) = match (offsets, times) {
            (Some(o), Some(t)) => (o, t),
            _ => {
                tracing::warn!(segment = %self.log_path().display(), "rebuilding a bad index");
                let (o, t) = self.rebuild_indexes(size)?;
                o.write(&self.index_path())?;
                t.write(&self.time_index_path())?;
                (o, t)
            }
        };
        let mut indexes = self.indexes.lock().expect("index lock");
        if indexes.offsets.is_none() || indexes.times.is_none() {
            *indexes = Indexes {
                offsets: Some(offsets),
                times: Some(times),
            };
        }
        Ok(())
    }

    fn with_offsets<T>(&self, f: impl FnOnce(&OffsetIndex) -> T) -> Result<T> {
        self.ensure_indexes()?;
        let indexes = self.indexes.lock().expect("index lock");
        Ok(f(indexes.offsets.as_ref().expect("loaded")))
    }

    fn with_times<T>(&self, f: impl FnOnce(&TimeIndex) -> T) -> Result<T> {
        self.ensure_indexes()?;
        let indexes = self.indexes.lock().expect("index lock");
        Ok(f(indexes.times.as_ref().expect("loaded")))
    }

    fn file(&self) -> Result<Arc<File>> {
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

    /// Appends `chunk`, whose batches (at their positions within `chunk`)
    /// already carry their final offsets. Callers serialise appends.
    pub fn append(&self, chunk: &[u8], batches: &[(usize, BatchHeader)]) -> Result<()> {
        let start = self.size();
        self.file()?.write_all_at(chunk, start)?;
        self.unsynced.store(true, Ordering::Release);
        self.indexes_dirty.store(true, Ordering::Relaxed);
        let mut since_index = self.bytes_since_index.load(Ordering::Relaxed);
        {
            let mut indexes = self.indexes.lock().expect("index lock");
            let Indexes {
                offsets: Some(offsets),
                times: Some(times),
            } = &mut *indexes
            else {
                unreachable!("the active segment keeps its indexes loaded");
            };
            for (at, header) in batches {
                self.note_batch(header, start + *at as u64, &mut since_index, offsets, times);
            }
        }
        self.bytes_since_index.store(since_index, Ordering::Relaxed);
        if let Some((_, last)) = batches.last() {
            self.next_offset
                .store(last.next_offset(), Ordering::Release);
        }
        self.dirty_size
            .store(start + chunk.len() as u64, Ordering::Release);
        Ok(())
    }

    /// Marks the end of appends: writes both index files (the time index
    /// ends with the segment's largest timestamp) and frees them from memory
    /// until a reader needs them.
    pub fn seal(&self) -> Result<()> {
        let taken = std::mem::take(&mut *self.indexes.lock().expect("index lock"));
        let (Some(offsets), Some(mut times)) = (taken.offsets, taken.times) else {
            return Ok(());
        };
        self.seal_time_index(&mut times);
        offsets.write(&self.index_path())?;
        times.write(&self.time_index_path())?;
        self.indexes_dirty.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Writes the active segment's indexes as `seal` would (the time index
    /// ending with the largest timestamp) but keeps them in memory, if
    /// appends changed them since they were last written.
    pub fn write_indexes(&self) -> Result<()> {
        if !self.indexes_dirty.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let encoded = {
            let indexes = self.indexes.lock().expect("index lock");
            match (&indexes.offsets, &indexes.times) {
                (Some(offsets), Some(times)) => {
                    let mut times = times.clone();
                    self.seal_time_index(&mut times);
                    Some((offsets.encode(), times.encode()))
                }
                _ => None,
            }
        };
        let Some((offsets, times)) = encoded else {
            return Ok(());
        };
        let written = write_replacing(&self.index_path(), &offsets)
            .and_then(|()| write_replacing(&self.time_index_path(), &times));
        if written.is_err() {
            self.indexes_dirty.store(true, Ordering::Release);
        }
        written
    }

    /// Cuts the segment at the batch that holds `offset` (so at a batch
    /// boundary at or below it): the file (made durable), both indexes
    /// (written back durably) and the running timestamps. Returns the new
    /// next offset. Callers serialise it with appends; the segment is the
    /// active one afterwards.
    pub fn truncate_to(&self, offset: i64) -> Result<i64> {
        let size = self.size();
        let Some((pos, header)) = self.position_of(offset.max(self.base_offset), size)? else {
            return Ok(self.next_offset());
        };
        let new_next = header.base_offset;
        let file = self.file()?;
        file.set_len(pos)?;
        file.sync_data()?;
        let first = if pos > 0 {
            self.header_at(0, pos)?
        } else {
            None
        };
        let (offsets_bytes, times_bytes) = {
            let mut indexes = self.indexes.lock().expect("index lock");
            let Indexes {
                offsets: Some(offsets),
                times: Some(times),
            } = &mut *indexes
            else {
                unreachable!("position_of loaded the indexes");
            };
            offsets.truncate_to_position(pos);
            times.truncate_to_offset(self.relative(new_next));
            self.reset_timestamps();
            if let Some(first) = first {
                self.first_timestamp
                    .store(first.max_timestamp, Ordering::Relaxed);
            }
            if let Some(last) = times.last() {
                self.max_timestamp.store(last.timestamp, Ordering::Relaxed);
                self.offset_of_max_timestamp.store(
                    self.base_offset + i64::from(last.relative_offset),
                    Ordering::Relaxed,
                );
            }
            let mut at = offsets
                .entries()
                .last()
                .map_or(0, |e| u64::from(e.position));
            let mut since_index = 0u64;
            while let Some(h) = self.header_at(at, pos)? {
                self.note_batch(&h, at, &mut since_index, offsets, times);
                at += h.size as u64;
            }
            self.bytes_since_index.store(since_index, Ordering::Relaxed);
            let mut sealed_times = times.clone();
            self.seal_time_index(&mut sealed_times);
            (offsets.encode(), sealed_times.encode())
        };
        self.next_offset.store(new_next, Ordering::Release);
        self.dirty_size.store(pos, Ordering::Release);
        self.unsynced.store(false, Ordering::Release);
        write_replacing_durably(&self.index_path(), &offsets_bytes)?;
        write_replacing_durably(&self.time_index_path(), &times_bytes)?;
        self.indexes_dirty.store(false, Ordering::Release);
        Ok(new_next)
    }

    fn header_at(&self, pos: u64, size: u64) -> Result<Option<BatchHeader>> {
        if pos + HEADER_SIZE as u64 > size {
            return Ok(None);
        }
        let mut buf = [0u8; HEADER_SIZE];
        self.file()?.read_exact_at(&mut buf, pos)?;
        Ok(Some(BatchHeader::parse(&buf)?))
    }

    /// Position of the first batch whose last offset is >= `offset`,
    /// scanning headers from the index entry at or before it.
    fn position_of(&self, offset: i64, size: u64) -> Result<Option<(u64, BatchHeader)>> {
        let mut pos = u64::from(self.with_offsets(|o| o.lookup(self.relative(offset)))?);
        while let Some(header) = self.header_at(pos, size)? {
            if header.last_offset() >= offset {
                return Ok(Some((pos, header)));
            }
            pos += header.size as u64;
        }
        Ok(None)
    }

    /// Whole batches starting with the one that holds `offset`, at most
    /// `max_bytes` of them, except that with `min_one` the first batch is
    /// returned whole even when it is larger (KIP-74). One read into one
    /// buffer; records are not decoded.
    pub fn read(&self, offset: i64, max_bytes: usize, min_one: bool) -> Result<Bytes> {
        self.read_below(offset, max_bytes, min_one, i64::MAX)
    }

    /// `read`, but only batches that end below `end_offset` (whose last
    /// offset is smaller).
    pub fn read_below(
        &self,
        offset: i64,
        max_bytes: usize,
        min_one: bool,
        end_offset: i64,
    ) -> Result<Bytes> {
        if self.deleted.load(Ordering::Acquire) {
            return Err(self.gone());
        }
        let size = self.size();
        let Some((pos, first)) = self.position_of(offset, size)? else {
            return Ok(Bytes::new());
        };
        if first.last_offset() >= end_offset {
            return Ok(Bytes::new());
        }
        let file = self.file()?;
        if first.size > max_bytes {
            if !min_one {
                return Ok(Bytes::new());
            }
            let mut buf = vec![0u8; first.size];
            file.read_exact_at(&mut buf, pos)?;
            return Ok(Bytes::from(buf));
        }
        let want = (max_bytes as u64).min(size - pos) as usize;
        let mut buf = vec![0u8; want];
        file.read_exact_at(&mut buf, pos)?;
        let mut end = 0usize;
        while end + HEADER_SIZE <= buf.len() {
            let header = BatchHeader::parse(&buf[end..])?;
            if end + header.size > buf.len() || header.last_offset() >= end_offset {
                break;
            }
            end += header.size;
        }
        buf.truncate(end);
        Ok(Bytes::from(buf))
    }

    /// Base offset of the first batch with a max timestamp >= `timestamp`:
    /// the time index gives where to start, then headers are scanned.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<i64>> {
        if self.max_timestamp() < timestamp {
            return Ok(None);
        }
        let size = self.size();
        let mut pos = match self.with_times(|t| t.lookup(timestamp))? {
            Some(entry) => u64::from(self.with_offsets(|o| o.lookup(entry.relative_offset))?),
            None => 0,
        };
        while let Some(header) = self.header_at(pos, size)? {
            if header.max_timestamp >= timestamp {
                return Ok(Some(header.base_offset));
            }
            pos += header.size as u64;
        }
        Ok(None)
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
                Ok(()) => stats.record_fsync(started.elapsed()),
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

    /// Blocks every sync of this segment while the guard lives (tests of
    /// group commit).
    #[cfg(test)]
    pub(crate) fn hold_sync(&self) -> std::sync::MutexGuard<'_, ()> {
        self.sync_lock.lock().expect("sync lock")
    }

    /// Removes the segment's files; readers that still hold it get
    /// OFFSET_OUT_OF_RANGE.
    pub fn delete(&self) -> Result<()> {
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

    pub fn index_entry_count(&self) -> Result<usize> {
        self.with_offsets(|o| o.entries().len())
    }

    pub fn time_index_entry_count(&self) -> Result<usize> {
        self.with_times(|t| t.entries().len())
    }
}

#[cfg(test)]
mod tests {
    use super::super::batch::{set_base_offset, split_and_validate, test_support::batch};
    use super::super::time_index::test_support::batch_at;
    use super::*;
    use std::io::Write;

    fn cache() -> Arc<FileCache> {
        Arc::new(FileCache::new(16))
    }

    fn append_bytes(segment: &Segment, mut bytes: Vec<u8>) -> i64 {
        let base = segment.next_offset();
        set_base_offset(&mut bytes, base);
        let batches = split_and_validate(&bytes).unwrap();
        segment.append(&bytes, &batches).unwrap();
        base
    }

    fn append_batch(segment: &Segment, count: usize, value_len: usize) -> i64 {
        append_bytes(segment, batch(count, value_len))
    }

    #[test]
    fn append_then_read_returns_the_same_batches() {
        let dir = tempfile::tempdir().unwrap();
        let segment = Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL, cache()).unwrap();
        append_batch(&segment, 3, 10);
        append_batch(&segment, 2, 10);
        assert_eq!(segment.next_offset(), 5);
        let all = segment.read(0, 1 << 20, false).unwrap();
        assert_eq!(all.len() as u64, segment.size());
        let from_four = segment.read(4, 1 << 20, false).unwrap();
        let batches = split_and_validate(&from_four).unwrap();
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0].1.base_offset, 3);
    }

    #[test]
    fn read_stops_at_max_bytes_on_a_batch_boundary() {
        let dir = tempfile::tempdir().unwrap();
        let segment = Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL, cache()).unwrap();
        for _ in 0..4 {
            append_batch(&segment, 1, 100);
        }
        let one = segment.size() as usize / 4;
        let got = segment.read(0, one * 2 + one / 2, false).unwrap();
        assert_eq!(got.len(), one * 2);
    }

    #[test]
    fn oversized_first_batch_is_returned_whole_only_with_min_one() {
        let dir = tempfile::tempdir().unwrap();
        let segment = Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL, cache()).unwrap();
        append_batch(&segment, 1, 1000);
        assert!(segment.read(0, 100, false).unwrap().is_empty());
        assert_eq!(
            segment.read(0, 100, true).unwrap().len() as u64,
            segment.size()
        );
    }

    #[test]
    fn index_gets_entries_and_lookup_finds_later_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let segment = Segment::create(dir.path(), 100, 4096, cache()).unwrap();
        for _ in 0..50 {
            append_batch(&segment, 2, 500);
        }
        assert!(segment.index_entry_count().unwrap() > 3);
        let got = segment.read(171, 1 << 20, false).unwrap();
        let batches = split_and_validate(&got).unwrap();
        assert_eq!(batches[0].1.base_offset, 170);
    }

    #[test]
    fn reads_work_when_the_file_cache_closed_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let files = Arc::new(FileCache::new(1));
        let a = Segment::create(dir.path(), 0, 4096, files.clone()).unwrap();
        let b = Segment::create(dir.path(), 100, 4096, files.clone()).unwrap();
        append_batch(&a, 2, 10);
        append_batch(&b, 2, 10);
        append_batch(&a, 2, 10);
        assert_eq!(files.open_files(), 1);
        assert_eq!(a.read(0, 1 << 20, false).unwrap().len() as u64, a.size());
        assert_eq!(b.read(100, 1 << 20, false).unwrap().len() as u64, b.size());
    }

    #[test]
    fn time_index_lookup_finds_the_first_batch_at_or_after_a_timestamp() {
        let dir = tempfile::tempdir().unwrap();
        let segment = Segment::create(dir.path(), 0, 256, cache()).unwrap();
        for i in 0..100 {
            append_bytes(&segment, batch_at(1, 200, 1_000 + i * 10));
        }
        assert!(segment.time_index_entry_count().unwrap() > 10);
        assert_eq!(segment.offset_for_timestamp(0).unwrap(), Some(0));
        assert_eq!(segment.offset_for_timestamp(1_500).unwrap(), Some(50));
        assert_eq!(segment.offset_for_timestamp(1_505).unwrap(), Some(51));
        assert_eq!(segment.offset_for_timestamp(1_990).unwrap(), Some(99));
        assert_eq!(segment.offset_for_timestamp(1_991).unwrap(), None);
        segment.seal().unwrap();
        let (reopened, _) = Segment::open(dir.path(), 0, 256, false, cache()).unwrap();
        assert_eq!(reopened.max_timestamp(), 1_990);
        assert_eq!(reopened.offset_for_timestamp(1_500).unwrap(), Some(50));
    }

    #[test]
    fn index_is_rebuilt_after_the_index_file_is_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let entries;
        {
            let segment = Segment::create(dir.path(), 0, 256, cache()).unwrap();
            for _ in 0..40 {
                append_batch(&segment, 2, 100);
            }
            entries = segment.index_entry_count().unwrap();
            segment.seal().unwrap();
        }
        std::fs::remove_file(dir.path().join(index_file_name(0))).unwrap();
        let (segment, recovery) = Segment::open(dir.path(), 0, 256, false, cache()).unwrap();
        assert!(recovery.rebuilt_index);
        assert!(dir.path().join(index_file_name(0)).exists());
        assert_eq!(segment.index_entry_count().unwrap(), entries);
        assert_eq!(segment.next_offset(), 80);
        let got = segment.read(61, 1 << 20, false).unwrap();
        assert_eq!(split_and_validate(&got).unwrap()[0].1.base_offset, 60);
    }

    #[test]
    fn a_corrupt_index_file_is_rebuilt_on_first_use() {
        let dir = tempfile::tempdir().unwrap();
        {
            let segment = Segment::create(dir.path(), 0, 256, cache()).unwrap();
            for _ in 0..40 {
                append_batch(&segment, 2, 100);
            }
            segment.seal().unwrap();
        }
        // Whole entries, but positions past the end of the log.
        std::fs::write(dir.path().join(index_file_name(0)), [0xffu8; 16]).unwrap();
        let (segment, _) = Segment::open(dir.path(), 0, 256, false, cache()).unwrap();
        let got = segment.read(61, 1 << 20, false).unwrap();
        assert_eq!(split_and_validate(&got).unwrap()[0].1.base_offset, 60);
        assert!(segment.index_entry_count().unwrap() > 1);
    }

    #[test]
    fn recovery_truncates_a_torn_tail_and_keeps_whole_batches() {
        let dir = tempfile::tempdir().unwrap();
        let whole_size;
        {
            let segment = Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL, cache()).unwrap();
            append_batch(&segment, 3, 10);
            append_batch(&segment, 3, 10);
            whole_size = segment.size();
        }
        let half = batch(5, 10);
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.path().join(log_file_name(0)))
            .unwrap();
        f.write_all(&half[..half.len() / 2]).unwrap();
        drop(f);
        let (segment, recovery) =
            Segment::open(dir.path(), 0, DEFAULT_INDEX_INTERVAL, true, cache()).unwrap();
        assert_eq!(recovery.valid_bytes, whole_size);
        assert_eq!(recovery.truncated_bytes as usize, half.len() / 2);
        assert_eq!(segment.next_offset(), 6);
        assert_eq!(
            std::fs::metadata(segment.log_path()).unwrap().len(),
            whole_size
        );
    }

    #[test]
    fn recovery_truncates_a_batch_with_a_bad_crc() {
        let dir = tempfile::tempdir().unwrap();
        let first_size;
        {
            let segment = Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL, cache()).unwrap();
            append_batch(&segment, 3, 10);
            first_size = segment.size();
            append_batch(&segment, 3, 10);
        }
        let path = dir.path().join(log_file_name(0));
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
        let (segment, _) =
            Segment::open(dir.path(), 0, DEFAULT_INDEX_INTERVAL, true, cache()).unwrap();
        assert_eq!(segment.size(), first_size);
        assert_eq!(segment.next_offset(), 3);
    }

    /// Found by the recovery fuzzer: the base offset is outside the CRC, so
    /// one flipped bit (2 -> 2^32 + 2) passed recovery and moved the log end
    /// 4 billion offsets on, past what the 32-bit indexes can address.
    #[test]
    fn recovery_truncates_a_batch_whose_offsets_leave_the_segment_range() {
        for damaged in [(1i64 << 32) + 3, i64::MAX] {
            let dir = tempfile::tempdir().unwrap();
            let first_size;
            {
                let segment =
                    Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL, cache()).unwrap();
                append_batch(&segment, 3, 10);
                first_size = segment.size();
                append_batch(&segment, 3, 10);
            }
            let path = dir.path().join(log_file_name(0));
            let mut bytes = std::fs::read(&path).unwrap();
            let at = first_size as usize;
            bytes[at..at + 8].copy_from_slice(&damaged.to_be_bytes());
            std::fs::write(&path, bytes).unwrap();
            let (segment, recovery) =
                Segment::open(dir.path(), 0, DEFAULT_INDEX_INTERVAL, true, cache()).unwrap();
            assert_eq!(segment.next_offset(), 3, "base offset {damaged}");
            assert_eq!(recovery.valid_bytes, first_size);
        }
    }

    #[test]
    fn reopen_of_a_sealed_segment_finds_the_next_offset() {
        let dir = tempfile::tempdir().unwrap();
        {
            let segment = Segment::create(dir.path(), 10, 256, cache()).unwrap();
            for _ in 0..20 {
                append_batch(&segment, 2, 100);
            }
            segment.seal().unwrap();
        }
        let (segment, recovery) = Segment::open(dir.path(), 10, 256, false, cache()).unwrap();
        assert!(!recovery.rebuilt_index);
        assert_eq!(segment.next_offset(), 50);
    }

    fn timed_segment(dir: &Path, count: i64) -> Segment {
        let segment = Segment::create(dir, 0, 256, cache()).unwrap();
        for i in 0..count {
            append_bytes(&segment, batch_at(1, 100, 1_000 + i));
        }
        segment
    }

    fn index_entries(segment: &Segment) -> (Vec<super::super::index::IndexEntry>, usize) {
        let offsets = segment.with_offsets(|o| o.entries().to_vec()).unwrap();
        (offsets, segment.time_index_entry_count().unwrap())
    }

    #[test]
    fn a_trusted_open_adopts_the_written_indexes_and_carries_on_alike() {
        let dir = tempfile::tempdir().unwrap();
        let reference_dir = tempfile::tempdir().unwrap();
        let reference = timed_segment(reference_dir.path(), 50);
        {
            let segment = timed_segment(dir.path(), 40);
            segment.write_indexes().unwrap();
        }
        let (segment, recovery) = Segment::open_trusted(dir.path(), 0, 256, cache()).unwrap();
        assert!(!recovery.scanned && !recovery.rebuilt_index);
        assert_eq!(segment.next_offset(), 40);
        assert_eq!(segment.max_timestamp(), 1_039);
        assert_eq!(segment.offset_for_timestamp(1_020).unwrap(), Some(20));
        for i in 40..50 {
            append_bytes(&segment, batch_at(1, 100, 1_000 + i));
        }
        assert_eq!(index_entries(&segment).0, index_entries(&reference).0);
        assert_eq!(segment.offset_for_timestamp(1_045).unwrap(), Some(45));
        assert!(
            segment.is_older_than(1_000, 2_000, 0),
            "first timestamp kept"
        );
    }

    #[test]
    fn a_trusted_open_walks_past_a_stale_index_and_scans_a_wrong_one() {
        let dir = tempfile::tempdir().unwrap();
        {
            let segment = timed_segment(dir.path(), 20);
            segment.write_indexes().unwrap();
            for i in 20..30 {
                append_bytes(&segment, batch_at(1, 100, 1_000 + i));
            }
        }
        let (segment, recovery) = Segment::open_trusted(dir.path(), 0, 256, cache()).unwrap();
        assert!(!recovery.scanned);
        assert_eq!(segment.next_offset(), 30);
        assert_eq!(segment.max_timestamp(), 1_029);
        drop(segment);
        // An entry pointing into the middle of a batch.
        std::fs::write(
            dir.path().join(index_file_name(0)),
            [0, 0, 0, 5, 0, 0, 0, 100],
        )
        .unwrap();
        let (segment, recovery) = Segment::open_trusted(dir.path(), 0, 256, cache()).unwrap();
        assert!(recovery.scanned);
        assert_eq!(segment.next_offset(), 30);
        assert_eq!(segment.offset_for_timestamp(1_010).unwrap(), Some(10));
    }

    #[test]
    fn truncation_leaves_the_indexes_as_if_only_the_prefix_was_appended() {
        let dir = tempfile::tempdir().unwrap();
        let reference_dir = tempfile::tempdir().unwrap();
        let reference = timed_segment(reference_dir.path(), 23);
        let segment = timed_segment(dir.path(), 40);
        segment.seal().unwrap();
        assert_eq!(segment.truncate_to(23).unwrap(), 23);
        assert_eq!(
            (segment.next_offset(), segment.size()),
            (23, reference.size())
        );
        assert_eq!(index_entries(&segment), index_entries(&reference));
        assert_eq!(segment.max_timestamp(), 1_022);
        assert_eq!(segment.offset_for_timestamp(1_023).unwrap(), None);
        append_bytes(&segment, batch_at(1, 100, 1_023));
        append_bytes(&reference, batch_at(1, 100, 1_023));
        assert_eq!(index_entries(&segment), index_entries(&reference));
        drop(segment);
        // The index files were rewritten for the cut: a trusted open agrees.
        let (reopened, recovery) = Segment::open_trusted(dir.path(), 0, 256, cache()).unwrap();
        assert!(!recovery.scanned);
        assert_eq!(reopened.next_offset(), 24);
    }
}
