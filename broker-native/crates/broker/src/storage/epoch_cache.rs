//! The leader-epoch cache of one partition: for each leader epoch the log
//! has batches of, the offset where that epoch starts. Followers use it to
//! find where their log diverges from the leader's (OffsetsForLeaderEpoch,
//! KIP-101/279). Persisted in `<partition dir>/leader-epoch-checkpoint`,
//! rewritten whole on every change (fsynced, then renamed into place).
//!
//! File format (text): `kbench-leader-epochs 1`, the entry count, then one
//! `<epoch> <start offset>` line per entry, epochs increasing.

use super::index::write_replacing_durably;
use crate::error::Result;
use std::path::{Path, PathBuf};

pub const CHECKPOINT_FILE: &str = "leader-epoch-checkpoint";
const HEADER: &str = "kbench-leader-epochs 1";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEntry {
    pub epoch: i32,
    pub start_offset: i64,
}

#[derive(Debug)]
pub struct LeaderEpochCache {
    path: PathBuf,
    /// Epochs strictly increasing, start offsets non-decreasing.
    entries: Vec<EpochEntry>,
}

impl LeaderEpochCache {
    /// An empty cache for the partition in `dir` (nothing read).
    pub fn empty(dir: &Path) -> LeaderEpochCache {
        LeaderEpochCache {
            path: dir.join(CHECKPOINT_FILE),
            entries: Vec::new(),
        }
    }

    /// Reads the checkpoint in `dir`; a missing file is an empty cache,
    /// and a malformed one is reported and treated as empty.
    pub fn load(dir: &Path) -> Result<LeaderEpochCache> {
        let mut cache = LeaderEpochCache::empty(dir);
        let text = match std::fs::read_to_string(&cache.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(cache),
            Err(e) => return Err(e.into()),
        };
        match parse(&text) {
            Some(entries) => cache.entries = entries,
            None => {
                tracing::warn!(path = %cache.path.display(), "ignoring a malformed leader-epoch checkpoint")
            }
        }
        Ok(cache)
    }

    pub fn entries(&self) -> &[EpochEntry] {
        &self.entries
    }

    pub fn latest(&self) -> Option<EpochEntry> {
        self.entries.last().copied()
    }

    pub fn latest_epoch(&self) -> Option<i32> {
        self.latest().map(|e| e.epoch)
    }

    /// Records that `epoch` starts at `start_offset`, if it is newer than
    /// every known epoch. Returns whether the cache changed (the caller
    /// persists it).
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> bool {
        if epoch < 0 || self.latest_epoch().is_some_and(|latest| epoch <= latest) {
            return false;
        }
        self.entries.push(EpochEntry {
            epoch,
            start_offset,
        });
        true
    }

    /// Drops the epochs that start at or after `offset` (the log was
    /// truncated there). Returns whether any went.
    pub fn truncate_from(&mut self, offset: i64) -> bool {
        let keep = self.entries.partition_point(|e| e.start_offset < offset);
        let changed = keep < self.entries.len();
        self.entries.truncate(keep);
        changed
    }

    /// Drops the epochs that start past `log_end` (their batches did not
    /// survive a crash). Returns whether any went.
    pub fn truncate_past(&mut self, log_end: i64) -> bool {
        self.truncate_from(log_end + 1)
    }

    /// OffsetsForLeaderEpoch: the largest known epoch at or below
    /// `epoch` and where it ends (the start of the next epoch, or
    /// `log_end` for the latest); (-1, -1) when `epoch` is older than
    /// every known epoch or none is known.
    pub fn end_offset_for(&self, epoch: i32, log_end: i64) -> (i32, i64) {
        let after = self.entries.partition_point(|e| e.epoch <= epoch);
        if after == 0 {
            return (-1, -1);
        }
        let found = self.entries[after - 1];
        let end = self
            .entries
            .get(after)
            .map_or(log_end, |next| next.start_offset);
        (found.epoch, end)
    }

    /// Rewrites the checkpoint file durably.
    pub fn persist(&self) -> Result<()> {
        let mut text = format!("{HEADER}\n{}\n", self.entries.len());
        for e in &self.entries {
            text.push_str(&format!("{} {}\n", e.epoch, e.start_offset));
        }
        write_replacing_durably(&self.path, text.as_bytes())
    }
}

fn parse(text: &str) -> Option<Vec<EpochEntry>> {
    let mut lines = text.lines();
    if lines.next()? != HEADER {
        return None;
    }
    let count: usize = lines.next()?.trim().parse().ok()?;
    let mut entries: Vec<EpochEntry> = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let (epoch, start) = lines.next()?.trim().split_once(' ')?;
        let entry = EpochEntry {
            epoch: epoch.parse().ok()?,
            start_offset: start.trim().parse().ok()?,
        };
        if let Some(last) = entries.last() {
            if entry.epoch <= last.epoch || entry.start_offset < last.start_offset {
                return None;
            }
        }
        entries.push(entry);
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(entries: &[(i32, i64)]) -> LeaderEpochCache {
        let dir = std::env::temp_dir();
        let mut cache = LeaderEpochCache::empty(&dir);
        for (epoch, start) in entries {
            assert!(cache.assign(*epoch, *start));
        }
        cache
    }

    #[test]
    fn end_offset_is_the_next_epochs_start_or_the_log_end() {
        let c = cache(&[(1, 0), (3, 10), (4, 25)]);
        assert_eq!(c.end_offset_for(1, 40), (1, 10));
        assert_eq!(c.end_offset_for(2, 40), (1, 10));
        assert_eq!(c.end_offset_for(3, 40), (3, 25));
        assert_eq!(c.end_offset_for(4, 40), (4, 40));
        assert_eq!(c.end_offset_for(9, 40), (4, 40));
        assert_eq!(c.end_offset_for(0, 40), (-1, -1));
        assert_eq!(cache(&[]).end_offset_for(0, 40), (-1, -1));
    }

    #[test]
    fn only_newer_epochs_are_assigned() {
        let mut c = cache(&[(2, 5)]);
        assert!(!c.assign(2, 9));
        assert!(!c.assign(1, 9));
        assert!(!c.assign(-1, 9));
        assert!(c.assign(3, 9));
        assert_eq!(c.latest_epoch(), Some(3));
    }

    #[test]
    fn truncation_drops_epochs_starting_at_or_after_the_offset() {
        let mut c = cache(&[(1, 0), (2, 10), (3, 20)]);
        assert!(c.truncate_from(10));
        assert_eq!(
            c.latest(),
            Some(EpochEntry {
                epoch: 1,
                start_offset: 0
            })
        );
        assert!(!c.truncate_from(5));
        let mut c = cache(&[(1, 0), (2, 10)]);
        assert!(!c.truncate_past(10));
        assert!(c.truncate_past(9));
    }

    #[test]
    fn the_checkpoint_survives_a_reload_and_a_bad_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = LeaderEpochCache::empty(dir.path());
        c.assign(0, 0);
        c.assign(5, 120);
        c.persist().unwrap();
        let loaded = LeaderEpochCache::load(dir.path()).unwrap();
        assert_eq!(loaded.entries(), c.entries());
        std::fs::write(
            dir.path().join(CHECKPOINT_FILE),
            "kbench-leader-epochs 1\n2\n0 0\n",
        )
        .unwrap();
        assert!(LeaderEpochCache::load(dir.path())
            .unwrap()
            .entries()
            .is_empty());
    }
}
