//! The StatefulSet controller (`pkg/controller/statefulset`: `stateful_set_control.go`,
//! `stateful_set_utils.go`, `stateful_pod_control.go`, `stateful_set_status_updater.go`).
//!
//! A set of `replicas` owns the pods `<set>-<ordinal>` for the ordinals `spec.ordinals.start`
//! … `start + replicas - 1`, each labelled `statefulset.kubernetes.io/pod-name`,
//! `apps.kubernetes.io/pod-index` and `controller-revision-hash`, its hostname its name and its
//! subdomain the set's `serviceName`, and for each of `volumeClaimTemplates` the claim
//! `<template>-<set>-<ordinal>`, created before the pod and kept after it (or given to the set
//! or the pod to be collected, per `persistentVolumeClaimRetentionPolicy`).
//!
//! - `OrderedReady` (the default) creates the pods one at a time in ordinal order, each once
//!   the one before is `Running` and `Ready` (and available for `minReadySeconds`), and removes
//!   those above the range from the highest ordinal, one at a time; `Parallel` does both at
//!   once.
//! - The template's history is kept as ControllerRevisions ([`super::history`]):
//!   `status.currentRevision` is what the pods ran, `status.updateRevision` the template's.
//!   `RollingUpdate` deletes the pods at ordinals `>= partition` that are not of the update
//!   revision, from the highest, one at a time, each once the set is healthy (they come back
//!   at the new revision); `OnDelete` leaves that to the user.
//! - Events on the set: `SuccessfulCreate` `create Pod web-0 in StatefulSet web successful`,
//!   `SuccessfulDelete`, `SuccessfulUpdate`, `create Claim data-web-0 Pod web-0 in StatefulSet
//!   web success`, and their `Failed*` counterparts.
//!
//! Not simulated: adoption of orphan pods and revisions (the pods a set controls are those its
//! controller reference names), `maxUnavailable` (the alpha `MaxUnavailableStatefulSet` gate),
//! the semantic revision comparison.

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::context::{
    PERSISTENT_VOLUME_CLAIMS, PODS, STATEFUL_SETS, controller_ref, is_deleting, is_pod_available,
    is_pod_ready, pod_from_template,
};
use super::history::{self, REVISION_LABEL};
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::store::{Change, ObjectKey, StorageKey};

const MANAGER: &str = "kube-controller-manager";
/// The recorder's component.
const COMPONENT: &str = "statefulset-controller";
const KIND: &str = "StatefulSet";
const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";

/// The controller: its keys are StatefulSets.
#[derive(Debug, Default)]
pub(crate) struct StatefulSets;

impl Controller for StatefulSets {
    fn primary(&self) -> StorageKey {
        STATEFUL_SETS.storage()
    }

    fn observe(&mut self, change: &Change, _state: &State, keys: &mut Keys) {
        if change.storage == STATEFUL_SETS.storage() {
            keys.insert(crate::store::object_key(&change.object));
        } else if change.storage == PODS.storage()
            && let Some(owner) = controller_named(&change.object, KIND)
        {
            let namespace = change.object["metadata"]["namespace"].as_str();
            keys.insert((namespace.unwrap_or_default().into(), owner.into()));
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let set = ctx.get(STATEFUL_SETS, &key.0, &key.1)?;
        let uid = set["metadata"]["uid"].as_str().unwrap_or_default();
        let pods: Vec<Value> = ctx
            .owned(PODS, &key.0, uid)
            .into_iter()
            .filter(|p| parent_and_ordinal(name_of(p)).0 == key.1)
            .collect();
        let revisions = history::list(ctx, &set);
        let (current, update, collisions) = set_revisions(ctx, &set, &revisions)?;
        let mut run = Run::new(&set, &current, &update, collisions, ctx.now());
        let result = run.update(ctx, pods.clone());
        if let Err(message) = &result {
            tracing::debug!(set = key.1, error = message, "StatefulSet sync failed");
        }
        let status = run.status;
        write_status(ctx, &set, status.clone());
        truncate_history(ctx, &set, &pods, &revisions, &[&current, &update]);
        let min_ready = set["spec"]["minReadySeconds"].as_i64().unwrap_or(0);
        let replicas = set["spec"]["replicas"].as_i64().unwrap_or(1);
        (min_ready > 0 && status.available != replicas)
            .then(|| ctx.now() + SignedDuration::from_secs(min_ready))
    }
}

/// The name of an object's controller when it is of `kind`.
pub(crate) fn controller_named<'a>(object: &'a Value, kind: &str) -> Option<&'a str> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true && r["kind"] == kind)?["name"]
        .as_str()
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

/// `getParentNameAndOrdinal`: `<parent>-<ordinal>` as `(.*)-([0-9]+)$` reads a pod's name;
/// `("", -1)` when it does not match, the ordinal `-1` when it overflows 32 bits.
fn parent_and_ordinal(name: &str) -> (&str, i64) {
    let Some((parent, digits)) = name.rsplit_once('-') else {
        return ("", -1);
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return ("", -1);
    }
    (parent, digits.parse::<i32>().map_or(-1, i64::from))
}

fn start_ordinal(set: &Value) -> i64 {
    set["spec"]["ordinals"]["start"].as_i64().unwrap_or(0)
}

fn end_ordinal(set: &Value) -> i64 {
    start_ordinal(set) + set["spec"]["replicas"].as_i64().unwrap_or(1) - 1
}

fn in_ordinal_range(pod: &Value, set: &Value) -> bool {
    let ordinal = parent_and_ordinal(name_of(pod)).1;
    ordinal >= start_ordinal(set) && ordinal <= end_ordinal(set)
}

fn pod_name(set: &Value, ordinal: i64) -> String {
    format!("{}-{ordinal}", name_of(set))
}

fn claim_name(set: &Value, template: &Value, ordinal: i64) -> String {
    format!("{}-{}-{ordinal}", name_of(template), name_of(set))
}

/// `identityMatches`: the pod's name, namespace and pod-name label are its ordinal's.
fn identity_matches(set: &Value, pod: &Value) -> bool {
    let (parent, ordinal) = parent_and_ordinal(name_of(pod));
    ordinal >= 0
        && parent == name_of(set)
        && name_of(pod) == pod_name(set, ordinal)
        && pod["metadata"]["namespace"] == set["metadata"]["namespace"]
        && pod["metadata"]["labels"][POD_NAME_LABEL] == name_of(pod)
}

/// `storageMatches`: each claim template is mounted from its ordinal's claim.
fn storage_matches(set: &Value, pod: &Value) -> bool {
    let ordinal = parent_and_ordinal(name_of(pod)).1;
    if ordinal < 0 {
        return false;
    }
    let volumes = pod["spec"]["volumes"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    claim_templates(set).iter().all(|template| {
        volumes.iter().any(|v| {
            v["name"] == template["metadata"]["name"]
                && v["persistentVolumeClaim"]["claimName"] == claim_name(set, template, ordinal)
        })
    })
}

fn claim_templates(set: &Value) -> &[Value] {
    set["spec"]["volumeClaimTemplates"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
}

/// `getPersistentVolumeClaims`: the claims of `pod`'s ordinal, labelled with the template's
/// labels and the set's `matchLabels`.
fn claims_for(set: &Value, pod: &Value) -> Vec<Value> {
    let ordinal = parent_and_ordinal(name_of(pod)).1;
    claim_templates(set)
        .iter()
        .map(|template| {
            let mut claim = template.clone();
            claim["apiVersion"] = json!("v1");
            claim["kind"] = json!("PersistentVolumeClaim");
            if let Some(claim) = claim.as_object_mut() {
                claim.remove("status");
            }
            claim["metadata"]["name"] = json!(claim_name(set, template, ordinal));
            claim["metadata"]["namespace"] = set["metadata"]["namespace"].clone();
            let mut labels = template["metadata"]["labels"].clone();
            if !labels.is_object() {
                labels = json!({});
            }
            for (k, v) in set["spec"]["selector"]["matchLabels"]
                .as_object()
                .into_iter()
                .flatten()
            {
                labels[k] = v.clone();
            }
            claim["metadata"]["labels"] = labels;
            claim
        })
        .collect()
}

/// `updateIdentity`: the pod's name, namespace and identity labels from its ordinal.
fn update_identity(set: &Value, pod: &mut Value) {
    let ordinal = parent_and_ordinal(name_of(pod)).1;
    let name = pod_name(set, ordinal);
    pod["metadata"]["name"] = json!(name);
    pod["metadata"]["namespace"] = set["metadata"]["namespace"].clone();
    if !pod["metadata"]["labels"].is_object() {
        pod["metadata"]["labels"] = json!({});
    }
    pod["metadata"]["labels"][POD_NAME_LABEL] = json!(name);
    pod["metadata"]["labels"][POD_INDEX_LABEL] = json!(ordinal.to_string());
}

/// `updateStorage`: a volume per claim template, then the pod's other volumes.
fn update_storage(set: &Value, pod: &mut Value) {
    let claims = claims_for(set, pod);
    let mut volumes: Vec<Value> = claim_templates(set)
        .iter()
        .zip(&claims)
        .map(|(template, claim)| {
            json!({"name": template["metadata"]["name"],
                   "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}})
        })
        .collect();
    for volume in pod["spec"]["volumes"].as_array().into_iter().flatten() {
        if !claim_templates(set)
            .iter()
            .any(|t| t["metadata"]["name"] == volume["name"])
        {
            volumes.push(volume.clone());
        }
    }
    pod["spec"]["volumes"] = Value::Array(volumes);
}

/// `newStatefulSetPod`: the pod of `ordinal` from `set`'s template, of `revision`.
fn new_pod(set: &Value, ordinal: i64, revision: &str) -> Value {
    let mut pod = pod_from_template(
        set,
        &set["spec"]["template"],
        controller_ref(set, "apps/v1", KIND),
    );
    pod["metadata"]["name"] = json!(pod_name(set, ordinal));
    update_identity(set, &mut pod);
    pod["spec"]["hostname"] = json!(pod_name(set, ordinal));
    if let Some(service) = set["spec"]["serviceName"]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        pod["spec"]["subdomain"] = json!(service);
    }
    update_storage(set, &mut pod);
    pod["metadata"]["labels"][REVISION_LABEL] = json!(revision);
    pod
}

/// `ApplyRevision`: `set` with the template `revision` recorded.
fn apply_revision(set: &Value, revision: &Value) -> Value {
    let mut applied = set.clone();
    let mut template = revision["data"]["spec"]["template"].clone();
    if let Some(t) = template.as_object_mut() {
        t.remove("$patch");
    }
    applied["spec"]["template"] = template;
    applied
}

/// `getStatefulSetRevisions`: the current and update revisions (the latter created, or an
/// equal older one renumbered, when the template changed) and the collision count.
fn set_revisions(
    ctx: &mut Ctx<'_>,
    set: &Value,
    revisions: &[Value],
) -> Option<(Value, Value, i64)> {
    let mut collisions = set["status"]["collisionCount"].as_i64().unwrap_or(0);
    let data = history::template_patch(set);
    let next = revisions.last().map_or(1, |r| history::number(r) + 1);
    let equal: Vec<&Value> = revisions.iter().filter(|r| r["data"] == data).collect();
    let update = match (equal.last(), revisions.last()) {
        (Some(eq), Some(last)) if eq["data"] == last["data"] => last.clone(),
        (Some(eq), _) => history::renumber(ctx, eq, next)?,
        (None, _) => {
            let name_hash = |count: i64| history::hash(&data, count);
            history::create(
                ctx,
                set,
                KIND,
                &data,
                next,
                &mut collisions,
                (history::HASH_LABEL, &name_hash),
            )?
        }
    };
    let current_name = set["status"]["currentRevision"].as_str();
    let current = revisions
        .iter()
        .find(|r| current_name.is_some_and(|n| n == name_of(r)))
        .cloned()
        .unwrap_or_else(|| update.clone());
    Some((current, update, collisions))
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or_default()
}

fn revision_of(pod: &Value) -> &str {
    pod["metadata"]["labels"][REVISION_LABEL]
        .as_str()
        .unwrap_or_default()
}

/// The replica counts of a set's status.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Status {
    observed_generation: i64,
    replicas: i64,
    ready: i64,
    available: i64,
    current: i64,
    updated: i64,
    current_revision: String,
    update_revision: String,
    collision_count: i64,
}

impl Status {
    /// `StatefulSetStatus` as JSON (zero `omitempty` fields left out).
    fn to_json(&self) -> Value {
        let mut status = json!({"replicas": self.replicas, "availableReplicas": self.available,
                                "collisionCount": self.collision_count});
        for (field, value) in [
            ("observedGeneration", self.observed_generation),
            ("readyReplicas", self.ready),
            ("currentReplicas", self.current),
            ("updatedReplicas", self.updated),
        ] {
            if value != 0 {
                status[field] = json!(value);
            }
        }
        for (field, value) in [
            ("currentRevision", &self.current_revision),
            ("updateRevision", &self.update_revision),
        ] {
            if !value.is_empty() {
                status[field] = json!(value);
            }
        }
        status
    }
}

/// One sync of a set: the set as its current and update revisions make it, and the status
/// being counted.
struct Run<'a> {
    set: &'a Value,
    current_set: Value,
    update_set: Value,
    now: Timestamp,
    min_ready: i64,
    status: Status,
}

impl<'a> Run<'a> {
    fn new(
        set: &'a Value,
        current: &Value,
        update: &Value,
        collisions: i64,
        now: Timestamp,
    ) -> Self {
        let status = Status {
            observed_generation: set["metadata"]["generation"].as_i64().unwrap_or(0),
            current_revision: name_of(current).into(),
            update_revision: name_of(update).into(),
            collision_count: collisions,
            ..Status::default()
        };
        Self {
            set,
            current_set: apply_revision(set, current),
            update_set: apply_revision(set, update),
            now,
            min_ready: set["spec"]["minReadySeconds"].as_i64().unwrap_or(0),
            status,
        }
    }

    fn running_and_ready(pod: &Value) -> bool {
        phase(pod) == "Running" && is_pod_ready(pod)
    }

    fn available(&self, pod: &Value) -> bool {
        is_pod_available(pod, self.min_ready, self.now)
    }

    fn unavailable(&self, pod: &Value) -> bool {
        !self.available(pod) || is_deleting(pod)
    }

    /// `updateStatus`: the counts of `pods`.
    fn count<'p>(&mut self, pods: impl IntoIterator<Item = &'p Value>) {
        let s = &mut self.status;
        (s.replicas, s.ready, s.available, s.current, s.updated) = (0, 0, 0, 0, 0);
        for pod in pods {
            let created = !phase(pod).is_empty();
            s.replicas += i64::from(created);
            if Self::running_and_ready(pod) {
                s.ready += 1;
                s.available += i64::from(is_pod_available(pod, self.min_ready, self.now));
            }
            if created && !is_deleting(pod) {
                s.current += i64::from(revision_of(pod) == s.current_revision);
                s.updated += i64::from(revision_of(pod) == s.update_revision);
            }
        }
    }

    /// `newVersionedStatefulSetPod`: below the partition (or, without a rolling update's
    /// parameters, below the current replicas) a missing pod comes back at the current
    /// revision, otherwise at the update revision.
    fn versioned_pod(&self, ordinal: i64) -> Value {
        let strategy = &self.current_set["spec"]["updateStrategy"];
        let start = start_ordinal(self.set);
        let rolling = strategy["rollingUpdate"].is_object();
        let current_replicas = self.set["status"]["currentReplicas"].as_i64().unwrap_or(0);
        let partition = strategy["rollingUpdate"]["partition"].as_i64().unwrap_or(0);
        let keep_current = (strategy["type"].as_str().unwrap_or("RollingUpdate")
            == "RollingUpdate"
            && !rolling
            && ordinal < start + current_replicas)
            || (rolling && ordinal < start + partition);
        if keep_current {
            new_pod(&self.current_set, ordinal, &self.status.current_revision)
        } else {
            new_pod(&self.update_set, ordinal, &self.status.update_revision)
        }
    }

    /// `updateStatefulSet`: the pods in range brought up, those above it removed, then the
    /// rolling update.
    fn update(&mut self, ctx: &mut Ctx<'_>, pods: Vec<Value>) -> Result<(), String> {
        self.count(&pods);
        let (start, end) = (start_ordinal(self.set), end_ordinal(self.set));
        let mut replicas: Vec<Option<Value>> =
            vec![None; usize::try_from(end - start + 1).unwrap_or(0)];
        let mut condemned = Vec::new();
        for pod in pods {
            let ordinal = parent_and_ordinal(name_of(&pod)).1;
            if in_ordinal_range(&pod, self.set) {
                if let Some(slot) = usize::try_from(ordinal - start)
                    .ok()
                    .and_then(|i| replicas.get_mut(i))
                {
                    *slot = Some(pod);
                }
            } else if ordinal >= 0 {
                condemned.push(pod);
            }
        }
        let mut replicas: Vec<Value> = (start..=end)
            .zip(replicas)
            .map(|(ordinal, pod)| pod.unwrap_or_else(|| self.versioned_pod(ordinal)))
            .collect();
        condemned.sort_by_key(|p| std::cmp::Reverse(parent_and_ordinal(name_of(p)).1));
        let first_unavailable = replicas
            .iter()
            .chain(condemned.iter().rev())
            .find(|p| self.unavailable(p))
            .map(|p| name_of(p).to_string());
        if is_deleting(self.set) {
            return Ok(());
        }
        let monotonic = self.set["spec"]["podManagementPolicy"] != "Parallel";
        let outcome = self.converge(
            ctx,
            &mut replicas,
            &condemned,
            first_unavailable.as_deref(),
            monotonic,
        );
        self.count(replicas.iter().chain(&condemned));
        if outcome? || self.set["spec"]["updateStrategy"]["type"] == "OnDelete" {
            return Ok(());
        }
        self.rolling_update(ctx, &replicas)
    }

    /// The replicas, then the condemned pods' claims, then the condemned pods, each pass
    /// stopping the sync (`Ok(true)`) where `OrderedReady` must wait.
    fn converge(
        &mut self,
        ctx: &mut Ctx<'_>,
        replicas: &mut [Value],
        condemned: &[Value],
        first_unavailable: Option<&str>,
        monotonic: bool,
    ) -> Result<bool, String> {
        let mut failed = None;
        for i in 0..replicas.len() {
            match self.process_replica(ctx, replicas, i, monotonic) {
                Ok(true) if monotonic => return Ok(true),
                Err(e) => {
                    if monotonic {
                        return Err(e);
                    }
                    failed = Some(e);
                }
                Ok(_) => {}
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        for pod in condemned {
            if !claims_match_policy(ctx, &self.update_set, pod) {
                update_claims_for_policy(ctx, &self.update_set, pod)?;
            }
        }
        for pod in condemned {
            let exit = self.process_condemned(ctx, pod, first_unavailable, monotonic)?;
            if exit && monotonic {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `processReplica`: whether the sync stops here.
    fn process_replica(
        &mut self,
        ctx: &mut Ctx<'_>,
        replicas: &mut [Value],
        i: usize,
        monotonic: bool,
    ) -> Result<bool, String> {
        let pod = &replicas[i];
        if matches!(phase(pod), "Failed" | "Succeeded") {
            if !is_deleting(pod) {
                delete_pod(ctx, self.set, pod)?;
            }
            return Ok(true);
        }
        if phase(pod).is_empty() {
            if claim_is_stale(ctx, self.set, pod) {
                return Ok(true);
            }
            create_pod(ctx, self.set, pod)?;
            if monotonic {
                return Ok(true);
            }
        }
        if phase(pod) == "Pending" {
            create_claims(ctx, self.set, pod)?;
            update_claims_for_policy(ctx, self.set, pod)?;
        }
        if monotonic && (is_deleting(pod) || !Self::running_and_ready(pod) || !self.available(pod))
        {
            return Ok(true);
        }
        let retention_match = claims_match_policy(ctx, &self.update_set, pod);
        if identity_matches(self.set, pod) && storage_matches(self.set, pod) && retention_match {
            return Ok(false);
        }
        let mut replica = pod.clone();
        update_pod(ctx, &self.update_set, &mut replica)?;
        replicas[i] = replica;
        Ok(false)
    }

    /// `processCondemned`: whether the sync stops here.
    fn process_condemned(
        &mut self,
        ctx: &mut Ctx<'_>,
        pod: &Value,
        first_unavailable: Option<&str>,
        monotonic: bool,
    ) -> Result<bool, String> {
        if is_deleting(pod) {
            return Ok(monotonic);
        }
        let is_first = first_unavailable == Some(name_of(pod));
        if monotonic && !is_first && (!Self::running_and_ready(pod) || !self.available(pod)) {
            return Ok(true);
        }
        delete_pod(ctx, self.set, pod)?;
        Ok(true)
    }

    /// The rolling update: from the highest ordinal down to the partition, the first pod not
    /// of the update revision is deleted; an unavailable pod stops it.
    fn rolling_update(&mut self, ctx: &mut Ctx<'_>, replicas: &[Value]) -> Result<(), String> {
        let partition = self.set["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
            .as_i64()
            .unwrap_or(0);
        let update_min = usize::try_from(partition).unwrap_or(0);
        for pod in replicas.iter().skip(update_min).rev() {
            if revision_of(pod) != self.status.update_revision && !is_deleting(pod) {
                let result = delete_pod(ctx, self.set, pod);
                self.status.current -= 1;
                return result;
            }
            if self.unavailable(pod) {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// `recordPodEvent`.
fn pod_event(ctx: &mut Ctx<'_>, verb: &str, set: &Value, pod: &Value, error: Option<&str>) {
    let (pod, set_name) = (name_of(pod), name_of(set));
    let title = title(verb);
    match error {
        None => {
            let message = format!("{verb} Pod {pod} in StatefulSet {set_name} successful");
            ctx.event(
                COMPONENT,
                set,
                KIND,
                "Normal",
                &format!("Successful{title}"),
                message,
            );
        }
        Some(e) => {
            let message = format!("{verb} Pod {pod} in StatefulSet {set_name} failed error: {e}");
            ctx.event(
                COMPONENT,
                set,
                KIND,
                "Warning",
                &format!("Failed{title}"),
                message,
            );
        }
    }
}

fn title(verb: &str) -> String {
    let mut chars = verb.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// `CreateStatefulPod`: the claims, then the pod.
fn create_pod(ctx: &mut Ctx<'_>, set: &Value, pod: &Value) -> Result<(), String> {
    if let Err(e) = create_claims(ctx, set, pod) {
        pod_event(ctx, "create", set, pod, Some(&e));
        return Err(e);
    }
    match ctx.create(MANAGER, PODS, pod.clone()) {
        Err(e) if e.reason == "AlreadyExists" => Err(e.message),
        result => {
            if result.is_ok()
                && let Err(e) = update_claims_for_policy(ctx, set, pod)
            {
                pod_event(ctx, "update", set, pod, Some(&e));
                return Err(e);
            }
            let error = result.err().map(|e| e.message);
            pod_event(ctx, "create", set, pod, error.as_deref());
            error.map_or(Ok(()), Err)
        }
    }
}

/// `UpdateStatefulPod`: the pod's identity and storage made its ordinal's.
fn update_pod(ctx: &mut Ctx<'_>, set: &Value, pod: &mut Value) -> Result<(), String> {
    let old = pod.clone();
    if !identity_matches(set, pod) {
        update_identity(set, pod);
    }
    if !storage_matches(set, pod) {
        update_storage(set, pod);
        if let Err(e) = create_claims(ctx, set, pod) {
            pod_event(ctx, "update", set, pod, Some(&e));
            return Err(e);
        }
    }
    if !claims_match_policy(ctx, set, pod)
        && let Err(e) = update_claims_for_policy(ctx, set, pod)
    {
        pod_event(ctx, "update", set, pod, Some(&e));
        return Err(e);
    }
    if *pod == old {
        return Ok(());
    }
    let result = ctx.update(MANAGER, PODS, &old, pod.clone(), None);
    let error = result.as_ref().err().map(|e| e.message.clone());
    pod_event(ctx, "update", set, pod, error.as_deref());
    if let Ok(updated) = result {
        *pod = Arc::unwrap_or_clone(updated);
    }
    error.map_or(Ok(()), Err)
}

/// `DeleteStatefulPod`.
fn delete_pod(ctx: &mut Ctx<'_>, set: &Value, pod: &Value) -> Result<(), String> {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let result = ctx.delete(MANAGER, PODS, namespace, name_of(pod), &json!({}));
    let error = result.err().map(|e| e.message);
    pod_event(ctx, "delete", set, pod, error.as_deref());
    error.map_or(Ok(()), Err)
}

/// `createPersistentVolumeClaims`: each missing claim of the pod's ordinal created (an event
/// each); a claim being deleted is an error.
fn create_claims(ctx: &mut Ctx<'_>, set: &Value, pod: &Value) -> Result<(), String> {
    let mut errors = Vec::new();
    for claim in claims_for(set, pod) {
        let namespace = claim["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = name_of(&claim).to_string();
        match ctx.get(PERSISTENT_VOLUME_CLAIMS, namespace, &name) {
            Some(existing) if is_deleting(&existing) => {
                errors.push(format!("pvc {name} is being deleted"));
            }
            Some(_) => {}
            None => {
                let result = ctx.create(MANAGER, PERSISTENT_VOLUME_CLAIMS, claim);
                let (set_name, pod_name) = (name_of(set), name_of(pod));
                match result {
                    Ok(_) => {
                        let message = format!(
                            "create Claim {name} Pod {pod_name} in StatefulSet {set_name} success"
                        );
                        ctx.event(COMPONENT, set, KIND, "Normal", "SuccessfulCreate", message);
                    }
                    Err(e) => {
                        errors.push(format!("failed to create PVC {name}: {}", e.message));
                        if e.reason != "AlreadyExists" {
                            let message = format!(
                                "create Claim {name} for Pod {pod_name} in StatefulSet {set_name} failed error: {}",
                                e.message
                            );
                            ctx.event(COMPONENT, set, KIND, "Warning", "FailedCreate", message);
                        }
                    }
                }
            }
        }
    }
    match errors.len() {
        0 => Ok(()),
        1 => Err(errors.remove(0)),
        _ => Err(format!("[{}]", errors.join(", "))),
    }
}

/// The retention policy's `(whenDeleted, whenScaled)`, `Retain` by default.
fn retention(set: &Value) -> (bool, bool) {
    let policy = &set["spec"]["persistentVolumeClaimRetentionPolicy"];
    (
        policy["whenDeleted"] == "Delete",
        policy["whenScaled"] == "Delete",
    )
}

/// Whether `reference` names `object` (of `api_version`/`kind`) by name (`matchesRef`).
fn names(reference: &Value, object: &Value, api_version: &str, kind: &str) -> bool {
    reference["apiVersion"] == api_version
        && reference["kind"] == kind
        && reference["name"] == object["metadata"]["name"]
}

/// The owner references `claim` should carry under the set's retention policy
/// (`updateClaimOwnerRefForSetAndPod`); `None` when another controller owns it or a
/// reference to an earlier set or pod of the same name is left (`isClaimOwnerUpToDate` leaves
/// those alone).
fn wanted_claim_refs(claim: &Value, set: &Value, pod: &Value) -> Option<Vec<Value>> {
    let refs = claim["metadata"]["ownerReferences"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let is_set = |r: &Value| names(r, set, "apps/v1", KIND);
    let is_pod = |r: &Value| names(r, pod, "v1", "Pod");
    let stale = refs.iter().any(|r| {
        (is_set(r) && r["uid"] != set["metadata"]["uid"])
            || (is_pod(r) && r["uid"] != pod["metadata"]["uid"])
    });
    let other_controller = refs
        .iter()
        .any(|r| !is_set(r) && !is_pod(r) && r["controller"] == true);
    let (when_deleted, when_scaled) = retention(set);
    if stale || (other_controller && (when_deleted || when_scaled)) {
        return None;
    }
    let mut wanted: Vec<Value> = refs
        .into_iter()
        .filter(|r| !is_set(r) && !is_pod(r))
        .collect();
    let scaled_down = !in_ordinal_range(pod, set);
    if when_scaled && scaled_down {
        wanted.push(controller_ref(pod, "v1", "Pod"));
    }
    if when_deleted && !(when_scaled && scaled_down) {
        wanted.push(controller_ref(set, "apps/v1", KIND));
    }
    Some(wanted)
}

fn claims_of(ctx: &Ctx<'_>, set: &Value, pod: &Value) -> Vec<Value> {
    let namespace = set["metadata"]["namespace"].as_str().unwrap_or_default();
    claims_for(set, pod)
        .iter()
        .filter_map(|c| ctx.get(PERSISTENT_VOLUME_CLAIMS, namespace, name_of(c)))
        .collect()
}

/// `ClaimsMatchRetentionPolicy`: every existing claim of the pod carries its wanted owners.
fn claims_match_policy(ctx: &Ctx<'_>, set: &Value, pod: &Value) -> bool {
    claims_of(ctx, set, pod).iter().all(|claim| {
        let current = claim["metadata"]["ownerReferences"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        wanted_claim_refs(claim, set, pod).is_none_or(|wanted| same_owners(&wanted, &current))
    })
}

fn same_owners(a: &[Value], b: &[Value]) -> bool {
    let uids = |refs: &[Value]| {
        let mut uids: Vec<String> = refs
            .iter()
            .map(|r| format!("{}/{}", r["uid"], r["controller"]))
            .collect();
        uids.sort();
        uids
    };
    uids(a) == uids(b)
}

/// `UpdatePodClaimForRetentionPolicy`: the pod's claims given their wanted owners.
fn update_claims_for_policy(ctx: &mut Ctx<'_>, set: &Value, pod: &Value) -> Result<(), String> {
    for claim in claims_of(ctx, set, pod) {
        let Some(wanted) = wanted_claim_refs(&claim, set, pod) else {
            continue;
        };
        let current = claim["metadata"]["ownerReferences"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if same_owners(&wanted, &current) {
            continue;
        }
        let mut new = claim.clone();
        new["metadata"]["ownerReferences"] = Value::Array(wanted);
        ctx.update(MANAGER, PERSISTENT_VOLUME_CLAIMS, &claim, new, None)
            .map_err(|e| {
                format!(
                    "could not update claim {} for delete policy ownerRefs: {}",
                    name_of(&claim),
                    e.message
                )
            })?;
    }
    Ok(())
}

/// `PodClaimIsStale`: with `whenScaled: Delete`, a claim still owned by an earlier pod of the
/// same name waits for the garbage collector before the pod is created again.
fn claim_is_stale(ctx: &Ctx<'_>, set: &Value, pod: &Value) -> bool {
    retention(set).1
        && claims_of(ctx, set, pod).iter().any(|claim| {
            claim["metadata"]["ownerReferences"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|r| names(r, pod, "v1", "Pod") && r["uid"] != pod["metadata"]["uid"])
        })
}

/// `updateStatefulSetStatus`: the rolling update completed when every replica is updated and
/// ready, then the status written when it changed.
fn write_status(ctx: &mut Ctx<'_>, set: &Value, mut status: Status) {
    let replicas = set["spec"]["replicas"].as_i64().unwrap_or(1);
    if set["spec"]["updateStrategy"]["type"]
        .as_str()
        .unwrap_or("RollingUpdate")
        == "RollingUpdate"
        && status.updated == replicas
        && status.ready == replicas
        && status.replicas == replicas
    {
        status.current = status.updated;
        status.current_revision = status.update_revision.clone();
    }
    let old = &set["status"];
    let int = |f: &str| old[f].as_i64().unwrap_or(0);
    let text = |f: &str| old[f].as_str().unwrap_or_default().to_string();
    let inconsistent = status.observed_generation > int("observedGeneration")
        || status.replicas != int("replicas")
        || status.current != int("currentReplicas")
        || status.ready != int("readyReplicas")
        || status.updated != int("updatedReplicas")
        || status.current_revision != text("currentRevision")
        || status.available != int("availableReplicas")
        || status.update_revision != text("updateRevision");
    if inconsistent {
        let _ = ctx.update_status(MANAGER, STATEFUL_SETS, set, status.to_json());
    }
}

/// `truncateHistory`: the revisions no pod, nor the current or update revision, uses, beyond
/// `revisionHistoryLimit`, oldest first.
fn truncate_history(
    ctx: &mut Ctx<'_>,
    set: &Value,
    pods: &[Value],
    revisions: &[Value],
    live: &[&Value],
) {
    let unused: Vec<&Value> = revisions
        .iter()
        .filter(|r| {
            !live.iter().any(|l| name_of(l) == name_of(r))
                && !pods.iter().any(|p| revision_of(p) == name_of(r))
        })
        .collect();
    let limit = set["spec"]["revisionHistoryLimit"].as_i64().unwrap_or(10);
    let Ok(limit) = usize::try_from(limit) else {
        return;
    };
    if unused.len() > limit {
        for revision in &unused[..unused.len() - limit] {
            history::delete(ctx, revision);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(replicas: i64) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "foo", "namespace": "default", "uid": "set-uid"},
            "spec": {
                "replicas": replicas, "serviceName": "governing",
                "selector": {"matchLabels": {"app": "foo"}},
                "template": {"metadata": {"labels": {"app": "foo"}},
                             "spec": {"containers": [{"name": "nginx", "image": "nginx"}],
                                      "volumes": [{"name": "home", "hostPath": {"path": "/tmp/home"}}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "datadir"}, "spec": {}},
                                         {"metadata": {"name": "logs", "labels": {"tier": "log"}}}],
            },
        })
    }

    // stateful_set_utils_test.go TestGetParentNameAndOrdinal
    #[test]
    fn names_give_the_parent_and_ordinal() {
        assert_eq!(parent_and_ordinal("foo-1"), ("foo", 1));
        assert_eq!(parent_and_ordinal("foo-bar-12"), ("foo-bar", 12));
        assert_eq!(parent_and_ordinal("1-bar"), ("", -1));
        assert_eq!(parent_and_ordinal("foo"), ("", -1));
        assert_eq!(parent_and_ordinal("foo-99999999999"), ("foo", -1));
    }

    // TestIdentityMatches
    #[test]
    fn a_pod_keeps_its_identity_until_renamed_relabelled_or_moved() {
        let set = set(3);
        let pod = new_pod(&set, 1, "rev");
        assert!(identity_matches(&set, &pod));
        let mut renamed = pod.clone();
        renamed["metadata"]["name"] = json!("bar-1");
        assert!(!identity_matches(&set, &renamed));
        let mut moved = pod.clone();
        moved["metadata"]["namespace"] = json!("other");
        assert!(!identity_matches(&set, &moved));
        let mut unlabelled = pod.clone();
        unlabelled["metadata"]["labels"]
            .as_object_mut()
            .unwrap()
            .remove(POD_NAME_LABEL);
        assert!(!identity_matches(&set, &unlabelled));
        update_identity(&set, &mut unlabelled);
        assert!(identity_matches(&set, &unlabelled));
    }

    // TestStorageMatches, TestUpdateStorage
    #[test]
    fn a_pod_mounts_its_ordinals_claims() {
        let set = set(3);
        let pod = new_pod(&set, 2, "rev");
        assert!(storage_matches(&set, &pod));
        let volumes = pod["spec"]["volumes"].as_array().unwrap();
        let names: Vec<_> = volumes
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["datadir", "logs", "home"]);
        assert_eq!(
            volumes[0]["persistentVolumeClaim"]["claimName"],
            "datadir-foo-2"
        );
        let mut other = pod.clone();
        other["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] = json!("datadir-foo-1");
        assert!(!storage_matches(&set, &other));
        update_storage(&set, &mut other);
        assert!(storage_matches(&set, &other));
        assert_eq!(other["spec"]["volumes"].as_array().unwrap().len(), 3);
    }

    // TestNewStatefulSetPod, getPersistentVolumeClaims
    #[test]
    fn a_new_pod_has_its_identity_and_claims_their_labels() {
        let set = set(3);
        let pod = new_pod(&set, 0, "foo-abc");
        assert_eq!(pod["metadata"]["name"], "foo-0");
        // As upstream's, from `GetPodFromTemplate`, though the name is set.
        assert_eq!(pod["metadata"]["generateName"], "foo-");
        assert_eq!(pod["metadata"]["labels"][POD_NAME_LABEL], "foo-0");
        assert_eq!(pod["metadata"]["labels"][POD_INDEX_LABEL], "0");
        assert_eq!(pod["metadata"]["labels"][REVISION_LABEL], "foo-abc");
        assert_eq!(pod["metadata"]["labels"]["app"], "foo");
        assert_eq!(pod["spec"]["hostname"], "foo-0");
        assert_eq!(pod["spec"]["subdomain"], "governing");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
        let claims = claims_for(&set, &pod);
        assert_eq!(claims[0]["metadata"]["name"], "datadir-foo-0");
        assert_eq!(claims[0]["metadata"]["labels"], json!({"app": "foo"}));
        assert_eq!(
            claims[1]["metadata"]["labels"],
            json!({"app": "foo", "tier": "log"})
        );
    }

    // TestIsClaimOwnerUpToDate / TestUpdateClaimOwnerRefForSetAndPod, in outline.
    #[test]
    fn claims_are_owned_per_the_retention_policy() {
        let mut set = set(2);
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": "foo-3", "uid": "pod-uid"}});
        let claim = json!({"metadata": {"name": "datadir-foo-3"}});
        let owners = |set: &Value, pod: &Value| -> Vec<String> {
            wanted_claim_refs(&claim, set, pod)
                .unwrap()
                .iter()
                .map(|r| r["uid"].as_str().unwrap().to_string())
                .collect()
        };
        assert!(owners(&set, &pod).is_empty());
        set["spec"]["persistentVolumeClaimRetentionPolicy"] =
            json!({"whenDeleted": "Delete", "whenScaled": "Retain"});
        assert_eq!(owners(&set, &pod), ["set-uid"]);
        set["spec"]["persistentVolumeClaimRetentionPolicy"] =
            json!({"whenDeleted": "Retain", "whenScaled": "Delete"});
        assert_eq!(owners(&set, &pod), ["pod-uid"]);
        set["spec"]["replicas"] = json!(5);
        assert!(owners(&set, &pod).is_empty());
        set["spec"]["persistentVolumeClaimRetentionPolicy"] =
            json!({"whenDeleted": "Delete", "whenScaled": "Delete"});
        assert_eq!(owners(&set, &pod), ["set-uid"]);
        let foreign = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "Other", "name": "x", "uid": "x", "controller": true}]}});
        assert!(wanted_claim_refs(&foreign, &set, &pod).is_none());
    }

    #[test]
    fn ordinals_start_where_the_set_says() {
        let mut set = set(3);
        assert_eq!((start_ordinal(&set), end_ordinal(&set)), (0, 2));
        set["spec"]["ordinals"] = json!({"start": 5});
        assert_eq!((start_ordinal(&set), end_ordinal(&set)), (5, 7));
        let pod = new_pod(&set, 4, "r");
        assert!(!in_ordinal_range(&pod, &set));
    }

    #[test]
    fn the_status_leaves_out_zero_optional_counts() {
        let status = Status {
            replicas: 2,
            update_revision: "web-1".into(),
            ..Status::default()
        };
        assert_eq!(
            status.to_json(),
            json!({"replicas": 2, "availableReplicas": 0, "collisionCount": 0,
                   "updateRevision": "web-1"})
        );
    }
}
