//! The order in which a ReplicaSet deletes its pods when it has too many
//! (`getPodsToDelete` of `replica_set.go`, `ActivePodsWithRanks` of
//! `pkg/controller/controller_utils.go`, with `PodDeletionCost` and `LogarithmicScaleDown` on
//! as in 1.34).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use jiff::Timestamp;
use serde_json::Value;

use super::is_pod_active;
use crate::workloads::context::{is_pod_ready, ready_since};

const DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";

/// `getPodsToDelete`: the first `diff` of `pods` in deletion order, each ranked by the active
/// related pods on its node.
pub(super) fn pods_to_delete<'a>(
    pods: &'a [Arc<Value>],
    related: &[Value],
    diff: usize,
    now: Timestamp,
) -> Vec<&'a Value> {
    let mut on_node: BTreeMap<&str, usize> = BTreeMap::new();
    for pod in related.iter().filter(|p| is_pod_active(p)) {
        *on_node.entry(node_name(pod)).or_default() += 1;
    }
    let mut ranked: Vec<(&Value, usize)> = pods
        .iter()
        .map(|p| (p.as_ref(), on_node.get(node_name(p)).copied().unwrap_or(0)))
        .collect();
    if diff < pods.len() {
        ranked.sort_by(|a, b| compare_for_deletion(a, b, Some(now)));
    }
    ranked.into_iter().take(diff).map(|(p, _)| p).collect()
}

fn node_name(pod: &Value) -> &str {
    pod["spec"]["nodeName"].as_str().unwrap_or_default()
}

/// `ActivePodsWithRanks.Less` as an ordering: `Less` sorts before.
pub(crate) fn compare_for_deletion(
    (a, rank_a): &(&Value, usize),
    (b, rank_b): &(&Value, usize),
    now: Option<Timestamp>,
) -> Ordering {
    let (node_a, node_b) = (node_name(a), node_name(b));
    if node_a != node_b && (node_a.is_empty() || node_b.is_empty()) {
        return node_b.is_empty().cmp(&node_a.is_empty());
    }
    let phase = |p: &Value| match p["status"]["phase"].as_str() {
        Some("Unknown") => 1,
        Some("Running") => 2,
        _ => 0,
    };
    let ready_a = is_pod_ready(a);
    let ready_b = is_pod_ready(b);
    let cost = |p: &Value| {
        p["metadata"]["annotations"][DELETION_COST]
            .as_str()
            .and_then(|c| c.parse::<i32>().ok())
            .unwrap_or(0)
    };
    let by_ready_time = || {
        if ready_a && ready_b {
            compare_times(ready_since(a), ready_since(b), now, a, b)
        } else {
            Ordering::Equal
        }
    };
    phase(a)
        .cmp(&phase(b))
        .then(ready_a.cmp(&ready_b))
        .then(cost(a).cmp(&cost(b)))
        .then(rank_b.cmp(rank_a))
        .then_with(by_ready_time)
        .then(restarts(b).cmp(&restarts(a)))
        .then_with(|| {
            let created = |p: &Value| {
                p["metadata"]["creationTimestamp"]
                    .as_str()
                    .and_then(|t| t.parse::<Timestamp>().ok())
            };
            compare_times(created(a), created(b), now, a, b)
        })
}

/// Two times of `LogarithmicScaleDown`: a missing one first, then the later, compared by the
/// whole base-2 logarithm of their age at `now`, equal ranks ordered by the pods' uids.
fn compare_times(
    t1: Option<Timestamp>,
    t2: Option<Timestamp>,
    now: Option<Timestamp>,
    a: &Value,
    b: &Value,
) -> Ordering {
    if t1 == t2 {
        return Ordering::Equal;
    }
    let (Some(t1), Some(t2), Some(now)) = (t1, t2, now) else {
        // afterOrZero: zero first, else the later first.
        return match (t1, t2) {
            (None, _) => Ordering::Less,
            (_, None) => Ordering::Greater,
            (Some(t1), Some(t2)) => t2.cmp(&t1),
        };
    };
    let rank = |t: Timestamp| {
        let nanos = now.duration_since(t).as_nanos();
        if nanos > 0 {
            // The whole part of the logarithm, as Go's int64(math.Log2(...)).
            #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
            let r = (nanos as f64).log2() as i64;
            r
        } else {
            -1
        }
    };
    match rank(t1).cmp(&rank(t2)) {
        Ordering::Equal => {
            let uid = |p: &Value| p["metadata"]["uid"].as_str().unwrap_or_default().to_owned();
            uid(a).cmp(&uid(b))
        }
        other => other,
    }
}

/// `maxContainerRestarts`: the highest restart count of the pod's containers.
fn restarts(pod: &Value) -> i64 {
    pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["restartCount"].as_i64())
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    pub(in crate::workloads) fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    /// A pod as `ActivePodsWithRanks`' tests build them.
    pub(in crate::workloads) fn pod(
        name: &str,
        node: &str,
        phase: &str,
        ready_since: Option<&str>,
    ) -> Value {
        let mut p = json!({
            "metadata": {"name": name, "uid": name, "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"nodeName": node},
            "status": {"phase": phase},
        });
        if let Some(since) = ready_since {
            p["status"]["conditions"] =
                json!([{"type": "Ready", "status": "True", "lastTransitionTime": since}]);
        }
        p
    }

    fn order(pods: &[(Value, usize)], now: Option<Timestamp>) -> Vec<String> {
        let mut ranked: Vec<(&Value, usize)> = pods.iter().map(|(p, r)| (p, *r)).collect();
        ranked.sort_by(|a, b| compare_for_deletion(a, b, now));
        ranked
            .iter()
            .map(|(p, _)| p["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn pods_are_ranked_for_deletion_as_active_pods_with_ranks() {
        let now = at("2026-01-01T01:00:00Z");
        let mut restarted = pod("restarted", "n1", "Running", Some("2026-01-01T00:00:00Z"));
        restarted["status"]["containerStatuses"] = json!([{"restartCount": 3}]);
        let mut cheap = pod("cheap", "n1", "Running", Some("2026-01-01T00:00:00Z"));
        cheap["metadata"]["annotations"] = json!({DELETION_COST: "-10"});
        let pods = vec![
            (
                pod("ready-old", "n1", "Running", Some("2026-01-01T00:00:00Z")),
                1,
            ),
            (pod("unassigned", "", "Pending", None), 0),
            (pod("pending", "n1", "Pending", None), 1),
            (pod("unknown", "n1", "Unknown", None), 1),
            (pod("running-not-ready", "n1", "Running", None), 1),
            (
                pod("ready-new", "n1", "Running", Some("2026-01-01T00:59:59Z")),
                1,
            ),
            (
                pod("doubled-up", "n2", "Running", Some("2026-01-01T00:00:00Z")),
                3,
            ),
            (restarted, 1),
            (cheap, 1),
        ];
        assert_eq!(
            order(&pods, Some(now)),
            [
                "unassigned",
                "pending",
                "unknown",
                "running-not-ready",
                "cheap",
                "doubled-up",
                "ready-new",
                "restarted",
                "ready-old",
            ]
        );
    }

    #[test]
    fn times_compare_on_a_logarithmic_scale_with_ties_by_uid() {
        let now = at("2026-01-01T01:00:00Z");
        // 60 s and 61 s ago: the same power of two of nanoseconds, so the uid decides.
        let a = pod("b", "n", "Running", Some("2026-01-01T00:59:00Z"));
        let b = pod("a", "n", "Running", Some("2026-01-01T00:58:59Z"));
        assert_eq!(
            order(&[(a.clone(), 0), (b.clone(), 0)], Some(now)),
            ["a", "b"]
        );
        // Without a reference time, the later ready pod goes first.
        assert_eq!(order(&[(b, 0), (a, 0)], None), ["b", "a"]);
    }

    #[test]
    fn only_the_first_diff_pods_are_deleted_and_ranks_count_related_pods_per_node() {
        let now = at("2026-01-01T01:00:00Z");
        let pods = vec![
            pod("alone", "n1", "Running", Some("2026-01-01T00:00:00Z")),
            pod("crowded", "n2", "Running", Some("2026-01-01T00:00:00Z")),
        ];
        let related = vec![
            pods[0].clone(),
            pods[1].clone(),
            pod("sibling", "n2", "Running", None),
        ];
        let shared: Vec<Arc<Value>> = pods.into_iter().map(Arc::new).collect();
        let chosen = pods_to_delete(&shared, &related, 1, now);
        assert_eq!(chosen.len(), 1);
        assert_eq!(chosen[0]["metadata"]["name"], "crowded");
    }
}
