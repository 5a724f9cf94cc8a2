//! The helpers of `pkg/controller/deployment/util/deployment_util.go` (and the ReplicaSet
//! orderings of `pkg/controller/controller_utils.go`), on objects as stored: replica counts,
//! `maxSurge`/`maxUnavailable` fenceposts, revisions and their annotations, conditions.

use std::cmp::Ordering;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::object::rfc3339;

pub(crate) const REVISION: &str = "deployment.kubernetes.io/revision";
pub(crate) const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
pub(crate) const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
pub(crate) const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";
/// `maxRevHistoryLengthInChars`.
const MAX_REVISION_HISTORY_CHARS: usize = 2000;

pub(crate) const REPLICA_SET_UPDATED: &str = "ReplicaSetUpdated";
pub(crate) const FAILED_RS_CREATE: &str = "ReplicaSetCreateError";
pub(crate) const NEW_REPLICA_SET: &str = "NewReplicaSetCreated";
pub(crate) const FOUND_NEW_RS: &str = "FoundNewReplicaSet";
pub(crate) const NEW_RS_AVAILABLE: &str = "NewReplicaSetAvailable";
pub(crate) const TIMED_OUT: &str = "ProgressDeadlineExceeded";
pub(crate) const PAUSED: &str = "DeploymentPaused";
pub(crate) const RESUMED: &str = "DeploymentResumed";
pub(crate) const MINIMUM_REPLICAS_AVAILABLE: &str = "MinimumReplicasAvailable";
pub(crate) const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";

/// Annotations of a Deployment not copied to its ReplicaSets (`annotationsToSkip`).
const ANNOTATIONS_TO_SKIP: [&str; 6] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
];

/// `spec.replicas` of a Deployment or ReplicaSet (defaulted to 1 when stored).
pub(crate) fn replicas(obj: &Value) -> i64 {
    obj["spec"]["replicas"].as_i64().unwrap_or(1)
}

/// A count of `status` (absent: 0, as Go's zero value).
pub(crate) fn status_count(obj: &Value, field: &str) -> i64 {
    obj["status"][field].as_i64().unwrap_or(0)
}

/// The sum of `count` over the ReplicaSets.
pub(crate) fn sum(rss: &[&Value], count: impl Fn(&Value) -> i64) -> i64 {
    rss.iter().map(|rs| count(rs)).sum()
}

pub(crate) fn is_rolling_update(d: &Value) -> bool {
    d["spec"]["strategy"]["type"] == "RollingUpdate"
}

/// `intstr.GetScaledValueFromIntOrPercent`.
pub(crate) fn scaled_value(value: &Value, total: i64, round_up: bool) -> Result<i64, String> {
    match value {
        Value::Number(n) => n.as_i64().ok_or_else(|| {
            "invalid value for IntOrString: invalid type: neither int nor percentage".into()
        }),
        Value::String(s) => {
            let Some(digits) = s.strip_suffix('%') else {
                return Err(
                    "invalid value for IntOrString: invalid type: string is not a percentage"
                        .into(),
                );
            };
            let percent: i64 = digits
                .parse()
                .map_err(|e| format!("invalid value for IntOrString: invalid value {s:?}: {e}"))?;
            let scaled = percent * total;
            Ok(if round_up {
                scaled.div_euclid(100) + i64::from(scaled.rem_euclid(100) != 0)
            } else {
                scaled.div_euclid(100)
            })
        }
        Value::Null => Err("nil value for IntOrString".into()),
        _ => Err("invalid value for IntOrString: invalid type: neither int nor percentage".into()),
    }
}

/// `ResolveFenceposts`: `maxSurge` rounded up, `maxUnavailable` down (absent: 0); both 0
/// makes `maxUnavailable` 1.
pub(crate) fn resolve_fenceposts(
    max_surge: &Value,
    max_unavailable: &Value,
    desired: i64,
) -> Result<(i64, i64), String> {
    let or_zero = |v: &Value| if v.is_null() { json!(0) } else { v.clone() };
    let surge = scaled_value(&or_zero(max_surge), desired, true)?;
    let mut unavailable = scaled_value(&or_zero(max_unavailable), desired, false)?;
    if surge == 0 && unavailable == 0 {
        unavailable = 1;
    }
    Ok((surge, unavailable))
}

fn fenceposts(d: &Value) -> (i64, i64) {
    let rolling = &d["spec"]["strategy"]["rollingUpdate"];
    resolve_fenceposts(
        &rolling["maxSurge"],
        &rolling["maxUnavailable"],
        replicas(d),
    )
    .unwrap_or((0, 0))
}

/// `MaxUnavailable`: at most `spec.replicas`; 0 for Recreate or no replicas.
pub(crate) fn max_unavailable(d: &Value) -> i64 {
    if !is_rolling_update(d) || replicas(d) == 0 {
        return 0;
    }
    fenceposts(d).1.min(replicas(d))
}

/// `MaxSurge`: 0 for Recreate.
pub(crate) fn max_surge(d: &Value) -> i64 {
    if !is_rolling_update(d) {
        return 0;
    }
    fenceposts(d).0
}

/// `NewRSNewReplicas`: how many replicas the new ReplicaSet may have now.
pub(crate) fn new_rs_new_replicas(d: &Value, all: &[&Value], new: &Value) -> Result<i64, String> {
    match d["spec"]["strategy"]["type"].as_str() {
        Some("RollingUpdate") => {
            let surge = scaled_value(
                &d["spec"]["strategy"]["rollingUpdate"]["maxSurge"],
                replicas(d),
                true,
            )?;
            let current = sum(all, replicas);
            let max_total = replicas(d) + surge;
            if current >= max_total {
                return Ok(replicas(new));
            }
            let scale_up = (max_total - current).min(replicas(d) - replicas(new));
            Ok(replicas(new) + scale_up)
        }
        Some("Recreate") => Ok(replicas(d)),
        other => Err(format!(
            "deployment type {} isn't supported",
            other.unwrap_or_default()
        )),
    }
}

/// A `metav1.Time` of an object.
pub(crate) fn time(value: &Value) -> Option<Timestamp> {
    value.as_str()?.parse().ok()
}

/// `ReplicaSetsByCreationTimestamp`: older first, then by name.
pub(crate) fn by_creation(a: &Value, b: &Value) -> Ordering {
    let created = |o: &Value| time(&o["metadata"]["creationTimestamp"]);
    let name = |o: &Value| {
        o["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    created(a)
        .cmp(&created(b))
        .then_with(|| name(a).cmp(&name(b)))
}

/// `ReplicaSetsBySizeOlder`: larger first, then older.
pub(crate) fn by_size_older(a: &Value, b: &Value) -> Ordering {
    replicas(b)
        .cmp(&replicas(a))
        .then_with(|| by_creation(a, b))
}

/// `ReplicaSetsBySizeNewer`: larger first, then newer.
pub(crate) fn by_size_newer(a: &Value, b: &Value) -> Ordering {
    replicas(b)
        .cmp(&replicas(a))
        .then_with(|| by_creation(b, a))
}

/// `Revision`: the revision annotation (0 when absent, `None` when not a number).
pub(crate) fn revision(rs: &Value) -> Option<i64> {
    match rs["metadata"]["annotations"][REVISION].as_str() {
        None => Some(0),
        Some(v) => v.parse().ok(),
    }
}

/// `MaxRevision`.
pub(crate) fn max_revision(rss: &[&Value]) -> i64 {
    rss.iter()
        .filter_map(|rs| revision(rs))
        .max()
        .unwrap_or(0)
        .max(0)
}

/// `ReplicaSetsByRevision`: lower revision first, then by creation.
pub(crate) fn by_revision(a: &Value, b: &Value) -> Ordering {
    match (revision(a), revision(b)) {
        (Some(ra), Some(rb)) if ra != rb => ra.cmp(&rb),
        _ => by_creation(a, b),
    }
}

/// `SetDeploymentRevision`: whether it changed.
pub(crate) fn set_deployment_revision(d: &mut Value, revision: &str) -> bool {
    if d["metadata"]["annotations"][REVISION] == revision {
        return false;
    }
    if !d["metadata"]["annotations"].is_object() {
        d["metadata"]["annotations"] = json!({});
    }
    d["metadata"]["annotations"][REVISION] = json!(revision);
    true
}

fn annotations_mut(obj: &mut Value) -> &mut serde_json::Map<String, Value> {
    if !obj["metadata"]["annotations"].is_object() {
        obj["metadata"]["annotations"] = json!({});
    }
    obj["metadata"]["annotations"]
        .as_object_mut()
        .expect("just made an object")
}

/// `SetNewReplicaSetAnnotations`: the Deployment's annotations copied, the revision raised to
/// `new_revision` (the old one appended to the history), and for a new ReplicaSet the
/// replicas annotations. Whether anything changed.
pub(crate) fn set_new_rs_annotations(
    d: &Value,
    rs: &mut Value,
    new_revision: i64,
    exists: bool,
) -> bool {
    let mut changed = false;
    let copied = d["metadata"]["annotations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let annotations = annotations_mut(rs);
    for (key, value) in copied {
        if ANNOTATIONS_TO_SKIP.contains(&key.as_str()) || annotations.get(&key) == Some(&value) {
            continue;
        }
        annotations.insert(key, value);
        changed = true;
    }
    let old = annotations
        .get(REVISION)
        .and_then(Value::as_str)
        .map(str::to_owned);
    let old_revision = match old.as_deref().map(str::parse::<i64>) {
        Some(Ok(v)) => v,
        Some(Err(_)) if old.as_deref() != Some("") => return false,
        _ => 0,
    };
    if old_revision < new_revision {
        annotations.insert(REVISION.into(), json!(new_revision.to_string()));
        changed = true;
        if let Some(old) = old {
            append_revision_history(annotations, &old);
        }
    }
    if !exists && set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)) {
        changed = true;
    }
    changed
}

/// The revision history annotation with `old` appended, its oldest entries dropped to stay
/// within 2000 characters.
fn append_revision_history(annotations: &mut serde_json::Map<String, Value>, old: &str) {
    let history = annotations
        .get(REVISION_HISTORY)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if history.is_empty() {
        annotations.insert(REVISION_HISTORY.into(), json!(old));
        return;
    }
    let revisions: Vec<&str> = history.split(',').collect();
    let mut total = history.len() + old.len() + 1;
    let mut start = 0;
    while total > MAX_REVISION_HISTORY_CHARS && start < revisions.len() {
        total -= revisions[start].len() + 1;
        start += 1;
    }
    if total <= MAX_REVISION_HISTORY_CHARS {
        let mut kept = revisions[start..].to_vec();
        kept.push(old);
        annotations.insert(REVISION_HISTORY.into(), json!(kept.join(",")));
    }
}

/// `SetReplicasAnnotations`: whether they changed.
pub(crate) fn set_replicas_annotations(rs: &mut Value, desired: i64, max: i64) -> bool {
    let annotations = annotations_mut(rs);
    let mut changed = false;
    for (key, value) in [(DESIRED_REPLICAS, desired), (MAX_REPLICAS, max)] {
        let value = json!(value.to_string());
        if annotations.get(key) != Some(&value) {
            annotations.insert(key.into(), value);
            changed = true;
        }
    }
    changed
}

/// `ReplicasAnnotationsNeedUpdate`.
pub(crate) fn replicas_annotations_need_update(rs: &Value, desired: i64, max: i64) -> bool {
    let annotations = &rs["metadata"]["annotations"];
    annotations[DESIRED_REPLICAS] != desired.to_string().as_str()
        || annotations[MAX_REPLICAS] != max.to_string().as_str()
}

/// A non-negative int32 annotation (`getNonNegativeInt32FromAnnotation`).
fn int32_annotation(rs: &Value, key: &str) -> Option<i64> {
    let value: u32 = rs["metadata"]["annotations"][key].as_str()?.parse().ok()?;
    (value <= i32::MAX as u32).then_some(i64::from(value))
}

/// `GetDesiredReplicasAnnotation`.
pub(crate) fn desired_replicas_annotation(rs: &Value) -> Option<i64> {
    int32_annotation(rs, DESIRED_REPLICAS)
}

/// `IsSaturated`: the new ReplicaSet has all the replicas, available.
pub(crate) fn is_saturated(d: &Value, rs: Option<&Value>) -> bool {
    let Some(rs) = rs else {
        return false;
    };
    let Some(desired) = rs["metadata"]["annotations"][DESIRED_REPLICAS]
        .as_str()
        .and_then(|s| s.parse::<i64>().ok())
    else {
        return false;
    };
    replicas(rs) == replicas(d)
        && desired == replicas(d)
        && status_count(rs, "availableReplicas") == replicas(d)
}

/// `FindActiveOrLatest`: the only ReplicaSet with replicas, or the newest when none has any;
/// `None` when several have.
pub(crate) fn find_active_or_latest<'a>(
    new: Option<&'a Value>,
    old: &[&'a Value],
) -> Option<&'a Value> {
    if new.is_none() && old.is_empty() {
        return None;
    }
    let mut sorted = old.to_vec();
    sorted.sort_by(|a, b| by_creation(b, a));
    let active: Vec<&Value> = sorted
        .iter()
        .copied()
        .chain(new)
        .filter(|rs| replicas(rs) > 0)
        .collect();
    match active.len() {
        0 => new.or_else(|| sorted.first().copied()),
        1 => Some(active[0]),
        _ => None,
    }
}

/// `GetReplicaSetProportion`: how many of `to_add` go to `rs` when a rolling Deployment is
/// scaled.
pub(crate) fn replica_set_proportion(rs: &Value, d: &Value, to_add: i64, added: i64) -> i64 {
    if replicas(rs) == 0 || to_add == 0 || to_add == added {
        return 0;
    }
    let fraction = replica_set_fraction(rs, d);
    let allowed = to_add - added;
    if to_add > 0 {
        fraction.min(allowed)
    } else {
        fraction.max(allowed)
    }
}

/// `getReplicaSetFraction`.
fn replica_set_fraction(rs: &Value, d: &Value) -> i64 {
    if replicas(d) == 0 {
        return -replicas(rs);
    }
    let max_replicas = replicas(d) + max_surge(d);
    let before = match int32_annotation(rs, MAX_REPLICAS) {
        Some(v) if v != 0 => v,
        _ => {
            let v = status_count(d, "replicas");
            if v == 0 {
                return 0;
            }
            v
        }
    };
    #[allow(clippy::cast_precision_loss)]
    let size = (replicas(rs) * max_replicas) as f64 / before as f64;
    // integer.RoundToInt32: half away from zero.
    #[allow(clippy::cast_possible_truncation)]
    let rounded = size.round() as i64;
    rounded - replicas(rs)
}

/// `HasProgressDeadline`.
pub(crate) fn progress_deadline(d: &Value) -> Option<i64> {
    d["spec"]["progressDeadlineSeconds"]
        .as_i64()
        .filter(|s| *s != i64::from(i32::MAX))
}

/// `HasRevisionHistoryLimit`.
pub(crate) fn revision_history_limit(d: &Value) -> Option<i64> {
    d["spec"]["revisionHistoryLimit"]
        .as_i64()
        .filter(|s| *s != i64::from(i32::MAX))
}

/// The condition of `type_` in a status.
pub(crate) fn condition<'a>(status: &'a Value, type_: &str) -> Option<&'a Value> {
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// `NewDeploymentCondition`.
pub(crate) fn new_condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: String,
    now: Timestamp,
) -> Value {
    let now = rfc3339(now);
    json!({"type": type_, "status": status, "lastUpdateTime": now,
           "lastTransitionTime": now, "reason": reason, "message": message})
}

/// `SetDeploymentCondition`: nothing when the same status and reason are there; the
/// transition time kept when the status is.
pub(crate) fn set_condition(status: &mut Value, mut condition: Value) {
    let type_ = condition["type"].as_str().unwrap_or_default().to_owned();
    if let Some(current) = condition_of(status, &type_) {
        if current["status"] == condition["status"] && current["reason"] == condition["reason"] {
            return;
        }
        if current["status"] == condition["status"] {
            condition["lastTransitionTime"] = current["lastTransitionTime"].clone();
        }
    }
    remove_condition(status, &type_);
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    if let Some(conditions) = status["conditions"].as_array_mut() {
        conditions.push(condition);
    }
}

fn condition_of(status: &Value, type_: &str) -> Option<Value> {
    condition(status, type_).cloned()
}

/// `RemoveDeploymentCondition`.
pub(crate) fn remove_condition(status: &mut Value, type_: &str) {
    if let Some(conditions) = status["conditions"].as_array_mut() {
        conditions.retain(|c| c["type"] != type_);
        if conditions.is_empty()
            && let Some(s) = status.as_object_mut()
        {
            s.remove("conditions");
        }
    }
}

/// `DeploymentComplete`.
pub(crate) fn deployment_complete(d: &Value, status: &Value) -> bool {
    let wanted = replicas(d);
    let count = |k: &str| status[k].as_i64().unwrap_or(0);
    count("updatedReplicas") == wanted
        && count("replicas") == wanted
        && count("availableReplicas") == wanted
        && count("observedGeneration") >= d["metadata"]["generation"].as_i64().unwrap_or(0)
}

/// `DeploymentProgressing`: more updated, ready or available replicas, or fewer old ones.
pub(crate) fn deployment_progressing(d: &Value, status: &Value) -> bool {
    let old = |k: &str| status_count(d, k);
    let new = |k: &str| status[k].as_i64().unwrap_or(0);
    let old_old = old("replicas") - old("updatedReplicas");
    let new_old = new("replicas") - new("updatedReplicas");
    new("updatedReplicas") > old("updatedReplicas")
        || new_old < old_old
        || new("readyReplicas") > old("readyReplicas")
        || new("availableReplicas") > old("availableReplicas")
}

/// `DeploymentTimedOut`: no progress for `progressDeadlineSeconds` since the `Progressing`
/// condition's last update.
pub(crate) fn deployment_timed_out(d: &Value, status: &Value, now: Timestamp) -> bool {
    let Some(deadline) = progress_deadline(d) else {
        return false;
    };
    let Some(condition) = condition(status, "Progressing") else {
        return false;
    };
    if condition["reason"] == NEW_RS_AVAILABLE {
        return false;
    }
    if condition["reason"] == TIMED_OUT {
        return true;
    }
    time(&condition["lastUpdateTime"])
        .is_some_and(|from| from + SignedDuration::from_secs(deadline) < now)
}

/// The `status` of a Deployment with its zero counts left out, as Go's `omitempty` writes them
/// (`collisionCount`, a pointer, is kept at 0).
pub(crate) fn omit_zero_counts(status: &mut Value) {
    if let Some(map) = status.as_object_mut() {
        map.retain(|k, v| k == "collisionCount" || v.as_i64() != Some(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `newDeployment` of `deployment_util_test.go`.
    fn deployment(replicas: i64, surge: Value, unavailable: Value) -> Value {
        json!({
            "metadata": {"name": "foo", "generation": 1},
            "spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}},
        })
    }

    fn rs(name: &str, replicas: i64) -> Value {
        json!({"metadata": {"name": name}, "spec": {"replicas": replicas}})
    }

    #[test]
    fn resolve_fenceposts_as_upstream() {
        // TestResolveFenceposts.
        type Case = (Value, Value, i64, Result<(i64, i64), ()>);
        let cases: [Case; 7] = [
            (json!("0%"), json!("0%"), 0, Ok((0, 1))),
            (json!("39%"), json!("39%"), 10, Ok((4, 3))),
            (json!("oops"), json!("39%"), 10, Err(())),
            (json!("55%"), json!("urg"), 10, Err(())),
            (Value::Null, json!("39%"), 10, Ok((0, 3))),
            (json!("39%"), Value::Null, 10, Ok((4, 0))),
            (Value::Null, Value::Null, 10, Ok((0, 1))),
        ];
        for (surge, unavailable, desired, expected) in cases {
            let got = resolve_fenceposts(&surge, &unavailable, desired).map_err(drop);
            assert_eq!(got, expected, "{surge} {unavailable} {desired}");
        }
    }

    #[test]
    fn max_unavailable_and_max_surge_as_upstream() {
        // TestMaxUnavailable.
        let cases = [
            (10, json!(5), 5),
            (10, json!(10), 10),
            (5, json!(10), 5),
            (0, json!(10), 0),
            (10, json!("50%"), 5),
            (10, json!("100%"), 10),
            (5, json!("100%"), 5),
        ];
        for (replicas, unavailable, expected) in cases {
            let d = deployment(replicas, json!(1), unavailable.clone());
            assert_eq!(max_unavailable(&d), expected, "{replicas} {unavailable}");
        }
        let mut recreate = deployment(10, json!(0), json!(5));
        recreate["spec"]["strategy"] = json!({"type": "Recreate"});
        assert_eq!(max_unavailable(&recreate), 0);
        assert_eq!(max_surge(&recreate), 0);
        // TestMaxSurge-like: percentages round up.
        assert_eq!(max_surge(&deployment(10, json!("25%"), json!(0))), 3);
        assert_eq!(max_surge(&deployment(3, json!("25%"), json!("25%"))), 1);
        assert_eq!(
            max_unavailable(&deployment(3, json!("25%"), json!("25%"))),
            0
        );
    }

    #[test]
    fn new_rs_new_replicas_as_upstream() {
        // TestNewRSNewReplicas: the Deployment's ReplicaSets are one of 5 replicas.
        let cases = [
            ("RollingUpdate", 1, 5, 1, 5),
            ("RollingUpdate", 6, 2, 10, 6),
            ("Recreate", 3, 1, 1, 3),
        ];
        for (strategy, dr, new_replicas, surge, expected) in cases {
            let mut d = deployment(dr, json!(surge), json!(1));
            d["spec"]["strategy"]["type"] = json!(strategy);
            let new = rs("new", new_replicas);
            let rs5 = rs("rs5", 5);
            let got = new_rs_new_replicas(&d, &[&rs5], &new).unwrap();
            assert_eq!(got, expected, "{strategy} {dr} {new_replicas} {surge}");
        }
    }

    #[test]
    fn revisions_and_their_history_are_annotated() {
        let d = json!({"metadata": {"annotations": {"team": "a", REVISION: "7"}},
                       "spec": {"replicas": 3, "strategy": {"type": "RollingUpdate",
                                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}});
        let mut new = json!({"metadata": {}});
        assert!(set_new_rs_annotations(&d, &mut new, 1, false));
        let a = &new["metadata"]["annotations"];
        assert_eq!(a["team"], "a");
        assert_eq!(a[REVISION], "1");
        assert_eq!(a[DESIRED_REPLICAS], "3");
        assert_eq!(a[MAX_REPLICAS], "4");
        assert!(a.get(REVISION_HISTORY).is_none());
        assert!(set_new_rs_annotations(&d, &mut new, 3, true));
        assert_eq!(new["metadata"]["annotations"][REVISION], "3");
        assert_eq!(new["metadata"]["annotations"][REVISION_HISTORY], "1");
        assert!(!set_new_rs_annotations(&d, &mut new, 3, true));
    }

    #[test]
    fn conditions_keep_their_transition_time_while_the_status_holds() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let t1: Timestamp = "2026-01-01T00:01:00Z".parse().unwrap();
        let mut status = json!({});
        set_condition(
            &mut status,
            new_condition("Progressing", "True", NEW_REPLICA_SET, "a".into(), t0),
        );
        set_condition(
            &mut status,
            new_condition("Progressing", "True", NEW_RS_AVAILABLE, "b".into(), t1),
        );
        let c = condition(&status, "Progressing").unwrap();
        assert_eq!(c["reason"], NEW_RS_AVAILABLE);
        assert_eq!(c["lastTransitionTime"], "2026-01-01T00:00:00Z");
        assert_eq!(c["lastUpdateTime"], "2026-01-01T00:01:00Z");
        let d = json!({"metadata": {"generation": 1}, "spec": {"progressDeadlineSeconds": 30}});
        let mut updating = json!({});
        set_condition(
            &mut updating,
            new_condition("Progressing", "True", REPLICA_SET_UPDATED, "c".into(), t0),
        );
        assert!(!deployment_timed_out(
            &d,
            &updating,
            t0 + SignedDuration::from_secs(30)
        ));
        assert!(deployment_timed_out(
            &d,
            &updating,
            t0 + SignedDuration::from_secs(31)
        ));
        assert!(!deployment_timed_out(
            &d,
            &status,
            t1 + SignedDuration::from_secs(300)
        ));
    }

    #[test]
    fn the_only_active_or_the_latest_replica_set_is_found() {
        let mut a = rs("a", 0);
        a["metadata"]["creationTimestamp"] = json!("2026-01-01T00:00:00Z");
        let mut b = rs("b", 0);
        b["metadata"]["creationTimestamp"] = json!("2026-01-01T00:01:00Z");
        assert_eq!(
            find_active_or_latest(None, &[&a, &b]).unwrap()["metadata"]["name"],
            "b"
        );
        let c = rs("c", 2);
        assert_eq!(
            find_active_or_latest(None, &[&a, &c]).unwrap()["metadata"]["name"],
            "c"
        );
        let e = rs("e", 1);
        assert!(find_active_or_latest(Some(&e), &[&c]).is_none());
    }
}
