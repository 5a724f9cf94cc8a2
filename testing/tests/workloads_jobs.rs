//! The simulated Job, CronJob and TTL-after-finished controllers: Jobs run their pods to
//! completion or to their backoff limit, CronJobs create Jobs on the clock and prune their
//! history, finished Jobs expire.

mod workloads_support;

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kubeward_names::clock::ManualClock;
use kubeward_testing::{ApiServer, PodFault, Workloads};
use serde_json::{Value, json};
use workloads_support::{api, condition, create, get, server, until};

/// A server on a manual clock, and an admin client.
async fn server_on(clock: &ManualClock, workloads: Workloads) -> (ApiServer, kube::Client) {
    let server = ApiServer::builder()
        .clock(Arc::new(clock.clone()))
        .workloads(workloads)
        .start()
        .await
        .expect("server starts");
    let client = server.client().expect("client");
    (server, client)
}

fn job(name: &str, image: &str, completions: i64, parallelism: i64) -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "completions": completions, "parallelism": parallelism,
            "template": {"spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "work", "image": image}]}},
        },
    })
}

async fn list(api: &Api<DynamicObject>) -> Vec<Value> {
    api.list(&ListParams::default())
        .await
        .expect("LIST works")
        .items
        .into_iter()
        .map(|o| serde_json::to_value(o).expect("json"))
        .collect()
}

/// The `(reason, message)` of the events about the object `name`.
async fn events_of(client: &kube::Client, name: &str) -> Vec<(String, String)> {
    let events = api(client, "v1", "Event", "events", "default");
    list(&events)
        .await
        .into_iter()
        .filter(|e| e["involvedObject"]["name"] == name)
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (text("reason"), text("message"))
        })
        .collect()
}

/// Waits for the Job `name` to have a true condition of `type_`.
async fn finished(jobs: &Api<DynamicObject>, name: &str, type_: &str) -> Value {
    until(&format!("{name} to be {type_}"), || async {
        let j = get(jobs, name).await;
        match condition(&j, type_) {
            Some(c) if c["status"] == "True" => Ok(j),
            _ => Err(j["status"].to_string()),
        }
    })
    .await
}

fn condition_types(job: &Value) -> Vec<&str> {
    job["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect()
}

#[tokio::test]
async fn a_job_runs_its_completions_parallelism_at_a_time_and_completes() {
    let (_server, client) = server(Workloads::with_nodes(2)).await;
    let jobs = api(&client, "batch/v1", "Job", "jobs", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&jobs, job("pi", "busybox:1.36", 3, 2)).await;
    let done = finished(&jobs, "pi", "Complete").await;
    let status = &done["status"];
    assert_eq!(status["succeeded"], 3);
    assert!(status["active"].is_null(), "{status}");
    assert_eq!(status["ready"], 0);
    assert_eq!(status["terminating"], 0);
    assert_eq!(status["uncountedTerminatedPods"], json!({}));
    assert!(status["startTime"].is_string() && status["completionTime"].is_string());
    assert_eq!(condition_types(&done), ["SuccessCriteriaMet", "Complete"]);
    let complete = condition(&done, "Complete").unwrap();
    assert_eq!(complete["reason"], "CompletionsReached");
    assert_eq!(
        complete["message"],
        "Reached expected number of succeeded pods"
    );
    assert_eq!(complete["lastTransitionTime"], status["completionTime"]);
    // Its pods: the template's generated labels, owned by the Job, counted and released.
    let uid = done["metadata"]["uid"].as_str().unwrap();
    let all = list(&pods).await;
    assert_eq!(all.len(), 3);
    for p in &all {
        let labels = &p["metadata"]["labels"];
        assert_eq!(labels["batch.kubernetes.io/job-name"], "pi");
        assert_eq!(labels["job-name"], "pi");
        assert_eq!(labels["batch.kubernetes.io/controller-uid"], uid);
        assert_eq!(labels["controller-uid"], uid);
        assert!(p["metadata"]["name"].as_str().unwrap().starts_with("pi-"));
        assert_eq!(p["metadata"]["ownerReferences"][0]["kind"], "Job");
        assert_eq!(p["status"]["phase"], "Succeeded");
        assert!(p["metadata"]["finalizers"].is_null(), "{}", p["metadata"]);
    }
    let events = events_of(&client, "pi").await;
    let created = events
        .iter()
        .filter(|(r, m)| r == "SuccessfulCreate" && m.starts_with("Created pod: pi-"));
    assert_eq!(created.count(), 3, "{events:?}");
    assert!(
        events.contains(&("Completed".into(), "Job completed".into())),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_failing_job_backs_off_then_hits_its_backoff_limit() {
    let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
    let workloads = Workloads::with_nodes(2).fault(PodFault::crash_loop("broken:*"));
    let (_server, client) = server_on(&clock, workloads).await;
    let jobs = api(&client, "batch/v1", "Job", "jobs", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut failing = job("flaky", "broken:1", 1, 1);
    failing["spec"]["backoffLimit"] = json!(1);
    create(&jobs, failing).await;
    until("the first failure to be counted", || async {
        let j = get(&jobs, "flaky").await;
        if j["status"]["failed"] == 1 {
            Ok(())
        } else {
            Err(j["status"].to_string())
        }
    })
    .await;
    // The replacement waits for the 10 s backoff on the clock.
    assert_eq!(list(&pods).await.len(), 1);
    clock.advance(Duration::from_secs(11));
    let failed = finished(&jobs, "flaky", "Failed").await;
    assert_eq!(failed["status"]["failed"], 2);
    assert_eq!(list(&pods).await.len(), 2);
    assert_eq!(condition_types(&failed), ["FailureTarget", "Failed"]);
    let condition = condition(&failed, "Failed").unwrap();
    assert_eq!(condition["reason"], "BackoffLimitExceeded");
    assert_eq!(
        condition["message"],
        "Job has reached the specified backoff limit"
    );
    assert!(failed["status"]["completionTime"].is_null());
    let events = events_of(&client, "flaky").await;
    let limit = (
        "BackoffLimitExceeded".to_string(),
        "Job has reached the specified backoff limit".to_string(),
    );
    assert!(events.contains(&limit), "{events:?}");
}

#[tokio::test]
async fn an_indexed_job_runs_each_index_once() {
    let (_server, client) = server(Workloads::with_nodes(2)).await;
    let jobs = api(&client, "batch/v1", "Job", "jobs", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut indexed = job("shards", "busybox:1.36", 3, 3);
    indexed["spec"]["completionMode"] = json!("Indexed");
    create(&jobs, indexed).await;
    let done = finished(&jobs, "shards", "Complete").await;
    assert_eq!(done["status"]["completedIndexes"], "0-2");
    assert_eq!(done["status"]["succeeded"], 3);
    let mut indexes: Vec<String> = list(&pods)
        .await
        .iter()
        .map(|p| {
            let index = p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
                .as_str()
                .unwrap()
                .to_string();
            assert_eq!(
                p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"],
                index.as_str()
            );
            assert_eq!(p["spec"]["hostname"], format!("shards-{index}"));
            assert!(
                p["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("shards-{index}-"))
            );
            let env = &p["spec"]["containers"][0]["env"][0];
            assert_eq!(env["name"], "JOB_COMPLETION_INDEX");
            index
        })
        .collect();
    indexes.sort();
    assert_eq!(indexes, ["0", "1", "2"]);
}

#[tokio::test]
async fn a_finished_job_is_deleted_after_its_ttl() {
    let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
    let (_server, client) = server_on(&clock, Workloads::with_nodes(2)).await;
    let jobs = api(&client, "batch/v1", "Job", "jobs", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut short = job("once", "busybox:1.36", 1, 1);
    short["spec"]["ttlSecondsAfterFinished"] = json!(60);
    create(&jobs, short).await;
    finished(&jobs, "once", "Complete").await;
    clock.advance(Duration::from_secs(30));
    // Not yet: half the TTL.
    assert!(!get(&jobs, "once").await.is_null());
    clock.advance(Duration::from_secs(31));
    until("the job and its pod to be deleted", || async {
        let (j, p) = (get(&jobs, "once").await, list(&pods).await);
        if j.is_null() && p.is_empty() {
            Ok(())
        } else {
            Err(format!("{j} {p:?}"))
        }
    })
    .await;
}

#[tokio::test]
async fn a_cron_job_creates_jobs_on_schedule_and_prunes_its_history() {
    let clock = ManualClock::new("2026-01-01T00:00:30Z".parse().unwrap());
    let (_server, client) = server_on(&clock, Workloads::with_nodes(2)).await;
    let cron_jobs = api(&client, "batch/v1", "CronJob", "cronjobs", "default");
    let jobs = api(&client, "batch/v1", "Job", "jobs", "default");
    let template = job("unused", "busybox:1.36", 1, 1)["spec"].clone();
    create(
        &cron_jobs,
        json!({
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
            "spec": {"schedule": "*/1 * * * *", "successfulJobsHistoryLimit": 1,
                     "jobTemplate": {"metadata": {"labels": {"app": "tick"}}, "spec": template}},
        }),
    )
    .await;
    // 00:01:00 is minute 29453761 since the epoch.
    let first = "tick-29453761";
    let second = "tick-29453762";
    clock.advance(Duration::from_secs(40));
    let job = finished(&jobs, first, "Complete").await;
    assert_eq!(
        job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
        "2026-01-01T00:01:00Z"
    );
    assert_eq!(job["metadata"]["labels"]["app"], "tick");
    assert_eq!(job["metadata"]["ownerReferences"][0]["kind"], "CronJob");
    let cj = until("the completed job to leave the active list", || async {
        let cj = get(&cron_jobs, "tick").await;
        if cj["status"]["lastSuccessfulTime"].is_string() && cj["status"]["active"].is_null() {
            Ok(cj)
        } else {
            Err(cj["status"].to_string())
        }
    })
    .await;
    assert_eq!(cj["status"]["lastScheduleTime"], "2026-01-01T00:01:00Z");
    clock.advance(Duration::from_secs(60));
    finished(&jobs, second, "Complete").await;
    until("the older job to be pruned", || async {
        let old = get(&jobs, first).await;
        if old.is_null() {
            Ok(())
        } else {
            Err(old["metadata"].to_string())
        }
    })
    .await;
    let events = events_of(&client, "tick").await;
    for wanted in [
        ("SuccessfulCreate", format!("Created job {first}")),
        ("SuccessfulCreate", format!("Created job {second}")),
        (
            "SawCompletedJob",
            format!("Saw completed job: {first}, condition: Complete"),
        ),
        ("SuccessfulDelete", format!("Deleted job {first}")),
    ] {
        assert!(
            events.contains(&(wanted.0.to_string(), wanted.1.clone())),
            "{wanted:?} in {events:?}"
        );
    }
}

#[tokio::test]
async fn a_suspended_job_waits_then_runs_when_resumed() {
    let (_server, client) = server(Workloads::with_nodes(2)).await;
    let jobs = api(&client, "batch/v1", "Job", "jobs", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut suspended = job("later", "busybox:1.36", 1, 1);
    suspended["spec"]["suspend"] = json!(true);
    create(&jobs, suspended).await;
    let j = finished(&jobs, "later", "Suspended").await;
    let c = condition(&j, "Suspended").unwrap();
    assert_eq!(
        (c["reason"].as_str(), c["message"].as_str()),
        (Some("JobSuspended"), Some("Job suspended"))
    );
    assert!(j["status"]["startTime"].is_null());
    assert!(list(&pods).await.is_empty());
    let resume = Patch::Merge(json!({"spec": {"suspend": false}}));
    jobs.patch("later", &PatchParams::default(), &resume)
        .await
        .expect("PATCH works");
    let done = finished(&jobs, "later", "Complete").await;
    let c = condition(&done, "Suspended").unwrap();
    assert_eq!(
        (c["status"].as_str(), c["reason"].as_str()),
        (Some("False"), Some("JobResumed"))
    );
    assert!(done["status"]["startTime"].is_string());
    let events = events_of(&client, "later").await;
    assert!(
        events.contains(&("Suspended".into(), "Job suspended".into())),
        "{events:?}"
    );
    assert!(
        events.contains(&("Resumed".into(), "Job resumed".into())),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_job_past_its_active_deadline_fails_and_its_pods_go() {
    let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
    let workloads = Workloads::with_nodes(2).fault(PodFault::never_ready("stuck:*"));
    let (_server, client) = server_on(&clock, workloads).await;
    let jobs = api(&client, "batch/v1", "Job", "jobs", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut slow = job("slow", "stuck:1", 2, 2);
    slow["spec"]["activeDeadlineSeconds"] = json!(30);
    create(&jobs, slow).await;
    until("two running pods", || async {
        let j = get(&jobs, "slow").await;
        if j["status"]["active"] == 2 {
            Ok(())
        } else {
            Err(j["status"].to_string())
        }
    })
    .await;
    clock.advance(Duration::from_secs(31));
    let failed = finished(&jobs, "slow", "Failed").await;
    assert_eq!(condition_types(&failed), ["FailureTarget", "Failed"]);
    let c = condition(&failed, "Failed").unwrap();
    assert_eq!(c["reason"], "DeadlineExceeded");
    assert_eq!(
        c["message"],
        "Job was active longer than specified deadline"
    );
    assert_eq!(failed["status"]["failed"], 2);
    assert!(failed["status"]["active"].is_null());
    assert!(list(&pods).await.is_empty());
}

#[tokio::test]
async fn a_forbidding_cron_job_skips_a_run_while_one_is_active() {
    let clock = ManualClock::new("2026-01-01T00:00:30Z".parse().unwrap());
    let workloads = Workloads::with_nodes(1).fault(PodFault::never_ready("stuck:*"));
    let (_server, client) = server_on(&clock, workloads).await;
    let cron_jobs = api(&client, "batch/v1", "CronJob", "cronjobs", "default");
    let jobs = api(&client, "batch/v1", "Job", "jobs", "default");
    let template = job("unused", "stuck:1", 1, 1)["spec"].clone();
    create(
        &cron_jobs,
        json!({
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "solo"},
            "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Forbid",
                     "jobTemplate": {"spec": template}},
        }),
    )
    .await;
    clock.advance(Duration::from_secs(40));
    let cj = until("one active job", || async {
        let cj = get(&cron_jobs, "solo").await;
        match cj["status"]["active"].as_array() {
            Some(active) if active.len() == 1 => Ok(cj),
            _ => Err(cj["status"].to_string()),
        }
    })
    .await;
    assert_eq!(cj["status"]["active"][0]["name"], "solo-29453761");
    assert_eq!(cj["status"]["active"][0]["kind"], "Job");
    clock.advance(Duration::from_secs(60));
    until("the next run to be skipped", || async {
        let events = events_of(&client, "solo").await;
        let skipped = (
            "JobAlreadyActive".to_string(),
            "Not starting job because prior execution is running and concurrency policy is Forbid"
                .to_string(),
        );
        if events.contains(&skipped) {
            Ok(())
        } else {
            Err(format!("{events:?}"))
        }
    })
    .await;
    assert_eq!(list(&jobs).await.len(), 1);
}
