//! kube-scheduler, reduced to its filters and a deterministic score: a pending pod is bound to
//! the node that fits it with the most room left (`NodeResourcesFit` with `LeastAllocated`,
//! ties to the first name); a pod nothing fits gets `PodScheduled: False` with
//! `Unschedulable` and the filters' reasons, counted per node as the framework's
//! `FitError` prints them (`0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't
//! match Pod's node affinity/selector.`), and waits for a node or pod change.
//!
//! Filters (`pkg/scheduler/framework/plugins`): `NodeUnschedulable`, `NodeName`,
//! `TaintToleration` (`NoSchedule` and `NoExecute`), `NodeAffinity` (`nodeSelector` and
//! required node affinity terms), `NodeResourcesFit` (CPU, memory and the pod count from
//! `status.allocatable`, against the requests of the pods bound there that have not
//! finished).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use jiff::Timestamp;
use serde_json::{Value, json};

use super::context::{NODES, PERSISTENT_VOLUME_CLAIMS, PODS, STORAGE_CLASSES, is_deleting, labels};
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::selector::{Operator, Requirement};
use crate::store::{Change, ChangeType, ObjectKey, StorageKey, object_key};
use crate::validation::quantity::Quantity;

const MANAGER: &str = "kube-scheduler";
/// The recorder's reporting controller (the profile's scheduler name).
const COMPONENT: &str = "default-scheduler";
const SCHEDULER_NAME: &str = "default-scheduler";

/// The scheduler: its keys are pods.
#[derive(Debug, Default)]
pub(crate) struct Scheduler {
    /// Pods that fit nowhere at their last attempt: tried again when a node or pod changes.
    unschedulable: BTreeSet<ObjectKey>,
    /// What the pods bound to each node request, kept up to date from the pods' changes (the
    /// scheduler cache's `NodeInfo`).
    usage: Usage,
}

/// The requests of the pods bound to each node, by node and by pod.
#[derive(Debug, Default)]
struct Usage {
    by_node: HashMap<String, Used>,
    by_pod: HashMap<ObjectKey, (String, Used)>,
}

impl Usage {
    /// Accounts `pod` (its latest state; `None` once deleted) under `key`: a pod counts on its
    /// node while it is bound and has not finished.
    fn account(&mut self, key: &ObjectKey, pod: Option<&Value>) {
        self.forget(key);
        let Some(pod) = pod else {
            return;
        };
        let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) else {
            return;
        };
        if !matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        ) {
            self.place(key, pod, node);
        }
    }

    /// Counts `pod`'s requests on `node`.
    fn place(&mut self, key: &ObjectKey, pod: &Value, node: &str) {
        let used = requests(pod);
        self.by_node
            .entry(node.to_string())
            .or_default()
            .add(used, 1);
        self.by_pod.insert(key.clone(), (node.to_string(), used));
    }

    /// Stops counting the pod of `key`.
    fn forget(&mut self, key: &ObjectKey) {
        if let Some((node, used)) = self.by_pod.remove(key)
            && let Some(total) = self.by_node.get_mut(&node)
        {
            total.add(used, -1);
        }
    }
}

/// Whether the scheduler is to place `pod`.
fn wants(pod: &Value) -> bool {
    pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty)
        && pod["spec"]["schedulerName"]
            .as_str()
            .is_none_or(|s| s == SCHEDULER_NAME)
        && !is_deleting(pod)
        && pod["spec"]["schedulingGates"]
            .as_array()
            .is_none_or(Vec::is_empty)
        && !matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        )
}

impl Controller for Scheduler {
    fn primary(&self) -> StorageKey {
        PODS.storage()
    }

    fn resync(&mut self, state: &State) {
        self.usage = Usage::default();
        for pod in state.store.list(&PODS.storage(), None) {
            self.usage.account(&object_key(pod), Some(pod));
        }
    }

    fn observe(&mut self, change: &Change, _state: &State, keys: &mut Keys) {
        if change.storage == PODS.storage() {
            let deleted = change.kind == ChangeType::Deleted;
            let pod = (!deleted).then_some(change.object.as_ref());
            self.usage.account(&object_key(&change.object), pod);
        }
        let frees_room = change.storage == NODES.storage()
            || change.storage == PERSISTENT_VOLUME_CLAIMS.storage()
            || (change.storage == PODS.storage()
                && (change.kind == ChangeType::Deleted || !wants(&change.object)));
        if frees_room && !self.unschedulable.is_empty() {
            keys.append(&mut std::mem::take(&mut self.unschedulable));
        }
        if change.storage == PODS.storage()
            && change.kind != ChangeType::Deleted
            && wants(&change.object)
        {
            keys.insert(object_key(&change.object));
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let pod = ctx.get_shared(PODS, &key.0, &key.1)?;
        if !wants(&pod) {
            return None;
        }
        let node_count = ctx.state.store.list(&NODES.storage(), None).count();
        if let Some(refusal) = unbound_claims(ctx, &pod) {
            let message = prefilter_error(node_count, &refusal);
            self.refuse(ctx, key, &pod, message);
            return None;
        }
        // The nodes are read in place: a pod's filters and score need no copy of them.
        let used = &self.usage.by_node;
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut best: Option<(i128, String)> = None;
        for node in ctx.state.store.list(&NODES.storage(), None) {
            let name = node["metadata"]["name"].as_str().unwrap_or_default();
            match fits(&pod, node, used.get(name)) {
                Ok(score) => {
                    if best.as_ref().is_none_or(|(s, _)| score > *s) {
                        best = Some((score, name.to_string()));
                    }
                }
                Err(reason) => *reasons.entry(reason).or_default() += 1,
            }
        }
        if let Some((_, node)) = best {
            if ctx.bind(&key.0, &key.1, &node).is_ok() {
                // Counted at once: the next pod of this batch is placed knowing it.
                let mut bound = Value::clone(&pod);
                bound["spec"]["nodeName"] = json!(node);
                self.usage.account(key, Some(&bound));
                let message = format!("Successfully assigned {}/{} to {node}", key.0, key.1);
                ctx.event(COMPONENT, &pod, "Pod", "Normal", "Scheduled", message);
            }
            return None;
        }
        let message = fit_error(node_count, &reasons);
        self.refuse(ctx, key, &pod, message);
        None
    }
}

impl Scheduler {
    /// Records that `pod` fits nowhere: `PodScheduled` false, `Unschedulable` with `message`
    /// (once per message, with its `FailedScheduling` event); tried again when a node, a pod
    /// or a claim changes.
    fn refuse(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey, pod: &Value, message: String) {
        self.unschedulable.insert(key.clone());
        let mut status = pod["status"].clone();
        let condition = json!({
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": message, "lastProbeTime": null,
            "lastTransitionTime": ctx.now_rfc3339(),
        });
        let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
        let same = conditions.iter().any(|c| {
            c["type"] == "PodScheduled" && c["reason"] == "Unschedulable" && c["message"] == message
        });
        if !same {
            let mut kept: Vec<Value> = conditions
                .into_iter()
                .filter(|c| c["type"] != "PodScheduled")
                .collect();
            kept.push(condition);
            status["conditions"] = Value::Array(kept);
            if ctx.update_status(MANAGER, PODS, pod, status).is_ok() {
                ctx.event(
                    COMPONENT,
                    pod,
                    "Pod",
                    "Warning",
                    "FailedScheduling",
                    message,
                );
            }
        }
    }
}

/// The `VolumeBinding` plugin's `PreFilter`: a claim the pod mounts that does not exist
/// (`persistentvolumeclaim "x" not found`), or that is unbound while its class binds
/// immediately (`pod has unbound immediate PersistentVolumeClaims`; a `WaitForFirstConsumer`
/// claim is bound for the node the pod gets, [`super::volumes`]).
fn unbound_claims(ctx: &Ctx<'_>, pod: &Value) -> Option<String> {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let volumes = pod["spec"]["volumes"].as_array().into_iter().flatten();
    let mut unbound = false;
    for claim_name in volumes.filter_map(|v| v["persistentVolumeClaim"]["claimName"].as_str()) {
        let Some(claim) = ctx.get(PERSISTENT_VOLUME_CLAIMS, namespace, claim_name) else {
            return Some(format!("persistentvolumeclaim \"{claim_name}\" not found"));
        };
        if claim["spec"]["volumeName"]
            .as_str()
            .is_some_and(|v| !v.is_empty())
        {
            continue;
        }
        let late = claim["spec"]["storageClassName"]
            .as_str()
            .and_then(|class| ctx.get(STORAGE_CLASSES, "", class))
            .is_some_and(|class| class["volumeBindingMode"] == "WaitForFirstConsumer");
        unbound |= !late;
    }
    unbound.then(|| "pod has unbound immediate PersistentVolumeClaims".to_string())
}

/// `FitError.Error()` for a pod a `PreFilter` plugin refused: its message for every node.
fn prefilter_error(nodes: usize, message: &str) -> String {
    format!(
        "0/{nodes} nodes are available: {message}. preemption: 0/{nodes} nodes are available: {nodes} Preemption is not helpful for scheduling."
    )
}

/// `FitError.Error()`: `0/N nodes are available: <count> <reason>, ….` with the reasons
/// sorted, then the preemption plugin's verdict.
fn fit_error(nodes: usize, reasons: &BTreeMap<String, usize>) -> String {
    if nodes == 0 {
        return "no nodes available to schedule pods".into();
    }
    let mut parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
    parts.sort();
    format!(
        "0/{nodes} nodes are available: {}. preemption: 0/{nodes} nodes are available: {nodes} Preemption is not helpful for scheduling.",
        parts.join(", ")
    )
}

/// `DefaultMilliCPURequest`: what the scorer counts for a container that requests no CPU.
const DEFAULT_MILLI_CPU: i128 = 100;
/// `DefaultMemoryRequest` (200 MiB, in milli-units): what the scorer counts for a container
/// that requests no memory.
const DEFAULT_MEMORY: i128 = 200 * 1024 * 1024 * 1000;

/// What pods request (milli-CPU, memory in milli-units, pods), and what the scorer counts of
/// it (the `NodeInfo`'s `NonZeroRequested`: a container without a CPU request counts
/// [`DEFAULT_MILLI_CPU`], one without a memory request [`DEFAULT_MEMORY`],
/// `schedutil.GetNonzeroRequests`), so that pods without requests still spread over nodes.
#[derive(Debug, Default, Clone, Copy)]
struct Used {
    cpu: i128,
    memory: i128,
    pods: i128,
    scored_cpu: i128,
    scored_memory: i128,
}

impl Used {
    /// Adds (`sign` 1) or removes (`sign` -1) one pod's requests.
    fn add(&mut self, pod: Used, sign: i128) {
        self.cpu += sign * pod.cpu;
        self.memory += sign * pod.memory;
        self.pods += sign * pod.pods;
        self.scored_cpu += sign * pod.scored_cpu;
        self.scored_memory += sign * pod.scored_memory;
    }
}

/// A pod's requests: the sum of its containers', or its largest init container's when that
/// is more (`computePodResourceRequest`), for the filter as requested and for the scorer with
/// the non-zero defaults.
fn requests(pod: &Value) -> Used {
    let of = |c: &Value, resource: &str| {
        Quantity::of_json(&c["resources"]["requests"][resource]).map(|q| q.milli_value())
    };
    let one = |c: &Value| {
        let (cpu, memory) = (of(c, "cpu"), of(c, "memory"));
        Used {
            cpu: cpu.unwrap_or(0),
            memory: memory.unwrap_or(0),
            pods: 1,
            // Missing, not zero: an explicit zero request counts as zero.
            scored_cpu: cpu.unwrap_or(DEFAULT_MILLI_CPU),
            scored_memory: memory.unwrap_or(DEFAULT_MEMORY),
        }
    };
    let mut total = Used {
        pods: 1,
        ..Used::default()
    };
    for c in pod["spec"]["containers"].as_array().into_iter().flatten() {
        total.add(one(c), 1);
    }
    total.pods = 1;
    for init in pod["spec"]["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let init = one(init);
        total.cpu = total.cpu.max(init.cpu);
        total.memory = total.memory.max(init.memory);
        total.scored_cpu = total.scored_cpu.max(init.scored_cpu);
        total.scored_memory = total.scored_memory.max(init.scored_memory);
    }
    total
}

/// Whether `pod` fits `node`: the score (the CPU and memory left once it is placed, in
/// thousandths, summed), or the filter's reason as the framework words it.
fn fits(pod: &Value, node: &Value, used: Option<&Used>) -> Result<i128, String> {
    let spec = &pod["spec"];
    let tolerations = spec["tolerations"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if node["spec"]["unschedulable"] == true
        && !tolerations.iter().any(|t| {
            tolerates(
                t,
                &json!({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}),
            )
        })
    {
        return Err("node(s) were unschedulable".into());
    }
    for taint in node["spec"]["taints"].as_array().into_iter().flatten() {
        let effect = taint["effect"].as_str().unwrap_or_default();
        if (effect == "NoSchedule" || effect == "NoExecute")
            && !tolerations.iter().any(|t| tolerates(t, taint))
        {
            let key = taint["key"].as_str().unwrap_or_default();
            let value = taint["value"].as_str().unwrap_or_default();
            return Err(if value.is_empty() {
                format!("node(s) had untolerated taint {{{key}: }}")
            } else {
                format!("node(s) had untolerated taint {{{key}: {value}}}")
            });
        }
    }
    if !required_node_affinity(spec, node) {
        return Err("node(s) didn't match Pod's node affinity/selector".into());
    }
    let allocatable = &node["status"]["allocatable"];
    let capacity = |r: &str| Quantity::of_json(&allocatable[r]).map(|q| q.milli_value());
    let used = used.copied().unwrap_or_default();
    let wanted = requests(pod);
    if let Some(pods) = capacity("pods")
        && (used.pods + 1) * 1000 > pods
    {
        return Err("Too many pods".into());
    }
    // `NodeResourcesFit` filters on the requests as made, and scores (`LeastAllocated`) on
    // the non-zero ones: the share of each resource left, summed.
    let mut score = 0;
    for (name, have, want, taken, scored) in [
        (
            "cpu",
            capacity("cpu"),
            wanted.cpu,
            used.cpu,
            used.scored_cpu + wanted.scored_cpu,
        ),
        (
            "memory",
            capacity("memory"),
            wanted.memory,
            used.memory,
            used.scored_memory + wanted.scored_memory,
        ),
    ] {
        let Some(have) = have else {
            continue;
        };
        if want > 0 && taken + want > have {
            return Err(format!("Insufficient {name}"));
        }
        if have > 0 {
            score += (have - scored).max(0) * 1000 / have;
        }
    }
    Ok(score)
}

/// `v1helper.TolerationsTolerateTaint` for one toleration.
pub(super) fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = toleration["effect"].as_str().unwrap_or_default();
    if !effect.is_empty() && Some(effect) != taint["effect"].as_str() {
        return false;
    }
    let key = toleration["key"].as_str().unwrap_or_default();
    match toleration["operator"].as_str().unwrap_or("Equal") {
        "Exists" => key.is_empty() || Some(key) == taint["key"].as_str(),
        _ => {
            Some(key) == taint["key"].as_str()
                && toleration["value"].as_str().unwrap_or_default()
                    == taint["value"].as_str().unwrap_or_default()
        }
    }
}

/// `nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)`: the pod's `nodeSelector` and its
/// required node affinity both match the node.
pub(super) fn required_node_affinity(spec: &Value, node: &Value) -> bool {
    let node_labels = labels(node);
    let selector_ok = spec["nodeSelector"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| node_labels.get(k).map(String::as_str) == v.as_str());
    let node_name = node["metadata"]["name"].as_str().unwrap_or_default();
    selector_ok && required_affinity(spec, node_name, &node_labels)
}

/// `requiredDuringSchedulingIgnoredDuringExecution`: any of its terms, each all of its
/// expressions on the node's labels and all of its fields (`metadata.name`, as the DaemonSet
/// controller pins its pods) on the node's name.
fn required_affinity(
    spec: &Value,
    node_name: &str,
    node_labels: &BTreeMap<String, String>,
) -> bool {
    let required =
        &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    let Some(terms) = required["nodeSelectorTerms"].as_array() else {
        return true;
    };
    terms.iter().any(|term| {
        term["matchExpressions"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|e| node_requirement(e).is_some_and(|r| r.matches(node_labels)))
            && term["matchFields"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|e| {
                    let fields =
                        BTreeMap::from([("metadata.name".to_string(), node_name.to_string())]);
                    node_requirement(e).is_some_and(|r| r.matches(&fields))
                })
    })
}

fn node_requirement(expression: &Value) -> Option<Requirement> {
    let operator = match expression["operator"].as_str()? {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        "Gt" => Operator::GreaterThan,
        "Lt" => Operator::LessThan,
        _ => return None,
    };
    Some(Requirement {
        key: expression["key"].as_str()?.to_string(),
        operator,
        values: expression["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(labels: Value, taints: Value, cpu: &str) -> Value {
        json!({"metadata": {"name": "n", "labels": labels}, "spec": {"taints": taints},
               "status": {"allocatable": {"cpu": cpu, "memory": "1Gi", "pods": "2"}}})
    }

    #[test]
    fn filters_say_why_a_pod_does_not_fit() {
        let pod = json!({"spec": {"containers": [{"resources": {"requests": {"cpu": "500m"}}}]}});
        let plain = node(json!({}), json!([]), "1");
        assert!(fits(&pod, &plain, None).is_ok());
        let busy = Used {
            cpu: 600,
            pods: 1,
            ..Used::default()
        };
        assert_eq!(
            fits(&pod, &plain, Some(&busy)).unwrap_err(),
            "Insufficient cpu"
        );
        let full = Used {
            pods: 2,
            ..Used::default()
        };
        assert_eq!(
            fits(&pod, &plain, Some(&full)).unwrap_err(),
            "Too many pods"
        );
        let tainted = node(
            json!({}),
            json!([{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
            "1",
        );
        assert_eq!(
            fits(&pod, &tainted, None).unwrap_err(),
            "node(s) had untolerated taint {gpu: yes}"
        );
        let tolerant = json!({"spec": {"tolerations": [{"key": "gpu", "operator": "Exists"}]}});
        assert!(fits(&tolerant, &tainted, None).is_ok());
        let picky = json!({"spec": {"nodeSelector": {"disk": "ssd"}}});
        assert_eq!(
            fits(&picky, &plain, None).unwrap_err(),
            "node(s) didn't match Pod's node affinity/selector"
        );
        let ssd = node(json!({"disk": "ssd"}), json!([]), "1");
        assert!(fits(&picky, &ssd, None).is_ok());
        let affine = json!({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}}}});
        assert!(fits(&affine, &ssd, None).is_ok());
        assert!(fits(&affine, &plain, None).is_err());
    }

    #[test]
    fn pods_without_requests_are_scored_at_the_defaults_so_they_spread() {
        let n = node(json!({}), json!([]), "4");
        let bare = json!({"spec": {"containers": [{"name": "a"}]}});
        let alone = fits(&bare, &n, None).unwrap();
        let mut usage = Usage::default();
        let mut bound = bare.clone();
        bound["spec"]["nodeName"] = json!("n1");
        usage.account(&("d".into(), "a".into()), Some(&bound));
        let beside_one = fits(&bare, &n, usage.by_node.get("n1")).unwrap();
        assert!(beside_one < alone, "{beside_one} < {alone}");
        // The filter still sees nothing requested.
        assert_eq!(
            (usage.by_node["n1"].cpu, usage.by_node["n1"].memory),
            (0, 0)
        );
        assert_eq!(
            (requests(&bare).scored_cpu, requests(&bare).scored_memory),
            (100, 200 * 1024 * 1024 * 1000)
        );
        let zero = json!({"spec": {"containers": [
            {"resources": {"requests": {"cpu": "0", "memory": "0"}}}]}});
        assert_eq!(
            (requests(&zero).scored_cpu, requests(&zero).scored_memory),
            (0, 0),
            "an explicit zero is no missing request"
        );
    }

    #[test]
    fn node_usage_follows_each_pods_binding_and_end() {
        let pod = |node: &str, phase: &str| {
            json!({"spec": {"nodeName": node, "containers": [{"resources": {"requests": {"cpu": "250m"}}}]},
                   "status": {"phase": phase}})
        };
        let (a, b) = (
            ("d".to_string(), "a".to_string()),
            ("d".to_string(), "b".to_string()),
        );
        let mut usage = Usage::default();
        usage.account(&a, Some(&json!({"spec": {}})));
        assert!(usage.by_node.is_empty(), "an unbound pod uses nothing");
        usage.account(&a, Some(&pod("n1", "Pending")));
        usage.account(&b, Some(&pod("n1", "Running")));
        usage.account(&b, Some(&pod("n1", "Running")));
        assert_eq!(
            (usage.by_node["n1"].cpu, usage.by_node["n1"].pods),
            (500, 2),
            "counted once each"
        );
        usage.account(&a, Some(&pod("n1", "Succeeded")));
        assert_eq!(
            (usage.by_node["n1"].cpu, usage.by_node["n1"].pods),
            (250, 1)
        );
        usage.account(&b, None);
        assert_eq!((usage.by_node["n1"].cpu, usage.by_node["n1"].pods), (0, 0));
    }

    #[test]
    fn the_fit_error_counts_nodes_per_reason() {
        let reasons = BTreeMap::from([
            ("Insufficient cpu".to_string(), 1),
            (
                "node(s) didn't match Pod's node affinity/selector".to_string(),
                2,
            ),
        ]);
        assert_eq!(
            fit_error(3, &reasons),
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        );
        assert_eq!(
            fit_error(0, &BTreeMap::new()),
            "no nodes available to schedule pods"
        );
    }
}
