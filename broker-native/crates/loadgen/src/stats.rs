//! Counters shared between the I/O tasks and the poller. The I/O path adds with atomics and
//! records latencies under a mutex held per response; `take_interval` only swaps.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::histogram::{Histogram, HistogramSnapshot};

/// What happened since the previous `take_interval`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct IntervalStats {
    pub records: u64,
    pub value_bytes: u64,
    pub wire_bytes: u64,
    pub errors: u64,
    /// What the errors said: each distinct message with its count, most frequent first, at most
    /// [`MAX_ERROR_MESSAGES`] of them (the rest are counted under [`OTHER_ERRORS`]).
    pub error_messages: Vec<(String, u64)>,
    /// Records put back to be sent again (a failed request, a lost connection, a retriable error).
    pub retries: u64,
    pub latency: HistogramSnapshot,
    /// The share of the interval (0..1) the client's engine task spent running rather than
    /// waiting: near 1, the client, not the target, set the pace. None before it ran.
    pub busy: Option<f64>,
}

impl IntervalStats {
    /// Adds another client's interval in (exactly: the latency buckets add up).
    pub fn merge(&mut self, other: &IntervalStats) {
        self.records += other.records;
        self.value_bytes += other.value_bytes;
        self.wire_bytes += other.wire_bytes;
        self.errors += other.errors;
        for (message, count) in &other.error_messages {
            tally(&mut self.error_messages, message, *count);
        }
        self.retries += other.retries;
        self.latency.merge(&other.latency);
        // The busiest client's share, as for threads.
        self.busy = match (self.busy, other.busy) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
}

/// The most distinct error messages an interval keeps; a run that fails in many ways names the
/// first ones and counts the rest, so a stream of unique messages cannot grow memory.
pub const MAX_ERROR_MESSAGES: usize = 16;
/// Where the errors past [`MAX_ERROR_MESSAGES`] distinct messages are counted.
pub const OTHER_ERRORS: &str = "(other error messages)";
/// Messages longer than this are cut (a broker's error text is the server's to choose).
const MAX_ERROR_MESSAGE_BYTES: usize = 300;

/// Adds `count` errors saying `message` to a bounded tally, kept most frequent first.
fn tally(messages: &mut Vec<(String, u64)>, message: &str, count: u64) {
    let message = cut(message);
    let at = match messages.iter().position(|(m, _)| m == message) {
        Some(at) => at,
        None if messages.len() < MAX_ERROR_MESSAGES || message == OTHER_ERRORS => {
            messages.push((message.to_string(), 0));
            messages.len() - 1
        }
        None => return tally(messages, OTHER_ERRORS, count),
    };
    messages[at].1 += count;
    messages.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
}

/// The message up to [`MAX_ERROR_MESSAGE_BYTES`], cut on a character boundary.
fn cut(message: &str) -> &str {
    if message.len() <= MAX_ERROR_MESSAGE_BYTES {
        return message;
    }
    let mut end = MAX_ERROR_MESSAGE_BYTES;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
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
    error_messages: Mutex<Vec<(String, u64)>>,
    /// Nanoseconds the engine task spent in its polls since the last take.
    busy_nanos: AtomicU64,
    /// When the busy time was last taken (or the task started); None before it started.
    busy_since: Mutex<Option<Instant>>,
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

    /// Counts an error, tallies its message for the interval and keeps it as the last error.
    pub fn error(&self, message: impl Into<String>) {
        let message = message.into();
        self.errors.fetch_add(1, Ordering::Relaxed);
        tally(&mut lock(&self.error_messages), &message, 1);
        *lock(&self.last_error) = Some(message);
    }

    pub fn last_error(&self) -> Option<String> {
        lock(&self.last_error).clone()
    }

    /// Runs `f` on the shared histogram; call once per response, not per record.
    pub fn with_latency<R>(&self, f: impl FnOnce(&mut Histogram) -> R) -> R {
        f(&mut lock(&self.latency))
    }

    /// Runs `f` on the shared histogram and adds the records and value bytes it returns, under
    /// the histogram's lock, which `take_interval` takes them under too: an interval never has
    /// a response's latencies without its records, or the other way round (a native run's
    /// publish latency count once missed 888 of its measured records).
    pub fn add_measured(&self, f: impl FnOnce(&mut Histogram) -> (u64, u64)) {
        let mut histogram = lock(&self.latency);
        let (records, value_bytes) = f(&mut histogram);
        self.add_records(records, value_bytes);
    }

    /// The engine task starts: its busy share counts from now.
    pub fn start_busy_clock(&self) {
        *lock(&self.busy_since) = Some(Instant::now());
    }

    /// Adds time the engine task spent running (in one poll).
    pub fn add_busy(&self, spent: Duration) {
        self.busy_nanos
            .fetch_add(spent.as_nanos() as u64, Ordering::Relaxed);
    }

    /// The busy share since the last call (None before the task started or when no time passed).
    fn take_busy(&self) -> Option<f64> {
        let now = Instant::now();
        let since = lock(&self.busy_since).replace(now)?;
        let elapsed = now.duration_since(since).as_nanos() as f64;
        let busy = self.busy_nanos.swap(0, Ordering::Relaxed) as f64;
        (elapsed > 0.0).then(|| (busy / elapsed).min(1.0))
    }

    /// The counts since the previous call, which are reset.
    pub fn take_interval(&self) -> IntervalStats {
        let (histogram, records, value_bytes) = {
            let mut histogram = lock(&self.latency);
            (
                std::mem::take(&mut *histogram),
                self.records.swap(0, Ordering::Relaxed),
                self.value_bytes.swap(0, Ordering::Relaxed),
            )
        };
        IntervalStats {
            records,
            value_bytes,
            wire_bytes: self.wire_bytes.swap(0, Ordering::Relaxed),
            errors: self.errors.swap(0, Ordering::Relaxed),
            error_messages: std::mem::take(&mut *lock(&self.error_messages)),
            retries: self.retries.swap(0, Ordering::Relaxed),
            latency: histogram.snapshot(),
            busy: self.take_busy(),
        }
    }
}

/// A poisoned stats mutex only means a panicking task; the counts are still usable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_tallies_its_error_messages_most_frequent_first() {
        let stats = SharedStats::default();
        stats.error("produce: Kafka error code 6, retrying");
        stats.error("connection refused");
        stats.error("produce: Kafka error code 6, retrying");
        let interval = stats.take_interval();
        assert_eq!(interval.errors, 3);
        assert_eq!(
            interval.error_messages,
            vec![
                ("produce: Kafka error code 6, retrying".to_string(), 2),
                ("connection refused".to_string(), 1)
            ]
        );
        assert!(stats.take_interval().error_messages.is_empty());
    }

    #[test]
    fn the_busy_share_is_the_time_polled_over_the_time_since_the_last_take() {
        let stats = SharedStats::default();
        assert_eq!(stats.take_interval().busy, None, "not started");
        stats.start_busy_clock();
        std::thread::sleep(Duration::from_millis(20));
        stats.add_busy(Duration::from_millis(5));
        let busy = stats.take_interval().busy.unwrap();
        assert!(busy > 0.0 && busy <= 0.25, "{busy}");
        // Never more than the whole interval.
        stats.add_busy(Duration::from_secs(3600));
        assert_eq!(stats.take_interval().busy, Some(1.0));
    }

    #[test]
    fn an_interval_holds_the_latencies_of_exactly_its_records() {
        let stats = std::sync::Arc::new(SharedStats::default());
        let adder = stats.clone();
        let adding = std::thread::spawn(move || {
            for _ in 0..200_000 {
                adder.add_measured(|h| {
                    h.record(5.0);
                    (1, 100)
                });
            }
        });
        let (mut records, mut intervals) = (0, 0);
        while !adding.is_finished() || records < 200_000 {
            let interval = stats.take_interval();
            assert_eq!(
                interval.latency.count, interval.records,
                "a take split a response"
            );
            records += interval.records;
            intervals += 1;
        }
        adding.join().unwrap();
        assert_eq!(records, 200_000);
        assert!(intervals > 1, "{intervals}");
    }

    #[test]
    fn distinct_messages_past_the_bound_are_counted_together() {
        let stats = SharedStats::default();
        for i in 0..1000 {
            stats.error(format!("error number {i}"));
        }
        stats.error("x".repeat(10_000));
        let interval = stats.take_interval();
        assert_eq!(interval.error_messages.len(), MAX_ERROR_MESSAGES + 1);
        let total: u64 = interval.error_messages.iter().map(|(_, n)| n).sum();
        assert_eq!(total, interval.errors);
        assert_eq!(
            interval.error_messages[0],
            (OTHER_ERRORS.to_string(), 1001 - MAX_ERROR_MESSAGES as u64)
        );
    }

    #[test]
    fn merging_intervals_adds_the_counts_of_equal_messages() {
        let mut a = IntervalStats {
            errors: 2,
            error_messages: vec![("a".into(), 2)],
            ..Default::default()
        };
        let b = IntervalStats {
            errors: 3,
            error_messages: vec![("b".into(), 2), ("a".into(), 1)],
            ..Default::default()
        };
        a.merge(&b);
        assert_eq!(a.errors, 5);
        assert_eq!(
            a.error_messages,
            vec![("a".to_string(), 3), ("b".to_string(), 2)]
        );
    }

    #[test]
    fn a_long_message_is_cut_on_a_character_boundary() {
        let long = "é".repeat(400);
        assert!(cut(&long).len() <= MAX_ERROR_MESSAGE_BYTES);
        assert!(long.starts_with(cut(&long)));
    }
}
