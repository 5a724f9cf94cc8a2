//! The vocabulary of scenarios: the kinds they touch, their steps, and what is compared of
//! what happened.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// A kind a scenario writes or watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Kind {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
}

pub const DEPLOYMENT: Kind = Kind {
    api_version: "apps/v1",
    kind: "Deployment",
    plural: "deployments",
};
pub const REPLICA_SET: Kind = Kind {
    api_version: "apps/v1",
    kind: "ReplicaSet",
    plural: "replicasets",
};
pub const STATEFUL_SET: Kind = Kind {
    api_version: "apps/v1",
    kind: "StatefulSet",
    plural: "statefulsets",
};
pub const DAEMON_SET: Kind = Kind {
    api_version: "apps/v1",
    kind: "DaemonSet",
    plural: "daemonsets",
};
pub const JOB: Kind = Kind {
    api_version: "batch/v1",
    kind: "Job",
    plural: "jobs",
};
pub const CRON_JOB: Kind = Kind {
    api_version: "batch/v1",
    kind: "CronJob",
    plural: "cronjobs",
};
pub const POD: Kind = Kind {
    api_version: "v1",
    kind: "Pod",
    plural: "pods",
};
pub const SERVICE: Kind = Kind {
    api_version: "v1",
    kind: "Service",
    plural: "services",
};
pub const ENDPOINT_SLICE: Kind = Kind {
    api_version: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    plural: "endpointslices",
};
pub const CLAIM: Kind = Kind {
    api_version: "v1",
    kind: "PersistentVolumeClaim",
    plural: "persistentvolumeclaims",
};

/// Every kind the recorder watches in a scenario's namespace.
pub const WATCHED: [Kind; 10] = [
    DEPLOYMENT,
    REPLICA_SET,
    STATEFUL_SET,
    DAEMON_SET,
    JOB,
    CRON_JOB,
    POD,
    SERVICE,
    ENDPOINT_SLICE,
    CLAIM,
];

/// What a wait waits for, on the object it names.
pub type Test = fn(&Value) -> bool;

/// One step of a scenario.
pub enum Step {
    /// Creates the object (its namespace is the scenario's).
    Create(Value),
    /// A merge patch of `name`.
    Patch(Kind, &'static str, Value),
    /// Deletes `name` (background propagation).
    Delete(Kind, &'static str),
    /// Waits until `name` passes the test (`what` says what it waits for).
    Wait(Kind, &'static str, &'static str, Test),
    /// Waits until the objects of a kind pass the test as a list (`{"items": [...]}`).
    WaitAll(Kind, &'static str, Test),
    /// Lets this many seconds pass ([`kubeward_testing::Cluster::elapse`]).
    Elapse(u64),
    /// Takes the named node's kubelet away (`false`) or brings it back
    /// ([`kubeward_testing::Cluster::set_node_ready`]).
    NodeReady(&'static str, bool),
}

/// A scenario: steps run in order on each backend, each in a fresh namespace.
pub struct Scenario {
    pub name: &'static str,
    pub steps: Vec<Step>,
}

/// A scenario.
pub fn scenario(name: &'static str, steps: Vec<Step>) -> Scenario {
    Scenario { name, steps }
}

/// Whether `object` has a condition of `type_` with `status` (and `reason`, unless empty).
pub fn has_condition(object: &Value, type_: &str, status: &str, reason: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .is_some_and(|conditions| {
            conditions.iter().any(|c| {
                c["type"] == type_
                    && c["status"] == status
                    && (reason.is_empty() || c["reason"] == reason)
            })
        })
}

/// The integer `status.<field>` (0 when absent, as the API omits zero).
pub fn count(object: &Value, field: &str) -> i64 {
    object["status"][field].as_i64().unwrap_or(0)
}

/// A Deployment `name` of `replicas` pods of one container running `image`.
pub fn deployment(name: &str, replicas: i64, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    })
}

/// One recorded observation of an object: its conditions (type, status, reason, sorted by
/// type) and phase.
pub type Observation = (Vec<(String, String, String)>, String);

/// What is compared of a backend's run of a scenario.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Per object role (`Deployment web`, `Pod of ReplicaSet of Deployment web`), the
    /// sequence of its distinct observations; for the roles several objects share, the sorted
    /// list of each object's sequence.
    pub sequences: BTreeMap<String, Vec<Vec<Observation>>>,
    /// Per role, the integer status fields of each object at the end, sorted.
    pub counts: BTreeMap<String, Vec<BTreeMap<String, i64>>>,
}

impl Outcome {
    /// Whether `self` and `other` differ only by transient states one backend's timing made
    /// observable and the other's skipped: the same roles and final counts, and for each object
    /// each condition type's sequence of (status, reason), and its phase's, the other's with
    /// states inserted or left out in between — in the same order, with the same first and last
    /// states. Pods that become ready one after another on one backend and together on the
    /// other make a Deployment pass through `Available` before `NewReplicaSetAvailable`, or
    /// through `ReplicaSetUpdated` at all, on one of them only; a reordering, another final
    /// state or a reason the other never reaches in between is still a difference.
    pub fn equal_up_to_timing(&self, other: &Self) -> bool {
        self.counts == other.counts
            && self.sequences.len() == other.sequences.len()
            && self.sequences.iter().zip(&other.sequences).all(
                |((role, ours), (theirs_role, theirs))| {
                    role == theirs_role
                        && ours.len() == theirs.len()
                        && ours
                            .iter()
                            .zip(theirs)
                            .all(|(a, b)| same_up_to_timing(a, b))
                },
            )
    }
}

/// Whether two sequences of one object have the same fields, each field's states in the same
/// order but for states one of them left out in between.
fn same_up_to_timing(a: &[Observation], b: &[Observation]) -> bool {
    let (a, b) = (per_field(a), per_field(b));
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|((field, x), (other, y))| field == other && one_within_the_other(x, y))
}

/// An object's sequence split by field: each condition type's (status, reason) and the phase,
/// each without consecutive repeats, by field name.
fn per_field(sequence: &[Observation]) -> Vec<(String, Vec<(String, String)>)> {
    let mut fields: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (conditions, phase) in sequence {
        let mut push = |field: &str, value: (String, String)| {
            let values = fields.entry(field.to_string()).or_default();
            if values.last() != Some(&value) {
                values.push(value);
            }
        };
        push("phase", (phase.clone(), String::new()));
        for (type_, status, reason) in conditions {
            push(type_, (status.clone(), reason.clone()));
        }
    }
    fields.into_iter().collect()
}

/// Whether the shorter of two sequences is the longer with states left out in between (a
/// subsequence with the same first and last states).
fn one_within_the_other<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.first() != long.first() || short.last() != long.last() {
        return false;
    }
    let mut rest = long.iter();
    short.iter().all(|state| rest.any(|s| s == state))
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (role, sequences) in &self.sequences {
            writeln!(f, "  {role}:")?;
            for sequence in sequences {
                let steps: Vec<String> = sequence
                    .iter()
                    .map(|(conditions, phase)| {
                        let c: Vec<String> = conditions
                            .iter()
                            .map(|(t, s, r)| {
                                if r.is_empty() {
                                    format!("{t}={s}")
                                } else {
                                    format!("{t}={s}/{r}")
                                }
                            })
                            .collect();
                        format!(
                            "[{}{}]",
                            if phase.is_empty() {
                                String::new()
                            } else {
                                format!("{phase} ")
                            },
                            c.join(",")
                        )
                    })
                    .collect();
                writeln!(f, "    {}", steps.join(" -> "))?;
            }
            if let Some(counts) = self.counts.get(role) {
                writeln!(f, "    final counts: {counts:?}")?;
            }
        }
        Ok(())
    }
}

#[test]
fn transient_states_only_one_side_saw_are_told_from_other_differences() {
    let c = |t: &str, status: &str, reason: &str| {
        (t.to_string(), status.to_string(), reason.to_string())
    };
    let at =
        |conditions: Vec<(String, String, String)>| -> Observation { (conditions, String::new()) };
    let created = c("Progressing", "True", "NewReplicaSetCreated");
    let updated = c("Progressing", "True", "ReplicaSetUpdated");
    let done = c("Progressing", "True", "NewReplicaSetAvailable");
    let (down, up) = (
        c("Available", "False", "MinimumReplicasUnavailable"),
        c("Available", "True", "MinimumReplicasAvailable"),
    );
    let outcome = |seq: Vec<Observation>| Outcome {
        sequences: BTreeMap::from([("Deployment web".to_string(), vec![seq])]),
        counts: BTreeMap::new(),
    };
    // The simulation's pods all ready at once; the real tier's one by one (Available before
    // the rollout is done), or so fast that ReplicaSetUpdated is never written.
    let simulated = outcome(vec![
        at(vec![created.clone()]),
        at(vec![down.clone(), created.clone()]),
        at(vec![down.clone(), updated.clone()]),
        at(vec![up.clone(), done.clone()]),
    ]);
    let staggered = outcome(vec![
        at(vec![created.clone()]),
        at(vec![down.clone(), created.clone()]),
        at(vec![up.clone(), updated.clone()]),
        at(vec![up.clone(), done.clone()]),
    ]);
    let fast = outcome(vec![
        at(vec![created.clone()]),
        at(vec![down.clone(), created.clone()]),
        at(vec![up.clone(), done.clone()]),
    ]);
    assert!(simulated.equal_up_to_timing(&staggered));
    assert!(simulated.equal_up_to_timing(&fast));
    assert!(fast.equal_up_to_timing(&simulated));
    // Another final state is a difference.
    let stuck = outcome(vec![
        at(vec![created.clone()]),
        at(vec![down.clone(), updated.clone()]),
    ]);
    assert!(!simulated.equal_up_to_timing(&stuck));
    // The same states in another order.
    assert!(!one_within_the_other(&[1, 2, 3, 4], &[1, 3, 2, 4]));
    assert!(one_within_the_other(&[1, 3], &[1, 2, 3]) && !one_within_the_other(&[1, 3], &[1, 2]));
}
