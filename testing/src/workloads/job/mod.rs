//! The Job controller (`pkg/controller/job/job_controller.go`, with `backoff_utils.go`,
//! `indexed_job_utils.go`, `success_policy.go`, `pod_failure_policy.go`), as in v1.34:
//!
//! - pods are created from the template (`generateName: <job>-`, or `<job>-<index>-` for an
//!   Indexed Job, whose pods carry the `batch.kubernetes.io/job-completion-index` annotation
//!   and label, a `<job>-<index>` hostname and `JOB_COMPLETION_INDEX`), owned by the Job and
//!   held by the `batch.kubernetes.io/job-tracking` finalizer, up to `parallelism` and the
//!   completions left; after a failure new ones wait 10 s, doubled per further failure (capped
//!   at 10 min), on the clock;
//! - a finished pod is first listed in `status.uncountedTerminatedPods`, then loses its
//!   finalizer, then is counted in `succeeded`/`failed` (`completedIndexes` for an Indexed Job);
//! - the Job ends when it reaches its completions (`SuccessCriteriaMet`, then `Complete`, reason
//!   `CompletionsReached`, with `completionTime`), its `successPolicy`, more failures than
//!   `backoffLimit` (`FailureTarget`, then `Failed`, `BackoffLimitExceeded`), its
//!   `activeDeadlineSeconds` (`DeadlineExceeded`, synced again at the deadline) or a
//!   `podFailurePolicy` `FailJob` rule; the terminal condition waits for its pods to be gone;
//! - `suspend` deletes the active pods (`Suspended` condition, `JobSuspended`; `JobResumed`
//!   when resumed, `startTime` reset);
//! - status `active`, `ready`, `terminating`, `startTime`, and the events upstream records
//!   (`SuccessfulCreate` "Created pod: x", `SuccessfulDelete`, `Completed` "Job completed", the
//!   failure reason with its message, `Suspended`, `Resumed`).
//!
//! Not modelled: adoption of orphan pods matching the selector, `backoffLimitPerIndex`, the
//! `MaxUncountedPods` cap, pod failure policy `FailIndex` (treated as `Count`).

mod backoff;
mod indexes;
mod manage;
mod policy;
mod tracking;

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::context::{JOBS, PODS, is_deleting, is_pod_ready};
use super::{Controller, Ctx, Keys};
use crate::object::rfc3339;
use crate::registry::State;
use crate::store::{Change, ObjectKey, StorageKey};
use backoff::BackoffRecord;
use indexes::{Intervals, valid_index};

pub(crate) const MANAGER: &str = "kube-controller-manager";
const COMPONENT: &str = "job-controller";
/// The finalizer that keeps a Job's pods until it counted them.
pub(crate) const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// `spec.managedBy` of the Jobs this controller syncs (or none).
const JOB_CONTROLLER_NAME: &str = "kubernetes.io/job-controller";

/// The controller: its keys are Jobs; it keeps each Job's backoff record.
#[derive(Debug, Default)]
pub(crate) struct JobController {
    backoff: BTreeMap<ObjectKey, BackoffRecord>,
}

impl Controller for JobController {
    fn primary(&self) -> StorageKey {
        JOBS.storage()
    }

    fn observe(&mut self, change: &Change, _state: &State, keys: &mut Keys) {
        let meta = &change.object["metadata"];
        let namespace = meta["namespace"].as_str().unwrap_or_default();
        if change.storage == JOBS.storage() {
            let name = meta["name"].as_str().unwrap_or_default();
            keys.insert((namespace.into(), name.into()));
        } else if change.storage == PODS.storage()
            && let Some(job) = job_owner_name(&change.object)
        {
            keys.insert((namespace.into(), job.into()));
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let job = ctx.get(JOBS, &key.0, &key.1);
        tracking::release_orphans(ctx, key, job.as_ref().map(uid));
        let Some(job) = job else {
            self.backoff.remove(key);
            return None;
        };
        if job["spec"]["managedBy"]
            .as_str()
            .is_some_and(|m| m != JOB_CONTROLLER_NAME)
        {
            return None;
        }
        if is_finished(&job) {
            self.backoff.remove(key);
            return None;
        }
        if !matches!(
            job["spec"]["completionMode"].as_str(),
            None | Some("NonIndexed" | "Indexed")
        ) {
            let message = "Skipped Job sync because completion mode is unknown".to_string();
            ctx.event(
                COMPONENT,
                &job,
                "Job",
                "Warning",
                "UnknownCompletionMode",
                message,
            );
            return None;
        }
        let record = self.backoff.get(key).cloned().unwrap_or_default();
        let mut sj = SyncJob::new(ctx, job, &record);
        sj.evaluate_end();
        sj.reconcile(ctx);
        tracking::track(ctx, &mut sj);
        self.backoff.insert(key.clone(), sj.new_backoff.clone());
        sj.requeue
    }
}

/// One sync's view of a Job (`syncJobCtx`): `job` is the copy whose status is being built.
pub(super) struct SyncJob {
    job: Value,
    pods: Vec<Value>,
    active_pods: Vec<Value>,
    /// The number of active pods, as the sync changes it.
    active: i64,
    ready: i64,
    terminating: i64,
    uncounted_succeeded: BTreeSet<String>,
    uncounted_failed: BTreeSet<String>,
    succeeded: i64,
    failed: i64,
    /// The condition the Job is to end with, once its pods are counted.
    finished: Option<Value>,
    prev_succeeded_indexes: Intervals,
    succeeded_indexes: Intervals,
    new_backoff: BackoffRecord,
    requeue: Option<Timestamp>,
    now: Timestamp,
}

impl SyncJob {
    fn new(ctx: &Ctx<'_>, mut job: Value, record: &BackoffRecord) -> Self {
        let now = ctx.now();
        let namespace = job["metadata"]["namespace"].as_str().unwrap_or_default();
        let pods = ctx.owned(PODS, namespace, uid(&job));
        if !job["status"].is_object() {
            job["status"] = json!({});
        }
        if job["status"]["uncountedTerminatedPods"].is_null() {
            job["status"]["uncountedTerminatedPods"] = json!({});
        }
        let active_pods: Vec<Value> = pods.iter().filter(|p| is_active(p)).cloned().collect();
        let uncounted = &job["status"]["uncountedTerminatedPods"];
        let uncounted_succeeded = strings(&uncounted["succeeded"]);
        let uncounted_failed = strings(&uncounted["failed"]);
        // `getNewFinishedPods`.
        let completions = completions(&job).unwrap_or_default();
        let valid = |p: &&Value| {
            has_tracking_finalizer(p)
                && (!is_indexed(&job) || valid_index(p, completions).is_some())
        };
        let new_succeeded: Vec<&Value> = pods
            .iter()
            .filter(valid)
            .filter(|p| !uncounted_succeeded.contains(uid(p)) && phase(p) == "Succeeded")
            .collect();
        let new_failed: Vec<&Value> = pods
            .iter()
            .filter(valid)
            .filter(|p| !uncounted_failed.contains(uid(p)) && is_pod_failed(p, &job))
            .collect();
        let counted_failures = new_failed
            .iter()
            .filter(|p| policy::counts_failure(&job, p))
            .count();
        let status = &job["status"];
        let succeeded =
            count(status, "succeeded") + len(new_succeeded.len()) + len(uncounted_succeeded.len());
        let failed = count(status, "failed") + len(counted_failures) + len(uncounted_failed.len());
        let new_backoff = record.with_finished(&new_succeeded, &new_failed);
        let mut sj = Self {
            active: len(active_pods.len()),
            ready: len(active_pods.iter().filter(|p| is_pod_ready(p)).count()),
            terminating: len(pods.iter().filter(|p| is_terminating(p)).count()),
            active_pods,
            pods,
            uncounted_succeeded,
            uncounted_failed,
            succeeded,
            failed,
            finished: None,
            prev_succeeded_indexes: Intervals::default(),
            succeeded_indexes: Intervals::default(),
            new_backoff,
            requeue: None,
            now,
            job,
        };
        if sj.job["status"]["startTime"].is_null() && !is_suspended(&sj.job) {
            sj.job["status"]["startTime"] = json!(rfc3339(now));
        }
        sj
    }

    fn requeue_at(&mut self, at: Timestamp) {
        self.requeue = Some(self.requeue.map_or(at, |r| r.min(at)));
    }

    /// The end state's evaluation, in upstream's order: a condition set by an earlier sync,
    /// the pod failure policy, the backoff limit, the deadline, then (Indexed) the success
    /// policy.
    fn evaluate_end(&mut self) {
        let job = &self.job;
        let now = self.now;
        self.finished = find_condition(job, "SuccessCriteriaMet", "True").cloned();
        if self.finished.is_none() {
            if let Some(target) = find_condition(job, "FailureTarget", "True") {
                self.finished = Some(failed_from_target(target, now));
            } else if let Some(message) = policy::fail_job_message(job, &self.pods) {
                self.finished = Some(new_condition(
                    "FailureTarget",
                    "True",
                    "PodFailurePolicy",
                    &message,
                    now,
                ));
            }
        }
        if self.finished.is_none() {
            let exceeds = self.failed > backoff_limit(job);
            if exceeds || past_backoff_limit_on_failure(job, &self.pods) {
                let message = "Job has reached the specified backoff limit";
                self.finished = Some(new_condition(
                    "FailureTarget",
                    "True",
                    "BackoffLimitExceeded",
                    message,
                    now,
                ));
            } else if let Some(deadline) = active_deadline(job) {
                if now >= deadline {
                    let message = "Job was active longer than specified deadline";
                    self.finished = Some(new_condition(
                        "FailureTarget",
                        "True",
                        "DeadlineExceeded",
                        message,
                        now,
                    ));
                } else {
                    self.requeue_at(deadline);
                }
            }
        }
        if is_indexed(&self.job) {
            self.count_succeeded_indexes();
            if self.finished.is_none()
                && let Some(message) =
                    policy::match_success_policy(&self.job, &self.succeeded_indexes)
            {
                self.finished = Some(new_condition(
                    "SuccessCriteriaMet",
                    "True",
                    "SuccessPolicy",
                    &message,
                    now,
                ));
            }
        }
    }

    /// `calculateSucceededIndexes`.
    fn count_succeeded_indexes(&mut self) {
        let completions = completions(&self.job).unwrap_or_default();
        let text = self.job["status"]["completedIndexes"]
            .as_str()
            .unwrap_or_default();
        self.prev_succeeded_indexes = Intervals::parse(text, completions);
        let mut new: Vec<i64> = self
            .pods
            .iter()
            .filter(|p| phase(p) == "Succeeded" && has_tracking_finalizer(p))
            .filter_map(|p| valid_index(p, completions))
            .collect();
        new.sort_unstable();
        new.dedup();
        self.succeeded_indexes = self.prev_succeeded_indexes.with_indexes(&new);
        self.succeeded = self.succeeded_indexes.total();
    }

    /// Deletes the active pods of an ending Job, or manages its pods and evaluates its
    /// completions and suspension.
    fn reconcile(&mut self, ctx: &mut Ctx<'_>) {
        if self.finished.is_some() {
            let pods = std::mem::take(&mut self.active_pods);
            let (deleted_ready, deleted) = manage::delete_pods(ctx, &self.job, &pods, false);
            if deleted != self.active {
                self.finished = None;
            }
            self.active -= deleted;
            self.terminating += deleted;
            self.ready -= deleted_ready;
            return;
        }
        let managed = !is_deleting(&self.job);
        if managed {
            manage::manage_job(ctx, self);
        }
        let complete = match completions(&self.job) {
            None => self.succeeded > 0 && self.active == 0,
            Some(completions) => self.succeeded >= completions && self.active == 0,
        };
        if complete {
            let message = "Reached expected number of succeeded pods";
            self.finished = Some(new_condition(
                "SuccessCriteriaMet",
                "True",
                "CompletionsReached",
                message,
                self.now,
            ));
        } else if managed {
            self.update_suspended(ctx);
        }
    }

    /// The `Suspended` condition and its events; a resumed Job's `startTime` is reset.
    fn update_suspended(&mut self, ctx: &mut Ctx<'_>) {
        let suspended = is_suspended(&self.job);
        let (value, reason, message) = if suspended {
            ("True", "JobSuspended", "Job suspended")
        } else {
            ("False", "JobResumed", "Job resumed")
        };
        if !ensure_condition(&mut self.job, "Suspended", value, reason, message, self.now) {
            return;
        }
        let event = if suspended { "Suspended" } else { "Resumed" };
        ctx.event(
            COMPONENT,
            &self.job,
            "Job",
            "Normal",
            event,
            message.to_string(),
        );
        if !suspended {
            self.job["status"]["startTime"] = json!(rfc3339(self.now));
        }
    }
}

/// The name of a pod's controller when it is a Job.
fn job_owner_name(pod: &Value) -> Option<&str> {
    pod["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true && r["kind"] == "Job")?["name"]
        .as_str()
}

/// The condition that finished a Job (`Complete` or `Failed` true), if any.
pub(crate) fn finished_condition(job: &Value) -> Option<&Value> {
    job["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| (c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True")
}

/// `IsJobFinished`.
pub(crate) fn is_finished(job: &Value) -> bool {
    finished_condition(job).is_some()
}

fn uid(object: &Value) -> &str {
    object["metadata"]["uid"].as_str().unwrap_or_default()
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or_default()
}

fn len(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn count(status: &Value, key: &str) -> i64 {
    status[key].as_i64().unwrap_or_default()
}

fn strings(list: &Value) -> BTreeSet<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn has_tracking_finalizer(pod: &Value) -> bool {
    pod["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f == TRACKING_FINALIZER))
}

fn is_terminal(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

/// `FilterActivePods`: neither terminal nor being deleted.
fn is_active(pod: &Value) -> bool {
    !is_terminal(pod) && !is_deleting(pod)
}

/// `CountTerminatingPods`: being deleted, not terminal.
fn is_terminating(pod: &Value) -> bool {
    is_deleting(pod) && !is_terminal(pod)
}

/// `isPodFailed`: `Failed`, or (unless only failed pods are replaced) deleted before
/// succeeding.
fn is_pod_failed(pod: &Value, job: &Value) -> bool {
    phase(pod) == "Failed"
        || (!only_replace_failed_pods(job) && is_deleting(pod) && phase(pod) != "Succeeded")
}

/// `onlyReplaceFailedPods`.
fn only_replace_failed_pods(job: &Value) -> bool {
    job["spec"]["podReplacementPolicy"] == "Failed" || !job["spec"]["podFailurePolicy"].is_null()
}

fn is_suspended(job: &Value) -> bool {
    job["spec"]["suspend"] == true
}

fn is_indexed(job: &Value) -> bool {
    job["spec"]["completionMode"] == "Indexed"
}

fn completions(job: &Value) -> Option<i64> {
    job["spec"]["completions"].as_i64()
}

fn parallelism(job: &Value) -> i64 {
    job["spec"]["parallelism"].as_i64().unwrap_or(1)
}

fn backoff_limit(job: &Value) -> i64 {
    job["spec"]["backoffLimit"].as_i64().unwrap_or(6)
}

/// When an unsuspended Job with `activeDeadlineSeconds` runs out of time.
fn active_deadline(job: &Value) -> Option<Timestamp> {
    let seconds = job["spec"]["activeDeadlineSeconds"].as_i64()?;
    if is_suspended(job) {
        return None;
    }
    let start: Timestamp = job["status"]["startTime"].as_str()?.parse().ok()?;
    start.checked_add(SignedDuration::from_secs(seconds)).ok()
}

/// `pastBackoffLimitOnFailure`: for `restartPolicy: OnFailure`, the restarts of the running
/// and pending pods' containers reach the backoff limit.
fn past_backoff_limit_on_failure(job: &Value, pods: &[Value]) -> bool {
    if job["spec"]["template"]["spec"]["restartPolicy"] != "OnFailure" {
        return false;
    }
    let restarts: i64 = pods
        .iter()
        .filter(|p| matches!(phase(p), "Running" | "Pending"))
        .flat_map(|p| {
            let statuses = &p["status"];
            let init = statuses["initContainerStatuses"]
                .as_array()
                .into_iter()
                .flatten();
            init.chain(
                statuses["containerStatuses"]
                    .as_array()
                    .into_iter()
                    .flatten(),
            )
        })
        .map(|s| s["restartCount"].as_i64().unwrap_or_default())
        .sum();
    let limit = backoff_limit(job);
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

/// `findConditionByType`, with the status wanted.
fn find_condition<'a>(job: &'a Value, type_: &str, status: &str) -> Option<&'a Value> {
    job["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_ && c["status"] == status)
}

/// `newCondition`: probed and changed now.
fn new_condition(type_: &str, status: &str, reason: &str, message: &str, now: Timestamp) -> Value {
    let now = rfc3339(now);
    let mut condition = json!({"type": type_, "status": status,
                               "lastProbeTime": now, "lastTransitionTime": now});
    if !reason.is_empty() {
        condition["reason"] = json!(reason);
    }
    if !message.is_empty() {
        condition["message"] = json!(message);
    }
    condition
}

/// `newFailedConditionForFailureTarget`.
fn failed_from_target(target: &Value, now: Timestamp) -> Value {
    let text = |k: &str| target[k].as_str().unwrap_or_default().to_string();
    new_condition("Failed", "True", &text("reason"), &text("message"), now)
}

/// `ensureJobConditionStatus`: replaces the condition of `type_` when its status, reason or
/// message differ; appends it when missing and not `False`. Returns whether it changed.
fn ensure_condition(
    job: &mut Value,
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> bool {
    let wanted = new_condition(type_, status, reason, message, now);
    let conditions = &mut job["status"]["conditions"];
    if !conditions.is_array() {
        if status == "False" {
            return false;
        }
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return false;
    };
    if let Some(existing) = list.iter_mut().find(|c| c["type"] == type_) {
        let same = ["status", "reason", "message"]
            .iter()
            .all(|k| existing[*k] == wanted[*k]);
        if same {
            return false;
        }
        *existing = wanted;
        return true;
    }
    if status == "False" {
        return false;
    }
    list.push(wanted);
    true
}

#[cfg(test)]
mod tests;
