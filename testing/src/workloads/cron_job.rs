//! The CronJob controller (`pkg/controller/cronjob/cronjob_controllerv2.go`, `utils.go`): at
//! each time its schedule names (robfig/cron's, [`crate::validation::cron`], in `timeZone`), on
//! the server's clock, a CronJob creates the Job `<cronjob>-<scheduled time in minutes since
//! the epoch>` from its `jobTemplate`, annotated `batch.kubernetes.io/cronjob-scheduled-timestamp`,
//! unless `suspend`ed, too late for `startingDeadlineSeconds`, or (`concurrencyPolicy: Forbid`)
//! one is still active; `Replace` deletes the active ones first. It tracks `status.active`,
//! `lastScheduleTime` and `lastSuccessfulTime`, deletes finished Jobs beyond
//! `successfulJobsHistoryLimit`/`failedJobsHistoryLimit` (background propagation), records
//! upstream's events (`SuccessfulCreate` "Created job x", `SawCompletedJob`,
//! `SuccessfulDelete`, `MissSchedule`, `JobAlreadyActive`, …), and asks to be synced again at
//! its next schedule time (plus upstream's 100 ms).

use std::collections::BTreeSet;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::context::{CRON_JOBS, JOBS, controller_ref, is_deleting};
use super::job::finished_condition;
use super::{Controller, Ctx, Keys};
use crate::go::fmt::go_quote;
use crate::object::rfc3339;
use crate::registry::State;
use crate::store::{Change, ObjectKey, StorageKey};
use crate::validation::cron::{self, Schedule};

const MANAGER: &str = "kube-controller-manager";
const COMPONENT: &str = "cronjob-controller";
const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";
/// `nextScheduleDelta`.
const NEXT_SCHEDULE_DELTA: SignedDuration = SignedDuration::from_millis(100);

/// The controller: its keys are CronJobs.
#[derive(Debug, Default)]
pub(crate) struct CronJobs;

impl Controller for CronJobs {
    fn primary(&self) -> StorageKey {
        CRON_JOBS.storage()
    }

    fn observe(&mut self, change: &Change, _state: &State, keys: &mut Keys) {
        let meta = &change.object["metadata"];
        let namespace = meta["namespace"].as_str().unwrap_or_default().to_string();
        if change.storage == CRON_JOBS.storage() {
            keys.insert((namespace, meta["name"].as_str().unwrap_or_default().into()));
        } else if change.storage == JOBS.storage()
            && let Some(owner) = meta["ownerReferences"].as_array().and_then(|r| {
                r.iter()
                    .find(|r| r["controller"] == true && r["kind"] == "CronJob")
            })
        {
            keys.insert((namespace, owner["name"].as_str().unwrap_or_default().into()));
        }
    }

    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp> {
        let stored = ctx.get(CRON_JOBS, &key.0, &key.1)?;
        let uid = stored["metadata"]["uid"].as_str().unwrap_or_default();
        let jobs = ctx.owned(JOBS, &key.0, uid);
        let mut cj = stored.clone();
        let cleaned = cleanup_finished_jobs(ctx, &mut cj, &jobs);
        let (requeue, updated) = sync_cron_job(ctx, &mut cj, &jobs);
        if cleaned || updated {
            let mut status = cj["status"].clone();
            if status["active"].as_array().is_some_and(Vec::is_empty) {
                status.as_object_mut().map(|s| s.remove("active"));
            }
            let _ = ctx.update_status(MANAGER, CRON_JOBS, &stored, status);
        }
        requeue
    }
}

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

fn uid(object: &Value) -> &str {
    object["metadata"]["uid"].as_str().unwrap_or_default()
}

fn time(value: &Value) -> Option<Timestamp> {
    value.as_str()?.parse().ok()
}

fn event(ctx: &mut Ctx<'_>, cj: &Value, type_: &str, reason: &str, message: String) {
    ctx.event(COMPONENT, cj, "CronJob", type_, reason, message);
}

fn in_active_list(cj: &Value, uid: &str) -> bool {
    active_list(cj).iter().any(|r| r["uid"] == uid)
}

fn active_list(cj: &Value) -> Vec<Value> {
    cj["status"]["active"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn delete_from_active_list(cj: &mut Value, uid: &str) {
    let active: Vec<Value> = active_list(cj)
        .into_iter()
        .filter(|r| r["uid"] != uid)
        .collect();
    cj["status"]["active"] = Value::Array(active);
}

/// The active Jobs and `lastSuccessfulTime` brought up to date, then (unless suspended or being
/// deleted) the Job of the most recent unmet schedule time created. Returns the next sync and
/// whether the status changed.
/// When a sync whose write was refused runs again (upstream returns the error to its rate-limited
/// queue): a second later on the clock.
fn retry(now: Timestamp) -> Timestamp {
    now + jiff::SignedDuration::from_secs(1)
}

fn sync_cron_job(ctx: &mut Ctx<'_>, cj: &mut Value, jobs: &[Value]) -> (Option<Timestamp>, bool) {
    let now = ctx.now();
    let mut updated = reconcile_jobs(ctx, cj, jobs);
    if is_deleting(cj) {
        return (None, updated);
    }
    if let Some(zone) = cj["spec"]["timeZone"].as_str()
        && let Err(err) = cron::load_location(zone)
    {
        let message = format!("invalid timeZone: {}: {err}", go_quote(zone));
        event(ctx, cj, "Warning", "UnknownTimeZone", message);
        return (None, updated);
    }
    if cj["spec"]["suspend"] == true {
        return (None, updated);
    }
    let spec = format_schedule(ctx, cj);
    let schedule = match cron::parse(&spec) {
        Ok(schedule) => schedule,
        Err(err) => {
            let raw = cj["spec"]["schedule"].as_str().unwrap_or_default();
            let message = format!("unparseable schedule: {} : {err}", go_quote(raw));
            event(ctx, cj, "Warning", "UnparseableSchedule", message);
            return (None, updated);
        }
    };
    let next = |cj: &Value| next_schedule_time_after(cj, now, &schedule);
    let scheduled = match next_schedule_time(ctx, cj, now, &schedule) {
        Err(err) => {
            let raw = cj["spec"]["schedule"].as_str().unwrap_or_default();
            event(
                ctx,
                cj,
                "Warning",
                "InvalidSchedule",
                format!("invalid schedule: {raw} : {err}"),
            );
            return (None, updated);
        }
        Ok(None) => return (next(cj), updated),
        Ok(Some(scheduled)) => scheduled,
    };
    if let Some(deadline) = cj["spec"]["startingDeadlineSeconds"].as_i64()
        && scheduled + SignedDuration::from_secs(deadline) < now
    {
        let at = scheduled.strftime("%a, %d %b %Y %H:%M:%S +0000");
        let message = format!("Missed scheduled time to start a job: {at}");
        event(ctx, cj, "Warning", "MissSchedule", message);
        return (next(cj), updated);
    }
    let job_name = job_name(cj, scheduled);
    let processed = active_list(cj)
        .iter()
        .any(|r| r["name"] == job_name.as_str())
        || time(&cj["status"]["lastScheduleTime"]) == Some(scheduled);
    if processed {
        return (next(cj), updated);
    }
    let policy = cj["spec"]["concurrencyPolicy"].as_str().unwrap_or("Allow");
    if policy == "Forbid" && !active_list(cj).is_empty() {
        let message =
            "Not starting job because prior execution is running and concurrency policy is Forbid";
        event(ctx, cj, "Normal", "JobAlreadyActive", message.into());
        return (next(cj), updated);
    }
    if policy == "Replace" {
        for reference in active_list(cj) {
            let namespace = reference["namespace"].as_str().unwrap_or_default();
            let Some(job) = ctx.get(
                JOBS,
                namespace,
                reference["name"].as_str().unwrap_or_default(),
            ) else {
                let message = format!(
                    "Get job: jobs.batch {} not found",
                    go_quote(reference["name"].as_str().unwrap_or_default())
                );
                event(ctx, cj, "Warning", "FailedGet", message);
                return (Some(retry(now)), updated);
            };
            if !delete_job(ctx, cj, &job) {
                return (Some(retry(now)), updated);
            }
            updated = true;
        }
    }
    let Some(job) = create_job(ctx, cj, scheduled) else {
        return (Some(retry(now)), updated);
    };
    let mut active = active_list(cj);
    active.push(json!({
        "kind": "Job", "namespace": job["metadata"]["namespace"], "name": job["metadata"]["name"],
        "uid": job["metadata"]["uid"], "apiVersion": "batch/v1",
        "resourceVersion": job["metadata"]["resourceVersion"],
    }));
    cj["status"]["active"] = Value::Array(active);
    cj["status"]["lastScheduleTime"] = json!(rfc3339(scheduled));
    (next(cj), true)
}

/// The first part of `syncCronJob`: finished Jobs leave the active list (`SawCompletedJob`),
/// the latest completion is `lastSuccessfulTime`, Jobs gone are dropped (`MissingJob`), and
/// unknown running ones reported (`UnexpectedJob`).
fn reconcile_jobs(ctx: &mut Ctx<'_>, cj: &mut Value, jobs: &[Value]) -> bool {
    let mut updated = false;
    let children: BTreeSet<&str> = jobs.iter().map(uid).collect();
    for job in jobs {
        let found = in_active_list(cj, uid(job));
        let finished = finished_condition(job);
        match finished {
            None if !found => {
                let message = format!(
                    "Saw a job that the controller did not create or forgot: {}",
                    name(job)
                );
                event(ctx, cj, "Warning", "UnexpectedJob", message);
            }
            None => {}
            Some(condition) => {
                if found {
                    delete_from_active_list(cj, uid(job));
                    let type_ = condition["type"].as_str().unwrap_or_default();
                    let message = format!("Saw completed job: {}, condition: {type_}", name(job));
                    event(ctx, cj, "Normal", "SawCompletedJob", message);
                    updated = true;
                }
                let completed = time(&job["status"]["completionTime"]);
                if condition["type"] == "Complete"
                    && let Some(completed) = completed
                    && time(&cj["status"]["lastSuccessfulTime"]).is_none_or(|last| completed > last)
                {
                    cj["status"]["lastSuccessfulTime"] = json!(rfc3339(completed));
                    updated = true;
                }
            }
        }
    }
    for reference in active_list(cj) {
        let reference_uid = reference["uid"].as_str().unwrap_or_default();
        if children.contains(reference_uid) {
            continue;
        }
        let namespace = reference["namespace"].as_str().unwrap_or_default();
        let job_name = reference["name"].as_str().unwrap_or_default();
        if ctx.get(JOBS, namespace, job_name).is_none() {
            event(
                ctx,
                cj,
                "Normal",
                "MissingJob",
                format!("Active job went missing: {job_name}"),
            );
            delete_from_active_list(cj, reference_uid);
            updated = true;
        }
    }
    updated
}

/// `getJobFromTemplate2` created; `None` when refused (`FailedCreate`) or when a Job of that
/// name already exists (not ours, or already active).
fn create_job(ctx: &mut Ctx<'_>, cj: &Value, scheduled: Timestamp) -> Option<Value> {
    let namespace = cj["metadata"]["namespace"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let template = &cj["spec"]["jobTemplate"];
    let mut annotations = template["metadata"]["annotations"].clone();
    if !annotations.is_object() {
        annotations = json!({});
    }
    let zone = cron::time_zone(cj["spec"]["timeZone"].as_str().unwrap_or_default());
    annotations[SCHEDULED_TIMESTAMP] = json!(go_rfc3339(&scheduled.to_zoned(zone)));
    let name = job_name(cj, scheduled);
    let mut metadata = json!({
        "name": name, "namespace": namespace, "annotations": annotations,
        "ownerReferences": [controller_ref(cj, "batch/v1", "CronJob")],
    });
    if template["metadata"]["labels"]
        .as_object()
        .is_some_and(|l| !l.is_empty())
    {
        metadata["labels"] = template["metadata"]["labels"].clone();
    }
    let body = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
                      "spec": template["spec"]});
    match ctx.create(MANAGER, JOBS, body) {
        Ok(job) => {
            event(
                ctx,
                cj,
                "Normal",
                "SuccessfulCreate",
                format!("Created job {name}"),
            );
            Some(Arc::unwrap_or_clone(job))
        }
        Err(err) if err.code == 409 => {
            let job = ctx.get(JOBS, &namespace, &name)?;
            let ours = super::context::controller_uid(&job) == Some(uid(cj));
            (ours && !in_active_list(cj, uid(&job))).then_some(job)
        }
        Err(err) => {
            event(
                ctx,
                cj,
                "Warning",
                "FailedCreate",
                format!("Error creating job: {}", err.message),
            );
            None
        }
    }
}

/// `<cronjob>-<scheduled time in minutes since the epoch>`.
fn job_name(cj: &Value, scheduled: Timestamp) -> String {
    format!("{}-{}", name(cj), scheduled.as_second().div_euclid(60))
}

/// Go's `time.RFC3339` of a zoned time (`Z` for a zero offset).
fn go_rfc3339(at: &jiff::Zoned) -> String {
    if at.offset().seconds() == 0 {
        at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    } else {
        at.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
    }
}

/// `formatSchedule`: the schedule, prefixed `TZ=<timeZone>` (a `TZ` of the schedule's own is
/// reported `UnsupportedSchedule` and kept).
fn format_schedule(ctx: &mut Ctx<'_>, cj: &Value) -> String {
    let schedule = cj["spec"]["schedule"].as_str().unwrap_or_default();
    if schedule.contains("TZ") {
        let message = format!(
            "CRON_TZ or TZ used in schedule {} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
            go_quote(schedule)
        );
        event(ctx, cj, "Warning", "UnsupportedSchedule", message);
        return schedule.to_string();
    }
    match cj["spec"]["timeZone"].as_str() {
        Some(zone) if cron::load_location(zone).is_ok() => format!("TZ={zone} {schedule}"),
        _ => schedule.to_string(),
    }
}

/// How many schedule times were missed (`missedSchedulesType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missed {
    None,
    Few,
    Many,
}

/// `mostRecentScheduleTime`: the earliest time considered, the most recent schedule time not
/// after `now` (if any), how many were missed; `Err` for a schedule that (nearly) never fires.
fn most_recent_schedule_time(
    cj: &Value,
    now: Timestamp,
    schedule: &Schedule,
    include_starting_deadline: bool,
) -> (Timestamp, Result<(Option<Timestamp>, Missed), String>) {
    let mut earliest = time(&cj["metadata"]["creationTimestamp"]).unwrap_or(now);
    if let Some(last) = time(&cj["status"]["lastScheduleTime"]) {
        earliest = last;
    }
    if include_starting_deadline
        && let Some(seconds) = cj["spec"]["startingDeadlineSeconds"].as_i64()
    {
        earliest = earliest.max(now - SignedDuration::from_secs(seconds));
    }
    let too_close = || "time difference between two schedules is less than 1 second".to_string();
    let Some(t1) = schedule.next(earliest) else {
        return (earliest, Err(too_close()));
    };
    if now < t1 {
        return (earliest, Ok((None, Missed::None)));
    }
    let Some(t2) = schedule.next(t1) else {
        return (earliest, Err(too_close()));
    };
    if now < t2 {
        return (earliest, Ok((Some(t1), Missed::None)));
    }
    let between = t2
        .duration_since(t1)
        .round(jiff::Unit::Second)
        .map_or(0, |d| d.as_secs());
    if between < 1 {
        return (earliest, Err(too_close()));
    }
    let elapsed = now.duration_since(t1).as_secs();
    let missed = elapsed / between + 1;
    let potential_earliest = t1 + SignedDuration::from_secs((missed - 2) * between);
    let mut most_recent = None;
    let mut t = schedule.next(potential_earliest);
    while let Some(at) = t.filter(|at| *at <= now) {
        most_recent = Some(at);
        t = schedule.next(at);
    }
    let missed = if missed > 100 {
        Missed::Many
    } else {
        Missed::Few
    };
    (earliest, Ok((most_recent, missed)))
}

/// `nextScheduleTime`: the schedule time to run now, if any (`TooManyMissedTimes` reported).
fn next_schedule_time(
    ctx: &mut Ctx<'_>,
    cj: &Value,
    now: Timestamp,
    schedule: &Schedule,
) -> Result<Option<Timestamp>, String> {
    let (_, result) = most_recent_schedule_time(cj, now, schedule, true);
    let (most_recent, missed) = result?;
    let Some(most_recent) = most_recent.filter(|t| *t <= now) else {
        return Ok(None);
    };
    if missed == Missed::Many {
        let message = "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew";
        event(ctx, cj, "Warning", "TooManyMissedTimes", message.into());
    }
    Ok(Some(most_recent))
}

/// `nextScheduleTimeDuration` as a time on the clock: the schedule time after the most recent
/// one, plus 100 ms.
fn next_schedule_time_after(cj: &Value, now: Timestamp, schedule: &Schedule) -> Option<Timestamp> {
    let (earliest, result) = most_recent_schedule_time(cj, now, schedule, false);
    let most_recent = match result {
        Err(_) => now,
        Ok((Some(t), _)) => t,
        Ok((None, Missed::None)) => earliest,
        Ok((None, _)) => now,
    };
    schedule.next(most_recent).map(|t| t + NEXT_SCHEDULE_DELTA)
}

/// `cleanupFinishedJobs`: the oldest finished Jobs beyond the history limits deleted.
fn cleanup_finished_jobs(ctx: &mut Ctx<'_>, cj: &mut Value, jobs: &[Value]) -> bool {
    let spec = cj["spec"].clone();
    let mut updated = false;
    for (type_, limit) in [
        ("Complete", "successfulJobsHistoryLimit"),
        ("Failed", "failedJobsHistoryLimit"),
    ] {
        let Some(limit) = spec[limit].as_i64() else {
            continue;
        };
        let mut finished: Vec<&Value> = jobs
            .iter()
            .filter(|j| finished_condition(j).is_some_and(|c| c["type"] == type_))
            .collect();
        let excess = usize::try_from(i64::try_from(finished.len()).unwrap_or_default() - limit)
            .unwrap_or_default();
        if excess == 0 {
            continue;
        }
        // `byJobStartTime`: started first, then by name; not started last.
        finished.sort_by_key(|j| {
            (
                time(&j["status"]["startTime"]).is_none(),
                time(&j["status"]["startTime"]),
                name(j).to_string(),
            )
        });
        for job in finished.into_iter().take(excess) {
            updated |= delete_job(ctx, cj, job);
        }
    }
    updated
}

/// `deleteJob`: deleted with background propagation, out of the active list.
fn delete_job(ctx: &mut Ctx<'_>, cj: &mut Value, job: &Value) -> bool {
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or_default();
    let options = json!({"propagationPolicy": "Background"});
    match ctx.delete(MANAGER, JOBS, namespace, name(job), &options) {
        Ok(_) => {
            delete_from_active_list(cj, uid(job));
            event(
                ctx,
                cj,
                "Normal",
                "SuccessfulDelete",
                format!("Deleted job {}", name(job)),
            );
            true
        }
        Err(err) => {
            event(
                ctx,
                cj,
                "Warning",
                "FailedDelete",
                format!("Deleted job: {}", err.message),
            );
            false
        }
    }
}

#[cfg(test)]
mod tests;
