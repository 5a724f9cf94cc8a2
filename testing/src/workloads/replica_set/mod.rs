//! The ReplicaSet controller (`pkg/controller/replicaset/replica_set.go`,
//! `replica_set_utils.go`, the pod helpers of `pkg/controller/controller_utils.go` and
//! `controller_ref_manager.go`): a ReplicaSet keeps `spec.replicas` active pods that its selector
//! selects.
//!
//! - It claims pods as `ClaimPods` does: an orphan its selector selects (not being deleted) is
//!   adopted (a controller owner reference added), a pod it owns that the selector no longer
//!   selects is released (the reference removed); a ReplicaSet being deleted adopts nothing.
//! - Too few active pods: pods are created from the template (`generateName: <rs>-`, the
//!   template's labels, annotations and finalizers, the controller reference), events
//!   `SuccessfulCreate` `Created pod: <name>` or `FailedCreate` `Error creating: <error>`; the
//!   first failure stops the batch (`slowStartBatch` with a first batch of one).
//! - Too many: the pods first in `ActivePodsWithRanks` order are deleted (unassigned before
//!   assigned, `Pending` < `Unknown` < `Running`, not ready before ready, lower
//!   `controller.kubernetes.io/pod-deletion-cost` first, more pods of the same owner on the node
//!   first, ready for less time first, more restarts first, newer first; times compared on
//!   `LogarithmicScaleDown`'s log-2 scale, ties by uid), events `SuccessfulDelete`
//!   `Deleted pod: <name>`.
//! - Status: `replicas`, `fullyLabeledReplicas`, `readyReplicas`, `availableReplicas` (ready for
//!   `minReadySeconds`, on the server's clock: the ReplicaSet is synced again when the next pod
//!   becomes available), `observedGeneration`, and `ReplicaFailure` (`FailedCreate` /
//!   `FailedDelete` with the error) while creating or deleting fails. `terminatingReplicas` is
//!   not written: `DeploymentReplicaSetTerminatingReplicas` is alpha, off, in 1.34.
//!
//! Reads are of the store itself, not of a lagging informer cache, so upstream's expectations
//! (which keep a sync from acting twice on pods it has not yet seen) have no work to do here.

mod ranking;

use std::cmp::Ordering;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::context::{
    PODS, REPLICA_SETS, controller_ref, controller_uid, is_deleting, is_pod_available,
    is_pod_ready, labels, ready_since, selects, selects_object,
};
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::status::ApiError;
use crate::store::{Change, ObjectKey, StorageKey, object_key};

const MANAGER: &str = "kube-controller-manager";
/// The component of the controller's events.
const COMPONENT: &str = "replicaset-controller";
/// `BurstReplicas`: the most pods created or deleted in one sync.
const BURST_REPLICAS: usize = 500;

/// The controller: its keys are ReplicaSets.
#[derive(Debug, Default)]
pub(crate) struct ReplicaSets;

impl Controller for ReplicaSets {
    fn primary(&self) -> StorageKey {
        REPLICA_SETS.storage()
    }

    fn observe(&mut self, change: &Change, state: &State, keys: &mut Keys) {
        if change.storage == REPLICA_SETS.storage() {
            keys.insert(object_key(&change.object));
        } else if change.storage == PODS.storage() {
            for pod in std::iter::once(&change.object).chain(&change.previous) {
                pod_owners(pod, state, keys);
            }
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let rs = ctx.get(REPLICA_SETS, &key.0, &key.1)?;
        let uid = rs["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        // Its own pods and the orphans it may adopt (the store indexes both).
        let candidates: Vec<Arc<Value>> = ctx
            .owned_shared(PODS, &key.0, &uid)
            .into_iter()
            .chain(ctx.uncontrolled_shared(PODS, &key.0))
            .filter(|pod| is_pod_active(pod))
            .collect();
        let active = claim_pods(ctx, &rs, candidates);
        let mut failure = None;
        if !is_deleting(&rs) {
            failure = manage_replicas(ctx, &rs, &active).err();
        }
        let now = ctx.now();
        let status = calculate_status(&rs, &active, failure.as_ref(), now);
        let updated = update_status(ctx, &rs, status).unwrap_or(rs);
        next_availability_check(&updated, &active, now)
    }
}

/// The keys of the ReplicaSets a pod concerns: its controller's, or, for an orphan, those of its
/// namespace that select it (`getPodReplicaSets`).
fn pod_owners(pod: &Value, state: &State, keys: &mut Keys) {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let owner = pod["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|refs| refs.iter().find(|r| r["controller"] == true));
    match owner {
        Some(owner) => {
            if owner["kind"] == "ReplicaSet"
                && let Some(name) = owner["name"].as_str()
            {
                keys.insert((namespace.to_string(), name.to_string()));
            }
        }
        None => {
            let pod_labels = labels(pod);
            keys.extend(
                state
                    .store
                    .list(&REPLICA_SETS.storage(), Some(namespace))
                    .filter(|rs| selects(&rs["spec"]["selector"], &pod_labels))
                    .map(object_key),
            );
        }
    }
}

/// `IsPodActive`: not finished, not being deleted.
pub(crate) fn is_pod_active(pod: &Value) -> bool {
    !matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    ) && !is_deleting(pod)
}

/// `ClaimPods`: the active pods the ReplicaSet keeps, after adopting and releasing.
fn claim_pods(ctx: &mut Ctx<'_>, rs: &Value, pods: Vec<Arc<Value>>) -> Vec<Arc<Value>> {
    let uid = rs["metadata"]["uid"].as_str().unwrap_or_default();
    let selector = &rs["spec"]["selector"];
    let mut claimed = Vec::new();
    for pod in pods {
        let matches = selects_object(selector, &pod);
        let owned = controller_uid(&pod).is_some();
        if owned && matches {
            claimed.push(pod);
        } else if owned {
            if !is_deleting(rs) {
                let _ = set_controller(ctx, &pod, uid, None);
            }
        } else if matches && !is_deleting(rs) && !is_deleting(&pod) {
            let reference = controller_ref(rs, "apps/v1", "ReplicaSet");
            if let Ok(adopted) = set_controller(ctx, &pod, uid, Some(reference)) {
                claimed.push(Arc::new(adopted));
            }
        }
    }
    claimed
}

/// Adds `reference` to the owner references of `pod` (adoption), or removes those of `uid`
/// (release).
fn set_controller(
    ctx: &mut Ctx<'_>,
    pod: &Value,
    uid: &str,
    reference: Option<Value>,
) -> Result<Value, ApiError> {
    let mut refs: Vec<Value> = pod["metadata"]["ownerReferences"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    refs.retain(|r| r["uid"] != uid);
    refs.extend(reference);
    let mut new = pod.clone();
    if refs.is_empty() {
        if let Some(meta) = new["metadata"].as_object_mut() {
            meta.remove("ownerReferences");
        }
    } else {
        new["metadata"]["ownerReferences"] = Value::Array(refs);
    }
    ctx.update(MANAGER, PODS, pod, new, None)
        .map(Arc::unwrap_or_clone)
}

/// `manageReplicas`: creates or deletes pods to reach `spec.replicas`; the error of the first
/// write that failed.
fn manage_replicas(ctx: &mut Ctx<'_>, rs: &Value, active: &[Arc<Value>]) -> Result<(), ApiError> {
    let wanted = usize::try_from(rs["spec"]["replicas"].as_i64().unwrap_or(1)).unwrap_or(0);
    if active.len() < wanted {
        for _ in 0..(wanted - active.len()).min(BURST_REPLICAS) {
            create_pod(ctx, rs)?;
        }
    } else if active.len() > wanted {
        let diff = (active.len() - wanted).min(BURST_REPLICAS);
        let related = related_pods(ctx, rs);
        let namespace = rs["metadata"]["namespace"].as_str().unwrap_or_default();
        for pod in ranking::pods_to_delete(active, &related, diff, ctx.now()) {
            let name = pod["metadata"]["name"].as_str().unwrap_or_default();
            match ctx.delete(MANAGER, PODS, namespace, name, &json!({})) {
                Ok(_) => {
                    let message = format!("Deleted pod: {name}");
                    ctx.event(
                        COMPONENT,
                        rs,
                        "ReplicaSet",
                        "Normal",
                        "SuccessfulDelete",
                        message,
                    );
                }
                Err(err) if err.code == 404 => {}
                Err(err) => {
                    let message = format!("Error deleting: {}", err.message);
                    ctx.event(
                        COMPONENT,
                        rs,
                        "ReplicaSet",
                        "Warning",
                        "FailedDelete",
                        message,
                    );
                    return Err(err);
                }
            }
        }
    }
    Ok(())
}

/// `GetPodFromTemplate` and `createPods`.
fn create_pod(ctx: &mut Ctx<'_>, rs: &Value) -> Result<(), ApiError> {
    let template = &rs["spec"]["template"];
    let meta = &template["metadata"];
    let name = rs["metadata"]["name"].as_str().unwrap_or_default();
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "generateName": format!("{name}-"),
            "namespace": rs["metadata"]["namespace"],
            "ownerReferences": [controller_ref(rs, "apps/v1", "ReplicaSet")],
        },
        "spec": template["spec"],
    });
    for field in ["labels", "annotations", "finalizers"] {
        if !meta[field].is_null() {
            pod["metadata"][field] = meta[field].clone();
        }
    }
    if meta["labels"]
        .as_object()
        .is_none_or(serde_json::Map::is_empty)
    {
        return Err(ApiError {
            code: 500,
            reason: "InternalError",
            message: "unable to create pods, no labels".into(),
            details: None,
        });
    }
    match ctx.create(MANAGER, PODS, pod) {
        Ok(created) => {
            let message = format!(
                "Created pod: {}",
                created["metadata"]["name"].as_str().unwrap_or_default()
            );
            ctx.event(
                COMPONENT,
                rs,
                "ReplicaSet",
                "Normal",
                "SuccessfulCreate",
                message,
            );
            Ok(())
        }
        Err(err) => {
            let message = format!("Error creating: {}", err.message);
            ctx.event(
                COMPONENT,
                rs,
                "ReplicaSet",
                "Warning",
                "FailedCreate",
                message,
            );
            Err(err)
        }
    }
}

/// `getIndirectlyRelatedPods`: the pods selected by the ReplicaSets that share the
/// ReplicaSet's controller (itself when it has none), each once — read from the pods those
/// ReplicaSets control and the orphans (a pod another controller owns that a sibling's
/// selector also matches is not counted: selectors that overlap across controllers are
/// outside the simulation).
fn related_pods(ctx: &Ctx<'_>, rs: &Value) -> Vec<Value> {
    let namespace = rs["metadata"]["namespace"].as_str().unwrap_or_default();
    let siblings: Vec<Value> = match controller_uid(rs) {
        Some(owner) => ctx.owned(REPLICA_SETS, namespace, owner),
        None => vec![rs.clone()],
    };
    let mut seen = std::collections::BTreeSet::new();
    siblings
        .iter()
        .filter_map(|s| s["metadata"]["uid"].as_str())
        .flat_map(|uid| ctx.owned(PODS, namespace, uid))
        .chain(ctx.uncontrolled(PODS, namespace))
        .filter(|pod| {
            siblings
                .iter()
                .any(|s| selects_object(&s["spec"]["selector"], pod))
        })
        .filter(|pod| seen.insert(pod["metadata"]["uid"].as_str().map(str::to_owned)))
        .collect()
}

/// `calculateStatus`: the counts of the active pods and the `ReplicaFailure` condition.
fn calculate_status(
    rs: &Value,
    active: &[Arc<Value>],
    failure: Option<&ApiError>,
    now: Timestamp,
) -> Value {
    let mut status = rs["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    let template_labels = labels(&rs["spec"]["template"]);
    let min_ready = rs["spec"]["minReadySeconds"].as_i64().unwrap_or(0);
    let fully_labeled = active
        .iter()
        .filter(|p| {
            let pod_labels = labels(p);
            template_labels
                .iter()
                .all(|(k, v)| pod_labels.get(k) == Some(v))
        })
        .count();
    let ready = active.iter().filter(|p| is_pod_ready(p)).count();
    let available = active
        .iter()
        .filter(|p| is_pod_available(p, min_ready, now))
        .count();
    let mut conditions: Vec<Value> = status["conditions"].as_array().cloned().unwrap_or_default();
    let has_failure = conditions.iter().any(|c| c["type"] == "ReplicaFailure");
    match failure {
        Some(err) if !has_failure => {
            let wanted = rs["spec"]["replicas"].as_i64().unwrap_or(1);
            let diff = i64::try_from(active.len()).unwrap_or(i64::MAX) - wanted;
            let reason = match diff.cmp(&0) {
                Ordering::Less => "FailedCreate",
                Ordering::Greater => "FailedDelete",
                Ordering::Equal => "",
            };
            conditions.push(json!({
                "type": "ReplicaFailure", "status": "True", "reason": reason,
                "message": err.message, "lastTransitionTime": crate::object::rfc3339(now),
            }));
        }
        None if has_failure => conditions.retain(|c| c["type"] != "ReplicaFailure"),
        _ => {}
    }
    if conditions.is_empty() {
        if let Some(s) = status.as_object_mut() {
            s.remove("conditions");
        }
    } else {
        status["conditions"] = Value::Array(conditions);
    }
    status["replicas"] = json!(active.len());
    // `replicas` is always written; the other counts are `omitempty`.
    for (key, count) in [
        ("fullyLabeledReplicas", fully_labeled),
        ("readyReplicas", ready),
        ("availableReplicas", available),
    ] {
        if count == 0 {
            if let Some(s) = status.as_object_mut() {
                s.remove(key);
            }
        } else {
            status[key] = json!(count);
        }
    }
    status
}

/// `updateReplicaSetStatus`: writes `status` with `observedGeneration`, unless nothing changed
/// and the generation was observed.
fn update_status(ctx: &mut Ctx<'_>, rs: &Value, mut status: Value) -> Option<Value> {
    let generation = rs["metadata"]["generation"].as_i64().unwrap_or(0);
    let counts = [
        "replicas",
        "fullyLabeledReplicas",
        "readyReplicas",
        "availableReplicas",
    ];
    let old = &rs["status"];
    let count = |s: &Value, k: &str| s[k].as_i64().unwrap_or(0);
    if counts.iter().all(|k| count(old, k) == count(&status, k))
        && old["observedGeneration"].as_i64().unwrap_or(0) == generation
        && old["conditions"] == status["conditions"]
    {
        return Some(rs.clone());
    }
    if generation != 0 {
        status["observedGeneration"] = json!(generation);
    }
    ctx.update_status(MANAGER, REPLICA_SETS, rs, status)
        .ok()
        .map(Arc::unwrap_or_clone)
}

/// When to sync again for `minReadySeconds` (`FindMinNextPodAvailabilityCheck`): as the first
/// ready pod that is not yet available becomes so.
fn next_availability_check(rs: &Value, active: &[Arc<Value>], now: Timestamp) -> Option<Timestamp> {
    let min_ready = rs["spec"]["minReadySeconds"].as_i64().unwrap_or(0);
    let status = &rs["status"];
    if min_ready == 0 || status["readyReplicas"] == status["availableReplicas"] {
        return None;
    }
    active
        .iter()
        .filter(|p| !is_pod_available(p, min_ready, now))
        .filter_map(|p| ready_since(p))
        .map(|since| since + SignedDuration::from_secs(min_ready) + SignedDuration::from_nanos(1))
        .min()
        .map(|at| at.max(now))
}

#[cfg(test)]
mod tests {
    use super::ranking::tests::{at, pod};
    use super::*;

    #[test]
    fn status_counts_labeled_ready_and_available_pods() {
        let now = at("2026-01-01T00:00:10Z");
        let rs = json!({
            "metadata": {"generation": 2},
            "spec": {"replicas": 3, "minReadySeconds": 5,
                     "template": {"metadata": {"labels": {"app": "web", "tier": "fe"}}}},
            "status": {},
        });
        let labelled = |mut p: Value, l: Value| {
            p["metadata"]["labels"] = l;
            p
        };
        let full = json!({"app": "web", "tier": "fe"});
        let active = vec![
            labelled(
                pod("a", "n", "Running", Some("2026-01-01T00:00:00Z")),
                full.clone(),
            ),
            labelled(pod("b", "n", "Running", Some("2026-01-01T00:00:08Z")), full),
            labelled(pod("c", "n", "Pending", None), json!({"app": "web"})),
        ]
        .into_iter()
        .map(Arc::new)
        .collect::<Vec<_>>();
        let status = calculate_status(&rs, &active, None, now);
        assert_eq!(status["replicas"], 3);
        assert_eq!(status["fullyLabeledReplicas"], 2);
        assert_eq!(status["readyReplicas"], 2);
        assert_eq!(status["availableReplicas"], 1);
        let mut written = rs.clone();
        written["status"] = status;
        assert_eq!(
            next_availability_check(&written, &active, now),
            Some(at("2026-01-01T00:00:13.000000001Z"))
        );
        let err = ApiError {
            code: 403,
            reason: "Forbidden",
            message: "quota exceeded".into(),
            details: None,
        };
        let failed = calculate_status(&rs, &active[..1], Some(&err), now);
        assert_eq!(failed["conditions"][0]["reason"], "FailedCreate");
        assert_eq!(failed["conditions"][0]["message"], "quota exceeded");
        let mut rs_failed = rs;
        rs_failed["status"] = failed;
        let healed = calculate_status(&rs_failed, &active, None, now);
        assert!(healed.get("conditions").is_none());
    }
}
