//! [`readiness`]: kstatus' verdict on any object — a dependent a reconciler owns, to feed one
//! of its declared conditions — ported from cli-utils' `status.Compute`
//! (`pkg/kstatus/status/status.go`, `core.go`).
//!
//! The generic rules come first, for every kind: a deletion timestamp is Terminating; a
//! `status.observedGeneration` behind `metadata.generation` is InProgress; a `Reconciling`
//! condition True is InProgress, a `Stalled` condition True is Failed. Then the built-in kinds'
//! own rules (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, Pod, PersistentVolumeClaim,
//! Service, CustomResourceDefinition; ConfigMap and Secret are always Current), with kstatus'
//! messages; other kinds (custom resources) are InProgress while a `Ready` condition is False,
//! else Current.
//!
//! ```
//! use kubeward::kstatus::{Readiness, readiness};
//! let deployment = serde_json::json!({
//!     "apiVersion": "apps/v1", "kind": "Deployment",
//!     "metadata": { "name": "web", "generation": 2 },
//!     "spec": { "replicas": 3 },
//!     "status": { "observedGeneration": 2, "replicas": 3, "updatedReplicas": 3,
//!                 "readyReplicas": 2, "availableReplicas": 2 },
//! });
//! assert_eq!(readiness(&deployment), Readiness::InProgress("Available: 2/3".into()));
//! ```

use serde::Serialize;
use serde_json::Value;

/// kstatus' verdict on an object, with its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// Reconciled: what it asks for is in place.
    Current(String),
    /// Not yet.
    InProgress(String),
    /// It cannot get there without a change (a Deployment past its progress deadline, a failed
    /// Job, a `Stalled` condition).
    Failed(String),
    /// Being deleted.
    Terminating(String),
}

impl Readiness {
    /// Whether it is [`Current`](Readiness::Current).
    pub fn is_current(&self) -> bool {
        matches!(self, Readiness::Current(_))
    }

    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Readiness::Current(m)
            | Readiness::InProgress(m)
            | Readiness::Failed(m)
            | Readiness::Terminating(m) => m,
        }
    }
}

/// kstatus' verdict on `object` (anything that serializes as a Kubernetes object: a typed
/// resource, a `DynamicObject`, JSON), by cli-utils' `status.Compute`: first, for every kind, a
/// deletion timestamp is Terminating, a `status.observedGeneration` behind `metadata.generation`
/// InProgress, a `Reconciling` condition True InProgress and a `Stalled` condition True Failed;
/// then the built-in kinds' own rules (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, Pod,
/// PersistentVolumeClaim, Service, CustomResourceDefinition; ConfigMap and Secret are always
/// Current) with kstatus' messages; other kinds (custom resources) are InProgress while a
/// `Ready` condition is False, else Current. An object that does not serialize is InProgress,
/// with the error as its message.
pub fn readiness(object: &impl Serialize) -> Readiness {
    match serde_json::to_value(object) {
        Ok(object) => of(&object),
        Err(error) => Readiness::InProgress(format!("the object does not serialize: {error}")),
    }
}

fn of(object: &Value) -> Readiness {
    if let Some(generic) = generic(object) {
        return generic;
    }
    let group = object["apiVersion"]
        .as_str()
        .and_then(|v| v.rsplit_once('/'))
        .map_or("", |(group, _)| group);
    let kind = object["kind"].as_str().unwrap_or_default();
    match (group, kind) {
        ("apps" | "extensions", "Deployment") => deployment(object),
        ("apps", "StatefulSet") => stateful_set(object),
        ("apps" | "extensions", "DaemonSet") => daemon_set(object),
        ("apps" | "extensions", "ReplicaSet") => replica_set(object),
        ("batch", "Job") => job(object),
        ("", "Pod") => pod(object),
        ("", "PersistentVolumeClaim") => pvc(object),
        ("", "Service") => service(object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => crd(object),
        ("", "ConfigMap" | "Secret") | ("batch", "CronJob") | ("policy", "PodDisruptionBudget") => {
            Readiness::Current("ready".into())
        }
        _ => ready_condition(object),
    }
}

/// A number at `pointer`, else `default`.
fn int(object: &Value, pointer: &str, default: i64) -> i64 {
    object
        .pointer(pointer)
        .and_then(Value::as_i64)
        .unwrap_or(default)
}

fn string<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The conditions of `object`'s status as (type, status, reason, message).
fn conditions(object: &Value) -> impl Iterator<Item = (&str, &str, &str, &str)> {
    object["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let field = |name: &str| c[name].as_str().unwrap_or_default();
            (
                field("type"),
                field("status"),
                field("reason"),
                field("message"),
            )
        })
}

/// `checkGenericProperties`: deletion, observedGeneration, `Reconciling` and `Stalled`.
fn generic(object: &Value) -> Option<Readiness> {
    if !string(object, "/metadata/deletionTimestamp").is_empty() {
        return Some(Readiness::Terminating(
            "Resource scheduled for deletion".into(),
        ));
    }
    if let (Some(generation), Some(observed)) = (
        object
            .pointer("/metadata/generation")
            .and_then(Value::as_i64),
        object
            .pointer("/status/observedGeneration")
            .and_then(Value::as_i64),
    ) && generation != observed
    {
        let kind = object["kind"].as_str().unwrap_or_default();
        return Some(Readiness::InProgress(format!(
            "{kind} generation is {generation}, but latest observed generation is {observed}"
        )));
    }
    conditions(object).find_map(|(type_, status, reason, message)| match (type_, status) {
        ("Reconciling", "True") => Some(Readiness::InProgress(if message.is_empty() {
            reason.to_owned()
        } else {
            message.to_owned()
        })),
        ("Stalled", "True") => Some(Readiness::Failed(message.to_owned())),
        _ => None,
    })
}

/// A custom resource: InProgress while `Ready` is False, else Current.
fn ready_condition(object: &Value) -> Readiness {
    match conditions(object).find(|(type_, ..)| *type_ == "Ready") {
        Some((_, "False", reason, message)) => Readiness::InProgress(if message.is_empty() {
            reason.to_owned()
        } else {
            message.to_owned()
        }),
        _ => Readiness::Current("Resource is current".into()),
    }
}

fn deployment(object: &Value) -> Readiness {
    // Without a progress deadline the controller sets no `Progressing` condition.
    let mut progressing = object.pointer("/spec/progressDeadlineSeconds").is_none();
    let mut available = false;
    for (type_, status, reason, message) in conditions(object) {
        match type_ {
            "Progressing" if reason == "ProgressDeadlineExceeded" => {
                return Readiness::Failed(message.to_owned());
            }
            "Progressing" if status == "True" && reason == "NewReplicaSetAvailable" => {
                progressing = true;
            }
            "Available" if status == "True" => available = true,
            _ => {}
        }
    }
    let spec = int(object, "/spec/replicas", 1);
    let replicas = int(object, "/status/replicas", 0);
    let updated = int(object, "/status/updatedReplicas", 0);
    let ready = int(object, "/status/readyReplicas", 0);
    let available_replicas = int(object, "/status/availableReplicas", 0);
    let in_progress = |message: String| Readiness::InProgress(message);
    if spec > replicas {
        return in_progress(format!("Replicas: {replicas}/{spec}"));
    }
    if spec > updated {
        return in_progress(format!("Updated: {updated}/{spec}"));
    }
    if replicas > spec {
        return in_progress(format!("Pending termination: {}", replicas - spec));
    }
    if updated > available_replicas {
        return in_progress(format!("Available: {available_replicas}/{updated}"));
    }
    if spec > ready {
        return in_progress(format!("Ready: {ready}/{spec}"));
    }
    if !progressing {
        return in_progress("ReplicaSet not Available".into());
    }
    if !available {
        return in_progress("Deployment not Available".into());
    }
    Readiness::Current(format!("Deployment is available. Replicas: {replicas}"))
}

fn stateful_set(object: &Value) -> Readiness {
    if string(object, "/spec/updateStrategy/type") == "OnDelete" {
        return Readiness::Current("StatefulSet is using the ondelete update strategy".into());
    }
    let spec = int(object, "/spec/replicas", 1);
    let ready = int(object, "/status/readyReplicas", 0);
    let current = int(object, "/status/currentReplicas", 0);
    let updated = int(object, "/status/updatedReplicas", 0);
    let replicas = int(object, "/status/replicas", 0);
    let partition = int(object, "/spec/updateStrategy/rollingUpdate/partition", -1);
    let in_progress = |message: String| Readiness::InProgress(message);
    if spec > replicas {
        return in_progress(format!("Replicas: {replicas}/{spec}"));
    }
    if spec > ready {
        return in_progress(format!("Ready: {ready}/{spec}"));
    }
    if replicas > spec {
        return in_progress(format!("Pending termination: {}", replicas - spec));
    }
    if partition != -1 {
        if updated < spec - partition {
            return in_progress(format!("updated: {updated}/{}", spec - partition));
        }
        return Readiness::Current(format!("Partition rollout complete. updated: {updated}"));
    }
    if spec > current {
        return in_progress(format!("current: {current}/{spec}"));
    }
    if string(object, "/status/currentRevision") != string(object, "/status/updateRevision") {
        return in_progress("Waiting for updated revision to match current".into());
    }
    Readiness::Current(format!(
        "All replicas scheduled as expected. Replicas: {replicas}"
    ))
}

fn daemon_set(object: &Value) -> Readiness {
    let kind = "DaemonSet";
    if object.pointer("/metadata/generation").is_none() {
        return Readiness::InProgress(format!("{kind} metadata.generation not found"));
    }
    if object.pointer("/status/observedGeneration").is_none() {
        return Readiness::InProgress(format!("{kind} status.observedGeneration not found"));
    }
    let desired = int(object, "/status/desiredNumberScheduled", -1);
    if desired == -1 {
        return Readiness::InProgress("Missing .status.desiredNumberScheduled".into());
    }
    for (label, pointer) in [
        ("Current", "/status/currentNumberScheduled"),
        ("Updated", "/status/updatedNumberScheduled"),
        ("Available", "/status/numberAvailable"),
        ("Ready", "/status/numberReady"),
    ] {
        let have = int(object, pointer, 0);
        if desired > have {
            return Readiness::InProgress(format!("{label}: {have}/{desired}"));
        }
    }
    Readiness::Current(format!(
        "All replicas scheduled as expected. Replicas: {desired}"
    ))
}

fn replica_set(object: &Value) -> Readiness {
    if conditions(object).any(|(type_, status, ..)| type_ == "ReplicaFailure" && status == "True") {
        return Readiness::InProgress("Replica Failure condition. Check Pods".into());
    }
    let spec = int(object, "/spec/replicas", 1);
    for (label, pointer) in [
        ("Labelled", "/status/fullyLabeledReplicas"),
        ("Available", "/status/availableReplicas"),
        ("Ready", "/status/readyReplicas"),
    ] {
        let have = int(object, pointer, 0);
        if spec > have {
            return Readiness::InProgress(format!("{label}: {have}/{spec}"));
        }
    }
    let replicas = int(object, "/status/replicas", 0);
    if replicas > spec {
        return Readiness::InProgress(format!("Pending termination: {}", replicas - spec));
    }
    Readiness::Current(format!("ReplicaSet is available. Replicas: {replicas}"))
}

fn job(object: &Value) -> Readiness {
    let parallelism = int(object, "/spec/parallelism", 1);
    let completions = int(object, "/spec/completions", parallelism);
    let succeeded = int(object, "/status/succeeded", 0);
    let active = int(object, "/status/active", 0);
    let failed = int(object, "/status/failed", 0);
    for (type_, status, ..) in conditions(object) {
        match (type_, status) {
            ("Complete", "True") => {
                return Readiness::Current(format!(
                    "Job Completed. succeeded: {succeeded}/{completions}"
                ));
            }
            ("Failed", "True") => {
                return Readiness::Failed(format!("Job Failed. failed: {failed}/{completions}"));
            }
            _ => {}
        }
    }
    if string(object, "/status/startTime").is_empty() {
        return Readiness::InProgress("Job not started".into());
    }
    Readiness::InProgress(format!(
        "Job in progress. success:{succeeded}, active: {active}, failed: {failed}"
    ))
}

fn pod(object: &Value) -> Readiness {
    match string(object, "/status/phase") {
        "Succeeded" => Readiness::Current("Pod completed".into()),
        "Failed" => Readiness::Failed("Pod failed".into()),
        "Running" => {
            if conditions(object).any(|(type_, status, ..)| type_ == "Ready" && status == "True") {
                return Readiness::Current("Pod ready".into());
            }
            let crash_looping: Vec<&str> = object["status"]["containerStatuses"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["state"]["waiting"]["reason"] == "CrashLoopBackOff")
                .filter_map(|c| c["name"].as_str())
                .collect();
            if crash_looping.is_empty() {
                Readiness::InProgress("Pod is running but is not Ready".into())
            } else {
                Readiness::Failed(format!(
                    "Containers in CrashLoop state: {}",
                    crash_looping.join(",")
                ))
            }
        }
        "Pending" => Readiness::InProgress("Pod is in the Pending phase".into()),
        "" => Readiness::InProgress("Pod phase not available".into()),
        other => Readiness::InProgress(format!("unknown phase {other}")),
    }
}

fn pvc(object: &Value) -> Readiness {
    match object.pointer("/status/phase").and_then(Value::as_str) {
        Some("Bound") => Readiness::Current("PVC is bound".into()),
        phase => Readiness::InProgress(format!(
            "PVC is not Bound. phase: {}",
            phase.unwrap_or("unknown")
        )),
    }
}

fn service(object: &Value) -> Readiness {
    if string(object, "/spec/type") == "LoadBalancer"
        && string(object, "/spec/clusterIP").is_empty()
    {
        return Readiness::InProgress("ClusterIP not set. Service type: LoadBalancer".into());
    }
    Readiness::Current("service ready".into())
}

fn crd(object: &Value) -> Readiness {
    for (type_, status, reason, message) in conditions(object) {
        match (type_, status) {
            ("NamesAccepted", "False") => return Readiness::Failed(message.to_owned()),
            ("Established", "False") if reason != "Installing" => {
                return Readiness::Failed(message.to_owned());
            }
            ("Established", "True") => return Readiness::Current("CRD established".into()),
            _ => {}
        }
    }
    Readiness::InProgress("installing".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(status: Value) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "web", "generation": 1 },
            "spec": { "replicas": 2, "progressDeadlineSeconds": 600 },
            "status": status,
        })
    }

    #[test]
    fn the_generic_rules_come_first() {
        let mut object = deployment(json!({ "observedGeneration": 1 }));
        object["metadata"]["deletionTimestamp"] = json!("2026-12-04T00:00:00Z");
        assert!(matches!(readiness(&object), Readiness::Terminating(_)));
        let stale = deployment(json!({ "observedGeneration": 0 }));
        assert_eq!(
            readiness(&stale),
            Readiness::InProgress(
                "Deployment generation is 1, but latest observed generation is 0".into()
            )
        );
        let stalled = json!({
            "apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout",
            "status": { "conditions": [{ "type": "Stalled", "status": "True", "reason": "X", "message": "stuck" }] },
        });
        assert_eq!(readiness(&stalled), Readiness::Failed("stuck".into()));
    }

    #[test]
    fn a_deployment_is_current_once_every_replica_is_updated_ready_and_available() {
        let rolling = deployment(json!({
            "observedGeneration": 1, "replicas": 2, "updatedReplicas": 1,
            "readyReplicas": 2, "availableReplicas": 2,
        }));
        assert_eq!(
            readiness(&rolling),
            Readiness::InProgress("Updated: 1/2".into())
        );
        let done = deployment(json!({
            "observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
            "readyReplicas": 2, "availableReplicas": 2,
            "conditions": [
                { "type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable" },
                { "type": "Available", "status": "True", "reason": "MinimumReplicasAvailable" },
            ],
        }));
        assert_eq!(
            readiness(&done),
            Readiness::Current("Deployment is available. Replicas: 2".into())
        );
        let stuck = deployment(json!({
            "observedGeneration": 1,
            "conditions": [{ "type": "Progressing", "status": "False",
                             "reason": "ProgressDeadlineExceeded", "message": "too slow" }],
        }));
        assert_eq!(readiness(&stuck), Readiness::Failed("too slow".into()));
    }

    #[test]
    fn jobs_pods_and_claims_follow_their_phase_and_conditions() {
        let job = json!({
            "apiVersion": "batch/v1", "kind": "Job", "spec": { "completions": 3 },
            "status": { "failed": 2, "conditions": [{ "type": "Failed", "status": "True" }] },
        });
        assert_eq!(
            readiness(&job),
            Readiness::Failed("Job Failed. failed: 2/3".into())
        );
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "status": { "phase": "Running", "containerStatuses": [
                { "name": "app", "state": { "waiting": { "reason": "CrashLoopBackOff" } } },
            ] },
        });
        assert_eq!(
            readiness(&pod),
            Readiness::Failed("Containers in CrashLoop state: app".into())
        );
        let claim = json!({ "apiVersion": "v1", "kind": "PersistentVolumeClaim", "status": { "phase": "Pending" } });
        assert_eq!(
            readiness(&claim),
            Readiness::InProgress("PVC is not Bound. phase: Pending".into())
        );
        let config = json!({ "apiVersion": "v1", "kind": "ConfigMap" });
        assert!(readiness(&config).is_current());
    }

    #[test]
    fn a_custom_resource_is_in_progress_while_ready_is_false() {
        let mut object = json!({
            "apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout",
            "metadata": { "generation": 2 },
            "status": { "observedGeneration": 2, "conditions": [
                { "type": "Ready", "status": "False", "reason": "WaitingForApproval", "message": "approve it" },
            ] },
        });
        assert_eq!(
            readiness(&object),
            Readiness::InProgress("approve it".into())
        );
        object["status"]["conditions"][0]["status"] = json!("True");
        assert!(readiness(&object).is_current());
    }
}
