//! The rollout reconciler, written with `#[kubeward::reconciler]` and `#[step]`.
//!
//! A `Rollout` `<name>` owns a Deployment `<name>` and a Service `<name>`
//! ([`children`]). A generation is **staged** by applying the Deployment with
//! the generation's pod template and `paused: true`: the Deployment controller records the
//! template and rolls nothing out, so the running pods stay those of the promoted generation
//! while a human decides. It is **promoted** by applying the Deployment again with
//! `paused: false`: the Deployment controller rolls it out, and the generation is **verified**
//! when the Deployment runs it on every replica, all updated and available, none old, `Available`
//! True ([`health::verify`]). A pod of the generation that the kubelet cannot start
//! (`ImagePullBackOff`, `CrashLoopBackOff`, ...) or a Deployment past its progress deadline
//! (`spec.timeoutSeconds`) fails the generation: `FailedDeploy`, naming the pod and the
//! kubelet's reason and message. The pods the old generation runs keep serving meanwhile.
//!
//! Why paused, rather than staging by rendering alone and promoting by applying: it keeps each
//! reason of [`UpToDate`] about the cluster. `Applying` is a write the API server must accept and
//! the Deployment controller must record (a paused Deployment's new template creates no
//! ReplicaSet: `pkg/controller/deployment/sync.go`, `sync` without `createIfNotExisted`), so
//! `RolloutTimeout` means the cluster did not take the generation; `WaitingForApproval` waits
//! with the template in the cluster for a human to inspect (`kubectl diff`, `kubectl get
//! deployment -o yaml`); `Promoting` is the rollout itself, which is where `FailedDeploy` is
//! declared to come from.
//!
//! One pass makes at most one transition of `UpToDate`, so every stage is its own status write
//! and its own event, and `kubectl describe` tells the whole story:
//!
//! | from | pass does | to |
//! |---|---|---|
//! | any, at an older generation | — | `Applying` |
//! | `Applying` | render, apply the paused Deployment and the Service, verify the Deployment controller recorded the template | `WaitingForApproval` (Manual, not approved), `ReadyToPromote`, `FailedDeploy` (an invalid spec), `RolloutTimeout` (not staged within `spec.timeoutSeconds`) |
//! | `WaitingForApproval` | read the approval annotation | `ReadyToPromote` |
//! | `ReadyToPromote` | — | `Promoting` |
//! | `Promoting` | un-pause the Deployment, read it and its pods | `Applied` (verified), `FailedDeploy` (a pod failing, the progress deadline exceeded) |
//! | `FailedDeploy` | as `Promoting`: apply the resumed Deployment, read it and its pods | `Applying` (it runs now), else the failure is retried with backoff |
//! | `Applied` | apply the children again (a deleted or edited child is restored) | — |
//!
//! A pass that fails returns the error as well as setting the condition: the runtime writes the
//! condition, publishes its transition event once, and publishes the error as a `ReconcileFailed`
//! Warning whose repeats (the retries with backoff) aggregate into one event series; its note
//! stays the same while the kubelet alternates between a failure and its back-off.
//!
//! The operator is woken by changes, not by polling: of the Rollout, of its Deployment and
//! Service (`owns`), and of the pods labelled with its name (`watches(Pod, ..)`): a pod the
//! kubelet cannot start changes nothing in the Deployment's status.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Service};
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use kube::runtime::reflector::{ObjectRef, Store};
use kubeward::clock::{SharedClock, SystemClock};
use kubeward::{Action, Pass};

use super::children::{self, ROLLOUT_LABEL, RenderError};
use super::condition::{UpToDate, up_to_date};
use super::health::{self, PodFailure, RolloutStatus};
use super::resource::{APPROVED_GENERATION, Rollout};

/// The controller's name: events' `reportingController` and the `controller` metric label.
pub const CONTROLLER: &str = "demo.kubeward.dev/rollouts";
/// The finalizer that keeps a deleted Rollout until its children are deleted.
pub const FINALIZER: &str = "demo.kubeward.dev/cleanup";
/// How soon the next stage of a rollout runs by default.
pub const DEFAULT_STAGE_DELAY: Duration = Duration::from_secs(2);

/// Why a pass failed. Terminal when its [`RenderError`] is (the derive asks the source).
#[derive(Debug, thiserror::Error, kubeward::Terminal)]
pub enum Error {
    /// The generation cannot be rendered (an invalid spec: terminal, not retried).
    #[error("cannot deploy generation {generation}")]
    Render {
        /// The generation that failed.
        generation: i64,
        /// Why.
        #[source]
        source: RenderError,
    },
    /// The generation was rolled out and fails; retried with backoff while it does.
    #[error("cannot deploy generation {generation}")]
    Deploy {
        /// The generation that failed.
        generation: i64,
        /// Why.
        #[source]
        source: DeployError,
    },
    /// A request to the API server failed; the pass is retried with backoff.
    #[error("API request failed")]
    Api(#[from] kube::Error),
    /// A child could not be applied, read or deleted; the pass is retried with backoff.
    #[error("could not write a child of the Rollout")]
    Child(#[from] kubeward::children::ChildError),
}

/// Why a rolled-out generation fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeployError {
    /// A pod of the generation does not start ([`PodFailure::summary`]).
    #[error("{}", .0.summary())]
    Pod(PodFailure),
    /// The Deployment reports it (kubectl's `rollout status` message).
    #[error("{0}")]
    Deployment(String),
}

impl DeployError {
    /// The condition's message: the kubelet's reason and message for a pod.
    pub fn describe(&self) -> String {
        match self {
            Self::Pod(failure) => failure.describe(),
            Self::Deployment(message) => message.clone(),
        }
    }
}

/// What the Deployment and its pods say about the generation once it is promoted.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// It runs on every replica.
    Verified,
    /// It is still rolling out: why it is not verified yet.
    Progressing(String),
    /// It fails.
    Failed(DeployError),
}

/// The rollout operator. It writes and reads its children through each pass (`owns(Deployment,
/// Service)`) and lists the pods labelled with a Rollout's name with its client (`watches(Pod,
/// ..)` grants the `list`).
pub struct Rollouts {
    client: kube::Client,
    stage_delay: Duration,
    clock: SharedClock,
}

impl Rollouts {
    /// A rollout operator reading pods with `client`, with the default stage delay and the
    /// system clock.
    pub fn new(client: kube::Client) -> Self {
        Self {
            client,
            stage_delay: DEFAULT_STAGE_DELAY,
            clock: Arc::new(SystemClock),
        }
    }

    /// Runs the next stage of a rollout `delay` after the previous one (default
    /// [`DEFAULT_STAGE_DELAY`]; the scripted scenario uses a few milliseconds).
    #[must_use]
    pub fn with_stage_delay(mut self, delay: Duration) -> Self {
        self.stage_delay = delay;
        self
    }

    /// Measures rollout timeouts with `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }
}

/// The Rollout a pod belongs to: the one its [`ROLLOUT_LABEL`] names, in its namespace.
pub fn pod_rollout(pod: &Pod, _rollouts: &Store<Rollout>) -> Option<ObjectRef<Rollout>> {
    let name = pod.labels().get(ROLLOUT_LABEL)?;
    Some(ObjectRef::new(name).within(&pod.namespace()?))
}

// The futures of the stages are boxed: they hold the children's apply futures, large enough that
// an unoptimised build overflows a worker thread's stack polling them inline.
#[kubeward::reconciler(
    resource = Rollout,
    controller = "demo.kubeward.dev/rollouts",
    finalizer = "demo.kubeward.dev/cleanup",
    conditions(UpToDate),
    info(image = "spec.image"),
    owns(Deployment, Service),
    // The pods of its Deployment: a pod the kubelet cannot start starts a pass.
    watches(Pod, map = pod_rollout, labels = "demo.kubeward.dev/rollout"),
    // The one annotation a pass reads: its change (an approval) starts a pass; a change of any
    // other label or annotation, or of the status, starts none.
    reads(annotations("demo.kubeward.dev/approved-generation")),
)]
impl Rollouts {
    async fn apply(&self, rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Error> {
        use up_to_date::{Applying, Promoting, ReadyToPromote, State};

        if rollout.spec.suspend {
            pass.skip("suspended");
            return Ok(Action::await_change());
        }
        let generation = rollout.metadata.generation.unwrap_or_default();
        let name = rollout.name_any();
        let next = Action::requeue(self.stage_delay);
        let state = pass.condition::<UpToDate>();

        // A new generation (re)starts the rollout, whatever stage the previous one was in.
        if state.stored().observed_generation() != Some(generation) {
            let message = format!(
                "rolling out generation {generation}: {} with {} replicas",
                rollout.spec.image, rollout.spec.replicas
            );
            // Every state may go back to `Applying` (`#[transitions]` declares it from each one,
            // and it is the start state), so the run-time-checked `try_to` covers them all.
            if let Some(restart) = state.try_to(UpToDate::Applying, message) {
                pass.set(restart);
            }
            return Ok(next);
        }

        match state {
            State::Applying(now) => Box::pin(self.stage(rollout, pass, now)).await,
            State::WaitingForApproval(now) => {
                if !rollout.approved() {
                    return Ok(Action::await_change());
                }
                pass.set(now.to(
                    ReadyToPromote,
                    format!("generation {generation} was approved"),
                ));
                Ok(next)
            }
            State::ReadyToPromote(now) => {
                pass.set(now.to(
                    Promoting,
                    format!("promoting generation {generation}: resuming Deployment {name}"),
                ));
                Ok(next)
            }
            State::Promoting(now) => Box::pin(self.promoting(rollout, pass, now)).await,
            State::FailedDeploy(now) => match Box::pin(self.promote(rollout, pass)).await? {
                // It runs now (the image was pushed, a node came back): start over.
                Verdict::Verified => {
                    pass.set(now.to(
                        Applying,
                        format!("generation {generation} runs now: rolling it out again"),
                    ));
                    Ok(next)
                }
                // Still failing: the condition stays, the failure event's series grows.
                Verdict::Failed(source) => Err(Error::Deploy { generation, source }),
                Verdict::Progressing(_) => Ok(Action::await_change()),
            },
            // Converged: the children stay as promoted (a deleted or edited one starts this
            // pass, `owns(Deployment, Service)`, and is applied again); wait for a new generation.
            State::Applied(_) => {
                #[step("restore")]
                Box::pin(self.restore(rollout, pass)).await?;
                Ok(Action::await_change())
            }
            // Timed out: wait for a new generation.
            State::RolloutTimeout(_) => Ok(Action::await_change()),
            // At the current generation, the condition has a reason of this vocabulary.
            State::Absent(_) | State::Unrecognized(_) => Ok(next),
        }
    }

    async fn cleanup(&self, rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Error> {
        #[step("delete")]
        children::delete_all(pass, rollout).await?;
        Ok(Action::await_change())
    }

    /// Whether the Rollout is suspended (for the `kubeward_object_suspended` metric).
    fn is_suspended(rollout: &Rollout) -> bool {
        rollout.spec.suspend
    }

    /// Renders the children of the current generation, the Deployment paused or not.
    #[step("render")]
    fn render(&self, rollout: &Rollout, paused: bool) -> Result<children::Rendered, RenderError> {
        children::render(rollout, paused)
    }

    /// `Applying`: stages the generation (the paused Deployment with its template, and the
    /// Service), and once the Deployment controller recorded it, waits for approval or goes on.
    async fn stage(
        &self,
        rollout: &Rollout,
        pass: &mut Pass<Rollout>,
        now: up_to_date::Now<up_to_date::Applying>,
    ) -> Result<Action, Error> {
        use up_to_date::{FailedDeploy, ReadyToPromote, RolloutTimeout, WaitingForApproval};
        let generation = rollout.metadata.generation.unwrap_or_default();
        let name = rollout.name_any();
        let timeout = Duration::from_secs(rollout.spec.timeout_seconds);
        if let Some(since) = now.since()
            && self.clock.now().duration_since(since).as_secs_f64() > timeout.as_secs_f64()
        {
            pass.set(now.to(
                RolloutTimeout,
                format!(
                    "generation {generation} was not staged within {}s",
                    timeout.as_secs()
                ),
            ));
            return Ok(Action::await_change());
        }
        let rendered = match self.render(rollout, true) {
            Ok(rendered) => rendered,
            Err(source) => {
                pass.set(now.to(FailedDeploy, source.to_string()));
                return Err(Error::Render { generation, source });
            }
        };
        #[step("apply")]
        children::apply(pass, &rendered).await?;
        #[step("verify")]
        let (deployment, service) = children::stored(pass, rollout).await?;
        let staged = service.is_some()
            && deployment.is_some_and(|d| health::staged(&d, &rollout.spec.image).is_ok());
        if !staged {
            // The Deployment controller's status update starts the next pass.
            return Ok(Action::requeue(self.stage_delay));
        }
        if rollout.approved() {
            pass.set(now.to(
                ReadyToPromote,
                format!("generation {generation} is staged in the paused Deployment {name}"),
            ));
            return Ok(Action::requeue(self.stage_delay));
        }
        pass.set(now.to(
            WaitingForApproval,
            format!(
                "generation {generation} is staged in the paused Deployment {name}; approve it with: \
                 kubectl annotate rollout {name} {APPROVED_GENERATION}={generation} --overwrite",
            ),
        ));
        Ok(Action::await_change())
    }

    /// `Promoting`: un-pauses the Deployment and follows its rollout to `Applied` or
    /// `FailedDeploy`.
    async fn promoting(
        &self,
        rollout: &Rollout,
        pass: &mut Pass<Rollout>,
        now: up_to_date::Now<up_to_date::Promoting>,
    ) -> Result<Action, Error> {
        use up_to_date::{Applied, FailedDeploy};
        let generation = rollout.metadata.generation.unwrap_or_default();
        match Box::pin(self.promote(rollout, pass)).await? {
            Verdict::Verified => {
                let image = rollout.spec.image.clone();
                pass.set(now.to(
                    Applied,
                    format!(
                        "generation {generation} is live: {image} with {} replicas",
                        rollout.spec.replicas
                    ),
                ));
                pass.set_status_field("liveImage", image);
                Ok(Action::await_change())
            }
            Verdict::Failed(source) => {
                pass.set(now.to(FailedDeploy, source.describe()));
                Err(Error::Deploy { generation, source })
            }
            // The Deployment's and its pods' changes start the next pass.
            Verdict::Progressing(_) => Ok(Action::await_change()),
        }
    }

    /// Applies the un-paused Deployment (and the Service) of the generation, and reads what it
    /// and its pods say.
    #[step("promote")]
    async fn promote(&self, rollout: &Rollout, pass: &Pass<Rollout>) -> Result<Verdict, Error> {
        let generation = rollout.metadata.generation.unwrap_or_default();
        let rendered = self
            .render(rollout, false)
            .map_err(|source| Error::Render { generation, source })?;
        let deployment = children::apply(pass, &rendered).await?;
        let pods = Box::pin(self.pods(rollout)).await?;
        Ok(verdict(&deployment, &pods, rollout))
    }

    /// Applies the children of the promoted generation again: a no-op while they are as
    /// promoted, the restore when one was deleted or edited.
    async fn restore(&self, rollout: &Rollout, pass: &Pass<Rollout>) -> Result<(), Error> {
        let generation = rollout.metadata.generation.unwrap_or_default();
        let rendered = children::render(rollout, false)
            .map_err(|source| Error::Render { generation, source })?;
        children::apply(pass, &rendered).await?;
        Ok(())
    }

    /// The pods labelled with the Rollout's name, in its namespace.
    async fn pods(&self, rollout: &Rollout) -> Result<Vec<Pod>, kube::Error> {
        let api: Api<Pod> = Api::namespaced(
            self.client.clone(),
            &rollout.namespace().unwrap_or_default(),
        );
        let selector = format!("{ROLLOUT_LABEL}={}", rollout.name_any());
        Ok(api
            .list(&ListParams::default().labels(&selector))
            .await?
            .items)
    }
}

/// What `deployment` (as stored after the promoting apply) and `pods` say about `rollout`'s
/// generation: verified first (a pod restarting once does not undo a verified rollout), then
/// failures, then progress.
pub fn verdict(deployment: &Deployment, pods: &[Pod], rollout: &Rollout) -> Verdict {
    let image = rollout.spec.image.as_str();
    if let RolloutStatus::Failed(message) = health::rollout_status(deployment) {
        return Verdict::Failed(DeployError::Deployment(message));
    }
    match health::verify(deployment, image, rollout.spec.replicas) {
        Ok(()) => Verdict::Verified,
        Err(why) => match health::pod_failure(pods, image) {
            Some(failure) => Verdict::Failed(DeployError::Pod(failure)),
            None => Verdict::Progressing(why),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollouts::resource::{RolloutSpec, Strategy};
    use serde_json::json;

    fn rollout() -> Rollout {
        let mut rollout = Rollout::new(
            "web",
            RolloutSpec {
                image: "registry.example/web:broken".into(),
                replicas: 3,
                strategy: Strategy::Manual,
                timeout_seconds: 600,
                suspend: false,
            },
        );
        rollout.metadata.namespace = Some("default".into());
        rollout
    }

    fn deployment(status: serde_json::Value) -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "generation": 3},
            "spec": {"replicas": 3, "paused": false, "selector": {},
                     "template": {"spec": {"containers": [
                         {"name": "app", "image": "registry.example/web:broken"}]}}},
            "status": status,
        }))
        .expect("a Deployment")
    }

    fn pod(reason: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-5d4f-abcde", "labels": {ROLLOUT_LABEL: "web"},
                         "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "registry.example/web:broken"}]},
            "status": {"containerStatuses": [{"name": "app",
                "image": "registry.example/web:broken", "imageID": "", "ready": false,
                "restartCount": 0, "state": {"waiting": {"reason": reason,
                    "message": "Back-off pulling image \"registry.example/web:broken\""}}}]},
        }))
        .expect("a Pod")
    }

    /// Mid-rollout: 1 updated (failing to pull), 3 old available.
    fn mid_rollout() -> Deployment {
        deployment(json!({
            "observedGeneration": 3, "replicas": 4, "updatedReplicas": 1,
            "availableReplicas": 3, "unavailableReplicas": 1,
            "conditions": [{"type": "Available", "status": "True"},
                           {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}],
        }))
    }

    #[test]
    fn a_pod_that_cannot_pull_its_image_fails_the_generation_naming_the_kubelets_reason() {
        let verdict = verdict(&mid_rollout(), &[pod("ImagePullBackOff")], &rollout());
        let Verdict::Failed(error) = verdict else {
            panic!("{verdict:?}")
        };
        assert_eq!(
            error.describe(),
            "pod web-5d4f-abcde: ImagePullBackOff: Back-off pulling image \"registry.example/web:broken\""
        );
        let chain = kubeward::controller::ErrorChain(&Error::Deploy {
            generation: 2,
            source: error,
        })
        .to_string();
        assert_eq!(
            chain,
            "cannot deploy generation 2: pod web-5d4f-abcde cannot pull image registry.example/web:broken"
        );
    }

    #[test]
    fn mid_rollout_without_failures_is_progressing_not_verified() {
        assert_eq!(
            verdict(&mid_rollout(), &[pod("ContainerCreating")], &rollout()),
            Verdict::Progressing(
                "Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated..."
                    .into()
            )
        );
    }

    #[test]
    fn a_deployment_past_its_progress_deadline_fails_the_generation() {
        let timed_out = deployment(json!({
            "observedGeneration": 3,
            "conditions": [{"type": "Progressing", "status": "False",
                            "reason": "ProgressDeadlineExceeded"}],
        }));
        assert_eq!(
            verdict(&timed_out, &[], &rollout()),
            Verdict::Failed(DeployError::Deployment(
                "deployment \"web\" exceeded its progress deadline".into()
            ))
        );
    }

    #[test]
    fn a_deployment_running_the_generation_everywhere_is_verified() {
        let done = deployment(json!({
            "observedGeneration": 3, "replicas": 3, "updatedReplicas": 3,
            "availableReplicas": 3, "readyReplicas": 3,
            "conditions": [{"type": "Available", "status": "True"},
                           {"type": "Progressing", "status": "True",
                            "reason": "NewReplicaSetAvailable"}],
        }));
        assert_eq!(verdict(&done, &[], &rollout()), Verdict::Verified);
    }

    #[test]
    fn pods_map_to_the_rollout_their_label_names() {
        let (reader, _writer) = kube::runtime::reflector::store::<Rollout>();
        assert_eq!(
            pod_rollout(&pod("ErrImagePull"), &reader),
            Some(ObjectRef::new("web").within("default"))
        );
        let mut unlabelled = pod("ErrImagePull");
        unlabelled.metadata.labels = None;
        assert_eq!(pod_rollout(&unlabelled, &reader), None);
    }
}
