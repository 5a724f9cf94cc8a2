//! Wall-clock time, injectable so that tests of time-dependent rules need no sleeping (the
//! runtime re-exports it as `kubeward::clock`; the in-process API server reads it too).
//!
//! Everything in kubeward that stamps or compares wall-clock times (a condition's
//! `lastTransitionTime`, an event's `eventTime`, series windows, lease timings) reads it through a
//! [`Clock`]. Production code uses [`SystemClock`]; tests use [`ManualClock`] and move time by hand,
//! or [`SkippingClock`] where time must flow and a test skips ahead.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::Timestamp;

/// A source of the current wall-clock time.
///
/// Implementations must be cheap and must not block: the clock is read on hot paths.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> Timestamp;
}

/// A shareable clock handle.
pub type SharedClock = Arc<dyn Clock>;

/// The system's wall clock.
///
/// ```
/// use kubeward_names::clock::{Clock, SystemClock};
/// assert!(SystemClock.now() > jiff::Timestamp::UNIX_EPOCH);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}

/// A clock that only moves when told to. Clones share the same time.
///
/// ```
/// use std::time::Duration;
/// use kubeward_names::clock::{Clock, ManualClock};
///
/// let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
/// clock.advance(Duration::from_secs(90));
/// assert_eq!(clock.now().to_string(), "2026-01-01T00:01:30Z");
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<Timestamp>>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// Moves the clock forward by `by`.
    ///
    /// # Panics
    /// If the result is past the largest representable timestamp.
    pub fn advance(&self, by: Duration) {
        let mut now = self.lock();
        *now = now
            .checked_add(by)
            .expect("ManualClock advanced past the representable range");
    }

    /// Sets the clock to `to` (which may be in the past).
    pub fn set(&self, to: Timestamp) {
        *self.lock() = to;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Timestamp> {
        // The guarded value is a plain timestamp: a panic while holding the lock cannot leave it
        // half-written, so a poisoned lock is still safe to use.
        self.now
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new(Timestamp::UNIX_EPOCH)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.lock()
    }
}

/// The system's wall clock, skipped ahead: it flows as [`SystemClock`] does, plus every
/// [`SkippingClock::skip`] so far. Clones share the skips.
///
/// For a server whose timers must run on their own (probes, back-offs) while a test jumps over
/// a long wait (a grace period, a cron schedule) without sleeping through it.
///
/// ```
/// use std::time::Duration;
/// use kubeward_names::clock::{Clock, SkippingClock, SystemClock};
///
/// let clock = SkippingClock::default();
/// clock.skip(Duration::from_secs(3600));
/// let ahead = clock.now().duration_since(SystemClock.now());
/// assert!(ahead >= jiff::SignedDuration::from_secs(3599));
/// ```
#[derive(Debug, Clone, Default)]
pub struct SkippingClock {
    skipped: Arc<Mutex<Duration>>,
}

impl SkippingClock {
    /// Moves the clock forward by `by`, at once.
    pub fn skip(&self, by: Duration) {
        let mut skipped = self
            .skipped
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *skipped = skipped.saturating_add(by);
    }

    /// How far ahead of the system's clock it stands.
    pub fn skipped(&self) -> Duration {
        *self
            .skipped
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Clock for SkippingClock {
    fn now(&self) -> Timestamp {
        let now = Timestamp::now();
        now.checked_add(self.skipped()).unwrap_or(now)
    }
}
