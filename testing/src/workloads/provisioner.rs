//! The external provisioner of every StorageClass whose provisioner is not an in-tree
//! `kubernetes.io/` name, as `sig-storage-lib-external-provisioner` runs it inside csi-provisioner
//! or kind's local-path-provisioner: a claim the PersistentVolume controller annotated
//! `volume.kubernetes.io/storage-provisioner` with the class's provisioner, not bound yet (and,
//! for a `WaitForFirstConsumer` class, annotated `volume.kubernetes.io/selected-node`), gets a
//! PersistentVolume `pvc-<claim uid>` (annotated `pv.kubernetes.io/provisioned-by`; the
//! claim's request as capacity, its access and volume modes; the class's reclaim policy and
//! mount options; a `claimRef` to the claim; a `hostPath` under
//! `/var/local-path-provisioner/` and, on a selected node, a node affinity to it), with the
//! events `Provisioning` (`External provisioner is provisioning volume for claim "<ns>/<name>"`)
//! and `ProvisioningSucceeded` (`Successfully provisioned volume <pv>`). The PersistentVolume
//! controller then binds the claim to it. Its deleter ([`delete_released`]) deletes the
//! `Released` volumes it provisioned whose policy is `Delete`.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::context::{PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, STORAGE_CLASSES, is_deleting};
use super::volumes::{
    PROVISIONED_BY, SELECTED_NODE, STORAGE_PROVISIONER, annotation, claim_class, claim_ref,
};
use super::{Controller, Ctx};
use crate::store::{ObjectKey, StorageKey};

const MANAGER: &str = "external-provisioner";

/// The provisioner: its keys are claims.
#[derive(Debug, Default)]
pub(crate) struct Provisioner;

/// Whether the simulated cluster plays `provisioner` (any name but an in-tree one).
fn plays(provisioner: &str) -> bool {
    !provisioner.is_empty() && !provisioner.starts_with("kubernetes.io/")
}

impl Controller for Provisioner {
    fn primary(&self) -> StorageKey {
        PERSISTENT_VOLUME_CLAIMS.storage()
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let claim = ctx.get(PERSISTENT_VOLUME_CLAIMS, &key.0, &key.1)?;
        let provisioner = annotation(&claim, STORAGE_PROVISIONER)?;
        let class = ctx.get(STORAGE_CLASSES, "", claim_class(&claim))?;
        let wanted = !is_deleting(&claim)
            && plays(provisioner)
            && class["provisioner"] == provisioner
            && claim["spec"]["volumeName"]
                .as_str()
                .is_none_or(str::is_empty)
            && (class["volumeBindingMode"] != "WaitForFirstConsumer"
                || annotation(&claim, SELECTED_NODE).is_some());
        let name = format!("pvc-{}", claim["metadata"]["uid"].as_str()?);
        if !wanted || ctx.get(PERSISTENT_VOLUMES, "", &name).is_some() {
            return None;
        }
        let provisioner = provisioner.to_string();
        let message = format!(
            "External provisioner is provisioning volume for claim \"{}/{}\"",
            key.0, key.1
        );
        ctx.event(
            &provisioner,
            &claim,
            "PersistentVolumeClaim",
            "Normal",
            "Provisioning",
            message,
        );
        let volume = volume_for(&claim, &class, &name);
        if ctx.create(MANAGER, PERSISTENT_VOLUMES, volume).is_ok() {
            let message = format!("Successfully provisioned volume {name}");
            ctx.event(
                &provisioner,
                &claim,
                "PersistentVolumeClaim",
                "Normal",
                "ProvisioningSucceeded",
                message,
            );
        }
        None
    }
}

/// The volume provisioned for `claim` of `class`.
fn volume_for(claim: &Value, class: &Value, name: &str) -> Value {
    let meta = &claim["metadata"];
    let spec = &claim["spec"];
    let path = format!(
        "/var/local-path-provisioner/{name}_{}_{}",
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default()
    );
    let mut volume = json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": {PROVISIONED_BY: class["provisioner"]}},
        "spec": {
            "capacity": {"storage": spec["resources"]["requests"]["storage"]},
            "accessModes": spec["accessModes"],
            "persistentVolumeReclaimPolicy": class["reclaimPolicy"].as_str().unwrap_or("Delete"),
            "storageClassName": claim_class(claim),
            "volumeMode": spec["volumeMode"].as_str().unwrap_or("Filesystem"),
            "claimRef": claim_ref(claim),
            "hostPath": {"path": path, "type": "DirectoryOrCreate"},
        },
    });
    if class["mountOptions"].is_array() {
        volume["spec"]["mountOptions"] = class["mountOptions"].clone();
    }
    if let Some(node) = annotation(claim, SELECTED_NODE) {
        volume["spec"]["nodeAffinity"] = json!({"required": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}],
        }]}});
    }
    volume
}

/// The deleter: a `Released` volume with policy `Delete` that a played provisioner made is
/// deleted (its storage with it).
pub(super) fn delete_released(ctx: &mut Ctx<'_>, volume: &Value) {
    let played = annotation(volume, PROVISIONED_BY).is_some_and(plays);
    if played
        && volume["status"]["phase"] == "Released"
        && volume["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
        && !is_deleting(volume)
    {
        let name = volume["metadata"]["name"].as_str().unwrap_or_default();
        let _ = ctx.delete(MANAGER, PERSISTENT_VOLUMES, "", name, &json!({}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provisioned_volume_takes_the_claims_request_and_the_class_policy() {
        let claim = json!({"metadata": {"name": "data", "namespace": "ns", "uid": "u1",
                                        "resourceVersion": "7",
                                        "annotations": {SELECTED_NODE: "worker-1"}},
                           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                                    "resources": {"requests": {"storage": "2Gi"}}}});
        let class = json!({"provisioner": "example.com/fast", "reclaimPolicy": "Retain"});
        let v = volume_for(&claim, &class, "pvc-u1");
        assert_eq!(
            v["metadata"]["annotations"][PROVISIONED_BY],
            "example.com/fast"
        );
        assert_eq!(v["spec"]["capacity"]["storage"], "2Gi");
        assert_eq!(v["spec"]["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(v["spec"]["storageClassName"], "fast");
        assert_eq!(v["spec"]["claimRef"]["uid"], "u1");
        assert_eq!(
            v["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"],
            json!(["worker-1"])
        );
        assert!(plays("example.com/fast"));
        assert!(!plays("kubernetes.io/no-provisioner"));
    }
}
