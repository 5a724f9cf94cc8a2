//! The two rollout strategies' decisions (`pkg/controller/deployment/rolling.go`,
//! `recreate.go`): how far the new ReplicaSet is scaled up and the old ones down in one sync.
//! The scaling itself goes through [`Scale`], so the decisions are tested on their own, as
//! upstream's `rolling_test.go` tests them against a fake client.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::util::{by_creation, max_unavailable, new_rs_new_replicas, replicas, status_count, sum};
use crate::status::ApiError;

/// Scales a ReplicaSet of a Deployment (`scaleReplicaSetAndRecordEvent`).
pub(super) trait Scale {
    /// Scales `rs` to `to` for `d`: whether it was scaled, and the ReplicaSet as it is now.
    fn scale(&mut self, rs: &Value, to: i64, d: &Value) -> Result<(bool, Value), ApiError>;
}

/// A failed rollout step: a write refused, or a rule upstream reports as an error.
pub(super) fn invalid(message: String) -> ApiError {
    ApiError {
        code: 500,
        reason: "InternalError",
        message,
        details: None,
    }
}

/// `reconcileNewReplicaSet`: scales the new ReplicaSet toward `spec.replicas` within
/// `maxSurge`; whether it scaled.
pub(super) fn reconcile_new_replica_set(
    s: &mut dyn Scale,
    all: &[&Value],
    new: &Value,
    d: &Value,
) -> Result<bool, ApiError> {
    let wanted = replicas(d);
    if replicas(new) == wanted {
        return Ok(false);
    }
    if replicas(new) > wanted {
        return Ok(s.scale(new, wanted, d)?.0);
    }
    let count = new_rs_new_replicas(d, all, new).map_err(invalid)?;
    Ok(s.scale(new, count, d)?.0)
}

/// `reconcileOldReplicaSets`: scales the old ReplicaSets down as far as `maxUnavailable`
/// allows, their unhealthy replicas first; whether any was scaled.
pub(super) fn reconcile_old_replica_sets(
    s: &mut dyn Scale,
    all: &[&Value],
    old: &[&Value],
    new: &Value,
    d: &Value,
) -> Result<bool, ApiError> {
    let old_pods = sum(old, replicas);
    if old_pods == 0 {
        return Ok(false);
    }
    let all_pods = sum(all, replicas);
    let min_available = replicas(d) - max_unavailable(d);
    let new_unavailable = replicas(new) - status_count(new, "availableReplicas");
    let max_scaled_down = all_pods - min_available - new_unavailable;
    if max_scaled_down <= 0 {
        return Ok(false);
    }
    // Upstream swallows these errors (`return false, nil`): the next sync tries again.
    let Ok((old, cleaned)) = cleanup_unhealthy_replicas(s, old, d, max_scaled_down) else {
        return Ok(false);
    };
    let old_refs: Vec<&Value> = old.iter().collect();
    let all: Vec<&Value> = old_refs.iter().copied().chain([new]).collect();
    let Ok(scaled) = scale_down_old_for_rolling_update(s, &all, &old_refs, d) else {
        return Ok(false);
    };
    Ok(cleaned + scaled > 0)
}

/// `cleanupUnhealthyReplicas`: the old ReplicaSets (oldest first) lose their unavailable
/// replicas, at most `max_cleanup` in all. The ReplicaSets as they are now, and how many
/// replicas went.
pub(super) fn cleanup_unhealthy_replicas(
    s: &mut dyn Scale,
    old: &[&Value],
    d: &Value,
    max_cleanup: i64,
) -> Result<(Vec<Value>, i64), ApiError> {
    let mut old: Vec<Value> = old.iter().map(|rs| (*rs).clone()).collect();
    old.sort_by(by_creation);
    let mut total = 0;
    for rs in &mut old {
        if total >= max_cleanup {
            break;
        }
        let available = status_count(rs, "availableReplicas");
        if replicas(rs) == 0 || replicas(rs) == available {
            continue;
        }
        let count = (max_cleanup - total).min(replicas(rs) - available);
        let to = replicas(rs) - count;
        if to > replicas(rs) {
            return Err(invalid(format!(
                "when cleaning up unhealthy replicas, got invalid request to scale down {}/{} {} -> {to}",
                rs["metadata"]["namespace"].as_str().unwrap_or_default(),
                rs["metadata"]["name"].as_str().unwrap_or_default(),
                replicas(rs)
            )));
        }
        let (_, updated) = s.scale(rs, to, d)?;
        total += count;
        *rs = updated;
    }
    Ok((old, total))
}

/// `scaleDownOldReplicaSetsForRollingUpdate`: the old ReplicaSets (oldest first) scaled down by
/// the available replicas above the minimum; how many replicas went.
pub(super) fn scale_down_old_for_rolling_update(
    s: &mut dyn Scale,
    all: &[&Value],
    old: &[&Value],
    d: &Value,
) -> Result<i64, ApiError> {
    let min_available = replicas(d) - max_unavailable(d);
    let available = sum(all, |rs| status_count(rs, "availableReplicas"));
    if available <= min_available {
        return Ok(0);
    }
    let mut old = old.to_vec();
    old.sort_by(|a, b| by_creation(a, b));
    let wanted = available - min_available;
    let mut total = 0;
    for rs in old {
        if total >= wanted {
            break;
        }
        if replicas(rs) == 0 {
            continue;
        }
        let count = replicas(rs).min(wanted - total);
        s.scale(rs, replicas(rs) - count, d)?;
        total += count;
    }
    Ok(total)
}

/// `scaleDownOldReplicaSetsForRecreate`: every old ReplicaSet to 0; whether any was scaled.
pub(super) fn scale_down_old_for_recreate(
    s: &mut dyn Scale,
    old: &[&Value],
    d: &Value,
) -> Result<bool, ApiError> {
    let mut scaled = false;
    for rs in old.iter().filter(|rs| replicas(rs) != 0) {
        scaled |= s.scale(rs, 0, d)?.0;
    }
    Ok(scaled)
}

/// `oldPodsRunning`: whether the old ReplicaSets still have pods, or pods of them have not
/// finished (`pods` by the uid of their ReplicaSet).
pub(super) fn old_pods_running(
    new: Option<&Value>,
    old: &[&Value],
    pods: &BTreeMap<String, Vec<Arc<Value>>>,
) -> bool {
    if sum(old, |rs| status_count(rs, "replicas")) > 0 {
        return true;
    }
    let new_uid = new.and_then(|rs| rs["metadata"]["uid"].as_str());
    pods.iter()
        .filter(|(uid, _)| Some(uid.as_str()) != new_uid)
        .flat_map(|(_, pods)| pods)
        .any(|pod| {
            !matches!(
                pod["status"]["phase"].as_str(),
                Some("Succeeded" | "Failed")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The fake client: records each scale.
    #[derive(Default)]
    struct Recorder(Vec<(String, i64)>);

    impl Scale for Recorder {
        fn scale(&mut self, rs: &Value, to: i64, _d: &Value) -> Result<(bool, Value), ApiError> {
            if replicas(rs) == to {
                return Ok((false, rs.clone()));
            }
            let name = rs["metadata"]["name"].as_str().unwrap().to_string();
            self.0.push((name, to));
            let mut rs = rs.clone();
            rs["spec"]["replicas"] = json!(to);
            Ok((true, rs))
        }
    }

    /// `newDeployment` of the controller's tests.
    fn deployment(replicas: i64, surge: i64, unavailable: i64) -> Value {
        json!({
            "metadata": {"name": "foo", "generation": 1},
            "spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}},
        })
    }

    fn rs(name: &str, replicas: i64, available: i64) -> Value {
        json!({"metadata": {"name": name, "namespace": "default"},
               "spec": {"replicas": replicas},
               "status": {"availableReplicas": available}})
    }

    #[test]
    fn reconcile_new_replica_set_as_upstream() {
        // TestDeploymentController_reconcileNewReplicaSet:
        // (deployment replicas, max surge, old, new, expected new replicas when scaled).
        let cases = [
            (10, 0, 10, 0, None),
            (10, 2, 10, 0, Some(2)),
            (10, 2, 5, 0, Some(7)),
            (10, 2, 10, 2, None),
            (10, 2, 2, 11, Some(10)),
        ];
        for (dr, surge, old_replicas, new_replicas, expected) in cases {
            let new = rs("foo-v2", new_replicas, 0);
            let old = rs("foo-v2", old_replicas, 0);
            let d = deployment(dr, surge, 0);
            let mut fake = Recorder::default();
            let scaled = reconcile_new_replica_set(&mut fake, &[&new, &old], &new, &d).unwrap();
            let case = format!("{dr} {surge} {old_replicas} {new_replicas}");
            assert_eq!(scaled, expected.is_some(), "{case}");
            match expected {
                Some(to) => assert_eq!(fake.0, [("foo-v2".to_string(), to)], "{case}"),
                None => assert!(fake.0.is_empty(), "{case}"),
            }
        }
    }

    #[test]
    fn reconcile_old_replica_sets_as_upstream() {
        // TestDeploymentController_reconcileOldReplicaSets: (deployment replicas, max
        // unavailable, old, new, available old, available new, expected old replicas).
        let cases = [
            (10, 0, 10, 0, 10, 0, Some(9)),
            (10, 2, 10, 0, 10, 0, Some(8)),
            (10, 2, 10, 0, 8, 0, Some(8)),
            (10, 2, 10, 0, 9, 0, Some(8)),
            (10, 2, 8, 2, 8, 0, None),
        ];
        for (dr, unavailable, old_r, new_r, old_ready, new_ready, expected) in cases {
            let new = rs("foo-new", new_r, new_ready);
            let old = rs("foo-old", old_r, old_ready);
            let d = deployment(dr, 0, unavailable);
            let mut fake = Recorder::default();
            let scaled =
                reconcile_old_replica_sets(&mut fake, &[&old, &new], &[&old], &new, &d).unwrap();
            let case = format!("{dr} {unavailable} {old_r} {new_r} {old_ready} {new_ready}");
            assert_eq!(scaled, expected.is_some(), "{case}");
            if let Some(to) = expected {
                assert_eq!(fake.0.last().map(|s| s.1), Some(to), "{case}");
            }
        }
    }

    #[test]
    fn cleanup_unhealthy_replicas_as_upstream() {
        // TestDeploymentController_cleanupUnhealthyReplicas: (old replicas, ready pods, max
        // cleanup, expected cleanup).
        let cases = [(10, 8, 1, 1), (10, 8, 3, 2), (10, 8, 0, 0), (10, 10, 3, 0)];
        for (old_r, ready, max, expected) in cases {
            let old = rs("foo-v2", old_r, ready);
            let d = deployment(10, 2, 2);
            let mut fake = Recorder::default();
            let (_, cleaned) = cleanup_unhealthy_replicas(&mut fake, &[&old], &d, max).unwrap();
            assert_eq!(cleaned, expected, "{old_r} {ready} {max}");
        }
    }

    #[test]
    fn scale_down_old_replica_sets_for_rolling_update_as_upstream() {
        // TestDeploymentController_scaleDownOldReplicaSetsForRollingUpdate: (deployment
        // replicas, max unavailable, ready old pods, old replicas, expected old replicas).
        let cases = [
            (10, 0, 10, 10, Some(9)),
            (10, 2, 10, 10, Some(8)),
            (10, 2, 8, 10, None),
            (10, 2, 10, 0, None),
            (10, 2, 1, 10, None),
        ];
        for (dr, unavailable, ready, old_r, expected) in cases {
            let old = rs("foo-v2", old_r, ready);
            let d = deployment(dr, 0, unavailable);
            let mut fake = Recorder::default();
            scale_down_old_for_rolling_update(&mut fake, &[&old], &[&old], &d).unwrap();
            assert_eq!(
                fake.0.first().map(|s| s.1),
                expected,
                "{dr} {unavailable} {ready}"
            );
        }
    }

    #[test]
    fn recreate_waits_for_every_old_pod_to_finish() {
        let new = json!({"metadata": {"uid": "new"}, "status": {}});
        let old = json!({"metadata": {"uid": "old"}, "status": {"replicas": 0}});
        let pod = |phase: &str| Arc::new(json!({"status": {"phase": phase}}));
        let mut pods = BTreeMap::from([("new".to_string(), vec![pod("Running")])]);
        assert!(!old_pods_running(Some(&new), &[&old], &pods));
        pods.insert("old".into(), vec![pod("Succeeded"), pod("Failed")]);
        assert!(!old_pods_running(Some(&new), &[&old], &pods));
        pods.insert("old".into(), vec![pod("Pending")]);
        assert!(old_pods_running(Some(&new), &[&old], &pods));
        let scaling = json!({"metadata": {"uid": "old"}, "status": {"replicas": 1}});
        assert!(old_pods_running(None, &[&scaling], &BTreeMap::new()));
    }
}
