//! What the partitions of one log share besides their configuration: the
//! byte count for stats, the interval flusher's queue, the `batch`
//! policy's journal, and the clean-shutdown marker.

use super::index::sync_dir;
use super::journal::Journal;
use super::segment::Segment;
use crate::error::{Error, Result};
use crate::stats::StorageStats;
use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// The marker a clean `Log::flush` leaves in the data directory.
pub const CLEAN_SHUTDOWN_FILE: &str = ".clean-shutdown";

#[derive(Debug)]
pub struct LogShared {
    /// Bytes across all partitions of the log, for stats.
    pub total_size: Arc<AtomicU64>,
    pub flush_queue: FlushQueue,
    /// The `batch` policy's journal: set by `Log::open` once the last
    /// run's journal is replayed. Partitions opened on their own have none,
    /// and refuse `batch` appends.
    pub journal: OnceLock<Arc<Journal>>,
    pub clean: CleanShutdown,
}

impl LogShared {
    /// `data_dir` is where the clean-shutdown marker goes; `None` for
    /// partitions opened on their own (no marker).
    pub fn new(total_size: Arc<AtomicU64>, data_dir: Option<&Path>) -> LogShared {
        LogShared {
            total_size,
            flush_queue: FlushQueue::default(),
            journal: OnceLock::new(),
            clean: CleanShutdown::new(data_dir),
        }
    }
}

/// Segments with bytes to sync by a deadline (`FsyncPolicy::Interval`).
/// A segment is queued when an append finds it unqueued, so the queue
/// holds each dirty segment once, and a pass costs nothing when no
/// deadline has come.
#[derive(Debug, Default)]
pub struct FlushQueue {
    due: Mutex<BinaryHeap<Due>>,
    next_seq: AtomicU64,
}

#[derive(Debug)]
struct Due {
    at: Instant,
    seq: u64,
    segment: Arc<Segment>,
}

impl PartialEq for Due {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl Eq for Due {}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

impl Ord for Due {
    /// Reversed, so that the heap's top is the earliest deadline.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl FlushQueue {
    pub fn push(&self, at: Instant, segment: Arc<Segment>) {
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        self.due
            .lock()
            .expect("flush queue lock")
            .push(Due { at, seq, segment });
    }

    /// The earliest deadline, if any segment is queued.
    pub fn next_due(&self) -> Option<Instant> {
        self.due
            .lock()
            .expect("flush queue lock")
            .peek()
            .map(|d| d.at)
    }

    pub fn len(&self) -> usize {
        self.due.lock().expect("flush queue lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Syncs every segment whose deadline is at or before `now` (I/O
    /// outside the lock). Returns how many were due; the first error is
    /// returned after trying them all.
    pub fn flush_due(&self, now: Instant, stats: &StorageStats) -> Result<usize> {
        let mut taken = Vec::new();
        {
            let mut due = self.due.lock().expect("flush queue lock");
            while due.peek().is_some_and(|d| d.at <= now) {
                taken.push(due.pop().expect("peeked").segment);
            }
        }
        let mut first_error = None;
        for segment in &taken {
            // Unqueue before syncing: an append after this point queues
            // the segment again, and one before it is covered by the sync.
            segment.clear_queued();
            match segment.sync(stats) {
                Ok(()) => {}
                // Its topic was deleted meanwhile: nothing left to sync.
                Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    tracing::warn!(segment = %segment.log_path().display(), error = %e, "interval flush failed");
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(taken.len()),
        }
    }
}

/// The clean-shutdown marker (`<data_dir>/.clean-shutdown`). A clean
/// flush arms it before flushing and writes it after, unless a change to
/// the log came in between (`note_change` disarms, and removes a marker
/// already written), so that the marker only ever vouches for files that
/// were all flushed.
#[derive(Debug)]
pub struct CleanShutdown {
    path: Option<PathBuf>,
    armed: AtomicBool,
    /// Whether the marker file exists (this process wrote it).
    written: Mutex<bool>,
}

impl CleanShutdown {
    fn new(data_dir: Option<&Path>) -> CleanShutdown {
        CleanShutdown {
            path: data_dir.map(|d| d.join(CLEAN_SHUTDOWN_FILE)),
            armed: AtomicBool::new(false),
            written: Mutex::new(false),
        }
    }

    /// Whether `data_dir` holds a marker; removes it (durably), so that a
    /// crash after this start is recovered.
    pub fn take(data_dir: &Path) -> Result<bool> {
        match std::fs::remove_file(data_dir.join(CLEAN_SHUTDOWN_FILE)) {
            Ok(()) => {
                sync_dir(data_dir)?;
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Start of a clean flush.
    pub fn arm(&self) {
        let _written = self.written.lock().expect("marker lock");
        self.armed.store(true, Ordering::SeqCst);
    }

    /// End of a clean flush: writes the marker (durably) unless the log
    /// changed since `arm`. Returns whether it did.
    pub fn write_if_armed(&self) -> Result<bool> {
        let mut written = self.written.lock().expect("marker lock");
        if !self.armed.load(Ordering::SeqCst) {
            return Ok(false);
        }
        if let Some(path) = &self.path {
            std::fs::write(path, b"kbench clean shutdown\n")?;
            std::fs::File::open(path)?.sync_all()?;
            if let Some(dir) = path.parent() {
                sync_dir(dir)?;
            }
            *written = true;
        }
        Ok(true)
    }

    /// Called after every change to a partition's files: one atomic load
    /// unless a clean flush armed the marker.
    #[inline]
    pub fn note_change(&self) {
        if self.armed.load(Ordering::SeqCst) {
            self.disarm();
        }
    }

    #[cold]
    fn disarm(&self) {
        let mut written = self.written.lock().expect("marker lock");
        self.armed.store(false, Ordering::SeqCst);
        if *written {
            if let Some(path) = &self.path {
                if let Err(e) = std::fs::remove_file(path) {
                    tracing::warn!(path = %path.display(), error = %e, "could not remove the clean-shutdown marker");
                }
            }
            *written = false;
        }
    }
}
