//! The storage object in-use protection controllers
//! (`pkg/controller/volume/pvcprotection/pvc_protection_controller.go`,
//! `pkg/controller/volume/pvprotection/pv_protection_controller.go`): a claim being deleted
//! loses its `kubernetes.io/pvc-protection` finalizer once no pod bound to a node uses it
//! (`podUsesPVC`: a `persistentVolumeClaim` volume naming it, or a generic ephemeral volume
//! whose claim the pod owns, unless the pod is shut down), and a volume being deleted loses
//! `kubernetes.io/pv-protection` once it is not `Bound`. Objects not being deleted are given
//! their finalizer when they lack it (for those created before the admission plugin that
//! adds it).

use jiff::Timestamp;
use serde_json::{Value, json};

use super::context::{
    PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, PODS, Resource, controller_uid, is_deleting,
};
use super::volumes::claims_of_pod;
use super::{Controller, Ctx, Keys};
use crate::object::finalizers;
use crate::registry::State;
use crate::store::{Change, ChangeType, ObjectKey, StorageKey, object_key};

const MANAGER: &str = "kube-controller-manager";
const CLAIM_FINALIZER: &str = "kubernetes.io/pvc-protection";
const VOLUME_FINALIZER: &str = "kubernetes.io/pv-protection";

/// The claims' protection: its keys are claims.
#[derive(Debug, Default)]
pub(crate) struct ClaimProtection;

/// The volumes' protection: its keys are volumes.
#[derive(Debug, Default)]
pub(crate) struct VolumeProtection;

impl Controller for ClaimProtection {
    fn primary(&self) -> StorageKey {
        PERSISTENT_VOLUME_CLAIMS.storage()
    }

    fn observe(&mut self, change: &Change, _state: &State, keys: &mut Keys) {
        if change.storage == PERSISTENT_VOLUME_CLAIMS.storage()
            && change.kind != ChangeType::Deleted
        {
            keys.insert(object_key(&change.object));
        } else if change.storage == PODS.storage() {
            keys.extend(claims_of_pod(&change.object));
            if let Some(previous) = &change.previous {
                keys.extend(claims_of_pod(previous));
            }
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let claim = ctx.get(PERSISTENT_VOLUME_CLAIMS, &key.0, &key.1)?;
        let used = is_deleting(&claim) && in_use(ctx, &claim);
        protect(ctx, PERSISTENT_VOLUME_CLAIMS, &claim, CLAIM_FINALIZER, used);
        None
    }
}

impl Controller for VolumeProtection {
    fn primary(&self) -> StorageKey {
        PERSISTENT_VOLUMES.storage()
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let volume = ctx.get(PERSISTENT_VOLUMES, "", &key.1)?;
        let used = volume["status"]["phase"] == "Bound";
        protect(ctx, PERSISTENT_VOLUMES, &volume, VOLUME_FINALIZER, used);
        None
    }
}

/// `processPVC` / `processPV`: an object being deleted loses `finalizer` unless `used`; one not
/// being deleted gets it.
fn protect(ctx: &mut Ctx<'_>, resource: Resource, object: &Value, finalizer: &str, used: bool) {
    let mut list = finalizers(object);
    let has = list.iter().any(|f| f == finalizer);
    if is_deleting(object) {
        if !has || used {
            return;
        }
        list.retain(|f| f != finalizer);
    } else if has {
        return;
    } else {
        list.push(finalizer.to_string());
    }
    let mut new = object.clone();
    new["metadata"]["finalizers"] = json!(list);
    let _ = ctx.update(MANAGER, resource, object, new, None);
}

/// `isBeingUsed`: a pod bound to a node uses the claim.
fn in_use(ctx: &Ctx<'_>, claim: &Value) -> bool {
    let (ns, name) = object_key(claim);
    ctx.list(PODS, Some(&ns)).iter().any(|pod| {
        pod["spec"]["nodeName"]
            .as_str()
            .is_some_and(|n| !n.is_empty())
            && pod["spec"]["volumes"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|v| uses(pod, v, &name, claim))
    })
}

/// `podUsesPVC` for one volume of a scheduled pod.
fn uses(pod: &Value, volume: &Value, claim_name: &str, claim: &Value) -> bool {
    if volume["persistentVolumeClaim"]["claimName"] == claim_name {
        return true;
    }
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default();
    let volume_name = volume["name"].as_str().unwrap_or_default();
    volume["ephemeral"].is_object()
        && !shut_down(pod)
        && format!("{pod_name}-{volume_name}") == claim_name
        && controller_uid(claim).is_some_and(|uid| pod["metadata"]["uid"] == uid)
}

/// `podIsShutDown`: deleted with a zero grace period (done by its kubelet, or forced).
fn shut_down(pod: &Value) -> bool {
    is_deleting(pod) && pod["metadata"]["deletionGracePeriodSeconds"] == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scheduled_pod_uses_the_claims_its_volumes_name() {
        let claim = json!({"metadata": {"name": "web-scratch", "namespace": "ns",
            "ownerReferences": [{"uid": "p1", "controller": true}]}});
        let pod = json!({"metadata": {"name": "web", "uid": "p1"}, "spec": {"nodeName": "n"}});
        let ephemeral = json!({"name": "scratch", "ephemeral": {}});
        assert!(uses(&pod, &ephemeral, "web-scratch", &claim));
        let mut gone = pod.clone();
        gone["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        gone["metadata"]["deletionGracePeriodSeconds"] = json!(0);
        assert!(!uses(&gone, &ephemeral, "web-scratch", &claim));
        let named = json!({"name": "data", "persistentVolumeClaim": {"claimName": "data"}});
        assert!(uses(&gone, &named, "data", &claim));
        assert!(!uses(&pod, &named, "other", &claim));
    }
}
