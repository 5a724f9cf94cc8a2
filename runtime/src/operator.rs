//! [`Operator`]: several controllers in one process (controller-runtime's Manager) — one
//! `kube::Client`, one Prometheus registry holding every controller's metrics, one ops server
//! whose `/readyz` and `/healthz` aggregate every controller, and one shutdown (feature
//! `prometheus`), and optionally one Lease for all of them
//! ([`with_leader_election`](Operator::with_leader_election)).
//!
//! ```no_run
//! # use kubeward::{Action, Pass, Reconciler};
//! # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//! # struct Tenants; struct Quotas;
//! # impl Reconciler for Tenants { type Resource = ConfigMap; type Error = kube::Error;
//! #   const NAME: Option<&'static str> = Some("demo.kubeward.dev/tenants");
//! #   async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> { Ok(Action::await_change()) } }
//! # impl Reconciler for Quotas { type Resource = Secret; type Error = kube::Error;
//! #   const NAME: Option<&'static str> = Some("demo.kubeward.dev/quotas");
//! #   async fn apply(&self, _: &Secret, _: &mut Pass<Secret>) -> Result<Action, kube::Error> { Ok(Action::await_change()) } }
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use kubeward::operator::Operator;
//!
//! let client = kube::Client::try_default().await?;
//! Operator::new(client)
//!     .with_reconciler(Tenants)?
//!     .with_reconciler(Quotas)?
//!     .with_ops_server("0.0.0.0:8080".parse()?)
//!     .await?
//!     .run()
//!     .await?;
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::watch;

use crate::Reconciler;
use crate::controller::{Controller, ControllerError, ControllerState, SharedWatches};
use crate::leader::{LeaderElection, Member, SharedElection};
use crate::metrics::{DEFAULT_PREFIX, Metrics};

/// Why an operator could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// Two controllers have one name: their metrics and events could not be told apart.
    #[error("two controllers are named {0:?}: give one another name (`Controller::with_name`)")]
    DuplicateController(String),
    /// Two controllers of one kind both derive its kstatus conditions (`Ready`, `Reconciling`,
    /// `Stalled`) and `observedGeneration`: each pass would overwrite the other's verdict.
    #[error(
        "controllers {first} and {second} both derive the kstatus conditions of {kind} (Ready, Reconciling, Stalled): each would overwrite the other's; let one of them opt out (`#[reconciler(kstatus = false)]`, or `Reconciler::KSTATUS = None`)"
    )]
    KstatusTwice {
        /// The resource kind (`Widget.example.com`).
        kind: String,
        /// The controller added first.
        first: String,
        /// The controller refused.
        second: String,
    },
    /// A controller's metrics could not be created or registered.
    #[error("cannot register the metrics of controller {controller}")]
    Metrics {
        /// The controller.
        controller: String,
        /// Why.
        #[source]
        source: prometheus::Error,
    },
    /// The ops server could not bind its address.
    #[error("cannot bind the ops server to {address}")]
    OpsServer {
        /// The address.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A controller failed; the others were shut down.
    #[error("controller {controller} failed")]
    Controller {
        /// The controller.
        controller: String,
        /// Why.
        #[source]
        source: ControllerError,
    },
    /// The shared leader election could not run (its timings are invalid, or its identity
    /// empty); no controller ran.
    #[error("the operator's leader election cannot run")]
    LeaderElection(#[source] crate::leader::LeaderError),
    /// A controller's task panicked or was cancelled; the others were shut down.
    #[error("controller {controller} ended abnormally: {reason}")]
    Ended {
        /// The controller.
        controller: String,
        /// The panic or cancellation.
        reason: String,
    },
}

type Run = Pin<Box<dyn Future<Output = Result<(), ControllerError>> + Send>>;

/// A controller added to the operator, to be run once the operator knows its shared lease: a
/// member of it (a controller without an election of its own), or not.
type Start = Box<dyn FnOnce(Option<Member>) -> Run + Send>;
type Signal = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Several controllers on one client, one registry, one ops server and one shutdown; see the
/// [module documentation](self).
///
/// - Watches: two controllers on the operator's client ([`with_reconciler`](Operator::with_reconciler),
///   [`controller`](Operator::controller)) that watch the same thing — the same kind, served in
///   the same form (typed, or metadata-only for owned children), in the same namespace, with the
///   same selectors — share one list-and-watch and one cache, as a Manager's controllers share
///   informers (see `SharedWatches` in the source: `runtime/src/controller/shared_watch.rs`). A
///   controller made with a client of its own (another cluster, another identity) watches alone:
///   a watch shared with it would run as one of them and show another's objects.
/// - Metrics: every controller's passes, steps and event publishes reach one shared
///   [`Metrics`]; its per-object state and leader gauge register on the same registry (the
///   families are shared, the controller a label value).
/// - Readiness: `/readyz` is ready when every controller is, `/healthz` alive while every one
///   is; the body names the controllers that are not (as kube-apiserver's `?verbose` does).
/// - Shutdown: one signal — [`shutdown_on`](Operator::shutdown_on), else SIGTERM or Ctrl-C —
///   stops every controller (each within its shutdown grace, its event series flushed). A
///   controller that fails, or whose task panics, shuts the others down too, and `run` returns
///   its error.
pub struct Operator {
    client: kube::Client,
    /// Marks the controllers made with `client` ([`Operator::controller`]): only they share
    /// watches.
    client_token: Arc<()>,
    registry: prometheus::Registry,
    metrics: Metrics,
    names: BTreeSet<String>,
    /// The controller that derives the kstatus conditions of each kind, by `kind.group`.
    kstatus_kinds: BTreeMap<String, String>,
    /// The watches (and caches) the controllers share where they watch the same thing.
    watches: SharedWatches,
    /// Each controller, and whether it has a leader election of its own.
    runs: Vec<(String, bool, Start)>,
    /// The RBAC rules of every controller, as each declares them (not yet merged).
    rules: Vec<k8s_openapi::api::rbac::v1::PolicyRule>,
    /// The lease every controller without an election of its own shares.
    leader_election: Option<LeaderElection>,
    /// The shutdown budget every controller and the shared lease's release fit in.
    budget: crate::shutdown::Budget,
    readiness: Vec<watch::Receiver<ControllerState>>,
    stop: watch::Sender<bool>,
    shutdown: Option<Signal>,
    ops: Option<crate::ops::OpsServer>,
}

impl std::fmt::Debug for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operator")
            .field("controllers", &self.names)
            .field("ops", &self.ops_address())
            .finish_non_exhaustive()
    }
}

impl Operator {
    /// An operator whose controllers talk to the cluster through `client`.
    ///
    /// # Panics
    /// Never: the shared metrics have valid names.
    pub fn new(client: kube::Client) -> Self {
        let registry = prometheus::Registry::new();
        let metrics = Metrics::builder()
            .build()
            .expect("the default metrics are valid");
        registry
            .register(Box::new(metrics.clone()))
            .expect("a new registry is empty");
        Self {
            client,
            client_token: Arc::default(),
            registry,
            metrics,
            names: BTreeSet::new(),
            kstatus_kinds: BTreeMap::new(),
            watches: SharedWatches::default(),
            runs: Vec::new(),
            rules: Vec::new(),
            leader_election: None,
            budget: crate::shutdown::Budget::default(),
            readiness: Vec::new(),
            stop: watch::Sender::new(false),
            shutdown: None,
            ops: None,
        }
    }

    /// The client every controller added with [`with_reconciler`](Operator::with_reconciler) uses.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// The RBAC rules this operator needs: every controller's ([`rbac::rules`](crate::rbac::rules)),
    /// each resource once ([`rbac::merge`](crate::rbac::merge)), and the Lease rule when the
    /// operator or one of its controllers elects a leader. Add the controllers and the leader
    /// election first.
    pub fn rbac_rules(&self) -> Vec<k8s_openapi::api::rbac::v1::PolicyRule> {
        let lease = self.leader_election.is_some().then(crate::rbac::lease_rule);
        crate::rbac::merge(self.rules.iter().cloned().chain(lease))
    }

    /// [`rbac_rules`](Operator::rbac_rules) as YAML for `kubectl apply -f -`: a ClusterRole
    /// `name` and its ClusterRoleBinding to the service account
    /// `service_account_namespace/service_account` ([`rbac::cluster_wide`](crate::rbac::cluster_wide)).
    ///
    /// # Panics
    /// Never: RBAC objects serialize.
    pub fn rbac_yaml(
        &self,
        name: &str,
        service_account_namespace: &str,
        service_account: &str,
    ) -> String {
        let (role, binding) = crate::rbac::cluster_wide(
            name,
            self.rbac_rules(),
            service_account_namespace,
            service_account,
        );
        let json =
            |object: serde_json::Result<serde_json::Value>| object.expect("RBAC objects serialize");
        crate::manifest::to_yaml_documents(&[
            json(serde_json::to_value(&role)),
            json(serde_json::to_value(&binding)),
        ])
    }

    /// The registry every controller's metrics are on (`/metrics` of the ops server); register
    /// metrics of your own here too.
    pub fn registry(&self) -> &prometheus::Registry {
        &self.registry
    }

    /// Adds `reconciler`, run by a controller on the operator's client with the defaults.
    ///
    /// # Errors
    /// As [`with_controller`](Operator::with_controller).
    pub fn with_reconciler<R: Reconciler>(self, reconciler: R) -> Result<Self, OperatorError> {
        let controller = self.controller(reconciler);
        self.with_controller(controller)
    }

    /// A controller of `reconciler` on the operator's client, to configure and then add with
    /// [`with_controller`](Operator::with_controller): it shares watches with the operator's
    /// other controllers on that client (a [`Controller::new`] with a client of its own watches
    /// alone).
    pub fn controller<R: Reconciler>(&self, reconciler: R) -> Controller<R> {
        Controller::new(reconciler, self.client.clone()).on_operator_client(&self.client_token)
    }

    /// Adds `controller`, configured as one likes (its own client, concurrency, timeouts, leader
    /// election). The operator wires its metrics into the shared registry and its shutdown to the
    /// operator's: a signal given to the controller's own `shutdown_on` is replaced. Made by
    /// [`controller`](Operator::controller), it shares watches with the operator's other
    /// controllers; made with a client of its own, it watches alone.
    ///
    /// # Errors
    /// [`OperatorError::DuplicateController`] when a controller of that name was added already;
    /// [`OperatorError::KstatusTwice`] when it and one added before both derive the kstatus
    /// conditions of one kind;
    /// [`OperatorError::Metrics`] when its metrics cannot be registered.
    pub fn with_controller<R: Reconciler>(
        mut self,
        controller: Controller<R>,
    ) -> Result<Self, OperatorError> {
        let name = controller.name();
        if self.names.contains(&name) {
            return Err(OperatorError::DuplicateController(name));
        }
        if !crate::kstatus::derived_types(R::KSTATUS.as_ref(), R::CONDITIONS).is_empty() {
            let kind = format!(
                "{}.{}",
                <R::Resource as kube::Resource>::kind(&()),
                <R::Resource as kube::Resource>::group(&())
            );
            let kind = kind.trim_end_matches('.').to_owned();
            if let Some(first) = self.kstatus_kinds.get(&kind) {
                return Err(OperatorError::KstatusTwice {
                    kind,
                    first: first.clone(),
                    second: name,
                });
            }
            self.kstatus_kinds.insert(kind, name.clone());
        }
        self.names.insert(name.clone());
        let metrics_error = |source| OperatorError::Metrics {
            controller: name.clone(),
            source,
        };
        let objects = controller
            .object_metrics(DEFAULT_PREFIX)
            .map_err(metrics_error)?;
        let leading = controller
            .controller_metrics(DEFAULT_PREFIX)
            .map_err(metrics_error)?;
        self.registry
            .register(Box::new(objects))
            .map_err(metrics_error)?;
        self.registry
            .register(Box::new(leading))
            .map_err(metrics_error)?;
        let mut stop = self.stop.subscribe();
        let controller = if controller.is_on_operator_client(&self.client_token) {
            controller.with_shared_watches(&self.watches)
        } else {
            controller
        };
        let controller = controller
            .with_observer(Arc::new(self.metrics.clone()))
            .with_budget(self.budget.clone())
            .shutdown_on(async move {
                let _ = stop.wait_for(|stop| *stop).await;
            });
        self.readiness.push(controller.readiness());
        let own_election = controller.has_leader_election();
        self.rules.extend(crate::rbac::rules::<R>(own_election));
        let start: Start = Box::new(move |member| match member {
            Some(member) => Box::pin(controller.with_shared_lease(member).run()),
            None => Box::pin(controller.run()),
        });
        self.runs.push((name, own_election, start));
        Ok(self)
    }

    /// Runs every controller only while this process holds the lease `election` describes: one
    /// Lease for all of them, instead of one per controller (a controller given an election of
    /// its own, [`Controller::with_leader_election`], keeps that one). Each time the lease is
    /// acquired, every controller starts a watch term; when it is lost, every controller
    /// abandons its passes at once; on shutdown every controller stops gracefully, and the lease
    /// is released only after the last of them has settled its writes and flushed its events:
    /// no write is sent after the release. A standby replica is ready (`/readyz`) while it
    /// waits. Applies to controllers added before and after this call.
    #[must_use]
    pub fn with_leader_election(mut self, election: LeaderElection) -> Self {
        self.leader_election = Some(election);
        self
    }

    /// Serves `/metrics` (the operator's registry), `/healthz` and `/readyz` (every controller,
    /// also those added after this) on `address` while the operator runs; bound now (port 0
    /// picks a free port: [`ops_address`](Operator::ops_address)).
    ///
    /// # Errors
    /// [`OperatorError::OpsServer`] when `address` cannot be bound.
    pub async fn with_ops_server(mut self, address: SocketAddr) -> Result<Self, OperatorError> {
        let server = crate::ops::OpsServer::bind(address)
            .await
            .map_err(|source| OperatorError::OpsServer { address, source })?;
        self.ops = Some(server);
        Ok(self)
    }

    /// The address the ops server listens on, if there is one.
    pub fn ops_address(&self) -> Option<SocketAddr> {
        self.ops.as_ref().and_then(|ops| ops.local_addr().ok())
    }

    /// Fits the whole shutdown of every controller — their in-flight passes, the status writes
    /// and events of abandoned ones, the event flushes — and the shared lease's release inside
    /// `budget` from the signal (default
    /// [`DEFAULT_SHUTDOWN_BUDGET`](crate::shutdown::DEFAULT_SHUTDOWN_BUDGET)); see
    /// [`shutdown`](crate::shutdown). It replaces the controllers' own budgets.
    #[must_use]
    pub fn with_shutdown_budget(self, budget: std::time::Duration) -> Self {
        self.budget.set_total(budget);
        self
    }

    /// Shuts every controller down when `signal` completes, instead of on SIGTERM or Ctrl-C.
    #[must_use]
    pub fn shutdown_on(mut self, signal: impl Future<Output = ()> + Send + 'static) -> Self {
        self.shutdown = Some(Box::pin(signal));
        self
    }

    /// Every controller's state, in the order they were added (what `/readyz` aggregates).
    pub fn readiness(&self) -> Vec<watch::Receiver<ControllerState>> {
        self.readiness.clone()
    }

    /// Runs every controller in a task of its own until the returned [`RunningOperator`] is
    /// stopped or dropped: what a test (or a program with other work besides its controllers)
    /// wants instead of spawning [`run`](Self::run) and wiring a shutdown signal itself. The
    /// handle's stop replaces any [`shutdown_on`](Self::shutdown_on) signal, and SIGTERM.
    ///
    /// Must be called within a tokio runtime.
    ///
    /// ```no_run
    /// # use kubeward::{Action, Pass, Reconciler};
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # struct Tenants;
    /// # impl Reconciler for Tenants { type Resource = ConfigMap; type Error = kube::Error;
    /// #   const NAME: Option<&'static str> = Some("demo.kubeward.dev/tenants");
    /// #   async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> { Ok(Action::await_change()) } }
    /// # async fn test(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// let operator = kubeward::operator::Operator::new(client)
    ///     .with_reconciler(Tenants)?
    ///     .spawn();
    /// operator.ready().await;
    /// // … create objects, wait for what the controllers write …
    /// operator.stop().await?;
    /// # Ok(()) }
    /// ```
    #[must_use = "dropping the handle shuts the operator down at once"]
    pub fn spawn(self) -> RunningOperator {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let readiness = self.readiness();
        let operator = self.shutdown_on(async move {
            // A sent stop and a dropped handle both shut down.
            let _ = stopped.await;
        });
        RunningOperator {
            stop: Some(stop),
            task: Some(tokio::spawn(operator.run())),
            readiness,
        }
    }

    /// Runs every controller until shut down (see [`Operator`]); with the ops server, serves it
    /// meanwhile. Returns once every controller has returned.
    ///
    /// # Errors
    /// [`OperatorError::LeaderElection`] at once, before anything starts, when the shared
    /// [leader election](Operator::with_leader_election) cannot run (invalid timings, an empty
    /// identity): its controllers would otherwise wait, ready, for a lease never sought. Else
    /// the first controller's failure, after the others were shut down.
    pub async fn run(self) -> Result<(), OperatorError> {
        if let Some(election) = &self.leader_election {
            election.validate().map_err(OperatorError::LeaderElection)?;
        }
        let Self {
            registry,
            runs,
            leader_election,
            budget,
            readiness,
            stop,
            shutdown,
            ops,
            ..
        } = self;
        let shared = leader_election
            .map(|election| SharedElection::new(election.with_budget(budget.clone())));
        let runs: Vec<(String, Run)> = runs
            .into_iter()
            .map(|(name, own_election, start)| {
                let member = shared
                    .as_ref()
                    .filter(|_| !own_election)
                    .map(SharedElection::member);
                (name, start(member))
            })
            .collect();
        let ops = ops.map(|server| {
            let server = readiness
                .into_iter()
                .fold(server.with_registry(registry), |server, state| {
                    server.with_readiness(state)
                });
            tokio::spawn(server.serve())
        });
        let shutdown =
            shutdown.unwrap_or_else(|| Box::pin(crate::controller::termination_signal()));
        let stop_on_signal = {
            let stop = stop.clone();
            tokio::spawn(async move {
                shutdown.await;
                budget.begin();
                stop.send_replace(true);
            })
        };
        // The shared lease: held while the controllers run, released once they have stopped.
        let election = shared.map(|shared| {
            let mut stopped = stop.subscribe();
            tokio::spawn(shared.run(async move {
                let _ = stopped.wait_for(|stop| *stop).await;
            }))
        });
        let mut tasks = tokio::task::JoinSet::new();
        let mut names = std::collections::HashMap::new();
        for (name, run) in runs {
            names.insert(tasks.spawn(run).id(), name);
        }
        let mut first_error = None;
        while let Some(ended) = tasks.join_next_with_id().await {
            let error = match ended {
                Ok((_, Ok(()))) => None,
                Ok((id, Err(source))) => Some(OperatorError::Controller {
                    controller: names.remove(&id).unwrap_or_default(),
                    source,
                }),
                Err(join) => Some(OperatorError::Ended {
                    controller: names.remove(&join.id()).unwrap_or_default(),
                    reason: join.to_string(),
                }),
            };
            // One controller ending ends them all: the process is not half an operator.
            stop.send_replace(true);
            if first_error.is_none() {
                first_error = error;
            }
        }
        stop_on_signal.abort();
        if let Some(election) = election {
            let ended = election.await;
            if first_error.is_none() {
                first_error = match ended {
                    Ok(Ok(())) => None,
                    Ok(Err(error)) => Some(OperatorError::LeaderElection(error)),
                    Err(join) => Some(OperatorError::Ended {
                        controller: "leader election".to_owned(),
                        reason: join.to_string(),
                    }),
                };
            }
        }
        if let Some(ops) = ops {
            ops.abort();
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// An [`Operator`] running in the background ([`Operator::spawn`]). [`stop`](Self::stop) shuts it
/// down and returns how it ended; dropping the handle starts the same graceful shutdown without
/// waiting for it (the controllers finish within the shutdown budget on their own).
#[derive(Debug)]
pub struct RunningOperator {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), OperatorError>>>,
    readiness: Vec<watch::Receiver<ControllerState>>,
}

impl RunningOperator {
    /// Waits until every controller is ready, as `/readyz` counts it (its caches listed, or a
    /// standby waiting for the lease). Returns early when the operator ended (then
    /// [`stop`](Self::stop) returns why). Bound it with a timeout where a watch may never list.
    pub async fn ready(&self) {
        for state in &self.readiness {
            let _ = state.clone().wait_for(ControllerState::is_ready).await;
        }
    }

    /// Shuts the operator down and waits until every controller has returned.
    ///
    /// # Errors
    /// The first controller's failure, as [`Operator::run`] returns it.
    ///
    /// # Panics
    /// When the operator's task panicked: the panic is resumed here, so a test sees it.
    pub async fn stop(mut self) -> Result<(), OperatorError> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(task) = self.task.take() else {
            return Ok(());
        };
        match task.await {
            Ok(ended) => ended,
            Err(join) if join.is_panic() => std::panic::resume_unwind(join.into_panic()),
            // Cancelled: the runtime is shutting down, and took the operator with it.
            Err(_) => Ok(()),
        }
    }
}

impl Drop for RunningOperator {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
