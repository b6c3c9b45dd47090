//! A segment's sparse offset and time indexes: an entry every
//! `index_interval` bytes of log, kept in memory while the segment is
//! active (loaded on first use once sealed, rebuilt from the batch headers
//! when a file is bad), and written out when the segment is sealed or, for
//! the active one, at a clean shutdown.

use super::super::batch::BatchHeader;
use super::super::index::{write_replacing, OffsetIndex};
use super::super::time_index::TimeIndex;
use super::{Segment, NO_TIMESTAMP};
use crate::error::Result;
use std::sync::atomic::Ordering;

/// Both indexes; None until loaded (sealed segments load on first use).
#[derive(Debug, Default)]
pub(super) struct Indexes {
    pub offsets: Option<OffsetIndex>,
    pub times: Option<TimeIndex>,
}

impl Segment {
    /// Rebuilds both indexes of a sealed segment from its batch headers.
    pub(super) fn rebuild_indexes(&self, size: u64) -> Result<(OffsetIndex, TimeIndex)> {
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
    pub(super) fn note_batch(
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
    pub(super) fn seal_time_index(&self, times: &mut TimeIndex) {
        let max = self.max_timestamp();
        if max != NO_TIMESTAMP {
            times.append(
                max,
                self.relative(self.offset_of_max_timestamp.load(Ordering::Relaxed)),
            );
        }
    }

    /// Loads a sealed segment's indexes if they are not in memory. A bad
    /// index is rebuilt from the log and written back, unless the segment
    /// was deleted meanwhile; a failed write-back only costs the next
    /// reader the same rebuild, so the read goes on.
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
                let _index_files = self.index_files.lock().expect("index files lock");
                if !self.deleted.load(Ordering::Acquire) {
                    if let Err(e) = o
                        .write(&self.index_path())
                        .and_then(|()| t.write(&self.time_index_path()))
                    {
                        tracing::warn!(segment = %self.log_path().display(), error = %e, "could not write the rebuilt index back");
                    }
                }
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

    /// Runs `f` on the loaded indexes. A seal can free them between the
    /// load and the lock (once per segment, its files in place by then), so
    /// it loads again rather than find them gone.
    fn with_loaded<T>(&self, f: impl FnOnce(&OffsetIndex, &TimeIndex) -> T) -> Result<T> {
        loop {
            self.ensure_indexes()?;
            let indexes = self.indexes.lock().expect("index lock");
            if let (Some(offsets), Some(times)) = (&indexes.offsets, &indexes.times) {
                return Ok(f(offsets, times));
            }
        }
    }

    /// The indexes for an append, under their lock. The active segment
    /// keeps them in memory; a sealed one is appended to again only when
    /// the roll that sealed it failed to make the next segment (a full
    /// disk, no file descriptors left) and a smaller append then fitted,
    /// so its indexes are loaded back from the files the seal wrote.
    pub(super) fn loaded_for_append(&self) -> Result<std::sync::MutexGuard<'_, Indexes>> {
        loop {
            let indexes = self.indexes.lock().expect("index lock");
            if indexes.offsets.is_some() && indexes.times.is_some() {
                return Ok(indexes);
            }
            drop(indexes);
            self.ensure_indexes()?;
        }
    }

    pub(super) fn with_offsets<T>(&self, f: impl FnOnce(&OffsetIndex) -> T) -> Result<T> {
        self.with_loaded(|offsets, _| f(offsets))
    }

    pub(super) fn with_times<T>(&self, f: impl FnOnce(&TimeIndex) -> T) -> Result<T> {
        self.with_loaded(|_, times| f(times))
    }

    /// Marks the end of appends: writes both index files (the time index
    /// ends with the segment's largest timestamp), then frees the indexes
    /// from memory until a reader needs them. They stay in memory until
    /// the files are in place, so a reader meanwhile uses them instead of
    /// finding neither.
    pub fn seal(&self) -> Result<()> {
        let _index_files = self.index_files.lock().expect("index files lock");
        let Some((offsets, times)) = self.encode_indexes() else {
            return Ok(());
        };
        write_replacing(&self.index_path(), &offsets)?;
        write_replacing(&self.time_index_path(), &times)?;
        *self.indexes.lock().expect("index lock") = Indexes::default();
        self.indexes_dirty.store(false, Ordering::Relaxed);
        Ok(())
    }

    /// Writes the active segment's indexes as `seal` would (the time index
    /// ending with the largest timestamp) but keeps them in memory, if
    /// appends changed them since they were last written.
    pub fn write_indexes(&self) -> Result<()> {
        let _index_files = self.index_files.lock().expect("index files lock");
        if !self.indexes_dirty.swap(false, Ordering::AcqRel) {
            return Ok(());
        }
        let Some((offsets, times)) = self.encode_indexes() else {
            return Ok(());
        };
        let written = write_replacing(&self.index_path(), &offsets)
            .and_then(|()| write_replacing(&self.time_index_path(), &times));
        if written.is_err() {
            self.indexes_dirty.store(true, Ordering::Release);
        }
        written
    }

    /// Both in-memory indexes as their files hold them (the time index
    /// ending with the largest timestamp); None when they are not loaded.
    fn encode_indexes(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let indexes = self.indexes.lock().expect("index lock");
        match (&indexes.offsets, &indexes.times) {
            (Some(offsets), Some(times)) => {
                let mut times = times.clone();
                self.seal_time_index(&mut times);
                Some((offsets.encode(), times.encode()))
            }
            _ => None,
        }
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
    use super::super::test_support::{append_batch, cache};
    use super::super::{index_file_name, Segment};
    use crate::storage::batch::split_and_validate;

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

    /// Found under retention with 8 MiB segments: a fetch that reached a
    /// segment while it was being sealed found its indexes neither in
    /// memory nor on disk, rebuilt them and wrote them back through the
    /// same `.tmp` file as the seal, and whichever renamed second failed
    /// (KAFKA_STORAGE_ERROR on the produce that rolled, or on the fetch).
    #[test]
    fn reads_during_a_seal_use_the_indexes_and_neither_fails() {
        for round in 0..200 {
            let dir = tempfile::tempdir().unwrap();
            let segment = Segment::create(dir.path(), 0, 256, cache()).unwrap();
            for _ in 0..40 {
                append_batch(&segment, 2, 100);
            }
            let sealed = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|scope| {
                let reader = scope.spawn(|| {
                    let mut reads = 0;
                    while !sealed.load(std::sync::atomic::Ordering::Acquire) || reads == 0 {
                        let got = segment.read(61, 1 << 20, false).unwrap_or_else(|e| {
                            panic!("round {round}: a read during the seal failed: {e}")
                        });
                        assert_eq!(split_and_validate(&got).unwrap()[0].1.base_offset, 60);
                        reads += 1;
                    }
                });
                std::thread::yield_now();
                segment
                    .seal()
                    .unwrap_or_else(|e| panic!("round {round}: the seal failed: {e}"));
                sealed.store(true, std::sync::atomic::Ordering::Release);
                reader.join().unwrap();
            });
            assert!(segment.index_entry_count().unwrap() > 1);
        }
    }
}
