//! Opening a partition's directory: which segments, producer-state
//! snapshots and epoch checkpoint it holds, each segment opened (the last
//! one scanned and a torn or corrupt tail cut, unless a clean shutdown lets
//! it be trusted), and a report of what recovery did. Apache Kafka's
//! `LogLoader` has the same job.

use super::super::epoch_cache::CHECKPOINT_FILE;
use super::super::segment::{index_file_name, log_file_name, time_index_file_name};
use super::super::segment::{Recovery, Segment};
use super::LogConfig;
use crate::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

/// What opening a partition (or a whole log) found and did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Partitions opened.
    pub partitions: usize,
    /// Partitions opened trusting a clean shutdown (no tail scan).
    pub trusted: usize,
    /// Segments whose every batch was read and checked.
    pub scanned_segments: usize,
    /// Bytes cut off torn or corrupt tails.
    pub truncated_bytes: u64,
    /// Index files rebuilt from the log.
    pub rebuilt_indexes: usize,
}

impl RecoveryReport {
    fn add_segment(&mut self, recovery: &Recovery) {
        self.scanned_segments += usize::from(recovery.scanned);
        self.truncated_bytes += recovery.truncated_bytes;
        self.rebuilt_indexes += usize::from(recovery.rebuilt_index && !recovery.scanned);
    }

    pub fn merge(&mut self, other: &RecoveryReport) {
        self.partitions += other.partitions;
        self.trusted += other.trusted;
        self.scanned_segments += other.scanned_segments;
        self.truncated_bytes += other.truncated_bytes;
        self.rebuilt_indexes += other.rebuilt_indexes;
    }
}

/// A partition directory as found, its segments open.
pub(super) struct Loaded {
    /// By base offset; never empty (a fresh directory gets one at 0).
    pub segments: BTreeMap<i64, Arc<Segment>>,
    /// Offsets of the producer-state snapshot files.
    pub snapshots: BTreeSet<i64>,
    /// Whether a leader-epoch checkpoint file is there.
    pub has_checkpoint: bool,
    pub report: RecoveryReport,
    pub log_start_offset: i64,
    pub log_end: i64,
    /// Bytes of all segments.
    pub size: u64,
}

/// Opens `dir` (a missing one is an empty partition): see the module comment.
pub(super) fn load(dir: &Path, config: &LogConfig, clean_shutdown: bool) -> Result<Loaded> {
    // The directory is made by the partition's first file (see
    // `Segment::create_lazily`): a partition never written has none.
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => Some(listing),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let mut bases: Vec<i64> = Vec::new();
    let mut snapshots = BTreeSet::new();
    let mut has_checkpoint = false;
    if let Some(listing) = listing {
        for entry in listing {
            let Ok(name) = entry?.file_name().into_string() else {
                continue;
            };
            if let Some(base) = name.strip_suffix(".log").and_then(|b| b.parse().ok()) {
                bases.push(base);
            } else if let Some(offset) = name.strip_suffix(".snapshot").and_then(|o| o.parse().ok())
            {
                snapshots.insert(offset);
            } else if name == CHECKPOINT_FILE {
                has_checkpoint = true;
            }
        }
    }
    bases.sort_unstable();
    let mut report = RecoveryReport {
        partitions: 1,
        trusted: usize::from(clean_shutdown),
        ..RecoveryReport::default()
    };
    let mut segments = BTreeMap::new();
    for (i, base) in bases.iter().enumerate() {
        let last = i + 1 == bases.len();
        let opened = if last && clean_shutdown {
            Segment::open_trusted(dir, *base, config.index_interval, config.files.clone())
        } else {
            Segment::open(
                dir,
                *base,
                config.index_interval,
                last,
                config.files.clone(),
            )
        };
        let (segment, recovery) = match opened {
            Ok(opened) => opened,
            // A sealed segment whose batches do not hold together: pages a
            // crash lost (under fsync `none`, or not yet synced under
            // `batch`, whose journal replays them). As Apache Kafka's
            // recovery does, it is scanned and cut at the first bad batch,
            // and the segments after it, past a hole, are deleted.
            Err(e @ Error::Kafka { .. }) if !last => {
                tracing::warn!(dir = %dir.display(), base, error = %e, "a sealed segment does not hold together; recovering it and dropping the segments after it");
                let (segment, mut recovery) = Segment::open(
                    dir,
                    *base,
                    config.index_interval,
                    true,
                    config.files.clone(),
                )?;
                for later in &bases[i + 1..] {
                    recovery.truncated_bytes += drop_segment_files(dir, *later)?;
                }
                report.add_segment(&recovery);
                segments.insert(*base, Arc::new(segment));
                break;
            }
            Err(e) => return Err(e),
        };
        if recovery.truncated_bytes > 0 {
            tracing::warn!(
                dir = %dir.display(),
                truncated = recovery.truncated_bytes,
                "truncated a torn or corrupt log tail"
            );
        }
        if recovery.rebuilt_index && !last {
            tracing::warn!(segment = %segment.log_path().display(), "rebuilt a missing or bad index");
        }
        report.add_segment(&recovery);
        segments.insert(*base, Arc::new(segment));
    }
    if segments.is_empty() {
        let segment = Segment::create_lazily(dir, 0, config.index_interval, config.files.clone());
        segments.insert(0, Arc::new(segment));
    }
    let log_start_offset = *segments.keys().next().expect("one segment");
    let log_end = segments
        .values()
        .next_back()
        .expect("one segment")
        .next_offset();
    let size: u64 = segments.values().map(|s| s.size()).sum();

    Ok(Loaded {
        segments,
        snapshots,
        has_checkpoint,
        report,
        log_start_offset,
        log_end,
        size,
    })
}

/// Removes a segment's files (one found past a hole at open); returns the
/// bytes of log it held.
fn drop_segment_files(dir: &Path, base: i64) -> Result<u64> {
    let log = dir.join(log_file_name(base));
    let bytes = std::fs::metadata(&log).map_or(0, |m| m.len());
    for name in [
        log_file_name(base),
        index_file_name(base),
        time_index_file_name(base),
    ] {
        match std::fs::remove_file(dir.join(name)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
    }
    Ok(bytes)
}
