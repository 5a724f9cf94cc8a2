//! Observation of reconcile passes and steps: phases, outcomes, durations, reported to
//! [`ReconcileObserver`]s.
//!
//! The controller runtime opens a [`PassGuard`] for every pass and runs the pass inside it. Code
//! anywhere inside the pass — the reconciler, a helper three calls deep — times a named step with
//! [`step`] / [`try_step`] (or `#[step("name")]`, which expands to them); outside a pass they do
//! nothing but run the step. A pass or step whose future is dropped before it finished is reported
//! as [`Outcome::Abandoned`], so a shutdown or a lost lease never loses a record.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kube::Resource;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use tracing::Instrument;

use crate::names::{InvalidName, NameKind};

/// The stage of an object's life a pass works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    /// The finalizer is being added; no apply runs in the same pass.
    Init,
    /// The object exists and is not being deleted: converge it.
    Apply,
    /// The object is being deleted: release what it owns.
    Cleanup,
    /// Cleanup completed: the finalizer is being removed.
    Delete,
}

impl Phase {
    /// Every phase, in lifecycle order.
    pub const ALL: [Phase; 4] = [Phase::Init, Phase::Apply, Phase::Cleanup, Phase::Delete];

    /// The phase as a metric label value and log field.
    pub const fn as_str(self) -> &'static str {
        match self {
            Phase::Init => "init",
            Phase::Apply => "apply",
            Phase::Cleanup => "cleanup",
            Phase::Delete => "delete",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a pass or step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// Converged: the pass returned `Ok` and waits for the next change.
    Completed,
    /// Not converged yet: the pass returned `Ok` and asked to be requeued.
    Waiting,
    /// The reconciler chose not to act (for example, the object is suspended).
    Skipped,
    /// The pass or step returned an error (including failures to add or remove the finalizer).
    Failed,
    /// The pass or step was dropped before it finished: shutdown, lost leadership, a timeout.
    Abandoned,
}

impl Outcome {
    /// Every outcome.
    pub const ALL: [Outcome; 5] = [
        Outcome::Completed,
        Outcome::Waiting,
        Outcome::Skipped,
        Outcome::Failed,
        Outcome::Abandoned,
    ];

    /// The outcomes a step can have (steps are never waiting or skipped).
    pub const STEP: [Outcome; 3] = [Outcome::Completed, Outcome::Failed, Outcome::Abandoned];

    /// The outcome as a metric label value and log field.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Waiting => "waiting",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
            Outcome::Abandoned => "abandoned",
        }
    }

    /// Classifies the result of a pass: `Err` is [`Failed`](Outcome::Failed) whatever the
    /// override; an `Ok` pass takes `override_outcome` when the reconciler set one, else
    /// [`Completed`](Outcome::Completed) for [`Action::await_change`] and
    /// [`Waiting`](Outcome::Waiting) for a requeue.
    ///
    /// A controller that requeues as a periodic resync after converging shows as waiting unless
    /// it overrides the outcome with `Completed`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kube::runtime::controller::Action;
    /// use kubeward::observe::Outcome;
    ///
    /// let done: Result<Action, ()> = Ok(Action::await_change());
    /// assert_eq!(Outcome::of_pass(&done, None), Outcome::Completed);
    /// let requeue: Result<Action, ()> = Ok(Action::requeue(Duration::from_secs(5)));
    /// assert_eq!(Outcome::of_pass(&requeue, None), Outcome::Waiting);
    /// assert_eq!(Outcome::of_pass(&requeue, Some(Outcome::Skipped)), Outcome::Skipped);
    /// let failed: Result<Action, ()> = Err(());
    /// assert_eq!(Outcome::of_pass(&failed, Some(Outcome::Completed)), Outcome::Failed);
    /// ```
    pub fn of_pass<E>(result: &Result<Action, E>, override_outcome: Option<Outcome>) -> Outcome {
        match result {
            Err(_) => Outcome::Failed,
            Ok(_) if override_outcome.is_some() => override_outcome.unwrap_or(Outcome::Completed),
            Ok(action) if *action == Action::await_change() => Outcome::Completed,
            Ok(_) => Outcome::Waiting,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The object a pass works on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    /// `apiVersion` of the object, such as `demo.kubeward.dev/v1`.
    pub api_version: String,
    /// `kind` of the object, such as `Rollout`.
    pub kind: String,
    /// Namespace, `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// UID, when the object has been stored by the API server.
    pub uid: Option<String>,
}

impl ObjectRef {
    /// The reference of a typed object.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::ObjectMeta;
    /// use kubeward::observe::ObjectRef;
    ///
    /// let cm = ConfigMap {
    ///     metadata: ObjectMeta { name: Some("web".into()), namespace: Some("demo".into()), ..Default::default() },
    ///     ..Default::default()
    /// };
    /// let object = ObjectRef::from_resource(&cm);
    /// assert_eq!(object.to_string(), "ConfigMap demo/web");
    /// ```
    pub fn from_resource<K>(object: &K) -> Self
    where
        K: Resource<DynamicType = ()>,
    {
        let meta = object.meta();
        Self {
            api_version: K::api_version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            namespace: meta.namespace.clone(),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone(),
        }
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{} {namespace}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// A validated step name: lowercase letters, digits, `_` and `-`, at most 63 bytes.
///
/// Step names are `'static` on purpose: they become metric label values, and a fixed set of
/// names keeps the metric's cardinality bounded. Declare them as constants, which validates them
/// at compile time:
///
/// ```
/// use kubeward::observe::StepName;
/// const RENDER: StepName = StepName::from_static("render");
/// assert_eq!(RENDER.as_str(), "render");
/// ```
///
/// ```compile_fail
/// use kubeward::observe::StepName;
/// const BAD: StepName = StepName::from_static("Render Manifest"); // rejected by the compiler
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StepName(&'static str);

impl StepName {
    /// A step name checked at compile time when used in a `const`; panics on an invalid name
    /// otherwise (use [`StepName::new`] for names not known at compile time).
    pub const fn from_static(name: &'static str) -> Self {
        let bytes = name.as_bytes();
        assert!(
            !bytes.is_empty() && bytes.len() <= crate::limits::STEP_NAME_MAX_BYTES,
            "a step name must be 1 to 63 bytes long"
        );
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            assert!(
                b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-',
                "a step name must consist of lowercase letters, digits, '_' or '-'"
            );
            i += 1;
        }
        Self(name)
    }

    /// A step name checked at run time.
    ///
    /// ```
    /// use kubeward::observe::StepName;
    /// assert!(StepName::new("deploy").is_ok());
    /// assert!(StepName::new("Deploy!").is_err());
    /// ```
    pub fn new(name: &'static str) -> Result<Self, InvalidName> {
        NameKind::StepName.validate(name)?;
        Ok(Self(name))
    }

    /// The name.
    pub const fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Display for StepName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// A finished pass.
#[derive(Debug, Clone)]
pub struct PassRecord {
    /// The controller's name (its metric label and events' `reportingController`).
    pub controller: Arc<str>,
    /// The object reconciled.
    pub object: Arc<ObjectRef>,
    /// The phase of the pass.
    pub phase: Phase,
    /// How the pass ended.
    pub outcome: Outcome,
    /// Wall time from the start of the pass to its end (or to its abandonment).
    pub duration: Duration,
}

/// A finished step of a pass.
#[derive(Debug, Clone)]
pub struct StepRecord {
    /// The controller's name.
    pub controller: Arc<str>,
    /// The object of the pass the step ran in.
    pub object: Arc<ObjectRef>,
    /// The phase of the pass the step ran in.
    pub phase: Phase,
    /// The step.
    pub step: StepName,
    /// [`Completed`](Outcome::Completed), [`Failed`](Outcome::Failed) (it returned `Err` or
    /// panicked) or [`Abandoned`](Outcome::Abandoned) (its future was dropped).
    pub outcome: Outcome,
    /// Wall time the step took.
    pub duration: Duration,
}

/// What became of one event publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PublishResult {
    /// A new event was created on the server.
    Created,
    /// A repeat was counted into an existing series locally (no API write yet).
    Aggregated,
    /// A series' local count was written to the server.
    Flushed,
    /// A series whose event the server had expired was created anew, its count carried over.
    Recreated,
    /// The API server refused the write or could not be reached.
    Failed,
    /// The publish gave up after the recorder's timeout.
    TimedOut,
}

impl PublishResult {
    /// Every result.
    pub const ALL: [PublishResult; 6] = [
        PublishResult::Created,
        PublishResult::Aggregated,
        PublishResult::Flushed,
        PublishResult::Recreated,
        PublishResult::Failed,
        PublishResult::TimedOut,
    ];

    /// The result as a metric label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            PublishResult::Created => "created",
            PublishResult::Aggregated => "aggregated",
            PublishResult::Flushed => "flushed",
            PublishResult::Recreated => "recreated",
            PublishResult::Failed => "failed",
            PublishResult::TimedOut => "timed_out",
        }
    }
}

/// One event publish (or series flush) by a controller's event recorder.
#[derive(Debug, Clone)]
pub struct PublishRecord {
    /// The controller's name (the recorder's `reportingController`).
    pub controller: Arc<str>,
    /// Normal or Warning.
    pub event_type: EventType,
    /// What became of it.
    pub result: PublishResult,
}

/// What a controller declares about itself when it starts, so observers can prepare (the
/// Prometheus collector initialises every label combination to zero).
#[derive(Debug, Clone)]
pub struct ControllerInfo {
    /// The controller's name.
    pub name: Arc<str>,
    /// The steps it declares.
    pub steps: Vec<StepName>,
}

/// Receives the records of passes, steps and event publishes.
///
/// Methods are called synchronously on the reconciling task, at the end of the pass or step:
/// implementations must be cheap and must not block (update counters, send to a channel).
pub trait ReconcileObserver: Send + Sync + 'static {
    /// A controller using this observer started.
    fn controller_registered(&self, _controller: &ControllerInfo) {}
    /// A pass finished (or was abandoned).
    fn pass_finished(&self, record: &PassRecord);
    /// A step finished (or failed, or was abandoned).
    fn step_finished(&self, _record: &StepRecord) {}
    /// An event was published, aggregated or flushed, or a publish failed.
    fn event_published(&self, _record: &PublishRecord) {}
}

/// The observers of one controller; cheap to clone.
#[derive(Clone, Default)]
pub struct Observers(Arc<[Arc<dyn ReconcileObserver>]>);

impl Observers {
    /// A set of observers.
    pub fn new(observers: Vec<Arc<dyn ReconcileObserver>>) -> Self {
        Self(observers.into())
    }

    /// This set with `observer` added.
    #[must_use]
    pub fn with(&self, observer: Arc<dyn ReconcileObserver>) -> Self {
        let mut all = self.0.to_vec();
        all.push(observer);
        Self::new(all)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Observers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Observers({})", self.0.len())
    }
}

impl ReconcileObserver for Observers {
    fn controller_registered(&self, controller: &ControllerInfo) {
        self.0
            .iter()
            .for_each(|o| o.controller_registered(controller));
    }
    fn pass_finished(&self, record: &PassRecord) {
        self.0.iter().for_each(|o| o.pass_finished(record));
    }
    fn step_finished(&self, record: &StepRecord) {
        self.0.iter().for_each(|o| o.step_finished(record));
    }
    fn event_published(&self, record: &PublishRecord) {
        self.0.iter().for_each(|o| o.event_published(record));
    }
}

/// What a pass's steps need to know to report: set by [`PassGuard::run`] as a task-local.
#[derive(Debug)]
struct PassScope {
    controller: Arc<str>,
    object: Arc<ObjectRef>,
    phase: Phase,
    observers: Observers,
}

tokio::task_local! {
    static CURRENT_PASS: Arc<PassScope>;
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
    scope: Arc<PassScope>,
    started: Instant,
    finished: bool,
}

impl PassGuard {
    /// Starts timing a pass of `controller` over `object` in `phase`.
    pub fn start(
        controller: Arc<str>,
        object: Arc<ObjectRef>,
        phase: Phase,
        observers: Observers,
    ) -> Self {
        Self {
            scope: Arc::new(PassScope {
                controller,
                object,
                phase,
                observers,
            }),
            started: Instant::now(),
            finished: false,
        }
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

    /// Records the pass as ended with `outcome`.
    pub fn finish(mut self, outcome: Outcome) {
        self.record(outcome);
    }

    fn record(&mut self, outcome: Outcome) {
        self.finished = true;
        let scope = &self.scope;
        scope.observers.pass_finished(&PassRecord {
            controller: scope.controller.clone(),
            object: scope.object.clone(),
            phase: scope.phase,
            outcome,
            duration: self.started.elapsed(),
        });
    }
}

impl Drop for PassGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.record(Outcome::Abandoned);
        }
    }
}

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

/// Whether the caller runs inside a pass (so steps would be recorded).
pub fn in_pass() -> bool {
    CURRENT_PASS.try_with(|_| ()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Recording {
        passes: Mutex<Vec<(Phase, Outcome)>>,
        steps: Mutex<Vec<(&'static str, Outcome)>>,
    }

    impl ReconcileObserver for Recording {
        fn pass_finished(&self, record: &PassRecord) {
            self.passes
                .lock()
                .unwrap()
                .push((record.phase, record.outcome));
        }
        fn step_finished(&self, record: &StepRecord) {
            self.steps
                .lock()
                .unwrap()
                .push((record.step.as_str(), record.outcome));
        }
    }

    const RENDER: StepName = StepName::from_static("render");
    const DEPLOY: StepName = StepName::from_static("deploy");

    fn object() -> Arc<ObjectRef> {
        Arc::new(ObjectRef {
            api_version: "demo.kubeward.dev/v1".into(),
            kind: "Rollout".into(),
            namespace: Some("demo".into()),
            name: "web".into(),
            uid: Some("0000".into()),
        })
    }

    fn guard(recording: &Arc<Recording>, phase: Phase) -> PassGuard {
        PassGuard::start(
            "demo.kubeward.dev/rollouts".into(),
            object(),
            phase,
            Observers::new(vec![recording.clone()]),
        )
    }

    #[test]
    fn ok_await_change_is_completed() {
        let result: Result<Action, ()> = Ok(Action::await_change());
        assert_eq!(Outcome::of_pass(&result, None), Outcome::Completed);
    }

    #[test]
    fn ok_requeue_is_waiting() {
        let result: Result<Action, ()> = Ok(Action::requeue(Duration::from_secs(1)));
        assert_eq!(Outcome::of_pass(&result, None), Outcome::Waiting);
    }

    #[test]
    fn err_is_failed() {
        let result: Result<Action, &str> = Err("boom");
        assert_eq!(Outcome::of_pass(&result, None), Outcome::Failed);
    }

    #[test]
    fn override_applies_only_to_an_ok_pass() {
        let ok: Result<Action, &str> = Ok(Action::requeue(Duration::from_secs(1)));
        assert_eq!(
            Outcome::of_pass(&ok, Some(Outcome::Skipped)),
            Outcome::Skipped
        );
        assert_eq!(
            Outcome::of_pass(&ok, Some(Outcome::Completed)),
            Outcome::Completed
        );
        let err: Result<Action, &str> = Err("boom");
        for outcome in Outcome::ALL {
            assert_eq!(Outcome::of_pass(&err, Some(outcome)), Outcome::Failed);
        }
    }

    #[tokio::test]
    async fn pass_guard_records_the_finished_outcome_once() {
        let recording = Arc::new(Recording::default());
        guard(&recording, Phase::Apply).finish(Outcome::Waiting);
        assert_eq!(
            *recording.passes.lock().unwrap(),
            [(Phase::Apply, Outcome::Waiting)]
        );
    }

    #[tokio::test]
    async fn dropped_pass_is_abandoned() {
        let recording = Arc::new(Recording::default());
        let pass = guard(&recording, Phase::Cleanup);
        drop(pass);
        assert_eq!(
            *recording.passes.lock().unwrap(),
            [(Phase::Cleanup, Outcome::Abandoned)]
        );
    }

    #[tokio::test]
    async fn steps_report_into_the_current_pass_from_nested_calls() {
        async fn nested() -> u32 {
            step(DEPLOY, async { 7 }).await
        }
        let recording = Arc::new(Recording::default());
        let pass = guard(&recording, Phase::Apply);
        let value = pass
            .run(async {
                let a = step_sync(RENDER, || 1);
                a + nested().await
            })
            .await;
        pass.finish(Outcome::Completed);
        assert_eq!(value, 8);
        assert_eq!(
            *recording.steps.lock().unwrap(),
            [
                ("render", Outcome::Completed),
                ("deploy", Outcome::Completed)
            ]
        );
    }

    #[tokio::test]
    async fn step_outside_a_pass_is_a_no_op() {
        assert!(!in_pass());
        assert_eq!(step(RENDER, async { 3 }).await, 3);
        assert_eq!(try_step_sync(RENDER, || Err::<(), _>("x")), Err("x"));
    }

    #[tokio::test]
    async fn failing_step_is_recorded_as_failed() {
        let recording = Arc::new(Recording::default());
        let pass = guard(&recording, Phase::Apply);
        let result = pass
            .run(async {
                try_step(DEPLOY, async { Err::<(), _>("image pull failed") }).await?;
                Ok::<_, &str>(())
            })
            .await;
        pass.finish(Outcome::of_pass(
            &result.map(|()| Action::await_change()),
            None,
        ));
        assert_eq!(
            *recording.steps.lock().unwrap(),
            [("deploy", Outcome::Failed)]
        );
        assert_eq!(
            *recording.passes.lock().unwrap(),
            [(Phase::Apply, Outcome::Failed)]
        );
    }

    #[tokio::test]
    async fn step_of_an_abandoned_pass_is_recorded_as_abandoned() {
        let recording = Arc::new(Recording::default());
        let pass = guard(&recording, Phase::Apply);
        let never = pass.run(step(DEPLOY, futures::future::pending::<()>()));
        // Poll once so the step starts, then drop everything, as a shutdown would.
        let mut never = Box::pin(never);
        assert!(futures::poll!(never.as_mut()).is_pending());
        drop(never);
        drop(pass);
        assert_eq!(
            *recording.steps.lock().unwrap(),
            [("deploy", Outcome::Abandoned)]
        );
        assert_eq!(
            *recording.passes.lock().unwrap(),
            [(Phase::Apply, Outcome::Abandoned)]
        );
    }

    #[tokio::test]
    async fn panicking_step_is_recorded_as_failed() {
        let recording = Arc::new(Recording::default());
        let pass = guard(&recording, Phase::Apply);
        let scope = pass.scope.clone();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            CURRENT_PASS.sync_scope(scope, || step_sync(RENDER, || panic!("render bug")))
        }));
        assert!(panicked.is_err());
        pass.finish(Outcome::Failed);
        assert_eq!(
            *recording.steps.lock().unwrap(),
            [("render", Outcome::Failed)]
        );
    }

    #[test]
    fn invalid_step_names_are_typed_errors() {
        let err = StepName::new("Render").unwrap_err();
        assert_eq!(err.kind, NameKind::StepName);
    }
}
