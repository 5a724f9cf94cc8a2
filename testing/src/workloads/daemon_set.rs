//! The DaemonSet controller (`pkg/controller/daemon`: `daemon_controller.go`, `update.go`,
//! `util/daemonset_util.go`).
//!
//! A DaemonSet runs one pod on each node its pod may run on (`NodeShouldRunDaemonPod`): the
//! template's `nodeName`, `nodeSelector` and required node affinity match the node and the
//! pod tolerates the node's `NoSchedule` and `NoExecute` taints — a node whose only
//! untolerated taints are `NoSchedule` keeps the pod it has but gets no new one. Each daemon
//! pod gets the default tolerations (`node.kubernetes.io/not-ready` and `unreachable`
//! `NoExecute`, `disk-pressure`, `memory-pressure`, `pid-pressure` and `unschedulable`
//! `NoSchedule`, and `network-unavailable` for host-network pods), the labels
//! `controller-revision-hash` and `pod-template-generation`, and a required node affinity
//! `metadata.name In [<node>]` (`matchFields`) that pins it to its node; the scheduler then
//! binds it there. Pods on nodes that no longer qualify are deleted, as are extra pods on a
//! node, failed and succeeded ones (`FailedDaemonPod`, `SucceededDaemonPod` events).
//!
//! The template's history is kept as ControllerRevisions named `<ds>-<hash>` ([`super::history`]).
//! `RollingUpdate` replaces the pods of older revisions within `maxUnavailable` (deleting an
//! old pod, then creating its new one) or, with `maxSurge`, creates the new pod first and
//! deletes the old one once the new is available; `OnDelete` leaves that to the user.
//!
//! A node added, changed or removed requeues every DaemonSet. Events on the DaemonSet:
//! `SuccessfulCreate` `Created pod: <name>`, `SuccessfulDelete` `Deleted pod: <name>`
//! (`RealPodControl`'s), `SelectingAll` for an empty selector.
//!
//! Not simulated: the back-off before a failed pod is replaced, adoption of orphan pods and
//! revisions, the expectations cache (a sync sees its own writes).

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::context::{
    DAEMON_SETS, NODES, PODS, controller_ref, is_deleting, is_pod_available, is_pod_ready,
    pod_from_template, scaled_value,
};
use super::history::{self, REVISION_LABEL};
use super::scheduler::{required_node_affinity, tolerates};
use super::stateful_set::controller_named;
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::store::{Change, ObjectKey, StorageKey, object_key};

const MANAGER: &str = "kube-controller-manager";
/// The recorder's component.
const COMPONENT: &str = "daemonset-controller";
const KIND: &str = "DaemonSet";
/// `extensions.DaemonSetTemplateGenerationKey`.
const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
/// `apps.DeprecatedTemplateGeneration`, set by the API server.
const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";
/// `BurstReplicas`: the most pods one sync creates or deletes.
const BURST_REPLICAS: usize = 250;

/// The controller: its keys are DaemonSets.
#[derive(Debug, Default)]
pub(crate) struct DaemonSets;

impl Controller for DaemonSets {
    fn primary(&self) -> StorageKey {
        DAEMON_SETS.storage()
    }

    fn observe(&mut self, change: &Change, state: &State, keys: &mut Keys) {
        if change.storage == DAEMON_SETS.storage() {
            keys.insert(object_key(&change.object));
        } else if change.storage == PODS.storage() {
            if let Some(owner) = controller_named(&change.object, KIND) {
                let namespace = change.object["metadata"]["namespace"].as_str();
                keys.insert((namespace.unwrap_or_default().into(), owner.into()));
            }
        } else if change.storage == NODES.storage() {
            keys.extend(
                state
                    .store
                    .list(&DAEMON_SETS.storage(), None)
                    .map(object_key),
            );
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let ds = ctx.get(DAEMON_SETS, &key.0, &key.1)?;
        let nodes = ctx.list(NODES, None);
        if ds["spec"]["selector"] == json!({}) {
            let message =
                "This daemon set is selecting all pods. A non-empty selector is required.";
            ctx.event(
                COMPONENT,
                &ds,
                KIND,
                "Warning",
                "SelectingAll",
                message.into(),
            );
            return None;
        }
        if is_deleting(&ds) {
            return None;
        }
        let mut collisions = ds["status"]["collisionCount"].as_i64();
        let (current, old) = construct_history(ctx, &ds, &mut collisions)?;
        let hash = current["metadata"]["labels"][REVISION_LABEL]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let daemon = Daemon {
            ds: &ds,
            hash,
            now: ctx.now(),
        };
        daemon.manage(ctx, &nodes);
        if ds["spec"]["updateStrategy"]["type"] != "OnDelete" {
            daemon.rolling_update(ctx, &nodes);
        }
        daemon.cleanup_history(ctx, &old);
        daemon.update_status(ctx, &nodes, collisions)
    }
}

/// `util.AddOrUpdateDaemonPodTolerations`: the tolerations every daemon pod has.
fn add_daemon_tolerations(spec: &mut Value) {
    let mut wanted = vec![
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if spec["hostNetwork"] == true {
        wanted.push(("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    for (key, effect) in wanted {
        add_or_update_toleration(
            spec,
            json!({"key": key, "operator": "Exists", "effect": effect}),
        );
    }
}

/// `v1helper.AddOrUpdateTolerationInPodSpec`: a toleration of the same key, operator, value
/// and effect is replaced (unless equal), otherwise the toleration is added.
fn add_or_update_toleration(spec: &mut Value, toleration: Value) {
    let field = |t: &Value, f: &str| t[f].as_str().unwrap_or_default().to_string();
    let same = |t: &Value| {
        ["key", "operator", "value", "effect"]
            .iter()
            .all(|f| field(t, f) == field(&toleration, f))
    };
    let mut tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
    match tolerations.iter_mut().find(|t| same(t)) {
        Some(existing) => *existing = toleration,
        None => tolerations.push(toleration),
    }
    spec["tolerations"] = Value::Array(tolerations);
}

/// `util.ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes the one
/// term `metadata.name In [node]`.
fn pin_to_node(spec: &mut Value, node: &str) {
    let term =
        json!({"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]});
    let required =
        &mut spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    if required.is_object() {
        required["nodeSelectorTerms"] = json!([term]);
    } else {
        *required = json!({"nodeSelectorTerms": [term]});
    }
}

/// `NodeShouldRunDaemonPod`: whether a daemon pod should run on `node`, and whether one
/// there may keep running.
fn should_run(ds: &Value, node: &Value) -> (bool, bool) {
    let node_name = node["metadata"]["name"].as_str().unwrap_or_default();
    let mut spec = ds["spec"]["template"]["spec"].clone();
    if spec["nodeName"]
        .as_str()
        .is_some_and(|n| !n.is_empty() && n != node_name)
    {
        return (false, false);
    }
    add_daemon_tolerations(&mut spec);
    if !required_node_affinity(&spec, node) {
        return (false, false);
    }
    let tolerations = spec["tolerations"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let untolerated = |effects: &[&str]| {
        node["spec"]["taints"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|taint| {
                effects.iter().any(|e| taint["effect"] == *e)
                    && !tolerations.iter().any(|t| tolerates(t, taint))
            })
    };
    if untolerated(&["NoSchedule", "NoExecute"]) {
        return (false, !untolerated(&["NoExecute"]));
    }
    (true, true)
}

/// `util.GetTargetNodeName`: the pod's node, or the node its affinity pins it to.
fn target_node(pod: &Value) -> Option<&str> {
    if let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return Some(node);
    }
    pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"]
        .as_array()?
        .iter()
        .flat_map(|t| t["matchFields"].as_array().into_iter().flatten())
        .find(|e| e["key"] == "metadata.name" && e["operator"] == "In")
        .and_then(|e| match e["values"].as_array().map(Vec::as_slice) {
            Some([one]) => one.as_str(),
            _ => None,
        })
}

/// `podByCreationTimestampAndPhase`: bound pods first, then the oldest, then by name.
fn by_age(a: &Value, b: &Value) -> std::cmp::Ordering {
    let bound = |p: &Value| {
        p["spec"]["nodeName"]
            .as_str()
            .is_some_and(|n| !n.is_empty())
    };
    let meta = |p: &Value, f: &str| p["metadata"][f].as_str().unwrap_or_default().to_string();
    bound(b)
        .cmp(&bound(a))
        .then_with(|| meta(a, "creationTimestamp").cmp(&meta(b, "creationTimestamp")))
        .then_with(|| meta(a, "name").cmp(&meta(b, "name")))
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or_default()
}

/// `constructHistory`: the revision of the current template (created, or the newest of equal
/// ones, renumbered above the others) and the older revisions.
fn construct_history(
    ctx: &mut Ctx<'_>,
    ds: &Value,
    collisions: &mut Option<i64>,
) -> Option<(Value, Vec<Value>)> {
    let data = history::template_patch(ds);
    let (mut current, old): (Vec<Value>, Vec<Value>) = history::list(ctx, ds)
        .into_iter()
        .partition(|r| r["data"] == data);
    let next = old.iter().map(history::number).max().unwrap_or(0) + 1;
    let Some(keep) = current.pop() else {
        let template = serde_json::to_vec(&ds["spec"]["template"]).unwrap_or_default();
        let had_count = collisions.is_some();
        let name_hash =
            |count: i64| compute_hash(&template, (had_count || count > 0).then_some(count));
        let mut count = collisions.unwrap_or(0);
        let created = history::create(
            ctx,
            ds,
            KIND,
            &data,
            next,
            &mut count,
            (REVISION_LABEL, &name_hash),
        );
        if count != collisions.unwrap_or(0) {
            *collisions = Some(count);
        }
        return Some((created?, old));
    };
    // Several revisions of this template: the newest kept, its pods relabelled
    // (`dedupCurHistories`).
    for duplicate in &current {
        relabel_pods(ctx, ds, duplicate, &keep);
        history::delete(ctx, duplicate);
    }
    let keep = if history::number(&keep) < next {
        history::renumber(ctx, &keep, next)?
    } else {
        keep
    };
    Some((keep, old))
}

fn namespace(object: &Value) -> &str {
    object["metadata"]["namespace"].as_str().unwrap_or_default()
}

/// `controller.ComputeHash`: FNV-1a of the template, then the collision count (4 bytes
/// little-endian in 8), safe-encoded.
fn compute_hash(template: &[u8], collisions: Option<i64>) -> String {
    let count = collisions.map(|c| {
        let mut bytes = [0u8; 8];
        bytes[..4].copy_from_slice(&(c as u32).to_le_bytes());
        bytes
    });
    let hash = match &count {
        Some(bytes) => history::fnv1a_32(&[template, bytes]),
        None => history::fnv1a_32(&[template]),
    };
    history::safe_encode(&hash.to_string())
}

fn relabel_pods(ctx: &mut Ctx<'_>, ds: &Value, from: &Value, to: &Value) {
    let (from, to) = (
        &from["metadata"]["labels"][REVISION_LABEL],
        &to["metadata"]["labels"][REVISION_LABEL],
    );
    let uid = ds["metadata"]["uid"].as_str().unwrap_or_default();
    for pod in ctx.owned(PODS, namespace(ds), uid) {
        if pod["metadata"]["labels"][REVISION_LABEL] == *from {
            let mut new = pod.clone();
            new["metadata"]["labels"][REVISION_LABEL] = to.clone();
            let _ = ctx.update(MANAGER, PODS, &pod, new, None);
        }
    }
}

/// One sync of a DaemonSet at its current revision's hash.
struct Daemon<'a> {
    ds: &'a Value,
    hash: String,
    now: Timestamp,
}

impl Daemon<'_> {
    fn min_ready(&self) -> i64 {
        self.ds["spec"]["minReadySeconds"].as_i64().unwrap_or(0)
    }

    fn available(&self, pod: &Value) -> bool {
        is_pod_available(pod, self.min_ready(), self.now)
    }

    /// `util.IsPodUpdated`: of the current hash, or of the template generation.
    fn updated(&self, pod: &Value) -> bool {
        let labels = &pod["metadata"]["labels"];
        let generation = &self.ds["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION];
        (!self.hash.is_empty() && labels[REVISION_LABEL] == self.hash.as_str())
            || (generation.is_string() && labels[TEMPLATE_GENERATION_LABEL] == *generation)
    }

    /// `getNodesToDaemonPods`: the DaemonSet's pods by target node (finished pods being
    /// deleted left out unless `with_finished`).
    fn pods_by_node(&self, ctx: &Ctx<'_>, with_finished: bool) -> BTreeMap<String, Vec<Value>> {
        let uid = self.ds["metadata"]["uid"].as_str().unwrap_or_default();
        let mut by_node: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for pod in ctx.owned(PODS, namespace(self.ds), uid) {
            let finished = matches!(phase(&pod), "Failed" | "Succeeded");
            if !with_finished && finished && is_deleting(&pod) {
                continue;
            }
            if let Some(node) = target_node(&pod) {
                by_node
                    .entry(node.to_string())
                    .or_default()
                    .push(pod.clone());
            }
        }
        by_node
    }

    /// `manage`: a pod created for each node that needs one, the pods that should not be
    /// deleted.
    fn manage(&self, ctx: &mut Ctx<'_>, nodes: &[Value]) {
        let by_node = self.pods_by_node(ctx, false);
        let mut create = Vec::new();
        let mut delete = Vec::new();
        for node in nodes {
            self.pods_should_be_on_node(ctx, node, &by_node, &mut create, &mut delete);
        }
        // `getUnscheduledPodsWithoutNode`: pending pods pinned to nodes that are gone.
        for (node, pods) in &by_node {
            if !nodes.iter().any(|n| name_of(n) == node) {
                delete.extend(
                    pods.iter()
                        .filter(|p| p["spec"]["nodeName"].as_str().is_none_or(str::is_empty))
                        .map(|p| name_of(p).to_string()),
                );
            }
        }
        self.sync_nodes(ctx, &delete, &create);
    }

    /// `podsShouldBeOnNode`.
    fn pods_should_be_on_node(
        &self,
        ctx: &mut Ctx<'_>,
        node: &Value,
        by_node: &BTreeMap<String, Vec<Value>>,
        create: &mut Vec<String>,
        delete: &mut Vec<String>,
    ) {
        let (run, keep) = should_run(self.ds, node);
        let node_name = name_of(node);
        let pods = by_node.get(node_name);
        if run && pods.is_none() {
            create.push(node_name.to_string());
            return;
        }
        let Some(pods) = pods else {
            return;
        };
        if !keep {
            delete.extend(
                pods.iter()
                    .filter(|p| !is_deleting(p))
                    .map(|p| name_of(p).to_string()),
            );
            return;
        }
        let mut running = Vec::new();
        for pod in pods.iter().filter(|p| !is_deleting(p)) {
            let (reason, type_, message) = match phase(pod) {
                "Failed" => (
                    "FailedDaemonPod",
                    "Warning",
                    "Found failed daemon pod {pod} on node {node}, will try to kill it",
                ),
                "Succeeded" => (
                    "SucceededDaemonPod",
                    "Normal",
                    "Found succeeded daemon pod {pod} on node {node}, will try to delete it",
                ),
                _ => {
                    running.push(pod);
                    continue;
                }
            };
            let full = format!("{}/{}", namespace(pod), name_of(pod));
            let message = message.replace("{pod}", &full).replace("{node}", node_name);
            ctx.event(COMPONENT, self.ds, KIND, type_, reason, message);
            delete.push(name_of(pod).to_string());
        }
        running.sort_by(|a, b| by_age(a, b));
        if !self.allows_surge() {
            delete.extend(running.iter().skip(1).map(|p| name_of(p).to_string()));
            return;
        }
        if running.len() <= 1 {
            if running.is_empty() && run {
                create.push(node_name.to_string());
            }
            return;
        }
        let (mut oldest_new, mut oldest_old) = (None, None);
        for pod in running {
            let slot = if self.updated(pod) {
                &mut oldest_new
            } else {
                &mut oldest_old
            };
            if slot.is_none() {
                *slot = Some(pod);
            } else {
                delete.push(name_of(pod).to_string());
            }
        }
        if let (Some(new), Some(old)) = (oldest_new, oldest_old)
            && (!is_pod_ready(old) || self.available(new))
        {
            delete.push(name_of(old).to_string());
        }
    }

    fn allows_surge(&self) -> bool {
        self.surge_count(1) > 0
    }

    fn rolling_parameter(&self, field: &str, total: i64) -> i64 {
        let strategy = &self.ds["spec"]["updateStrategy"];
        if strategy["type"].as_str().unwrap_or("RollingUpdate") != "RollingUpdate" {
            return 0;
        }
        scaled_value(&strategy["rollingUpdate"][field], total, true).unwrap_or(0)
    }

    fn surge_count(&self, total: i64) -> i64 {
        self.rolling_parameter("maxSurge", total)
    }

    /// `syncNodes`: up to [`BURST_REPLICAS`] pods created (each pinned to its node) and
    /// deleted.
    fn sync_nodes(&self, ctx: &mut Ctx<'_>, delete: &[String], create: &[String]) {
        let mut template = self.ds["spec"]["template"].clone();
        add_daemon_tolerations(&mut template["spec"]);
        if !template["metadata"]["labels"].is_object() {
            template["metadata"]["labels"] = json!({});
        }
        let generation = &self.ds["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION];
        if generation.is_string() {
            template["metadata"]["labels"][TEMPLATE_GENERATION_LABEL] = generation.clone();
        }
        if !self.hash.is_empty() {
            template["metadata"]["labels"][REVISION_LABEL] = json!(self.hash);
        }
        for node in create.iter().take(BURST_REPLICAS) {
            let mut pod_template = template.clone();
            pin_to_node(&mut pod_template["spec"], node);
            let pod = pod_from_template(
                self.ds,
                &pod_template,
                controller_ref(self.ds, "apps/v1", KIND),
            );
            match ctx.create(MANAGER, PODS, pod) {
                Ok(created) => {
                    let message = format!("Created pod: {}", name_of(&created));
                    ctx.event(
                        COMPONENT,
                        self.ds,
                        KIND,
                        "Normal",
                        "SuccessfulCreate",
                        message,
                    );
                }
                Err(e) => {
                    let message = format!("Error creating: {}", e.message);
                    ctx.event(COMPONENT, self.ds, KIND, "Warning", "FailedCreate", message);
                    break;
                }
            }
        }
        for pod in delete.iter().take(BURST_REPLICAS) {
            match ctx.delete(MANAGER, PODS, namespace(self.ds), pod, &json!({})) {
                Ok(_) => {
                    let message = format!("Deleted pod: {pod}");
                    ctx.event(
                        COMPONENT,
                        self.ds,
                        KIND,
                        "Normal",
                        "SuccessfulDelete",
                        message,
                    );
                }
                Err(e) if e.reason == "NotFound" => {}
                Err(e) => {
                    let message = format!("Error deleting: {}", e.message);
                    ctx.event(COMPONENT, self.ds, KIND, "Warning", "FailedDelete", message);
                }
            }
        }
    }

    /// `updatedDesiredNodeCounts`: `(maxSurge, maxUnavailable, desired)`, with every node that
    /// should run a pod in `by_node`.
    fn desired_counts(
        &self,
        nodes: &[Value],
        by_node: &mut BTreeMap<String, Vec<Value>>,
    ) -> (i64, i64, i64) {
        let mut desired = 0;
        for node in nodes {
            if should_run(self.ds, node).0 {
                desired += 1;
                by_node.entry(name_of(node).to_string()).or_default();
            }
        }
        let mut max_unavailable = self.rolling_parameter("maxUnavailable", desired);
        let max_surge = self.surge_count(desired);
        if desired > 0 && max_unavailable == 0 && max_surge == 0 {
            max_unavailable = 1;
        }
        (max_surge, max_unavailable, desired)
    }

    /// `findUpdatedPodsOnNode`: the node's new and old pod, `None` when it has more than one
    /// of either.
    fn updated_pods_on_node<'p>(
        &self,
        pods: &'p [Value],
    ) -> Option<(Option<&'p Value>, Option<&'p Value>)> {
        let (mut new, mut old) = (None, None);
        for pod in pods.iter().filter(|p| !is_deleting(p)) {
            let slot = if self.updated(pod) {
                &mut new
            } else {
                &mut old
            };
            if slot.is_some() {
                return None;
            }
            *slot = Some(pod);
        }
        Some((new, old))
    }

    /// `rollingUpdate`.
    fn rolling_update(&self, ctx: &mut Ctx<'_>, nodes: &[Value]) {
        let mut by_node = self.pods_by_node(ctx, false);
        let (max_surge, max_unavailable, desired) = self.desired_counts(nodes, &mut by_node);
        if max_surge == 0 {
            let delete = self.replace_within_unavailability(&by_node, max_unavailable);
            self.sync_nodes(ctx, &delete, &[]);
        } else {
            let (delete, create) = self.surge(nodes, &by_node, max_surge, desired);
            self.sync_nodes(ctx, &delete, &create);
        }
    }

    /// Without surge: the old pods that are unavailable anyway, then available ones while
    /// fewer than `maxUnavailable` nodes are unavailable.
    fn replace_within_unavailability(
        &self,
        by_node: &BTreeMap<String, Vec<Value>>,
        max_unavailable: i64,
    ) -> Vec<String> {
        let mut unavailable = 0;
        let mut delete = Vec::new();
        let mut candidates = Vec::new();
        for pods in by_node.values() {
            match self.updated_pods_on_node(pods) {
                None | Some((None, None) | (Some(_), Some(_))) => unavailable += 1,
                Some((Some(new), None)) => unavailable += i64::from(!self.available(new)),
                Some((None, Some(old))) => {
                    if !self.available(old) {
                        delete.push(name_of(old).to_string());
                        unavailable += 1;
                    } else if unavailable < max_unavailable {
                        candidates.push(name_of(old).to_string());
                    }
                }
            }
        }
        let room = usize::try_from((max_unavailable - unavailable).max(0)).unwrap_or(0);
        delete.extend(candidates.into_iter().take(room));
        delete
    }

    /// With surge: a new pod next to each old one while fewer than `maxSurge` are surging,
    /// the old pod deleted once its new one is available.
    fn surge(
        &self,
        nodes: &[Value],
        by_node: &BTreeMap<String, Vec<Value>>,
        max_surge: i64,
        desired: i64,
    ) -> (Vec<String>, Vec<String>) {
        let (mut delete, mut should_not_run, mut candidates, mut allowed) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut surging, mut available) = (0, 0);
        let runs_on = |node: &str| {
            nodes
                .iter()
                .find(|n| name_of(n) == node)
                .is_some_and(|n| should_run(self.ds, n).0)
        };
        for (node, pods) in by_node {
            let Some((new, old)) = self.updated_pods_on_node(pods) else {
                surging += 1;
                continue;
            };
            if let Some(pod) = old.or(new) {
                available += i64::from(self.available(pod));
            }
            match (new, old) {
                (_, None) => {}
                (None, Some(old)) if !self.available(old) => {
                    if runs_on(node) {
                        allowed.push(node.clone());
                    } else {
                        delete.push(name_of(old).to_string());
                    }
                }
                (None, Some(old)) => {
                    if !runs_on(node) {
                        should_not_run.push(name_of(old).to_string());
                    } else if surging < max_surge {
                        candidates.push(node.clone());
                    }
                }
                (Some(new), Some(old)) => {
                    if self.available(new) {
                        delete.push(name_of(old).to_string());
                    } else {
                        surging += 1;
                    }
                }
            }
        }
        let deletable = usize::try_from((available - desired).max(0)).unwrap_or(0);
        delete.extend(should_not_run.into_iter().take(deletable));
        let room = usize::try_from((max_surge - surging).max(0)).unwrap_or(0);
        allowed.extend(candidates.into_iter().take(room));
        (delete, allowed)
    }

    /// `cleanupHistory`: old revisions beyond `revisionHistoryLimit` that no pod runs, oldest
    /// first.
    fn cleanup_history(&self, ctx: &mut Ctx<'_>, old: &[Value]) {
        let keep = self.ds["spec"]["revisionHistoryLimit"]
            .as_i64()
            .unwrap_or(10);
        let mut to_kill = i64::try_from(old.len()).unwrap_or(i64::MAX) - keep;
        if to_kill <= 0 {
            return;
        }
        let live: Vec<String> = self
            .pods_by_node(ctx, true)
            .values()
            .flatten()
            .filter_map(|p| p["metadata"]["labels"][REVISION_LABEL].as_str())
            .map(str::to_owned)
            .collect();
        let mut old: Vec<&Value> = old.iter().collect();
        old.sort_by_key(|r| history::number(r));
        for revision in old {
            if to_kill <= 0 {
                break;
            }
            let hash = revision["metadata"]["labels"][REVISION_LABEL].as_str();
            if hash.is_some_and(|h| live.iter().any(|l| l == h)) {
                continue;
            }
            history::delete(ctx, revision);
            to_kill -= 1;
        }
    }

    /// `updateDaemonSetStatus`: the counts over the nodes, written when they changed; the
    /// sync again when `minReadySeconds` will make ready pods available.
    fn update_status(
        &self,
        ctx: &mut Ctx<'_>,
        nodes: &[Value],
        collisions: Option<i64>,
    ) -> Option<Timestamp> {
        let by_node = self.pods_by_node(ctx, false);
        let (mut desired, mut current, mut misscheduled, mut ready, mut updated, mut available) =
            (0, 0, 0, 0, 0, 0);
        for node in nodes {
            let pods = by_node.get(name_of(node)).filter(|p| !p.is_empty());
            if !should_run(self.ds, node).0 {
                misscheduled += i64::from(pods.is_some());
                continue;
            }
            desired += 1;
            let Some(pods) = pods else {
                continue;
            };
            current += 1;
            let mut pods: Vec<&Value> = pods.iter().collect();
            pods.sort_by(|a, b| by_age(a, b));
            let pod = pods[0];
            if is_pod_ready(pod) {
                ready += 1;
                available += i64::from(self.available(pod));
            }
            updated += i64::from(self.updated(pod));
        }
        let counts = [
            ("desiredNumberScheduled", desired, false),
            ("currentNumberScheduled", current, false),
            ("numberMisscheduled", misscheduled, false),
            ("numberReady", ready, false),
            ("updatedNumberScheduled", updated, true),
            ("numberAvailable", available, true),
            ("numberUnavailable", desired - available, true),
        ];
        let old = &self.ds["status"];
        let generation = self.ds["metadata"]["generation"].as_i64().unwrap_or(0);
        let unchanged = counts
            .iter()
            .all(|(field, value, _)| old[field].as_i64().unwrap_or(0) == *value)
            && old["observedGeneration"].as_i64().unwrap_or(0) >= generation
            && old["collisionCount"].as_i64() == collisions;
        if !unchanged {
            let mut status = if old.is_object() {
                old.clone()
            } else {
                json!({})
            };
            if generation != 0 {
                status["observedGeneration"] = json!(generation);
            }
            if let Some(count) = collisions {
                status["collisionCount"] = json!(count);
            }
            for (field, value, omit_empty) in counts {
                if omit_empty && value == 0 {
                    if let Some(s) = status.as_object_mut() {
                        s.remove(field);
                    }
                } else {
                    status[field] = json!(value);
                }
            }
            let _ = ctx.update_status(MANAGER, DAEMON_SETS, self.ds, status);
        }
        (self.min_ready() > 0 && ready != available)
            .then(|| self.now + SignedDuration::from_secs(self.min_ready()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tolerations(spec: &Value) -> Vec<(String, String)> {
        spec["tolerations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["key"].as_str().unwrap_or_default().to_string(),
                    t["effect"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }

    // daemonset_util_test.go TestAddOrUpdateDaemonPodTolerations (outline).
    #[test]
    fn daemon_pods_tolerate_the_node_condition_taints() {
        let mut spec = json!({});
        add_daemon_tolerations(&mut spec);
        let keys: Vec<_> = tolerations(&spec)
            .into_iter()
            .map(|(k, e)| format!("{k}:{e}"))
            .collect();
        assert_eq!(
            keys,
            [
                "node.kubernetes.io/not-ready:NoExecute",
                "node.kubernetes.io/unreachable:NoExecute",
                "node.kubernetes.io/disk-pressure:NoSchedule",
                "node.kubernetes.io/memory-pressure:NoSchedule",
                "node.kubernetes.io/pid-pressure:NoSchedule",
                "node.kubernetes.io/unschedulable:NoSchedule",
            ]
        );
        // Adding them again changes nothing; host-network pods also tolerate
        // network-unavailable.
        let once = spec.clone();
        add_daemon_tolerations(&mut spec);
        assert_eq!(spec, once);
        let mut host = json!({"hostNetwork": true});
        add_daemon_tolerations(&mut host);
        assert_eq!(tolerations(&host).len(), 7);
    }

    #[test]
    fn an_equal_toleration_is_replaced_and_others_kept() {
        let mut spec = json!({"tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 300},
            {"key": "gpu", "operator": "Exists"},
        ]});
        add_daemon_tolerations(&mut spec);
        let list = spec["tolerations"].as_array().unwrap();
        assert_eq!(list.len(), 7);
        assert!(list[0]["tolerationSeconds"].is_null());
        assert_eq!(list[1]["key"], "gpu");
    }

    // TestReplaceDaemonSetPodNodeNameNodeAffinity (outline).
    #[test]
    fn daemon_pods_are_pinned_to_their_node() {
        let mut spec = json!({});
        pin_to_node(&mut spec, "node-1");
        let pod = json!({"spec": spec});
        assert_eq!(target_node(&pod), Some("node-1"));
        let mut affine = json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]}}});
        pin_to_node(&mut affine, "node-2");
        let terms = &affine["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"];
        assert_eq!(terms.as_array().unwrap().len(), 1);
        assert_eq!(terms[0]["matchFields"][0]["values"], json!(["node-2"]));
        assert!(
            affine["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
                .is_array()
        );
        assert_eq!(target_node(&json!({"spec": {"nodeName": "n"}})), Some("n"));
        assert_eq!(target_node(&json!({"spec": {}})), None);
    }

    fn ds(spec: Value) -> Value {
        json!({"metadata": {"name": "ds"}, "spec": {"template": {"spec": spec}}})
    }

    fn node(labels: Value, taints: Value) -> Value {
        json!({"metadata": {"name": "n1", "labels": labels}, "spec": {"taints": taints}})
    }

    // daemon_controller_test.go TestNodeShouldRunDaemonPod (outline).
    #[test]
    fn a_node_runs_a_daemon_pod_its_selector_and_taints_allow() {
        let plain = node(json!({}), json!([]));
        assert_eq!(should_run(&ds(json!({})), &plain), (true, true));
        assert_eq!(
            should_run(&ds(json!({"nodeName": "other"})), &plain),
            (false, false)
        );
        let picky = ds(json!({"nodeSelector": {"disk": "ssd"}}));
        assert_eq!(should_run(&picky, &plain), (false, false));
        assert_eq!(
            should_run(&picky, &node(json!({"disk": "ssd"}), json!([]))),
            (true, true)
        );
        let no_schedule = node(json!({}), json!([{"key": "gpu", "effect": "NoSchedule"}]));
        assert_eq!(should_run(&ds(json!({})), &no_schedule), (false, true));
        let no_execute = node(json!({}), json!([{"key": "gpu", "effect": "NoExecute"}]));
        assert_eq!(should_run(&ds(json!({})), &no_execute), (false, false));
        let tolerant = ds(json!({"tolerations": [{"key": "gpu", "operator": "Exists"}]}));
        assert_eq!(should_run(&tolerant, &no_execute), (true, true));
        let unschedulable = node(
            json!({}),
            json!([{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
        );
        assert_eq!(should_run(&ds(json!({})), &unschedulable), (true, true));
    }

    #[test]
    fn the_template_hash_depends_on_the_collision_count() {
        let a = compute_hash(b"{}", None);
        assert_ne!(a, compute_hash(b"{}", Some(1)));
        assert_eq!(a, compute_hash(b"{}", None));
    }
}
