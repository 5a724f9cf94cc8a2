//! [`Controller`]: the builder of a controller and its `run` loop (names checked, leader election,
//! shutdown, the final flush of event series).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use kube::Resource;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use tokio::sync::watch;

use super::Reconciler;
use super::context::Context;
use super::memory::ObjectMemory;
use super::watch::Watching;
use crate::clock::{SharedClock, SystemClock};
use crate::events::EventRecorder;
use crate::leader;
use crate::names::{InvalidName, NameKind};
use crate::observe::{ControllerInfo, Observers, ReconcileObserver};

/// How long in-flight passes may run on after a shutdown signal before they are abandoned.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(20);
/// How many objects are reconciled at once by default.
pub const DEFAULT_CONCURRENCY: u16 = 16;

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

    /// The controller's readiness (for `/readyz`): `true` once its watch has listed its objects,
    /// and — with leader election — while it waits for the lease as a standby; `false` before
    /// that, while a new leader's cache fills, and once the controller stopped.
    ///
    /// Readiness is about the process, not leadership: a standby that reported unready would
    /// count as unavailable and deadlock a `maxUnavailable: 0` rollout.
    pub fn readiness(&self) -> watch::Receiver<bool> {
        self.ready.subscribe()
    }

    /// A Prometheus collector of the state of every object this controller watches (generation,
    /// conditions of the declared types with their reasons' classes, suspended, the declared
    /// [`INFO`](Reconciler::INFO) fields), read from its cache at scrape time; see
    /// [`ObjectMetrics`](crate::metrics::ObjectMetrics). Register it to switch these metrics on.
    ///
    /// # Errors
    /// When `prefix` is not a valid metric-name prefix.
    #[cfg(feature = "prometheus")]
    pub fn object_metrics(
        &self,
        prefix: &str,
    ) -> Result<crate::metrics::ObjectMetrics, prometheus::Error> {
        use kube::ResourceExt;
        let cache = self.cache.subscribe();
        let snapshot = move || {
            let Some(store) = cache.borrow().clone() else {
                return Vec::new();
            };
            store
                .state()
                .iter()
                .map(|object| {
                    let (mut conditions, _) = super::status::status_of(&**object);
                    if !R::CONDITIONS.is_empty() {
                        conditions.retain(|c| R::CONDITIONS.iter().any(|v| v.type_ == c.type_));
                    }
                    // Info fields are read from the object as the API server serves it; only
                    // when declared, as it costs a serialization per object and scrape.
                    let info = if R::INFO.is_empty() {
                        Vec::new()
                    } else {
                        serde_json::to_value(&**object)
                            .map(|json| crate::info::values(R::INFO, &json))
                            .unwrap_or_else(|_| vec![String::new(); R::INFO.len()])
                    };
                    crate::metrics::ObjectState {
                        namespace: object.namespace().unwrap_or_default(),
                        name: object.name_any(),
                        generation: object.meta().generation,
                        conditions,
                        suspended: R::is_suspended(object),
                        info,
                    }
                })
                .collect()
        };
        crate::metrics::ObjectMetrics::new(prefix, self.name(), Arc::new(snapshot))?
            .with_vocabularies(R::CONDITIONS)
            .with_info(R::INFO)
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
            memory: ObjectMemory::default(),
            cache: self.cache.subscribe(),
        });
        let watching = Watching {
            client: self.client.clone(),
            context,
            watcher_config: self.watcher_config,
            concurrency: self.concurrency,
            grace: self.shutdown_grace,
            ready: self.ready.clone(),
            cache: self.cache,
            ready_between_terms: self.leader_election.is_some(),
        };
        let result = match self.leader_election {
            None => {
                watching.run(shutdown).await;
                Ok(())
            }
            Some(election) => {
                // A standby waiting for the lease is ready.
                self.ready.send_replace(true);
                election
                    .run_while_leader(shutdown, |lost| watching.run(lost))
                    .await
                    .map_err(ControllerError::from)
            }
        };
        self.ready.send_replace(false);
        if let Some(recorder) = &self.recorder
            && let Err(error) = recorder.flush().await
        {
            tracing::warn!(%error, "could not flush event series on shutdown");
        }
        result
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
