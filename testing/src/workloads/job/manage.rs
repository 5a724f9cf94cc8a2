//! `manageJob`: the pods a Job wants (`parallelism`, the completions left, none while
//! suspended), created from its template or deleted, and the backoff before replacing failed
//! ones.

use serde_json::{Value, json};

use super::indexes::{COMPLETION_INDEX, completion_index, first_pending, generate_name_with_index};
use super::{
    COMPONENT, MANAGER, SyncJob, TRACKING_FINALIZER, completions, is_indexed, is_pod_ready,
    is_suspended, only_replace_failed_pods, parallelism, phase, tracking,
};
use crate::workloads::Ctx;
use crate::workloads::context::{PODS, controller_ref};

/// `MaxPodCreateDeletePerSync`.
const MAX_PER_SYNC: i64 = 500;

/// Creates or deletes pods towards the active count the Job wants; updates `sj.active`,
/// `sj.terminating`, `sj.ready`, and `sj.requeue` while backing off.
pub(super) fn manage_job(ctx: &mut Ctx<'_>, sj: &mut SyncJob) {
    let active = sj.active;
    if is_suspended(&sj.job) {
        let pods = pods_for_removal(&sj.job, &sj.active_pods, active);
        let (ready, removed) = delete_pods(ctx, &sj.job, &pods, true);
        sj.active -= removed;
        sj.terminating += removed;
        sj.ready -= ready;
        return;
    }
    let parallelism = parallelism(&sj.job);
    let want = match completions(&sj.job) {
        None if sj.succeeded > 0 => active,
        None => parallelism,
        Some(completions) => (completions - sj.succeeded).clamp(0, parallelism.max(0)),
    };
    let remove = (active - want).max(0);
    let mut pods = pods_for_removal(&sj.job, &sj.active_pods, remove);
    pods.truncate(usize::try_from(MAX_PER_SYNC).unwrap_or_default());
    if !pods.is_empty() {
        let (ready, removed) = delete_pods(ctx, &sj.job, &pods, true);
        sj.active -= removed;
        sj.terminating += removed;
        sj.ready -= ready;
        return;
    }
    let terminating = if only_replace_failed_pods(&sj.job) {
        sj.terminating
    } else {
        0
    };
    let diff = (want - terminating - active).min(MAX_PER_SYNC);
    if diff <= 0 {
        return;
    }
    if let Some(at) = sj.new_backoff.ready_at(sj.now) {
        sj.requeue_at(at);
        return;
    }
    let indexes: Vec<Option<i64>> = if is_indexed(&sj.job) {
        let busy: Vec<i64> = sj.active_pods.iter().filter_map(completion_index).collect();
        let count = usize::try_from(diff).unwrap_or_default();
        let completions = completions(&sj.job).unwrap_or_default();
        first_pending(&sj.succeeded_indexes, &busy, count, completions)
            .into_iter()
            .map(Some)
            .collect()
    } else {
        (0..diff).map(|_| None).collect()
    };
    sj.active += create_pods(ctx, &sj.job, &indexes);
}

/// Creates a pod per entry of `indexes` in slow-start batches (1, 2, 4, …), stopping after a
/// batch with a failure; returns how many were created.
fn create_pods(ctx: &mut Ctx<'_>, job: &Value, indexes: &[Option<i64>]) -> i64 {
    let mut created = 0;
    let mut batch = 1;
    let mut rest = indexes;
    while !rest.is_empty() {
        let (now, later) = rest.split_at(batch.min(rest.len()));
        let mut failed = false;
        for index in now {
            match ctx.create(MANAGER, PODS, pod_from_template(job, *index)) {
                Ok(pod) => {
                    created += 1;
                    let name = pod["metadata"]["name"].as_str().unwrap_or_default();
                    let message = format!("Created pod: {name}");
                    ctx.event(COMPONENT, job, "Job", "Normal", "SuccessfulCreate", message);
                }
                Err(err) => {
                    failed = true;
                    let message = format!("Error creating: {}", err.message);
                    ctx.event(COMPONENT, job, "Job", "Warning", "FailedCreate", message);
                }
            }
        }
        if failed {
            break;
        }
        rest = later;
        batch *= 2;
    }
    created
}

/// `GetPodFromTemplate` with the Job's additions: its controller reference, the tracking
/// finalizer, and for an index its annotation, label, hostname and environment variable.
pub(super) fn pod_from_template(job: &Value, index: Option<i64>) -> Value {
    let template = &job["spec"]["template"];
    let name = job["metadata"]["name"].as_str().unwrap_or_default();
    let mut metadata = json!({
        "generateName": format!("{name}-"),
        "namespace": job["metadata"]["namespace"],
        "ownerReferences": [controller_ref(job, "batch/v1", "Job")],
    });
    for key in ["labels", "annotations", "finalizers"] {
        if !template["metadata"][key].is_null() {
            metadata[key] = template["metadata"][key].clone();
        }
    }
    let finalizers = metadata["finalizers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !finalizers.iter().any(|f| f == TRACKING_FINALIZER) {
        let mut finalizers = finalizers;
        finalizers.push(json!(TRACKING_FINALIZER));
        metadata["finalizers"] = Value::Array(finalizers);
    }
    let mut spec = template["spec"].clone();
    if is_indexed(job) {
        add_index_env(&mut spec);
    }
    if let Some(index) = index {
        metadata["annotations"][COMPLETION_INDEX] = json!(index.to_string());
        metadata["labels"][COMPLETION_INDEX] = json!(index.to_string());
        metadata["generateName"] = json!(generate_name_with_index(name, index));
        spec["hostname"] = json!(format!("{name}-{index}"));
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
}

/// `addCompletionIndexEnvVariables`: `JOB_COMPLETION_INDEX` from the index label, in every
/// container that does not set it.
fn add_index_env(spec: &mut Value) {
    let field_path = format!("metadata.labels['{COMPLETION_INDEX}']");
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec[list].as_array_mut() else {
            continue;
        };
        for container in containers {
            let env = &mut container["env"];
            if !env.is_array() {
                *env = json!([]);
            }
            let Some(env) = env.as_array_mut() else {
                continue;
            };
            if !env.iter().any(|v| v["name"] == "JOB_COMPLETION_INDEX") {
                env.push(json!({"name": "JOB_COMPLETION_INDEX",
                    "valueFrom": {"fieldRef": {"fieldPath": field_path}}}));
            }
        }
    }
}

/// Deletes `pods` (`deleteJobPods` when `release`: their finalizer removed first, so they are
/// not counted; `deleteActivePods` otherwise). Returns the ready ones and all deleted.
pub(super) fn delete_pods(
    ctx: &mut Ctx<'_>,
    job: &Value,
    pods: &[Value],
    release: bool,
) -> (i64, i64) {
    let (mut ready, mut deleted) = (0, 0);
    for pod in pods {
        let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        if release && !tracking::remove_finalizer(ctx, pod) {
            continue;
        }
        match ctx.delete(MANAGER, PODS, namespace, name, &json!({})) {
            Ok(_) => {
                let message = format!("Deleted pod: {name}");
                ctx.event(COMPONENT, job, "Job", "Normal", "SuccessfulDelete", message);
            }
            Err(err) if err.code == 404 => {}
            Err(err) => {
                let message = format!("Error deleting: {}", err.message);
                ctx.event(COMPONENT, job, "Job", "Warning", "FailedDelete", message);
                continue;
            }
        }
        deleted += 1;
        if is_pod_ready(pod) {
            ready += 1;
        }
    }
    (ready, deleted)
}

/// `activePodsForRemoval`: an Indexed Job's pods of repeated or out-of-range indexes, then the
/// least advanced pods (`controller.ActivePods` order), at least `at_least` of them.
fn pods_for_removal(job: &Value, pods: &[Value], at_least: i64) -> Vec<Value> {
    let at_least = usize::try_from(at_least).unwrap_or_default();
    let (mut remove, mut left): (Vec<Value>, Vec<Value>) = (Vec::new(), Vec::new());
    if is_indexed(job) {
        let completions = completions(job).unwrap_or_default();
        let mut sorted = pods.to_vec();
        sorted.sort_by_key(|p| (completion_index(p).unwrap_or(-1), activity(p)));
        for pod in sorted {
            let index = completion_index(&pod);
            let repeated = left.last().is_some_and(|l| completion_index(l) == index);
            match index {
                Some(i) if i < completions && !repeated => left.push(pod),
                // The most advanced pod of an index stays.
                Some(i) if i < completions => {
                    if let Some(kept) = left.pop() {
                        remove.push(kept);
                    }
                    left.push(pod);
                }
                _ => remove.push(pod),
            }
        }
    } else {
        left = pods.to_vec();
    }
    if remove.len() < at_least {
        left.sort_by_key(activity);
        let more = (at_least - remove.len()).min(left.len());
        remove.extend(left.into_iter().take(more));
    }
    remove
}

/// `controller.ActivePods` order, least advanced first: unassigned, pending, not ready, more
/// restarts, newer.
fn activity(
    pod: &Value,
) -> (
    bool,
    u8,
    bool,
    std::cmp::Reverse<i64>,
    std::cmp::Reverse<String>,
) {
    let phase_rank = match phase(pod) {
        "Pending" | "" => 0,
        "Unknown" => 1,
        _ => 2,
    };
    let restarts: i64 = pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| s["restartCount"].as_i64().unwrap_or_default())
        .sum();
    let created = pod["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap_or_default();
    (
        !pod["spec"]["nodeName"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        phase_rank,
        is_pod_ready(pod),
        std::cmp::Reverse(restarts),
        std::cmp::Reverse(created.to_string()),
    )
}
