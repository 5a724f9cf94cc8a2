//! The node lifecycle controller (`pkg/controller/nodelifecycle/node_lifecycle_controller.go`):
//!
//! - node health (`tryUpdateNodeHealth`): a declared node whose kubelet stopped posting
//!   status (`ApiServer::set_node_ready(node, false)`) has, once `--node-monitor-grace-period`
//!   (50 s in 1.34) passed on the clock, its `Ready`, `MemoryPressure`, `DiskPressure` and
//!   `PIDPressure` conditions set `Unknown`, reason `NodeStatusUnknown`, "Kubelet stopped
//!   posting node status.", the event `NodeNotReady` ("Node x status is now: NodeNotReady"),
//!   and its pods' `Ready` condition set `False` with the event `NodeNotReady` "Node is not
//!   ready" (`MarkPodsNotReady`, `pkg/controller/util/node/controller_utils.go`);
//! - taints (`TaintNodesByCondition` and `doNoExecuteTaintingPass`): a node whose `Ready`
//!   condition is `False` carries `node.kubernetes.io/not-ready`, one whose condition is
//!   `Unknown` (or missing) `node.kubernetes.io/unreachable`, each with effects `NoSchedule`
//!   and `NoExecute`; a ready node carries neither. The taint eviction controller
//!   ([`super::taint_eviction`]) acts on the `NoExecute` ones.
//!
//! Nodes a test created itself have no kubelet here: only their taints follow their `Ready`
//! condition.

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::context::{EventSource, NODES, PODS};
use super::{Controller, Ctx};
use crate::store::{ObjectKey, StorageKey};

const MANAGER: &str = "kube-controller-manager";
/// The recorder's component (`node-controller`).
const COMPONENT: &str = "node-controller";
const NOT_READY: &str = "node.kubernetes.io/not-ready";
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `--node-monitor-grace-period`'s default.
pub(crate) const MONITOR_GRACE_PERIOD: SignedDuration = SignedDuration::from_secs(50);
/// The conditions set `Unknown` when the kubelet stops posting (not `NetworkUnavailable`).
const MONITORED: [&str; 4] = ["Ready", "MemoryPressure", "DiskPressure", "PIDPressure"];

/// The controller: its keys are nodes.
#[derive(Debug, Default)]
pub(crate) struct NodeLifecycle;

/// The status of a node's `Ready` condition (`None` when missing).
pub(crate) fn ready_status(node: &Value) -> Option<&str> {
    node["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
        .and_then(|c| c["status"].as_str())
}

/// The condition taint key a node should carry, from its `Ready` condition.
fn wanted_taint(node: &Value) -> Option<&'static str> {
    match ready_status(node) {
        Some("True") => None,
        Some("False") => Some(NOT_READY),
        _ => Some(UNREACHABLE),
    }
}

impl Controller for NodeLifecycle {
    fn primary(&self) -> StorageKey {
        NODES.storage()
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let node = ctx.get(NODES, "", &key.1)?;
        let next = update_health(ctx, &node);
        let node = ctx.get(NODES, "", &key.1)?;
        update_taints(ctx, &node);
        next
    }
}

/// `tryUpdateNodeHealth` for a declared node whose kubelet is stopped: its conditions
/// `Unknown` once the grace period passed, else when it will have.
fn update_health(ctx: &mut Ctx<'_>, node: &Value) -> Option<Timestamp> {
    let name = node["metadata"]["name"].as_str().unwrap_or_default();
    let world = ctx.world;
    if !world.nodes.iter().any(|n| n.name == name) {
        return None;
    }
    let since = world.kubelets.stopped_since(name)?;
    let deadline = since + MONITOR_GRACE_PERIOD;
    if ctx.now() <= deadline {
        return Some(deadline + SignedDuration::from_nanos(1));
    }
    let now = ctx.now_rfc3339();
    let mut status = node["status"].clone();
    let mut conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    for type_ in MONITORED {
        match conditions.iter_mut().find(|c| c["type"] == type_) {
            Some(c) if c["status"] == "Unknown" => {}
            Some(c) => {
                c["status"] = json!("Unknown");
                c["reason"] = json!("NodeStatusUnknown");
                c["message"] = json!("Kubelet stopped posting node status.");
                c["lastTransitionTime"] = json!(now);
            }
            None => conditions.push(json!({
                "type": type_, "status": "Unknown", "reason": "NodeStatusNeverUpdated",
                "message": "Kubelet never posted node status.",
                "lastHeartbeatTime": node["metadata"]["creationTimestamp"],
                "lastTransitionTime": now})),
        }
    }
    let was_ready = ready_status(node) == Some("True");
    status["conditions"] = Value::Array(conditions);
    if ctx.update_status(MANAGER, NODES, node, status).is_ok() && was_ready {
        let source = EventSource::component(COMPONENT);
        let message = format!("Node {name} status is now: NodeNotReady");
        ctx.event_from(&source, node, "Node", "Normal", "NodeNotReady", message);
        mark_pods_not_ready(ctx, name);
    }
    None
}

/// `MarkPodsNotReady`: the `Ready` condition of the pods on `node` set `False`.
fn mark_pods_not_ready(ctx: &mut Ctx<'_>, node: &str) {
    let now = ctx.now_rfc3339();
    let pods: Vec<Value> = ctx
        .list(PODS, None)
        .into_iter()
        .filter(|p| p["spec"]["nodeName"] == node)
        .collect();
    for pod in pods {
        let mut status = pod["status"].clone();
        let Some(ready) = status["conditions"]
            .as_array_mut()
            .and_then(|c| c.iter_mut().find(|c| c["type"] == "Ready"))
        else {
            continue;
        };
        if ready["status"] == "False" {
            continue;
        }
        ready["status"] = json!("False");
        ready["lastTransitionTime"] = json!(now);
        if ctx.update_status(MANAGER, PODS, &pod, status).is_ok() {
            let source = EventSource::component(COMPONENT);
            let message = "Node is not ready".to_owned();
            ctx.event_from(&source, &pod, "Pod", "Warning", "NodeNotReady", message);
        }
    }
}

/// The condition taints (`NoSchedule` and `NoExecute`) of the node's `Ready` condition, the
/// others kept.
fn update_taints(ctx: &mut Ctx<'_>, node: &Value) {
    let wanted = wanted_taint(node);
    let taints = node["spec"]["taints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let is_condition_taint = |t: &Value| {
        (t["key"] == NOT_READY || t["key"] == UNREACHABLE)
            && (t["effect"] == "NoSchedule" || t["effect"] == "NoExecute")
    };
    let mut kept: Vec<Value> = taints
        .iter()
        .filter(|t| !is_condition_taint(t))
        .cloned()
        .collect();
    if let Some(key) = wanted {
        for effect in ["NoSchedule", "NoExecute"] {
            let existing = taints
                .iter()
                .find(|t| t["key"] == key && t["effect"] == effect);
            kept.push(existing.cloned().unwrap_or_else(
                || json!({"key": key, "effect": effect, "timeAdded": ctx.now_rfc3339()}),
            ));
        }
    }
    if kept != taints {
        let mut new = node.clone();
        new["spec"]["taints"] = Value::Array(kept);
        let _ = ctx.update(MANAGER, NODES, node, new, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_condition_taint_follows_the_ready_condition() {
        let node = |status: Value| json!({"status": {"conditions": [{"type": "Ready", "status": status}]}});
        assert_eq!(wanted_taint(&node(json!("True"))), None);
        assert_eq!(wanted_taint(&node(json!("False"))), Some(NOT_READY));
        assert_eq!(wanted_taint(&node(json!("Unknown"))), Some(UNREACHABLE));
        assert_eq!(wanted_taint(&json!({"status": {}})), Some(UNREACHABLE));
    }
}
