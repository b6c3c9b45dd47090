//! A partition's three offsets, as Apache Kafka's `UnifiedLog` keeps them:
//! the log start offset (retention moves it forward), the log end offset
//! (LEO, the next batch's offset) and the high watermark (below it batches
//! are committed and served to consumers), with the watches that wake
//! long-polling fetches, followers and acks=all waiters. While the
//! partition is not replicated the high watermark is the log end offset.
//! There is no last stable offset: the broker has no transactions, so
//! consumers read up to the high watermark.

use crate::error::{Error, Result};
use kafka_protocol::ResponseError;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use tokio::sync::watch;

#[derive(Debug)]
pub(super) struct Offsets {
    /// First offset still in the log.
    log_start: AtomicI64,
    /// Watched by followers and acks=all waiters (and by fetches while the
    /// partition is not replicated, when it is also the high watermark).
    log_end: watch::Sender<i64>,
    /// The high watermark while replicated, watched by fetches.
    high_watermark: watch::Sender<i64>,
    replicated: AtomicBool,
}

/// The offsets a read reports, taken once (high watermark first).
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadBounds {
    pub high_watermark: i64,
    pub log_end: i64,
    pub log_start: i64,
}

impl Offsets {
    /// A partition opened with batches in [`log_start`, `log_end`), not
    /// replicated.
    pub fn new(log_start: i64, log_end: i64) -> Offsets {
        Offsets {
            log_start: AtomicI64::new(log_start),
            log_end: watch::Sender::new(log_end),
            high_watermark: watch::Sender::new(log_end),
            replicated: AtomicBool::new(false),
        }
    }

    pub fn log_start(&self) -> i64 {
        self.log_start.load(Ordering::Acquire)
    }

    pub fn log_end(&self) -> i64 {
        *self.log_end.borrow()
    }

    pub fn high_watermark(&self) -> i64 {
        if self.is_replicated() {
            *self.high_watermark.borrow()
        } else {
            self.log_end()
        }
    }

    pub fn is_replicated(&self) -> bool {
        self.replicated.load(Ordering::Acquire)
    }

    /// Changes whenever the high watermark moves.
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        if self.is_replicated() {
            self.high_watermark.subscribe()
        } else {
            self.log_end.subscribe()
        }
    }

    /// Changes on every append and truncation.
    pub fn subscribe_log_end(&self) -> watch::Receiver<i64> {
        self.log_end.subscribe()
    }

    /// The bounds a read at `offset` reports; OFFSET_OUT_OF_RANGE when
    /// `offset` is outside [log start, log end].
    pub fn bounds_for_read(&self, offset: i64) -> Result<ReadBounds> {
        let bounds = ReadBounds {
            high_watermark: self.high_watermark(),
            log_end: self.log_end(),
            log_start: self.log_start(),
        };
        if offset < bounds.log_start || offset > bounds.log_end {
            return Err(Error::kafka(
                ResponseError::OffsetOutOfRange,
                format!(
                    "offset {offset} outside [{}, {}]",
                    bounds.log_start, bounds.log_end
                ),
            ));
        }
        Ok(bounds)
    }

    /// Turning replication on keeps the high watermark where it is (the
    /// log end offset); off, the log end offset is the high watermark
    /// again and fetches waiting on the old watch wake. Callers hold the
    /// append lock.
    pub fn set_replicated(&self, replicated: bool) {
        if self.is_replicated() == replicated {
            return;
        }
        if replicated {
            self.high_watermark.send_replace(self.log_end());
            self.replicated.store(true, Ordering::Release);
        } else {
            self.replicated.store(false, Ordering::Release);
            self.high_watermark.send_replace(self.log_end());
        }
    }

    /// Moves a replicated partition's high watermark forward to `hw`,
    /// clamped to [log start, log end]; a lower value, or any while not
    /// replicated, is ignored.
    pub fn advance_high_watermark(&self, hw: i64) {
        if !self.is_replicated() {
            return;
        }
        self.high_watermark.send_if_modified(|current| {
            // Read inside the watch's lock, after any truncation that
            // lowered the log end (truncation lowers this value after).
            let log_end = self.log_end();
            let hw = hw.clamp(self.log_start().min(log_end), log_end);
            if hw > *current {
                *current = hw;
                true
            } else {
                false
            }
        });
    }

    /// Batches up to `next` are written. Callers hold the append lock.
    pub fn appended(&self, next: i64) {
        self.log_end.send_replace(next);
    }

    /// Retention removed every segment below `first`.
    pub fn advance_log_start(&self, first: i64) {
        self.log_start.fetch_max(first, Ordering::AcqRel);
    }

    /// The log was cut at `log_end`: the log end offset drops to it, and
    /// the high watermark too when above. Callers hold the append lock.
    pub fn truncated(&self, log_end: i64) {
        self.log_end.send_replace(log_end);
        self.high_watermark.send_if_modified(|hw| {
            if *hw > log_end {
                *hw = log_end;
                true
            } else {
                false
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_high_watermark_is_the_log_end_until_replicated() {
        let offsets = Offsets::new(0, 5);
        offsets.appended(8);
        assert_eq!(offsets.high_watermark(), 8);
        offsets.advance_high_watermark(3);
        assert_eq!(offsets.high_watermark(), 8);
        offsets.set_replicated(true);
        offsets.appended(10);
        assert_eq!(offsets.high_watermark(), 8);
        offsets.advance_high_watermark(9);
        assert_eq!(offsets.high_watermark(), 9);
    }

    #[test]
    fn the_high_watermark_only_moves_forward_and_stays_within_the_log() {
        let offsets = Offsets::new(4, 10);
        offsets.set_replicated(true);
        offsets.truncated(6);
        assert_eq!((offsets.log_end(), offsets.high_watermark()), (6, 6));
        offsets.appended(12);
        offsets.advance_high_watermark(8);
        offsets.advance_high_watermark(7);
        assert_eq!(offsets.high_watermark(), 8);
        offsets.advance_high_watermark(99);
        assert_eq!(offsets.high_watermark(), 12);
    }

    #[test]
    fn a_read_outside_the_log_is_offset_out_of_range() {
        let offsets = Offsets::new(2, 6);
        assert!(offsets.bounds_for_read(2).is_ok());
        assert!(offsets.bounds_for_read(6).is_ok());
        for offset in [1, 7] {
            let err = offsets.bounds_for_read(offset).unwrap_err();
            assert_eq!(err.code(), ResponseError::OffsetOutOfRange.code());
        }
        offsets.advance_log_start(1);
        assert_eq!(offsets.log_start(), 2);
    }
}
