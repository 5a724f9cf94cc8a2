//! Scaling a Deployment's ReplicaSets (`sync`, `scale`, `scaleReplicaSet`, `cleanupDeployment`
//! of `sync.go`): a change of `spec.replicas` alone goes to the only active ReplicaSet, or is
//! shared among the active ones in proportion to their size (`GetReplicaSetProportion`), the
//! leftover to the largest; each size change is a `ScalingReplicaSet` event.

use std::sync::Arc;

use serde_json::{Value, json};

use super::rolling::Scale;
use super::util::{
    by_revision, by_size_newer, by_size_older, find_active_or_latest, is_rolling_update,
    is_saturated, max_surge, replica_set_proportion, replicas, replicas_annotations_need_update,
    revision_history_limit, set_replicas_annotations, status_count, sum,
};
use super::{MANAGER, Sync};
use crate::status::ApiError;
use crate::workloads::context::{REPLICA_SETS, is_deleting};

impl Sync<'_, '_> {
    /// `sync`: scaling and, for a paused Deployment, history cleanup, then the status.
    pub(super) fn sync(&mut self, rs_list: &[Value]) -> Result<(), ApiError> {
        let (new, old) = self.all_replica_sets(rs_list, false)?;
        self.scale_deployment(new.as_ref(), &old)?;
        if self.d["spec"]["paused"] == true {
            self.cleanup(&old)?;
        }
        self.sync_status(new.as_ref(), &old)
    }

    /// `scale`: a scaling event applied to the ReplicaSets.
    pub(super) fn scale_deployment(
        &mut self,
        new: Option<&Value>,
        old: &[Value],
    ) -> Result<(), ApiError> {
        let wanted = replicas(&self.d);
        let old_refs: Vec<&Value> = old.iter().collect();
        if let Some(rs) = find_active_or_latest(new, &old_refs) {
            if replicas(rs) != wanted {
                let (rs, d) = (rs.clone(), self.d.clone());
                Scale::scale(self, &rs, wanted, &d)?;
            }
            return Ok(());
        }
        if is_saturated(&self.d, new) {
            let d = self.d.clone();
            for rs in old.iter().filter(|rs| replicas(rs) > 0) {
                Scale::scale(self, rs, 0, &d)?;
            }
            return Ok(());
        }
        if is_rolling_update(&self.d) {
            self.scale_proportionally(new, old)?;
        }
        Ok(())
    }

    /// The rolling part of `scale`: the replicas added or removed shared among the active
    /// ReplicaSets in proportion to their size, the leftover to the largest.
    pub(super) fn scale_proportionally(
        &mut self,
        new: Option<&Value>,
        old: &[Value],
    ) -> Result<(), ApiError> {
        let mut active: Vec<&Value> = old
            .iter()
            .chain(new)
            .filter(|rs| replicas(rs) > 0)
            .collect();
        let wanted = replicas(&self.d);
        let allowed = if wanted > 0 {
            wanted + max_surge(&self.d)
        } else {
            0
        };
        let to_add = allowed - sum(&active, replicas);
        match to_add.cmp(&0) {
            std::cmp::Ordering::Greater => active.sort_by(|a, b| by_size_newer(a, b)),
            std::cmp::Ordering::Less => active.sort_by(|a, b| by_size_older(a, b)),
            std::cmp::Ordering::Equal => {}
        }
        let mut added = 0;
        let mut sizes: Vec<i64> = Vec::with_capacity(active.len());
        for rs in &active {
            if to_add == 0 {
                sizes.push(replicas(rs));
            } else {
                let proportion = replica_set_proportion(rs, &self.d, to_add, added);
                sizes.push(replicas(rs) + proportion);
                added += proportion;
            }
        }
        if let Some(first) = sizes.first_mut()
            && to_add != 0
        {
            *first = (*first + to_add - added).max(0);
        }
        let d = self.d.clone();
        for (rs, size) in active.into_iter().zip(sizes) {
            self.scale_replica_set(rs, size, &d)?;
        }
        Ok(())
    }

    /// `scaleReplicaSet`: the size and the replicas annotations written when either differs;
    /// a `ScalingReplicaSet` event when the size did.
    pub(super) fn scale_replica_set(
        &mut self,
        rs: &Value,
        to: i64,
        d: &Value,
    ) -> Result<(bool, Value), ApiError> {
        let from = replicas(rs);
        let max = replicas(d) + max_surge(d);
        if from == to && !replicas_annotations_need_update(rs, replicas(d), max) {
            return Ok((false, rs.clone()));
        }
        let mut copy = rs.clone();
        copy["spec"]["replicas"] = json!(to);
        set_replicas_annotations(&mut copy, replicas(d), max);
        let updated =
            Arc::unwrap_or_clone(self.ctx.update(MANAGER, REPLICA_SETS, rs, copy, None)?);
        if from == to {
            return Ok((false, updated));
        }
        let direction = if from < to { "up" } else { "down" };
        let message = format!(
            "Scaled {direction} replica set {} from {from} to {to}",
            updated["metadata"]["name"].as_str().unwrap_or_default()
        );
        self.event("Normal", "ScalingReplicaSet", message);
        Ok((true, updated))
    }

    /// `cleanupDeployment`: old ReplicaSets beyond `revisionHistoryLimit`, lowest revision
    /// first, deleted when they have no replicas and their controller has seen that.
    pub(super) fn cleanup(&mut self, old: &[Value]) -> Result<(), ApiError> {
        let Some(limit) = revision_history_limit(&self.d) else {
            return Ok(());
        };
        let mut cleanable: Vec<&Value> = old.iter().filter(|rs| !is_deleting(rs)).collect();
        let excess = i64::try_from(cleanable.len()).unwrap_or(i64::MAX) - limit;
        if excess <= 0 {
            return Ok(());
        }
        cleanable.sort_by(|a, b| by_revision(a, b));
        let namespace = self.namespace();
        for rs in cleanable
            .into_iter()
            .take(usize::try_from(excess).unwrap_or(0))
        {
            let generation = rs["metadata"]["generation"].as_i64().unwrap_or(0);
            if status_count(rs, "replicas") != 0
                || replicas(rs) != 0
                || generation > status_count(rs, "observedGeneration")
            {
                continue;
            }
            let name = rs["metadata"]["name"].as_str().unwrap_or_default();
            match self
                .ctx
                .delete(MANAGER, REPLICA_SETS, &namespace, name, &json!({}))
            {
                Err(err) if err.code != 404 => return Err(err),
                _ => {}
            }
        }
        Ok(())
    }
}

impl Scale for Sync<'_, '_> {
    /// `scaleReplicaSetAndRecordEvent`.
    fn scale(&mut self, rs: &Value, to: i64, d: &Value) -> Result<(bool, Value), ApiError> {
        if replicas(rs) == to {
            return Ok((false, rs.clone()));
        }
        self.scale_replica_set(rs, to, d)
    }
}
