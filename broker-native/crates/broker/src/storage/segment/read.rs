//! Reading a segment: whole batches from an offset (one read into one
//! buffer, records never decoded), the batch holding an offset found from
//! the offset index and then by walking headers, and the first batch at or
//! after a timestamp from the time index.

use super::super::batch::{BatchHeader, HEADER_SIZE};
use super::Segment;
use crate::error::Result;
use bytes::Bytes;
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;

impl Segment {
    pub(super) fn header_at(&self, pos: u64, size: u64) -> Result<Option<BatchHeader>> {
        if pos + HEADER_SIZE as u64 > size {
            return Ok(None);
        }
        let mut buf = [0u8; HEADER_SIZE];
        self.file()?.read_exact_at(&mut buf, pos)?;
        Ok(Some(BatchHeader::parse(&buf)?))
    }

    /// Position of the first batch whose last offset is >= `offset`,
    /// scanning headers from the index entry at or before it.
    pub(super) fn position_of(&self, offset: i64, size: u64) -> Result<Option<(u64, BatchHeader)>> {
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
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{append_batch, append_bytes, cache};
    use super::super::{Segment, DEFAULT_INDEX_INTERVAL};
    use crate::storage::batch::split_and_validate;
    use crate::storage::file_cache::FileCache;
    use crate::storage::time_index::test_support::batch_at;
    use std::sync::Arc;

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
}
