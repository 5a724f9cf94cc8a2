//! The taint eviction controller (`pkg/controller/tainteviction/taint_eviction.go`): a pod on
//! a node with `NoExecute` taints is deleted at once when it does not tolerate them all, after
//! the least `tolerationSeconds` of the tolerations it uses when it does (never when none of
//! them has `tolerationSeconds`), counted from when the controller first saw it so. Before the
//! deletion: the event `TaintManagerEviction` "Marking for deletion Pod ns/name" and the
//! condition `DisruptionTarget` (`DeletionByTaintManager`, "Taint manager: deleting due to
//! NoExecute taint"); a scheduled deletion the taints no longer call for is cancelled with
//! "Cancelling deletion of Pod ns/name".
//!
//! Pods get their `node.kubernetes.io/not-ready` and `unreachable` tolerations of 300 s from
//! the `DefaultTolerationSeconds` admission plugin on create ([`crate::kinds`]' pods).

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::context::{EventSource, NODES, PODS, is_deleting, pods_on_node};
use super::scheduler::tolerates;
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::store::{Change, ChangeType, ObjectKey, StorageKey, object_key};

const MANAGER: &str = "kube-controller-manager";
const COMPONENT: &str = "taint-eviction-controller";

/// The controller: its keys are pods.
#[derive(Debug, Default)]
pub(crate) struct TaintEviction {
    /// The pods whose deletion is scheduled, and since when (`CreatedAt`).
    scheduled: BTreeMap<ObjectKey, Timestamp>,
}

/// When a pod on a node with `taints` is to be deleted: `Some(ZERO)` at once, `None` never
/// (`GetMatchingTolerations`, then `getMinTolerationTime` of the tolerations used).
pub(crate) fn toleration_time(taints: &[&Value], tolerations: &[Value]) -> Option<SignedDuration> {
    let mut used = Vec::new();
    for taint in taints {
        match tolerations.iter().find(|t| tolerates(t, taint)) {
            Some(toleration) => used.push(toleration),
            None => return Some(SignedDuration::ZERO),
        }
    }
    if used.is_empty() {
        return Some(SignedDuration::ZERO);
    }
    let seconds = used.iter().filter_map(|t| t["tolerationSeconds"].as_i64());
    seconds.min().map(|s| SignedDuration::from_secs(s.max(0)))
}

impl TaintEviction {
    fn cancel(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey, pod: &Value) {
        if self.scheduled.remove(key).is_some() {
            let message = format!("Cancelling deletion of Pod {}/{}", key.0, key.1);
            let source = EventSource::component(COMPONENT);
            ctx.event_from(
                &source,
                pod,
                "Pod",
                "Normal",
                "TaintManagerEviction",
                message,
            );
        }
    }

    /// `deletePodHandler`: the event, the `DisruptionTarget` condition, the deletion.
    fn evict(ctx: &mut Ctx<'_>, key: &ObjectKey, pod: &Value) {
        let message = format!("Marking for deletion Pod {}/{}", key.0, key.1);
        let source = EventSource::component(COMPONENT);
        ctx.event_from(
            &source,
            pod,
            "Pod",
            "Normal",
            "TaintManagerEviction",
            message,
        );
        let mut status = pod["status"].clone();
        let mut conditions = status["conditions"].as_array().cloned().unwrap_or_default();
        conditions.retain(|c| c["type"] != "DisruptionTarget");
        conditions.push(json!({
            "type": "DisruptionTarget", "status": "True", "reason": "DeletionByTaintManager",
            "message": "Taint manager: deleting due to NoExecute taint",
            "lastProbeTime": null, "lastTransitionTime": ctx.now_rfc3339()}));
        status["conditions"] = Value::Array(conditions);
        let _ = ctx.update_status(MANAGER, PODS, pod, status);
        let _ = ctx.delete(MANAGER, PODS, &key.0, &key.1, &json!({}));
    }
}

impl Controller for TaintEviction {
    fn primary(&self) -> StorageKey {
        PODS.storage()
    }

    fn observe(&mut self, change: &Change, state: &State, keys: &mut Keys) {
        if change.storage == PODS.storage() {
            let bound = change.object["spec"]["nodeName"]
                .as_str()
                .is_some_and(|n| !n.is_empty());
            if bound || change.kind == ChangeType::Deleted {
                keys.insert(object_key(&change.object));
            }
        } else if change.storage == NODES.storage() {
            keys.extend(pods_on_node(state, &change.object));
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        // Read in place: most syncs find no taint and write nothing.
        let Some(pod) = ctx.get_shared(PODS, &key.0, &key.1) else {
            self.scheduled.remove(key);
            return None;
        };
        if is_deleting(&pod) {
            self.scheduled.remove(key);
            return None;
        }
        let node_name = pod["spec"]["nodeName"].as_str().unwrap_or_default();
        let node = ctx.get_shared(NODES, "", node_name)?;
        let taints: Vec<&Value> = node["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["effect"] == "NoExecute")
            .collect();
        let tolerations = pod["spec"]["tolerations"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let wait = if taints.is_empty() {
            None
        } else {
            toleration_time(&taints, tolerations)
        };
        let Some(wait) = wait else {
            self.cancel(ctx, key, &pod);
            return None;
        };
        let since = *self.scheduled.entry(key.clone()).or_insert(ctx.now());
        let at = since + wait;
        if ctx.now() < at {
            return Some(at);
        }
        self.scheduled.remove(key);
        Self::evict(ctx, key, &pod);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_toleration_of_the_tolerations_used_counts() {
        let unreachable = json!({"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"});
        let other = json!({"key": "dedicated", "value": "db", "effect": "NoExecute"});
        let default = json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                             "effect": "NoExecute", "tolerationSeconds": 300});
        let forever = json!({"operator": "Exists"});
        let short = json!({"key": "dedicated", "operator": "Equal", "value": "db",
                           "effect": "NoExecute", "tolerationSeconds": 10});
        assert_eq!(
            toleration_time(&[&unreachable], std::slice::from_ref(&default)),
            Some(SignedDuration::from_secs(300))
        );
        assert_eq!(
            toleration_time(&[&unreachable], &[]),
            Some(SignedDuration::ZERO)
        );
        assert_eq!(
            toleration_time(&[&unreachable, &other], std::slice::from_ref(&default)),
            Some(SignedDuration::ZERO)
        );
        assert_eq!(
            toleration_time(&[&unreachable], std::slice::from_ref(&forever)),
            None
        );
        assert_eq!(
            toleration_time(&[&unreachable, &other], &[default, short]),
            Some(SignedDuration::from_secs(10))
        );
        let negative = json!({"operator": "Exists", "tolerationSeconds": -5});
        assert_eq!(
            toleration_time(&[&other], &[negative]),
            Some(SignedDuration::ZERO)
        );
    }
}
