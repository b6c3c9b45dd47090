//! One partition's side of group commit under `FsyncPolicy::Batch`: the
//! offsets below which its log is durable, and the appends waiting for
//! them. The log's journal (storage/journal) makes a round of appends
//! durable, whatever partitions they went to, with one write, and then
//! tells each partition here how far it got; an append resolves its
//! [`Durability`] once its offsets are covered. A connection therefore
//! goes on appending while earlier requests wait, and one write covers
//! every request and connection that wrote meanwhile.

use crate::error::{Error, Result};
use kafka_protocol::ResponseError;
use std::sync::Mutex;
use tokio::sync::{oneshot, watch};

/// Why offsets an append waits for will not become durable.
#[derive(Debug, Clone)]
enum NotDurable {
    /// The journal's write failed, or the journal had stopped
    /// (KAFKA_STORAGE_ERROR).
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
    /// journal failed, NOT_LEADER_OR_FOLLOWER if truncation removed them.
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
            format!("not durable: {message}"),
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

#[derive(Debug)]
struct State {
    /// Offsets below this are on disk.
    through: i64,
    waiters: Vec<(i64, Waiter)>,
    /// Bumped by truncation, so a journal round that raced it does not
    /// vouch for offsets it never saw.
    generation: u64,
    /// The journal stopped: every wait fails with this.
    failed: Option<String>,
}

/// What of one partition is durable, and who waits. Taken alone or last.
#[derive(Debug)]
pub struct GroupCommit {
    state: Mutex<State>,
    /// `through`, for followers reporting their durable position and
    /// leaders computing the high watermark.
    durable: watch::Sender<i64>,
}

impl GroupCommit {
    /// Everything below `through` (the log end on open) is on disk.
    pub fn new(through: i64) -> GroupCommit {
        GroupCommit {
            state: Mutex::new(State {
                through,
                waiters: Vec::new(),
                generation: 0,
                failed: None,
            }),
            durable: watch::Sender::new(through),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("durable lock")
    }

    /// Resolves once every offset below `next` is on disk.
    pub fn wait_for(&self, next: i64) -> Durability {
        let mut state = self.lock();
        if state.through >= next {
            return Durability::ready();
        }
        let (tx, rx) = oneshot::channel();
        match &state.failed {
            Some(why) => {
                let _ = tx.send(Err(NotDurable::Storage(why.clone())));
            }
            None => state.waiters.push((next, tx)),
        }
        Durability(Some(rx))
    }

    /// The truncation count, which the journal's records carry back.
    pub fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// The journal wrote the records of offsets below `next`, recorded at
    /// `generation`: they are durable unless a truncation came since.
    pub fn journal_durable(&self, next: i64, generation: u64) {
        let mut state = self.lock();
        if state.generation == generation {
            state.through = state.through.max(next);
        }
        self.publish(&mut state);
    }

    /// The journal stopped: every wait, now and later, fails with `why`.
    pub fn journal_failed(&self, why: &str) {
        let mut state = self.lock();
        state.failed.get_or_insert_with(|| why.to_string());
        for (_, tx) in std::mem::take(&mut state.waiters) {
            let _ = tx.send(Err(NotDurable::Storage(why.to_string())));
        }
    }

    /// Everything below `through` is on disk (a replay's segments synced).
    pub fn synced(&self, through: i64) {
        let mut state = self.lock();
        state.through = state.through.max(through);
        self.publish(&mut state);
    }

    /// Offsets below this are on disk.
    pub fn through(&self) -> i64 {
        *self.durable.borrow()
    }

    /// Wakes when `through` moves.
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.durable.subscribe()
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
    /// appends waiting for it fail, and a journal round in flight no longer
    /// vouches for what it saw. Returns the new generation.
    pub fn truncated(&self, log_end: i64) -> u64 {
        let mut state = self.lock();
        state.through = state.through.min(log_end);
        state.generation += 1;
        for tx in take_waiters(&mut state.waiters, |next| next > log_end) {
            let _ = tx.send(Err(NotDurable::Truncated(log_end)));
        }
        self.publish(&mut state);
        state.generation
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

    #[test]
    fn waits_resolve_in_order_as_the_journal_reports_them() {
        let partition = GroupCommit::new(0);
        let first = partition.wait_for(2);
        let second = partition.wait_for(5);
        partition.journal_durable(3, 0);
        first.wait_blocking().unwrap();
        assert_eq!(partition.through(), 3);
        partition.journal_durable(5, 0);
        second.wait_blocking().unwrap();
        assert!(partition.wait_for(5).is_ready());
    }

    #[test]
    fn a_round_from_before_a_truncation_vouches_for_nothing() {
        let partition = GroupCommit::new(0);
        let cut = partition.wait_for(6);
        let generation = partition.generation();
        assert_eq!(partition.truncated(4), generation + 1);
        let err = cut.wait_blocking().unwrap_err();
        assert_eq!(err.code(), ResponseError::NotLeaderOrFollower.code());
        partition.journal_durable(6, generation);
        assert_eq!(partition.through(), 0);
        partition.journal_durable(4, generation + 1);
        assert_eq!(partition.through(), 4);
    }

    #[test]
    fn a_stopped_journal_fails_every_wait_now_and_later() {
        let partition = GroupCommit::new(1);
        let waiting = partition.wait_for(3);
        partition.journal_failed("disk gone");
        for wait in [waiting, partition.wait_for(2)] {
            let err = wait.wait_blocking().unwrap_err();
            assert_eq!(err.code(), ResponseError::KafkaStorageError.code());
            assert!(err.to_string().contains("disk gone"), "{err}");
        }
    }
}
