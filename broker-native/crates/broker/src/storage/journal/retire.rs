//! The journal's retiring thread: once a file is full and written, it
//! syncs every segment written while that file took records, with their
//! directories, then retires the file (see `files::retire`), in file order,
//! since a replay starts from the oldest file left.

use super::{files, Journal};
use crate::error::{Error, Result};
use crate::stats::StorageStats;
use crate::storage::index::sync_dir;
use crate::storage::segment::Segment;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex, Weak};

/// For the retiring thread.
pub(super) enum Retiring {
    /// File `seq` is full and written: sync these segments, then retire it.
    File {
        seq: u64,
        segments: Vec<Arc<Segment>>,
    },
    /// Answer once everything sent before is retired.
    Barrier(mpsc::Sender<()>),
    /// Retire nothing more (the log was stopped as a crash stops it); answer.
    Stop(mpsc::Sender<()>),
}

/// The retiring thread: syncs a full file's segments, then retires it, in
/// file order (a replay starts from the oldest file left).
pub(super) struct Retirer {
    pub dir: PathBuf,
    pub data_dir: PathBuf,
    pub stats: Arc<StorageStats>,
    pub spares: Arc<Mutex<Vec<(u64, PathBuf)>>>,
    pub journal: Weak<Journal>,
}

impl Retirer {
    pub fn run(self, retiring: mpsc::Receiver<Retiring>) {
        let mut stopped = false;
        while let Ok(message) = retiring.recv() {
            match message {
                Retiring::Barrier(done) => {
                    let _ = done.send(());
                }
                Retiring::Stop(done) => {
                    stopped = true;
                    let _ = done.send(());
                }
                // After a failure the files stay, for the next open to replay.
                Retiring::File { .. } if stopped => {}
                Retiring::File { seq, segments } => {
                    if let Err(e) = self.retire(seq, &segments) {
                        tracing::error!(seq, error = %e, "could not retire a journal file; the journal stops");
                        stopped = true;
                        if let Some(journal) = self.journal.upgrade() {
                            journal.fail(&format!("retiring journal file {seq} failed: {e}"));
                        }
                    }
                }
            }
        }
    }

    fn retire(&self, seq: u64, segments: &[Arc<Segment>]) -> Result<()> {
        let mut dirs = HashSet::new();
        for segment in segments {
            segment.sync(&self.stats)?;
            if let Some(dir) = segment.log_path().parent() {
                dirs.insert(dir.to_path_buf());
            }
        }
        // New segment files, and new partition directories.
        for dir in &dirs {
            match sync_dir(dir) {
                Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
        if !dirs.is_empty() {
            sync_dir(&self.data_dir)?;
        }
        let mut spares = self.spares.lock().expect("journal spares lock");
        files::retire(&self.dir, seq, &mut spares)
    }
}
