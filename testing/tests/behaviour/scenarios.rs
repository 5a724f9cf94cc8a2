//! The scenarios, by area.

use serde_json::{Value, json};

use super::corpus::*;

/// The image no node can pull (the world's fault).
pub const BROKEN: &str = "registry.example/web:broken";
/// The image whose container exits 1 as it starts (the world's fault).
pub const CRASHING: &str = "registry.example/web:crashing";
/// The image whose container is OOM-killed as it starts (the world's fault).
pub const GREEDY: &str = "registry.example/web:greedy";

/// Every scenario, in order.
pub fn all() -> Vec<Scenario> {
    [
        deployments(),
        broken_images(),
        pods(),
        stateful_sets(),
        daemon_sets(),
        jobs(),
        cron_jobs(),
        services(),
        claims(),
        nodes(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A merge patch of the image of a workload's container.
fn set_image(kind: Kind, name: &'static str, container: &str, image: &str) -> Step {
    let containers = json!([{"name": container, "image": image}]);
    Step::Patch(
        kind,
        name,
        json!({"spec": {"template": {"spec": {"containers": containers}}}}),
    )
}

fn available(d: &Value) -> bool {
    has_condition(d, "Available", "True", "MinimumReplicasAvailable")
        && has_condition(d, "Progressing", "True", "NewReplicaSetAvailable")
        && count(d, "updatedReplicas") == d["spec"]["replicas"].as_i64().unwrap_or(1)
        && count(d, "availableReplicas") == d["spec"]["replicas"].as_i64().unwrap_or(1)
        && count(d, "replicas") == count(d, "updatedReplicas")
        && d["status"]["observedGeneration"] == d["metadata"]["generation"]
}

fn rolled_out(name: &'static str) -> Step {
    Step::Wait(
        DEPLOYMENT,
        name,
        "the deployment to be available at its generation",
        available,
    )
}

/// `web` created with `from` replicas and rolled out, then scaled to `to` and rolled out.
fn scaled(name: &'static str, from: i64, to: i64) -> Scenario {
    scenario(
        name,
        vec![
            Step::Create(deployment("web", from, "nginx:1.27")),
            rolled_out("web"),
            Step::Patch(DEPLOYMENT, "web", json!({"spec": {"replicas": to}})),
            rolled_out("web"),
        ],
    )
}

fn deployments() -> Vec<Scenario> {
    let mut web = deployment("web", 3, "nginx:1.27");
    web["spec"]["strategy"] = json!({"type": "Recreate"});
    let mut probed = deployment("web", 2, "nginx:1.27");
    probed["spec"]["template"]["spec"]["containers"][0]["readinessProbe"] =
        json!({"httpGet": {"path": "/", "port": 80}});
    let mut surge = deployment("web", 4, "nginx:1.27");
    surge["spec"]["strategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}});
    let mut paused = deployment("web", 2, "nginx:1.27");
    paused["spec"]["paused"] = json!(true);
    let mut picky = deployment("web", 2, "nginx:1.27");
    picky["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    let mut nowhere = deployment("web", 1, "nginx:1.27");
    nowhere["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "tape"});
    vec![
        scenario(
            "deployment: created, becomes available",
            vec![
                Step::Create(deployment("web", 3, "nginx:1.27")),
                rolled_out("web"),
            ],
        ),
        scenario(
            "deployment: of one replica",
            vec![
                Step::Create(deployment("web", 1, "nginx:1.27")),
                rolled_out("web"),
            ],
        ),
        scenario(
            "deployment: of zero replicas",
            vec![
                Step::Create(deployment("web", 0, "nginx:1.27")),
                rolled_out("web"),
            ],
        ),
        scaled("deployment: scaled up", 2, 5),
        scaled("deployment: scaled down", 4, 1),
        scaled("deployment: scaled to zero", 2, 0),
        scenario(
            "deployment: image updated, rolls out",
            vec![
                Step::Create(deployment("web", 3, "nginx:1.27")),
                rolled_out("web"),
                set_image(DEPLOYMENT, "web", "app", "nginx:1.28"),
                rolled_out("web"),
            ],
        ),
        scenario(
            "deployment: recreate strategy",
            vec![
                Step::Create(web),
                rolled_out("web"),
                set_image(DEPLOYMENT, "web", "app", "nginx:1.28"),
                rolled_out("web"),
            ],
        ),
        scenario(
            "deployment: max surge 0",
            vec![
                Step::Create(surge),
                rolled_out("web"),
                set_image(DEPLOYMENT, "web", "app", "nginx:1.28"),
                rolled_out("web"),
            ],
        ),
        scenario(
            "deployment: created paused",
            vec![
                Step::Create(paused),
                Step::Wait(DEPLOYMENT, "web", "Progressing DeploymentPaused", |d| {
                    has_condition(d, "Progressing", "Unknown", "DeploymentPaused")
                }),
                Step::Patch(DEPLOYMENT, "web", json!({"spec": {"paused": false}})),
                rolled_out("web"),
            ],
        ),
        scenario(
            "deployment: paused mid-life, resumed",
            vec![
                Step::Create(deployment("web", 2, "nginx:1.27")),
                rolled_out("web"),
                Step::Patch(DEPLOYMENT, "web", json!({"spec": {"paused": true}})),
                Step::Wait(DEPLOYMENT, "web", "Progressing DeploymentPaused", |d| {
                    has_condition(d, "Progressing", "Unknown", "DeploymentPaused")
                }),
                Step::Patch(
                    DEPLOYMENT,
                    "web",
                    json!({"spec": {"paused": false, "template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}}),
                ),
                rolled_out("web"),
            ],
        ),
        scenario(
            "deployment: readiness probe",
            vec![Step::Create(probed), rolled_out("web")],
        ),
        scenario(
            "deployment: pods on the ssd node",
            vec![
                Step::Create(picky),
                rolled_out("web"),
                Step::WaitAll(POD, "both pods on worker-3", |l| {
                    l["items"].as_array().is_some_and(|p| {
                        p.len() == 2 && p.iter().all(|p| p["spec"]["nodeName"] == "worker-3")
                    })
                }),
            ],
        ),
        scenario(
            "deployment: pods fit nowhere",
            vec![
                Step::Create(nowhere),
                Step::WaitAll(POD, "a pod Unschedulable", |l| {
                    l["items"].as_array().is_some_and(|p| {
                        p.iter()
                            .any(|p| has_condition(p, "PodScheduled", "False", "Unschedulable"))
                    })
                }),
                Step::Wait(DEPLOYMENT, "web", "Available False", |d| {
                    has_condition(d, "Available", "False", "MinimumReplicasUnavailable")
                }),
            ],
        ),
        scenario(
            "deployment: a pod deleted is replaced",
            vec![
                Step::Create(deployment("web", 2, "nginx:1.27")),
                rolled_out("web"),
                Step::WaitAll(POD, "two running pods", |l| {
                    l["items"].as_array().is_some_and(|p| p.len() == 2)
                }),
                Step::Delete(DEPLOYMENT, "web"),
                Step::WaitAll(POD, "the pods gone", |l| {
                    l["items"].as_array().is_some_and(Vec::is_empty)
                }),
            ],
        ),
        scenario(
            "deployment: two in one namespace",
            vec![
                Step::Create(deployment("web", 2, "nginx:1.27")),
                Step::Create(deployment("api", 1, "nginx:1.27")),
                rolled_out("web"),
                rolled_out("api"),
            ],
        ),
        scenario(
            "deployment: replicas unset default to one",
            vec![
                Step::Create({
                    let mut d = deployment("web", 1, "nginx:1.27");
                    d["spec"].as_object_mut().unwrap().remove("replicas");
                    d
                }),
                rolled_out("web"),
            ],
        ),
        scenario(
            "deployment: revision history limit 1",
            vec![
                Step::Create({
                    let mut d = deployment("web", 1, "nginx:1.27");
                    d["spec"]["revisionHistoryLimit"] = json!(1);
                    d
                }),
                rolled_out("web"),
                set_image(DEPLOYMENT, "web", "app", "nginx:1.28"),
                rolled_out("web"),
                set_image(DEPLOYMENT, "web", "app", "nginx:1.29"),
                rolled_out("web"),
                Step::WaitAll(REPLICA_SET, "two replica sets left", |l| {
                    l["items"].as_array().is_some_and(|r| r.len() == 2)
                }),
            ],
        ),
    ]
}

fn pulling_fails(p: &Value) -> bool {
    matches!(
        p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"].as_str(),
        Some("ErrImagePull" | "ImagePullBackOff")
    )
}

fn broken_images() -> Vec<Scenario> {
    vec![
        scenario(
            "deployment: created with an image that does not pull",
            vec![
                Step::Create(deployment("web", 2, BROKEN)),
                Step::WaitAll(POD, "both pods failing to pull", |l| {
                    l["items"]
                        .as_array()
                        .is_some_and(|p| p.len() == 2 && p.iter().all(pulling_fails))
                }),
                Step::Wait(DEPLOYMENT, "web", "Available False", |d| {
                    has_condition(d, "Available", "False", "MinimumReplicasUnavailable")
                }),
            ],
        ),
        scenario(
            "deployment: rolled to an image that does not pull",
            vec![
                Step::Create(deployment("web", 3, "nginx:1.27")),
                rolled_out("web"),
                set_image(DEPLOYMENT, "web", "app", BROKEN),
                Step::WaitAll(POD, "a new pod failing to pull", |l| {
                    l["items"]
                        .as_array()
                        .is_some_and(|p| p.iter().filter(|p| pulling_fails(p)).count() == 1)
                }),
                Step::Wait(DEPLOYMENT, "web", "one updated, three available", |d| {
                    count(d, "updatedReplicas") == 1
                        && count(d, "availableReplicas") == 3
                        && has_condition(d, "Available", "True", "MinimumReplicasAvailable")
                        && has_condition(d, "Progressing", "True", "ReplicaSetUpdated")
                }),
            ],
        ),
        scenario(
            "pod: a container that crashes backs off",
            vec![
                Step::Create(
                    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                "spec": {"containers": [{"name": "app", "image": CRASHING}]}}),
                ),
                Step::Wait(POD, "web", "backing off", |p| backing_off(p, "Error", 1)),
            ],
        ),
        scenario(
            "pod: a container OOM-killed backs off",
            vec![
                Step::Create(
                    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                "spec": {"containers": [{"name": "app", "image": GREEDY}]}}),
                ),
                Step::Wait(POD, "web", "backing off", |p| {
                    backing_off(p, "OOMKilled", 137)
                }),
            ],
        ),
        scenario(
            "pod: an image that does not pull",
            vec![
                Step::Create(
                    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                "spec": {"containers": [{"name": "app", "image": BROKEN}]}}),
                ),
                Step::Wait(POD, "web", "failing to pull", pulling_fails),
            ],
        ),
    ]
}

/// Whether the pod's first container waits `CrashLoopBackOff` after terminating with `reason`
/// and `exit_code`, restarted once.
fn backing_off(p: &Value, reason: &str, exit_code: i64) -> bool {
    let status = &p["status"]["containerStatuses"][0];
    status["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        && status["lastState"]["terminated"]["reason"] == reason
        && status["lastState"]["terminated"]["exitCode"] == exit_code
        && status["restartCount"] == 1
}

fn pods() -> Vec<Scenario> {
    vec![
        scenario(
            "pod: runs and becomes ready",
            vec![
                Step::Create(
                    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}),
                ),
                Step::Wait(POD, "web", "Ready", |p| {
                    has_condition(p, "Ready", "True", "")
                }),
            ],
        ),
        scenario(
            "pod: runs to completion",
            vec![
                Step::Create(
                    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "once"},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "work", "image": "busybox:1.36"}]}}),
                ),
                Step::Wait(POD, "once", "Succeeded", |p| {
                    p["status"]["phase"] == "Succeeded"
                }),
            ],
        ),
        scenario(
            "pod: deleted while running",
            vec![
                Step::Create(
                    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}),
                ),
                Step::Wait(POD, "web", "Ready", |p| {
                    has_condition(p, "Ready", "True", "")
                }),
                Step::Delete(POD, "web"),
                Step::Wait(POD, "web", "gone", Value::is_null),
            ],
        ),
    ]
}

fn stateful_set(name: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas, "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}},
        },
    })
}

fn sts_ready(s: &Value) -> bool {
    let want = s["spec"]["replicas"].as_i64().unwrap_or(1);
    count(s, "readyReplicas") == want
        && count(s, "replicas") == want
        && count(s, "updatedReplicas") == want
        && s["status"]["observedGeneration"] == s["metadata"]["generation"]
        && s["status"]["currentRevision"] == s["status"]["updateRevision"]
}

fn stateful_sets() -> Vec<Scenario> {
    let mut claims = stateful_set("db", 2);
    claims["spec"]["volumeClaimTemplates"] = json!([{
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }]);
    let mut parallel = stateful_set("db", 3);
    parallel["spec"]["podManagementPolicy"] = json!("Parallel");
    vec![
        scenario(
            "statefulset: created, ready in order",
            vec![
                Step::Create(stateful_set("db", 3)),
                Step::Wait(STATEFUL_SET, "db", "3 ready", sts_ready),
            ],
        ),
        scenario(
            "statefulset: scaled up and down",
            vec![
                Step::Create(stateful_set("db", 2)),
                Step::Wait(STATEFUL_SET, "db", "2 ready", sts_ready),
                Step::Patch(STATEFUL_SET, "db", json!({"spec": {"replicas": 4}})),
                Step::Wait(STATEFUL_SET, "db", "4 ready", sts_ready),
                Step::Patch(STATEFUL_SET, "db", json!({"spec": {"replicas": 1}})),
                Step::Wait(STATEFUL_SET, "db", "1 ready", sts_ready),
            ],
        ),
        scenario(
            "statefulset: rolling update",
            vec![
                Step::Create(stateful_set("db", 2)),
                Step::Wait(STATEFUL_SET, "db", "2 ready", sts_ready),
                set_image(STATEFUL_SET, "db", "app", "nginx:1.28"),
                Step::Wait(STATEFUL_SET, "db", "updated", sts_ready),
            ],
        ),
        scenario(
            "statefulset: scaled to zero",
            vec![
                Step::Create(stateful_set("db", 2)),
                Step::Wait(STATEFUL_SET, "db", "2 ready", sts_ready),
                Step::Patch(STATEFUL_SET, "db", json!({"spec": {"replicas": 0}})),
                Step::Wait(STATEFUL_SET, "db", "none", sts_ready),
            ],
        ),
        scenario(
            "statefulset: a deleted pod comes back",
            vec![
                Step::Create(stateful_set("db", 2)),
                Step::Wait(STATEFUL_SET, "db", "2 ready", sts_ready),
                Step::Delete(POD, "db-1"),
                Step::WaitAll(POD, "db-1 back and ready", |l| {
                    l["items"].as_array().is_some_and(|p| {
                        p.len() == 2
                            && p.iter().all(|p| {
                                has_condition(p, "Ready", "True", "")
                                    && p["metadata"]["deletionTimestamp"].is_null()
                            })
                    })
                }),
                Step::Wait(STATEFUL_SET, "db", "2 ready", sts_ready),
            ],
        ),
        scenario(
            "statefulset: parallel pod management",
            vec![
                Step::Create(parallel),
                Step::Wait(STATEFUL_SET, "db", "3 ready", sts_ready),
            ],
        ),
        scenario(
            "statefulset: volume claim templates",
            vec![
                // No volume exists and no class provisions one: the first claim waits, and with it
                // the first pod (the scheduler's VolumeBinding) and the rest (OrderedReady).
                Step::Create(claims),
                Step::WaitAll(CLAIM, "the first claim, Pending", |l| {
                    l["items"]
                        .as_array()
                        .is_some_and(|c| c.len() == 1 && c[0]["status"]["phase"] == "Pending")
                }),
            ],
        ),
    ]
}

fn daemon_set(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "agent", "image": "busybox:1.36"}]}},
        },
    })
}

fn ds_ready(d: &Value) -> bool {
    let want = count(d, "desiredNumberScheduled");
    want > 0
        && count(d, "numberReady") == want
        && count(d, "updatedNumberScheduled") == want
        && count(d, "numberAvailable") == want
        && d["status"]["observedGeneration"] == d["metadata"]["generation"]
}

fn daemon_sets() -> Vec<Scenario> {
    let mut ssd = daemon_set("agent");
    ssd["spec"]["template"]["spec"]["nodeSelector"] = json!({"disk": "ssd"});
    vec![
        scenario(
            "daemonset: a pod per node",
            vec![
                Step::Create(daemon_set("agent")),
                Step::Wait(DAEMON_SET, "agent", "3 ready", ds_ready),
            ],
        ),
        scenario(
            "daemonset: only the ssd node",
            vec![
                Step::Create(ssd),
                Step::Wait(DAEMON_SET, "agent", "1 ready", ds_ready),
            ],
        ),
        scenario(
            "daemonset: rolling update",
            vec![
                Step::Create(daemon_set("agent")),
                Step::Wait(DAEMON_SET, "agent", "3 ready", ds_ready),
                set_image(DAEMON_SET, "agent", "agent", "busybox:1.37"),
                Step::Wait(DAEMON_SET, "agent", "updated", ds_ready),
            ],
        ),
    ]
}

fn job(name: &str, completions: i64, parallelism: i64) -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "completions": completions, "parallelism": parallelism,
            "template": {"spec": {"restartPolicy": "Never",
                                  "containers": [{"name": "work", "image": "busybox:1.36"}]}},
        },
    })
}

fn complete(j: &Value) -> bool {
    has_condition(j, "Complete", "True", "CompletionsReached")
        && j["status"]["completionTime"].is_string()
}

fn jobs() -> Vec<Scenario> {
    let mut indexed = job("work", 3, 3);
    indexed["spec"]["completionMode"] = json!("Indexed");
    let mut suspended = job("work", 1, 1);
    suspended["spec"]["suspend"] = json!(true);
    let mut ttl = job("work", 1, 1);
    ttl["spec"]["ttlSecondsAfterFinished"] = json!(0);
    let mut failing = job("work", 1, 1);
    failing["spec"]["backoffLimit"] = json!(0);
    failing["spec"]["template"]["spec"]["containers"][0]["image"] = json!(CRASHING);
    vec![
        scenario(
            "job: fails its backoff limit",
            vec![
                Step::Create(failing),
                Step::Wait(JOB, "work", "Failed", |j| {
                    has_condition(j, "Failed", "True", "BackoffLimitExceeded")
                }),
            ],
        ),
        scenario(
            "job: one pod succeeds",
            vec![
                Step::Create(job("work", 1, 1)),
                Step::Wait(JOB, "work", "Complete", complete),
            ],
        ),
        scenario(
            "job: three completions two at a time",
            vec![
                Step::Create(job("work", 3, 2)),
                Step::Wait(JOB, "work", "Complete", complete),
            ],
        ),
        scenario(
            "job: six completions three at a time",
            vec![
                Step::Create(job("work", 6, 3)),
                Step::Wait(JOB, "work", "Complete", complete),
            ],
        ),
        scenario(
            "job: indexed",
            vec![
                Step::Create(indexed),
                Step::Wait(JOB, "work", "Complete", complete),
            ],
        ),
        scenario(
            "job: suspended then resumed",
            vec![
                Step::Create(suspended),
                Step::Wait(JOB, "work", "Suspended", |j| {
                    has_condition(j, "Suspended", "True", "JobSuspended")
                }),
                Step::Patch(JOB, "work", json!({"spec": {"suspend": false}})),
                Step::Wait(JOB, "work", "Complete", complete),
            ],
        ),
        scenario(
            "job: deleted after its ttl",
            vec![
                Step::Create(ttl),
                Step::Wait(JOB, "work", "deleted", Value::is_null),
            ],
        ),
    ]
}

fn cron_jobs() -> Vec<Scenario> {
    let cron = json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "tick"},
        "spec": {
            "schedule": "* * * * *",
            "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "work", "image": "busybox:1.36"}]}}}},
        },
    });
    let mut suspended = cron.clone();
    suspended["spec"]["suspend"] = json!(true);
    vec![
        scenario(
            "cronjob: suspended creates nothing",
            vec![
                Step::Create(suspended),
                Step::Wait(CRON_JOB, "tick", "stored", |c| c["spec"]["suspend"] == true),
            ],
        ),
        // A minute holds exactly one firing of `* * * * *`; suspended once its Job succeeded,
        // so that a slow backend does not fire a second time.
        scenario(
            "cronjob: fires on its schedule, its job succeeds",
            vec![
                Step::Create(cron),
                Step::Elapse(60),
                Step::Wait(CRON_JOB, "tick", "its job's success", |c| {
                    c["status"]["lastSuccessfulTime"].is_string()
                }),
                Step::Patch(CRON_JOB, "tick", json!({"spec": {"suspend": true}})),
            ],
        ),
    ]
}

fn service(name: &str, selector: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": selector}, "ports": [{"port": 80, "targetPort": 8080}]},
    })
}

fn endpoints_ready(n: usize) -> fn(&Value) -> bool {
    match n {
        0 => |l| ready_endpoints(l) == 0,
        2 => |l| ready_endpoints(l) == 2,
        _ => |l| ready_endpoints(l) == 3,
    }
}

fn ready_endpoints(list: &Value) -> usize {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["endpoints"].as_array().cloned().unwrap_or_default())
        .filter(|e| e["conditions"]["ready"] == true)
        .count()
}

fn services() -> Vec<Scenario> {
    vec![
        scenario(
            "service: endpoints follow a deployment",
            vec![
                Step::Create(service("web", "web")),
                Step::Create(deployment("web", 3, "nginx:1.27")),
                rolled_out("web"),
                Step::WaitAll(ENDPOINT_SLICE, "three ready endpoints", endpoints_ready(3)),
                Step::Patch(DEPLOYMENT, "web", json!({"spec": {"replicas": 2}})),
                rolled_out("web"),
                Step::WaitAll(ENDPOINT_SLICE, "two ready endpoints", endpoints_ready(2)),
            ],
        ),
        scenario(
            "service: no pods, no endpoints",
            vec![
                Step::Create(service("web", "nothing")),
                Step::WaitAll(ENDPOINT_SLICE, "an empty slice", |l| {
                    l["items"].as_array().is_some_and(|s| s.len() == 1) && ready_endpoints(l) == 0
                }),
            ],
        ),
        scenario(
            "service: deployment deleted, endpoints emptied",
            vec![
                Step::Create(service("web", "web")),
                Step::Create(deployment("web", 2, "nginx:1.27")),
                rolled_out("web"),
                Step::WaitAll(ENDPOINT_SLICE, "two ready endpoints", endpoints_ready(2)),
                Step::Delete(DEPLOYMENT, "web"),
                Step::WaitAll(ENDPOINT_SLICE, "no endpoints", endpoints_ready(0)),
            ],
        ),
    ]
}

fn claims() -> Vec<Scenario> {
    let claim = json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    });
    vec![scenario(
        "claim: pending without a class",
        vec![
            Step::Create(claim),
            Step::Wait(CLAIM, "data", "Pending", |c| {
                c["status"]["phase"] == "Pending"
            }),
        ],
    )]
}

/// The deployment of `replicas` pods the node loss strands: all on worker-3 (the only node
/// with an SSD), evicted 5 s after the node is tainted unreachable or not ready. Not at once:
/// a pod that tolerates the `NoExecute` taint may be scheduled onto the node, and upstream's
/// node lifecycle controller adds the `NoSchedule` taint an instant after the `NoExecute` one,
/// so replacements evicted at once would land there and be evicted again in that instant.
fn on_the_ssd_node(replicas: i64) -> Value {
    let mut web = deployment("web", replicas, "nginx:1.27");
    let spec = &mut web["spec"]["template"]["spec"];
    spec["nodeSelector"] = json!({"disk": "ssd"});
    spec["tolerations"] = json!([
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists",
         "effect": "NoExecute", "tolerationSeconds": 5},
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
         "effect": "NoExecute", "tolerationSeconds": 5},
    ]);
    web
}

fn nodes() -> Vec<Scenario> {
    vec![scenario(
        "node: lost, its pods evicted and replaced, found again",
        vec![
            Step::Create(on_the_ssd_node(2)),
            rolled_out("web"),
            Step::NodeReady("worker-3", false),
            // Past the node monitor's grace period (50 s).
            Step::Elapse(60),
            Step::Wait(
                DEPLOYMENT,
                "web",
                "no replica available, the replacements pending",
                |d| {
                    has_condition(d, "Available", "False", "MinimumReplicasUnavailable")
                        && count(d, "availableReplicas") == 0
                        && count(d, "unavailableReplicas") == 2
                },
            ),
            Step::WaitAll(POD, "the replacements unschedulable", |l| {
                let pods = l["items"].as_array().map(Vec::as_slice).unwrap_or_default();
                let pending = pods.iter().filter(|p| {
                    p["metadata"]["deletionTimestamp"].is_null()
                        && has_condition(p, "PodScheduled", "False", "Unschedulable")
                });
                pending.count() == 2
            }),
            Step::NodeReady("worker-3", true),
            rolled_out("web"),
            Step::WaitAll(POD, "the evicted pods removed", |l| {
                l["items"].as_array().is_some_and(|p| p.len() == 2)
            }),
        ],
    )]
}
