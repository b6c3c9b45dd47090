//! Sparse offset index: fixed 8-byte entries of (relative offset u32,
//! file position u32), one about every `interval` bytes of log.

use crate::error::Result;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

const ENTRY_SIZE: u64 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    pub relative_offset: u32,
    pub position: u32,
}

#[derive(Debug)]
pub struct OffsetIndex {
    file: File,
    entries: Vec<IndexEntry>,
}

impl OffsetIndex {
    /// Opens (or creates) the index file and loads its whole entries; a
    /// partial trailing entry is dropped.
    pub fn open(path: &Path) -> Result<OffsetIndex> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let whole = bytes.len() as u64 / ENTRY_SIZE * ENTRY_SIZE;
        if whole != bytes.len() as u64 {
            file.set_len(whole)?;
        }
        let entries = bytes[..whole as usize]
            .chunks_exact(ENTRY_SIZE as usize)
            .map(|c| IndexEntry {
                relative_offset: u32::from_be_bytes([c[0], c[1], c[2], c[3]]),
                position: u32::from_be_bytes([c[4], c[5], c[6], c[7]]),
            })
            .collect();
        file.seek(SeekFrom::End(0))?;
        Ok(OffsetIndex { file, entries })
    }

    pub fn append(&mut self, relative_offset: u32, position: u32) -> Result<()> {
        if let Some(last) = self.entries.last() {
            if relative_offset <= last.relative_offset || position <= last.position {
                return Ok(());
            }
        }
        let mut entry = [0u8; ENTRY_SIZE as usize];
        entry[..4].copy_from_slice(&relative_offset.to_be_bytes());
        entry[4..].copy_from_slice(&position.to_be_bytes());
        self.file.write_all(&entry)?;
        self.entries.push(IndexEntry {
            relative_offset,
            position,
        });
        Ok(())
    }

    /// File position of the last indexed batch starting at or before
    /// `relative_offset` (0 when none is).
    pub fn lookup(&self, relative_offset: u32) -> u32 {
        let after = self
            .entries
            .partition_point(|e| e.relative_offset <= relative_offset);
        if after == 0 {
            0
        } else {
            self.entries[after - 1].position
        }
    }

    /// Drops every entry; used before rebuilding the index from the log.
    pub fn clear(&mut self) -> Result<()> {
        self.entries.clear();
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        Ok(())
    }

    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    pub fn sync(&self) -> Result<()> {
        self.file.sync_data()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_returns_floor_entry() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = OffsetIndex::open(&dir.path().join("0.index")).unwrap();
        index.append(10, 4096).unwrap();
        index.append(20, 8192).unwrap();
        assert_eq!(index.lookup(5), 0);
        assert_eq!(index.lookup(10), 4096);
        assert_eq!(index.lookup(19), 4096);
        assert_eq!(index.lookup(25), 8192);
    }

    #[test]
    fn entries_survive_reopen_and_partial_entry_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.index");
        {
            let mut index = OffsetIndex::open(&path).unwrap();
            index.append(3, 100).unwrap();
            index.append(7, 200).unwrap();
        }
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&[1, 2, 3]).unwrap();
        let index = OffsetIndex::open(&path).unwrap();
        assert_eq!(
            index.entries(),
            &[
                IndexEntry {
                    relative_offset: 3,
                    position: 100
                },
                IndexEntry {
                    relative_offset: 7,
                    position: 200
                }
            ]
        );
    }

    #[test]
    fn out_of_order_entries_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let mut index = OffsetIndex::open(&dir.path().join("0.index")).unwrap();
        index.append(10, 4096).unwrap();
        index.append(5, 8192).unwrap();
        assert_eq!(index.entries().len(), 1);
    }
}
