//! A pass's effects as one unit that outlives the pass: its status write and the publishing of
//! the events that write makes durable (and of its failure event).
//!
//! A pass can be dropped at any await: leadership is lost and in-flight passes are abandoned, or
//! a shutdown's grace runs out. Dropped between its status write and its events, it would leave
//! a persisted transition without its event (the write may have committed although its answer
//! never arrived: kube's client sleeps between retries of a write answered 504). So the pass runs
//! its effects in a spawned task ([`Effects::spawn`]) and awaits it; dropping the pass does not
//! abort the task. Each unit is bounded as its parts are: the publishing by the recorder's
//! timeout, the write (and the read-back of one in doubt) by the status write timeout. Shutdown waits for the units still
//! running ([`Effects::settled`], at most [`SETTLE_TIMEOUT`]) before it flushes event series.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long a shutdown waits for the effects of abandoned passes before it flushes event series
/// and returns anyway.
pub(super) const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

/// The effect units of one controller that are still running.
pub(super) struct Effects {
    in_flight: watch::Sender<usize>,
}

impl Default for Effects {
    fn default() -> Self {
        Self {
            in_flight: watch::Sender::new(0),
        }
    }
}

impl Effects {
    /// Runs `unit` in a task of its own, counted until it ends (or panics); the handle may be
    /// dropped without aborting it.
    ///
    /// The unit is boxed first: a pass's effects are a future of several kilobytes, and a task
    /// holding it by value is copied whole at each move of the spawn and again when its output
    /// is read (most of a no-op pass's instructions were these copies).
    pub(super) fn spawn<T: Send + 'static>(
        &self,
        unit: impl Future<Output = T> + Send + 'static,
    ) -> JoinHandle<T> {
        self.in_flight.send_modify(|n| *n += 1);
        let running = Running(self.in_flight.clone());
        let unit = Box::pin(unit);
        tokio::spawn(async move {
            let _running = running;
            unit.await
        })
    }

    /// Waits until no unit runs, at most `timeout`: whether they all ended.
    pub(super) async fn settled(&self, timeout: Duration) -> bool {
        let mut in_flight = self.in_flight.subscribe();
        tokio::time::timeout(timeout, in_flight.wait_for(|n| *n == 0))
            .await
            .is_ok()
    }
}

/// Uncounts a unit when its task ends, however it ends.
struct Running(watch::Sender<usize>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_unit_runs_on_when_its_handle_is_dropped_and_is_waited_for() {
        let effects = Effects::default();
        let (tx, rx) = tokio::sync::oneshot::channel();
        drop(effects.spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let _ = tx.send("done");
        }));
        assert!(effects.settled(Duration::from_secs(5)).await);
        assert_eq!(rx.await, Ok("done"));
    }

    #[tokio::test(start_paused = true)]
    async fn settling_gives_up_on_a_unit_that_hangs() {
        let effects = Effects::default();
        let _hung = effects.spawn(futures::future::pending::<()>());
        assert!(!effects.settled(Duration::from_secs(5)).await);
        drop(effects.spawn(async { panic!("a unit that panics is uncounted") }));
        _hung.abort();
        assert!(effects.settled(Duration::from_secs(5)).await);
    }
}
