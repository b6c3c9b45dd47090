//! Group commit for `FsyncPolicy::Batch`. An append under `batch` writes
//! to the page cache and notes its segment as dirty; the log's flusher
//! threads (never a tokio worker) take every dirty partition, issue one
//! fdatasync per dirty segment for everything written since the last
//! round, and resolve the appends waiting for those offsets (a
//! [`Durability`]). A connection therefore goes on appending while earlier
//! requests wait for their sync, and one sync covers every request and
//! connection that wrote meanwhile.

use super::segment::Segment;
use crate::error::{Error, Result};
use crate::stats::StorageStats;
use kafka_protocol::ResponseError;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, watch};

/// Flusher threads per log: a partition is synced by one thread at a
/// time, and fdatasyncs of different partitions issued together overlap on
/// the device (on this machine's ext4, which has no journal, six files
/// synced in parallel took 0.7 ms at p50 against 4-6 ms one after another), so
/// there are enough threads for every partition of a busy topic at once.
/// Idle threads wait on the queue and cost nothing.
const FLUSHER_THREADS: usize = 16;

/// How long a round that follows straight on from the partition's previous
/// one waits before taking its segments. Under sustained load the next
/// round would otherwise start the moment the last ends, holding one
/// producer batch or so, and on a CPU-bound machine every fdatasync costs
/// (here about 70 us of system time, plus the I/O interrupts): waiting
/// lets one sync cover more. Measured with ProducerPerformance (1 KB,
/// acks=all, 6 partitions, one node, 600,000 records, three pairs on a quiet
/// 2-core machine): 0 us 83-87 MB/s at 3.7-4.0 s of broker CPU, 500 us
/// 88-96 MB/s at 3.1-3.5 s, 1 ms about the same as 500 us, 2 ms worse. A round
/// started by an append to an idle partition does not wait, so light load
/// keeps its latency.
const CHAINED_ROUND_DELAY: std::time::Duration = std::time::Duration::from_micros(500);

/// Why offsets an append waits for will not become durable.
#[derive(Debug, Clone)]
enum NotDurable {
    /// fdatasync failed (KAFKA_STORAGE_ERROR).
    Storage(String),
    /// The log was cut below them before their sync (the replica stopped
    /// leading and truncated): NOT_LEADER_OR_FOLLOWER, which producers retry.
    Truncated(i64),
}

type Waiter = oneshot::Sender<std::result::Result<(), NotDurable>>;

/// The wait for an append's offsets to be on disk: ready at once under
/// `none` and `interval` (and for acks=0, which drops it).
#[must_use = "an append under fsync batch is acknowledged only once durable"]
#[derive(Debug)]
pub struct Durability(Option<oneshot::Receiver<std::result::Result<(), NotDurable>>>);

impl Durability {
    /// Nothing to wait for.
    pub fn ready() -> Durability {
        Durability(None)
    }

    /// Whether the offsets were durable (or needed no sync) when appended.
    pub fn is_ready(&self) -> bool {
        self.0.is_none()
    }

    /// Resolves once the offsets are on disk: KAFKA_STORAGE_ERROR if their
    /// fdatasync failed, NOT_LEADER_OR_FOLLOWER if truncation removed them.
    pub async fn wait(self) -> Result<()> {
        match self.0 {
            None => Ok(()),
            Some(rx) => into_result(rx.await),
        }
    }

    /// [`Durability::wait`] for threads outside the async runtime (tests,
    /// tools): never call it on a tokio worker.
    pub fn wait_blocking(self) -> Result<()> {
        match self.0 {
            None => Ok(()),
            Some(rx) => into_result(rx.blocking_recv()),
        }
    }
}

fn into_result(
    received: std::result::Result<std::result::Result<(), NotDurable>, oneshot::error::RecvError>,
) -> Result<()> {
    match received {
        Ok(Ok(())) => Ok(()),
        Ok(Err(NotDurable::Storage(message))) => Err(Error::kafka(
            ResponseError::KafkaStorageError,
            format!("fdatasync failed: {message}"),
        )),
        Ok(Err(NotDurable::Truncated(at))) => Err(Error::kafka(
            ResponseError::NotLeaderOrFollower,
            format!("the log was truncated at offset {at} before these records were durable"),
        )),
        Err(_) => Err(Error::kafka(
            ResponseError::KafkaStorageError,
            "the log closed before these records were durable",
        )),
    }
}

/// A partition's round in the flusher's queue, and whether it follows
/// straight on from the partition's previous round.
type QueuedRound = (Arc<GroupCommit>, bool);

/// The log's flusher: threads started on the first `batch` append, fed
/// the partitions with something to sync. They end when the log (every
/// sender) is gone.
#[derive(Debug, Default)]
pub struct Flusher {
    queue: Mutex<Option<mpsc::Sender<QueuedRound>>>,
}

impl Flusher {
    /// Queues a round of `partition`; `chained` when it follows straight on
    /// from the partition's previous round.
    fn enqueue(&self, partition: Arc<GroupCommit>, chained: bool) {
        let mut queue = self.queue.lock().expect("flusher lock");
        let tx = queue.get_or_insert_with(|| {
            let (tx, rx) = mpsc::channel::<QueuedRound>();
            let rx = Arc::new(Mutex::new(rx));
            for n in 0..FLUSHER_THREADS {
                let rx = rx.clone();
                std::thread::Builder::new()
                    .name(format!("kbench-flusher-{n}"))
                    .spawn(move || loop {
                        let next = rx.lock().expect("flusher queue").recv();
                        match next {
                            Ok((partition, chained)) => partition.flush_round(chained),
                            Err(_) => return,
                        }
                    })
                    .expect("spawn flusher thread");
            }
            tx
        });
        // The threads outlive every sender, so a send cannot fail.
        let _ = tx.send((partition, chained));
    }
}

#[derive(Debug)]
struct State {
    /// Offsets below this are on disk.
    through: i64,
    /// Offsets below this have been written under `batch`.
    written: i64,
    /// Segments written since the round that last took them.
    dirty: Vec<Arc<Segment>>,
    waiters: Vec<(i64, Waiter)>,
    /// In the flusher's queue or being flushed: a partition is flushed by
    /// one thread at a time, so a round never vouches for segments an
    /// earlier round is still syncing.
    queued: bool,
    /// Bumped by truncation, so a round that raced it does not vouch for
    /// offsets it never saw.
    generation: u64,
}

/// One partition's group commit under `FsyncPolicy::Batch`: what is
/// written, what is durable, who waits. Taken alone or last.
#[derive(Debug)]
pub struct GroupCommit {
    state: Mutex<State>,
    /// `through`, for followers reporting their durable position and
    /// leaders computing the high watermark.
    durable: watch::Sender<i64>,
    flusher: Arc<Flusher>,
    stats: Arc<StorageStats>,
}

impl GroupCommit {
    /// Everything below `through` (the log end on open) is on disk.
    pub fn new(through: i64, flusher: Arc<Flusher>, stats: Arc<StorageStats>) -> GroupCommit {
        GroupCommit {
            state: Mutex::new(State {
                through,
                written: through,
                dirty: Vec::new(),
                waiters: Vec::new(),
                queued: false,
                generation: 0,
            }),
            durable: watch::Sender::new(through),
            flusher,
            stats,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("durable lock")
    }

    /// Offsets below `next` were written to `segment` (called under the
    /// partition's append lock, so the dirty segments of a round always
    /// cover everything below the `written` it reads).
    pub fn written(self: &Arc<Self>, segment: &Arc<Segment>, next: i64) {
        let mut state = self.lock();
        state.written = state.written.max(next);
        if !state.dirty.iter().any(|s| Arc::ptr_eq(s, segment)) {
            state.dirty.push(segment.clone());
        }
        self.queue_if_idle(&mut state);
    }

    /// Resolves once every offset below `next` is on disk.
    pub fn wait_for(self: &Arc<Self>, next: i64) -> Durability {
        let mut state = self.lock();
        if state.through >= next {
            return Durability::ready();
        }
        let (tx, rx) = oneshot::channel();
        state.waiters.push((next, tx));
        self.queue_if_idle(&mut state);
        Durability(Some(rx))
    }

    fn queue_if_idle(self: &Arc<Self>, state: &mut State) {
        self.queue_round(state, false);
    }

    fn queue_round(self: &Arc<Self>, state: &mut State, chained: bool) {
        if !state.queued && !state.dirty.is_empty() {
            state.queued = true;
            self.flusher.enqueue(self.clone(), chained);
        }
    }

    /// Offsets below this are on disk.
    pub fn through(&self) -> i64 {
        *self.durable.borrow()
    }

    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.durable.subscribe()
    }

    /// One round, on a flusher thread: syncs each segment written since
    /// the last round (`Segment::sync`, the one place that calls
    /// fdatasync), then resolves the waiters it covered, or fails those it
    /// should have covered when a sync failed. A `chained` round first waits
    /// `CHAINED_ROUND_DELAY`, so that its one sync covers more.
    fn flush_round(self: Arc<Self>, chained: bool) {
        if chained {
            std::thread::sleep(CHAINED_ROUND_DELAY);
        }
        let (segments, target, generation) = {
            let mut state = self.lock();
            (
                std::mem::take(&mut state.dirty),
                state.written,
                state.generation,
            )
        };
        let mut failure = None;
        for segment in &segments {
            if let Err(e) = segment.sync(&self.stats) {
                failure = Some(e.to_string());
                break;
            }
        }
        let mut state = self.lock();
        let failed = failure.clone();
        match failure {
            None if state.generation == generation => {
                state.through = state.through.max(target);
            }
            None => {
                // Truncated meanwhile: what is left will be synced again.
                readd(&mut state.dirty, segments);
            }
            Some(message) => {
                readd(&mut state.dirty, segments);
                tracing::error!(error = %message, "fdatasync failed; failing the requests waiting for it");
                for tx in take_waiters(&mut state.waiters, |next| next <= target) {
                    let _ = tx.send(Err(NotDurable::Storage(message.clone())));
                }
            }
        }
        self.publish(&mut state);
        state.queued = false;
        // Another round for what was written meanwhile; after a failed
        // sync only when requests wait behind it (no spinning on a failed
        // disk: the next append queues it again).
        if failed.is_none() || !state.waiters.is_empty() {
            self.queue_round(&mut state, true);
        }
    }

    /// Resolves the waiters below `through` and tells the watchers.
    fn publish(&self, state: &mut State) {
        let through = state.through;
        self.durable.send_if_modified(|d| {
            let changed = *d != through;
            *d = through;
            changed
        });
        for tx in take_waiters(&mut state.waiters, |next| next <= through) {
            let _ = tx.send(Ok(()));
        }
    }

    /// The log was cut at `log_end`: nothing at or past it is durable, the
    /// appends waiting for it fail, and a round in progress no longer
    /// vouches for what it read. `kept` holds the offsets still waited for
    /// (synced again by the next round).
    pub fn truncated(self: &Arc<Self>, log_end: i64, kept: Vec<Arc<Segment>>) {
        let mut state = self.lock();
        state.through = state.through.min(log_end);
        state.written = state.written.min(log_end);
        state.generation += 1;
        state.dirty.retain(|s| s.base_offset() < log_end);
        for tx in take_waiters(&mut state.waiters, |next| next > log_end) {
            let _ = tx.send(Err(NotDurable::Truncated(log_end)));
        }
        if state.written > state.through {
            readd(&mut state.dirty, kept);
        }
        self.publish(&mut state);
        self.queue_if_idle(&mut state);
    }
}

fn readd(dirty: &mut Vec<Arc<Segment>>, segments: Vec<Arc<Segment>>) {
    for segment in segments {
        if !dirty.iter().any(|s| Arc::ptr_eq(s, &segment)) {
            dirty.push(segment);
        }
    }
}

/// Removes and returns the waiters whose offset `pick` selects.
fn take_waiters(waiters: &mut Vec<(i64, Waiter)>, pick: impl Fn(i64) -> bool) -> Vec<Waiter> {
    let (taken, kept) = std::mem::take(waiters)
        .into_iter()
        .partition::<Vec<_>, _>(|(next, _)| pick(*next));
    *waiters = kept;
    taken.into_iter().map(|(_, tx)| tx).collect()
}
