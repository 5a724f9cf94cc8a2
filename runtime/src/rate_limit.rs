//! [`LogRateLimit`]: which repeats of a failure get logged. A failure that recurs many times a
//! second (a list refused on every retry, an `accept` that fails until a file descriptor frees
//! up) is logged the first time at once, then at most once per interval per kind of failure, each
//! time with the number of its kind left unlogged since the last line. The time is tokio's, so
//! tests with paused time see the intervals pass without sleeping.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// How often one kind of repeated failure is logged by default.
pub(crate) const DEFAULT_LOG_INTERVAL: Duration = Duration::from_secs(30);

/// The rate limit of the warnings about one source of failures (a watch, a listener).
#[derive(Debug)]
pub(crate) struct LogRateLimit {
    interval: Duration,
    kinds: Mutex<HashMap<String, Kind>>,
}

/// One kind of failure: when it was last logged, and how many of it were not logged since.
#[derive(Debug)]
struct Kind {
    logged: Instant,
    suppressed: u64,
}

impl LogRateLimit {
    /// Logs each kind at most once per `interval`.
    pub(crate) fn new(interval: Duration) -> Self {
        Self {
            interval,
            kinds: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one failure of `kind`. `Some(suppressed)` when it is to be logged now, with the
    /// number of failures of its kind left unlogged since it was last logged; `None` when it is
    /// to be left unlogged (and is counted for the next line).
    pub(crate) fn admit(&self, kind: &str) -> Option<u64> {
        let now = Instant::now();
        let mut kinds = self
            .kinds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match kinds.get_mut(kind) {
            None => {
                kinds.insert(
                    kind.to_owned(),
                    Kind {
                        logged: now,
                        suppressed: 0,
                    },
                );
                Some(0)
            }
            Some(seen) if now.duration_since(seen.logged) >= self.interval => {
                let suppressed = std::mem::take(&mut seen.suppressed);
                seen.logged = now;
                Some(suppressed)
            }
            Some(seen) => {
                seen.suppressed += 1;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_first_failure_is_logged_then_one_per_interval_with_the_count_left_out() {
        let limit = LogRateLimit::new(Duration::from_secs(30));
        assert_eq!(limit.admit("list: 404"), Some(0));
        for _ in 0..5 {
            assert_eq!(limit.admit("list: 404"), None);
        }
        // Another kind is not held back by the first.
        assert_eq!(limit.admit("watch: 500"), Some(0));
        tokio::time::advance(Duration::from_secs(29)).await;
        assert_eq!(limit.admit("list: 404"), None);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(limit.admit("list: 404"), Some(6));
        assert_eq!(limit.admit("list: 404"), None);
    }
}
