//! Steps: [`step`], [`try_step`], [`step_sync`] and [`try_step_sync`] time a named part of the
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
    let timer = StepTimer::start(name);
    let output = future.instrument(step_span(name)).await;
    timer.finish(Outcome::Completed);
    output
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
    let timer = StepTimer::start(name);
    let output = future.instrument(step_span(name)).await;
    timer.finish(if output.is_ok() {
        Outcome::Completed
    } else {
        Outcome::Failed
    });
    output
}

/// Runs the synchronous `body` as the step `name` of the current pass.
pub fn step_sync<R>(name: StepName, body: impl FnOnce() -> R) -> R {
    let timer = StepTimer::start(name);
    let output = step_span(name).in_scope(body);
    timer.finish(Outcome::Completed);
    output
}

/// Runs the synchronous `body` as the step `name` of the current pass; the step fails when it
/// returns `Err`.
pub fn try_step_sync<T, E>(name: StepName, body: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    let timer = StepTimer::start(name);
    let output = step_span(name).in_scope(body);
    timer.finish(if output.is_ok() {
        Outcome::Completed
    } else {
        Outcome::Failed
    });
    output
}

/// The tracing span of a step, inside the pass's `reconcile` span (which names the controller,
/// object and phase).
fn step_span(name: StepName) -> tracing::Span {
    tracing::debug_span!("step", step = name.as_str())
}
