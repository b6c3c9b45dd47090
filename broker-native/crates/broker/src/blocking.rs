//! File work (creating partitions, whose directories and segment files can
//! number thousands per request) done from async handlers without holding
//! up the runtime's workers, so other connections and signal handling go on.

use tokio::runtime::{Handle, RuntimeFlavor};

/// Runs `work`, which blocks on the file system. On a multi-threaded runtime
/// the worker first hands its other tasks to another thread (tokio's
/// `block_in_place`); on a current-thread runtime (unit tests) or outside
/// one, `work` simply runs.
pub fn off_worker<R>(work: impl FnOnce() -> R) -> R {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}
