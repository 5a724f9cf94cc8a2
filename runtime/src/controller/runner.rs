//! [`Controller`]: runs a [`Reconciler`] on `kube::runtime::Controller`.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use kube::api::Api;
use kube::runtime::controller::{Action, Config as ControllerConfig};
use kube::runtime::events::EventType;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use tokio::sync::watch;
use tracing::Instrument;

use super::failure::PassError;
use super::{Reconciler, finalizer, status};
use crate::clock::{SharedClock, SystemClock};
use crate::conditions::ConditionStatus;
use crate::events::{Event, EventRecorder};
use crate::names::{InvalidName, NameKind};
use crate::observe::{
    ControllerInfo, ObjectRef, Observers, Outcome, PassGuard, Phase, ReconcileObserver,
};
use crate::vocabulary::default_event_type;
use crate::{Pass, leader};

/// How long in-flight passes may run on after a shutdown signal before they are abandoned.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(20);
/// How many objects are reconciled at once by default.
pub const DEFAULT_CONCURRENCY: u16 = 16;
/// How soon an object whose status write or finalizer patch met a conflict is retried.
pub const CONFLICT_REQUEUE: Duration = Duration::from_millis(200);

/// Why a controller could not run.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The controller's name (events' `reportingController`) or finalizer is not a qualified name.
    #[error(transparent)]
    InvalidName(#[from] InvalidName),
    /// Leader election failed in a way it cannot recover from.
    #[error(transparent)]
    LeaderElection(#[from] leader::LeaderError),
}

type ShutdownSignal = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A [`Reconciler`] ready to run: watches its resource, reconciles each object in passes with
/// phases and outcomes, writes status conditions, publishes transition and failure events, and
/// shuts down gracefully.
///
/// ```no_run
/// # use kubeward::{Action, Pass, Reconciler};
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # struct Greeter;
/// # impl Reconciler for Greeter {
/// #     type Resource = ConfigMap;
/// #     type Error = std::convert::Infallible;
/// #     async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, Self::Error> { Ok(Action::await_change()) }
/// # }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kubeward::controller::Controller;
/// use kubeward::events::{EventRecorder, Reporter};
///
/// let client = kube::Client::try_default().await?;
/// let recorder = EventRecorder::new(client.clone(), Reporter::for_controller("demo.kubeward.dev/greeter")?);
/// Controller::new(Greeter, client)
///     .with_name("demo.kubeward.dev/greeter")
///     .with_event_recorder(recorder)
///     .run()
///     .await?;
/// # Ok(()) }
/// ```
pub struct Controller<R: Reconciler> {
    reconciler: R,
    client: kube::Client,
    name: Option<String>,
    observers: Observers,
    recorder: Option<EventRecorder>,
    concurrency: u16,
    shutdown_grace: Duration,
    clock: SharedClock,
    watcher_config: watcher::Config,
    shutdown: Option<ShutdownSignal>,
    leader_election: Option<leader::LeaderElection>,
    ready: watch::Sender<bool>,
    cache: watch::Sender<Option<Store<R::Resource>>>,
}

impl<R: Reconciler> Controller<R> {
    /// A controller running `reconciler` against the cluster `client` talks to.
    pub fn new(reconciler: R, client: kube::Client) -> Self {
        Self {
            reconciler,
            client,
            name: None,
            observers: Observers::default(),
            recorder: None,
            concurrency: DEFAULT_CONCURRENCY,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            clock: Arc::new(SystemClock),
            watcher_config: watcher::Config::default(),
            shutdown: None,
            leader_election: None,
            ready: watch::Sender::new(false),
            cache: watch::Sender::new(None),
        }
    }

    /// Names the controller (events' `reportingController`, the `controller` metric label).
    /// Default: [`Reconciler::NAME`], else the finalizer, else the resource kind.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Reports every pass, step and event publish to `observer` as well.
    #[must_use]
    pub fn with_observer(mut self, observer: Arc<dyn ReconcileObserver>) -> Self {
        self.observers = self.observers.with(observer);
        self
    }

    /// Publishes transition and failure events (and lets reconcilers publish their own) through
    /// `recorder`, which must belong to this controller alone (see [`EventRecorder`]). Build it
    /// with [`EventRecorder::with_observers`] to have its publishes counted in metrics.
    #[must_use]
    pub fn with_event_recorder(mut self, recorder: EventRecorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// Reconciles at most `concurrency` objects at once (default [`DEFAULT_CONCURRENCY`]).
    #[must_use]
    pub fn with_concurrency(mut self, concurrency: u16) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// Lets in-flight passes run for `grace` after a shutdown signal (default
    /// [`DEFAULT_SHUTDOWN_GRACE`]); passes still running then are abandoned.
    #[must_use]
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Shuts down when `signal` completes instead of on SIGTERM or Ctrl-C.
    #[must_use]
    pub fn shutdown_on(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    /// Stamps condition transitions with `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// Watches with `config` (label selectors, page size, ...).
    #[must_use]
    pub fn with_watcher_config(mut self, config: watcher::Config) -> Self {
        self.watcher_config = config;
        self
    }

    /// Reconciles only while holding the lease described by `election`.
    #[must_use]
    pub fn with_leader_election(mut self, election: leader::LeaderElection) -> Self {
        self.leader_election = Some(election);
        self
    }

    /// The controller's name, as it will be used.
    pub fn name(&self) -> String {
        self.name
            .as_deref()
            .or(R::NAME)
            .or(R::FINALIZER)
            .map_or_else(|| R::Resource::kind(&()).into_owned(), str::to_owned)
    }

    /// A handle that turns `true` once the controller's watch has listed its objects (for
    /// `/readyz`), and back to `false` when it stops.
    pub fn readiness(&self) -> watch::Receiver<bool> {
        self.ready.subscribe()
    }

    /// A Prometheus collector of the state of every object this controller watches (generation,
    /// conditions of the declared types, suspended), read from its cache at scrape time; see
    /// [`ObjectMetrics`](crate::metrics::ObjectMetrics). Register it to switch these metrics on.
    ///
    /// # Errors
    /// When `prefix` is not a valid metric-name prefix.
    #[cfg(feature = "prometheus")]
    pub fn object_metrics(
        &self,
        prefix: &str,
    ) -> Result<crate::metrics::ObjectMetrics, prometheus::Error> {
        let cache = self.cache.subscribe();
        let snapshot = move || {
            let Some(store) = cache.borrow().clone() else {
                return Vec::new();
            };
            store
                .state()
                .iter()
                .map(|object| {
                    let (mut conditions, _) = status::status_of(&**object);
                    if !R::CONDITIONS.is_empty() {
                        conditions.retain(|c| R::CONDITIONS.iter().any(|v| v.type_ == c.type_));
                    }
                    crate::metrics::ObjectState {
                        namespace: object.namespace().unwrap_or_default(),
                        name: object.name_any(),
                        generation: object.meta().generation,
                        conditions,
                        suspended: R::is_suspended(object),
                    }
                })
                .collect()
        };
        crate::metrics::ObjectMetrics::new(prefix, self.name(), Arc::new(snapshot))
    }

    /// Runs until shut down: by the signal given to [`Controller::shutdown_on`], else SIGTERM or
    /// Ctrl-C. In-flight passes get the shutdown grace period, then are abandoned; event series
    /// are flushed before it returns.
    ///
    /// # Errors
    /// [`ControllerError::InvalidName`] when the name or finalizer is not a qualified name.
    pub async fn run(mut self) -> Result<(), ControllerError> {
        let name: Arc<str> = self.name().into();
        NameKind::ControllerName.validate(&name)?;
        if let Some(finalizer) = R::FINALIZER {
            NameKind::Finalizer.validate(finalizer)?;
        }
        self.observers.controller_registered(&ControllerInfo {
            name: name.clone(),
            steps: R::STEPS.to_vec(),
        });
        let shutdown = self
            .shutdown
            .take()
            .unwrap_or_else(|| Box::pin(termination_signal()));
        let context = Arc::new(Context {
            reconciler: self.reconciler,
            client: self.client.clone(),
            name,
            observers: self.observers,
            recorder: self.recorder.clone(),
            clock: self.clock,
            failures: Mutex::new(HashMap::new()),
        });
        let watching = Watching {
            client: self.client.clone(),
            context,
            watcher_config: self.watcher_config,
            concurrency: self.concurrency,
            grace: self.shutdown_grace,
            ready: self.ready,
            cache: self.cache,
        };
        let result = match self.leader_election {
            None => {
                watching.run(shutdown).await;
                Ok(())
            }
            Some(election) => election
                .run_while_leader(shutdown, |lost| watching.run(lost))
                .await
                .map_err(ControllerError::from),
        };
        if let Some(recorder) = &self.recorder
            && let Err(error) = recorder.flush().await
        {
            tracing::warn!(%error, "could not flush event series on shutdown");
        }
        result
    }
}

/// What a controller's passes share.
struct Context<R: Reconciler> {
    reconciler: R,
    client: kube::Client,
    name: Arc<str>,
    observers: Observers,
    recorder: Option<EventRecorder>,
    clock: SharedClock,
    /// Consecutive failures per object, for the backoff; an entry goes on success.
    failures: Mutex<HashMap<(Option<String>, String), u32>>,
}

/// The watch-and-reconcile loop of one controller.
struct Watching<R: Reconciler> {
    client: kube::Client,
    context: Arc<Context<R>>,
    watcher_config: watcher::Config,
    concurrency: u16,
    grace: Duration,
    ready: watch::Sender<bool>,
    cache: watch::Sender<Option<Store<R::Resource>>>,
}

impl<R: Reconciler> Watching<R> {
    /// Reconciles until `stop` completes, then lets in-flight passes finish within the grace
    /// period and drops (abandons) the rest.
    async fn run(&self, stop: impl Future<Output = ()> + Send) {
        let api = Api::<R::Resource>::all_with(self.client.clone(), &());
        let (graceful_tx, graceful_rx) = tokio::sync::oneshot::channel::<()>();
        let controller = kube::runtime::Controller::new(api, self.watcher_config.clone())
            .with_config(ControllerConfig::default().concurrency(self.concurrency));
        let store = controller.store();
        self.cache.send_replace(Some(store.clone()));
        let ready = self.ready.clone();
        let readiness = async move {
            if store.wait_until_ready().await.is_ok() {
                ready.send_replace(true);
            }
            futures::future::pending::<()>().await;
        };
        let passes = controller
            .graceful_shutdown_on(async move {
                let _ = graceful_rx.await;
            })
            .run(reconcile::<R>, error_policy::<R>, self.context.clone())
            .for_each(|result| {
                if let Err(error) = result {
                    tracing::debug!(error = %crate::controller::ErrorChain(&error), "reconcile error");
                }
                futures::future::ready(())
            });
        let _term = TermGuard {
            ready: &self.ready,
            cache: &self.cache,
        };
        let mut passes = std::pin::pin!(passes);
        tokio::select! {
            () = &mut passes => {}
            () = readiness => {}
            () = stop => {
                let _ = graceful_tx.send(());
                if tokio::time::timeout(self.grace, &mut passes).await.is_err() {
                    tracing::warn!(grace = ?self.grace, "in-flight passes did not finish in time; abandoning them");
                }
            }
        }
    }
}

/// Marks the controller not ready and its cache gone when a watch term ends — also when its
/// future is dropped on lost leadership — so a replica that does not lead exports no stale state.
struct TermGuard<'a, K: Resource<DynamicType = ()> + Clone + 'static> {
    ready: &'a watch::Sender<bool>,
    cache: &'a watch::Sender<Option<Store<K>>>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Drop for TermGuard<'_, K> {
    fn drop(&mut self) {
        self.ready.send_replace(false);
        self.cache.send_replace(None);
    }
}

/// SIGTERM (what Kubernetes sends a terminating pod) or Ctrl-C.
async fn termination_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = terminate.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn object_key<K: Resource>(object: &K) -> (Option<String>, String) {
    (object.namespace(), object.name_any())
}

fn error_policy<R: Reconciler>(
    object: Arc<R::Resource>,
    error: &PassError<R::Error>,
    context: Arc<Context<R>>,
) -> Action {
    let attempt = {
        let mut failures = context.failures.lock().unwrap_or_else(|p| p.into_inner());
        let attempt = failures.entry(object_key(&*object)).or_insert(0);
        *attempt = attempt.saturating_add(1);
        *attempt
    };
    Action::requeue(context.reconciler.error_backoff(error, attempt))
}

/// One call from kube-runtime: decides the phase, runs the pass(es), and acts on the result.
async fn reconcile<R: Reconciler>(
    object: Arc<R::Resource>,
    context: Arc<Context<R>>,
) -> Result<Action, PassError<R::Error>> {
    let deleting = object.meta().deletion_timestamp.is_some();
    let result = match R::FINALIZER {
        Some(finalizer) if deleting => {
            if !finalizer::has(&*object, finalizer) {
                // Not ours (any more): nothing to clean up.
                return Ok(Action::await_change());
            }
            let action = run_pass(&context, &object, Phase::Cleanup).await?;
            if action.completed {
                run_finalizer_pass(&context, &object, Phase::Delete, finalizer).await
            } else {
                Ok(action.action)
            }
        }
        None if deleting => return Ok(Action::await_change()),
        Some(finalizer) if !finalizer::has(&*object, finalizer) => {
            run_finalizer_pass(&context, &object, Phase::Init, finalizer).await
        }
        _ => run_pass(&context, &object, Phase::Apply)
            .await
            .map(|a| a.action),
    };
    if result.is_ok() {
        let mut failures = context.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures.remove(&object_key(&*object));
    }
    result
}

/// What a pass returned to kube-runtime, and whether it counts as completed.
struct PassAction {
    action: Action,
    completed: bool,
}

/// An `apply` or `cleanup` pass: runs the reconciler, writes the status, publishes events.
async fn run_pass<R: Reconciler>(
    context: &Context<R>,
    object: &Arc<R::Resource>,
    phase: Phase,
) -> Result<PassAction, PassError<R::Error>> {
    let reference = Arc::new(ObjectRef::from_resource(&**object));
    let span =
        tracing::info_span!("reconcile", controller = %context.name, object = %reference, %phase);
    let guard = PassGuard::start(
        context.name.clone(),
        reference.clone(),
        phase,
        context.observers.clone(),
    );
    let (result, skip_reason) = guard
        .run(pass_body(context, object, reference, phase))
        .instrument(span.clone())
        .await;
    let outcome = match &result {
        Ok((action, outcome)) => Outcome::of_pass::<()>(&Ok(action.clone()), *outcome),
        Err(_) => Outcome::Failed,
    };
    let _entered = span.enter();
    match &result {
        Ok(_) => tracing::debug!(%outcome, skip_reason, "pass finished"),
        Err(error) => tracing::warn!(error = %super::ErrorChain(error), "pass failed"),
    }
    guard.finish(outcome);
    result.map(|(action, _)| PassAction {
        action,
        completed: outcome == Outcome::Completed,
    })
}

type PassResult<E> = (
    Result<(Action, Option<Outcome>), PassError<E>>,
    Option<String>,
);

async fn pass_body<R: Reconciler>(
    context: &Context<R>,
    object: &Arc<R::Resource>,
    reference: Arc<ObjectRef>,
    phase: Phase,
) -> PassResult<R::Error> {
    let regarding = object.object_ref(&());
    let source = object.clone();
    let load = Box::new(move || status::status_of(&*source));
    let mut pass = Pass::with_lazy_status(reference, phase, object.meta().generation, load)
        .with_clock(&*context.clock);
    if let Some(recorder) = &context.recorder {
        pass = pass.with_events(recorder.clone(), regarding.clone());
    }
    let reconciled = match phase {
        Phase::Cleanup => context.reconciler.cleanup(object, &mut pass).await,
        _ => context.reconciler.apply(object, &mut pass).await,
    };
    // The status is written whatever the result: a reconciler that sets `FailedDeploy` and
    // returns the error wants both the condition and the failed pass.
    let mut result = reconciled.map_err(PassError::Reconcile);
    if pass.status_needs_write() {
        match status::write(
            &context.client,
            &**object,
            pass.conditions(),
            Some(pass.status_fields()),
        )
        .await
        {
            Ok(status::Written::Stored) => {
                publish_transitions::<R>(context, &pass, &regarding).await
            }
            Ok(status::Written::Conflict) => {
                // Someone changed the object since this pass read it: nothing was stored, so
                // nothing is published; the fresh object is reconciled again promptly.
                tracing::debug!("status write conflicted; requeueing");
                if result.is_ok() {
                    result = Ok(Action::requeue(CONFLICT_REQUEUE));
                    pass.set_outcome(Outcome::Waiting);
                }
            }
            Err(error) => {
                if result.is_ok() {
                    result = Err(PassError::Status(error));
                } else {
                    tracing::warn!(error = %super::ErrorChain(&error), "status write failed too");
                }
            }
        }
    }
    match &result {
        Ok(_) => {
            if let (Some(recorder), Some(uid)) = (&context.recorder, &regarding.uid) {
                recorder.forget_failures(uid);
            }
        }
        Err(error) => publish_failure(context, error, phase, &regarding).await,
    }
    let skip_reason = pass.skip_reason().map(str::to_owned);
    (
        result.map(|action| (action, pass.outcome_override())),
        skip_reason,
    )
}

/// The `init` pass (add the finalizer) or the `delete` pass (remove it).
async fn run_finalizer_pass<R: Reconciler>(
    context: &Context<R>,
    object: &Arc<R::Resource>,
    phase: Phase,
    finalizer_name: &'static str,
) -> Result<Action, PassError<R::Error>> {
    let reference = Arc::new(ObjectRef::from_resource(&**object));
    let span =
        tracing::info_span!("reconcile", controller = %context.name, object = %reference, %phase);
    let guard = PassGuard::start(
        context.name.clone(),
        reference,
        phase,
        context.observers.clone(),
    );
    let (action, patched) = match phase {
        Phase::Init => (
            "add",
            finalizer::add(&context.client, &**object, finalizer_name)
                .instrument(span.clone())
                .await,
        ),
        _ => (
            "remove",
            finalizer::remove(&context.client, &**object, finalizer_name)
                .instrument(span.clone())
                .await,
        ),
    };
    let regarding = object.object_ref(&());
    match patched {
        Ok(finalizer::Patched::Stored) => {
            guard.finish(Outcome::Completed);
            if phase == Phase::Delete
                && let (Some(recorder), Some(uid)) = (&context.recorder, &regarding.uid)
            {
                recorder.forget(uid);
            }
            Ok(Action::await_change())
        }
        Ok(finalizer::Patched::Stale) => {
            guard.finish(Outcome::Waiting);
            Ok(Action::requeue(CONFLICT_REQUEUE))
        }
        Err(source) => {
            let error = PassError::Finalizer {
                action,
                finalizer: finalizer_name,
                source,
            };
            publish_failure(context, &error, phase, &regarding).await;
            guard.finish(Outcome::Failed);
            Err(error)
        }
    }
}

/// One event per condition whose (status, reason) the stored write changed.
async fn publish_transitions<R: Reconciler>(
    context: &Context<R>,
    pass: &Pass<R::Resource>,
    regarding: &k8s_openapi::api::core::v1::ObjectReference,
) {
    let Some(recorder) = &context.recorder else {
        return;
    };
    for condition in status::transitions(pass.stored_conditions(), pass.conditions()) {
        let event_type = pass
            .declared_event_type(&condition.type_, &condition.reason)
            .unwrap_or_else(|| {
                transition_event_type::<R>(&condition.type_, &condition.reason, &condition.status)
            });
        let mut event = Event::new(
            event_type,
            condition.reason.clone(),
            phase_action(pass.phase()),
        );
        if !condition.message.is_empty() {
            event = event.with_note(condition.message.clone());
        }
        if let Err(error) = recorder.publish(&event, regarding).await {
            tracing::warn!(%error, reason = %condition.reason, "could not publish transition event");
        }
    }
}

/// The event type of a transition into `reason` that its `set` did not declare (a typed
/// transition always does): as `R::CONDITIONS` declares the reason, else False → Warning and
/// True/Unknown → Normal.
fn transition_event_type<R: Reconciler>(type_: &str, reason: &str, status: &str) -> EventType {
    let status = status.parse().unwrap_or(ConditionStatus::Unknown);
    R::CONDITIONS.iter().find(|v| v.type_ == type_).map_or_else(
        || default_event_type(status),
        |v| v.event_type_or(reason, status),
    )
}

/// The `action` of the events a pass in `phase` publishes.
fn phase_action(phase: Phase) -> &'static str {
    match phase {
        Phase::Init | Phase::Apply => "Reconcile",
        Phase::Cleanup | Phase::Delete => "Cleanup",
    }
}

async fn publish_failure<R: Reconciler>(
    context: &Context<R>,
    error: &PassError<R::Error>,
    phase: Phase,
    regarding: &k8s_openapi::api::core::v1::ObjectReference,
) {
    let Some(recorder) = &context.recorder else {
        return;
    };
    let Some(event) = context.reconciler.failure_event(error, phase) else {
        return;
    };
    if let Err(publish_error) = recorder.publish(&event.as_failure(), regarding).await {
        tracing::warn!(error = %publish_error, "could not publish failure event");
    }
}
