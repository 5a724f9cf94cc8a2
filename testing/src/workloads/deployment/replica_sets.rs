//! A Deployment's ReplicaSets (`getReplicaSetsForDeployment`, `getPodMapForDeployment` of
//! `deployment_controller.go`; `getAllReplicaSetsAndSyncRevision`, `getNewReplicaSet`,
//! `isScalingEvent` of `sync.go`): claimed by selector and owner, split into the new one (whose
//! template is the Deployment's) and the old ones, the new one created or brought up to date
//! with the revision annotations.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::template::{HASH_LABEL, compute_hash, equal_ignore_hash, replica_set_name};
use super::util::{
    self, by_creation, desired_replicas_annotation, max_revision, new_condition,
    new_rs_new_replicas, progress_deadline, replicas, set_condition, set_deployment_revision,
    set_new_rs_annotations,
};
use super::{MANAGER, Split, Sync, rolling};
use crate::status::ApiError;
use crate::workloads::context::{
    PODS, REPLICA_SETS, controller_ref, controller_uid, is_deleting, selects_object,
};

impl Sync<'_, '_> {
    /// `getReplicaSetsForDeployment`: the ReplicaSets of the namespace the Deployment owns and
    /// selects, orphans it selects adopted, owned ones it no longer selects released.
    pub(super) fn claim_replica_sets(&mut self) -> Vec<Value> {
        let uid = self.d["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let selector = self.d["spec"]["selector"].clone();
        let deleting = is_deleting(&self.d);
        let mut claimed = Vec::new();
        let namespace = self.namespace();
        let candidates = self.ctx.owned(REPLICA_SETS, &namespace, &uid);
        let orphans = self.ctx.uncontrolled(REPLICA_SETS, &namespace);
        for rs in candidates.into_iter().chain(orphans) {
            let matches = selects_object(&selector, &rs);
            match controller_uid(&rs) {
                Some(owner) if owner != uid => {}
                Some(_) if matches => claimed.push(rs),
                Some(_) if !deleting => {
                    let _ = self.set_controller(&rs, &uid, None);
                }
                Some(_) => {}
                None if matches && !deleting && !is_deleting(&rs) => {
                    let reference = controller_ref(&self.d, "apps/v1", "Deployment");
                    if let Ok(adopted) = self.set_controller(&rs, &uid, Some(reference)) {
                        claimed.push(adopted);
                    }
                }
                None => {}
            }
        }
        claimed
    }

    /// Adds `reference` to a ReplicaSet's owner references, or removes those of `uid`.
    pub(super) fn set_controller(
        &mut self,
        rs: &Value,
        uid: &str,
        reference: Option<Value>,
    ) -> Result<Value, ApiError> {
        let mut refs: Vec<Value> = rs["metadata"]["ownerReferences"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        refs.retain(|r| r["uid"] != uid);
        refs.extend(reference);
        let mut new = rs.clone();
        new["metadata"]["ownerReferences"] = Value::Array(refs);
        self.ctx
            .update(MANAGER, REPLICA_SETS, rs, new, None)
            .map(Arc::unwrap_or_clone)
    }

    /// `getPodMapForDeployment`: the pods the Deployment selects, by the uid of their
    /// ReplicaSet in `rs_list` (finished pods included).
    pub(super) fn pods_by_replica_set(
        &self,
        rs_list: &[Value],
    ) -> BTreeMap<String, Vec<Arc<Value>>> {
        let mut map: BTreeMap<String, Vec<Arc<Value>>> = rs_list
            .iter()
            .filter_map(|rs| rs["metadata"]["uid"].as_str())
            .map(|uid| (uid.to_string(), Vec::new()))
            .collect();
        let namespace = self.namespace();
        for (uid, pods) in &mut map {
            let owned = self.ctx.owned_shared(PODS, &namespace, uid);
            pods.extend(
                owned
                    .into_iter()
                    .filter(|pod| selects_object(&self.d["spec"]["selector"], pod)),
            );
        }
        map
    }

    /// `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet (created when `create` and
    /// missing) and all the old ones.
    pub(super) fn all_replica_sets(
        &mut self,
        rs_list: &[Value],
        create: bool,
    ) -> Result<Split, ApiError> {
        let mut sorted = rs_list.to_vec();
        sorted.sort_by(by_creation);
        let template = &self.d["spec"]["template"];
        let new_index = sorted
            .iter()
            .position(|rs| equal_ignore_hash(&rs["spec"]["template"], template));
        let existing = new_index.map(|i| sorted.remove(i));
        let new = self.new_replica_set(existing, &sorted, create)?;
        Ok((new, sorted))
    }

    /// `getNewReplicaSet`.
    pub(super) fn new_replica_set(
        &mut self,
        existing: Option<Value>,
        old: &[Value],
        create: bool,
    ) -> Result<Option<Value>, ApiError> {
        let old_refs: Vec<&Value> = old.iter().collect();
        let new_revision = max_revision(&old_refs) + 1;
        if let Some(rs) = existing {
            return self.sync_new_replica_set(rs, new_revision).map(Some);
        }
        if !create {
            return Ok(None);
        }
        self.create_new_replica_set(old, new_revision).map(Some)
    }

    /// The existing new ReplicaSet's annotations and `minReadySeconds` brought up to date, the
    /// Deployment's revision and `FoundNewReplicaSet` condition.
    pub(super) fn sync_new_replica_set(
        &mut self,
        rs: Value,
        new_revision: i64,
    ) -> Result<Value, ApiError> {
        let mut copy = rs.clone();
        let annotations_updated = set_new_rs_annotations(&self.d, &mut copy, new_revision, true);
        let min_ready = &self.d["spec"]["minReadySeconds"];
        let min_ready_differs = copy["spec"]["minReadySeconds"].as_i64().unwrap_or(0)
            != min_ready.as_i64().unwrap_or(0);
        if annotations_updated || min_ready_differs {
            copy["spec"]["minReadySeconds"] = min_ready.clone();
            if min_ready.is_null()
                && let Some(spec) = copy["spec"].as_object_mut()
            {
                spec.remove("minReadySeconds");
            }
            return self
                .ctx
                .update(MANAGER, REPLICA_SETS, &rs, copy, None)
                .map(Arc::unwrap_or_clone);
        }
        let rs_revision = rs["metadata"]["annotations"][util::REVISION]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut needs_update = set_deployment_revision(&mut self.d, &rs_revision);
        if progress_deadline(&self.d).is_some()
            && util::condition(&self.d["status"], "Progressing").is_none()
        {
            let message = format!(
                "Found new replica set {:?}",
                rs["metadata"]["name"].as_str().unwrap_or_default()
            );
            let c = new_condition(
                "Progressing",
                "True",
                util::FOUND_NEW_RS,
                message,
                self.ctx.now(),
            );
            set_condition(self.status_mut(), c);
            needs_update = true;
        }
        if needs_update {
            self.write_status()?;
        }
        Ok(rs)
    }

    pub(super) fn status_mut(&mut self) -> &mut Value {
        if !self.d["status"].is_object() {
            self.d["status"] = json!({});
        }
        &mut self.d["status"]
    }

    /// The new ReplicaSet created: `<deployment>-<hash>`, its replicas as `NewRSNewReplicas`
    /// allows; a hash collision bumps `collisionCount`.
    pub(super) fn create_new_replica_set(
        &mut self,
        old: &[Value],
        new_revision: i64,
    ) -> Result<Value, ApiError> {
        let collision = self.d["status"]["collisionCount"].as_i64();
        let hash = compute_hash(&self.d["spec"]["template"], collision);
        let mut template = self.d["spec"]["template"].clone();
        template["metadata"]["labels"][HASH_LABEL] = json!(hash);
        let mut selector = self.d["spec"]["selector"].clone();
        selector["matchLabels"][HASH_LABEL] = json!(hash);
        let name = replica_set_name(&self.name(), &hash);
        let mut rs = json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {
                "name": name, "namespace": self.namespace(),
                "ownerReferences": [controller_ref(&self.d, "apps/v1", "Deployment")],
                "labels": template["metadata"]["labels"],
            },
            "spec": {"replicas": 0, "selector": selector, "template": template},
        });
        if let Some(min_ready) = self.d["spec"]["minReadySeconds"].as_i64() {
            rs["spec"]["minReadySeconds"] = json!(min_ready);
        }
        let all: Vec<&Value> = old.iter().chain([&rs]).collect();
        let count = new_rs_new_replicas(&self.d, &all, &rs).map_err(rolling::invalid)?;
        rs["spec"]["replicas"] = json!(count);
        set_new_rs_annotations(&self.d, &mut rs, new_revision, false);
        let (created, already_existed) = match self.ctx.create(MANAGER, REPLICA_SETS, rs) {
            Ok(created) => (Arc::unwrap_or_clone(created), false),
            Err(err) if err.code == 409 => (self.existing_replica_set(&name, err)?, true),
            Err(err) => return Err(self.failed_create(&name, err)),
        };
        if !already_existed && count > 0 {
            let message = format!("Scaled up replica set {name} from 0 to {count}");
            self.event("Normal", "ScalingReplicaSet", message);
        }
        let mut needs_update = set_deployment_revision(&mut self.d, &new_revision.to_string());
        if !already_existed && progress_deadline(&self.d).is_some() {
            let message = format!("Created new replica set {name:?}");
            let c = new_condition(
                "Progressing",
                "True",
                util::NEW_REPLICA_SET,
                message,
                self.ctx.now(),
            );
            set_condition(self.status_mut(), c);
            needs_update = true;
        }
        if needs_update {
            self.write_status()?;
        }
        Ok(created)
    }

    /// A ReplicaSet of the new one's name exists: it is the new one when the Deployment owns it
    /// and its template is the Deployment's; otherwise the hash collided (`collisionCount`
    /// bumped, the error returned).
    pub(super) fn existing_replica_set(
        &mut self,
        name: &str,
        err: ApiError,
    ) -> Result<Value, ApiError> {
        let rs = self
            .ctx
            .get(REPLICA_SETS, &self.namespace(), name)
            .ok_or_else(|| err.clone())?;
        let ours = controller_uid(&rs) == self.d["metadata"]["uid"].as_str();
        if ours && equal_ignore_hash(&self.d["spec"]["template"], &rs["spec"]["template"]) {
            return Ok(rs);
        }
        let count = self.d["status"]["collisionCount"].as_i64().unwrap_or(0);
        self.status_mut()["collisionCount"] = json!(count + 1);
        self.write_status()?;
        Err(err)
    }

    /// A refused create: `ReplicaSetCreateError` in `Progressing` and as a warning event.
    pub(super) fn failed_create(&mut self, name: &str, err: ApiError) -> ApiError {
        let message = format!("Failed to create new replica set {name:?}: {}", err.message);
        if progress_deadline(&self.d).is_some() {
            let c = new_condition(
                "Progressing",
                "False",
                util::FAILED_RS_CREATE,
                message.clone(),
                self.ctx.now(),
            );
            set_condition(self.status_mut(), c);
            let _ = self.write_status();
        }
        self.event("Warning", util::FAILED_RS_CREATE, message);
        err
    }

    /// `isScalingEvent`: an active ReplicaSet's `desired-replicas` differs from
    /// `spec.replicas`.
    pub(super) fn is_scaling_event(&mut self, rs_list: &[Value]) -> Result<bool, ApiError> {
        let (new, old) = self.all_replica_sets(rs_list, false)?;
        let wanted = replicas(&self.d);
        Ok(old
            .iter()
            .chain(&new)
            .filter(|rs| replicas(rs) > 0)
            .filter_map(desired_replicas_annotation)
            .any(|desired| desired != wanted))
    }
}
