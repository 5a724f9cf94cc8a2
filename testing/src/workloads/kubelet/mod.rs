//! The kubelets of the declared nodes: each registers its `Node`, posts its status
//! (`kubelet_node_status.go`) and runs the pods bound to it as a kubelet's pod workers and
//! status manager do (`pkg/kubelet/status`, `kubelet_pods.go` `generateAPIPodStatus`):
//!
//! 1. seen: `Pending`, containers waiting `ContainerCreating` (`PodInitializing` with init
//!    containers), `PodReadyToStartContainers`, `ContainersReady` and `Ready` false;
//! 2. then each init container in turn runs to completion (`Initialized` stays false,
//!    `ContainersNotInitialized`, until they all did), then the containers start: images
//!    pulled (`Pulling`, `Pulled`, `Created`, `Started` events), `Running`, a pod IP, each
//!    container ready at once or after its readiness probe's `initialDelaySeconds` on the
//!    clock; `Ready` also waits for the pod's `readinessGates`;
//! 3. pods that run to completion (`restartPolicy` `Never` or `OnFailure`) then `Succeeded`,
//!    their containers terminated `Completed` with exit code 0;
//! 4. the declared [`PodFault`](crate::PodFault)s are played ([`faults`]): `ErrImagePull` /
//!    `ImagePullBackOff`, `CrashLoopBackOff` with a growing `restartCount` (`Failed` under
//!    `restartPolicy: Never`), `OOMKilled`, never ready;
//! 5. a pod being deleted is removed (grace period 0) once its containers stopped.
//!
//! A kubelet stopped with [`KubeletSwitch`] (`ApiServer::set_node_ready(node, false)`) does
//! nothing: its pods keep their last status and its node's conditions go `Unknown` when the
//! node lifecycle controller notices. Started again, it posts its node `Ready` and syncs its
//! pods.
//!
//! Pods bound to nodes it does not manage (a `Node` a test created itself) are left alone, as
//! a node without a kubelet leaves them.

mod faults;
mod status;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use jiff::Timestamp;
use serde_json::{Value, json};

use super::context::{EventSource, NODES, PODS, is_deleting};
use super::{Controller, Ctx, Keys, WorkerNode};
use crate::registry::State;
use crate::store::{Change, ChangeType, ObjectKey, StorageKey, object_key};
/// The pull error of a fault image (also played by the real tier's KWOK stages).
pub(crate) use faults::pull_error;
use faults::{Backoff, Runtime};

const MANAGER: &str = "kubelet";

/// Which kubelets are stopped, and since when on the clock; shared by the server's handle
/// (`ApiServer::set_node_ready`) and the simulated cluster's task, which it wakes.
#[derive(Debug, Clone, Default)]
pub(crate) struct KubeletSwitch(Arc<SwitchState>);

#[derive(Debug, Default)]
struct SwitchState {
    stopped: Mutex<BTreeMap<String, Timestamp>>,
    wake: tokio::sync::Notify,
}

impl KubeletSwitch {
    fn stopped(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Timestamp>> {
        self.0.stopped.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// When the kubelet of `node` stopped, if it is stopped.
    pub(crate) fn stopped_since(&self, node: &str) -> Option<Timestamp> {
        self.stopped().get(node).copied()
    }

    /// Stops (at `now`) or starts the kubelet of `node`, and wakes the simulated cluster.
    pub(crate) fn set(&self, node: &str, running: bool, now: Timestamp) {
        {
            let mut stopped = self.stopped();
            if running {
                stopped.remove(node);
            } else {
                stopped.entry(node.to_owned()).or_insert(now);
            }
        }
        self.0.wake.notify_one();
    }

    /// Resolves when [`KubeletSwitch::set`] was called since the last time.
    pub(crate) async fn woken(&self) {
        self.0.wake.notified().await;
    }
}

/// What one pod's kubelet remembers between syncs.
#[derive(Debug, Default)]
struct PodMemory {
    uid: String,
    backoff: Backoff,
}

/// The kubelets of the declared nodes: their keys are pods.
#[derive(Debug, Default)]
pub(crate) struct Kubelets {
    nodes: Vec<String>,
    pods: BTreeMap<ObjectKey, PodMemory>,
    /// The images present on each node.
    images: BTreeMap<String, BTreeSet<String>>,
    /// The pods whose containers are being stopped (seen deleting, removed at the next sync).
    stopping: BTreeSet<ObjectKey>,
}

impl Kubelets {
    fn node_of(&self, pod: &Value) -> Option<usize> {
        let node = pod["spec"]["nodeName"].as_str()?;
        self.nodes.iter().position(|n| n == node)
    }
}

/// The conditions a kubelet posts for `node` at `now`.
pub(crate) fn node_conditions(ready: bool, now: &str) -> Vec<Value> {
    let ready = if ready {
        json!({"type": "Ready", "status": "True", "reason": "KubeletReady",
               "message": "kubelet is posting ready status"})
    } else {
        json!({"type": "Ready", "status": "False", "reason": "KubeletNotReady",
               "message": "container runtime network not ready"})
    };
    let mut conditions: Vec<Value> = [
        ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ]
    .into_iter()
    .map(|(type_, reason, message)| {
        json!({"type": type_, "status": "False", "reason": reason, "message": message})
    })
    .chain([ready])
    .collect();
    for condition in &mut conditions {
        condition["lastHeartbeatTime"] = json!(now);
        condition["lastTransitionTime"] = json!(now);
    }
    conditions
}

/// The `Node` a kubelet registers for `node`.
pub(crate) fn node_object(node: &WorkerNode, index: usize, now: &str) -> Value {
    let capacity = json!({
        "cpu": node.cpu, "memory": node.memory, "pods": node.pods.to_string(),
        "ephemeral-storage": "100Gi",
    });
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {
            "name": node.name,
            "labels": node.labels,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake"},
        },
        "spec": {"taints": node.taints, "podCIDR": format!("10.244.{index}.0/24"),
                 "podCIDRs": [format!("10.244.{index}.0/24")]},
        "status": {
            "capacity": capacity, "allocatable": capacity,
            "conditions": node_conditions(node.ready, now),
            "addresses": [{"type": "InternalIP", "address": node_ip(index)},
                          {"type": "Hostname", "address": node.name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64", "operatingSystem": "linux", "osImage": "kubeward",
                "kernelVersion": "6.0.0", "containerRuntimeVersion": "kubeward://0.1",
                "kubeletVersion": "v1.34.12", "kubeProxyVersion": "", "machineID": "",
                "systemUUID": "", "bootID": "",
            },
        },
    })
}

fn node_ip(index: usize) -> String {
    format!("172.18.0.{}", index + 2)
}

/// A deterministic pod IP on the node's pod CIDR, from the pod's uid.
fn pod_ip(pod: &Value, node_index: usize) -> String {
    let uid = pod["metadata"]["uid"].as_str().unwrap_or_default();
    let host = uid
        .bytes()
        .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)))
        % 250
        + 2;
    format!("10.244.{node_index}.{host}")
}

impl Controller for Kubelets {
    fn primary(&self) -> StorageKey {
        PODS.storage()
    }

    fn start(&mut self, ctx: &mut Ctx<'_>) {
        self.nodes = ctx.world.nodes.iter().map(|n| n.name.clone()).collect();
    }

    fn observe(&mut self, change: &Change, _state: &State, keys: &mut Keys) {
        if change.storage == PODS.storage() {
            let key = object_key(&change.object);
            if change.kind == ChangeType::Deleted {
                self.pods.remove(&key);
                self.stopping.remove(&key);
            } else if self.node_of(&change.object).is_some() {
                keys.insert(key);
            }
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let Some(pod) = ctx.get_shared(PODS, &key.0, &key.1) else {
            self.pods.remove(key);
            self.stopping.remove(key);
            return None;
        };
        let index = self.node_of(&pod)?;
        let node = self.nodes[index].clone();
        if ctx.world.kubelets.stopped_since(&node).is_some() {
            return None;
        }
        if is_deleting(&pod) {
            // Killing the containers takes a step: the pod is removed at the next sync, so
            // the controllers see it terminating in between, as they do while a kubelet stops
            // its containers.
            if self.stopping.insert(key.clone()) {
                return Some(ctx.now());
            }
            self.stopping.remove(key);
            let options = json!({"gracePeriodSeconds": 0,
                                 "preconditions": {"uid": pod["metadata"]["uid"]}});
            let _ = ctx.delete(MANAGER, PODS, &key.0, &key.1, &options);
            return None;
        }
        let meta = &pod["metadata"];
        let uid = meta["uid"].as_str().unwrap_or_default();
        let memory = self.pods.entry(key.clone()).or_default();
        if memory.uid != uid {
            *memory = PodMemory {
                uid: uid.to_owned(),
                backoff: Backoff::default(),
            };
        }
        let world = ctx.world;
        let faults = |image: &str| world.fault_for(image).map(|f| f.kind);
        let mut runtime = Runtime {
            now: ctx.now(),
            pod_desc: format!("{}_{}({uid})", key.1, key.0),
            restart_policy: pod["spec"]["restartPolicy"].as_str().unwrap_or("Always"),
            backoff: &mut memory.backoff,
            images: self.images.entry(node.clone()).or_default(),
            faults: &faults,
        };
        let addresses = status::Addresses {
            host_ip: node_ip(index),
            pod_ip: pod_ip(&pod, index),
        };
        let step = status::generate(&pod, &mut runtime, &addresses);
        for event in step.events {
            let source = EventSource {
                component: MANAGER,
                host: Some(&node),
                field_path: Some(event.field_path),
            };
            ctx.event_from(
                &source,
                &pod,
                "Pod",
                event.type_,
                event.reason,
                event.message,
            );
        }
        match ctx.update_status(MANAGER, PODS, &pod, step.status) {
            Ok(_) => step.next,
            // A refused status write is posted again a second later (the status manager's
            // next sync), never at once: a next step due now would loop on the same refusal.
            Err(_) => Some(ctx.now() + jiff::SignedDuration::from_secs(1)),
        }
    }
}

/// The kubelets' node status: each declared node registered at start, and its conditions
/// posted again when they are not what its kubelet reports (after the node lifecycle
/// controller marked them `Unknown`, once the kubelet is started again), with the event
/// `NodeReady`.
#[derive(Debug, Default)]
pub(crate) struct NodeStatus;

impl Controller for NodeStatus {
    fn primary(&self) -> StorageKey {
        NODES.storage()
    }

    fn start(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now_rfc3339();
        let declared = ctx.world.nodes.clone();
        for (index, node) in declared.iter().enumerate() {
            if ctx.get(NODES, "", &node.name).is_none() {
                let _ = ctx.create(MANAGER, NODES, node_object(node, index, &now));
            }
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let world = ctx.world;
        let declared = world.nodes.iter().find(|n| n.name == key.1)?;
        if world.kubelets.stopped_since(&declared.name).is_some() {
            return None;
        }
        let node = ctx.get(NODES, "", &key.1)?;
        let now = ctx.now_rfc3339();
        let old = node["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let same = |a: &Value, b: &Value| a["status"] == b["status"] && a["reason"] == b["reason"];
        let wanted = node_conditions(declared.ready, &now);
        if wanted
            .iter()
            .all(|w| old.iter().any(|o| o["type"] == w["type"] && same(o, w)))
        {
            return None;
        }
        let was_ready = old
            .iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        let mut status = node["status"].clone();
        status["conditions"] = Value::Array(wanted);
        if ctx.update_status(MANAGER, NODES, &node, status).is_ok() && declared.ready && !was_ready
        {
            let source = EventSource {
                component: MANAGER,
                host: Some(&declared.name),
                field_path: None,
            };
            let message = format!("Node {} status is now: NodeReady", declared.name);
            ctx.event_from(&source, &node, "Node", "Normal", "NodeReady", message);
        }
        None
    }
}

#[cfg(test)]
mod tests;
