//! Replaying the journal at open (see storage/journal): what the last run
//! acknowledged under fsync `batch` and its segments may not hold on disk.
//!
//! A journal file is retired only once every segment written while it took
//! records is synced, so a partition's bytes before its first record in the
//! files left are on disk, and from that record on the journal holds every
//! append and truncation the partition made under `batch`, in order. For
//! each partition named there, the replay therefore cuts the log where its
//! first record starts (whatever the segments hold from there is unsynced:
//! possibly torn, possibly holes of zeros in a sealed segment) and applies
//! its records again. Records below the log start (segments retention
//! deleted since) are skipped, and so are those of topics the catalog no
//! longer has (deleted, or never made durable); a partition whose records
//! do not line up with its log (an append not at its end: bytes appended
//! under another policy in between) keeps what it has, with a warning.
//! Then every partition replayed is synced, with its directory, and the
//! journal files are retired.

use crate::error::Result;
use crate::storage::batch::split_and_validate;
use crate::storage::index::sync_dir;
use crate::storage::journal::record::Entry;
use crate::storage::journal::{JournalKey, Replay};
use crate::storage::partition::Partition;
use crate::storage::topic::Topic;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use uuid::Uuid;

/// What a replay put back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JournalReplayReport {
    /// Journal records applied (appends and truncations).
    pub records: u64,
    /// Partitions replayed.
    pub partitions: usize,
    /// Partitions whose records did not line up with their log.
    pub stopped: usize,
}

struct Progress {
    partition: Arc<Partition>,
    /// The log was cut at the partition's first record.
    started: bool,
    stopped: bool,
}

pub(super) fn replay_journal(
    dir: &Path,
    topics: &HashMap<String, Arc<Topic>>,
    ids: &HashMap<Uuid, String>,
) -> Result<JournalReplayReport> {
    let replay = Replay::open(dir)?;
    let mut report = JournalReplayReport::default();
    let mut progress: HashMap<JournalKey, Option<Progress>> = HashMap::new();
    replay.for_each(|entry| {
        let key = match entry {
            Entry::Append { key, .. } | Entry::Truncate { key, .. } => *key,
        };
        let slot = progress.entry(key).or_insert_with(|| {
            let topic = topics.get(ids.get(&key.topic_id)?)?;
            let partition = usize::try_from(key.partition)
                .ok()
                .and_then(|p| topic.partitions.get(p))?;
            Some(Progress {
                partition: partition.clone(),
                started: false,
                stopped: false,
            })
        });
        let Some(p) = slot.as_mut().filter(|p| !p.stopped) else {
            return;
        };
        match apply(p, entry) {
            Ok(true) => report.records += 1,
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(dir = %p.partition.dir().display(), error = %e, "the journal's records do not line up with this partition's log; keeping what it has");
                p.stopped = true;
                report.stopped += 1;
            }
        }
    })?;
    let replayed: Vec<&Progress> = progress.values().flatten().filter(|p| p.started).collect();
    for p in &replayed {
        p.partition.flush()?;
        sync_dir(p.partition.dir())?;
        p.partition.replay_synced();
    }
    if !replayed.is_empty() {
        sync_dir(dir)?;
        report.partitions = replayed.len();
        tracing::info!(
            records = report.records,
            partitions = report.partitions,
            "replayed the journal"
        );
    }
    replay.finish()?;
    Ok(report)
}

/// Applies one record; false when it was skipped (below the log start).
fn apply(p: &mut Progress, entry: &Entry<'_>) -> Result<bool> {
    let partition = &p.partition;
    let log_start = partition.log_start_offset();
    match *entry {
        Entry::Append {
            base_offset,
            batches,
            ..
        } => {
            let parsed = split_and_validate(batches)?;
            let end = parsed.last().map_or(base_offset, |(_, h)| h.next_offset());
            if end <= log_start {
                return Ok(false);
            }
            if !p.started {
                partition.truncate_to(base_offset)?;
                p.started = true;
            }
            partition.append_replayed(batches)?;
        }
        Entry::Truncate { offset, .. } => {
            if offset < log_start {
                return Ok(false);
            }
            p.started = true;
            partition.truncate_to(offset)?;
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use crate::config::FsyncPolicy;
    use crate::storage::batch::split_and_validate;
    use crate::storage::journal::{JournalConfig, JOURNAL_DIR};
    use crate::storage::time_index::test_support::batch_at;
    use crate::storage::{Log, LogConfig, Partition};
    use std::path::Path;

    fn config(segment_bytes: u64, journal_file_bytes: u64) -> LogConfig {
        LogConfig {
            fsync: FsyncPolicy::Batch,
            segment_bytes,
            journal: JournalConfig {
                file_bytes: journal_file_bytes,
            },
            ..LogConfig::default()
        }
    }

    /// Every batch in the partition, from its log start, as stored.
    fn contents(partition: &Partition) -> Vec<Vec<u8>> {
        let mut batches = Vec::new();
        let mut offset = partition.log_start_offset();
        while offset < partition.log_end_offset() {
            let read = partition.read(offset, 1 << 20, true).unwrap();
            for (at, header) in split_and_validate(&read.records).unwrap() {
                let len = header.size;
                batches.push(read.records[at..at + len].to_vec());
                offset = header.next_offset();
            }
        }
        batches
    }

    /// Acknowledged appends of distinct batches to partition `p` of "t".
    fn append(log: &Log, p: i32, count: usize, from: i64) {
        let partition = log.partition("t", p).unwrap();
        for i in 0..count as i64 {
            partition
                .append(&batch_at(3, 100, 1_000_000 + from + i))
                .unwrap();
        }
    }

    /// A crash: the log goes without a flush, once its journal has written
    /// what it took (the page cache's copy of the segments is then damaged
    /// by the test, as a power cut would leave the disk).
    fn crash(log: Log) {
        log.journal_for_tests().settle();
        drop(log);
    }

    fn segment_files(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .collect();
        files.sort();
        files
    }

    #[test]
    fn acknowledged_batches_come_back_when_no_segment_byte_reached_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let before: Vec<Vec<Vec<u8>>>;
        {
            let log = Log::open(dir.path(), config(1 << 30, 32 << 20)).unwrap();
            log.create_topic("t", 3, false).unwrap();
            for p in 0..3 {
                append(&log, p, 20, i64::from(p) * 100);
            }
            before = (0..3)
                .map(|p| contents(&log.partition("t", p).unwrap()))
                .collect();
            crash(log);
        }
        // Nothing synced the segments (no journal file filled): the worst
        // case loses every partition directory.
        for p in 0..3 {
            std::fs::remove_dir_all(dir.path().join(format!("t-{p}"))).unwrap();
        }
        let log = Log::open(dir.path(), config(1 << 30, 32 << 20)).unwrap();
        let replayed = log.recovery().replayed;
        assert_eq!((replayed.records, replayed.partitions), (60, 3));
        for p in 0..3 {
            let partition = log.partition("t", p).unwrap();
            assert_eq!(contents(&partition), before[p as usize], "partition {p}");
            assert_eq!(partition.durable_end(), 60);
        }
        // Replayed, synced, and retired: a second open has nothing to do.
        drop(log);
        let log = Log::open(dir.path(), config(1 << 30, 32 << 20)).unwrap();
        assert_eq!(log.recovery().replayed.records, 0);
        assert_eq!(contents(&log.partition("t", 0).unwrap()), before[0]);
    }

    #[test]
    fn zeroed_pages_inside_a_sealed_segment_are_rewritten_from_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch_at(3, 100, 0).len() as u64;
        let before;
        {
            let log = Log::open(dir.path(), config(one * 4, 32 << 20)).unwrap();
            log.create_topic("t", 1, false).unwrap();
            append(&log, 0, 12, 0);
            before = contents(&log.partition("t", 0).unwrap());
            crash(log);
        }
        let files = segment_files(&dir.path().join("t-0"));
        assert_eq!(files.len(), 3);
        // The middle segment's pages never reached the disk: zeros, at its
        // full size (its size did).
        let len = std::fs::metadata(&files[1]).unwrap().len();
        std::fs::write(&files[1], vec![0u8; len as usize]).unwrap();
        let log = Log::open(dir.path(), config(one * 4, 32 << 20)).unwrap();
        assert_eq!(log.recovery().replayed.records, 12);
        assert_eq!(contents(&log.partition("t", 0).unwrap()), before);
    }

    #[test]
    fn a_torn_last_write_loses_only_what_was_never_acknowledged() {
        let dir = tempfile::tempdir().unwrap();
        let before;
        {
            let log = Log::open(dir.path(), config(1 << 30, 32 << 20)).unwrap();
            log.create_topic("t", 1, false).unwrap();
            append(&log, 0, 10, 0);
            before = contents(&log.partition("t", 0).unwrap());
            crash(log);
        }
        // A write that was going on when the power went: half a record
        // of garbage after the last acknowledged one, and no segment bytes.
        let journal = std::fs::read_dir(dir.path().join(JOURNAL_DIR))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "journal"))
            .unwrap();
        let mut bytes = std::fs::read(&journal).unwrap();
        bytes.extend_from_slice(&[0, 0, 1, 0, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3]);
        std::fs::write(&journal, bytes).unwrap();
        std::fs::remove_dir_all(dir.path().join("t-0")).unwrap();
        let log = Log::open(dir.path(), config(1 << 30, 32 << 20)).unwrap();
        assert_eq!(log.recovery().replayed.records, 10);
        assert_eq!(contents(&log.partition("t", 0).unwrap()), before);
    }

    #[test]
    fn a_truncation_is_replayed_where_it_happened() {
        let dir = tempfile::tempdir().unwrap();
        let (first, after);
        {
            let log = Log::open(dir.path(), config(1 << 30, 32 << 20)).unwrap();
            log.create_topic("t", 1, false).unwrap();
            append(&log, 0, 4, 0);
            let partition = log.partition("t", 0).unwrap();
            first = std::fs::read(&segment_files(&dir.path().join("t-0"))[0]).unwrap();
            partition.truncate_to(6).unwrap();
            append(&log, 0, 3, 500);
            after = contents(&partition);
            crash(log);
        }
        // The disk kept the segment as it was before the truncation: the
        // replay must cut it and apply the later appends.
        std::fs::write(&segment_files(&dir.path().join("t-0"))[0], first).unwrap();
        let log = Log::open(dir.path(), config(1 << 30, 32 << 20)).unwrap();
        let partition = log.partition("t", 0).unwrap();
        assert_eq!(partition.log_end_offset(), 15);
        assert_eq!(contents(&partition), after);
    }

    #[test]
    fn a_killed_log_leaves_its_journal_to_the_next_open_even_while_it_lingers() {
        let dir = tempfile::tempdir().unwrap();
        let old = Log::open(dir.path(), config(1 << 30, 64 << 10)).unwrap();
        old.create_topic("t", 1, false).unwrap();
        append(&old, 0, 40, 0);
        let before = contents(&old.partition("t", 0).unwrap());
        // A node killed in this process: its log may outlive the kill (a
        // task still holds it) while the node starts again on its directory.
        old.halt_journal();
        let err = old
            .partition("t", 0)
            .unwrap()
            .append(&batch_at(1, 10, 0))
            .unwrap_err();
        assert!(err.to_string().contains("the log was stopped"), "{err}");
        let again = Log::open(dir.path(), config(1 << 30, 64 << 10)).unwrap();
        assert!(again.recovery().replayed.records > 0);
        let partition = again.partition("t", 0).unwrap();
        assert_eq!(contents(&partition), before);
        append(&again, 0, 40, 100);
        again.journal_for_tests().settle();
        drop(old);
        drop(again);
        let last = Log::open(dir.path(), config(1 << 30, 64 << 10)).unwrap();
        assert_eq!(contents(&last.partition("t", 0).unwrap()).len(), 80);
    }

    #[test]
    fn records_of_a_deleted_topic_never_reach_the_new_topic_of_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let after;
        {
            let log = Log::open(dir.path(), config(1 << 30, 32 << 20)).unwrap();
            log.create_topic("t", 1, false).unwrap();
            append(&log, 0, 5, 0);
            log.delete_topic("t").unwrap();
            log.create_topic("t", 1, false).unwrap();
            append(&log, 0, 2, 900);
            after = contents(&log.partition("t", 0).unwrap());
            crash(log);
        }
        std::fs::remove_dir_all(dir.path().join("t-0")).unwrap();
        let log = Log::open(dir.path(), config(1 << 30, 32 << 20)).unwrap();
        assert_eq!(log.recovery().replayed.records, 2);
        assert_eq!(contents(&log.partition("t", 0).unwrap()), after);
    }

    #[test]
    fn records_below_the_log_start_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let one = batch_at(3, 100, 0).len() as u64;
        let after;
        {
            let log = Log::open(dir.path(), config(one * 2, 32 << 20)).unwrap();
            log.create_topic("t", 1, false).unwrap();
            append(&log, 0, 10, 0);
            let partition = log.partition("t", 0).unwrap();
            partition.topic_config().write().unwrap().retention_bytes = Some(one as i64 * 4);
            assert!(partition.enforce_retention(0).unwrap() > 0);
            after = contents(&partition);
            crash(log);
        }
        let log = Log::open(dir.path(), config(one * 2, 32 << 20)).unwrap();
        let partition = log.partition("t", 0).unwrap();
        assert_eq!(partition.log_start_offset(), 18);
        assert_eq!(contents(&partition), after);
    }

    #[test]
    fn full_journal_files_are_retired_and_recycled_and_replay_stays_exact() {
        let dir = tempfile::tempdir().unwrap();
        let journal_dir = dir.path().join(JOURNAL_DIR);
        let names = |suffix: &str| {
            std::fs::read_dir(&journal_dir)
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .path()
                        .extension()
                        .is_some_and(|e| e == suffix)
                })
                .count()
        };
        let before;
        {
            // Files of 64 KiB: about 150 appends roll through many of them.
            let log = Log::open(dir.path(), config(1 << 30, 64 << 10)).unwrap();
            log.create_topic("t", 2, false).unwrap();
            for round in 0..75 {
                append(&log, 0, 1, round);
                append(&log, 1, 1, 1000 + round);
            }
            log.journal_for_tests().settle();
            assert!(names("journal") <= 2, "{} journal files", names("journal"));
            assert!(names("spare") <= 2, "{} spares", names("spare"));
            before = (0..2)
                .map(|p| contents(&log.partition("t", p).unwrap()))
                .collect::<Vec<_>>();
            crash(log);
        }
        // Segments hold what retired files covered; the rest is replayed
        // from the files left, whose recycled tails hold stale records.
        let log = Log::open(dir.path(), config(1 << 30, 64 << 10)).unwrap();
        for p in 0..2 {
            assert_eq!(
                contents(&log.partition("t", p).unwrap()),
                before[p as usize]
            );
        }
        assert_eq!(names("journal"), 0);
        // A clean flush leaves nothing to replay.
        append(&log, 0, 3, 5000);
        log.flush().unwrap();
        assert_eq!(names("journal"), 0);
        drop(log);
        let log = Log::open(dir.path(), config(1 << 30, 64 << 10)).unwrap();
        assert_eq!(log.recovery().replayed.records, 0);
        assert!(log.recovery().clean_shutdown);
    }
}
