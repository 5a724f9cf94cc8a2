//! What the Deployment of a `Rollout` and its pods say about a generation: whether it is
//! **staged** (the Deployment controller recorded the paused template), **verified** (it runs,
//! every replica updated and available), still progressing, or **failing** (a pod the kubelet
//! cannot start, a rollout past its progress deadline).
//!
//! - [`rollout_status`] is kubectl's `rollout status` for a Deployment
//!   (`k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go`, `DeploymentStatusViewer`), its
//!   messages byte for byte (without the trailing newline).
//! - [`verify`] adds what `rollout status` takes for granted: the Deployment is not paused, its
//!   `Available` condition is True, and `updatedReplicas == availableReplicas ==
//!   spec.replicas` with no old replica left. Mid-rollout a Deployment may count 3 available
//!   replicas of which only 1 is updated (the old pods are still available): that is not the
//!   generation verified.
//! - [`pod_failure`] reads the pods of the generation (the pods with the Rollout's label whose
//!   container `app` runs the generation's image) for a container the kubelet cannot start: its
//!   `state.waiting.reason` is one the kubelet reports for an image it cannot pull
//!   (`pkg/kubelet/images/types.go`), a container that keeps crashing
//!   (`pkg/kubelet/container/sync_result.go`) or one it cannot create
//!   (`pkg/kubelet/kuberuntime/kuberuntime_container.go`).

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

use super::children::{self, CONTAINER};

/// The `Progressing` reason of a Deployment past its progress deadline
/// (`deploymentutil.TimedOutReason`).
pub const TIMED_OUT_REASON: &str = "ProgressDeadlineExceeded";

/// The waiting reasons of a container whose image the kubelet cannot pull.
pub const IMAGE_REASONS: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "ImageInspectError",
    "ErrImageNeverPull",
    "InvalidImageName",
];
/// The waiting reason of a container that keeps exiting.
pub const CRASH_REASON: &str = "CrashLoopBackOff";
/// The waiting reasons of a container the kubelet cannot create or run.
pub const CONTAINER_REASONS: &[&str] = &[
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
    "PreStartHookError",
    "PostStartHookError",
];

/// What kubectl's `rollout status` says about a Deployment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RolloutStatus {
    /// Still rolling out (or its spec not yet observed): the message says why.
    Waiting(String),
    /// `deployment "<name>" successfully rolled out`.
    Done(String),
    /// `deployment "<name>" exceeded its progress deadline`.
    Failed(String),
}

/// kubectl's `rollout status` of `deployment`.
pub fn rollout_status(deployment: &Deployment) -> RolloutStatus {
    let name = deployment.metadata.name.as_deref().unwrap_or_default();
    let generation = deployment.metadata.generation.unwrap_or_default();
    let status = deployment.status.clone().unwrap_or_default();
    if generation > status.observed_generation.unwrap_or_default() {
        return RolloutStatus::Waiting(
            "Waiting for deployment spec update to be observed...".to_owned(),
        );
    }
    if condition(deployment, "Progressing").is_some_and(|(_, reason)| reason == TIMED_OUT_REASON) {
        return RolloutStatus::Failed(format!(
            "deployment {name:?} exceeded its progress deadline"
        ));
    }
    let updated = status.updated_replicas.unwrap_or_default();
    let replicas = status.replicas.unwrap_or_default();
    let available = status.available_replicas.unwrap_or_default();
    if let Some(desired) = deployment.spec.as_ref().and_then(|s| s.replicas)
        && updated < desired
    {
        return RolloutStatus::Waiting(format!(
            "Waiting for deployment {name:?} rollout to finish: {updated} out of {desired} new replicas have been updated..."
        ));
    }
    if replicas > updated {
        return RolloutStatus::Waiting(format!(
            "Waiting for deployment {name:?} rollout to finish: {} old replicas are pending termination...",
            replicas - updated
        ));
    }
    if available < updated {
        return RolloutStatus::Waiting(format!(
            "Waiting for deployment {name:?} rollout to finish: {available} of {updated} updated replicas are available..."
        ));
    }
    RolloutStatus::Done(format!("deployment {name:?} successfully rolled out"))
}

/// The status and reason of `deployment`'s condition `type_`.
pub fn condition<'a>(deployment: &'a Deployment, type_: &str) -> Option<(&'a str, &'a str)> {
    deployment
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.as_str(), c.reason.as_deref().unwrap_or_default()))
}

/// Whether the Deployment controller has recorded `deployment`'s paused template: the
/// generation is staged. `Err` says what is missing.
///
/// # Errors
/// When it is not (yet) staged.
pub fn staged(deployment: &Deployment, image: &str) -> Result<(), String> {
    if !children::is_paused(deployment) {
        return Err("the Deployment is not paused".to_owned());
    }
    if children::image_of(deployment) != Some(image) {
        return Err(format!("the Deployment's template does not run {image}"));
    }
    match rollout_status(deployment) {
        RolloutStatus::Waiting(message) if message.contains("spec update") => Err(message),
        _ => Ok(()),
    }
}

/// Whether `deployment` runs `image` on every one of `replicas` replicas, all updated and
/// available, none old: the generation is verified. `Err` says what is missing (kubectl's
/// message while it rolls out).
///
/// # Errors
/// When it is not (yet) verified.
pub fn verify(deployment: &Deployment, image: &str, replicas: i32) -> Result<(), String> {
    if children::is_paused(deployment) {
        return Err("the Deployment is paused".to_owned());
    }
    if children::image_of(deployment) != Some(image) {
        return Err(format!("the Deployment's template does not run {image}"));
    }
    if let RolloutStatus::Waiting(message) | RolloutStatus::Failed(message) =
        rollout_status(deployment)
    {
        return Err(message);
    }
    let status = deployment.status.clone().unwrap_or_default();
    let counts = (
        status.updated_replicas.unwrap_or_default(),
        status.available_replicas.unwrap_or_default(),
        status.replicas.unwrap_or_default(),
    );
    if counts != (replicas, replicas, replicas) {
        return Err(format!(
            "{} updated, {} available, {} total of {replicas} replicas",
            counts.0, counts.1, counts.2
        ));
    }
    match condition(deployment, "Available") {
        Some(("True", _)) => Ok(()),
        Some((status, reason)) => Err(format!("Available is {status} ({reason})")),
        None => Err("the Deployment reports no Available condition".to_owned()),
    }
}

/// A container of the generation's pods that the kubelet cannot start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodFailure {
    /// The pod.
    pub pod: String,
    /// The container.
    pub container: String,
    /// Its image.
    pub image: String,
    /// The kubelet's reason (`state.waiting.reason`).
    pub reason: String,
    /// The kubelet's message (`state.waiting.message`), possibly empty.
    pub message: String,
}

impl PodFailure {
    /// What the kubelet says: `pod <pod>: <reason>: <message>`.
    pub fn describe(&self) -> String {
        if self.message.is_empty() {
            format!("pod {}: {}", self.pod, self.reason)
        } else {
            format!("pod {}: {}: {}", self.pod, self.reason, self.message)
        }
    }

    /// The failure as it stays while the kubelet retries (its reason alternates between a
    /// failure and its back-off: `ErrImagePull` and `ImagePullBackOff`).
    pub fn summary(&self) -> String {
        let reason = self.reason.as_str();
        if IMAGE_REASONS.contains(&reason) {
            format!("pod {} cannot pull image {}", self.pod, self.image)
        } else if reason == CRASH_REASON {
            format!(
                "container {} of pod {} keeps crashing",
                self.container, self.pod
            )
        } else {
            format!(
                "container {} of pod {} cannot start",
                self.container, self.pod
            )
        }
    }
}

/// Whether `reason` is a waiting reason of a container that does not start by itself.
pub fn is_failure_reason(reason: &str) -> bool {
    IMAGE_REASONS.contains(&reason) || reason == CRASH_REASON || CONTAINER_REASONS.contains(&reason)
}

/// The first failing container (by pod name) among `pods` that run `image` in their container
/// `app` and are not being deleted.
pub fn pod_failure(pods: &[Pod], image: &str) -> Option<PodFailure> {
    let mut generation: Vec<&Pod> = pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| pod_image(p) == Some(image))
        .collect();
    generation.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    generation.into_iter().find_map(|pod| {
        let statuses = pod.status.as_ref()?.container_statuses.as_ref()?;
        statuses.iter().find_map(|status| failing(pod, status))
    })
}

fn failing(pod: &Pod, status: &ContainerStatus) -> Option<PodFailure> {
    let waiting = status.state.as_ref()?.waiting.as_ref()?;
    let reason = waiting.reason.as_deref()?;
    is_failure_reason(reason).then(|| PodFailure {
        pod: pod.metadata.name.clone().unwrap_or_default(),
        container: status.name.clone(),
        image: status.image.clone(),
        reason: reason.to_owned(),
        message: waiting.message.clone().unwrap_or_default(),
    })
}

/// The image of a pod's container `app`, as its spec asks.
pub fn pod_image(pod: &Pod) -> Option<&str> {
    pod.spec
        .as_ref()?
        .containers
        .iter()
        .find(|c| c.name == CONTAINER)?
        .image
        .as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(spec: serde_json::Value, status: serde_json::Value) -> Deployment {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "generation": 2},
            "spec": spec,
            "status": status,
        }))
        .expect("a Deployment")
    }

    fn spec(paused: bool, image: &str) -> serde_json::Value {
        json!({
            "replicas": 3, "paused": paused,
            "selector": {"matchLabels": {"app.kubernetes.io/name": "web"}},
            "template": {"spec": {"containers": [{"name": "app", "image": image}]}},
        })
    }

    fn status(
        updated: i32,
        available: i32,
        replicas: i32,
        available_status: &str,
    ) -> serde_json::Value {
        json!({
            "observedGeneration": 2, "updatedReplicas": updated,
            "availableReplicas": available, "replicas": replicas,
            "conditions": [
                {"type": "Available", "status": available_status, "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"},
            ],
        })
    }

    /// kubectl's `TestDeploymentStatusViewerStatus` (`rollout_status_test.go`): its five cases
    /// (generation, spec replicas, observed generation, replicas, updated, available).
    #[test]
    fn rollout_status_is_kubectls() {
        let cases = [
            (
                (0, 1),
                (1, 1, 0, 1),
                "Waiting for deployment \"web\" rollout to finish: 0 out of 1 new replicas have been updated...",
            ),
            (
                (1, 1),
                (1, 2, 1, 2),
                "Waiting for deployment \"web\" rollout to finish: 1 old replicas are pending termination...",
            ),
            (
                (1, 2),
                (1, 2, 2, 1),
                "Waiting for deployment \"web\" rollout to finish: 1 of 2 updated replicas are available...",
            ),
            (
                (1, 2),
                (1, 2, 2, 2),
                "deployment \"web\" successfully rolled out",
            ),
            (
                (2, 2),
                (1, 2, 2, 2),
                "Waiting for deployment spec update to be observed...",
            ),
        ];
        for ((generation, desired), (observed, replicas, updated, available), message) in cases {
            let mut d = deployment(
                json!({"replicas": desired, "selector": {}, "template": {}}),
                json!({"observedGeneration": observed, "updatedReplicas": updated,
                       "replicas": replicas, "availableReplicas": available}),
            );
            d.metadata.generation = Some(generation);
            let got = rollout_status(&d);
            let text = match &got {
                RolloutStatus::Waiting(m) | RolloutStatus::Done(m) | RolloutStatus::Failed(m) => m,
            };
            assert_eq!(text, message);
            assert_eq!(
                matches!(got, RolloutStatus::Done(_)),
                message.ends_with("rolled out")
            );
        }
        let unobserved = deployment(spec(false, "a:1"), json!({"observedGeneration": 1}));
        assert_eq!(
            rollout_status(&unobserved),
            RolloutStatus::Waiting("Waiting for deployment spec update to be observed...".into())
        );
        let timed_out = deployment(
            spec(false, "a:1"),
            json!({"observedGeneration": 2, "conditions": [
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]}),
        );
        assert_eq!(
            rollout_status(&timed_out),
            RolloutStatus::Failed("deployment \"web\" exceeded its progress deadline".into())
        );
    }

    #[test]
    fn verified_means_every_replica_updated_and_available_and_none_old() {
        let ok = deployment(spec(false, "a:2"), status(3, 3, 3, "True"));
        assert_eq!(verify(&ok, "a:2", 3), Ok(()));
        // koku-service-operator#176: 1 updated, 3 available mid-rollout is not verified.
        let mid = deployment(spec(false, "a:2"), status(1, 3, 4, "True"));
        assert_eq!(
            verify(&mid, "a:2", 3),
            Err("Waiting for deployment \"web\" rollout to finish: 1 out of 3 new replicas have been updated...".into())
        );
        // 3 updated of which 2 available, 1 old pod still available: 3 available, not verified.
        let old_left = deployment(spec(false, "a:2"), status(3, 3, 4, "True"));
        assert!(
            verify(&old_left, "a:2", 3)
                .unwrap_err()
                .contains("1 old replicas")
        );
        let unavailable = deployment(spec(false, "a:2"), status(3, 3, 3, "False"));
        assert_eq!(
            verify(&unavailable, "a:2", 3),
            Err("Available is False (MinimumReplicasAvailable)".into())
        );
        let paused = deployment(spec(true, "a:2"), status(3, 3, 3, "True"));
        assert!(verify(&paused, "a:2", 3).is_err());
        assert!(verify(&ok, "a:3", 3).is_err(), "another image");
        assert!(verify(&ok, "a:2", 4).is_err(), "another replica count");
    }

    #[test]
    fn staged_means_the_paused_template_was_observed() {
        let staged_d = deployment(spec(true, "a:2"), status(0, 3, 3, "True"));
        assert_eq!(staged(&staged_d, "a:2"), Ok(()));
        let unobserved = deployment(spec(true, "a:2"), json!({"observedGeneration": 1}));
        assert!(staged(&unobserved, "a:2").is_err());
        let running = deployment(spec(false, "a:2"), status(3, 3, 3, "True"));
        assert!(staged(&running, "a:2").is_err());
    }

    fn pod(name: &str, image: &str, waiting: Option<(&str, &str)>) -> Pod {
        let state = match waiting {
            Some((reason, message)) => json!({"waiting": {"reason": reason, "message": message}}),
            None => json!({"running": {}}),
        };
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": image}]},
            "status": {"containerStatuses": [{"name": "app", "image": image, "imageID": "",
                "ready": false, "restartCount": 0, "state": state}]},
        }))
        .expect("a Pod")
    }

    #[test]
    fn a_pod_of_the_generation_the_kubelet_cannot_start_is_its_failure() {
        let pods = [
            pod("web-old-1", "a:1", Some(("ImagePullBackOff", "old"))),
            pod("web-new-2", "a:2", None),
            pod("web-new-1", "a:2", Some(("ContainerCreating", ""))),
            pod("web-new-3", "a:2", Some(("ErrImagePull", "not found"))),
        ];
        let failure = pod_failure(&pods, "a:2").expect("a failure");
        assert_eq!(failure.pod, "web-new-3");
        assert_eq!(failure.describe(), "pod web-new-3: ErrImagePull: not found");
        assert_eq!(failure.summary(), "pod web-new-3 cannot pull image a:2");
        let backoff = pod("web-new-3", "a:2", Some(("ImagePullBackOff", "Back-off")));
        let again = pod_failure(&[backoff], "a:2").expect("a failure");
        assert_eq!(
            again.summary(),
            failure.summary(),
            "stable across the back-off"
        );
        assert_eq!(
            pod_failure(&pods[1..3], "a:2"),
            None,
            "creating is not failing"
        );
        let crash = pod("web-c", "a:2", Some(("CrashLoopBackOff", "")));
        assert_eq!(
            pod_failure(&[crash], "a:2").map(|f| (f.describe(), f.summary())),
            Some((
                "pod web-c: CrashLoopBackOff".to_owned(),
                "container app of pod web-c keeps crashing".to_owned()
            ))
        );
    }
}
