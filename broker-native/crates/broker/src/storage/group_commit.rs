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
use std::time::{Duration, Instant};
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
/// keeps its latency. The wait is on the flusher's timer thread, not on a
/// flusher thread.
const CHAINED_ROUND_DELAY: Duration = Duration::from_micros(500);

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

/// The log's flusher: threads started on the first `batch` append, fed
/// the partitions with something to sync, and one timer thread that holds
/// chained rounds for their delay, so that a waiting round never occupies
/// a flusher thread (with more busy partitions than threads, a sleep there
/// would hold up every other partition's round). The threads end when the
/// log (every sender) is gone.
#[derive(Debug)]
pub struct Flusher {
    queues: Mutex<Option<Queues>>,
    chained_delay: Duration,
}

#[derive(Debug)]
struct Queues {
    /// Rounds to run now.
    now: mpsc::Sender<Arc<GroupCommit>>,
    /// Chained rounds and when they are due. Every one waits the same
    /// delay, so they arrive in the order they fall due.
    later: mpsc::Sender<(Instant, Arc<GroupCommit>)>,
}

impl Default for Flusher {
    fn default() -> Flusher {
        Flusher::with_chained_delay(CHAINED_ROUND_DELAY)
    }
}

impl Flusher {
    /// A flusher whose chained rounds wait `chained_delay` (tests use a
    /// long one to see who waits).
    pub fn with_chained_delay(chained_delay: Duration) -> Flusher {
        Flusher {
            queues: Mutex::new(None),
            chained_delay,
        }
    }

    /// Queues a round of `partition`; `chained` when it follows straight on
    /// from the partition's previous round, which then waits
    /// `chained_delay` on the timer thread first.
    fn enqueue(&self, partition: Arc<GroupCommit>, chained: bool) {
        let mut queues = self.queues.lock().expect("flusher lock");
        let queues = queues.get_or_insert_with(start_threads);
        // The threads outlive every sender, so a send cannot fail.
        if chained && !self.chained_delay.is_zero() {
            let _ = queues
                .later
                .send((Instant::now() + self.chained_delay, partition));
        } else {
            let _ = queues.now.send(partition);
        }
    }
}

fn start_threads() -> Queues {
    let (now, rx) = mpsc::channel::<Arc<GroupCommit>>();
    let rx = Arc::new(Mutex::new(rx));
    for n in 0..FLUSHER_THREADS {
        let rx = rx.clone();
        std::thread::Builder::new()
            .name(format!("kbench-flusher-{n}"))
            .spawn(move || loop {
                let next = rx.lock().expect("flusher queue").recv();
                match next {
                    Ok(partition) => partition.flush_round(),
                    Err(_) => return,
                }
            })
            .expect("spawn flusher thread");
    }
    let (later, delayed) = mpsc::channel::<(Instant, Arc<GroupCommit>)>();
    let to_flushers = now.clone();
    std::thread::Builder::new()
        .name("kbench-flusher-timer".into())
        .spawn(move || {
            // Ends when the flusher is dropped; its copy of `now` goes
            // with it, and the flusher threads end after it.
            while let Ok((due, partition)) = delayed.recv() {
                let wait = due.saturating_duration_since(Instant::now());
                if !wait.is_zero() {
                    std::thread::sleep(wait);
                }
                if to_flushers.send(partition).is_err() {
                    return;
                }
            }
        })
        .expect("spawn flusher timer thread");
    Queues { now, later }
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
    /// should have covered when a sync failed.
    fn flush_round(self: Arc<Self>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::segment::test_support::{append_batch, cache};

    /// A partition's group commit over one fresh segment holding one
    /// written record; returns it with that segment and the offset after
    /// the record.
    fn written_partition(
        dir: &std::path::Path,
        flusher: &Arc<Flusher>,
        stats: &Arc<StorageStats>,
    ) -> (Arc<GroupCommit>, Arc<Segment>, i64) {
        let segment = Arc::new(Segment::create(dir, 0, 4096, cache()).unwrap());
        let next = append_batch(&segment, 1, 10) + 1;
        let partition = Arc::new(GroupCommit::new(0, flusher.clone(), stats.clone()));
        (partition, segment, next)
    }

    #[test]
    fn a_chained_round_waits_its_delay_without_holding_a_flusher_thread() {
        let dir = tempfile::tempdir().unwrap();
        // Long enough that nothing here sees a chained round run.
        let flusher = Arc::new(Flusher::with_chained_delay(Duration::from_secs(600)));
        let stats = Arc::new(StorageStats::default());
        // More partitions than flusher threads, each with a chained round
        // queued: were the delay slept on a flusher thread, every thread
        // would be asleep and the idle partition below would wait for it.
        let chained: Vec<_> = (0..FLUSHER_THREADS + 4)
            .map(|n| {
                let (partition, segment, next) =
                    written_partition(&dir.path().join(format!("chained-{n}")), &flusher, &stats);
                {
                    let mut state = partition.lock();
                    state.written = next;
                    state.dirty.push(segment);
                    state.queued = true;
                }
                flusher.enqueue(partition.clone(), true);
                partition
            })
            .collect();
        let (idle, segment, next) = written_partition(&dir.path().join("idle"), &flusher, &stats);
        idle.written(&segment, next);
        idle.wait_for(next).wait_blocking().unwrap();
        assert_eq!(idle.through(), next);
        assert!(!segment.is_unsynced());
        for partition in &chained {
            assert_eq!(
                partition.through(),
                0,
                "a chained round ran before its delay"
            );
        }
    }

    #[test]
    fn a_chained_round_runs_once_its_delay_is_over() {
        let dir = tempfile::tempdir().unwrap();
        let flusher = Arc::new(Flusher::with_chained_delay(Duration::from_millis(20)));
        let stats = Arc::new(StorageStats::default());
        let (partition, segment, next) = written_partition(dir.path(), &flusher, &stats);
        {
            let mut state = partition.lock();
            state.written = next;
            state.dirty.push(segment.clone());
            state.queued = true;
        }
        let durable = partition.wait_for(next);
        flusher.enqueue(partition.clone(), true);
        durable.wait_blocking().unwrap();
        assert_eq!(partition.through(), next);
        assert!(!segment.is_unsynced());
    }
}
