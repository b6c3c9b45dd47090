//! Idempotent producers' state for one partition, as Apache Kafka's
//! `ProducerStateManager` keeps it: the table (`producer_state`), loaded
//! lazily from the newest readable snapshot plus the batches after it, and
//! the snapshot files written at segment rolls and flushes.

use super::super::batch::BatchHeader;
use super::super::index::write_replacing;
use super::super::producer_state::{self, snapshot_file_name, ProducerStateTable, Verdict};
use super::Partition;
use crate::error::Result;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::Path;

/// Idempotent producers' state and the snapshots of it on disk.
#[derive(Debug, Default)]
pub(super) struct Producers {
    pub table: ProducerStateTable,
    /// Offsets of the snapshot files in the partition directory.
    pub snapshots: BTreeSet<i64>,
}

impl Producers {
    /// Removes the snapshot files (and their entries) below `log_start`,
    /// after retention moved it.
    pub fn remove_snapshots_below(&mut self, dir: &Path, log_start: i64) {
        let below: Vec<i64> = self.snapshots.range(..log_start).copied().collect();
        for offset in below {
            let _ = std::fs::remove_file(dir.join(snapshot_file_name(offset)));
            self.snapshots.remove(&offset);
        }
    }
}

impl Partition {
    /// Idempotence checks for one payload (see `producer_state`), first
    /// loading the state if this is the first idempotent batch since the
    /// partition was opened.
    pub(super) fn check_producers(
        &self,
        producers: &mut Producers,
        records: &[u8],
        batches: &[(usize, BatchHeader)],
    ) -> Result<Verdict> {
        let batches = producer_state::with_bytes(records, batches);
        if !producers.table.is_loaded() && producer_state::any_idempotent(&batches) {
            self.load_producers(producers)?;
        }
        producers.table.check(&batches)
    }

    /// Loads the producer state: the newest snapshot at or below the log
    /// end (a damaged one is removed and the next older tried), then the
    /// batches from there to the log end. Callers hold `append_lock`.
    pub(super) fn load_producers(&self, producers: &mut Producers) -> Result<()> {
        if producers.table.is_loaded() {
            return Ok(());
        }
        let log_end = self.log_end_offset();
        let log_start = self.log_start_offset();
        let mut table = ProducerStateTable::default();
        let mut from = log_start;
        let candidates: Vec<i64> = producers
            .snapshots
            .range(..=log_end)
            .rev()
            .copied()
            .collect();
        for offset in candidates {
            let path = self.dir.join(snapshot_file_name(offset));
            let loaded = std::fs::read(&path)
                .ok()
                .and_then(|bytes| ProducerStateTable::decode_snapshot(&bytes, offset));
            if let Some(snapshot) = loaded {
                table = snapshot;
                from = offset.max(log_start);
                break;
            }
            tracing::warn!(path = %path.display(), "removing an unreadable producer-state snapshot");
            let _ = std::fs::remove_file(&path);
            producers.snapshots.remove(&offset);
        }
        producer_state::rebuild(&mut table, from, log_end, |offset| {
            self.local.read_range(offset, 1 << 20, true, log_end)
        })?;
        producers.table = table;
        Ok(())
    }

    /// Writes the producer state as a snapshot at the log end (loading it
    /// first if need be), unless one is there already, and removes the
    /// older snapshots inside the active segment (those at segment bases
    /// stay, for truncation). Callers hold `append_lock`.
    pub(super) fn snapshot_producers(&self, producers: &mut Producers) -> Result<()> {
        let log_end = self.log_end_offset();
        if producers.snapshots.contains(&log_end) {
            return Ok(());
        }
        self.load_producers(producers)?;
        let bytes = producers.table.encode_snapshot(log_end);
        write_replacing(&self.dir.join(snapshot_file_name(log_end)), &bytes)?;
        producers.snapshots.insert(log_end);
        let active_base = self.local.active().base_offset();
        let superseded: Vec<i64> = producers
            .snapshots
            .range((Bound::Excluded(active_base), Bound::Excluded(log_end)))
            .copied()
            .collect();
        for offset in superseded {
            let _ = std::fs::remove_file(self.dir.join(snapshot_file_name(offset)));
            producers.snapshots.remove(&offset);
        }
        Ok(())
    }
}

/// Removes snapshot files (and their entries) above `log_end`.
pub(super) fn remove_snapshots_past(dir: &Path, snapshots: &mut BTreeSet<i64>, log_end: i64) {
    let past: Vec<i64> = snapshots
        .range((Bound::Excluded(log_end), Bound::Unbounded))
        .copied()
        .collect();
    for offset in past {
        let path = dir.join(snapshot_file_name(offset));
        if let Err(e) = std::fs::remove_file(&path) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(path = %path.display(), error = %e, "could not remove a producer-state snapshot");
            }
        }
        snapshots.remove(&offset);
    }
}
