//! A Deployment's status and conditions (`pkg/controller/deployment/progress.go` and
//! `calculateStatus`, `checkPausedConditions` of `sync.go`):
//!
//! - `Available`: `True` `MinimumReplicasAvailable` `Deployment has minimum availability.` while
//!   the available replicas are at least `spec.replicas - maxUnavailable`, else `False`
//!   `MinimumReplicasUnavailable` `Deployment does not have minimum availability.`;
//! - `Progressing` (with a `progressDeadlineSeconds`): `NewReplicaSetAvailable` `ReplicaSet "x"
//!   has successfully progressed.` once complete; `ReplicaSetUpdated` `ReplicaSet "x" is
//!   progressing.` on each step (its `lastUpdateTime` restarting the deadline);
//!   `ProgressDeadlineExceeded` `ReplicaSet "x" has timed out progressing.` (`False`) when no
//!   step came within the deadline, checked again on the server's clock when it would pass;
//!   `DeploymentPaused`/`DeploymentResumed` (`Unknown`) as the Deployment is paused and
//!   resumed;
//! - `ReplicaFailure` copied from the ReplicaSets' (the new one's first).

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::util::{
    self, NEW_RS_AVAILABLE, PAUSED, REPLICA_SET_UPDATED, RESUMED, TIMED_OUT, condition,
    deployment_complete, deployment_progressing, deployment_timed_out, max_unavailable,
    new_condition, progress_deadline, remove_condition, replicas, set_condition, status_count, sum,
};

/// `calculateStatus`: the counts of the ReplicaSets and the `Available` condition.
pub(super) fn calculate_status(
    all: &[&Value],
    new: Option<&Value>,
    d: &Value,
    now: Timestamp,
) -> Value {
    let available = sum(all, |rs| status_count(rs, "availableReplicas"));
    let total = sum(all, replicas);
    let mut status = json!({
        "observedGeneration": d["metadata"]["generation"].as_i64().unwrap_or(0),
        "replicas": sum(all, |rs| status_count(rs, "replicas")),
        "updatedReplicas": new.map_or(0, |rs| status_count(rs, "replicas")),
        "readyReplicas": sum(all, |rs| status_count(rs, "readyReplicas")),
        "availableReplicas": available,
        "unavailableReplicas": (total - available).max(0),
    });
    if let Some(count) = d["status"].get("collisionCount") {
        status["collisionCount"] = count.clone();
    }
    if let Some(conditions) = d["status"].get("conditions") {
        status["conditions"] = conditions.clone();
    }
    let condition = if available >= replicas(d) - max_unavailable(d) {
        new_condition(
            "Available",
            "True",
            util::MINIMUM_REPLICAS_AVAILABLE,
            "Deployment has minimum availability.".into(),
            now,
        )
    } else {
        new_condition(
            "Available",
            "False",
            util::MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.".into(),
            now,
        )
    };
    set_condition(&mut status, condition);
    util::omit_zero_counts(&mut status);
    status
}

/// What `syncRolloutStatus` decided: the status to write (when it differs) and when to look at
/// the deadline again.
pub(super) struct Rollout {
    pub status: Value,
    pub requeue: Option<Timestamp>,
}

/// `syncRolloutStatus`: the status with the `Progressing` and `ReplicaFailure` conditions.
pub(super) fn rollout_status(
    all: &[&Value],
    new: Option<&Value>,
    d: &Value,
    now: Timestamp,
) -> Rollout {
    let mut status = calculate_status(all, new, d, now);
    let deadline = progress_deadline(d);
    if deadline.is_none() {
        remove_condition(&mut status, "Progressing");
    }
    let current = condition(&d["status"], "Progressing").cloned();
    let complete_before = status["replicas"] == status["updatedReplicas"]
        && current
            .as_ref()
            .is_some_and(|c| c["reason"] == NEW_RS_AVAILABLE);
    if deadline.is_some() && !complete_before {
        let subject = |what: &str| match new {
            Some(rs) => format!(
                "ReplicaSet {:?} {what}",
                rs["metadata"]["name"].as_str().unwrap_or_default()
            ),
            None => format!(
                "Deployment {:?} {what}",
                d["metadata"]["name"].as_str().unwrap_or_default()
            ),
        };
        if deployment_complete(d, &status) {
            let message = subject("has successfully progressed.");
            let c = new_condition("Progressing", "True", NEW_RS_AVAILABLE, message, now);
            set_condition(&mut status, c);
        } else if deployment_progressing(d, &status) {
            let message = subject("is progressing.");
            let mut c = new_condition("Progressing", "True", REPLICA_SET_UPDATED, message, now);
            if let Some(current) = &current {
                if current["status"] == "True" {
                    c["lastTransitionTime"] = current["lastTransitionTime"].clone();
                }
                remove_condition(&mut status, "Progressing");
            }
            set_condition(&mut status, c);
        } else if deployment_timed_out(d, &status, now) {
            let message = subject("has timed out progressing.");
            let c = new_condition("Progressing", "False", TIMED_OUT, message, now);
            set_condition(&mut status, c);
        }
    }
    match replica_failure(all, new) {
        Some(failure) => set_condition(&mut status, failure),
        None => remove_condition(&mut status, "ReplicaFailure"),
    }
    let requeue = if status == d["status"] {
        requeue_stuck(d, &status, now)
    } else {
        None
    };
    Rollout { status, requeue }
}

/// `getReplicaFailures`: the first `ReplicaFailure` of the new ReplicaSet, else of any
/// (`ReplicaSetToDeploymentCondition`).
fn replica_failure(all: &[&Value], new: Option<&Value>) -> Option<Value> {
    let failure = |rs: &Value| condition(&rs["status"], "ReplicaFailure").cloned();
    let c = new
        .and_then(failure)
        .or_else(|| all.iter().find_map(|rs| failure(rs)))?;
    Some(json!({
        "type": "ReplicaFailure", "status": c["status"],
        "lastUpdateTime": c["lastTransitionTime"], "lastTransitionTime": c["lastTransitionTime"],
        "reason": c["reason"], "message": c["message"],
    }))
}

/// `requeueStuckDeployment`: when the progress deadline of a rollout that is neither complete
/// nor timed out passes (a second after it, as upstream; at once when under a second is
/// left).
fn requeue_stuck(d: &Value, status: &Value, now: Timestamp) -> Option<Timestamp> {
    let deadline = progress_deadline(d)?;
    let current = condition(&d["status"], "Progressing")?;
    if deployment_complete(d, status) || current["reason"] == TIMED_OUT {
        return None;
    }
    let due = util::time(&current["lastUpdateTime"])? + SignedDuration::from_secs(deadline);
    let after = due.duration_since(now);
    if after < SignedDuration::from_secs(1) {
        // Rate-limited upstream; here just past the deadline (never a hot loop on a clock that
        // stands still).
        let at = due + SignedDuration::from_nanos(1);
        return (at > now).then_some(at);
    }
    Some(due + SignedDuration::from_secs(1))
}

/// `checkPausedConditions`: the `Progressing` condition `Unknown` as the Deployment is paused
/// (`DeploymentPaused`, `Deployment is paused`) or resumed (`DeploymentResumed`, `Deployment
/// is resumed`); whether it changed.
pub(super) fn check_paused_conditions(d: &mut Value, now: Timestamp) -> bool {
    if progress_deadline(d).is_none() {
        return false;
    }
    let current = condition(&d["status"], "Progressing");
    if current.is_some_and(|c| c["reason"] == TIMED_OUT) {
        return false;
    }
    let paused_condition = current.is_some_and(|c| c["reason"] == PAUSED);
    let paused = d["spec"]["paused"] == true;
    let c = if paused && !paused_condition {
        new_condition(
            "Progressing",
            "Unknown",
            PAUSED,
            "Deployment is paused".into(),
            now,
        )
    } else if !paused && paused_condition {
        new_condition(
            "Progressing",
            "Unknown",
            RESUMED,
            "Deployment is resumed".into(),
            now,
        )
    } else {
        return false;
    };
    if !d["status"].is_object() {
        d["status"] = json!({});
    }
    set_condition(&mut d["status"], c);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn deployment(status: Value) -> Value {
        json!({
            "metadata": {"name": "web", "generation": 1},
            "spec": {"replicas": 3, "progressDeadlineSeconds": 60,
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}},
            "status": status,
        })
    }

    fn rs(replicas: i64, ready: i64) -> Value {
        json!({"metadata": {"name": "web-abc"}, "spec": {"replicas": replicas},
               "status": {"replicas": replicas, "readyReplicas": ready,
                          "availableReplicas": ready}})
    }

    #[test]
    fn a_complete_rollout_is_available_and_has_progressed() {
        let t0 = at("2026-01-01T00:00:00Z");
        let d = deployment(json!({}));
        let new = rs(3, 3);
        let out = rollout_status(&[&new], Some(&new), &d, t0);
        assert_eq!(out.status["readyReplicas"], 3);
        assert!(out.status.get("unavailableReplicas").is_none());
        let available = condition(&out.status, "Available").unwrap();
        assert_eq!(available["reason"], "MinimumReplicasAvailable");
        let progressing = condition(&out.status, "Progressing").unwrap();
        assert_eq!(progressing["reason"], NEW_RS_AVAILABLE);
        assert_eq!(
            progressing["message"],
            "ReplicaSet \"web-abc\" has successfully progressed."
        );
        assert_eq!(out.requeue, None);
    }

    #[test]
    fn a_stuck_rollout_times_out_after_its_deadline() {
        let t0 = at("2026-01-01T00:00:00Z");
        let new = rs(3, 0);
        let first = rollout_status(&[&new], Some(&new), &deployment(json!({})), t0);
        assert_eq!(
            condition(&first.status, "Available").unwrap()["reason"],
            "MinimumReplicasUnavailable"
        );
        // Nothing changes: the deadline is watched.
        let d = deployment(first.status);
        let second = rollout_status(&[&new], Some(&new), &d, t0);
        assert_eq!(second.status, d["status"]);
        assert_eq!(second.requeue, Some(at("2026-01-01T00:01:01Z")));
        let late = rollout_status(&[&new], Some(&new), &d, at("2026-01-01T00:01:01Z"));
        let progressing = condition(&late.status, "Progressing").unwrap();
        assert_eq!(progressing["status"], "False");
        assert_eq!(progressing["reason"], TIMED_OUT);
        assert_eq!(
            progressing["message"],
            "ReplicaSet \"web-abc\" has timed out progressing."
        );
    }

    #[test]
    fn pausing_and_resuming_mark_progress_unknown() {
        let t0 = at("2026-01-01T00:00:00Z");
        let mut d = deployment(json!({}));
        d["spec"]["paused"] = json!(true);
        assert!(check_paused_conditions(&mut d, t0));
        assert_eq!(
            condition(&d["status"], "Progressing").unwrap()["reason"],
            PAUSED
        );
        assert!(!check_paused_conditions(&mut d, t0));
        d["spec"]["paused"] = json!(false);
        assert!(check_paused_conditions(&mut d, t0));
        let c = condition(&d["status"], "Progressing").unwrap();
        assert_eq!(c["reason"], RESUMED);
        assert_eq!(c["message"], "Deployment is resumed");
    }
}
