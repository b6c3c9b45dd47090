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

#[cfg(test)]
mod tests {
    use super::super::test_support::open;
    use crate::storage::batch::test_support::batch;
    use crate::storage::producer_state::snapshot_file_name;
    use kafka_protocol::ResponseError;

    #[test]
    fn a_producer_whose_batches_are_only_in_an_older_segment_survives_a_crash() {
        use crate::storage::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let filler = batch(1, 200);
        let segment_bytes = filler.len() as u64 * 2;
        let once = idempotent_batch(7, 0, 0, 3);
        {
            let partition = open(dir.path(), segment_bytes);
            assert_eq!(partition.append(&once).unwrap().base_offset, 0);
            for _ in 0..6 {
                partition.append(&filler).unwrap();
            }
            assert!(partition.segment_count() >= 3);
            assert!(!partition.producer_snapshot_offsets().is_empty());
            // Dropped without a flush: as after a crash.
        }
        let partition = open(dir.path(), segment_bytes);
        let active_base = *partition.segment_base_offsets().last().unwrap();
        assert!(
            active_base > 2,
            "the producer's batch is not in the last segment"
        );
        let dup = partition.append(&once).unwrap();
        assert_eq!((dup.base_offset, dup.last_offset), (0, 2));
        assert_eq!(partition.log_end_offset(), 9);
        let gap = partition.append(&idempotent_batch(7, 0, 5, 1)).unwrap_err();
        assert_eq!(gap.code(), ResponseError::OutOfOrderSequenceNumber.code());
        assert_eq!(
            partition
                .append(&idempotent_batch(7, 0, 3, 1))
                .unwrap()
                .base_offset,
            9
        );
    }

    #[test]
    fn producer_state_comes_from_the_snapshot_once_its_batches_left_the_log() {
        use crate::storage::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let filler = batch(1, 200);
        let segment_bytes = filler.len() as u64;
        let once = idempotent_batch(8, 0, 0, 1);
        {
            let partition = open(dir.path(), segment_bytes);
            partition.append(&once).unwrap();
            for _ in 0..3 {
                partition.append(&filler).unwrap();
            }
            partition.topic_config().write().unwrap().retention_bytes = Some(0);
            partition.enforce_retention(0).unwrap();
            assert_eq!(partition.log_start_offset(), 3);
        }
        // No batch of producer 8 is left to replay; the snapshot at 3 has it.
        let partition = open(dir.path(), segment_bytes);
        let dup = partition.append(&once).unwrap();
        assert_eq!((dup.base_offset, dup.last_offset), (0, 0));
        assert_eq!(partition.log_end_offset(), 4);
    }

    #[test]
    fn a_flush_snapshots_producers_at_the_log_end_and_reopen_needs_no_replay() {
        use crate::storage::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let once = idempotent_batch(9, 2, 0, 2);
        {
            let partition = open(dir.path(), 1 << 30);
            partition.append(&batch(3, 10)).unwrap();
            partition.append(&once).unwrap();
            partition.flush().unwrap();
            assert_eq!(partition.producer_snapshot_offsets(), vec![5]);
        }
        let partition = open(dir.path(), 1 << 30);
        let dup = partition.append(&once).unwrap();
        assert_eq!((dup.base_offset, dup.last_offset), (3, 4));
        let stale = partition.append(&idempotent_batch(9, 1, 0, 1)).unwrap_err();
        assert_eq!(stale.code(), ResponseError::InvalidProducerEpoch.code());
    }

    #[test]
    fn snapshots_past_the_log_end_are_removed_on_open_and_damaged_ones_skipped() {
        use crate::storage::producer_state::test_support::idempotent_batch;
        let dir = tempfile::tempdir().unwrap();
        let once = idempotent_batch(4, 0, 0, 1);
        {
            let partition = open(dir.path(), 1 << 30);
            partition.append(&once).unwrap();
            partition.append(&batch(1, 10)).unwrap();
            partition.flush().unwrap();
        }
        std::fs::write(dir.path().join(snapshot_file_name(50)), b"from the future").unwrap();
        std::fs::write(dir.path().join(snapshot_file_name(1)), b"damaged").unwrap();
        let partition = open(dir.path(), 1 << 30);
        assert_eq!(partition.producer_snapshot_offsets(), vec![1, 2]);
        assert!(!dir.path().join(snapshot_file_name(50)).exists());
        assert_eq!(partition.append(&once).unwrap().base_offset, 0);
        std::fs::remove_file(dir.path().join(snapshot_file_name(2))).unwrap();
        drop(partition);
        // With only the damaged one left, it is removed and the log replayed.
        let partition = open(dir.path(), 1 << 30);
        assert_eq!(partition.append(&once).unwrap().base_offset, 0);
        assert_eq!(partition.producer_snapshot_offsets(), Vec::<i64>::new());
    }

    #[test]
    fn a_new_snapshot_replaces_older_ones_inside_the_active_segment() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(1, 200);
        let partition = open(dir.path(), one.len() as u64 * 4);
        for _ in 0..5 {
            partition.append(&one).unwrap();
            partition.flush().unwrap();
        }
        // Rolled at 4 (kept), flushed at 1, 2, 3 (replaced), 4 and 5.
        assert_eq!(partition.producer_snapshot_offsets(), vec![4, 5]);
        assert!(!dir.path().join(snapshot_file_name(3)).exists());
    }

    #[test]
    fn retention_removes_snapshots_below_the_log_start() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch(1, 200);
        let partition = open(dir.path(), one.len() as u64);
        for _ in 0..4 {
            partition.append(&one).unwrap();
        }
        assert_eq!(partition.producer_snapshot_offsets(), vec![1, 2, 3]);
        partition.topic_config().write().unwrap().retention_bytes = Some(0);
        partition.enforce_retention(0).unwrap();
        assert_eq!(partition.log_start_offset(), 3);
        assert_eq!(partition.producer_snapshot_offsets(), vec![3]);
        assert!(!dir.path().join(snapshot_file_name(1)).exists());
    }
}
