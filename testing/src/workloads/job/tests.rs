//! `job_controller_test.go`'s `TestControllerSyncJob` rows that matter: one sync of a Job whose
//! pods are in given phases, its pod creations and deletions, counters and conditions.

use std::sync::Arc;
use std::time::Duration;

use kubeward_names::clock::ManualClock;

use super::*;
use crate::workloads::Workloads;
use crate::workloads::context::SERVICE_ACCOUNTS;

/// A Job row: its spec, its pods' phases (`Running` pods ready when listed in `ready`), and
/// what one sync leads to.
#[derive(Default)]
struct Row {
    name: &'static str,
    parallelism: i64,
    completions: Option<i64>,
    backoff_limit: Option<i64>,
    suspend: bool,
    indexed: bool,
    deadline: Option<i64>,
    pending: usize,
    running: usize,
    ready: usize,
    succeeded: usize,
    failed: usize,
    // Expected.
    creations: usize,
    deletions: usize,
    active: i64,
    want_ready: i64,
    want_succeeded: i64,
    want_failed: i64,
    terminating: i64,
    conditions: &'static [(&'static str, &'static str)],
}

const START: &str = "2026-01-01T00:00:00Z";

fn job_body(row: &Row) -> Value {
    let mut spec = json!({
        "parallelism": row.parallelism, "suspend": row.suspend,
        "template": {"spec": {"restartPolicy": "Never",
                              "containers": [{"name": "c", "image": "busybox"}]}},
    });
    if let Some(c) = row.completions {
        spec["completions"] = json!(c);
    }
    if let Some(b) = row.backoff_limit {
        spec["backoffLimit"] = json!(b);
    }
    if row.indexed {
        spec["completionMode"] = json!("Indexed");
    }
    if let Some(d) = row.deadline {
        spec["activeDeadlineSeconds"] = json!(d);
    }
    json!({"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "foobar", "namespace": "default"}, "spec": spec})
}

/// Creates the row's Job and pods, syncs the Job once; returns the Job and the pods before
/// and after.
fn sync_row(row: &Row) -> (Value, Vec<Value>, Vec<Value>) {
    let clock = ManualClock::new(START.parse().unwrap());
    let mut state = State::new(1000, Duration::from_secs(3600), Arc::new(clock));
    let world = Workloads::new();
    let now = state.now();
    let mut ctx = Ctx::new(&mut state, &world, now);
    let account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                         "metadata": {"name": "default", "namespace": "default"}});
    ctx.create("test", SERVICE_ACCOUNTS, account).unwrap();
    let job = ctx.create("test", JOBS, job_body(row)).unwrap();
    if row.deadline.is_some() {
        let started = rfc3339(now - SignedDuration::from_secs(20));
        ctx.update_status("test", JOBS, &job, json!({"startTime": started}))
            .unwrap();
    }
    let phases = [
        ("Pending", row.pending),
        ("Running", row.running),
        ("Succeeded", row.succeeded),
        ("Failed", row.failed),
    ];
    let mut index = 0;
    for (phase, n) in phases {
        for i in 0..n {
            let pod_index = row.indexed.then_some(index);
            index += 1;
            let pod = ctx
                .create("test", PODS, manage::pod_from_template(&job, pod_index))
                .unwrap();
            let mut status = json!({"phase": phase});
            if phase == "Running" && i < row.ready {
                status["conditions"] = json!([{"type": "Ready", "status": "True"}]);
            }
            ctx.update_status("test", PODS, &pod, status).unwrap();
        }
    }
    let before = ctx.list(PODS, Some("default"));
    let key = ("default".to_string(), "foobar".to_string());
    JobController::default().sync(&mut ctx, &key);
    let after = ctx.list(PODS, Some("default"));
    (ctx.get(JOBS, "default", "foobar").unwrap(), before, after)
}

fn check(row: &Row) {
    let (job, before, after) = sync_row(row);
    let name = row.name;
    let names = |pods: &[Value]| -> BTreeSet<String> {
        pods.iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let created = names(&after).difference(&names(&before)).count();
    let deleted = after
        .iter()
        .filter(|p| is_deleting(p) && phase(p) != "Succeeded" && phase(p) != "Failed")
        .count()
        + names(&before).difference(&names(&after)).count();
    assert_eq!(created, row.creations, "{name}: creations");
    assert_eq!(deleted, row.deletions, "{name}: deletions");
    let status = &job["status"];
    assert_eq!(
        count(status, "active"),
        row.active,
        "{name}: active {status}"
    );
    assert_eq!(count(status, "ready"), row.want_ready, "{name}: ready");
    assert_eq!(
        count(status, "succeeded"),
        row.want_succeeded,
        "{name}: succeeded"
    );
    assert_eq!(count(status, "failed"), row.want_failed, "{name}: failed");
    assert_eq!(
        count(status, "terminating"),
        row.terminating,
        "{name}: terminating"
    );
    assert_eq!(status["uncountedTerminatedPods"], json!({}), "{name}");
    let conditions: Vec<(&str, &str)> = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["type"].as_str().unwrap(),
                c["reason"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(conditions, row.conditions, "{name}: conditions");
    assert_eq!(
        status["completionTime"].is_string(),
        row.conditions.iter().any(|c| c.0 == "Complete"),
        "{name}: completionTime"
    );
    for pod in &after {
        let released = !has_tracking_finalizer(pod);
        assert_eq!(
            released,
            is_terminal(pod) || is_deleting(pod),
            "{name}: finalizer of {pod}"
        );
    }
}

#[test]
fn one_sync_of_a_job_as_upstream() {
    let complete: &[(&str, &str)] = &[
        ("SuccessCriteriaMet", "CompletionsReached"),
        ("Complete", "CompletionsReached"),
    ];
    let rows = [
        Row {
            name: "job start",
            parallelism: 2,
            completions: Some(5),
            creations: 2,
            active: 2,
            ..Row::default()
        },
        Row {
            name: "WQ job start",
            parallelism: 2,
            creations: 2,
            active: 2,
            ..Row::default()
        },
        Row {
            name: "correct # of pods",
            parallelism: 2,
            completions: Some(5),
            running: 2,
            ready: 1,
            active: 2,
            want_ready: 1,
            ..Row::default()
        },
        Row {
            name: "too few active pods",
            parallelism: 2,
            completions: Some(5),
            running: 1,
            succeeded: 1,
            creations: 1,
            active: 2,
            want_succeeded: 1,
            ..Row::default()
        },
        Row {
            name: "too many active pods",
            parallelism: 2,
            completions: Some(5),
            running: 3,
            deletions: 1,
            active: 2,
            terminating: 1,
            ..Row::default()
        },
        Row {
            name: "more active pods than parallelism",
            parallelism: 2,
            completions: Some(5),
            running: 10,
            deletions: 8,
            active: 2,
            terminating: 8,
            ..Row::default()
        },
        Row {
            name: "pending pods count as active",
            parallelism: 2,
            completions: Some(5),
            pending: 2,
            active: 2,
            ..Row::default()
        },
        Row {
            name: "job finish",
            parallelism: 2,
            completions: Some(5),
            succeeded: 5,
            want_succeeded: 5,
            conditions: complete,
            ..Row::default()
        },
        Row {
            name: "WQ job finishing",
            parallelism: 2,
            running: 1,
            succeeded: 1,
            active: 1,
            want_succeeded: 1,
            ..Row::default()
        },
        Row {
            name: "WQ job all finished",
            parallelism: 2,
            succeeded: 2,
            want_succeeded: 2,
            conditions: complete,
            ..Row::default()
        },
        Row {
            name: "WQ job all finished despite one failure",
            parallelism: 2,
            succeeded: 1,
            failed: 1,
            want_succeeded: 1,
            want_failed: 1,
            conditions: complete,
            ..Row::default()
        },
        Row {
            name: "suspending a job",
            parallelism: 2,
            completions: Some(4),
            suspend: true,
            running: 2,
            deletions: 2,
            terminating: 2,
            conditions: &[("Suspended", "JobSuspended")],
            ..Row::default()
        },
        Row {
            name: "suspended job never started",
            parallelism: 2,
            completions: Some(4),
            suspend: true,
            conditions: &[("Suspended", "JobSuspended")],
            ..Row::default()
        },
        Row {
            name: "failed pod backs off its replacement",
            parallelism: 2,
            completions: Some(5),
            running: 1,
            failed: 1,
            active: 1,
            want_failed: 1,
            ..Row::default()
        },
        Row {
            name: "too many job failures",
            parallelism: 2,
            completions: Some(5),
            backoff_limit: Some(1),
            failed: 2,
            want_failed: 2,
            conditions: &[
                ("FailureTarget", "BackoffLimitExceeded"),
                ("Failed", "BackoffLimitExceeded"),
            ],
            ..Row::default()
        },
        Row {
            name: "too many job failures with an active pod",
            parallelism: 2,
            completions: Some(5),
            backoff_limit: Some(1),
            running: 1,
            failed: 2,
            deletions: 1,
            want_failed: 3,
            terminating: 1,
            conditions: &[("FailureTarget", "BackoffLimitExceeded")],
            ..Row::default()
        },
        Row {
            name: "past the active deadline",
            parallelism: 1,
            completions: Some(1),
            deadline: Some(10),
            running: 1,
            deletions: 1,
            want_failed: 1,
            terminating: 1,
            conditions: &[("FailureTarget", "DeadlineExceeded")],
            ..Row::default()
        },
        Row {
            name: "indexed job start",
            parallelism: 2,
            completions: Some(5),
            indexed: true,
            creations: 2,
            active: 2,
            ..Row::default()
        },
        Row {
            name: "indexed job with a succeeded index",
            parallelism: 3,
            completions: Some(3),
            indexed: true,
            running: 1,
            succeeded: 1,
            creations: 1,
            active: 2,
            want_succeeded: 1,
            ..Row::default()
        },
    ];
    for row in &rows {
        check(row);
    }
}

#[test]
fn indexed_pods_get_the_pending_indexes_and_the_job_its_completed_ones() {
    let row = Row {
        parallelism: 3,
        completions: Some(3),
        indexed: true,
        running: 1,
        succeeded: 1,
        ..Row::default()
    };
    let (job, _, after) = sync_row(&row);
    assert_eq!(job["status"]["completedIndexes"], "1");
    let mut indexes: Vec<i64> = after.iter().filter_map(indexes::completion_index).collect();
    indexes.sort_unstable();
    assert_eq!(indexes, [0, 1, 2]);
}

#[test]
fn the_conditions_carry_upstream_messages() {
    let row = Row {
        parallelism: 1,
        completions: Some(1),
        succeeded: 1,
        ..Row::default()
    };
    let (job, _, _) = sync_row(&row);
    let complete = find_condition(&job, "Complete", "True").unwrap();
    assert_eq!(
        complete["message"],
        "Reached expected number of succeeded pods"
    );
    assert_eq!(complete["lastTransitionTime"], START);
    assert_eq!(job["status"]["completionTime"], START);
    let row = Row {
        parallelism: 1,
        completions: Some(1),
        deadline: Some(10),
        ..Row::default()
    };
    let (job, _, _) = sync_row(&row);
    let failed = find_condition(&job, "Failed", "True").unwrap();
    assert_eq!(failed["reason"], "DeadlineExceeded");
    assert_eq!(
        failed["message"],
        "Job was active longer than specified deadline"
    );
    assert!(job["status"]["completionTime"].is_null());
}
