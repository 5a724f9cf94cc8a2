//! The PersistentVolume controller's binder
//! (`pkg/controller/volume/persistentvolume/pv_controller.go`, `index.go`, and
//! `k8s.io/component-helpers/storage/volume`), its claim side ([`ClaimBinder`]: `syncClaim`)
//! and its volume side ([`VolumeBinder`]: `syncVolume`).
//!
//! A claim without `volumeName` binds to the best Available volume (`findBestMatchForClaim`:
//! among the volumes whose access modes hold all the claim's — the sets with fewest modes
//! first — one pre-bound to the claim, else the smallest whose capacity covers the request,
//! of the claim's class, volume mode and attributes class, selected by the claim's selector
//! and not being deleted). Binding (`bind`) writes the volume's `claimRef` (and
//! `pv.kubernetes.io/bound-by-controller` unless the volume was pre-bound), its phase `Bound`,
//! the claim's `volumeName`, `pv.kubernetes.io/bound-by-controller` and
//! `pv.kubernetes.io/bind-completed`, then its status `Bound` with the volume's access modes
//! and capacity. Without a match: a claim of a `WaitForFirstConsumer` class waits for a
//! consumer (`WaitForFirstConsumer` / `WaitForPodScheduled` events); one with a class is
//! handed to its class's provisioner (`volume.kubernetes.io/storage-provisioner`, the
//! `ExternalProvisioning` event; [`super::provisioner`] plays that provisioner); one without
//! a class gets `FailedBinding` (`no persistent volumes available for this claim and no
//! storage class is set`) and stays `Pending`. A claim naming its volume binds to it when it
//! fits (else `VolumeMismatch`) and is free or pre-bound to it (else `FailedBinding`).
//!
//! A volume without a claim is `Available`; one whose claim is gone is `Released` and
//! reclaimed (`reclaimVolume`): `Retain` keeps it, `Delete` hands it to its provisioner's
//! deleter ([`super::provisioner`]), an unknown policy makes it `Failed`
//! (`VolumeUnknownReclaimPolicy`). A volume bound by the controller to a claim bound
//! elsewhere is unbound (a provisioned one with `Delete` is released).
//!
//! The scheduler's part of `WaitForFirstConsumer` (its `VolumeBinding` plugin) is played here,
//! simplified: once a pod using the claim is bound to a node, the claim binds to a fitting
//! volume, or is annotated `volume.kubernetes.io/selected-node` for its provisioner.
//!
//! Simplified: events are recorded when a sync makes them, not again at each 15 s resync;
//! the `ExternalProvisioning` event once, when the claim is handed to the provisioner; volume
//! node affinity, CSI migration and `Recycle` are not played.

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::context::{
    PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, STORAGE_CLASSES, is_deleting, labels,
    selects,
};
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::store::{Change, ChangeType, ObjectKey, StorageKey, object_key};
use crate::validation::quantity::Quantity;
use crate::validation::storage::BETA_CLASS_ANNOTATION;

const MANAGER: &str = "kube-controller-manager";
/// The event source of the controller.
const COMPONENT: &str = "persistentvolume-controller";
/// `AnnBindCompleted`, `AnnBoundByController`, `AnnSelectedNode`, `AnnDynamicallyProvisioned`,
/// `AnnStorageProvisioner` and its beta form.
pub(super) const BIND_COMPLETED: &str = "pv.kubernetes.io/bind-completed";
pub(super) const BOUND_BY_CONTROLLER: &str = "pv.kubernetes.io/bound-by-controller";
pub(super) const SELECTED_NODE: &str = "volume.kubernetes.io/selected-node";
pub(super) const PROVISIONED_BY: &str = "pv.kubernetes.io/provisioned-by";
pub(super) const STORAGE_PROVISIONER: &str = "volume.kubernetes.io/storage-provisioner";
const BETA_STORAGE_PROVISIONER: &str = "volume.beta.kubernetes.io/storage-provisioner";

/// The claim side: its keys are claims.
#[derive(Debug, Default)]
pub(crate) struct ClaimBinder;

/// The volume side: its keys are volumes.
#[derive(Debug, Default)]
pub(crate) struct VolumeBinder;

impl Controller for ClaimBinder {
    fn primary(&self) -> StorageKey {
        PERSISTENT_VOLUME_CLAIMS.storage()
    }

    fn observe(&mut self, change: &Change, state: &State, keys: &mut Keys) {
        let object = &change.object;
        if change.storage == PERSISTENT_VOLUME_CLAIMS.storage() {
            if change.kind != ChangeType::Deleted {
                keys.insert(object_key(object));
            }
        } else if change.storage == PERSISTENT_VOLUMES.storage() {
            let claim = &object["spec"]["claimRef"];
            if let (Some(ns), Some(name)) = (claim["namespace"].as_str(), claim["name"].as_str()) {
                keys.insert((ns.into(), name.into()));
            } else if change.kind != ChangeType::Deleted {
                // A free volume: the unbound claims try again (upstream's periodic resync).
                let claims = state.store.list(&PERSISTENT_VOLUME_CLAIMS.storage(), None);
                keys.extend(claims.filter(|c| !is_bound(c)).map(object_key));
            }
        } else if change.storage == PODS.storage() {
            keys.extend(claims_of_pod(object));
        } else if change.storage == STORAGE_CLASSES.storage() {
            let claims = state.store.list(&PERSISTENT_VOLUME_CLAIMS.storage(), None);
            keys.extend(claims.filter(|c| !is_bound(c)).map(object_key));
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let claim = ctx.get(PERSISTENT_VOLUME_CLAIMS, &key.0, &key.1)?;
        if is_deleting(&claim) {
            return None;
        }
        if annotation(&claim, BIND_COMPLETED).is_none() {
            sync_unbound_claim(ctx, &claim);
        } else {
            sync_bound_claim(ctx, &claim);
        }
        None
    }
}

impl Controller for VolumeBinder {
    fn primary(&self) -> StorageKey {
        PERSISTENT_VOLUMES.storage()
    }

    fn observe(&mut self, change: &Change, state: &State, keys: &mut Keys) {
        let object = &change.object;
        if change.storage == PERSISTENT_VOLUMES.storage() {
            if change.kind != ChangeType::Deleted {
                keys.insert(object_key(object));
            }
        } else if change.storage == PERSISTENT_VOLUME_CLAIMS.storage() {
            let (ns, name) = object_key(object);
            for volume in state.store.list(&PERSISTENT_VOLUMES.storage(), None) {
                let claim = &volume["spec"]["claimRef"];
                if (claim["namespace"] == ns.as_str() && claim["name"] == name.as_str())
                    || object["spec"]["volumeName"] == volume["metadata"]["name"]
                {
                    keys.insert(object_key(volume));
                }
            }
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let volume = ctx.get(PERSISTENT_VOLUMES, "", &key.1)?;
        if !is_deleting(&volume) {
            sync_volume(ctx, &volume);
        }
        None
    }
}

/// An annotation of an object.
pub(super) fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object["metadata"]["annotations"][key].as_str()
}

/// `object` with the annotation `key` set to `value` (or removed, for `None`).
fn annotated(object: &Value, key: &str, value: Option<&str>) -> Value {
    let mut new = object.clone();
    if !new["metadata"]["annotations"].is_object() {
        new["metadata"]["annotations"] = json!({});
    }
    if let Some(map) = new["metadata"]["annotations"].as_object_mut() {
        match value {
            Some(value) => drop(map.insert(key.into(), json!(value))),
            None => drop(map.remove(key)),
        }
    }
    new
}

/// Whether a claim has completed its binding.
fn is_bound(claim: &Value) -> bool {
    annotation(claim, BIND_COMPLETED).is_some()
}

/// `PersistentVolumeClaimHasClass`.
fn claim_has_class(claim: &Value) -> bool {
    annotation(claim, BETA_CLASS_ANNOTATION).is_some()
        || !claim["spec"]["storageClassName"].is_null()
}

/// `GetPersistentVolumeClaimClass`: the beta annotation, else `storageClassName`, else `""`.
pub(super) fn claim_class(claim: &Value) -> &str {
    annotation(claim, BETA_CLASS_ANNOTATION)
        .or_else(|| claim["spec"]["storageClassName"].as_str())
        .unwrap_or_default()
}

/// `GetPersistentVolumeClass`.
fn volume_class(volume: &Value) -> &str {
    annotation(volume, BETA_CLASS_ANNOTATION)
        .or_else(|| volume["spec"]["storageClassName"].as_str())
        .unwrap_or_default()
}

/// A `storage` quantity in milli-units (0 when absent).
fn storage(resources: &Value) -> i128 {
    Quantity::of_json(&resources["storage"]).map_or(0, |q| q.milli_value())
}

/// The claims (namespace, name) a pod's volumes name: `persistentVolumeClaim` ones, and the
/// generic ephemeral ones (`<pod>-<volume>`).
pub(super) fn claims_of_pod(pod: &Value) -> Vec<ObjectKey> {
    let (ns, pod_name) = object_key(pod);
    pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| {
            if let Some(claim) = v["persistentVolumeClaim"]["claimName"].as_str() {
                Some((ns.clone(), claim.to_string()))
            } else if v["ephemeral"].is_object() {
                let volume = v["name"].as_str()?;
                Some((ns.clone(), format!("{pod_name}-{volume}")))
            } else {
                None
            }
        })
        .collect()
}

/// The pods of the claim's namespace whose volumes name it.
pub(super) fn pods_using(ctx: &Ctx<'_>, claim: &Value) -> Vec<Value> {
    let key = object_key(claim);
    ctx.list(PODS, Some(&key.0))
        .into_iter()
        .filter(|p| claims_of_pod(p).contains(&key))
        .collect()
}

/// `IsDelayBindingMode`: the claim's class binds `WaitForFirstConsumer`.
fn is_delay_binding(ctx: &Ctx<'_>, claim: &Value) -> bool {
    let class = claim_class(claim);
    !class.is_empty()
        && ctx
            .get(STORAGE_CLASSES, "", class)
            .is_some_and(|c| c["volumeBindingMode"] == "WaitForFirstConsumer")
}

/// `CheckVolumeModeMismatches` (an unset mode is `Filesystem`).
fn volume_mode_mismatch(claim: &Value, volume: &Value) -> bool {
    let mode = |o: &Value| {
        o["spec"]["volumeMode"]
            .as_str()
            .unwrap_or("Filesystem")
            .to_owned()
    };
    mode(claim) != mode(volume)
}

/// `CheckAccessModes`: the volume has every mode the claim asks for.
fn access_modes_fit(claim: &Value, volume: &Value) -> bool {
    let have = &volume["spec"]["accessModes"];
    claim["spec"]["accessModes"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|m| have.as_array().is_some_and(|h| h.contains(m)))
}

/// `IsVolumeBoundToClaim`: the volume's `claimRef` names the claim (and its uid, if set).
fn bound_to(volume: &Value, claim: &Value) -> bool {
    let reference = &volume["spec"]["claimRef"];
    let meta = &claim["metadata"];
    reference.is_object()
        && reference["name"] == meta["name"]
        && reference["namespace"] == meta["namespace"]
        && reference["uid"]
            .as_str()
            .is_none_or(|uid| uid.is_empty() || meta["uid"] == uid)
}

/// `FindMatchingVolume` on the controller's path (no node): a volume pre-bound to the claim,
/// else (unless `delay_binding`) the smallest Available one that fits.
fn find_matching_volume<'a>(
    claim: &Value,
    volumes: &[&'a Value],
    delay_binding: bool,
) -> Option<&'a Value> {
    let requested = storage(&claim["spec"]["resources"]["requests"]);
    let class = claim_class(claim);
    let attributes = |o: &Value| {
        o["spec"]["volumeAttributesClassName"]
            .as_str()
            .map(str::to_owned)
    };
    let mut smallest: Option<(&Value, i128)> = None;
    for &volume in volumes {
        if volume["spec"]["claimRef"].is_object() && !bound_to(volume, claim) {
            continue;
        }
        let capacity = storage(&volume["spec"]["capacity"]);
        if capacity < requested
            || volume_mode_mismatch(claim, volume)
            || attributes(claim) != attributes(volume)
            || is_deleting(volume)
        {
            continue;
        }
        if bound_to(volume, claim) {
            return Some(volume);
        }
        if delay_binding
            || volume["status"]["phase"] != "Available"
            || (claim["spec"]["selector"].is_object()
                && !selects(&claim["spec"]["selector"], &labels(volume)))
            || volume_class(volume) != class
        {
            continue;
        }
        if smallest.is_none_or(|(_, size)| size > capacity) {
            smallest = Some((volume, capacity));
        }
    }
    smallest.map(|(v, _)| v)
}

/// `findBestMatchForClaim`: [`find_matching_volume`] over the volumes of each set of access
/// modes that holds all the claim's, the sets with fewest modes first.
fn find_best_match<'a>(
    claim: &Value,
    volumes: &'a [Value],
    delay_binding: bool,
) -> Option<&'a Value> {
    let mut by_modes: BTreeMap<(usize, Vec<String>), Vec<&Value>> = BTreeMap::new();
    for volume in volumes {
        let mut modes: Vec<String> = volume["spec"]["accessModes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m.as_str().map(str::to_owned))
            .collect();
        modes.sort();
        modes.dedup();
        by_modes
            .entry((modes.len(), modes))
            .or_default()
            .push(volume);
    }
    by_modes
        .values()
        .filter(|group| access_modes_fit(claim, group[0]))
        .find_map(|group| find_matching_volume(claim, group, delay_binding))
}

/// `checkVolumeSatisfyClaim`: why a volume the claim names does not fit it.
fn check_volume_satisfies_claim(volume: &Value, claim: &Value) -> Result<(), String> {
    let name = volume["metadata"]["name"].as_str().unwrap_or_default();
    if is_deleting(volume) {
        return Err(format!("the volume is marked for deletion {name:?}"));
    }
    if storage(&volume["spec"]["capacity"]) < storage(&claim["spec"]["resources"]["requests"]) {
        return Err("requested PV is too small".into());
    }
    if volume_class(volume) != claim_class(claim) {
        return Err("storageClassName does not match".into());
    }
    let attributes = |o: &Value| o["spec"]["volumeAttributesClassName"].clone();
    if attributes(claim) != attributes(volume) {
        return Err("volumeAttributesClassName does not match".into());
    }
    if volume_mode_mismatch(claim, volume) {
        return Err("incompatible volumeMode".into());
    }
    if !access_modes_fit(claim, volume) {
        return Err("incompatible accessMode".into());
    }
    Ok(())
}

/// Records an event of the controller about a claim.
fn claim_event(ctx: &mut Ctx<'_>, claim: &Value, type_: &str, reason: &str, message: String) {
    ctx.event(
        COMPONENT,
        claim,
        "PersistentVolumeClaim",
        type_,
        reason,
        message,
    );
}

/// `syncUnboundClaim`.
fn sync_unbound_claim(ctx: &mut Ctx<'_>, claim: &Value) {
    let Some(volume_name) = claim["spec"]["volumeName"]
        .as_str()
        .filter(|n| !n.is_empty())
    else {
        return sync_unnamed_claim(ctx, claim);
    };
    let Some(volume) = ctx.get(PERSISTENT_VOLUMES, "", volume_name) else {
        let _ = update_claim_status(ctx, claim, "Pending", None);
        return;
    };
    if !volume["spec"]["claimRef"].is_object() {
        match check_volume_satisfies_claim(&volume, claim) {
            Err(why) => {
                let message = format!("Cannot bind to requested volume {volume_name:?}: {why}");
                claim_event(ctx, claim, "Warning", "VolumeMismatch", message);
                let _ = update_claim_status(ctx, claim, "Pending", None);
            }
            Ok(()) => bind(ctx, &volume, claim),
        }
    } else if bound_to(&volume, claim) {
        bind(ctx, &volume, claim);
    } else {
        let message = format!("volume {volume_name:?} already bound to a different claim.");
        claim_event(ctx, claim, "Warning", "FailedBinding", message);
        if annotation(claim, BOUND_BY_CONTROLLER).is_none() {
            let _ = update_claim_status(ctx, claim, "Pending", None);
        }
    }
}

/// `syncUnboundClaim` for a claim that names no volume.
fn sync_unnamed_claim(ctx: &mut Ctx<'_>, claim: &Value) {
    let delay = is_delay_binding(ctx, claim);
    let volumes = ctx.list(PERSISTENT_VOLUMES, None);
    if let Some(volume) = find_best_match(claim, &volumes, delay) {
        return bind(ctx, volume, claim);
    }
    if delay && annotation(claim, SELECTED_NODE).is_none() && first_consumer(ctx, claim, &volumes) {
        return;
    }
    if assign_default_class(ctx, claim) {
        return;
    }
    let class = claim_class(claim);
    if delay && annotation(claim, SELECTED_NODE).is_none() {
        let waiting: Vec<String> = pods_using(ctx, claim)
            .iter()
            .filter(|p| p["spec"]["nodeName"].as_str().is_none_or(str::is_empty))
            .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_owned))
            .collect();
        let (reason, message) = match waiting.as_slice() {
            [] => (
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding".to_string(),
            ),
            [one] => (
                "WaitForPodScheduled",
                format!("waiting for pod {one} to be scheduled"),
            ),
            many => (
                "WaitForPodScheduled",
                format!("waiting for pods {} to be scheduled", many.join(",")),
            ),
        };
        claim_event(ctx, claim, "Normal", reason, message);
    } else if !class.is_empty() {
        return provision_claim(ctx, claim);
    } else {
        let message = "no persistent volumes available for this claim and no storage class is set";
        claim_event(ctx, claim, "Normal", "FailedBinding", message.into());
    }
    let _ = update_claim_status(ctx, claim, "Pending", None);
}

/// The scheduler's `VolumeBinding` for a delayed claim whose consumer was bound to a node: the
/// claim binds to a fitting volume, else is annotated with the node for its provisioner.
/// Whether it did either.
fn first_consumer(ctx: &mut Ctx<'_>, claim: &Value, volumes: &[Value]) -> bool {
    let node = pods_using(ctx, claim).into_iter().find_map(|p| {
        p["spec"]["nodeName"]
            .as_str()
            .filter(|n| !n.is_empty())
            .map(str::to_owned)
    });
    let Some(node) = node else {
        return false;
    };
    if let Some(volume) = find_best_match(claim, volumes, false) {
        bind(ctx, volume, claim);
        return true;
    }
    let class = ctx.get(STORAGE_CLASSES, "", claim_class(claim));
    if class.is_none_or(|c| c["provisioner"] == "kubernetes.io/no-provisioner") {
        return false;
    }
    let new = annotated(claim, SELECTED_NODE, Some(&node));
    let _ = ctx.update("kube-scheduler", PERSISTENT_VOLUME_CLAIMS, claim, new, None);
    true
}

/// `assignDefaultStorageClass`: a claim without a class gets the default one, when there is
/// one. Whether it was written.
fn assign_default_class(ctx: &mut Ctx<'_>, claim: &Value) -> bool {
    if claim_has_class(claim) {
        return false;
    }
    let mut new = claim.clone();
    crate::kinds::storage::admit_claim_create(&ctx.state.store, &mut new);
    if new["spec"]["storageClassName"].is_null() {
        return false;
    }
    ctx.update(MANAGER, PERSISTENT_VOLUME_CLAIMS, claim, new, None)
        .is_ok()
}

/// `provisionClaim` with an external provisioner (`provisionClaimOperationExternal`): the
/// claim is annotated with its class's provisioner, which [`super::provisioner`] plays.
fn provision_claim(ctx: &mut Ctx<'_>, claim: &Value) {
    let class_name = claim_class(claim);
    let Some(class) = ctx.get(STORAGE_CLASSES, "", class_name) else {
        let message = format!("storageclass.storage.k8s.io {class_name:?} not found");
        claim_event(ctx, claim, "Warning", "ProvisioningFailed", message);
        return;
    };
    let provisioner = class["provisioner"].as_str().unwrap_or_default();
    if provisioner.starts_with("kubernetes.io/") {
        // No in-tree provisioner is left.
        let message = format!("no volume plugin matched name: {provisioner}");
        claim_event(ctx, claim, "Warning", "ProvisioningFailed", message);
        return;
    }
    if annotation(claim, STORAGE_PROVISIONER) == Some(provisioner) {
        return;
    }
    let new = annotated(claim, BETA_STORAGE_PROVISIONER, Some(provisioner));
    let new = annotated(&new, STORAGE_PROVISIONER, Some(provisioner));
    if let Ok(claim) = ctx.update(MANAGER, PERSISTENT_VOLUME_CLAIMS, claim, new, None) {
        let message = format!(
            "Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered."
        );
        claim_event(ctx, &claim, "Normal", "ExternalProvisioning", message);
    }
}

/// `syncBoundClaim`.
fn sync_bound_claim(ctx: &mut Ctx<'_>, claim: &Value) {
    let lost = |ctx: &mut Ctx<'_>, reason: &str, message: &str| {
        if claim["status"]["phase"] != "Lost"
            && let Ok(claim) = update_claim_status(ctx, claim, "Lost", None)
        {
            claim_event(ctx, &claim, "Warning", reason, message.into());
        }
    };
    let Some(volume_name) = claim["spec"]["volumeName"]
        .as_str()
        .filter(|n| !n.is_empty())
    else {
        return lost(
            ctx,
            "ClaimLost",
            "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!",
        );
    };
    let Some(volume) = ctx.get(PERSISTENT_VOLUMES, "", volume_name) else {
        return lost(
            ctx,
            "ClaimLost",
            "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
        );
    };
    let reference = &volume["spec"]["claimRef"];
    if !reference.is_object() || reference["uid"] == claim["metadata"]["uid"] {
        bind(ctx, &volume, claim);
    } else {
        lost(
            ctx,
            "ClaimMisbound",
            "Two claims are bound to the same volume, this one is bound incorrectly",
        );
    }
}

/// `GetReference` of a claim.
pub(super) fn claim_ref(claim: &Value) -> Value {
    let meta = &claim["metadata"];
    json!({"kind": "PersistentVolumeClaim", "namespace": meta["namespace"], "name": meta["name"],
           "uid": meta["uid"], "apiVersion": "v1", "resourceVersion": meta["resourceVersion"]})
}

/// `bind`: the volume's `claimRef` and phase, then the claim's `volumeName`, annotations and
/// status.
fn bind(ctx: &mut Ctx<'_>, volume: &Value, claim: &Value) {
    // bindVolumeToClaim.
    let mut volume = volume.clone();
    let reference = &volume["spec"]["claimRef"];
    let meta = &claim["metadata"];
    let pre_bound = bound_to(&volume, claim);
    if !reference.is_object()
        || reference["name"] != meta["name"]
        || reference["namespace"] != meta["namespace"]
        || reference["uid"] != meta["uid"]
        || (!pre_bound && annotation(&volume, BOUND_BY_CONTROLLER).is_none())
    {
        let mut new = volume.clone();
        new["spec"]["claimRef"] = claim_ref(claim);
        if !pre_bound {
            new = annotated(&new, BOUND_BY_CONTROLLER, Some("yes"));
        }
        match ctx.update(MANAGER, PERSISTENT_VOLUMES, &volume, new, None) {
            Ok(saved) => volume = Arc::unwrap_or_clone(saved),
            Err(_) => return,
        }
    }
    let Ok(volume) = update_volume_phase(ctx, &volume, "Bound", "") else {
        return;
    };
    // bindClaimToVolume.
    let mut new = claim.clone();
    let name = volume["metadata"]["name"].clone();
    if claim["spec"]["volumeName"] != name {
        new["spec"]["volumeName"] = name;
        if annotation(&new, BOUND_BY_CONTROLLER).is_none() {
            new = annotated(&new, BOUND_BY_CONTROLLER, Some("yes"));
        }
    }
    if annotation(&new, BIND_COMPLETED).is_none() {
        new = annotated(&new, BIND_COMPLETED, Some("yes"));
    }
    let claim = if new == *claim {
        claim.clone()
    } else {
        match ctx.update(MANAGER, PERSISTENT_VOLUME_CLAIMS, claim, new, None) {
            Ok(saved) => Arc::unwrap_or_clone(saved),
            Err(_) => return,
        }
    };
    let _ = update_claim_status(ctx, &claim, "Bound", Some(&volume));
}

/// `updateClaimStatus`: the phase, and the volume's access modes and (when becoming bound) its
/// capacity, or neither without a volume.
fn update_claim_status(
    ctx: &mut Ctx<'_>,
    claim: &Value,
    phase: &str,
    volume: Option<&Value>,
) -> Result<Value, crate::status::ApiError> {
    let mut status = claim["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    let becomes = status["phase"] != phase;
    status["phase"] = json!(phase);
    if let Some(map) = status.as_object_mut() {
        match volume {
            None => {
                for field in [
                    "accessModes",
                    "capacity",
                    "currentVolumeAttributesClassName",
                ] {
                    map.remove(field);
                }
            }
            Some(volume) => {
                map.insert("accessModes".into(), volume["spec"]["accessModes"].clone());
                if becomes {
                    map.insert("capacity".into(), volume["spec"]["capacity"].clone());
                }
            }
        }
    }
    ctx.update_status(MANAGER, PERSISTENT_VOLUME_CLAIMS, claim, status)
        .map(Arc::unwrap_or_clone)
}

/// `updateVolumePhase`.
pub(super) fn update_volume_phase(
    ctx: &mut Ctx<'_>,
    volume: &Value,
    phase: &str,
    message: &str,
) -> Result<Value, crate::status::ApiError> {
    if volume["status"]["phase"] == phase {
        return Ok(volume.clone());
    }
    let mut status = volume["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    status["phase"] = json!(phase);
    if let Some(map) = status.as_object_mut() {
        if message.is_empty() {
            map.remove("message");
        } else {
            map.insert("message".into(), json!(message));
        }
    }
    ctx.update_status(MANAGER, PERSISTENT_VOLUMES, volume, status)
        .map(Arc::unwrap_or_clone)
}

/// `syncVolume`.
fn sync_volume(ctx: &mut Ctx<'_>, volume: &Value) {
    let reference = &volume["spec"]["claimRef"];
    if !reference.is_object() || reference["uid"].as_str().is_none_or(str::is_empty) {
        let _ = update_volume_phase(ctx, volume, "Available", "");
        return;
    }
    let (ns, name) = (
        reference["namespace"].as_str().unwrap_or_default(),
        reference["name"].as_str().unwrap_or_default(),
    );
    let claim = ctx
        .get(PERSISTENT_VOLUME_CLAIMS, ns, name)
        .filter(|c| c["metadata"]["uid"] == reference["uid"]);
    let phase = volume["status"]["phase"].as_str().unwrap_or_default();
    let Some(claim) = claim else {
        release_and_reclaim(ctx, volume, phase);
        return;
    };
    let claimed = claim["spec"]["volumeName"].as_str().unwrap_or_default();
    if claimed.is_empty() {
        // The claim's sync finishes the binding.
    } else if volume["metadata"]["name"] == claimed {
        let _ = update_volume_phase(ctx, volume, "Bound", "");
    } else if annotation(volume, PROVISIONED_BY).is_some()
        && volume["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    {
        release_and_reclaim(ctx, volume, phase);
    } else {
        // unbindVolume.
        let mut new = volume.clone();
        if annotation(volume, BOUND_BY_CONTROLLER).is_some() {
            if let Some(spec) = new["spec"].as_object_mut() {
                spec.remove("claimRef");
            }
            new = annotated(&new, BOUND_BY_CONTROLLER, None);
        } else {
            new["spec"]["claimRef"]["uid"] = json!("");
        }
        if let Ok(saved) = ctx.update(MANAGER, PERSISTENT_VOLUMES, volume, new, None) {
            let _ = update_volume_phase(ctx, &saved, "Available", "");
        }
    }
}

/// A volume whose claim is gone: `Released` (unless already `Released` or `Failed`), then
/// `reclaimVolume`.
fn release_and_reclaim(ctx: &mut Ctx<'_>, volume: &Value, phase: &str) {
    let volume = if phase == "Released" || phase == "Failed" {
        volume.clone()
    } else {
        match update_volume_phase(ctx, volume, "Released", "") {
            Ok(saved) => saved,
            Err(_) => return,
        }
    };
    match volume["spec"]["persistentVolumeReclaimPolicy"].as_str() {
        Some("Retain" | "Recycle") => {}
        Some("Delete") => super::provisioner::delete_released(ctx, &volume),
        _ => {
            if volume["status"]["phase"] != "Failed"
                && let Ok(saved) = update_volume_phase(
                    ctx,
                    &volume,
                    "Failed",
                    "Volume has unrecognized PersistentVolumeReclaimPolicy",
                )
            {
                let message = "Volume has unrecognized PersistentVolumeReclaimPolicy".to_string();
                ctx.event(
                    COMPONENT,
                    &saved,
                    "PersistentVolume",
                    "Warning",
                    "VolumeUnknownReclaimPolicy",
                    message,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(request: &str, modes: Value, class: Option<&str>) -> Value {
        json!({"metadata": {"name": "data", "namespace": "ns", "uid": "c1"},
               "spec": {"accessModes": modes, "resources": {"requests": {"storage": request}},
                        "storageClassName": class}})
    }

    fn volume(name: &str, size: &str, modes: Value, class: &str) -> Value {
        json!({"metadata": {"name": name, "labels": {"disk": name}},
               "spec": {"capacity": {"storage": size}, "accessModes": modes,
                        "storageClassName": class},
               "status": {"phase": "Available"}})
    }

    fn best<'a>(claim: &Value, volumes: &'a [Value], delay: bool) -> Option<&'a str> {
        find_best_match(claim, volumes, delay).and_then(|v| v["metadata"]["name"].as_str())
    }

    #[test]
    fn the_smallest_fitting_volume_of_the_class_is_chosen() {
        let rwo = json!(["ReadWriteOnce"]);
        let c = claim("5Gi", rwo.clone(), Some("fast"));
        let volumes = [
            volume("big", "100Gi", rwo.clone(), "fast"),
            volume("small", "1Gi", rwo.clone(), "fast"),
            volume("exact", "5Gi", rwo.clone(), "fast"),
            volume("other-class", "5Gi", rwo.clone(), "slow"),
        ];
        assert_eq!(best(&c, &volumes, false), Some("exact"));
        // A class-less claim only takes class-less volumes.
        let plain = claim("5Gi", rwo.clone(), None);
        assert_eq!(best(&plain, &volumes, false), None);
        // Not Available: skipped.
        let mut bound = volumes.clone();
        bound[2]["status"]["phase"] = json!("Bound");
        assert_eq!(best(&c, &bound, false), Some("big"));
    }

    #[test]
    fn access_modes_must_all_be_held_the_fewest_first() {
        let c = claim("1Gi", json!(["ReadWriteOnce"]), Some(""));
        let volumes = [
            volume("rox", "1Gi", json!(["ReadOnlyMany"]), ""),
            volume("both", "1Gi", json!(["ReadWriteOnce", "ReadOnlyMany"]), ""),
            volume("rwo-big", "10Gi", json!(["ReadWriteOnce"]), ""),
        ];
        // The single-mode set is searched before the smaller two-mode volume.
        assert_eq!(best(&c, &volumes, false), Some("rwo-big"));
        let many = claim("1Gi", json!(["ReadWriteOnce", "ReadOnlyMany"]), Some(""));
        assert_eq!(best(&many, &volumes, false), Some("both"));
        let rwx = claim("1Gi", json!(["ReadWriteMany"]), Some(""));
        assert_eq!(best(&rwx, &volumes, false), None);
    }

    #[test]
    fn selectors_pre_binding_and_delayed_binding() {
        let rwo = json!(["ReadWriteOnce"]);
        let volumes = [
            volume("a", "1Gi", rwo.clone(), ""),
            volume("b", "2Gi", rwo.clone(), ""),
        ];
        let mut picky = claim("1Gi", rwo.clone(), Some(""));
        picky["spec"]["selector"] = json!({"matchLabels": {"disk": "b"}});
        assert_eq!(best(&picky, &volumes, false), Some("b"));
        // Delayed binding only takes a volume pre-bound to the claim.
        let c = claim("1Gi", rwo.clone(), Some(""));
        assert_eq!(best(&c, &volumes, true), None);
        let mut pre = volumes.clone();
        pre[1]["spec"]["claimRef"] = json!({"namespace": "ns", "name": "data"});
        pre[1]["status"]["phase"] = json!("Bound");
        assert_eq!(best(&c, &pre, true), Some("b"));
        // Pre-bound to another claim: never.
        pre[1]["spec"]["claimRef"] = json!({"namespace": "ns", "name": "other"});
        assert_eq!(best(&c, &pre, false), Some("a"));
    }

    #[test]
    fn a_named_volume_must_satisfy_the_claim() {
        let rwo = json!(["ReadWriteOnce"]);
        let c = claim("5Gi", rwo.clone(), Some("fast"));
        let fits = volume("v", "5Gi", rwo.clone(), "fast");
        assert_eq!(check_volume_satisfies_claim(&fits, &c), Ok(()));
        let small = volume("v", "1Gi", rwo.clone(), "fast");
        assert_eq!(
            check_volume_satisfies_claim(&small, &c).unwrap_err(),
            "requested PV is too small"
        );
        let slow = volume("v", "5Gi", rwo.clone(), "slow");
        assert_eq!(
            check_volume_satisfies_claim(&slow, &c).unwrap_err(),
            "storageClassName does not match"
        );
        let rox = volume("v", "5Gi", json!(["ReadOnlyMany"]), "fast");
        assert_eq!(
            check_volume_satisfies_claim(&rox, &c).unwrap_err(),
            "incompatible accessMode"
        );
        let mut block = fits.clone();
        block["spec"]["volumeMode"] = json!("Block");
        assert_eq!(
            check_volume_satisfies_claim(&block, &c).unwrap_err(),
            "incompatible volumeMode"
        );
    }

    #[test]
    fn a_pod_names_its_claims_and_ephemeral_ones() {
        let pod = json!({"metadata": {"name": "web", "namespace": "ns"},
            "spec": {"volumes": [{"name": "a", "persistentVolumeClaim": {"claimName": "data"}},
                                 {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}},
                                 {"name": "cfg", "configMap": {"name": "c"}}]}});
        assert_eq!(
            claims_of_pod(&pod),
            [
                ("ns".to_string(), "data".to_string()),
                ("ns".to_string(), "web-scratch".to_string())
            ]
        );
    }
}
