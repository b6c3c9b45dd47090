//! Opening a segment's files: a sealed segment with its index files
//! (rebuilt from the log when missing or malformed), the last one after a
//! crash (every batch checked, a torn or corrupt tail cut, the indexes
//! rebuilt), or after a clean shutdown (its size and indexes trusted, only
//! the headers after the last index entry walked).

use super::super::batch::{self, BatchHeader, HEADER_SIZE};
use super::super::file_cache::FileCache;
use super::super::index::OffsetIndex;
use super::super::time_index::TimeIndex;
use super::indexes::Indexes;
use super::{log_file_name, Segment, NO_TIMESTAMP};
use crate::error::Result;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

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

    pub(super) fn reset_timestamps(&self) {
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
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{
        append_batch, append_bytes, cache, index_entries, timed_segment,
    };
    use super::super::{index_file_name, log_file_name, Segment, DEFAULT_INDEX_INTERVAL};
    use crate::storage::batch::test_support::batch;
    use crate::storage::time_index::test_support::batch_at;
    use std::fs::OpenOptions;
    use std::io::Write;

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
}
