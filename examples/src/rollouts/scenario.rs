//! The scripted scenario the `rollouts` binary runs by default: create a Rollout, approve and
//! promote it, roll out an image that fails, recover, suspend, delete — printing progress and,
//! after each stage, the events as `kubectl describe rollout` shows them.
//!
//! The scenario checks itself as it goes: each stage waits (bounded by
//! [`ScenarioOptions::stage_timeout`]) for the condition, the events with their types, and the
//! child objects it expects, and fails with what it last saw otherwise.

use std::collections::HashMap;
use std::future::Future;
use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubeward::controller::ControllerError;
use kubeward_testing::{ApiServer, Backend, Cluster, ServerError};
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::children;
use super::describe::describe_events;
use super::operator::{LeaseOptions, Operator, OperatorOptions, SetupError, samples};
use super::resource::{APPROVED_GENERATION, Rollout, RolloutSpec, RolloutStatus, Strategy};

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

/// Starts the embedded API server with the Rollout CRD installed.
///
/// # Errors
/// When the server cannot start or rejects the CRD.
pub async fn embedded_server() -> Result<ApiServer, ServerError> {
    let server = ApiServer::start().await?;
    server.install_crd(&super::operator::crd())?;
    Ok(server)
}

/// Starts the API server `KUBEWARD_TEST_APISERVER` picks (the embedded one unless it says
/// `real`; see [`Cluster`]) with the Rollout CRD installed and established.
///
/// # Errors
/// When the server cannot start or rejects the CRD.
pub async fn cluster() -> Result<Cluster, ServerError> {
    cluster_on(Backend::from_env()?).await
}

/// Starts `backend` with the Rollout CRD installed and established.
///
/// # Errors
/// When the server cannot start or rejects the CRD.
pub async fn cluster_on(backend: Backend) -> Result<Cluster, ServerError> {
    let cluster = Cluster::start_on(backend).await?;
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
    let stage = Stage {
        admin,
        operator,
        options,
        rollouts: Api::namespaced(admin.clone(), &options.namespace),
        config_maps: Api::namespaced(admin.clone(), &options.namespace),
        watched: Mutex::new(None),
        printed: Mutex::new(HashMap::new()),
    };
    let name = options.name.as_str();
    let total = if options.keep { 5 } else { 6 };

    // 1. Create a Rollout that needs approval.
    let image = "registry.example/web:1.0";
    header(out, 1, total, "create a Rollout with manual approval")?;
    writeln!(
        out,
        "  $ kubectl apply -f rollout.yaml   # {name}: image {image}, 3 replicas, strategy Manual"
    )?;
    let mut rollout = Rollout::new(
        name,
        RolloutSpec {
            image: image.into(),
            replicas: 3,
            strategy: Strategy::Manual,
            timeout_seconds: 600,
            suspend: false,
        },
    );
    rollout.metadata.namespace = Some(options.namespace.clone());
    let created = stage
        .rollouts
        .create(&PostParams::default(), &rollout)
        .await
        .map_err(api("create"))?;
    let uid = created.uid().unwrap_or_default();
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
    stage.describe(out, &uid).await?;

    // 2. Approve generation 1: it is promoted.
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
    stage.restore_live(out, image).await?;
    stage.describe(out, &uid).await?;

    // 3. An image that does not resolve: FailedDeploy, and retries with backoff.
    let broken = "registry.example/web:broken";
    header(out, 3, total, "roll out an image that does not exist")?;
    stage.set_image(out, "failing image", broken).await?;
    stage
        .condition(out, "failing image", 2, "FailedDeploy")
        .await?;
    stage
        .events(out, &uid, "failing image", &[("FailedDeploy", "Warning")])
        .await?;
    writeln!(
        out,
        "  the operator retries with backoff; the repeats aggregate into one event series..."
    )?;
    stage
        .series(out, &uid, "failing image", "ReconcileFailed", 3)
        .await?;
    stage.live_image(out, "failing image", image).await?;
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
    stage.describe(out, &uid).await?;

    // 5. Suspend: the operator skips the Rollout.
    header(out, 5, total, "suspend the Rollout")?;
    writeln!(
        out,
        "  $ kubectl patch rollout {name} --type merge -p '{{\"spec\":{{\"suspend\":true}}}}'"
    )?;
    stage
        .rollouts
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"suspend": true}})),
        )
        .await
        .map_err(api("suspend"))?;
    stage
        .wait(
            out,
            "suspend",
            "a skipped pass and kubeward_object_suspended = 1",
            || async {
                let skipped = metric_sum(
                    &operator.registry,
                    "kubeward_reconcile_passes_total",
                    &[("phase", "apply"), ("outcome", "skipped")],
                );
                let suspended = metric_sum(
                    &operator.registry,
                    "kubeward_object_suspended",
                    &[("name", name)],
                );
                let last = format!("skipped passes {skipped}, suspended gauge {suspended}");
                Ok(((skipped >= 1.0 && suspended == 1.0).then_some(()), last))
            },
        )
        .await?;
    let suspended = stage.rollouts.get(name).await.map_err(api("suspend"))?;
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
    let events = stage.stored_events(&uid).await?;
    stage.describe(out, &uid).await?;
    let mut report = Report {
        events,
        status: suspended.status.clone().unwrap_or_default(),
        generation: suspended.metadata.generation.unwrap_or_default(),
        metrics: String::new(),
        deleted: false,
    };

    // 6. Delete: cleanup deletes the children, then the finalizer goes.
    if !options.keep {
        header(out, 6, total, "delete the Rollout")?;
        writeln!(out, "  $ kubectl delete rollout {name}")?;
        stage
            .rollouts
            .delete(name, &DeleteParams::default())
            .await
            .map_err(api("delete"))?;
        let candidate = children::candidate_name(name);
        let live = children::live_name(name);
        stage
            .wait(
                out,
                "delete",
                "the Rollout and its children to be gone",
                || async {
                    let rollout = stage.rollouts.get_opt(name).await?;
                    let candidate = stage.config_maps.get_opt(&candidate).await?;
                    let live = stage.config_maps.get_opt(&live).await?;
                    let last = format!(
                        "rollout present: {}, candidate present: {}, live present: {}",
                        rollout.is_some(),
                        candidate.is_some(),
                        live.is_some()
                    );
                    let gone = rollout.is_none() && candidate.is_none() && live.is_none();
                    Ok((gone.then_some(()), last))
                },
            )
            .await?;
        writeln!(
            out,
            "  cleanup deleted ConfigMaps {candidate} and {live}; finalizer {} removed; Rollout gone",
            super::FINALIZER
        )?;
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

/// What every stage works with.
struct Stage<'a> {
    admin: &'a kube::Client,
    operator: &'a RunningOperator,
    options: &'a ScenarioOptions,
    rollouts: Api<Rollout>,
    config_maps: Api<ConfigMap>,
    /// The uid of the Rollout whose events are printed as they appear.
    watched: Mutex<Option<String>>,
    /// The count printed so far of each event, by event name.
    printed: Mutex<HashMap<String, i32>>,
}

impl Stage<'_> {
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

    /// Deletes the live ConfigMap, then edits the restored one: the operator owns it
    /// (`owns(ConfigMap)`), so each change starts the Rollout's pass, which applies it again.
    async fn restore_live(&self, out: &mut dyn Write, image: &str) -> Result<(), ScenarioError> {
        let live = children::live_name(&self.options.name);
        writeln!(
            out,
            "  $ kubectl delete configmap {live}   # a child of the Rollout"
        )?;
        self.config_maps
            .delete(&live, &DeleteParams::default())
            .await
            .map_err(api("restore"))?;
        self.live_image(out, "restore after delete", image).await?;
        writeln!(
            out,
            "  $ kubectl patch configmap {live} --type merge -p '{{\"data\":{{\"image\":\"edited\"}}}}'"
        )?;
        let edit = serde_json::json!({ "data": { children::IMAGE_KEY: "edited" } });
        self.config_maps
            .patch(&live, &PatchParams::default(), &Patch::Merge(&edit))
            .await
            .map_err(api("restore"))?;
        self.live_image(out, "restore after edit", image).await
    }

    /// Waits for the live ConfigMap to carry `image`, and prints it.
    async fn live_image(
        &self,
        out: &mut dyn Write,
        stage: &'static str,
        image: &str,
    ) -> Result<(), ScenarioError> {
        let live = children::live_name(&self.options.name);
        let what = format!("ConfigMap {live} with image {image}");
        self.wait(out, stage, &what, || async {
            let stored = self.config_maps.get_opt(&live).await?;
            let found = stored
                .as_ref()
                .and_then(children::image_of)
                .map(str::to_owned);
            let last = format!("live image {found:?}");
            Ok(((found.as_deref() == Some(image)).then_some(()), last))
        })
        .await?;
        writeln!(out, "  ConfigMap {live}: image {image}")?;
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
