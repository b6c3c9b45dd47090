//! One log segment: a file of record batches exactly as clients sent them
//! (base offsets patched), named by its base offset, plus its sparse index.

use super::batch::{self, BatchHeader, HEADER_SIZE};
use super::index::OffsetIndex;
use crate::error::Result;
use bytes::Bytes;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;

/// Bytes of log between two index entries.
pub const DEFAULT_INDEX_INTERVAL: u64 = 4096;

pub fn log_file_name(base_offset: i64) -> String {
    format!("{base_offset:020}.log")
}

pub fn index_file_name(base_offset: i64) -> String {
    format!("{base_offset:020}.index")
}

#[derive(Debug)]
pub struct Segment {
    base_offset: i64,
    log_path: PathBuf,
    log: File,
    index: Mutex<OffsetIndex>,
    /// Bytes written to the file (page cache); readers never look past it.
    dirty_size: AtomicU64,
    /// Offset the next appended batch gets.
    next_offset: AtomicI64,
    /// Log bytes appended since the last index entry; only the appender
    /// (serialised by the partition) touches it.
    bytes_since_index: AtomicU64,
    index_interval: u64,
}

/// What recovery found in a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    pub valid_bytes: u64,
    pub truncated_bytes: u64,
}

impl Segment {
    pub fn create(dir: &Path, base_offset: i64, index_interval: u64) -> Result<Segment> {
        let log_path = dir.join(log_file_name(base_offset));
        let log = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&log_path)?;
        let mut index = OffsetIndex::open(&dir.join(index_file_name(base_offset)))?;
        index.clear()?;
        Ok(Segment {
            base_offset,
            log_path,
            log,
            index: Mutex::new(index),
            dirty_size: AtomicU64::new(0),
            next_offset: AtomicI64::new(base_offset),
            bytes_since_index: AtomicU64::new(0),
            index_interval,
        })
    }

    /// Opens an existing segment. With `recover`, every batch is checked
    /// (size and CRC), a torn or corrupt tail is truncated and the index is
    /// rebuilt; without it the sizes on disk are trusted.
    pub fn open(
        dir: &Path,
        base_offset: i64,
        index_interval: u64,
        recover: bool,
    ) -> Result<(Segment, Recovery)> {
        let log_path = dir.join(log_file_name(base_offset));
        let log = OpenOptions::new().read(true).write(true).open(&log_path)?;
        let index = OffsetIndex::open(&dir.join(index_file_name(base_offset)))?;
        let file_size = log.metadata()?.len();
        let segment = Segment {
            base_offset,
            log_path,
            log,
            index: Mutex::new(index),
            dirty_size: AtomicU64::new(file_size),
            next_offset: AtomicI64::new(base_offset),
            bytes_since_index: AtomicU64::new(0),
            index_interval,
        };
        let recovery = if recover {
            segment.recover(file_size)?
        } else {
            segment.find_next_offset(file_size)?;
            Recovery {
                valid_bytes: file_size,
                truncated_bytes: 0,
            }
        };
        Ok((segment, recovery))
    }

    fn recover(&self, file_size: u64) -> Result<Recovery> {
        let mut index = self.index.lock().expect("index lock");
        index.clear()?;
        let mut pos = 0u64;
        let mut since_index = 0u64;
        let mut next_offset = self.base_offset;
        let mut header_buf = [0u8; HEADER_SIZE];
        while pos + HEADER_SIZE as u64 <= file_size {
            self.log.read_exact_at(&mut header_buf, pos)?;
            let Ok(header) = BatchHeader::parse(&header_buf) else {
                break;
            };
            if pos + header.size as u64 > file_size {
                break;
            }
            let mut whole = vec![0u8; header.size];
            self.log.read_exact_at(&mut whole, pos)?;
            if batch::validate(&whole).is_err() || header.base_offset < next_offset {
                break;
            }
            if since_index >= self.index_interval {
                index.append(self.relative(header.base_offset), pos as u32)?;
                since_index = 0;
            }
            since_index += header.size as u64;
            next_offset = header.next_offset();
            pos += header.size as u64;
        }
        if pos < file_size {
            self.log.set_len(pos)?;
        }
        self.dirty_size.store(pos, Ordering::Release);
        self.next_offset.store(next_offset, Ordering::Release);
        self.bytes_since_index.store(since_index, Ordering::Relaxed);
        Ok(Recovery {
            valid_bytes: pos,
            truncated_bytes: file_size - pos,
        })
    }

    /// Walks headers from the last index entry to learn the next offset.
    fn find_next_offset(&self, file_size: u64) -> Result<()> {
        let start = self.index.lock().expect("index lock").lookup(u32::MAX) as u64;
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

    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    pub fn next_offset(&self) -> i64 {
        self.next_offset.load(Ordering::Acquire)
    }

    pub fn size(&self) -> u64 {
        self.dirty_size.load(Ordering::Acquire)
    }

    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    fn relative(&self, offset: i64) -> u32 {
        (offset - self.base_offset).clamp(0, u32::MAX as i64) as u32
    }

    /// Appends `chunk`, whose batches (at their positions within `chunk`)
    /// already carry their final offsets. Callers serialise appends.
    pub fn append(&self, chunk: &[u8], batches: &[(usize, BatchHeader)]) -> Result<()> {
        let start = self.size();
        self.log.write_all_at(chunk, start)?;
        let mut since_index = self.bytes_since_index.load(Ordering::Relaxed);
        {
            let mut index = self.index.lock().expect("index lock");
            for (at, header) in batches {
                if since_index >= self.index_interval {
                    index.append(
                        self.relative(header.base_offset),
                        (start + *at as u64) as u32,
                    )?;
                    since_index = 0;
                }
                since_index += header.size as u64;
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

    fn header_at(&self, pos: u64, size: u64) -> Result<Option<BatchHeader>> {
        if pos + HEADER_SIZE as u64 > size {
            return Ok(None);
        }
        let mut buf = [0u8; HEADER_SIZE];
        self.log.read_exact_at(&mut buf, pos)?;
        Ok(Some(BatchHeader::parse(&buf)?))
    }

    /// Position of the first batch whose last offset is >= `offset`.
    fn position_of(&self, offset: i64, size: u64) -> Result<Option<(u64, BatchHeader)>> {
        let mut pos = self
            .index
            .lock()
            .expect("index lock")
            .lookup(self.relative(offset)) as u64;
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
    /// returned whole even when it is larger (KIP-74).
    pub fn read(&self, offset: i64, max_bytes: usize, min_one: bool) -> Result<Bytes> {
        let size = self.size();
        let Some((pos, first)) = self.position_of(offset, size)? else {
            return Ok(Bytes::new());
        };
        if first.size > max_bytes {
            if !min_one {
                return Ok(Bytes::new());
            }
            let mut buf = vec![0u8; first.size];
            self.log.read_exact_at(&mut buf, pos)?;
            return Ok(Bytes::from(buf));
        }
        let want = (max_bytes as u64).min(size - pos) as usize;
        let mut buf = vec![0u8; want];
        self.log.read_exact_at(&mut buf, pos)?;
        let mut end = 0usize;
        while end + HEADER_SIZE <= buf.len() {
            let header = BatchHeader::parse(&buf[end..])?;
            if end + header.size > buf.len() {
                break;
            }
            end += header.size;
        }
        buf.truncate(end);
        Ok(Bytes::from(buf))
    }

    /// Base offset of the first batch with a max timestamp >= `timestamp`.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<i64>> {
        let size = self.size();
        let mut pos = 0u64;
        while let Some(header) = self.header_at(pos, size)? {
            if header.max_timestamp >= timestamp {
                return Ok(Some(header.base_offset));
            }
            pos += header.size as u64;
        }
        Ok(None)
    }

    pub fn sync(&self) -> Result<()> {
        self.log.sync_data()?;
        self.index.lock().expect("index lock").sync()
    }

    pub fn index_entry_count(&self) -> usize {
        self.index.lock().expect("index lock").entries().len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::batch::{set_base_offset, split_and_validate, test_support::batch};
    use super::*;
    use std::io::Write;

    fn append_batch(segment: &Segment, count: usize, value_len: usize) -> i64 {
        let mut bytes = batch(count, value_len);
        let base = segment.next_offset();
        set_base_offset(&mut bytes, base);
        let batches = split_and_validate(&bytes).unwrap();
        segment.append(&bytes, &batches).unwrap();
        base
    }

    #[test]
    fn append_then_read_returns_the_same_batches() {
        let dir = tempfile::tempdir().unwrap();
        let segment = Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL).unwrap();
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
        let segment = Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL).unwrap();
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
        let segment = Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL).unwrap();
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
        let segment = Segment::create(dir.path(), 100, 4096).unwrap();
        for _ in 0..50 {
            append_batch(&segment, 2, 500);
        }
        assert!(segment.index_entry_count() > 3);
        let got = segment.read(171, 1 << 20, false).unwrap();
        let batches = split_and_validate(&got).unwrap();
        assert_eq!(batches[0].1.base_offset, 170);
    }

    #[test]
    fn recovery_truncates_a_torn_tail_and_keeps_whole_batches() {
        let dir = tempfile::tempdir().unwrap();
        let whole_size;
        {
            let segment = Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL).unwrap();
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
            Segment::open(dir.path(), 0, DEFAULT_INDEX_INTERVAL, true).unwrap();
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
            let segment = Segment::create(dir.path(), 0, DEFAULT_INDEX_INTERVAL).unwrap();
            append_batch(&segment, 3, 10);
            first_size = segment.size();
            append_batch(&segment, 3, 10);
        }
        let path = dir.path().join(log_file_name(0));
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
        let (segment, _) = Segment::open(dir.path(), 0, DEFAULT_INDEX_INTERVAL, true).unwrap();
        assert_eq!(segment.size(), first_size);
        assert_eq!(segment.next_offset(), 3);
    }

    #[test]
    fn reopen_without_recovery_finds_the_next_offset() {
        let dir = tempfile::tempdir().unwrap();
        {
            let segment = Segment::create(dir.path(), 10, 256).unwrap();
            for _ in 0..20 {
                append_batch(&segment, 2, 100);
            }
        }
        let (segment, _) = Segment::open(dir.path(), 10, 256, false).unwrap();
        assert_eq!(segment.next_offset(), 50);
    }
}
