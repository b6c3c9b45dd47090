//! How long to wait before connecting again after a failed connect: from `initial`, doubling
//! with each failure in a row up to `max`; a connect that succeeds starts over.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
}

impl Backoff {
    /// The same wait after every failure.
    pub const fn constant(wait: Duration) -> Backoff {
        Backoff {
            initial: wait,
            max: wait,
        }
    }

    /// The wait after a failure that followed a wait of `previous` (None: the first failure).
    pub fn next(&self, previous: Option<Duration>) -> Duration {
        match previous {
            None => self.initial,
            Some(p) => (p * 2).min(self.max).max(self.initial),
        }
    }
}
