//! Sparse offset index: fixed 8-byte entries of (relative offset u32,
//! file position u32), one about every `interval` bytes of log.
//!
//! The entries live in memory; the file is written whole when a segment is
//! sealed (rolled) or flushed. A missing or inconsistent file is rebuilt
//! from the log, and the last segment's index is always rebuilt by recovery.

use crate::error::Result;
use std::path::Path;

const ENTRY_SIZE: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    pub relative_offset: u32,
    pub position: u32,
}

#[derive(Debug, Default, Clone)]
pub struct OffsetIndex {
    entries: Vec<IndexEntry>,
}

impl OffsetIndex {
    pub fn new() -> OffsetIndex {
        OffsetIndex::default()
    }

    /// Reads the index at `path`; None when it is missing or fails the
    /// checks (whole entries, strictly increasing, positions inside a log of
    /// `log_size` bytes), so the caller rebuilds it.
    pub fn load(path: &Path, log_size: u64) -> Result<Option<OffsetIndex>> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        if bytes.len() % ENTRY_SIZE != 0 {
            return Ok(None);
        }
        let mut index = OffsetIndex::new();
        for c in bytes.chunks_exact(ENTRY_SIZE) {
            let relative_offset = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
            let position = u32::from_be_bytes([c[4], c[5], c[6], c[7]]);
            if u64::from(position) >= log_size || !index.append(relative_offset, position) {
                return Ok(None);
            }
        }
        Ok(Some(index))
    }

    /// Adds an entry; false (and nothing added) unless both the offset and
    /// the position are past the last entry's.
    pub fn append(&mut self, relative_offset: u32, position: u32) -> bool {
        if let Some(last) = self.entries.last() {
            if relative_offset <= last.relative_offset || position <= last.position {
                return false;
            }
        }
        self.entries.push(IndexEntry {
            relative_offset,
            position,
        });
        true
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

    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// Drops the entries at or after file position `position` (the log
    /// was truncated there).
    pub fn truncate_to_position(&mut self, position: u64) {
        let keep = self
            .entries
            .partition_point(|e| u64::from(e.position) < position);
        self.entries.truncate(keep);
    }

    /// The file's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.entries.len() * ENTRY_SIZE);
        for e in &self.entries {
            bytes.extend_from_slice(&e.relative_offset.to_be_bytes());
            bytes.extend_from_slice(&e.position.to_be_bytes());
        }
        bytes
    }

    /// Writes every entry to `path` (through a temporary file and a rename,
    /// so a crash leaves the old file or the new one).
    pub fn write(&self, path: &Path) -> Result<()> {
        write_replacing(path, &self.encode())
    }
}

/// Writes `bytes` to `path` via `<path>.tmp` and a rename.
pub(crate) fn write_replacing(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    in_partition_dir(path, || std::fs::write(&tmp, bytes))?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// Runs `create` (which makes a file in `path`'s directory) and, if that
/// directory is missing, makes it (one level: the data directory must be
/// there) and runs `create` again. A partition's directory is made by its
/// first file, so a topic nobody has written to costs no inode.
pub(crate) fn in_partition_dir<T>(
    path: &Path,
    create: impl Fn() -> std::io::Result<T>,
) -> Result<T> {
    match create() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let Some(dir) = path.parent() else {
                return Err(e.into());
            };
            match std::fs::create_dir(dir) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e.into()),
                _ => {}
            }
            Ok(create()?)
        }
        other => Ok(other?),
    }
}

/// `write_replacing`, durably: the temporary file is fsynced before the
/// rename and the directory after it.
pub(crate) fn write_replacing_durably(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let mut file = in_partition_dir(path, || std::fs::File::create(&tmp))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        sync_dir(dir)?;
    }
    Ok(())
}

/// Makes a directory's entries (creations, renames, removals) durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_returns_floor_entry() {
        let mut index = OffsetIndex::new();
        index.append(10, 4096);
        index.append(20, 8192);
        assert_eq!(index.lookup(5), 0);
        assert_eq!(index.lookup(10), 4096);
        assert_eq!(index.lookup(19), 4096);
        assert_eq!(index.lookup(25), 8192);
    }

    #[test]
    fn entries_survive_write_and_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.index");
        let mut index = OffsetIndex::new();
        index.append(3, 100);
        index.append(7, 200);
        index.write(&path).unwrap();
        let loaded = OffsetIndex::load(&path, 1000).unwrap().unwrap();
        assert_eq!(loaded.entries(), index.entries());
    }

    #[test]
    fn a_partial_entry_makes_the_file_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.index");
        std::fs::write(&path, [0u8, 0, 0, 3, 0, 0, 0, 100, 1, 2, 3]).unwrap();
        assert!(OffsetIndex::load(&path, 1000).unwrap().is_none());
    }

    #[test]
    fn a_position_past_the_log_makes_the_file_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.index");
        let mut index = OffsetIndex::new();
        index.append(3, 5000);
        index.write(&path).unwrap();
        assert!(OffsetIndex::load(&path, 1000).unwrap().is_none());
    }

    #[test]
    fn a_missing_file_loads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        assert!(OffsetIndex::load(&dir.path().join("x.index"), 10)
            .unwrap()
            .is_none());
    }

    #[test]
    fn truncation_drops_entries_at_or_past_the_position() {
        let mut index = OffsetIndex::new();
        index.append(10, 100);
        index.append(20, 200);
        index.append(30, 300);
        index.truncate_to_position(200);
        assert_eq!(index.entries().len(), 1);
        assert_eq!(index.lookup(25), 100);
    }

    #[test]
    fn out_of_order_entries_are_ignored() {
        let mut index = OffsetIndex::new();
        assert!(index.append(10, 4096));
        assert!(!index.append(5, 8192));
        assert_eq!(index.entries().len(), 1);
    }
}
