//! `trackJobStatusAndRemoveFinalizers`: finished pods are listed in
//! `status.uncountedTerminatedPods` (written first), then lose the tracking finalizer, then are
//! moved to the counters; the Job's terminal condition is added once nothing is uncounted or
//! terminating, with its events.

use std::collections::BTreeSet;

use jiff::SignedDuration;
use serde_json::{Value, json};

use super::indexes::{completion_index, valid_index};
use super::{
    COMPONENT, MANAGER, SyncJob, TRACKING_FINALIZER, completions, ensure_condition,
    failed_from_target, find_condition, has_tracking_finalizer, is_indexed, is_pod_failed,
    new_condition, phase, policy, uid,
};
use crate::store::ObjectKey;
use crate::workloads::Ctx;
use crate::workloads::context::{JOBS, PODS, is_deleting};

/// Counts the Job's finished pods, releases them, and finishes the Job when it may.
pub(super) fn track(ctx: &mut Ctx<'_>, sj: &mut SyncJob) {
    let indexed = is_indexed(&sj.job);
    let completions = completions(&sj.job).unwrap_or_default();
    let mut pods = sj.pods.clone();
    if indexed {
        pods.sort_by_key(|p| completion_index(p).unwrap_or(-1));
    }
    let mut with_finalizer: BTreeSet<String> = pods
        .iter()
        .filter(|p| has_tracking_finalizer(p))
        .map(|p| uid(p).to_string())
        .collect();
    sj.job["status"]["active"] = json!(sj.active);
    sj.job["status"]["ready"] = json!(sj.ready);
    sj.job["status"]["terminating"] = json!(sj.terminating);
    clean_uncounted(&mut sj.job["status"], &with_finalizer);
    let ending = sj
        .finished
        .as_ref()
        .is_some_and(|c| c["type"] != "SuccessCriteriaMet");
    let may_release = is_deleting(&sj.job) || sj.finished.is_some();
    let (mut release, mut new_indexes) = (Vec::new(), Vec::new());
    for pod in pods.iter().filter(|p| has_tracking_finalizer(p)) {
        let failed = is_pod_failed(pod, &sj.job);
        if !(may_release || phase(pod) == "Succeeded" || failed) {
            continue;
        }
        release.push(pod.clone());
        let id = uid(pod).to_string();
        let counts = policy::counts_failure(&sj.job, pod);
        let uncounted = &mut sj.job["status"]["uncountedTerminatedPods"];
        if phase(pod) == "Succeeded" && !sj.uncounted_failed.contains(&id) {
            if indexed {
                if let Some(ix) = valid_index(pod, completions)
                    && !sj.prev_succeeded_indexes.has(ix)
                {
                    new_indexes.push(ix);
                }
            } else if !sj.uncounted_succeeded.contains(&id) {
                push(uncounted, "succeeded", id);
            }
        } else if (failed || ending)
            && !sj.uncounted_failed.contains(&id)
            && (!indexed || valid_index(pod, completions).is_some())
            && counts
        {
            push(uncounted, "failed", id);
        }
    }
    if indexed {
        sj.succeeded_indexes = sj.succeeded_indexes.with_indexes(&new_indexes);
        sj.job["status"]["succeeded"] = json!(sj.succeeded_indexes.total());
        sj.job["status"]["completedIndexes"] = json!(sj.succeeded_indexes.to_string());
    }
    add_interim_condition(sj);
    if !flush(ctx, sj) {
        return;
    }
    for pod in &release {
        if remove_finalizer(ctx, pod) {
            with_finalizer.remove(uid(pod));
        }
    }
    clean_uncounted(&mut sj.job["status"], &with_finalizer);
    let finished = enact_finished(sj);
    if flush(ctx, sj) && finished {
        record_finished(ctx, sj);
    }
}

/// Appends the interim `FailureTarget` (or `SuccessCriteriaMet`) condition, to be written
/// before the finalizers go, and turns the condition to end with into `Failed` (`Complete`).
fn add_interim_condition(sj: &mut SyncJob) {
    let Some(condition) = sj.finished.take() else {
        return;
    };
    let conditions = &mut sj.job["status"]["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let text = |k: &str| condition[k].as_str().unwrap_or_default().to_string();
    sj.finished = Some(match condition["type"].as_str() {
        Some("FailureTarget") => {
            if let Some(list) = conditions.as_array_mut() {
                list.push(condition.clone());
            }
            failed_from_target(&condition, sj.now)
        }
        Some("SuccessCriteriaMet") => {
            if find_condition(&sj.job, "SuccessCriteriaMet", "True").is_none()
                && let Some(list) = sj.job["status"]["conditions"].as_array_mut()
            {
                list.push(condition.clone());
            }
            new_condition(
                "Complete",
                "True",
                &text("reason"),
                &text("message"),
                sj.now,
            )
        }
        _ => condition,
    });
    if sj.job["status"]["conditions"]
        .as_array()
        .is_some_and(Vec::is_empty)
    {
        sj.job["status"]
            .as_object_mut()
            .map(|s| s.remove("conditions"));
    }
}

/// `enactJobFinished`: the terminal condition (and `completionTime`) once no pod is uncounted
/// or terminating.
fn enact_finished(sj: &mut SyncJob) -> bool {
    let Some(condition) = sj.finished.clone() else {
        return false;
    };
    let uncounted = &sj.job["status"]["uncountedTerminatedPods"];
    let pending = |list: &str| uncounted[list].as_array().is_some_and(|l| !l.is_empty());
    if pending("succeeded") || pending("failed") || sj.terminating > 0 {
        return false;
    }
    let text = |k: &str| condition[k].as_str().unwrap_or_default().to_string();
    let type_ = text("type");
    ensure_condition(
        &mut sj.job,
        &type_,
        "True",
        &text("reason"),
        &text("message"),
        sj.now,
    );
    if type_ == "Complete" {
        sj.job["status"]["completionTime"] = json!(crate::object::rfc3339(sj.now));
    }
    true
}

/// `recordJobFinished`'s events.
fn record_finished(ctx: &mut Ctx<'_>, sj: &SyncJob) {
    let Some(condition) = &sj.finished else {
        return;
    };
    let job = &sj.job;
    if condition["type"] == "Complete" {
        let succeeded = job["status"]["succeeded"].as_i64().unwrap_or_default();
        if completions(job).is_some_and(|c| succeeded > c) {
            let message = "Too many succeeded pods running after completion count reached";
            ctx.event(
                COMPONENT,
                job,
                "Job",
                "Warning",
                "TooManySucceededPods",
                message.into(),
            );
        }
        ctx.event(
            COMPONENT,
            job,
            "Job",
            "Normal",
            "Completed",
            "Job completed".into(),
        );
    } else {
        let reason = condition["reason"].as_str().unwrap_or_default();
        let message = condition["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        ctx.event(COMPONENT, job, "Job", "Warning", reason, message);
    }
}

/// `cleanUncountedPodsWithoutFinalizers`: uncounted pods that lost their finalizer move to
/// the counters.
fn clean_uncounted(status: &mut Value, with_finalizer: &BTreeSet<String>) {
    for (list, counter) in [("succeeded", "succeeded"), ("failed", "failed")] {
        let uncounted = &mut status["uncountedTerminatedPods"][list];
        let Some(uids) = uncounted.as_array() else {
            continue;
        };
        let (kept, counted): (Vec<Value>, Vec<Value>) = uids
            .iter()
            .cloned()
            .partition(|u| u.as_str().is_some_and(|u| with_finalizer.contains(u)));
        if counted.is_empty() {
            continue;
        }
        *uncounted = Value::Array(kept);
        let before = status[counter].as_i64().unwrap_or_default();
        status[counter] = json!(before + i64::try_from(counted.len()).unwrap_or_default());
    }
}

fn push(uncounted: &mut Value, list: &str, uid: String) {
    match uncounted[list].as_array_mut() {
        Some(uids) => uids.push(json!(uid)),
        None => uncounted[list] = json!([uid]),
    }
}

/// Writes the status built so far (as the API serializes it: zero counters and empty lists
/// omitted). `false` when refused: the Job is synced again a second later.
fn flush(ctx: &mut Ctx<'_>, sj: &mut SyncJob) -> bool {
    let mut status = sj.job["status"].clone();
    for key in ["active", "succeeded", "failed"] {
        if status[key] == 0 {
            status.as_object_mut().map(|s| s.remove(key));
        }
    }
    if status["completedIndexes"] == "" {
        status.as_object_mut().map(|s| s.remove("completedIndexes"));
    }
    for list in ["succeeded", "failed"] {
        let uncounted = &mut status["uncountedTerminatedPods"];
        if uncounted[list].as_array().is_some_and(Vec::is_empty) {
            uncounted.as_object_mut().map(|u| u.remove(list));
        }
    }
    sj.job["status"]["uncountedTerminatedPods"] = status["uncountedTerminatedPods"].clone();
    let meta = &sj.job["metadata"];
    let (namespace, name) = (
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default(),
    );
    let Some(stored) = ctx.get(JOBS, namespace, name) else {
        return false;
    };
    match ctx.update_status(MANAGER, JOBS, &stored, status) {
        Ok(_) => true,
        Err(_) => {
            sj.requeue_at(sj.now + SignedDuration::from_secs(1));
            false
        }
    }
}

/// Removes the tracking finalizer from `pod` (as stored now); `true` when it is gone (or the
/// pod is).
pub(super) fn remove_finalizer(ctx: &mut Ctx<'_>, pod: &Value) -> bool {
    let meta = &pod["metadata"];
    let (namespace, name) = (
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default(),
    );
    let Some(fresh) = ctx.get(PODS, namespace, name) else {
        return true;
    };
    if uid(&fresh) != uid(pod) || !has_tracking_finalizer(&fresh) {
        return true;
    }
    let mut new = fresh.clone();
    if let Some(finalizers) = new["metadata"]["finalizers"].as_array_mut() {
        finalizers.retain(|f| f != TRACKING_FINALIZER);
    }
    match ctx.update(MANAGER, PODS, &fresh, new, None) {
        Ok(_) => true,
        Err(err) => err.code == 404,
    }
}

/// Pods whose controller is a Job named `key` that no longer exists (or is another Job of that
/// name) lose their tracking finalizer, as upstream's orphan pod handling does.
pub(super) fn release_orphans(ctx: &mut Ctx<'_>, key: &ObjectKey, job_uid: Option<&str>) {
    let orphans: Vec<Value> = ctx
        .list(PODS, Some(&key.0))
        .into_iter()
        .filter(|p| has_tracking_finalizer(p) && super::job_owner_name(p) == Some(key.1.as_str()))
        .filter(|p| crate::workloads::context::controller_uid(p) != job_uid)
        .collect();
    for pod in &orphans {
        remove_finalizer(ctx, pod);
    }
}
