//! Sparse time index (`.timeindex`): fixed 12-byte entries of (max
//! timestamp so far i64, relative offset u32 of the batch that has it),
//! both strictly increasing. Kept like the offset index: in memory, written
//! whole when the segment is sealed, rebuilt from the log when bad.

use super::index::write_replacing;
use crate::error::Result;
use std::path::Path;

const ENTRY_SIZE: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeEntry {
    pub timestamp: i64,
    pub relative_offset: u32,
}

#[derive(Debug, Default, Clone)]
pub struct TimeIndex {
    entries: Vec<TimeEntry>,
}

impl TimeIndex {
    pub fn new() -> TimeIndex {
        TimeIndex::default()
    }

    /// Reads the time index at `path`; None when missing or not monotonic.
    pub fn load(path: &Path) -> Result<Option<TimeIndex>> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if bytes.len() % ENTRY_SIZE != 0 {
            return Ok(None);
        }
        let mut index = TimeIndex::new();
        for c in bytes.chunks_exact(ENTRY_SIZE) {
            let mut ts = [0u8; 8];
            ts.copy_from_slice(&c[..8]);
            let entry = TimeEntry {
                timestamp: i64::from_be_bytes(ts),
                relative_offset: u32::from_be_bytes([c[8], c[9], c[10], c[11]]),
            };
            if !index.append(entry.timestamp, entry.relative_offset) {
                return Ok(None);
            }
        }
        Ok(Some(index))
    }

    /// Adds an entry when both the timestamp and the offset grow.
    pub fn append(&mut self, timestamp: i64, relative_offset: u32) -> bool {
        if let Some(last) = self.entries.last() {
            if timestamp <= last.timestamp || relative_offset < last.relative_offset {
                return false;
            }
        }
        self.entries.push(TimeEntry {
            timestamp,
            relative_offset,
        });
        true
    }

    /// Where a search for the first batch with a timestamp >= `timestamp`
    /// may start: the last entry whose timestamp is below it (every batch
    /// before that entry's offset is older), or None to start at the top.
    pub fn lookup(&self, timestamp: i64) -> Option<TimeEntry> {
        let after = self.entries.partition_point(|e| e.timestamp < timestamp);
        after.checked_sub(1).map(|i| self.entries[i])
    }

    pub fn last(&self) -> Option<TimeEntry> {
        self.entries.last().copied()
    }

    pub fn entries(&self) -> &[TimeEntry] {
        &self.entries
    }

    /// Drops the entries that name an offset at or after
    /// `relative_offset` (the log was truncated there).
    pub fn truncate_to_offset(&mut self, relative_offset: u32) {
        let keep = self
            .entries
            .partition_point(|e| e.relative_offset < relative_offset);
        self.entries.truncate(keep);
    }

    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.entries.len() * ENTRY_SIZE);
        for e in &self.entries {
            bytes.extend_from_slice(&e.timestamp.to_be_bytes());
            bytes.extend_from_slice(&e.relative_offset.to_be_bytes());
        }
        bytes
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        write_replacing(path, &self.encode())
    }

    /// The last entry of the file at `path` without loading the rest: the
    /// segment's largest timestamp and the offset that has it.
    pub fn read_last(path: &Path) -> Result<Option<TimeEntry>> {
        use std::os::unix::fs::FileExt;
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let len = file.metadata()?.len();
        if len == 0 || len % ENTRY_SIZE as u64 != 0 {
            return Ok(None);
        }
        let mut c = [0u8; ENTRY_SIZE];
        file.read_exact_at(&mut c, len - ENTRY_SIZE as u64)?;
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&c[..8]);
        Ok(Some(TimeEntry {
            timestamp: i64::from_be_bytes(ts),
            relative_offset: u32::from_be_bytes([c[8], c[9], c[10], c[11]]),
        }))
    }
}

/// Record batches with chosen timestamps, for storage tests.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::storage::batch::test_support::encode;
    use bytes::Bytes;
    use kafka_protocol::indexmap::IndexMap;
    use kafka_protocol::records::{Record, TimestampType};

    /// One v2 batch of `count` records, all with `timestamp`.
    pub fn batch_at(count: usize, value_len: usize, timestamp: i64) -> Vec<u8> {
        let records: Vec<Record> = (0..count)
            .map(|i| Record {
                transactional: false,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: 0,
                producer_id: -1,
                producer_epoch: -1,
                timestamp_type: TimestampType::Creation,
                offset: i as i64,
                sequence: i as i32,
                timestamp,
                key: None,
                value: Some(Bytes::from(vec![b'v'; value_len])),
                headers: IndexMap::new(),
            })
            .collect();
        encode(&records)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_gives_the_last_entry_older_than_the_target() {
        let mut index = TimeIndex::new();
        index.append(100, 0);
        index.append(200, 10);
        index.append(300, 20);
        assert_eq!(index.lookup(50), None);
        assert_eq!(index.lookup(100), None);
        assert_eq!(index.lookup(250).unwrap().relative_offset, 10);
        assert_eq!(index.lookup(1000).unwrap().relative_offset, 20);
    }

    #[test]
    fn entries_only_grow() {
        let mut index = TimeIndex::new();
        assert!(index.append(100, 0));
        assert!(!index.append(100, 5));
        assert!(!index.append(90, 6));
        assert_eq!(index.entries().len(), 1);
    }

    #[test]
    fn write_load_and_read_last_agree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.timeindex");
        let mut index = TimeIndex::new();
        index.append(100, 0);
        index.append(200, 10);
        index.write(&path).unwrap();
        assert_eq!(
            TimeIndex::load(&path).unwrap().unwrap().entries(),
            index.entries()
        );
        assert_eq!(TimeIndex::read_last(&path).unwrap(), index.last());
    }
}
