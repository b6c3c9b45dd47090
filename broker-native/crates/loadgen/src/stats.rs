//! Counters shared between the I/O tasks and the poller. The I/O path adds with atomics and
//! records latencies under a mutex held per response; `take_interval` only swaps.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::histogram::{Histogram, HistogramSnapshot};

/// What happened since the previous `take_interval`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct IntervalStats {
    pub records: u64,
    pub value_bytes: u64,
    pub wire_bytes: u64,
    pub errors: u64,
    /// Records put back to be sent again (a failed request, a lost connection, a retriable error).
    pub retries: u64,
    pub latency: HistogramSnapshot,
}

impl IntervalStats {
    /// Adds another client's interval in (exactly: the latency buckets add up).
    pub fn merge(&mut self, other: &IntervalStats) {
        self.records += other.records;
        self.value_bytes += other.value_bytes;
        self.wire_bytes += other.wire_bytes;
        self.errors += other.errors;
        self.retries += other.retries;
        self.latency.merge(&other.latency);
    }
}

#[derive(Debug, Default)]
pub struct SharedStats {
    records: AtomicU64,
    value_bytes: AtomicU64,
    wire_bytes: AtomicU64,
    errors: AtomicU64,
    retries: AtomicU64,
    latency: Mutex<Histogram>,
    last_error: Mutex<Option<String>>,
}

impl SharedStats {
    pub fn add_records(&self, records: u64, value_bytes: u64) {
        self.records.fetch_add(records, Ordering::Relaxed);
        self.value_bytes.fetch_add(value_bytes, Ordering::Relaxed);
    }

    pub fn add_wire_bytes(&self, bytes: u64) {
        self.wire_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts records put back to be sent again.
    pub fn add_retries(&self, records: u64) {
        self.retries.fetch_add(records, Ordering::Relaxed);
    }

    /// Counts an error and keeps its message as the last error.
    pub fn error(&self, message: impl Into<String>) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        *lock(&self.last_error) = Some(message.into());
    }

    pub fn last_error(&self) -> Option<String> {
        lock(&self.last_error).clone()
    }

    /// Runs `f` on the shared histogram; call once per response, not per record.
    pub fn with_latency<R>(&self, f: impl FnOnce(&mut Histogram) -> R) -> R {
        f(&mut lock(&self.latency))
    }

    /// The counts since the previous call, which are reset.
    pub fn take_interval(&self) -> IntervalStats {
        let histogram = std::mem::take(&mut *lock(&self.latency));
        IntervalStats {
            records: self.records.swap(0, Ordering::Relaxed),
            value_bytes: self.value_bytes.swap(0, Ordering::Relaxed),
            wire_bytes: self.wire_bytes.swap(0, Ordering::Relaxed),
            errors: self.errors.swap(0, Ordering::Relaxed),
            retries: self.retries.swap(0, Ordering::Relaxed),
            latency: histogram.snapshot(),
        }
    }
}

/// A poisoned stats mutex only means a panicking task; the counts are still usable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
