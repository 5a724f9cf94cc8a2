//! batch/v1 Jobs and CronJobs on the in-process API server through a real `kube::Client`:
//! defaults read back (a Job's generated selector and template labels), upstream's refusals
//! (restart policy, immutable fields, indexed Jobs, schedules and time zones), generation,
//! status vs main writes and a Job's status rules, the `status.successful` field selector,
//! discovery and `kubectl get` columns.

mod apiserver_support;

use apiserver_support::{Object, assert_invalid, create, default_api as api, refusal, with_spec};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use kube::api::{Api, ListParams};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

/// A Job `w` running one container that restarts `Never`, with `spec` merged into its spec.
fn job(spec: Value) -> Value {
    with_spec(
        json!({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "w"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "work", "image": "busybox:1.36"}]}}}}),
        spec,
    )
}

/// A CronJob `w` running [`job`]'s template every five minutes, with `spec` merged into its
/// spec.
fn cron_job(spec: Value) -> Value {
    with_spec(
        json!({
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "w"},
        "spec": {"schedule": "*/5 * * * *",
                 "jobTemplate": {"spec": job(json!({}))["spec"].clone()}}}),
        spec,
    )
}

/// A merge patch of `w`.
async fn merge<K: Object>(api: &Api<K>, patch: Value) -> Result<Value, kube::Error> {
    apiserver_support::merge(api, "w", patch).await
}

/// A merge patch of `w`'s status.
async fn merge_status<K: Object>(api: &Api<K>, patch: Value) -> Result<Value, kube::Error> {
    apiserver_support::merge_status(api, "w", patch).await
}

/// Merges `pod_spec` into `w`'s pod template, which must be refused as invalid (422): the
/// message.
async fn refused_template(jobs: &Api<Job>, pod_spec: Value) -> String {
    let patch = json!({"spec": {"template": {"spec": pod_spec}}});
    let (code, message) = refusal(merge(jobs, patch).await);
    assert_eq!(code, 422);
    message
}

#[tokio::test]
async fn a_job_reads_back_with_its_defaults_and_generated_selector() {
    let server = ApiServer::start().await.unwrap();
    let jobs = api::<Job>(&server);
    let created = create(&jobs, job(json!({}))).await.unwrap();
    let uid = created["metadata"]["uid"].as_str().unwrap().to_owned();
    let spec = &created["spec"];
    assert_eq!(spec["completions"], 1);
    assert_eq!(spec["parallelism"], 1);
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["manualSelector"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    let generated = json!({"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid,
        "batch.kubernetes.io/job-name": "w", "job-name": "w"});
    assert_eq!(spec["template"]["metadata"]["labels"], generated);
    // A Job without labels of its own reads back with its template's.
    assert_eq!(created["metadata"]["labels"], generated);
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(created["status"], json!({}));

    // An indexed Job with a per-index backoff limit: backoffLimit is MaxInt32.
    let mut indexed = job(json!({"completionMode": "Indexed", "completions": 3,
        "backoffLimitPerIndex": 1, "podFailurePolicy": {"rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}}));
    indexed["metadata"]["name"] = json!("indexed");
    let created = create(&jobs, indexed).await.unwrap();
    assert_eq!(created["spec"]["backoffLimit"], 2147483647);
    assert_eq!(created["spec"]["parallelism"], 1);
    assert_eq!(created["spec"]["podReplacementPolicy"], "Failed");
    assert_eq!(
        created["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
        "True"
    );
}

#[tokio::test]
async fn a_jobs_refusals_carry_upstreams_messages() {
    let server = ApiServer::start().await.unwrap();
    let jobs = api::<Job>(&server);
    let always = job(json!({"template": {"spec": {"restartPolicy": "Always",
        "containers": [{"name": "work", "image": "busybox"}]}}}));
    assert_invalid(
        create(&jobs, always).await,
        "Job.batch \"w\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"",
    );
    let indexed = job(json!({"completionMode": "Indexed", "parallelism": -1}));
    assert_eq!(
        refusal(create(&jobs, indexed).await).1,
        "Job.batch \"w\" is invalid: [spec.parallelism: Invalid value: -1: must be greater than or equal to 0, spec.completions: Required value: when completion mode is Indexed]"
    );
    let manual = job(json!({"manualSelector": true,
        "selector": {"matchLabels": {"app": "other"}},
        "template": {"metadata": {"labels": {"app": "w"}}, "spec": {"restartPolicy": "Never",
            "containers": [{"name": "work", "image": "busybox"}]}}}));
    assert_eq!(
        refusal(create(&jobs, manual).await).1,
        "Job.batch \"w\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"w\"}: `selector` does not match template `labels`"
    );

    create(&jobs, job(json!({}))).await.unwrap();
    assert_eq!(
        refusal(merge(&jobs, json!({"spec": {"completions": 3}})).await).1,
        "Job.batch \"w\" is invalid: spec.completions: Invalid value: 3: field is immutable"
    );
    let message = refused_template(
        &jobs,
        json!({"containers": [
        {"name": "work", "image": "busybox:1.37"}]}),
    )
    .await;
    assert!(
        message.starts_with("Job.batch \"w\" is invalid: spec.template: Invalid value: ")
            && message.ends_with(": field is immutable"),
        "{message}"
    );
}

#[tokio::test]
async fn generation_counts_spec_changes_and_status_is_written_apart() {
    let server = ApiServer::start().await.unwrap();
    let jobs = api::<Job>(&server);
    create(&jobs, job(json!({}))).await.unwrap();
    let labelled = merge(&jobs, json!({"metadata": {"labels": {"tier": "batch"}}}))
        .await
        .unwrap();
    assert_eq!(labelled["metadata"]["generation"], 1);
    let scaled = merge(
        &jobs,
        json!({"spec": {"parallelism": 2}, "status": {"active": 5}}),
    )
    .await
    .unwrap();
    assert_eq!(scaled["metadata"]["generation"], 2);
    assert_eq!(scaled["status"], json!({}), "a main write keeps the status");

    let status = merge_status(
        &jobs,
        json!({"spec": {"parallelism": 9},
            "status": {"active": 1, "startTime": "2026-01-01T00:00:00Z"}}),
    )
    .await
    .unwrap();
    assert_eq!(status["status"]["active"], 1);
    assert_eq!(
        status["spec"]["parallelism"], 2,
        "a status write keeps the spec"
    );
    assert_eq!(status["metadata"]["generation"], 2);

    assert_eq!(
        refusal(merge_status(&jobs, json!({"status": {"ready": 2}})).await).1,
        "Job.batch \"w\" is invalid: status.ready: Invalid value: 2: cannot set more ready pods than active"
    );
    assert_eq!(
        refusal(
            merge_status(
                &jobs,
                json!({"status": {"conditions": [{"type": "Complete", "status": "True"}]}})
            )
            .await
        )
        .1,
        "Job.batch \"w\" is invalid: [status.completionTime: Required value: completionTime is required for Complete jobs, status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition, status.active: Invalid value: 1: active>0 is invalid for finished job]"
    );
    merge_status(
        &jobs,
        json!({"status": {"active": 0, "succeeded": 1, "completionTime": "2026-01-01T00:01:05Z",
            "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                           {"type": "Complete", "status": "True"}]}}),
    )
    .await
    .unwrap();

    // `kubectl get jobs`, and the field selector upstream supports.
    let client = server.client().unwrap();
    apiserver_support::assert_table(
        &client,
        "/apis/batch/v1/namespaces/default/jobs",
        "Name, Status, Completions, Duration, Age, Containers, Images, Selector",
        &[(1, json!("Complete")), (2, json!("1/1")), (3, json!("65s"))],
    )
    .await;
    let done = jobs
        .list(&ListParams::default().fields("status.successful=1"))
        .await
        .unwrap();
    assert_eq!(done.items.len(), 1);
    let pending = jobs
        .list(&ListParams::default().fields("status.successful=0"))
        .await
        .unwrap();
    assert!(pending.items.is_empty());
}

#[tokio::test]
async fn a_cron_job_reads_back_with_its_defaults_and_refuses_bad_schedules() {
    let server = ApiServer::start().await.unwrap();
    let cron_jobs = api::<CronJob>(&server);
    let created = create(&cron_jobs, cron_job(json!({"timeZone": "Europe/Berlin"})))
        .await
        .unwrap();
    let spec = &created["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["successfulJobsHistoryLimit"], 3);
    assert_eq!(spec["failedJobsHistoryLimit"], 1);
    // The job template is not a Job: no completions, no generated selector.
    assert!(spec["jobTemplate"]["spec"]["completions"].is_null());
    assert!(spec["jobTemplate"]["spec"]["selector"].is_null());

    let refused = [
        (
            json!({"schedule": "*/5 * * *"}),
            "spec.schedule: Invalid value: \"*/5 * * *\": expected exactly 5 fields, found 4: [*/5 * * *]",
        ),
        (
            json!({"schedule": "60 * * * *"}),
            "spec.schedule: Invalid value: \"60 * * * *\": end of range (60) above maximum (59): 60",
        ),
        (
            json!({"schedule": "TZ=UTC 0 * * * *"}),
            "spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ),
        (
            json!({"timeZone": "Mars/Base"}),
            "spec.timeZone: Invalid value: \"Mars/Base\": unknown time zone Mars/Base",
        ),
        (
            json!({"concurrencyPolicy": "Sometimes"}),
            "spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
        ),
    ];
    for (spec, message) in refused {
        let mut object = cron_job(spec);
        object["metadata"]["name"] = json!("bad");
        assert_invalid(
            create(&cron_jobs, object).await,
            &format!("CronJob.batch \"bad\" is invalid: {message}"),
        );
    }

    let suspended = merge(&cron_jobs, json!({"spec": {"suspend": true}}))
        .await
        .unwrap();
    assert_eq!(suspended["metadata"]["generation"], 2);
    let status = merge_status(
        &cron_jobs,
        json!({"spec": {"schedule": "@daily"}, "status": {
            "active": [{"apiVersion": "batch/v1", "kind": "Job", "name": "w-1", "namespace": "default"}]}}),
    )
    .await
    .unwrap();
    assert_eq!(status["spec"]["schedule"], "*/5 * * * *");
    apiserver_support::assert_table(
        &server.client().unwrap(),
        "/apis/batch/v1/namespaces/default/cronjobs",
        "Name, Schedule, Timezone, Suspend, Active, Last Schedule, Age, Containers, Images, Selector",
        &[
            (1, json!("*/5 * * * *")),
            (2, json!("Europe/Berlin")),
            (3, json!("True")),
            (4, json!(1)),
            (5, json!("<none>")),
        ],
    )
    .await;
}

#[tokio::test]
async fn discovery_lists_jobs_and_cron_jobs() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let request = http::Request::get("/apis/batch/v1")
        .body(Vec::new())
        .unwrap();
    let list: Value = client.request(request).await.unwrap();
    let resource = |name: &str| {
        apiserver_support::discovered(&list, name).unwrap_or_else(|| panic!("{name} in {list}"))
    };
    assert_eq!(resource("cronjobs")["shortNames"], json!(["cj"]));
    assert!(resource("jobs")["shortNames"].is_null());
    assert_eq!(resource("jobs")["categories"], json!(["all"]));
    assert_eq!(resource("cronjobs")["categories"], json!(["all"]));
    assert_eq!(resource("jobs/status")["kind"], "Job");
    assert_eq!(resource("cronjobs/status")["kind"], "CronJob");
}

#[tokio::test]
async fn kubectl_gets_and_explains_jobs_and_cron_jobs() {
    let server = ApiServer::start().await.unwrap();
    create(&api::<Job>(&server), job(json!({"parallelism": 3})))
        .await
        .unwrap();
    create(&api::<CronJob>(&server), cron_job(json!({})))
        .await
        .unwrap();
    let (k, _) = apiserver_support::kubectl_for(&server);
    let (manual, get, all, explain) = tokio::task::spawn_blocking(move || {
        (
            // A Job made from the CronJob's template, as `kubectl create job --from` does.
            k.ok(&["create", "job", "manual", "--from=cronjob/w"]),
            k.ok(&["get", "jobs,cj", "-o", "wide"]),
            k.ok(&["get", "all"]),
            k.ok(&["explain", "cronjob.spec.jobTemplate.spec.podFailurePolicy"]),
        )
    })
    .await
    .unwrap();
    assert!(manual.contains("job.batch/manual created"), "{manual}");
    let from_cron = api::<Job>(&server).get("manual").await.unwrap();
    assert_eq!(
        from_cron.metadata.owner_references.unwrap()[0].kind,
        "CronJob"
    );
    assert_eq!(from_cron.spec.unwrap().backoff_limit, Some(6));
    assert!(get.contains("COMPLETIONS"), "{get}");
    assert!(get.contains("job.batch/w"), "{get}");
    // A work queue (parallelism without completions) counts to one of its parallelism.
    assert!(get.contains("0/1 of 3"), "{get}");
    assert!(get.contains("cronjob.batch/w"), "{get}");
    assert!(get.contains("*/5 * * * *"), "{get}");
    assert!(get.contains("batch.kubernetes.io/controller-uid="), "{get}");
    assert!(
        all.contains("job.batch/w") && all.contains("cronjob.batch/w"),
        "{all}"
    );
    assert!(explain.contains("PodFailurePolicy"), "{explain}");
}

#[tokio::test]
async fn a_suspended_job_that_never_started_may_be_rescheduled() {
    let server = ApiServer::start().await.unwrap();
    let jobs = api::<Job>(&server);
    create(&jobs, job(json!({"suspend": true}))).await.unwrap();
    let placed = merge(
        &jobs,
        json!({"spec": {"template": {"spec": {"nodeSelector": {"pool": "batch"},
            "tolerations": [{"key": "batch", "operator": "Exists"}]}}}}),
    )
    .await
    .unwrap();
    assert_eq!(
        placed["spec"]["template"]["spec"]["nodeSelector"],
        json!({"pool": "batch"})
    );
    assert_eq!(placed["metadata"]["generation"], 2);
    // Its containers stay as they are; once resumed, so does its placement.
    let message = refused_template(
        &jobs,
        json!({"containers": [
        {"name": "work", "image": "busybox:1.37"}]}),
    )
    .await;
    assert!(message.ends_with(": field is immutable"), "{message}");
    merge(&jobs, json!({"spec": {"suspend": false}}))
        .await
        .unwrap();
    let message = refused_template(&jobs, json!({"nodeSelector": {"pool": "other"}})).await;
    assert!(
        message.starts_with("Job.batch \"w\" is invalid: spec.template: Invalid value: "),
        "{message}"
    );
}

#[tokio::test]
async fn a_job_deleted_without_a_policy_orphans_its_pods_then_goes() {
    let server = ApiServer::start().await.unwrap();
    let jobs = api::<Job>(&server);
    create(&jobs, job(json!({}))).await.unwrap();
    let deleting = jobs.delete("w", &Default::default()).await.unwrap();
    let deleting = deleting.left().expect("the Job, deleting");
    assert_eq!(
        deleting.metadata.finalizers,
        Some(vec!["orphan".to_owned()])
    );
    assert!(deleting.metadata.deletion_timestamp.is_some());
    // The garbage collector orphans the (here absent) pods, then the Job goes.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while jobs.get_opt("w").await.unwrap().is_some() {
        assert!(tokio::time::Instant::now() < deadline, "the Job stays");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
