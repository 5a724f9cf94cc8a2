//! The pod garbage collector's force deletions (`pkg/controller/podgc/gc_controller.go`), the
//! way out for pods whose kubelet will never confirm their end:
//!
//! - `gcOrphaned`: a pod bound to a node that no longer exists, still missing after the
//!   40 s quarantine on the clock, is marked `Failed` with the condition `DisruptionTarget`
//!   (`DeletionByPodGC`, "PodGC: node no longer exists") and deleted with grace period 0;
//! - `gcTerminating`: a pod being deleted on a node that is not `Ready` and carries the
//!   `node.kubernetes.io/out-of-service` taint is marked `Failed` and deleted with grace
//!   period 0.
//!
//! A pod evicted from an unreachable node without that taint stays `Terminating`, as it does
//! on a cluster. `gcTerminated` (the 12,500 finished pods threshold) and `gcUnscheduledTerminating`
//! are left out.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::context::{NODES, PODS, is_deleting, pods_on_node};
use super::node_lifecycle::ready_status;
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::store::{Change, ObjectKey, StorageKey, object_key};

const MANAGER: &str = "kube-controller-manager";
const OUT_OF_SERVICE: &str = "node.kubernetes.io/out-of-service";
/// How long a missing node is waited for (`quarantineTime`).
const QUARANTINE: SignedDuration = SignedDuration::from_secs(40);

/// The controller: its keys are pods.
#[derive(Debug, Default)]
pub(crate) struct PodGc {
    /// Since when each missing node has been missing.
    missing: BTreeMap<String, Timestamp>,
}

/// `markFailedAndDeletePodWithCondition`.
fn mark_failed_and_delete(ctx: &mut Ctx<'_>, pod: &Value, condition: Option<Value>) {
    if !matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    ) {
        let mut status = pod["status"].clone();
        status["phase"] = json!("Failed");
        if let Some(condition) = condition {
            let mut conditions = status["conditions"].as_array().cloned().unwrap_or_default();
            conditions.retain(|c| c["type"] != condition["type"]);
            conditions.push(condition);
            status["conditions"] = Value::Array(conditions);
        }
        if ctx.update_status(MANAGER, PODS, pod, status).is_err() {
            return;
        }
    }
    let meta = &pod["metadata"];
    let options = json!({"gracePeriodSeconds": 0});
    let _ = ctx.delete(
        MANAGER,
        PODS,
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default(),
        &options,
    );
}

impl Controller for PodGc {
    fn primary(&self) -> StorageKey {
        PODS.storage()
    }

    fn observe(&mut self, change: &Change, state: &State, keys: &mut Keys) {
        if change.storage == PODS.storage() {
            if change.object["spec"]["nodeName"]
                .as_str()
                .is_some_and(|n| !n.is_empty())
            {
                keys.insert(object_key(&change.object));
            }
        } else if change.storage == NODES.storage() {
            keys.extend(pods_on_node(state, &change.object));
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        // Read in place: a pod on a node that is there needs nothing.
        let pod = ctx.get_shared(PODS, &key.0, &key.1)?;
        let node_name = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty())?;
        let Some(node) = ctx.get_shared(NODES, "", node_name) else {
            let since = *self
                .missing
                .entry(node_name.to_owned())
                .or_insert(ctx.now());
            if ctx.now() < since + QUARANTINE {
                return Some(since + QUARANTINE);
            }
            let condition = json!({
                "type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
                "message": "PodGC: node no longer exists", "lastProbeTime": null,
                "lastTransitionTime": ctx.now_rfc3339()});
            mark_failed_and_delete(ctx, &pod, Some(condition));
            return None;
        };
        self.missing.remove(node_name);
        let out_of_service = node["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| t["key"] == OUT_OF_SERVICE);
        if is_deleting(&pod) && ready_status(&node) != Some("True") && out_of_service {
            mark_failed_and_delete(ctx, &pod, None);
        }
        None
    }
}
