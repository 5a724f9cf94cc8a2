//! [`PassGuard`]: times one pass and makes it the current pass (a task-local) for the steps
//! inside it; a pass dropped unfinished is recorded as abandoned.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use super::{
    FailureReason, ObjectRef, Observers, Outcome, PassRecord, PassStarted, Phase, ReconcileId,
    ReconcileObserver,
};

/// What a pass's steps need to know to report: set by [`PassGuard::run`] as a task-local.
#[derive(Debug)]
pub(super) struct PassScope {
    pub(super) controller: Arc<str>,
    pub(super) object: Arc<ObjectRef>,
    pub(super) phase: Phase,
    pub(super) observers: Observers,
}

tokio::task_local! {
    pub(super) static CURRENT_PASS: Arc<PassScope>;
}

/// Records one pass. Finish it with [`PassGuard::finish`]; dropped unfinished, it records the
/// pass as [`Outcome::Abandoned`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use std::sync::{Arc, Mutex};
/// use kubeward::observe::*;
///
/// #[derive(Default)]
/// struct Log(Mutex<Vec<String>>);
/// impl ReconcileObserver for Log {
///     fn pass_finished(&self, r: &PassRecord) { self.0.lock().unwrap().push(format!("pass {}", r.outcome)); }
///     fn step_finished(&self, r: &StepRecord) { self.0.lock().unwrap().push(format!("step {} {}", r.step, r.outcome)); }
/// }
///
/// let log = Arc::new(Log::default());
/// let object = ObjectRef { api_version: "v1".into(), kind: "ConfigMap".into(),
///                          namespace: Some("demo".into()), name: "web".into(), uid: None };
/// let pass = PassGuard::start("demo.kubeward.dev/web".into(), object.into(), Phase::Apply,
///                             Observers::new(vec![log.clone()]));
/// const RENDER: StepName = StepName::from_static("render");
/// let rendered = pass.run(step(RENDER, async { 42 })).await;
/// assert_eq!(rendered, 42);
/// pass.finish(Outcome::Completed);
/// assert_eq!(*log.0.lock().unwrap(), ["step render completed", "pass completed"]);
/// # }
/// ```
#[derive(Debug)]
pub struct PassGuard {
    pub(super) scope: Arc<PassScope>,
    reconcile_id: ReconcileId,
    started: Instant,
    finished: bool,
}

impl PassGuard {
    /// Starts timing a pass of `controller` over `object` in `phase`, with a new
    /// [`ReconcileId`], and tells the observers it started.
    pub fn start(
        controller: Arc<str>,
        object: Arc<ObjectRef>,
        phase: Phase,
        observers: Observers,
    ) -> Self {
        let reconcile_id = ReconcileId::random();
        observers.pass_started(&PassStarted {
            controller: controller.clone(),
            object: object.clone(),
            phase,
            reconcile_id,
        });
        Self {
            scope: Arc::new(PassScope {
                controller,
                object,
                phase,
                observers,
            }),
            reconcile_id,
            started: Instant::now(),
            finished: false,
        }
    }

    /// The pass's reconcile id.
    pub fn reconcile_id(&self) -> ReconcileId {
        self.reconcile_id
    }

    /// Runs `future` as (part of) this pass: steps inside it report into the pass.
    pub fn run<F: Future>(&self, future: F) -> impl Future<Output = F::Output> {
        CURRENT_PASS.scope(self.scope.clone(), future)
    }

    /// The phase of the pass.
    pub fn phase(&self) -> Phase {
        self.scope.phase
    }

    /// The object of the pass.
    pub fn object(&self) -> &Arc<ObjectRef> {
        &self.scope.object
    }

    /// Records the pass as ended with `outcome`; a [`Outcome::Failed`] one as failed for
    /// [`FailureReason::Error`] (use [`PassGuard::fail`] to say why).
    pub fn finish(mut self, outcome: Outcome) {
        let failure = (outcome == Outcome::Failed).then_some(FailureReason::Error);
        self.record(outcome, failure);
    }

    /// Records the pass as [failed](Outcome::Failed) for `reason`.
    pub fn fail(mut self, reason: FailureReason) {
        self.record(Outcome::Failed, Some(reason));
    }

    fn record(&mut self, outcome: Outcome, failure: Option<FailureReason>) {
        self.finished = true;
        let scope = &self.scope;
        scope.observers.pass_finished(&PassRecord {
            controller: scope.controller.clone(),
            object: scope.object.clone(),
            phase: scope.phase,
            outcome,
            failure,
            duration: self.started.elapsed(),
            reconcile_id: self.reconcile_id,
        });
    }
}

impl Drop for PassGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.record(Outcome::Abandoned, None);
        }
    }
}

/// Whether the caller runs inside a pass (so steps would be recorded).
pub fn in_pass() -> bool {
    CURRENT_PASS.try_with(|_| ()).is_ok()
}
