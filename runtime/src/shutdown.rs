//! The shutdown budget: one deadline, counted from the shutdown signal, that every step of a
//! graceful shutdown fits inside — so that a controller (or an operator of several) is done
//! before the kubelet's `terminationGracePeriodSeconds` (30 s by default) runs out and it is
//! killed mid-write. The controller, the operator and leader election hold a budget and bound
//! their steps by it; this module depends on none of them.
//!
//! The steps run one after another, each bounded by its own limit and by its share of the
//! budget (a step that finishes early leaves the rest to the next):
//!
//! | step | its own limit | ends at the latest, after the signal |
//! |---|---|---|
//! | in-flight passes finish | [`Controller::with_shutdown_grace`](crate::controller::Controller::with_shutdown_grace) | 50 % of the budget |
//! | abandoned passes' status writes and events land | 10 s | 70 % |
//! | repeated events' series counts are flushed | 5 s | 85 % |
//! | the Lease is released (with leader election) | the renew deadline | 100 % |
//!
//! With the default budget of [`DEFAULT_SHUTDOWN_BUDGET`] (25 s) a shutdown leaves 5 s of the
//! pod's default grace period unused. A second SIGTERM or Ctrl-C during a shutdown exits the
//! process at once (status 1), as controller-runtime's manager does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

/// The default shutdown budget: 5 s inside a pod's default `terminationGracePeriodSeconds`.
pub const DEFAULT_SHUTDOWN_BUDGET: Duration = Duration::from_secs(25);

/// A step of a graceful shutdown; see the [module](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// In-flight passes finish.
    Passes,
    /// Abandoned passes' status writes and events land.
    Settle,
    /// Event series are flushed.
    Flush,
    /// The Lease is released.
    Release,
}

impl Step {
    /// Where in the budget the step ends at the latest, in thousandths.
    fn ends_at(self) -> u32 {
        match self {
            Step::Passes => 500,
            Step::Settle => 700,
            Step::Flush => 850,
            Step::Release => 1000,
        }
    }
}

/// The budget of one shutdown, shared by everything that shuts down together (clones share it).
#[derive(Debug, Clone)]
pub(crate) struct Budget(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    total_millis: AtomicU64,
    began: OnceLock<Instant>,
}

impl Default for Budget {
    fn default() -> Self {
        Self::new(DEFAULT_SHUTDOWN_BUDGET)
    }
}

impl Budget {
    /// A budget of `total`, not started.
    pub(crate) fn new(total: Duration) -> Self {
        Self(Arc::new(Inner {
            total_millis: AtomicU64::new(millis(total)),
            began: OnceLock::new(),
        }))
    }

    /// Sets the total (before the shutdown begins).
    pub(crate) fn set_total(&self, total: Duration) {
        self.0.total_millis.store(millis(total), Ordering::Relaxed);
    }

    /// The shutdown begins now (if it has not already).
    pub(crate) fn begin(&self) {
        self.0.began.get_or_init(Instant::now);
    }

    /// How long `step` may take from now: its own limit `own`, cut to the step's end in the
    /// budget once a shutdown has begun (zero once that end has passed).
    pub(crate) fn bound(&self, step: Step, own: Duration) -> Duration {
        let Some(began) = self.0.began.get() else {
            return own;
        };
        let total = Duration::from_millis(self.0.total_millis.load(Ordering::Relaxed));
        let end = *began + total * step.ends_at() / 1000;
        own.min(end.saturating_duration_since(Instant::now()))
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn each_step_ends_by_its_share_of_the_budget_once_a_shutdown_began() {
        let budget = Budget::new(Duration::from_secs(20));
        let grace = Duration::from_secs(60);
        assert_eq!(budget.bound(Step::Passes, grace), grace, "no shutdown yet");
        budget.begin();
        assert_eq!(budget.bound(Step::Passes, grace), Duration::from_secs(10));
        assert_eq!(
            budget.bound(Step::Passes, Duration::from_secs(3)),
            Duration::from_secs(3),
            "a shorter limit of its own holds"
        );
        tokio::time::advance(Duration::from_secs(12)).await;
        assert_eq!(budget.bound(Step::Passes, grace), Duration::ZERO);
        assert_eq!(budget.bound(Step::Settle, grace), Duration::from_secs(2));
        assert_eq!(budget.bound(Step::Release, grace), Duration::from_secs(8));
        budget.begin();
        assert_eq!(
            budget.bound(Step::Release, grace),
            Duration::from_secs(8),
            "it begins once"
        );
    }
}
