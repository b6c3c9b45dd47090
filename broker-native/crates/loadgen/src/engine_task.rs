//! What a producer and a consumer have in common: an engine running on its own tokio task, state
//! shared with the handle (counters, the stop flag), and a handle that polls, stops and aborts it.

use crate::stats::{IntervalStats, SharedStats};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;

/// State shared by an engine task and its handle.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub stats: SharedStats,
    pub stopping: AtomicBool,
    pub stop: Notify,
}

/// A running engine task; dropping it aborts the task.
#[derive(Debug)]
pub(crate) struct EngineTask {
    shared: Arc<Shared>,
    done: watch::Receiver<bool>,
    task: JoinHandle<()>,
}

impl EngineTask {
    /// Runs `engine` on the current tokio runtime; `shared` is the state it was built with.
    pub fn spawn(
        shared: Arc<Shared>,
        engine: impl Future<Output = ()> + Send + 'static,
    ) -> EngineTask {
        let (done_tx, done) = watch::channel(false);
        shared.stats.start_busy_clock();
        let timed = Timed {
            engine: Box::pin(engine),
            shared: shared.clone(),
        };
        let task = tokio::spawn(async move {
            timed.await;
            let _ = done_tx.send(true);
        });
        EngineTask { shared, done, task }
    }

    pub fn take_interval(&self) -> IntervalStats {
        self.shared.stats.take_interval()
    }

    pub fn last_error(&self) -> Option<String> {
        self.shared.stats.last_error()
    }

    pub fn is_finished(&self) -> bool {
        *self.done.borrow()
    }

    /// Resolves once the engine has ended (its work done, or stopped).
    pub async fn finished(&self) {
        let mut done = self.done.clone();
        let _ = done.wait_for(|d| *d).await;
    }

    /// Asks the engine to stop and waits until it has. Idempotent.
    pub async fn stop(&self) {
        self.shared.stopping.store(true, Ordering::Release);
        self.shared.stop.notify_one();
        self.finished().await;
    }
}

impl Drop for EngineTask {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// An engine future whose time in each poll counts as its task's busy time: the share of an
/// interval it ran, as a JavaScript thread's event-loop utilization is (two clock reads a poll).
struct Timed<F> {
    engine: std::pin::Pin<Box<F>>,
    shared: Arc<Shared>,
}

impl<F: Future<Output = ()>> Future for Timed<F> {
    type Output = ();

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        let started = std::time::Instant::now();
        let polled = self.engine.as_mut().poll(cx);
        self.shared.stats.add_busy(started.elapsed());
        polled
    }
}
