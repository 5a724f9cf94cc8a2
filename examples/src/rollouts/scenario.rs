//! The scripted scenario the `rollouts` binary runs by default: create a Rollout, approve and
//! promote it, roll out an image that fails, recover, suspend, delete — printing progress and,
//! after each stage, the events as `kubectl describe rollout` shows them.
//!
//! It runs on a simulated cluster ([`workloads`]: two nodes whose kubelets cannot pull
//! [`BROKEN_IMAGE`]), so the Rollout's Deployment really rolls out: the Deployment and
//! ReplicaSet controllers create pods, the scheduler places them, the kubelets start them (or
//! report `ErrImagePull` and `ImagePullBackOff` for the missing image).
//!
//! The scenario checks itself as it goes: each stage waits (bounded by
//! [`ScenarioOptions::stage_timeout`]) for the condition, the events with their types, and the
//! children and pods it expects, and fails with what it last saw otherwise.

use std::collections::HashMap;
use std::future::Future;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubeward::controller::ControllerError;
use kubeward_testing::{ApiServer, Backend, Cluster, PodFault, ServerError, Workloads};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::children;
use super::describe::{describe_deployment, describe_events};
use super::health;
use super::operator::{LeaseOptions, Operator, OperatorOptions, SetupError, samples};
use super::resource::{APPROVED_GENERATION, Rollout, RolloutSpec, RolloutStatus, Strategy};

/// The image the scenario rolls out that does not exist: the simulated kubelets cannot pull it.
pub const BROKEN_IMAGE: &str = "registry.example/web:broken";

/// The simulated cluster the scenario runs on: two nodes, and kubelets that cannot pull
/// [`BROKEN_IMAGE`] (named exactly: a real control plane, where KWOK plays the kubelets, plays
/// only faults of exact images).
pub fn workloads() -> Workloads {
    Workloads::with_nodes(2).fault(PodFault::image_pull(BROKEN_IMAGE))
}

/// How the scenario runs.
#[derive(Debug, Clone)]
pub struct ScenarioOptions {
    /// The namespace of the Rollout.
    pub namespace: String,
    /// The name of the Rollout.
    pub name: String,
    /// How long one stage may take before the scenario fails.
    pub stage_timeout: Duration,
    /// Delay between the stages of a rollout (the operator's).
    pub stage_delay: Duration,
    /// How often repeated events are written as series counts (the operator's).
    pub event_flush_interval: Duration,
    /// Stop before deleting the Rollout (to inspect it with kubectl afterwards).
    pub keep: bool,
    /// Run the operator with leader election (see [`OperatorOptions::leader_election`]).
    pub leader_election: Option<LeaseOptions>,
}

impl Default for ScenarioOptions {
    fn default() -> Self {
        Self {
            namespace: "default".into(),
            name: "web".into(),
            stage_timeout: Duration::from_secs(30),
            stage_delay: Duration::from_millis(50),
            // Longer than the gaps between the first retries (backoff 0.25-0.5 s, 0.5-1 s,
            // 1-2 s): the recorder evicts a series idle for a flush interval, and a repeat after
            // that starts a new event.
            event_flush_interval: Duration::from_secs(3),
            keep: false,
            leader_election: None,
        }
    }
}

impl ScenarioOptions {
    /// The operator options the scenario runs with.
    pub fn operator(&self) -> OperatorOptions {
        OperatorOptions {
            stage_delay: self.stage_delay,
            event_flush_interval: self.event_flush_interval,
            instance: Some("scenario".into()),
            leader_election: self.leader_election.clone(),
            namespaces: Vec::new(),
        }
    }
}

/// Why the scenario did not complete.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The embedded API server could not start or take the CRD.
    #[error("the embedded API server failed")]
    Server(#[from] ServerError),
    /// The operator could not be set up.
    #[error("the operator could not be set up")]
    Setup(#[from] SetupError),
    /// The operator stopped while the scenario ran.
    #[error("the operator stopped: {0}")]
    OperatorStopped(String),
    /// A request of the scenario itself failed.
    #[error("stage {stage}: a request of the scenario failed")]
    Api {
        /// The stage.
        stage: &'static str,
        /// The error.
        #[source]
        source: kube::Error,
    },
    /// A stage did not reach what it waits for in time.
    #[error("stage {stage}: {what} did not happen within {timeout:?}; last seen: {last}")]
    Timeout {
        /// The stage.
        stage: &'static str,
        /// What it waited for.
        what: String,
        /// The stage timeout.
        timeout: Duration,
        /// What the scenario last saw.
        last: String,
    },
    /// A stage reached its state, but not as it should have.
    #[error("stage {stage}: expected {expected}, found {found}")]
    Unexpected {
        /// The stage.
        stage: &'static str,
        /// What it expected.
        expected: String,
        /// What it found.
        found: String,
    },
    /// Printing progress failed.
    #[error("cannot print progress")]
    Output(#[from] std::io::Error),
}

/// What the scenario saw, for tests.
#[derive(Debug, Clone)]
pub struct Report {
    /// Every event about the Rollout, as stored before it was deleted.
    pub events: Vec<Event>,
    /// The Rollout's status before it was deleted.
    pub status: RolloutStatus,
    /// The Rollout's generation before it was deleted.
    pub generation: i64,
    /// Its Deployment before the Rollout was deleted.
    pub deployment: Deployment,
    /// The metrics in Prometheus text format, after the last stage.
    pub metrics: String,
    /// Whether the Rollout and its children were deleted.
    pub deleted: bool,
}

/// The operator running in the background.
pub struct RunningOperator {
    /// All its metrics.
    pub registry: prometheus::Registry,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), ControllerError>>,
}

impl RunningOperator {
    /// Starts the operator against the cluster `client` talks to.
    ///
    /// # Errors
    /// See [`SetupError`].
    pub fn start(client: kube::Client, options: &OperatorOptions) -> Result<Self, SetupError> {
        let operator = Operator::new(client, options)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let controller = operator
            .controller
            .with_shutdown_grace(Duration::from_secs(2))
            .shutdown_on(async move {
                let _ = stopped.await;
            });
        Ok(Self {
            registry: operator.registry,
            stop,
            task: tokio::spawn(controller.run()),
        })
    }

    /// The metrics in Prometheus text format.
    pub fn metrics(&self) -> String {
        prometheus::TextEncoder::new()
            .encode_to_string(&self.registry.gather())
            .unwrap_or_default()
    }

    /// Stops the operator (flushing its event series) and waits for it.
    ///
    /// # Errors
    /// When the controller failed.
    pub async fn stop(self) -> Result<(), ScenarioError> {
        let _ = self.stop.send(());
        match self.task.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(ScenarioError::OperatorStopped(error.to_string())),
            Err(error) => Err(ScenarioError::OperatorStopped(error.to_string())),
        }
    }

    fn check_running(&self) -> Result<(), ScenarioError> {
        if self.task.is_finished() {
            return Err(ScenarioError::OperatorStopped(
                "the controller task ended".into(),
            ));
        }
        Ok(())
    }
}

/// Starts the embedded API server with the simulated cluster of [`workloads`] and the Rollout
/// CRD installed.
///
/// # Errors
/// When the server cannot start or rejects the CRD.
pub async fn embedded_server() -> Result<ApiServer, ServerError> {
    let server = ApiServer::builder().workloads(workloads()).start().await?;
    server.install_crd(&super::operator::crd())?;
    Ok(server)
}

/// Starts the API server `KUBEWARD_TEST_APISERVER` picks (the embedded one unless it says
/// `real`; see [`Cluster`]) with the simulated cluster of [`workloads`] and the Rollout CRD
/// installed and established.
///
/// # Errors
/// When the server cannot start or rejects the CRD.
pub async fn cluster() -> Result<Cluster, ServerError> {
    cluster_on(Backend::from_env()?).await
}

/// Starts `backend` with the simulated cluster of [`workloads`] and the Rollout CRD installed
/// and established.
///
/// # Errors
/// When the server cannot start or rejects the CRD.
pub async fn cluster_on(backend: Backend) -> Result<Cluster, ServerError> {
    cluster_with(backend, workloads()).await
}

/// Starts `backend` with the simulated cluster `workloads` and the Rollout CRD installed and
/// established.
///
/// # Errors
/// When the server cannot start or rejects the CRD.
pub async fn cluster_with(backend: Backend, workloads: Workloads) -> Result<Cluster, ServerError> {
    let cluster = Cluster::builder()
        .backend(backend)
        .workloads(workloads)
        .start()
        .await?;
    cluster.install_crd(&super::operator::crd()).await?;
    Ok(cluster)
}

/// Runs the whole scenario on a fresh embedded API server, printing to `out`.
///
/// # Errors
/// See [`ScenarioError`].
pub async fn run_embedded(
    options: &ScenarioOptions,
    out: &mut dyn Write,
) -> Result<Report, ScenarioError> {
    run_on(&cluster_on(Backend::Embedded).await?, options, out).await
}

/// Runs the whole scenario on `cluster` (the Rollout CRD installed), printing to `out`.
///
/// # Errors
/// See [`ScenarioError`].
pub async fn run_on(
    cluster: &Cluster,
    options: &ScenarioOptions,
    out: &mut dyn Write,
) -> Result<Report, ScenarioError> {
    let client = cluster.client()?;
    writeln!(
        out,
        "kubeward rollout operator: scripted scenario on the {} at {}",
        cluster.describe(),
        cluster.url()
    )?;
    let operator = RunningOperator::start(client.clone(), &options.operator())?;
    let result = drive(&client, &operator, options, out).await;
    let stopped = operator.stop().await;
    let report = result?;
    stopped?;
    Ok(report)
}

/// Drives the scenario with `admin` (the user's client) against a running `operator`.
///
/// # Errors
/// See [`ScenarioError`].
pub async fn drive(
    admin: &kube::Client,
    operator: &RunningOperator,
    options: &ScenarioOptions,
    out: &mut dyn Write,
) -> Result<Report, ScenarioError> {
    let started = Instant::now();
    let stage = Stage::new(admin, operator, options);
    let total = if options.keep { 5 } else { 6 };

    // 1. Create a Rollout that needs approval: generation 1 is staged in a paused Deployment.
    let image = "registry.example/web:1.0";
    header(out, 1, total, "create a Rollout with manual approval")?;
    let uid = stage.create(out, image, 3, Strategy::Manual).await?;
    stage.watch_events_of(&uid);
    stage
        .condition(out, "create", 1, "WaitingForApproval")
        .await?;
    stage
        .events(
            out,
            &uid,
            "create",
            &[("Applying", "Normal"), ("WaitingForApproval", "Normal")],
        )
        .await?;
    stage.staged(out, "create", image).await?;
    stage.service(out, "create").await?;
    stage.describe(out, &uid).await?;

    // 2. Approve generation 1: the Deployment is resumed and rolls it out.
    header(out, 2, total, "approve generation 1: promote it")?;
    stage.approve(out, "approve", 1).await?;
    stage.condition(out, "approve", 1, "Applied").await?;
    stage
        .events(
            out,
            &uid,
            "approve",
            &[
                ("ReadyToPromote", "Normal"),
                ("Promoting", "Normal"),
                ("Applied", "Normal"),
            ],
        )
        .await?;
    stage.live_image(out, "approve", image).await?;
    stage.rolled_out(out, "approve", image).await?;
    stage.restore(out).await?;
    stage.describe(out, &uid).await?;

    // 3. An image that does not exist: its pod cannot pull it, FailedDeploy, retries with
    // backoff; the pods of generation 1 keep serving.
    header(out, 3, total, "roll out an image that does not exist")?;
    stage.fail(out, &uid, image).await?;
    stage.describe(out, &uid).await?;

    // 4. Recover with a good image, approved.
    let fixed = "registry.example/web:1.1";
    header(
        out,
        4,
        total,
        "recover: roll out a good image and approve it",
    )?;
    stage.set_image(out, "recovery", fixed).await?;
    stage
        .condition(out, "recovery", 3, "WaitingForApproval")
        .await?;
    stage.approve(out, "recovery", 3).await?;
    stage.condition(out, "recovery", 3, "Applied").await?;
    stage.live_image(out, "recovery", fixed).await?;
    stage.rolled_out(out, "recovery", fixed).await?;
    stage.describe(out, &uid).await?;

    // 5. Suspend: the operator skips the Rollout.
    header(out, 5, total, "suspend the Rollout")?;
    let mut report = stage.suspend(out).await?;
    report.events = stage.stored_events(&uid).await?;
    stage.describe(out, &uid).await?;

    // 6. Delete: cleanup deletes the children, then the finalizer goes.
    if !options.keep {
        header(out, 6, total, "delete the Rollout")?;
        stage.delete(out).await?;
        report.deleted = true;
    }

    report.metrics = operator.metrics();
    writeln!(out)?;
    write!(out, "{}", metrics_summary(&operator.registry))?;
    writeln!(
        out,
        "\nScenario completed in {:.1}s.",
        started.elapsed().as_secs_f64()
    )?;
    out.flush()?;
    Ok(report)
}

/// A smaller scenario, for what the main one cannot show: a pod that fails after its Deployment
/// stopped changing wakes the operator through its watch of the pods (`watches(Pod, ..)`). On a
/// cluster without nodes ([`cluster_with`] and `Workloads::new()`: pods stay `Pending`, no
/// kubelet writes their status), a Rollout of one replica is promoted and waits for its pod;
/// `admin` then reports the pod's container waiting `ErrImagePull`, as a kubelet would — a
/// change of the pod alone, the Deployment's status does not move — and the operator fails the
/// generation naming the pod.
///
/// # Errors
/// See [`ScenarioError`].
pub async fn drive_pod_failure(
    admin: &kube::Client,
    operator: &RunningOperator,
    options: &ScenarioOptions,
    out: &mut dyn Write,
) -> Result<(), ScenarioError> {
    let stage = Stage::new(admin, operator, options);
    let name = options.name.as_str();
    let image = "registry.example/web:1.0";
    let uid = stage.create(out, image, 1, Strategy::Automatic).await?;
    stage.watch_events_of(&uid);
    stage.condition(out, "pod failure", 1, "Promoting").await?;
    let pod = stage
        .wait(out, "pod failure", "a pod of the Deployment", || async {
            let pods = stage.rollout_pods().await?;
            let pod = pods
                .iter()
                .find(|p| !is_deleting(p))
                .map(ResourceExt::name_any);
            Ok((pod, "no pod".to_owned()))
        })
        .await?;
    // The Deployment settles (its pod created, not available), and the passes its changes
    // started are over: from here on, only the pod's change can start one.
    let what = "the Deployment's status to count its unavailable pod";
    stage
        .deployment_where(out, "pod failure", what, |d, _| {
            let status = d.status.clone().unwrap_or_default();
            let observed = status.observed_generation >= d.metadata.generation;
            let counts = (
                status.replicas,
                status.updated_replicas,
                status.unavailable_replicas,
            );
            if observed && counts == (Some(1), Some(1), Some(1)) {
                Ok(())
            } else {
                Err(format!(
                    "observed: {observed}, replicas, updated, unavailable: {counts:?}"
                ))
            }
        })
        .await?;
    stage.operator_idle(out, "pod failure").await?;
    let message = format!("failed to pull image \"{image}\": not found");
    writeln!(out, "  the kubelet reports pod {pod}: ErrImagePull")?;
    let status = json!({"status": {"containerStatuses": [{
        "name": children::CONTAINER, "image": image, "imageID": "", "ready": false,
        "restartCount": 0, "started": false,
        "state": {"waiting": {"reason": "ErrImagePull", "message": message}},
    }]}});
    stage
        .pods
        .patch_status(&pod, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .map_err(api("pod failure"))?;
    stage
        .condition(out, "pod failure", 1, "FailedDeploy")
        .await?;
    let failed = stage.rollouts.get(name).await.map_err(api("pod failure"))?;
    let said = failed.up_to_date().map(|c| c.message.clone());
    let expected = format!("pod {pod}: ErrImagePull: {message}");
    if said.as_deref() != Some(expected.as_str()) {
        return Err(ScenarioError::Unexpected {
            stage: "pod failure",
            expected: format!("the message {expected:?}"),
            found: format!("{said:?}"),
        });
    }
    Ok(())
}

/// The metrics summary printed at the end: passes by phase and outcome, steps, event publishes.
pub fn metrics_summary(registry: &prometheus::Registry) -> String {
    let join = |name: &str, keys: &[&str]| -> String {
        let mut parts: Vec<String> = samples(registry, name)
            .into_iter()
            .filter(|(_, value)| *value > 0.0)
            .map(|(labels, value)| {
                let key: Vec<&str> = keys
                    .iter()
                    .map(|k| labels.get(*k).map(String::as_str).unwrap_or("?"))
                    .collect();
                format!("{} {value}", key.join("/"))
            })
            .collect();
        parts.sort();
        if parts.is_empty() {
            "none".to_owned()
        } else {
            parts.join(", ")
        }
    };
    format!(
        "Metrics (kubeward_*):\n  passes (phase/outcome):    {}\n  steps (step/outcome):      {}\n  events published (type/result): {}\n",
        join("kubeward_reconcile_passes_total", &["phase", "outcome"]),
        join(
            "kubeward_reconcile_step_duration_seconds_count",
            &["step", "outcome"]
        ),
        join("kubeward_event_publishes_total", &["type", "result"]),
    )
}

/// The sum of the samples of `name` whose labels include `labels`.
pub fn metric_sum(registry: &prometheus::Registry, name: &str, labels: &[(&str, &str)]) -> f64 {
    samples(registry, name)
        .into_iter()
        .filter(|(l, _)| {
            labels
                .iter()
                .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, value)| value)
        .sum()
}

fn header(out: &mut dyn Write, n: usize, total: usize, title: &str) -> std::io::Result<()> {
    writeln!(out, "\n[{n}/{total}] {title}")?;
    out.flush()
}

fn api(stage: &'static str) -> impl Fn(kube::Error) -> ScenarioError {
    move |source| ScenarioError::Api { stage, source }
}

/// How long the operator runs no pass before [`drive_pod_failure`] counts it idle.
const IDLE: Duration = Duration::from_millis(300);

/// What every stage works with.
struct Stage<'a> {
    admin: &'a kube::Client,
    operator: &'a RunningOperator,
    options: &'a ScenarioOptions,
    rollouts: Api<Rollout>,
    deployments: Api<Deployment>,
    services: Api<Service>,
    pods: Api<Pod>,
    /// The uid of the Rollout whose events are printed as they appear.
    watched: Mutex<Option<String>>,
    /// The count printed so far of each event, by event name.
    printed: Mutex<HashMap<String, i32>>,
}

impl<'a> Stage<'a> {
    fn new(
        admin: &'a kube::Client,
        operator: &'a RunningOperator,
        options: &'a ScenarioOptions,
    ) -> Self {
        let namespace = &options.namespace;
        Stage {
            admin,
            operator,
            options,
            rollouts: Api::namespaced(admin.clone(), namespace),
            deployments: Api::namespaced(admin.clone(), namespace),
            services: Api::namespaced(admin.clone(), namespace),
            pods: Api::namespaced(admin.clone(), namespace),
            watched: Mutex::new(None),
            printed: Mutex::new(HashMap::new()),
        }
    }

    /// Polls `check` until it yields a value; fails after the stage timeout with the last
    /// description `check` gave.
    async fn wait<T, F, Fut>(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
        what: &str,
        mut check: F,
    ) -> Result<T, ScenarioError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<(Option<T>, String), kube::Error>>,
    {
        let deadline = Instant::now() + self.options.stage_timeout;
        loop {
            self.operator.check_running()?;
            self.print_new_events(out).await?;
            let last = match check().await {
                Ok((Some(value), _)) => {
                    self.print_new_events(out).await?;
                    return Ok(value);
                }
                Ok((None, seen)) => seen,
                Err(error) => format!("request failed: {error}"),
            };
            if Instant::now() >= deadline {
                return Err(ScenarioError::Timeout {
                    stage,
                    what: what.to_owned(),
                    timeout: self.options.stage_timeout,
                    last,
                });
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Creates the Rollout with `image`, `replicas` and `strategy`; its uid.
    async fn create(
        &self,
        out: &mut dyn Write,
        image: &str,
        replicas: i32,
        strategy: Strategy,
    ) -> Result<String, ScenarioError> {
        let name = self.options.name.as_str();
        writeln!(
            out,
            "  $ kubectl apply -f rollout.yaml   # {name}: image {image}, {replicas} replicas, \
             strategy {strategy:?}"
        )?;
        let mut rollout = Rollout::new(
            name,
            RolloutSpec {
                image: image.into(),
                replicas,
                strategy,
                timeout_seconds: 600,
                suspend: false,
            },
        );
        rollout.metadata.namespace = Some(self.options.namespace.clone());
        let created = self
            .rollouts
            .create(&PostParams::default(), &rollout)
            .await
            .map_err(api("create"))?;
        Ok(created.uid().unwrap_or_default())
    }

    /// Rolls out [`BROKEN_IMAGE`] as generation 2 and approves it: its pod cannot pull the
    /// image, the generation fails and is retried with backoff while the pods of `serving` keep
    /// serving.
    async fn fail(
        &self,
        out: &mut dyn Write,
        uid: &str,
        serving: &str,
    ) -> Result<(), ScenarioError> {
        self.set_image(out, "failing image", BROKEN_IMAGE).await?;
        self.condition(out, "failing image", 2, "WaitingForApproval")
            .await?;
        self.approve(out, "failing image", 2).await?;
        self.condition(out, "failing image", 2, "FailedDeploy")
            .await?;
        self.events(out, uid, "failing image", &[("FailedDeploy", "Warning")])
            .await?;
        writeln!(
            out,
            "  the operator retries with backoff; the repeats aggregate into one event series..."
        )?;
        self.series(out, uid, "failing image", "ReconcileFailed", 3)
            .await?;
        self.still_serving(out, "failing image", serving).await?;
        self.live_image(out, "failing image", serving).await?;
        Ok(())
    }

    /// Waits until the operator has no pass in flight and has run none for [`IDLE`].
    async fn operator_idle(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
    ) -> Result<(), ScenarioError> {
        let registry = &self.operator.registry;
        let last = Mutex::new((f64::NAN, Instant::now()));
        self.wait(out, stage, "the operator to be idle", || async {
            let passes = metric_sum(registry, "kubeward_reconcile_passes_total", &[]);
            let in_flight = metric_sum(registry, "kubeward_reconcile_passes_in_flight", &[]);
            let mut last = last.lock().unwrap_or_else(|p| p.into_inner());
            if passes != last.0 || in_flight > 0.0 {
                *last = (passes, Instant::now());
            }
            let idle = last.1.elapsed() >= IDLE;
            Ok((
                idle.then_some(()),
                format!("{passes} passes, {in_flight} in flight"),
            ))
        })
        .await
    }

    /// Waits for `UpToDate` to have `reason` for `generation`, and prints it.
    async fn condition(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
        generation: i64,
        reason: &str,
    ) -> Result<(), ScenarioError> {
        let name = &self.options.name;
        let what = format!("UpToDate reason {reason} for generation {generation}");
        let condition = self
            .wait(out, stage, &what, || async {
                let rollout = self.rollouts.get(name).await?;
                let condition = rollout.up_to_date().cloned();
                let last = condition
                    .as_ref()
                    .map_or("no UpToDate condition".to_owned(), |c| {
                        format!(
                            "UpToDate={} {} (generation {:?}): {}",
                            c.status, c.reason, c.observed_generation, c.message
                        )
                    });
                let reached = condition
                    .filter(|c| c.reason == reason && c.observed_generation == Some(generation));
                Ok((reached, last))
            })
            .await?;
        writeln!(
            out,
            "  status: UpToDate={} {} (generation {generation})",
            condition.status, condition.reason
        )?;
        out.flush()?;
        Ok(())
    }

    /// Approves `generation` with the approval annotation.
    async fn approve(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
        generation: i64,
    ) -> Result<(), ScenarioError> {
        let name = &self.options.name;
        writeln!(
            out,
            "  $ kubectl annotate rollout {name} {APPROVED_GENERATION}={generation} --overwrite"
        )?;
        self.rollouts
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"metadata": {"annotations": {
                    APPROVED_GENERATION: generation.to_string()
                }}})),
            )
            .await
            .map_err(api(stage))?;
        Ok(())
    }

    /// Sets `spec.image`.
    async fn set_image(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
        image: &str,
    ) -> Result<(), ScenarioError> {
        let name = &self.options.name;
        writeln!(
            out,
            "  $ kubectl patch rollout {name} --type merge -p '{{\"spec\":{{\"image\":\"{image}\"}}}}'"
        )?;
        self.rollouts
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"image": image}})),
            )
            .await
            .map_err(api(stage))?;
        Ok(())
    }

    /// The pods labelled with the Rollout's name.
    async fn rollout_pods(&self) -> Result<Vec<Pod>, kube::Error> {
        let selector = format!("{}={}", children::ROLLOUT_LABEL, self.options.name);
        let list = self
            .pods
            .list(&ListParams::default().labels(&selector))
            .await?;
        Ok(list.items)
    }

    /// Waits for the Rollout's Deployment and pods to pass `check` (`Err`: what is missing);
    /// returns them.
    async fn deployment_where<C>(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
        what: &str,
        check: C,
    ) -> Result<(Deployment, Vec<Pod>), ScenarioError>
    where
        C: Fn(&Deployment, &[Pod]) -> Result<(), String>,
    {
        let name = &self.options.name;
        let check = &check;
        self.wait(out, stage, what, || async move {
            let Some(deployment) = self.deployments.get_opt(name).await? else {
                return Ok((None, format!("no Deployment {name}")));
            };
            let pods = self.rollout_pods().await?;
            Ok(match check(&deployment, &pods) {
                Ok(()) => (Some((deployment, pods)), String::new()),
                Err(why) => (None, why),
            })
        })
        .await
    }

    /// Waits for the Deployment to hold `image` paused (the generation staged), and prints it.
    async fn staged(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
        image: &str,
    ) -> Result<(), ScenarioError> {
        let name = &self.options.name;
        let what = format!("Deployment {name} paused with {image}");
        let (_, pods) = self
            .deployment_where(out, stage, &what, |d, _| health::staged(d, image))
            .await?;
        writeln!(
            out,
            "  Deployment {name}: paused with {image} (staged); {} pods",
            pods.len()
        )?;
        Ok(())
    }

    /// Waits for the Service, and prints its port and selector.
    async fn service(&self, out: &mut dyn Write, stage: &'static str) -> Result<(), ScenarioError> {
        let name = &self.options.name;
        let what = format!("Service {name}");
        let service = self
            .wait(out, stage, &what, || async {
                let service = self.services.get_opt(name).await?;
                Ok((service, format!("no Service {name}")))
            })
            .await?;
        let spec = service.spec.unwrap_or_default();
        let ports: Vec<String> = spec
            .ports
            .unwrap_or_default()
            .iter()
            .map(|p| {
                let target = p.target_port.as_ref().map(|t| match t {
                    IntOrString::Int(port) => port.to_string(),
                    IntOrString::String(port) => port.clone(),
                });
                format!("{} -> {}", p.port, target.unwrap_or_default())
            })
            .collect();
        let selector: Vec<String> = spec
            .selector
            .unwrap_or_default()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        writeln!(
            out,
            "  Service {name}: port {}, selecting {}",
            ports.join(", "),
            selector.join(",")
        )?;
        Ok(())
    }

    /// Waits for the Deployment to run `image` on all its replicas, every pod ready, and
    /// prints it as `kubectl describe deployment` does, and its pods.
    async fn rolled_out(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
        image: &str,
    ) -> Result<(), ScenarioError> {
        let name = &self.options.name;
        let what = format!("Deployment {name} rolled out with {image}, its pods all ready");
        let (deployment, pods) = self
            .deployment_where(out, stage, &what, |d, pods| {
                let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
                health::verify(d, image, replicas)?;
                let live: Vec<&Pod> = pods.iter().filter(|p| !is_deleting(p)).collect();
                let ready = live
                    .iter()
                    .filter(|p| health::pod_image(p) == Some(image) && is_ready(p))
                    .count();
                if live.len() == ready && i32::try_from(ready).ok() == Some(replicas) {
                    Ok(())
                } else {
                    Err(format!("{ready} of {} pods ready with {image}", live.len()))
                }
            })
            .await?;
        self.print_deployment(out, &deployment, &pods)
    }

    /// Waits for the Deployment to stay available on the pods of `serving` while a pod of the
    /// new generation cannot pull [`BROKEN_IMAGE`], and prints it.
    async fn still_serving(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
        serving: &str,
    ) -> Result<(), ScenarioError> {
        let what =
            format!("{serving} available on every replica while a pod cannot pull {BROKEN_IMAGE}");
        let (deployment, pods) = self
            .deployment_where(out, stage, &what, |d, pods| {
                let available = d.status.as_ref().and_then(|s| s.available_replicas);
                let replicas = d.spec.as_ref().and_then(|s| s.replicas);
                if health::condition(d, "Available").map(|c| c.0) != Some("True")
                    || available != replicas
                {
                    return Err(format!("{available:?} of {replicas:?} replicas available"));
                }
                match health::pod_failure(pods, BROKEN_IMAGE) {
                    Some(_) => Ok(()),
                    None => Err(format!("no pod of {BROKEN_IMAGE} failing")),
                }
            })
            .await?;
        writeln!(
            out,
            "  the pods of {serving} keep serving; the Deployment stays available:"
        )?;
        self.print_deployment(out, &deployment, &pods)
    }

    fn print_deployment(
        &self,
        out: &mut dyn Write,
        deployment: &Deployment,
        pods: &[Pod],
    ) -> Result<(), ScenarioError> {
        writeln!(
            out,
            "  $ kubectl describe deployment {}   (replicas, conditions)",
            self.options.name
        )?;
        for line in describe_deployment(deployment).lines() {
            writeln!(out, "  {line}")?;
        }
        let mut pods: Vec<&Pod> = pods.iter().filter(|p| !is_deleting(p)).collect();
        pods.sort_by_key(|p| (health::pod_image(p).map(str::to_owned), p.name_any()));
        for pod in pods {
            writeln!(
                out,
                "  pod {}: {} {}",
                pod.name_any(),
                health::pod_image(pod).unwrap_or_default(),
                pod_state(pod)
            )?;
        }
        out.flush()?;
        Ok(())
    }

    /// Deletes the Service, then pauses the Deployment (`kubectl rollout pause`): the operator
    /// owns both (`owns(Deployment, Service)`), so each change starts the Rollout's pass, which
    /// applies them again — the Service as it was, the Deployment resumed.
    async fn restore(&self, out: &mut dyn Write) -> Result<(), ScenarioError> {
        let name = &self.options.name;
        let old = self.services.get(name).await.map_err(api("restore"))?;
        writeln!(
            out,
            "  $ kubectl delete service {name}   # a child of the Rollout"
        )?;
        self.services
            .delete(name, &DeleteParams::default())
            .await
            .map_err(api("restore"))?;
        let what = format!("Service {name} restored");
        self.wait(out, "restore after delete", &what, || async {
            let now = self.services.get_opt(name).await?;
            let restored = now.filter(|s| s.uid() != old.uid());
            Ok((restored.map(|_| ()), format!("Service {name} not restored")))
        })
        .await?;
        writeln!(out, "  Service {name}: restored")?;
        writeln!(out, "  $ kubectl rollout pause deployment {name}")?;
        let paused = self
            .deployments
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"paused": true}})),
            )
            .await
            .map_err(api("restore"))?;
        let paused_at = paused.resource_version();
        let what = format!("Deployment {name} resumed");
        self.deployment_where(out, "restore after pause", &what, |d, _| {
            if d.resource_version() != paused_at && !children::is_paused(d) {
                Ok(())
            } else {
                Err(format!("Deployment {name} paused"))
            }
        })
        .await?;
        writeln!(out, "  Deployment {name}: resumed")?;
        Ok(())
    }

    /// Waits for the Rollout's `status.liveImage` to be `image`, and prints it.
    async fn live_image(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
        image: &str,
    ) -> Result<(), ScenarioError> {
        let name = &self.options.name;
        let what = format!("status.liveImage {image}");
        self.wait(out, stage, &what, || async {
            let rollout = self.rollouts.get(name).await?;
            let live = rollout.status.and_then(|s| s.live_image);
            let last = format!("status.liveImage {live:?}");
            Ok(((live.as_deref() == Some(image)).then_some(()), last))
        })
        .await?;
        writeln!(out, "  status.liveImage: {image}")?;
        Ok(())
    }

    /// Suspends the Rollout and waits for the operator to skip it; what it leaves.
    async fn suspend(&self, out: &mut dyn Write) -> Result<Report, ScenarioError> {
        let name = self.options.name.as_str();
        writeln!(
            out,
            "  $ kubectl patch rollout {name} --type merge -p '{{\"spec\":{{\"suspend\":true}}}}'"
        )?;
        self.rollouts
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"suspend": true}})),
            )
            .await
            .map_err(api("suspend"))?;
        let registry = &self.operator.registry;
        self.wait(
            out,
            "suspend",
            "a skipped pass and kubeward_object_suspended = 1",
            || async {
                let skipped = metric_sum(
                    registry,
                    "kubeward_reconcile_passes_total",
                    &[("phase", "apply"), ("outcome", "skipped")],
                );
                let suspended =
                    metric_sum(registry, "kubeward_object_suspended", &[("name", name)]);
                let last = format!("skipped passes {skipped}, suspended gauge {suspended}");
                Ok(((skipped >= 1.0 && suspended == 1.0).then_some(()), last))
            },
        )
        .await?;
        let suspended = self.rollouts.get(name).await.map_err(api("suspend"))?;
        let (status, reason, observed) = suspended.up_to_date().map_or(("-", "-", 0), |c| {
            (
                c.status.as_str(),
                c.reason.as_str(),
                c.observed_generation.unwrap_or_default(),
            )
        });
        writeln!(
            out,
            "  pass skipped (suspended); UpToDate stays {status} {reason} for generation {observed} \
             while the Rollout is at generation {}",
            suspended.metadata.generation.unwrap_or_default(),
        )?;
        let deployment = self.deployments.get(name).await.map_err(api("suspend"))?;
        Ok(Report {
            events: Vec::new(),
            status: suspended.status.clone().unwrap_or_default(),
            generation: suspended.metadata.generation.unwrap_or_default(),
            deployment,
            metrics: String::new(),
            deleted: false,
        })
    }

    /// Deletes the Rollout and waits for it and its children to be gone.
    async fn delete(&self, out: &mut dyn Write) -> Result<(), ScenarioError> {
        let name = self.options.name.as_str();
        writeln!(out, "  $ kubectl delete rollout {name}")?;
        self.rollouts
            .delete(name, &DeleteParams::default())
            .await
            .map_err(api("delete"))?;
        self.wait(
            out,
            "delete",
            "the Rollout and its children to be gone",
            || async {
                let rollout = self.rollouts.get_opt(name).await?;
                let deployment = self.deployments.get_opt(name).await?;
                let service = self.services.get_opt(name).await?;
                let last = format!(
                    "rollout present: {}, deployment present: {}, service present: {}",
                    rollout.is_some(),
                    deployment.is_some(),
                    service.is_some()
                );
                let gone = rollout.is_none() && deployment.is_none() && service.is_none();
                Ok((gone.then_some(()), last))
            },
        )
        .await?;
        writeln!(
            out,
            "  cleanup deleted Deployment {name} and Service {name}; finalizer {} removed; Rollout gone",
            super::FINALIZER
        )?;
        Ok(())
    }

    /// Prints the events of the watched object as they appear (and series as they grow).
    fn watch_events_of(&self, uid: &str) {
        *self.watched.lock().unwrap_or_else(|p| p.into_inner()) = Some(uid.to_owned());
    }

    async fn print_new_events(&self, out: &mut dyn Write) -> Result<(), ScenarioError> {
        let Some(uid) = self
            .watched
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        else {
            return Ok(());
        };
        let Ok(mut events) = self.events_about(&uid).await else {
            // Progress only: the stage's own checks report failures.
            return Ok(());
        };
        events.sort_by_key(|e| e.event_time.as_ref().map(|t| t.0));
        for event in events {
            let name = event.name_any();
            let count = event.series.as_ref().map_or(1, |s| s.count);
            let before = self
                .printed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(name, count);
            if before.is_some_and(|b| b >= count) {
                continue;
            }
            let repeat = if count > 1 {
                format!(" (x{count})")
            } else {
                String::new()
            };
            writeln!(
                out,
                "  event: {:<7}  {:<18}  {}{repeat}",
                event.type_.as_deref().unwrap_or_default(),
                event.reason.as_deref().unwrap_or_default(),
                event.note.as_deref().unwrap_or_default(),
            )?;
        }
        out.flush()?;
        Ok(())
    }

    /// The events.k8s.io events about the object `uid`.
    async fn stored_events(&self, uid: &str) -> Result<Vec<Event>, ScenarioError> {
        self.events_about(uid).await.map_err(api("events"))
    }

    async fn events_about(&self, uid: &str) -> Result<Vec<Event>, kube::Error> {
        let api: Api<Event> = Api::namespaced(self.admin.clone(), &self.options.namespace);
        let list = api.list(&ListParams::default()).await?;
        Ok(list
            .items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.uid.as_deref()) == Some(uid))
            .collect())
    }

    /// Waits for an event of each (reason, type) about `uid`.
    async fn events(
        &self,
        out: &mut dyn Write,
        uid: &str,
        stage: &'static str,
        expected: &[(&str, &str)],
    ) -> Result<(), ScenarioError> {
        let what = format!("events {expected:?}");
        self.wait(out, stage, &what, || async {
            let events = self.events_about(uid).await?;
            let missing: Vec<String> = expected
                .iter()
                .filter(|(reason, type_)| {
                    !events.iter().any(|e| {
                        e.reason.as_deref() == Some(reason) && e.type_.as_deref() == Some(type_)
                    })
                })
                .map(|(reason, type_)| format!("{type_} {reason}"))
                .collect();
            let last = format!("missing {}", missing.join(", "));
            Ok((missing.is_empty().then_some(()), last))
        })
        .await
    }

    /// Waits for a Warning series `reason` about `uid` with at least `count` occurrences stored.
    async fn series(
        &self,
        out: &mut dyn Write,
        uid: &str,
        stage: &'static str,
        reason: &str,
        count: i32,
    ) -> Result<(), ScenarioError> {
        let what = format!("a Warning {reason} series of at least {count}");
        let stored = self
            .wait(out, stage, &what, || async {
                let events = self.events_about(uid).await?;
                let best = events
                    .iter()
                    .filter(|e| {
                        e.reason.as_deref() == Some(reason) && e.type_.as_deref() == Some("Warning")
                    })
                    .map(|e| e.series.as_ref().map_or(1, |s| s.count))
                    .max();
                let last = format!("{reason} count {best:?}");
                Ok((best.filter(|c| *c >= count), last))
            })
            .await?;
        writeln!(
            out,
            "  Warning {reason} stored with series.count = {stored}"
        )?;
        Ok(())
    }

    /// Prints the events about `uid` as `kubectl describe` does.
    async fn describe(&self, out: &mut dyn Write, uid: &str) -> Result<(), ScenarioError> {
        let events = self.stored_events(uid).await?;
        writeln!(
            out,
            "  $ kubectl describe rollout {}   (events)",
            self.options.name
        )?;
        for line in describe_events(&events, jiff::Timestamp::now()).lines() {
            writeln!(out, "  {line}")?;
        }
        out.flush()?;
        Ok(())
    }
}

fn is_deleting(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

fn is_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// A pod's phase and readiness, or the reason its container waits (`ImagePullBackOff`).
fn pod_state(pod: &Pod) -> String {
    let status = pod.status.clone().unwrap_or_default();
    let waiting = status
        .container_statuses
        .unwrap_or_default()
        .into_iter()
        .find_map(|c| c.state?.waiting?.reason);
    match waiting {
        Some(reason) => reason,
        None => format!(
            "{}, {}",
            status.phase.unwrap_or_default(),
            if is_ready(pod) { "ready" } else { "not ready" }
        ),
    }
}
