//! Writing a segment: appends (batches that already carry their offsets,
//! noted in the in-memory indexes as they go) and truncation at a batch
//! boundary. The partition serialises both.

use super::super::batch::BatchHeader;
use super::super::index::write_replacing_durably;
use super::indexes::Indexes;
use super::Segment;
use crate::error::Result;
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;

impl Segment {
    /// Appends `chunk`, whose batches (at their positions within `chunk`)
    /// already carry their final offsets. Callers serialise appends.
    pub fn append(&self, chunk: &[u8], batches: &[(usize, BatchHeader)]) -> Result<()> {
        // Loaded before anything is written (see `loaded_for_append`).
        drop(self.loaded_for_append()?);
        let start = self.size();
        self.file()?.write_all_at(chunk, start)?;
        self.unsynced.store(true, Ordering::Release);
        self.indexes_dirty.store(true, Ordering::Relaxed);
        let mut since_index = self.bytes_since_index.load(Ordering::Relaxed);
        {
            let mut indexes = self.loaded_for_append()?;
            let Indexes {
                offsets: Some(offsets),
                times: Some(times),
            } = &mut *indexes
            else {
                unreachable!("loaded_for_append returns them loaded");
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
        let _index_files = self.index_files.lock().expect("index files lock");
        write_replacing_durably(&self.index_path(), &offsets_bytes)?;
        write_replacing_durably(&self.time_index_path(), &times_bytes)?;
        self.indexes_dirty.store(false, Ordering::Release);
        Ok(new_next)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{append_bytes, cache, index_entries, timed_segment};
    use super::super::Segment;
    use crate::storage::time_index::test_support::batch_at;

    /// A roll that sealed the active segment but could not make the next
    /// one leaves the sealed segment last; a smaller append that then fits
    /// goes to it (this panicked: its indexes were no longer in memory).
    #[test]
    fn a_sealed_segment_left_active_takes_appends_again() {
        let dir = tempfile::tempdir().unwrap();
        let segment = timed_segment(dir.path(), 20);
        let entries = index_entries(&segment).0.len();
        segment.seal().unwrap();
        for i in 0..20 {
            append_bytes(&segment, batch_at(1, 100, 2_000 + i));
        }
        assert_eq!(segment.next_offset(), 40);
        assert!(index_entries(&segment).0.len() > entries);
        assert_eq!(segment.max_timestamp(), 2_019);
        let got = segment.read(35, 1 << 20, false).unwrap();
        assert_eq!(
            crate::storage::batch::split_and_validate(&got).unwrap()[0]
                .1
                .base_offset,
            35
        );
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
