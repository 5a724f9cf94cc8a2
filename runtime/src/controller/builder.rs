//! [`Controller`]: the builder of a controller — what it reconciles, how, where and with what
//! around it. It only builds: running it ([`Controller::run`]) builds on it, not the other way.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use kube::Resource;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use tokio::sync::watch;

use super::Reconciler;
use super::health::{ControllerState, DEFAULT_SYNC_TIMEOUT};
use super::memory::ObjectMemory;
use super::predicate::Starts;
use super::scope::Scope;
use crate::clock::{SharedClock, SystemClock};
use crate::events::{EventRecorder, InvalidReporter};
use crate::leader;
use crate::names::InvalidName;
use crate::observe::{Observers, ReconcileObserver};

/// How long in-flight passes may run on after a shutdown signal before they are abandoned.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_secs(20);
/// How many objects are reconciled at once by default.
pub const DEFAULT_CONCURRENCY: u16 = 16;
/// How long one pass's reconciler may run by default before the pass is abandoned (a wedged
/// pass never holds its concurrency slot or the lease for longer).
pub const DEFAULT_RECONCILE_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// How long a status write's or finalizer patch's request may go unanswered by default before it
/// is taken as lost (the write is then in doubt, and read back).
pub const DEFAULT_STATUS_WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a controller could not run.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// The controller's name (events' `reportingController`) or finalizer is not a qualified name.
    #[error(transparent)]
    InvalidName(#[from] InvalidName),
    /// Leader election failed in a way it cannot recover from.
    #[error(transparent)]
    LeaderElection(#[from] leader::LeaderError),
    /// The events' reporter is invalid (the instance given to
    /// [`Controller::with_reporting_instance`]).
    #[error(transparent)]
    InvalidReporter(#[from] InvalidReporter),
    /// Two vocabularies of [`Reconciler::CONDITIONS`] declare the same condition type.
    #[error(transparent)]
    DuplicateConditionType(#[from] crate::vocabulary::DuplicateConditionType),
}

/// How a controller publishes its events.
pub(super) enum Events {
    /// Through a recorder built when it runs (the default): reporting as the controller's name,
    /// counted by the controller's observers.
    Own(OwnRecorder),
    /// Through the recorder given to [`Controller::with_event_recorder`].
    Recorder(EventRecorder),
    /// Not at all ([`Controller::without_events`]).
    Off,
}

/// The settings of the recorder a controller builds for itself.
#[derive(Default)]
pub(super) struct OwnRecorder {
    pub(super) instance: Option<String>,
    pub(super) flush_interval: Option<Duration>,
}

type ShutdownSignal = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A [`Reconciler`] ready to run: watches its resource, reconciles each object in passes with
/// phases and outcomes, writes status conditions, publishes transition and failure events, and
/// shuts down gracefully.
///
/// It runs complete by default: events are published by a recorder whose `reportingController`
/// is the controller's [name](Controller::name) and whose publishes reach the same observers as
/// passes and steps; [`register_metrics`](Controller::register_metrics) adds every metric family
/// in one call. Opting out is explicit: [`without_events`](Controller::without_events).
///
/// ```no_run
/// # use kubeward::{Action, Pass, Reconciler};
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # struct Greeter;
/// # impl Reconciler for Greeter {
/// #     type Resource = ConfigMap;
/// #     type Error = std::convert::Infallible;
/// #     const NAME: Option<&'static str> = Some("demo.kubeward.dev/greeter");
/// #     async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, Self::Error> { Ok(Action::await_change()) }
/// # }
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kubeward::controller::Controller;
///
/// let client = kube::Client::try_default().await?;
/// Controller::new(Greeter, client)
///     // with feature `prometheus`: .register_metrics(&registry)?
///     .run() // events reported as demo.kubeward.dev/greeter
///     .await?;
/// # Ok(()) }
/// ```
pub struct Controller<R: Reconciler> {
    pub(super) reconciler: R,
    pub(super) client: kube::Client,
    pub(super) name: Option<String>,
    pub(super) observers: Observers,
    pub(super) events: Events,
    pub(super) concurrency: u16,
    pub(super) shutdown_grace: Duration,
    pub(super) budget: crate::shutdown::Budget,
    pub(super) status_timeout: Duration,
    pub(super) reconcile_timeout: Option<Duration>,
    pub(super) memory: ObjectMemory,
    pub(super) clock: SharedClock,
    pub(super) watcher_config: watcher::Config,
    pub(super) scope: Scope<R::Resource>,
    pub(super) starts: Starts,
    pub(super) resync: Option<Duration>,
    pub(super) shutdown: Option<ShutdownSignal>,
    pub(super) leader_election: Option<leader::LeaderElection>,
    /// The lease shared with the other controllers of an operator, when it has one and this
    /// controller has no election of its own.
    pub(super) shared_lease: Option<leader::Member>,
    /// Whether the cache is kept in sync while the controller waits for the lease.
    pub(super) warm_standby: bool,
    /// The watches shared with the other controllers of an operator.
    pub(super) shared_watches: Option<super::SharedWatches>,
    /// The operator whose client this controller was made with (its token), if any: only such
    /// controllers share that operator's watches.
    #[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
    pub(super) operator_client: Option<Arc<()>>,
    pub(super) sync_timeout: Duration,
    /// At most this many objects' series per scrape ([`Controller::with_object_metrics_cap`]).
    #[cfg(feature = "prometheus")]
    pub(super) object_metrics_cap: Option<usize>,
    pub(super) state: watch::Sender<ControllerState>,
    pub(super) cache: watch::Sender<Option<Store<R::Resource>>>,
    /// The objects waiting for a pass (for the queue-depth metric).
    pub(super) queue: Arc<super::queue::Queue>,
}

impl<R: Reconciler> Controller<R> {
    /// A controller running `reconciler` against the cluster `client` talks to.
    pub fn new(reconciler: R, client: kube::Client) -> Self {
        Self {
            reconciler,
            client,
            name: None,
            observers: Observers::default(),
            events: Events::Own(OwnRecorder::default()),
            concurrency: DEFAULT_CONCURRENCY,
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            budget: crate::shutdown::Budget::default(),
            status_timeout: DEFAULT_STATUS_WRITE_TIMEOUT,
            reconcile_timeout: None,
            memory: ObjectMemory::default(),
            clock: Arc::new(SystemClock),
            watcher_config: watcher::Config::default(),
            scope: Scope::cluster(),
            starts: Starts::RelevantChanges,
            resync: None,
            shutdown: None,
            leader_election: None,
            shared_lease: None,
            warm_standby: false,
            shared_watches: None,
            operator_client: None,
            sync_timeout: DEFAULT_SYNC_TIMEOUT,
            #[cfg(feature = "prometheus")]
            object_metrics_cap: None,
            state: watch::Sender::new(ControllerState::Syncing),
            cache: watch::Sender::new(None),
            queue: Arc::default(),
        }
    }

    /// Names the controller (events' `reportingController`, the `controller` metric label).
    /// Default: [`default_name`](super::default_name) ([`Reconciler::NAME`], else the finalizer,
    /// else the resource kind).
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
    /// `recorder` instead of the controller's own, for full control of its reporter and timings.
    /// The recorder must belong to this controller alone (see [`EventRecorder`]); build it with
    /// [`EventRecorder::with_observers`] to have its publishes counted in metrics.
    #[must_use]
    pub fn with_event_recorder(mut self, recorder: EventRecorder) -> Self {
        self.events = Events::Recorder(recorder);
        self
    }

    /// Publishes no events at all: no transition events, no failure events, and
    /// [`Pass::publish_event`](crate::Pass::publish_event) does nothing.
    #[must_use]
    pub fn without_events(mut self) -> Self {
        self.events = Events::Off;
        self
    }

    /// Reports events as `instance` (`reportingInstance`, 1 to 128 bytes, usually the pod name)
    /// instead of the one [`Reporter::for_controller`](crate::events::Reporter::for_controller) discovers. Switches events back on after
    /// [`without_events`](Controller::without_events) or a recorder of one's own.
    #[must_use]
    pub fn with_reporting_instance(mut self, instance: impl Into<String>) -> Self {
        self.own_recorder().instance = Some(instance.into());
        self
    }

    /// Writes repeated events' series counts at most once per `interval` (default
    /// [`DEFAULT_FLUSH_INTERVAL`](crate::events::DEFAULT_FLUSH_INTERVAL)). Switches events back on
    /// like [`with_reporting_instance`](Controller::with_reporting_instance).
    #[must_use]
    pub fn with_event_flush_interval(mut self, interval: Duration) -> Self {
        self.own_recorder().flush_interval = Some(interval);
        self
    }

    /// The settings of the controller's own recorder, switching to it if events were off or
    /// given a recorder.
    fn own_recorder(&mut self) -> &mut OwnRecorder {
        if !matches!(self.events, Events::Own(_)) {
            self.events = Events::Own(OwnRecorder::default());
        }
        match &mut self.events {
            Events::Own(own) => own,
            Events::Recorder(_) | Events::Off => unreachable!("switched to the own recorder above"),
        }
    }

    /// Reconciles at most `concurrency` objects at once (default [`DEFAULT_CONCURRENCY`]).
    #[must_use]
    pub fn with_concurrency(mut self, concurrency: u16) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// Lets in-flight passes run for `grace` after a shutdown signal (default
    /// [`DEFAULT_SHUTDOWN_GRACE`]), within half the [shutdown budget](Controller::with_shutdown_budget);
    /// passes still running then are abandoned.
    #[must_use]
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }

    /// Fits the whole shutdown — in-flight passes, the status writes and events of abandoned
    /// ones, the event flush and the lease release — inside `budget` from the signal (default
    /// [`DEFAULT_SHUTDOWN_BUDGET`](crate::shutdown::DEFAULT_SHUTDOWN_BUDGET), inside a pod's
    /// default 30 s grace period); see [`shutdown`](crate::shutdown). An
    /// [`Operator`](crate::operator::Operator) sets its own budget for all its controllers.
    #[must_use]
    pub fn with_shutdown_budget(self, budget: Duration) -> Self {
        self.budget.set_total(budget);
        self
    }

    /// Shuts down within `budget`, shared with the other controllers of an operator.
    #[cfg(feature = "prometheus")]
    pub(crate) fn with_budget(mut self, budget: crate::shutdown::Budget) -> Self {
        self.budget = budget;
        self
    }

    /// Gives up waiting for the answer to a status write's request after `timeout` (default
    /// [`DEFAULT_STATUS_WRITE_TIMEOUT`]): the write is then in doubt and read back (each read
    /// bounded the same way), so a PATCH the API server never answers cannot hold up the pass.
    /// A write read back as stored publishes its transitions; one that is not fails the pass,
    /// which is retried with backoff. The finalizer patches (add and remove) are bounded the
    /// same way: one in doubt is done if the read-back finds the finalizer present (added) or
    /// absent (removed), and fails the pass otherwise.
    #[must_use]
    pub fn with_status_write_timeout(mut self, timeout: Duration) -> Self {
        self.status_timeout = timeout;
        self
    }

    /// Shuts down when `signal` completes instead of on SIGTERM or Ctrl-C.
    #[must_use]
    pub fn shutdown_on(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    /// Abandons a pass whose reconciler (`apply` or `cleanup`) runs longer than `timeout`: its
    /// steps are recorded as abandoned, nothing it decided is written, it fails with
    /// [`PassError::TimedOut`](super::PassError::TimedOut) (a failure of reason `timeout` in
    /// `kubeward_reconcile_errors_total`, and a failure event) and is retried with backoff; its
    /// concurrency slot is freed at once. Default: the declaration's
    /// [`RECONCILE_TIMEOUT`](Reconciler::RECONCILE_TIMEOUT) (`#[reconciler(timeout = "30s")]`),
    /// else [`DEFAULT_RECONCILE_TIMEOUT`]. The status write after it has its own bound
    /// ([`with_status_write_timeout`](Controller::with_status_write_timeout)).
    #[must_use]
    pub fn with_reconcile_timeout(mut self, timeout: Duration) -> Self {
        self.reconcile_timeout = Some(timeout);
        self
    }

    /// The reconcile timeout as it will be used; see
    /// [`with_reconcile_timeout`](Controller::with_reconcile_timeout).
    pub fn reconcile_timeout(&self) -> Duration {
        self.reconcile_timeout
            .or(R::RECONCILE_TIMEOUT)
            .unwrap_or(DEFAULT_RECONCILE_TIMEOUT)
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

    /// Starts a pass for every watch event of the resource, as kube-runtime does: also for a
    /// status write (the controller's own included) and for a relist within a watch term (after
    /// a watch expired) of an object that did not change, which by default starts none. (The
    /// first list of each watch term starts a pass for every object either way.)
    #[must_use]
    pub fn with_every_watch_event(mut self) -> Self {
        self.starts = Starts::EveryEvent;
        self
    }

    /// Starts a pass for every change of an object (every new resourceVersion): status writes
    /// too, the controller's own and anyone else's — for a reconciler that acts on its object's
    /// status (written by someone else) or on anything outside what
    /// [`with_relevant_changes`](Controller::with_relevant_changes), the default, covers. A
    /// relist's event of an object that did not move still starts none.
    #[must_use]
    pub fn with_every_change(mut self) -> Self {
        self.starts = Starts::EveryChange;
        self
    }

    /// Starts a pass only for a change of what the reconciler acts on: the spec (generation),
    /// the finalizers, the deletion timestamp, and the labels and annotations it
    /// [reads](Reconciler::READS) (`#[reconciler(reads(..))]`; all of them when it declares
    /// none). Status writes — its own and anyone else's — start none; a pass that stored a
    /// transition and awaits a change is run once more at once, so a condition that moves one
    /// reason per pass goes on. See [`Reads`](super::Reads). The default (controller-runtime's
    /// `GenerationChangedPredicate` with its label and annotation predicates, derived from the
    /// declaration); [`with_every_change`](Controller::with_every_change) is the other choice.
    #[must_use]
    pub fn with_relevant_changes(mut self) -> Self {
        self.starts = Starts::RelevantChanges;
        self
    }

    /// Runs a pass of every cached object each `interval` as well (controller-runtime's
    /// `SyncPeriod`), for a reconciler that converges on what it cannot watch (an external
    /// system). Off by default: passes start on changes, requeues and retries. The first resync
    /// comes one `interval` after a watch term starts.
    #[must_use]
    pub fn with_resync(mut self, interval: Duration) -> Self {
        self.resync = Some(interval);
        self
    }

    /// Reports the controller not ready, with the last watch or list failure as the reason, and
    /// logs a warning, when a watch term has not listed its objects within `timeout` (default
    /// [`DEFAULT_SYNC_TIMEOUT`]): a CRD that is not installed, RBAC that forbids the list, an
    /// object that does not deserialize. The watch keeps retrying with backoff; the controller is
    /// ready as soon as a list succeeds.
    #[must_use]
    pub fn with_sync_timeout(mut self, timeout: Duration) -> Self {
        self.sync_timeout = timeout;
        self
    }

    /// Reconciles only while holding the lease described by `election`.
    #[must_use]
    pub fn with_leader_election(mut self, election: leader::LeaderElection) -> Self {
        self.leader_election = Some(election);
        self
    }

    /// Keeps the cache in sync while the controller waits for the lease (a **warm** standby,
    /// controller-runtime's warm replicas): its watch runs from the start, so a new leader
    /// reconciles at once — a failover costs the lease expiry, not a full list — at the price of
    /// holding the cache on every replica. Off by default (a standby lists once it leads); only
    /// with leader election.
    #[must_use]
    pub fn with_warm_standby(mut self) -> Self {
        self.warm_standby = true;
        self
    }

    /// Whether the controller has a leader election of its own.
    #[cfg(feature = "prometheus")]
    pub(crate) fn has_leader_election(&self) -> bool {
        self.leader_election.is_some()
    }

    /// Reconciles only while the lease `member` shares with other controllers is held.
    #[cfg(feature = "prometheus")]
    pub(crate) fn with_shared_lease(mut self, member: leader::Member) -> Self {
        self.shared_lease = Some(member);
        self
    }

    /// Watches through `watches`, shared with the other controllers of an operator given the
    /// same set: declares each watch the controller will run (its resource's, unless it
    /// watches several namespaces, and each relation's in each namespace), so call it once the
    /// controller is configured.
    #[cfg(feature = "prometheus")]
    pub(crate) fn with_shared_watches(mut self, watches: &super::SharedWatches) -> Self {
        if let Some(key) = self.scope.watch_key(&self.watcher_config) {
            watches.declare(key);
        }
        let namespaces = self.scope.watch_namespaces();
        let label = crate::children::controller_label_value(&self.name());
        for relation in R::relations().iter() {
            for namespace in &namespaces {
                watches.declare(relation.watch_key(*namespace, &label));
            }
        }
        self.shared_watches = Some(watches.clone());
        self
    }

    /// This controller made with the client of the operator whose token is `token`.
    #[cfg(feature = "prometheus")]
    pub(crate) fn on_operator_client(mut self, token: &Arc<()>) -> Self {
        self.operator_client = Some(token.clone());
        self
    }

    /// Whether this controller was made with the client of the operator whose token is `token`.
    #[cfg(feature = "prometheus")]
    pub(crate) fn is_on_operator_client(&self, token: &Arc<()>) -> bool {
        self.operator_client
            .as_ref()
            .is_some_and(|own| Arc::ptr_eq(own, token))
    }

    /// The controller's name, as it will be used.
    pub fn name(&self) -> String {
        self.name.clone().unwrap_or_else(super::default_name::<R>)
    }

    /// The controller's state, for `/readyz` and `/healthz` (give it to
    /// [`OpsServer::with_readiness`](crate::ops::OpsServer::with_readiness)). Ready
    /// ([`ControllerState::is_ready`]) once its watch has listed its objects, and — with leader
    /// election — while it waits for the lease as a standby; not ready before that, while a new
    /// leader's cache fills, with the reason once the [sync timeout](Controller::with_sync_timeout)
    /// passed, and once the controller stopped. Not alive ([`ControllerState::Failed`]) when its
    /// run loop ended without being asked to: a panic, a fatal leader-election error, or the
    /// run future dropped while it ran.
    ///
    /// Readiness is about the process, not leadership: a standby that reported unready would
    /// count as unavailable and deadlock a `maxUnavailable: 0` rollout.
    pub fn readiness(&self) -> watch::Receiver<ControllerState> {
        self.state.subscribe()
    }
}

impl<R: Reconciler> Controller<R>
where
    R::Resource: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
{
    /// Watches and reconciles the objects in `namespace` alone, and watches its
    /// [relations](crate::relations) (owned children, related objects) in it too: the
    /// controller then needs its [RBAC rules](crate::rbac::rules) only in that namespace, as a
    /// Role and RoleBinding ([`rbac::namespaced`](crate::rbac::namespaced)) rather than a
    /// ClusterRole. Default: the whole cluster. (Only a namespaced resource can be watched in
    /// one namespace; for a cluster-scoped one this does not compile.)
    #[must_use]
    pub fn in_namespace(self, namespace: impl Into<String>) -> Self {
        self.in_namespaces([namespace.into()])
    }

    /// Watches and reconciles the objects in each of `namespaces` (one watch per namespace, for
    /// the resource and for each relation, merged into one cache), with a Role and RoleBinding
    /// in each ([`rbac::namespaced`](crate::rbac::namespaced)). A relist of one namespace's watch
    /// leaves the others' objects alone, and deletes from the cache what it no longer lists. An
    /// empty list means the whole cluster.
    #[must_use]
    pub fn in_namespaces<S: Into<String>>(
        mut self,
        namespaces: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scope = Scope::namespaces(namespaces.into_iter().map(Into::into));
        self
    }
}
