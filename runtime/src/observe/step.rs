//! Steps: [`step`], [`try_step`], [`step_with`] and their `_sync` forms time a named part of the
//! current pass and report it; outside a pass they only run it.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use tracing::Instrument;

use super::guard::{CURRENT_PASS, PassScope};
use super::{Outcome, ReconcileObserver, StepName, StepRecord};

/// Times one step; records [`Outcome::Abandoned`] (or [`Outcome::Failed`] while panicking) if
/// dropped before [`StepTimer::finish`]. Inert outside a pass.
struct StepTimer {
    scope: Option<Arc<PassScope>>,
    step: StepName,
    started: Instant,
}

impl StepTimer {
    fn start(step: StepName) -> Self {
        Self {
            scope: CURRENT_PASS.try_with(Arc::clone).ok(),
            step,
            started: Instant::now(),
        }
    }

    fn finish(mut self, outcome: Outcome) {
        self.record(outcome);
    }

    fn record(&mut self, outcome: Outcome) {
        if let Some(scope) = self.scope.take() {
            scope.observers.step_finished(&StepRecord {
                controller: scope.controller.clone(),
                object: scope.object.clone(),
                phase: scope.phase,
                step: self.step,
                outcome,
                duration: self.started.elapsed(),
            });
        }
    }
}

impl Drop for StepTimer {
    fn drop(&mut self) {
        let outcome = if std::thread::panicking() {
            Outcome::Failed
        } else {
            Outcome::Abandoned
        };
        self.record(outcome);
    }
}

/// Runs `future` as the step `name` of the current pass; the step completes when the future
/// does. Outside a pass, just runs the future.
pub async fn step<F: Future>(name: StepName, future: F) -> F::Output {
    step_with(name, future, |_| false).await
}

/// Runs `future` as the step `name` of the current pass; the step fails when the future returns
/// `Err`. Outside a pass, just runs the future.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use kubeward::observe::{try_step, StepName};
/// let parsed: Result<u8, _> = try_step(StepName::from_static("parse"), async { "7".parse::<u8>() }).await;
/// assert_eq!(parsed, Ok(7));
/// # }
/// ```
pub async fn try_step<T, E, F>(name: StepName, future: F) -> Result<T, E>
where
    F: Future<Output = Result<T, E>>,
{
    step_with(name, future, Result::is_err).await
}

/// Runs `future` as the step `name` of the current pass; the step fails when `failed` says so of
/// its output (an `Err`, an error status inside an `Ok`), else it completes. Outside a pass, just
/// runs the future.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use kubeward::observe::{step_with, StepName};
/// let code = step_with(StepName::from_static("hook"), async { 2 }, |code| *code != 0).await;
/// assert_eq!(code, 2);
/// # }
/// ```
pub async fn step_with<F: Future>(
    name: StepName,
    future: F,
    failed: impl FnOnce(&F::Output) -> bool,
) -> F::Output {
    let timer = StepTimer::start(name);
    let output = future.instrument(step_span(name)).await;
    timer.finish(outcome(failed(&output)));
    output
}

/// Runs the synchronous `body` as the step `name` of the current pass.
pub fn step_sync<R>(name: StepName, body: impl FnOnce() -> R) -> R {
    step_sync_with(name, body, |_| false)
}

/// Runs the synchronous `body` as the step `name` of the current pass; the step fails when it
/// returns `Err`.
pub fn try_step_sync<T, E>(name: StepName, body: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    step_sync_with(name, body, Result::is_err)
}

/// Runs the synchronous `body` as the step `name` of the current pass; the step fails when
/// `failed` says so of its output, else it completes.
pub fn step_sync_with<R>(
    name: StepName,
    body: impl FnOnce() -> R,
    failed: impl FnOnce(&R) -> bool,
) -> R {
    let timer = StepTimer::start(name);
    let output = step_span(name).in_scope(body);
    timer.finish(outcome(failed(&output)));
    output
}

fn outcome(failed: bool) -> Outcome {
    if failed {
        Outcome::Failed
    } else {
        Outcome::Completed
    }
}

/// The tracing span of a step, inside the pass's `reconcile` span (which names the controller,
/// object and phase).
fn step_span(name: StepName) -> tracing::Span {
    tracing::debug_span!("step", step = name.as_str())
}
