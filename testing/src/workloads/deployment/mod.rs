//! The Deployment controller (`pkg/controller/deployment/deployment_controller.go`, `sync.go`,
//! `rolling.go`, `recreate.go`, `progress.go`, `util/deployment_util.go`): a Deployment runs its
//! pod template through one ReplicaSet per template, `<deployment>-<hash>`, the
//! `pod-template-hash` label added to its selector, template and labels (see [`template`] for the
//! hash, which is not upstream's bytes).
//!
//! - ReplicaSets are claimed as `ClaimReplicaSets` does (orphans the selector selects adopted,
//!   owned ones it no longer selects released).
//! - The new ReplicaSet carries `deployment.kubernetes.io/revision` (one more than the old
//!   ones'; the Deployment gets the same annotation), `desired-replicas` and `max-replicas`;
//!   it is created with the replicas `NewRSNewReplicas` allows (`ScalingReplicaSet`
//!   `Scaled up replica set <rs> from 0 to <n>`).
//! - `RollingUpdate` scales the new ReplicaSet up within `maxSurge` (rounded up) and the old
//!   ones down within `maxUnavailable` (rounded down), their unavailable replicas first;
//!   `Recreate` scales the old ones to 0, waits until none of their pods runs, then scales the
//!   new one up. Each scale is an event `Scaled up|down replica set <rs> from <a> to <b>`.
//! - A change of `spec.replicas` alone (a scaling event) resizes the ReplicaSets, in
//!   proportion when several are active; a paused Deployment is only scaled.
//! - Once complete, old ReplicaSets beyond `revisionHistoryLimit` (with no replicas) are
//!   deleted, the lowest revisions first.
//! - Status and conditions: see [`progress`].
//!
//! Not ported: `spec.rollbackTo` (extensions/v1beta1 only; apps/v1 has no such field) and the
//! `terminatingReplicas` count (alpha, off in 1.34). Reads are of the store itself, so
//! upstream's informer-lag precautions (recheck before adoption) have nothing to do.

mod progress;
mod replica_sets;
mod rolling;
mod scaling;
mod template;
mod util;

use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use self::rolling::Scale;
use self::util::{replicas, status_count};
use super::context::{DEPLOYMENTS, PODS, REPLICA_SETS, is_deleting, labels, selects};
use super::{Controller, Ctx, Keys};
use crate::registry::State;
use crate::status::{ApiError, Qualified};
use crate::store::{Change, ChangeType, ObjectKey, StorageKey, object_key};

const MANAGER: &str = "kube-controller-manager";
/// The component of the controller's events.
const COMPONENT: &str = "deployment-controller";

/// The controller: its keys are Deployments.
#[derive(Debug, Default)]
pub(crate) struct Deployments;

impl Controller for Deployments {
    fn primary(&self) -> StorageKey {
        DEPLOYMENTS.storage()
    }

    fn observe(&mut self, change: &Change, state: &State, keys: &mut Keys) {
        if change.storage == DEPLOYMENTS.storage() {
            keys.insert(object_key(&change.object));
        } else if change.storage == REPLICA_SETS.storage() {
            for rs in std::iter::once(&change.object).chain(&change.previous) {
                replica_set_owners(rs, state, keys);
            }
        } else if change.storage == PODS.storage() && change.kind == ChangeType::Deleted {
            // A Recreate rollout waits for the old pods to be gone.
            let pod = &change.object;
            let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
            let owner = controller_of(pod).filter(|r| r["kind"] == "ReplicaSet");
            let rs = owner.and_then(|r| {
                let name = r["name"].as_str()?;
                state.store.get(&REPLICA_SETS.storage(), namespace, name)
            });
            if let Some(rs) = rs {
                replica_set_owners(rs, state, keys);
            }
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let d = ctx.get(DEPLOYMENTS, &key.0, &key.1)?;
        let mut sync = Sync {
            ctx,
            d,
            requeue: None,
            stale: false,
        };
        match sync.run() {
            Ok(()) => sync.requeue,
            // A conflict is retried at once (the rate limiter's 5 ms).
            Err(err) if err.code == 409 => Some(sync.ctx.now()),
            // Rate-limited upstream: a second later on the clock.
            Err(_) => Some(sync.ctx.now() + SignedDuration::from_secs(1)),
        }
    }
}

/// An object's controller owner reference.
fn controller_of(object: &Value) -> Option<&Value> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)
}

/// The keys of the Deployments a ReplicaSet concerns: its controller's, or, for an orphan, those
/// of its namespace that select it (`getDeploymentsForReplicaSet`).
fn replica_set_owners(rs: &Value, state: &State, keys: &mut Keys) {
    let namespace = rs["metadata"]["namespace"].as_str().unwrap_or_default();
    match controller_of(rs) {
        Some(owner) => {
            if owner["kind"] == "Deployment"
                && let Some(name) = owner["name"].as_str()
            {
                keys.insert((namespace.to_string(), name.to_string()));
            }
        }
        None => {
            let rs_labels = labels(rs);
            if rs_labels.is_empty() {
                return;
            }
            keys.extend(
                state
                    .store
                    .list(&DEPLOYMENTS.storage(), Some(namespace))
                    .filter(|d| !selects_everything(&d["spec"]["selector"]))
                    .filter(|d| selects(&d["spec"]["selector"], &rs_labels))
                    .map(object_key),
            );
        }
    }
}

/// An empty selector (`{}`), which selects every object.
fn selects_everything(selector: &Value) -> bool {
    selector.as_object().is_some_and(|s| {
        s.get("matchLabels")
            .and_then(Value::as_object)
            .is_none_or(serde_json::Map::is_empty)
            && s.get("matchExpressions")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
    })
}

/// One sync of one Deployment: the working copy `d` (its status and annotations as this sync
/// has written them).
struct Sync<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    d: Value,
    requeue: Option<Timestamp>,
    /// Whether `d` is older than the stored Deployment: `checkPausedConditions` writes the
    /// status and drops the answer, so upstream's next status write in the same sync is a
    /// 409 (the Deployment is synced again, its new ReplicaSet then already existing).
    stale: bool,
}

/// The new ReplicaSet (if any) and the old ones.
type Split = (Option<Value>, Vec<Value>);

impl Sync<'_, '_> {
    fn namespace(&self) -> String {
        self.d["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn name(&self) -> String {
        self.d["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    fn event(&mut self, type_: &str, reason: &str, message: String) {
        let d = self.d.clone();
        self.ctx
            .event(COMPONENT, &d, "Deployment", type_, reason, message);
    }

    /// `syncDeployment`.
    fn run(&mut self) -> Result<(), ApiError> {
        if selects_everything(&self.d["spec"]["selector"]) {
            let message =
                "This deployment is selecting all pods. A non-empty selector is required.";
            self.event("Warning", "SelectingAll", message.into());
            let generation = self.d["metadata"]["generation"].as_i64().unwrap_or(0);
            if status_count(&self.d, "observedGeneration") < generation {
                self.d["status"]["observedGeneration"] = json!(generation);
                self.write_status()?;
            }
            return Ok(());
        }
        let rs_list = self.claim_replica_sets();
        if is_deleting(&self.d) {
            let (new, old) = self.all_replica_sets(&rs_list, false)?;
            return self.sync_status(new.as_ref(), &old);
        }
        if progress::check_paused_conditions(&mut self.d, self.ctx.now()) {
            self.write_status()?;
            self.stale = true;
        }
        if self.d["spec"]["paused"] == true || self.is_scaling_event(&rs_list)? {
            return self.sync(&rs_list);
        }
        if self.d["spec"]["strategy"]["type"] == "Recreate" {
            // `getPodMapForDeployment` (read only by the Recreate strategy).
            let pods = self.pods_by_replica_set(&rs_list);
            self.rollout_recreate(&rs_list, &pods)
        } else {
            self.rollout_rolling(&rs_list)
        }
    }

    /// Writes the working copy's status and annotations (`UpdateStatus`).
    fn write_status(&mut self) -> Result<(), ApiError> {
        let (namespace, name) = (self.namespace(), self.name());
        if self.stale {
            let deployments = Qualified {
                group: "apps",
                name: "deployments",
            };
            return Err(ApiError::modified(deployments, &name));
        }
        let Some(stored) = self.ctx.get(DEPLOYMENTS, &namespace, &name) else {
            return Ok(());
        };
        let mut new = stored.clone();
        new["status"] = self.d["status"].clone();
        new["metadata"]["annotations"] = self.d["metadata"]["annotations"].clone();
        if new["metadata"]["annotations"].is_null()
            && let Some(meta) = new["metadata"].as_object_mut()
        {
            meta.remove("annotations");
        }
        self.d = Arc::unwrap_or_clone(self.ctx.update(
            MANAGER,
            DEPLOYMENTS,
            &stored,
            new,
            Some("status"),
        )?);
        Ok(())
    }

    /// `syncDeploymentStatus`: the status written when it changed.
    fn sync_status(&mut self, new: Option<&Value>, old: &[Value]) -> Result<(), ApiError> {
        let all: Vec<&Value> = old.iter().chain(new).collect();
        let status = progress::calculate_status(&all, new, &self.d, self.ctx.now());
        if status != self.d["status"] {
            self.d["status"] = status;
            self.write_status()?;
        }
        Ok(())
    }

    /// `syncRolloutStatus`.
    fn sync_rollout_status(&mut self, new: Option<&Value>, old: &[Value]) -> Result<(), ApiError> {
        let all: Vec<&Value> = old.iter().chain(new).collect();
        let rollout = progress::rollout_status(&all, new, &self.d, self.ctx.now());
        self.requeue = rollout.requeue;
        if rollout.status != self.d["status"] {
            self.d["status"] = rollout.status;
            self.write_status()?;
        }
        Ok(())
    }

    /// `rolloutRolling`.
    fn rollout_rolling(&mut self, rs_list: &[Value]) -> Result<(), ApiError> {
        let (new, old) = self.all_replica_sets(rs_list, true)?;
        let new = new.ok_or_else(|| rolling::invalid("no new replica set".into()))?;
        let d = self.d.clone();
        let all: Vec<&Value> = old.iter().chain([&new]).collect();
        if rolling::reconcile_new_replica_set(self, &all, &new, &d)? {
            return self.sync_rollout_status(Some(&new), &old);
        }
        let active_old: Vec<&Value> = old.iter().filter(|rs| replicas(rs) > 0).collect();
        if rolling::reconcile_old_replica_sets(self, &all, &active_old, &new, &d)? {
            return self.sync_rollout_status(Some(&new), &old);
        }
        if util::deployment_complete(&self.d, &self.d["status"]) {
            self.cleanup(&old)?;
        }
        self.sync_rollout_status(Some(&new), &old)
    }

    /// `rolloutRecreate`.
    fn rollout_recreate(
        &mut self,
        rs_list: &[Value],
        pods: &BTreeMap<String, Vec<Arc<Value>>>,
    ) -> Result<(), ApiError> {
        let (mut new, mut old) = self.all_replica_sets(rs_list, false)?;
        let d = self.d.clone();
        let active_old: Vec<&Value> = old.iter().filter(|rs| replicas(rs) > 0).collect();
        if rolling::scale_down_old_for_recreate(self, &active_old, &d)? {
            return self.sync_rollout_status(new.as_ref(), &old);
        }
        let old_refs: Vec<&Value> = old.iter().collect();
        if rolling::old_pods_running(new.as_ref(), &old_refs, pods) {
            return self.sync_rollout_status(new.as_ref(), &old);
        }
        if new.is_none() {
            (new, old) = self.all_replica_sets(rs_list, true)?;
        }
        if let Some(rs) = &new {
            let d = self.d.clone();
            Scale::scale(self, rs, replicas(&d), &d)?;
        }
        if util::deployment_complete(&self.d, &self.d["status"]) {
            self.cleanup(&old)?;
        }
        self.sync_rollout_status(new.as_ref(), &old)
    }
}
