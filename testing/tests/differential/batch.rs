//! batch/v1 Jobs and CronJobs: defaults read back (a Job's completions, parallelism,
//! backoffLimit, generated selector and template labels; a CronJob's policy and history
//! limits), each rule family (restart policy, counts, indexed Jobs, pod failure and success
//! policies, managedBy, schedules, time zones, job templates), immutable fields, generation,
//! status vs main writes and a Job's status rules, strategic merge patches and server-side
//! apply of containers, tables, field selectors and discovery; real-world manifests (the pi Job
//! of the Kubernetes docs, a nightly database backup CronJob).

use serde_json::{Value, json};

use crate::corpus::{APPLY, Case, Resource, SMP, Step, delete, get, merge, patch, post, put};

/// One of the kinds: its resource and a valid object `w` of it.
#[derive(Clone, Copy)]
struct Kind {
    kind: &'static str,
    plural: &'static str,
}

const JOB: Kind = Kind {
    kind: "Job",
    plural: "jobs",
};
const CRON: Kind = Kind {
    kind: "CronJob",
    plural: "cronjobs",
};

impl Resource for Kind {
    fn collection(self) -> String {
        format!("/apis/batch/v1/namespaces/NS/{}", self.plural)
    }

    /// A valid object `w`, with `extra` merged in.
    fn object(self, extra: Value) -> Value {
        let mut object = if self.kind == "Job" {
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "w"},
                   "spec": {"template": Self::template()}})
        } else {
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "w"},
                   "spec": {"schedule": "*/5 * * * *",
                            "jobTemplate": {"spec": {"template": Self::template()}}}})
        };
        merge(&mut object, extra);
        object
    }
}

impl Kind {
    /// The pod template every object runs: one container `work`, restarting `Never`.
    fn template() -> Value {
        json!({"spec": {"restartPolicy": "Never",
                        "containers": [{"name": "work", "image": "busybox:1.36",
                                        "command": ["sh", "-c", "echo done"]}]}})
    }

    /// `object` with its job spec's fields `extra` merged in (a CronJob's job template's).
    fn with_spec(self, extra: Value) -> Value {
        if self.kind == "Job" {
            self.object(json!({"spec": extra}))
        } else {
            self.object(json!({"spec": {"jobTemplate": {"spec": extra}}}))
        }
    }

    /// `object` with its pod spec's fields `extra` merged in.
    fn with_pod(self, extra: Value) -> Value {
        self.with_spec(json!({"template": {"spec": extra}}))
    }
}

/// The pi Job of the Kubernetes docs.
fn pi() -> Value {
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "w"},
        "spec": {"backoffLimit": 4, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "pi", "image": "perl:5.34.0",
                            "command": ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]}]}}}})
}

/// A nightly database backup as a chart renders it: a time zone, no overlapping runs, a
/// deadline, history limits, a job template with labels, env from a secret, a volume.
fn backup() -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "w", "labels": {"app.kubernetes.io/name": "pg-backup"}},
        "spec": {
            "schedule": "30 2 * * *",
            "timeZone": "Europe/Berlin",
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 300,
            "successfulJobsHistoryLimit": 5,
            "failedJobsHistoryLimit": 2,
            "jobTemplate": {
                "metadata": {"labels": {"app.kubernetes.io/name": "pg-backup"}},
                "spec": {
                    "backoffLimit": 2,
                    "activeDeadlineSeconds": 3600,
                    "ttlSecondsAfterFinished": 86400,
                    "template": {
                        "metadata": {"labels": {"app.kubernetes.io/name": "pg-backup"}},
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [{
                                "name": "backup", "image": "postgres:16",
                                "command": ["/bin/sh", "-c", "pg_dump -Fc > /backup/db.dump"],
                                "env": [{"name": "PGPASSWORD", "valueFrom": {"secretKeyRef": {"name": "pg", "key": "password"}}},
                                        {"name": "PGHOST", "value": "pg"}],
                                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                                "volumeMounts": [{"name": "backup", "mountPath": "/backup"}]}],
                            "volumes": [{"name": "backup", "persistentVolumeClaim": {"claimName": "backups"}}]}}}}}})
}

/// The cases both kinds share (the pod template's rules, generation, status isolation,
/// patches and tables).
fn shared_cases(k: Kind, l: &str, add: &mut dyn FnMut(String, Vec<Step>)) {
    add(format!("{l}: minimal"), vec![k.created(), k.get()]);
    let invalid: Vec<(&str, Value)> = vec![
        (
            "restartPolicy Always",
            k.with_pod(json!({"restartPolicy": "Always"})),
        ),
        (
            "restartPolicy defaulted",
            k.with_pod(json!({"restartPolicy": null})),
        ),
        (
            "restartPolicy unknown",
            k.with_pod(json!({"restartPolicy": "Sometimes"})),
        ),
        (
            "negative counts",
            k.with_spec(
                json!({"parallelism": -1, "completions": -2, "backoffLimit": -3,
                "activeDeadlineSeconds": -4, "ttlSecondsAfterFinished": -5}),
            ),
        ),
        (
            "container without image",
            k.with_pod(json!({"containers": [{"name": "work"}]})),
        ),
        (
            "completionMode unknown",
            k.with_spec(json!({"completionMode": "Sometimes"})),
        ),
        (
            "podReplacementPolicy unknown",
            k.with_spec(json!({"podReplacementPolicy": "Never"})),
        ),
    ];
    for (label, body) in invalid {
        add(format!("{l}: {label}"), vec![k.create(body)]);
    }
    add(
        format!("{l}: restartPolicy OnFailure"),
        vec![k.create(k.with_pod(json!({"restartPolicy": "OnFailure"})))],
    );
    add(
        format!("{l}: create drops status"),
        vec![k.create(k.object(json!({"status": {"active": 3}})))],
    );
    add(
        format!("{l}: label change keeps generation"),
        vec![
            k.created(),
            k.merge_patch(json!({"metadata": {"labels": {"tier": "batch"}}})),
        ],
    );
    add(
        format!("{l}: main write keeps status"),
        vec![
            k.created(),
            k.merge_patch(
                json!({"metadata": {"labels": {"x": "y"}}, "status": if k.kind == "Job" {
                    json!({"active": 2})
                } else {
                    json!({"lastScheduleTime": "2026-01-01T00:00:00Z"})
                }}),
            ),
        ],
    );
    add(
        format!("{l}: apply"),
        vec![k.apply("a", k.object(json!({}))), k.get()],
    );
    add(format!("{l}: table"), vec![k.created(), k.table()]);
    add(
        format!("{l}: dry run create"),
        vec![
            post(
                format!("{}?dryRun=All", k.collection()),
                k.object(json!({})),
            ),
            get(k.collection()),
        ],
    );
    add(
        format!("{l}: name not a DNS label"),
        vec![k.create(k.object(json!({"metadata": {"name": "w.v1"}})))],
    );
}

/// The patches of a CronJob's pod template, which a Job's immutable template refuses.
fn template_patch_cases(add: &mut dyn FnMut(String, Vec<Step>)) {
    let k = CRON;
    add(
        "cronjob: apply env merged by name".into(),
        vec![
            k.apply(
                "a",
                k.with_pod(
                    json!({"containers": [{"name": "work", "image": "busybox:1.36",
                "env": [{"name": "A", "value": "1"}]}]}),
                ),
            ),
            k.apply(
                "b",
                k.with_pod(json!({"containers": [{"name": "work",
                "env": [{"name": "B", "value": "2"}]}]})),
            ),
        ],
    );
    add(
        "cronjob: apply conflict on schedule".into(),
        vec![
            k.apply("a", k.object(json!({}))),
            k.apply("b", k.object(json!({"spec": {"schedule": "0 * * * *"}}))),
            patch(
                format!("{}?fieldManager=b&force=true", k.one()),
                APPLY,
                k.object(json!({"spec": {"schedule": "0 * * * *"}})),
            ),
        ],
    );
    add(
        "cronjob: smp env by name".into(),
        vec![
            k.create(k.with_pod(
                json!({"containers": [{"name": "work", "image": "busybox:1.36",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]}),
            )),
            patch(
                k.one(),
                SMP,
                json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
                    {"name": "work", "env": [{"name": "B", "value": "3"},
                                             {"name": "A", "$patch": "delete"}]}]}}}}}}),
            ),
        ],
    );
    add(
        "cronjob: smp container image by name".into(),
        vec![
            k.create(
                k.with_pod(json!({"containers": [
                {"name": "work", "image": "busybox:1.36"}, {"name": "side", "image": "busybox"}]})),
            ),
            patch(
                k.one(),
                SMP,
                json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
                    {"name": "side", "image": "busybox:1.37"}]}}}}}}),
            ),
        ],
    );
}

fn job_cases(add: &mut dyn FnMut(String, Vec<Step>)) {
    let k = JOB;
    add("job: pi".into(), vec![k.create(pi()), k.get()]);
    add(
        "job: parallelism only".into(),
        vec![k.create(k.with_spec(json!({"parallelism": 3}))), k.table()],
    );
    for (label, body) in [
        (
            "job: completions only",
            k.with_spec(json!({"completions": 4})),
        ),
        (
            "job: template labels copied",
            k.with_spec(json!({"template": {"metadata": {"labels": {"app": "w"}}}})),
        ),
        (
            "job: own labels kept",
            k.object(json!({"metadata": {"labels": {"team": "a"}},
            "spec": {"template": {"metadata": {"labels": {"app": "w"}}}}})),
        ),
    ] {
        add(label.into(), vec![k.create(body)]);
    }
    add(
        "job: generateName".into(),
        vec![post(
            k.collection(),
            k.object(json!({"metadata": {"name": null, "generateName": "w-"}})),
        )],
    );
    for (label, body) in [
        (
            "job: manual selector",
            k.with_spec(json!({"manualSelector": true,
            "selector": {"matchLabels": {"app": "w"}},
            "template": {"metadata": {"labels": {"app": "w"}}}})),
        ),
        (
            "job: manual selector missing",
            k.with_spec(json!({"manualSelector": true})),
        ),
        (
            "job: manual selector not matching",
            k.with_spec(json!({"manualSelector": true,
            "selector": {"matchLabels": {"app": "other"}},
            "template": {"metadata": {"labels": {"app": "w"}}}})),
        ),
        (
            "job: selector without manualSelector",
            k.with_spec(json!({
            "selector": {"matchLabels": {"app": "w"}},
            "template": {"metadata": {"labels": {"app": "w"}}}})),
        ),
        (
            "job: template job-name label set",
            k.with_spec(json!({
            "template": {"metadata": {"labels": {"job-name": "other"}}}})),
        ),
        (
            "job: selector bad operator",
            k.with_spec(json!({"manualSelector": true,
            "selector": {"matchExpressions": [{"key": "app", "operator": "Near", "values": ["w"]}]},
            "template": {"metadata": {"labels": {"app": "w"}}}})),
        ),
    ] {
        add(label.into(), vec![k.create(body)]);
    }
    add(
        "job: indexed".into(),
        vec![
            k.create(k.with_spec(
                json!({"completionMode": "Indexed", "completions": 5, "parallelism": 2}),
            )),
            k.table(),
        ],
    );
    for (label, body) in [
        ("job: indexed without completions", k.with_spec(json!({"completionMode": "Indexed", "parallelism": 2}))),
        ("job: indexed name too long", k.object(json!({"metadata": {"name": "a".repeat(62)},
            "spec": {"completionMode": "Indexed", "completions": 10}}))),
        ("job: indexed parallelism too high", k.with_spec(json!({"completionMode": "Indexed", "completions": 5,
            "parallelism": 100001}))),
        ("job: indexed with high completions warns", k.with_spec(json!({"completionMode": "Indexed", "completions": 200000,
            "parallelism": 20000}))),
        ("job: indexed high completions per index", k.with_spec(json!({"completionMode": "Indexed", "completions": 200000,
            "parallelism": 20000, "backoffLimitPerIndex": 1, "maxFailedIndexes": 20000}))),
        ("job: backoff limit per index", k.with_spec(json!({"completionMode": "Indexed", "completions": 4,
            "backoffLimitPerIndex": 1, "maxFailedIndexes": 2}))),
        ("job: backoff limit per index not indexed", k.with_spec(json!({"backoffLimitPerIndex": 1, "maxFailedIndexes": 1}))),
        ("job: max failed indexes alone", k.with_spec(json!({"completionMode": "Indexed", "completions": 2,
            "maxFailedIndexes": 3}))),
        ("job: pod failure policy", k.with_spec(json!({"podFailurePolicy": {"rules": [
            {"action": "FailJob", "onExitCodes": {"containerName": "work", "operator": "In", "values": [42]}},
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}}))),
        ("job: pod failure policy with OnFailure", k.with_spec(json!({"podFailurePolicy": {"rules": [
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0]}}]},
            "template": {"spec": {"restartPolicy": "OnFailure"}}}))),
        ("job: pod failure policy rule errors", k.with_spec(json!({"podFailurePolicy": {"rules": [
            {"onExitCodes": {"containerName": "nope", "operator": "Within", "values": [3, 1, 1]}},
            {"action": "Retry", "onExitCodes": {"operator": "In", "values": [0]},
             "onPodConditions": [{"type": "DisruptionTarget", "status": "Maybe"}]},
            {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": []}},
            {"action": "Count"}]}}))),
        ("job: pod failure policy replacement", k.with_spec(json!({"podReplacementPolicy": "TerminatingOrFailed",
            "podFailurePolicy": {"rules": [
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}}))),
        ("job: success policy", k.with_spec(json!({"completionMode": "Indexed", "completions": 5,
            "parallelism": 5, "successPolicy": {"rules": [{"succeededIndexes": "0,2-3", "succeededCount": 2}]}}))),
        ("job: success policy not indexed", k.with_spec(json!({"successPolicy": {"rules": [{"succeededCount": 1}]}}))),
        ("job: success policy rule errors", k.with_spec(json!({"completionMode": "Indexed", "completions": 3,
            "successPolicy": {"rules": [{"succeededIndexes": "2,1"}, {"succeededCount": 4},
                {"succeededIndexes": "0-1", "succeededCount": 3}, {}]}}))),
        ("job: managedBy", k.with_spec(json!({"managedBy": "kueue.x-k8s.io/multikueue"}))),
        ("job: managedBy not a path", k.with_spec(json!({"managedBy": "kueue"}))),
    ] {
        add(label.into(), vec![k.create(body)]);
    }
    for (label, body) in [
        (
            "job: template immutable",
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "work", "image": "busybox:1.37"}]}}}}),
        ),
        (
            "job: completions immutable",
            json!({"spec": {"completions": 3}}),
        ),
        (
            "job: selector immutable",
            json!({"spec": {"selector": {"matchLabels": {"extra": "x"}}}}),
        ),
    ] {
        add(label.into(), vec![k.created(), k.merge_patch(body)]);
    }
    add(
        "job: completionMode immutable".into(),
        vec![
            k.create(k.with_spec(json!({"completions": 2}))),
            k.merge_patch(json!({"spec": {"completionMode": "Indexed"}})),
        ],
    );
    add(
        "job: indexed scaled in tandem".into(),
        vec![
            k.create(k.with_spec(
                json!({"completionMode": "Indexed", "completions": 3, "parallelism": 3}),
            )),
            k.merge_patch(json!({"spec": {"completions": 5, "parallelism": 5}})),
            k.merge_patch(json!({"spec": {"completions": 6}})),
        ],
    );
    add(
        "job: parallelism bumps generation".into(),
        vec![
            k.created(),
            k.merge_patch(json!({"spec": {"parallelism": 2}})),
        ],
    );
    add(
        "job: suspend and resume".into(),
        vec![
            k.create(k.with_spec(json!({"suspend": true}))),
            k.merge_patch(json!({"spec": {"suspend": false}})),
            k.table(),
        ],
    );
    add(
        "job: suspended job's scheduling directives".into(),
        vec![
            k.create(k.with_spec(json!({"suspend": true}))),
            k.merge_patch(json!({"spec": {"template": {
                "metadata": {"annotations": {"queue": "a"}},
                "spec": {"nodeSelector": {"pool": "batch"},
                         "tolerations": [{"key": "batch", "operator": "Exists"}],
                         "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                             "nodeSelectorTerms": [{"matchExpressions": [
                                 {"key": "zone", "operator": "In", "values": ["a"]}]}]}}}}}}})),
            k.merge_patch(json!({"spec": {"suspend": false}})),
        ],
    );
    add(
        "job: put with the generated labels".into(),
        vec![
            k.created().remember("$UID", "/metadata/uid"),
            put(
                k.one(),
                k.with_spec(json!({"parallelism": 2,
                    "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "$UID"}},
                    "template": {"metadata": {"labels": {
                        "batch.kubernetes.io/controller-uid": "$UID", "controller-uid": "$UID",
                        "batch.kubernetes.io/job-name": "w", "job-name": "w"}}}})),
            ),
        ],
    );
    add(
        "job: status write keeps spec".into(),
        vec![
            k.created(),
            k.status(json!({"spec": {"parallelism": 9},
                "status": {"active": 1, "ready": 0, "startTime": "2026-01-01T00:00:00Z"}})),
            k.get(),
        ],
    );
    add(
        "job: status apply".into(),
        vec![
            k.created(),
            patch(
                format!("{}/status?fieldManager=job-controller", k.one()),
                APPLY,
                json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "w"},
                       "status": {"active": 1, "startTime": "2026-01-01T00:00:00Z"}}),
            ),
        ],
    );
    for (label, body) in [
        (
            "job: status negative",
            json!({"status": {"active": -1, "succeeded": -1, "failed": -1,
                "ready": -1, "terminating": -1}}),
        ),
        (
            "job: status more ready than active",
            json!({"status": {"active": 1, "ready": 2}}),
        ),
        (
            "job: status complete without times",
            json!({"status": {"conditions": [
                {"type": "Complete", "status": "True"}]}}),
        ),
    ] {
        add(label.into(), vec![k.created(), k.status(body)]);
    }
    add(
        "job: status complete".into(),
        vec![
            k.created(),
            k.status(json!({"status": {"startTime": "2026-01-01T00:00:00Z", "active": 1}})),
            k.status(json!({"status": {"active": 0, "succeeded": 1,
                "completionTime": "2026-01-01T00:01:05Z",
                "conditions": [
                    {"type": "SuccessCriteriaMet", "status": "True"},
                    {"type": "Complete", "status": "True"}]}})),
            k.table(),
            get(format!(
                "{}?fieldSelector=status.successful%3D1",
                k.collection()
            )),
        ],
    );
    add(
        "job: status failed".into(),
        vec![
            k.created(),
            k.status(json!({"status": {"startTime": "2026-01-01T00:00:00Z", "failed": 2}})),
            k.status(json!({"status": {"failed": 1, "conditions": [
                {"type": "Failed", "status": "True"}]}})),
        ],
    );
    add(
        "job: status completion before start".into(),
        vec![
            k.created(),
            k.status(json!({"status": {"startTime": "2026-01-01T00:00:00Z",
                "completionTime": "2025-12-31T00:00:00Z",
                "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                               {"type": "Complete", "status": "True"}]}})),
        ],
    );
    add(
        "job: status indexes not indexed".into(),
        vec![
            k.created(),
            k.status(
                json!({"status": {"completedIndexes": "0", "failedIndexes": "0",
                "uncountedTerminatedPods": {"succeeded": ["a", ""], "failed": ["a"]}}}),
            ),
        ],
    );
    add(
        "job: status completed indexes out of range".into(),
        vec![
            k.create(k.with_spec(json!({"completionMode": "Indexed", "completions": 3}))),
            k.status(json!({"status": {"completedIndexes": "1,5"}})),
        ],
    );
    add(
        "job: field selector status.successful".into(),
        vec![
            k.created(),
            get(format!(
                "{}?fieldSelector=status.successful%3D0",
                k.collection()
            )),
            get(format!(
                "{}?fieldSelector=status.successful%3D1",
                k.collection()
            )),
        ],
    );
    add(
        "job: field selector unsupported".into(),
        vec![get(format!(
            "{}?fieldSelector=status.active%3D0",
            k.collection()
        ))],
    );
    add(
        "job: delete in the background".into(),
        vec![
            k.created(),
            delete(format!("{}?propagationPolicy=Background", k.one())),
        ],
    );
    add(
        "job: delete without a propagation policy".into(),
        vec![k.created(), delete(k.one())],
    );
    add(
        "job: dry run delete without a propagation policy".into(),
        vec![
            k.created(),
            delete(format!("{}?dryRun=All", k.one())),
            k.get(),
        ],
    );
    add(
        "job: discovery of batch/v1".into(),
        vec![get("/apis/batch/v1")],
    );
}

fn cron_job_cases(add: &mut dyn FnMut(String, Vec<Step>)) {
    let k = CRON;
    add(
        "cronjob: backup".into(),
        vec![k.create(backup()), k.get(), k.table()],
    );
    let schedules = [
        ("schedule missing", json!(null)),
        ("schedule four fields", json!("*/5 * * *")),
        ("schedule minute out of range", json!("60 * * * *")),
        ("schedule day zero", json!("0 0 0 * *")),
        ("schedule not a number", json!("x * * * *")),
        ("schedule reversed range", json!("0 5-2 * * *")),
        ("schedule step zero", json!("*/0 * * * *")),
        ("schedule names", json!("0 9 * jan-mar MON-fri")),
        ("schedule hourly", json!("@hourly")),
        ("schedule every", json!("@every 1h30m")),
        ("schedule every without unit", json!("@every 5")),
        ("schedule unknown descriptor", json!("@often")),
        ("schedule TZ", json!("TZ=UTC 0 * * * *")),
        (
            "schedule CRON_TZ unknown",
            json!("CRON_TZ=Mars/Base 0 * * * *"),
        ),
    ];
    for (label, schedule) in schedules {
        add(
            format!("cronjob: {label}"),
            vec![k.create(k.object(json!({"spec": {"schedule": schedule}})))],
        );
    }
    let zones = [
        ("time zone", json!("Europe/Berlin")),
        ("time zone unknown", json!("Mars/Base")),
        ("time zone empty", json!("")),
        ("time zone Local", json!("Local")),
        ("time zone with a space", json!("Europe/Ber lin")),
        ("time zone UTC", json!("UTC")),
    ];
    for (label, zone) in zones {
        add(
            format!("cronjob: {label}"),
            vec![k.create(k.object(json!({"spec": {"timeZone": zone}})))],
        );
    }
    for (label, body) in [
        (
            "cronjob: concurrencyPolicy unknown",
            k.object(json!({"spec": {"concurrencyPolicy": "Sometimes"}})),
        ),
        (
            "cronjob: negative limits",
            k.object(json!({"spec": {"startingDeadlineSeconds": -1,
            "successfulJobsHistoryLimit": -1, "failedJobsHistoryLimit": -1}})),
        ),
        (
            "cronjob: job template selector",
            k.with_spec(json!({"selector": {"matchLabels": {"app": "w"}}})),
        ),
        (
            "cronjob: job template manualSelector",
            k.with_spec(json!({"manualSelector": true})),
        ),
        (
            "cronjob: indexed with high completions warns",
            k.with_spec(json!({"completionMode": "Indexed", "completions": 200000,
            "parallelism": 20000})),
        ),
        (
            "cronjob: name too long",
            k.object(json!({"metadata": {"name": "a".repeat(53)}})),
        ),
    ] {
        add(label.into(), vec![k.create(body)]);
    }
    add(
        "cronjob: schedule change bumps generation".into(),
        vec![
            k.created(),
            k.merge_patch(json!({"spec": {"schedule": "0 * * * *"}})),
        ],
    );
    add(
        "cronjob: suspend".into(),
        vec![
            k.created(),
            k.merge_patch(json!({"spec": {"suspend": true}})),
            k.table(),
        ],
    );
    add(
        "cronjob: time zone changed to unknown".into(),
        vec![
            k.created(),
            k.merge_patch(json!({"spec": {"timeZone": "Mars/Base"}})),
        ],
    );
    add(
        "cronjob: status write keeps spec".into(),
        vec![
            k.created(),
            k.status(json!({"spec": {"schedule": "@daily"}, "status": {
                "lastScheduleTime": "2026-01-01T00:00:00Z",
                "active": [{"apiVersion": "batch/v1", "kind": "Job", "name": "w-1", "namespace": "NS"}]}})),
            k.table(),
        ],
    );
}

pub(crate) fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |label: String, steps: Vec<Step>| cases.push(Case::new(label, steps));
    shared_cases(JOB, "job", &mut add);
    shared_cases(CRON, "cronjob", &mut add);
    template_patch_cases(&mut add);
    job_cases(&mut add);
    cron_job_cases(&mut add);
    cases
}
