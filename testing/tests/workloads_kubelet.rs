//! The simulated kubelet's faults, restarts and node failures, as a user observes them: pod
//! and container statuses, conditions with their reasons, and events.

mod workloads_support;

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::{Client, client::Body};
use kubeward_names::clock::ManualClock;
use kubeward_testing::{ApiServer, PodFault, Workloads};
use serde_json::{Value, json};
use workloads_support::{api, condition, create, get, pod, until, until_condition};

/// A server on a manual clock running `workloads`, an admin client, and the clock.
async fn server_at(workloads: Workloads) -> (ApiServer, Client, ManualClock) {
    let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
    let server = ApiServer::builder()
        .clock(Arc::new(clock.clone()))
        .workloads(workloads)
        .start()
        .await
        .expect("server starts");
    let client = server.client().expect("client");
    (server, client, clock)
}

/// The `STATUS` column `kubectl get pod <name>` prints (the server's table).
async fn kubectl_status(client: &Client, name: &str) -> String {
    let request = http::Request::get(format!("/api/v1/namespaces/default/pods/{name}"))
        .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
        .body(Body::from(Vec::new()))
        .expect("request");
    let response = client.send(request).await.expect("response");
    let bytes = response.into_body().collect_bytes().await.expect("body");
    let table: Value = serde_json::from_slice(&bytes).expect("a table");
    table["rows"][0]["cells"][2]
        .as_str()
        .expect("a status")
        .to_owned()
}

fn faults() -> Workloads {
    Workloads::with_nodes(1)
        .fault(PodFault::image_pull("registry.example/missing:*"))
        .fault(PodFault::crash_loop("crash:*"))
        .fault(PodFault::never_ready("stuck:*"))
        .fault(PodFault::oom_killed("hog:*"))
}

/// `(type, reason, message)` of the events about `name`, oldest first.
async fn events(client: &Client, name: &str) -> Vec<(String, String, String)> {
    let events = api(client, "v1", "Event", "events", "default");
    let list = events.list(&ListParams::default()).await.expect("events");
    let mut about: Vec<Value> = list
        .items
        .into_iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|e| e["involvedObject"]["name"] == name)
        .collect();
    about.sort_by_key(|e| {
        e["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    });
    about
        .iter()
        .map(|e| {
            let text = |f: &str| e[f].as_str().unwrap_or_default().to_owned();
            (text("type"), text("reason"), text("message"))
        })
        .collect()
}

/// Waits until the first container of `name` satisfies `ok`; returns the pod.
async fn until_container(
    pods: &Api<DynamicObject>,
    name: &str,
    what: &str,
    ok: impl Fn(&Value) -> bool,
) -> Value {
    until(what, || async {
        let p = get(pods, name).await;
        if ok(&p["status"]["containerStatuses"][0]) {
            Ok(p)
        } else {
            Err(p["status"].to_string())
        }
    })
    .await
}

fn waiting(reason: &str) -> impl Fn(&Value) -> bool + '_ {
    move |c| c["state"]["waiting"]["reason"] == reason
}

#[tokio::test]
async fn an_image_that_does_not_pull_is_backed_off_then_pulled_again() {
    let (_server, client, clock) = server_at(faults()).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&pods, pod("web", "registry.example/missing:v1")).await;
    let p = until_container(
        &pods,
        "web",
        "ImagePullBackOff",
        waiting("ImagePullBackOff"),
    )
    .await;
    let error = "rpc error: code = NotFound desc = failed to pull and unpack image \"registry.example/missing:v1\": failed to resolve reference \"registry.example/missing:v1\": registry.example/missing:v1: not found";
    assert_eq!(
        p["status"]["containerStatuses"][0]["state"]["waiting"]["message"],
        format!("Back-off pulling image \"registry.example/missing:v1\": ErrImagePull: {error}")
    );
    assert_eq!(p["status"]["phase"], "Pending");
    assert_eq!(
        condition(&p, "Ready").unwrap()["reason"],
        "ContainersNotReady"
    );
    assert_eq!(kubectl_status(&client, "web").await, "ImagePullBackOff");
    let seen = events(&client, "web").await;
    let expected = [
        (
            "Normal",
            "Scheduled",
            "Successfully assigned default/web to worker-1".to_owned(),
        ),
        (
            "Normal",
            "Pulling",
            "Pulling image \"registry.example/missing:v1\"".to_owned(),
        ),
        (
            "Warning",
            "Failed",
            format!("Failed to pull image \"registry.example/missing:v1\": {error}"),
        ),
        ("Warning", "Failed", "Error: ErrImagePull".to_owned()),
        (
            "Normal",
            "BackOff",
            "Back-off pulling image \"registry.example/missing:v1\"".to_owned(),
        ),
        ("Warning", "Failed", "Error: ImagePullBackOff".to_owned()),
    ];
    let expected: Vec<_> = expected
        .into_iter()
        .map(|(t, r, m)| (t.to_owned(), r.to_owned(), m))
        .collect();
    assert_eq!(seen, expected);
    // The back-off (10 s) over, the pull is tried again and fails again.
    clock.advance(Duration::from_secs(10));
    until("a second pull", || async {
        let pulls = events(&client, "web")
            .await
            .iter()
            .filter(|e| e.1 == "Pulling")
            .count();
        if pulls == 2 {
            Ok(())
        } else {
            Err(format!("{pulls} pulls"))
        }
    })
    .await;
    until_container(
        &pods,
        "web",
        "ImagePullBackOff again",
        waiting("ImagePullBackOff"),
    )
    .await;
}

#[tokio::test]
async fn a_crashing_container_restarts_with_a_growing_back_off() {
    let (_server, client, clock) = server_at(faults()).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&pods, pod("web", "crash:v1")).await;
    let p = until_container(
        &pods,
        "web",
        "CrashLoopBackOff",
        waiting("CrashLoopBackOff"),
    )
    .await;
    let uid = p["metadata"]["uid"].as_str().unwrap().to_owned();
    let status = &p["status"]["containerStatuses"][0];
    assert_eq!(status["restartCount"], 1);
    assert_eq!(
        status["state"]["waiting"]["message"],
        format!("back-off 10s restarting failed container=app pod=web_default({uid})")
    );
    assert_eq!(status["lastState"]["terminated"]["reason"], "Error");
    assert_eq!(status["lastState"]["terminated"]["exitCode"], 1);
    assert_eq!(p["status"]["phase"], "Running");
    assert_eq!(condition(&p, "Ready").unwrap()["status"], "False");
    let backoff = (
        "Warning".to_owned(),
        "BackOff".to_owned(),
        format!("Back-off restarting failed container app in pod web_default({uid})"),
    );
    assert!(events(&client, "web").await.contains(&backoff));
    assert_eq!(kubectl_status(&client, "web").await, "CrashLoopBackOff");
    clock.advance(Duration::from_secs(10));
    let p = until_container(&pods, "web", "a second restart", |c| c["restartCount"] == 2).await;
    let p = if waiting("CrashLoopBackOff")(&p["status"]["containerStatuses"][0]) {
        p
    } else {
        until_container(
            &pods,
            "web",
            "CrashLoopBackOff",
            waiting("CrashLoopBackOff"),
        )
        .await
    };
    assert_eq!(
        p["status"]["containerStatuses"][0]["state"]["waiting"]["message"],
        format!("back-off 20s restarting failed container=app pod=web_default({uid})")
    );
    clock.advance(Duration::from_secs(20));
    until_container(&pods, "web", "a third restart", |c| c["restartCount"] == 3).await;
}

#[tokio::test]
async fn a_crashing_pod_that_never_restarts_fails() {
    let (_server, client, _clock) = server_at(faults()).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut once = pod("once", "crash:v1");
    once["spec"]["restartPolicy"] = json!("Never");
    create(&pods, once).await;
    let p = until("once to fail", || async {
        let p = get(&pods, "once").await;
        if p["status"]["phase"] == "Failed" {
            Ok(p)
        } else {
            Err(p["status"].to_string())
        }
    })
    .await;
    let status = &p["status"]["containerStatuses"][0];
    assert_eq!(status["state"]["terminated"]["reason"], "Error");
    assert_eq!(status["state"]["terminated"]["exitCode"], 1);
    assert_eq!(status["restartCount"], 0);
    assert_eq!(condition(&p, "Ready").unwrap()["reason"], "PodFailed");
    assert_eq!(kubectl_status(&client, "once").await, "Error");
}

#[tokio::test]
async fn an_oom_killed_container_is_restarted_with_its_last_state() {
    let (_server, client, _clock) = server_at(faults()).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&pods, pod("hog", "hog:v1")).await;
    let p = until_container(
        &pods,
        "hog",
        "CrashLoopBackOff",
        waiting("CrashLoopBackOff"),
    )
    .await;
    let last = &p["status"]["containerStatuses"][0]["lastState"]["terminated"];
    assert_eq!(last["reason"], "OOMKilled");
    assert_eq!(last["exitCode"], 137);
}

#[tokio::test]
async fn a_never_ready_container_runs_but_the_pod_is_not_ready() {
    let (_server, client, _clock) = server_at(faults()).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&pods, pod("stuck", "stuck:v1")).await;
    let p = until("stuck to run", || async {
        let p = get(&pods, "stuck").await;
        if p["status"]["phase"] == "Running" {
            Ok(p)
        } else {
            Err(p["status"].to_string())
        }
    })
    .await;
    assert_eq!(p["status"]["containerStatuses"][0]["ready"], false);
    let ready = condition(&p, "Ready").unwrap();
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "ContainersNotReady");
    assert_eq!(ready["message"], "containers with unready status: [app]");
    let started: Vec<String> = events(&client, "stuck")
        .await
        .into_iter()
        .map(|e| e.1)
        .collect();
    assert_eq!(
        started,
        ["Scheduled", "Pulling", "Pulled", "Created", "Started"]
    );
}

#[tokio::test]
async fn init_containers_run_before_the_containers() {
    let (_server, client, _clock) = server_at(faults()).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut good = pod("good", "nginx:1.27");
    good["spec"]["initContainers"] = json!([{"name": "migrate", "image": "busybox:1.36"}]);
    create(&pods, good).await;
    let mut bad = pod("bad", "nginx:1.27");
    bad["spec"]["initContainers"] = json!([{"name": "migrate", "image": "crash:v1"}]);
    create(&pods, bad).await;
    let p = until("good to be Ready", || async {
        let p = get(&pods, "good").await;
        match condition(&p, "Ready") {
            Some(c) if c["status"] == "True" => Ok(p),
            _ => Err(p["status"].to_string()),
        }
    })
    .await;
    let init = &p["status"]["initContainerStatuses"][0];
    assert_eq!(init["state"]["terminated"]["reason"], "Completed");
    assert_eq!(init["ready"], true);
    assert_eq!(condition(&p, "Initialized").unwrap()["status"], "True");
    // An init container that keeps failing holds the pod Pending, its containers waiting.
    let p = until("bad's init container to crash loop", || async {
        let p = get(&pods, "bad").await;
        if p["status"]["initContainerStatuses"][0]["state"]["waiting"]["reason"]
            == "CrashLoopBackOff"
        {
            Ok(p)
        } else {
            Err(p["status"].to_string())
        }
    })
    .await;
    assert_eq!(p["status"]["phase"], "Pending");
    assert_eq!(
        p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
        "PodInitializing"
    );
    let initialized = condition(&p, "Initialized").unwrap();
    assert_eq!(initialized["status"], "False");
    assert_eq!(initialized["reason"], "ContainersNotInitialized");
    assert_eq!(
        initialized["message"],
        "containers with incomplete status: [migrate]"
    );
    assert_eq!(
        kubectl_status(&client, "bad").await,
        "Init:CrashLoopBackOff"
    );
    // One that keeps running holds it at Init:0/1.
    let mut slow = pod("slow", "nginx:1.27");
    slow["spec"]["initContainers"] = json!([{"name": "wait", "image": "stuck:v1"}]);
    create(&pods, slow).await;
    let p = until("slow's init container to run", || async {
        let p = get(&pods, "slow").await;
        if p["status"]["initContainerStatuses"][0]["state"]["running"].is_object() {
            Ok(p)
        } else {
            Err(p["status"].to_string())
        }
    })
    .await;
    assert_eq!(condition(&p, "Initialized").unwrap()["status"], "False");
    assert_eq!(kubectl_status(&client, "slow").await, "Init:0/1");
}

#[tokio::test]
async fn a_readiness_gate_holds_the_pod_unready_until_its_condition_is_true() {
    let (_server, client, _clock) = server_at(faults()).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut gated = pod("gated", "nginx:1.27");
    gated["spec"]["readinessGates"] = json!([{"conditionType": "example.com/lb-ready"}]);
    create(&pods, gated).await;
    let p = until("gated to be held by its gate", || async {
        let p = get(&pods, "gated").await;
        match condition(&p, "Ready") {
            Some(c) if c["reason"] == "ReadinessGatesNotReady" => Ok(p),
            _ => Err(p["status"].to_string()),
        }
    })
    .await;
    assert_eq!(condition(&p, "ContainersReady").unwrap()["status"], "True");
    assert_eq!(
        condition(&p, "Ready").unwrap()["message"],
        "corresponding condition of pod readiness gate \"example.com/lb-ready\" does not exist."
    );
    // The load balancer's controller sets the gate's condition.
    let mut conditions = p["status"]["conditions"].as_array().unwrap().clone();
    conditions.push(json!({"type": "example.com/lb-ready", "status": "True"}));
    pods.patch_status(
        "gated",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"conditions": conditions}})),
    )
    .await
    .expect("status patched");
    until_condition(&pods, "gated", "Ready", "True").await;
}

#[tokio::test]
async fn the_pods_of_an_unreachable_node_are_evicted_after_their_toleration() {
    let (server, client, clock) = server_at(Workloads::with_nodes(1)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let nodes = api(&client, "v1", "Node", "nodes", "");
    create(&pods, pod("web", "nginx:1.27")).await;
    let mut stays = pod("stays", "nginx:1.27");
    stays["spec"]["tolerations"] = json!([{"key": "node.kubernetes.io/unreachable",
                                           "operator": "Exists", "effect": "NoExecute"}]);
    create(&pods, stays).await;
    let p = until("web to be Ready", || async {
        let p = get(&pods, "web").await;
        match condition(&p, "Ready") {
            Some(c) if c["status"] == "True" => Ok(p),
            _ => Err(p["status"].to_string()),
        }
    })
    .await;
    // DefaultTolerationSeconds gave the pod 300 s on a not-ready or unreachable node.
    let tolerations = p["spec"]["tolerations"].as_array().unwrap();
    assert!(
        tolerations.contains(&json!({"key": "node.kubernetes.io/unreachable",
        "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}))
    );

    server.set_node_ready("worker-1", false);
    clock.advance(Duration::from_secs(51));
    let node = until("worker-1 to be Unknown", || async {
        let n = get(&nodes, "worker-1").await;
        let tainted = n["spec"]["taints"].as_array().is_some_and(|t| {
            t.iter()
                .any(|t| t["key"] == "node.kubernetes.io/unreachable" && t["effect"] == "NoExecute")
        });
        match condition(&n, "Ready") {
            Some(c) if c["status"] == "Unknown" && tainted => Ok(n),
            _ => Err(n.to_string()),
        }
    })
    .await;
    let ready = condition(&node, "Ready").unwrap();
    assert_eq!(ready["reason"], "NodeStatusUnknown");
    assert_eq!(ready["message"], "Kubelet stopped posting node status.");
    let p = until("web to be unready", || async {
        let p = get(&pods, "web").await;
        match condition(&p, "Ready") {
            Some(c) if c["status"] == "False" => Ok(p),
            _ => Err(p["status"].to_string()),
        }
    })
    .await;
    assert_eq!(p["status"]["phase"], "Running");
    assert!(events(&client, "web").await.contains(&(
        "Warning".to_owned(),
        "NodeNotReady".to_owned(),
        "Node is not ready".to_owned()
    )));
    assert!(events(&client, "worker-1").await.contains(&(
        "Normal".to_owned(),
        "NodeNotReady".to_owned(),
        "Node worker-1 status is now: NodeNotReady".to_owned()
    )));

    // 300 s later the taint eviction controller deletes it; with no kubelet to confirm, it
    // stays Terminating.
    clock.advance(Duration::from_secs(301));
    let p = until("web to be Terminating", || async {
        let p = get(&pods, "web").await;
        if p["metadata"]["deletionTimestamp"].is_string() {
            Ok(p)
        } else {
            Err(p.to_string())
        }
    })
    .await;
    let disruption = condition(&p, "DisruptionTarget").unwrap();
    assert_eq!(disruption["reason"], "DeletionByTaintManager");
    assert_eq!(
        disruption["message"],
        "Taint manager: deleting due to NoExecute taint"
    );
    assert!(events(&client, "web").await.contains(&(
        "Normal".to_owned(),
        "TaintManagerEviction".to_owned(),
        "Marking for deletion Pod default/web".to_owned()
    )));
    let stays = get(&pods, "stays").await;
    assert!(stays["metadata"]["deletionTimestamp"].is_null());
    assert_eq!(kubectl_status(&client, "web").await, "Terminating");

    // Back: the node is Ready and untainted, the evicted pod is gone, the other Ready again.
    server.set_node_ready("worker-1", true);
    until("worker-1 to be Ready and untainted", || async {
        let n = get(&nodes, "worker-1").await;
        let untainted = n["spec"]["taints"].as_array().is_none_or(Vec::is_empty);
        match condition(&n, "Ready") {
            Some(c) if c["status"] == "True" && untainted => Ok(()),
            _ => Err(n.to_string()),
        }
    })
    .await;
    until("web to be gone", || async {
        let p = get(&pods, "web").await;
        if p.is_null() {
            Ok(())
        } else {
            Err(p.to_string())
        }
    })
    .await;
    until_condition(&pods, "stays", "Ready", "True").await;
}

#[tokio::test]
async fn a_pod_on_a_deleted_node_is_failed_and_removed_after_the_quarantine() {
    let (_server, client, clock) = server_at(Workloads::with_nodes(1)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut orphan = pod("orphan", "nginx:1.27");
    orphan["spec"]["nodeName"] = json!("gone");
    create(&pods, orphan).await;
    clock.advance(Duration::from_secs(41));
    until("orphan to be removed", || async {
        let p = get(&pods, "orphan").await;
        if p.is_null() {
            Ok(())
        } else {
            Err(p.to_string())
        }
    })
    .await;
}

#[tokio::test]
async fn a_terminating_pod_on_an_out_of_service_node_is_force_deleted() {
    let (server, client, clock) = server_at(Workloads::with_nodes(1)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let nodes = api(&client, "v1", "Node", "nodes", "");
    create(&pods, pod("web", "nginx:1.27")).await;
    until("web to run", || async {
        let p = get(&pods, "web").await;
        if p["status"]["phase"] == "Running" {
            Ok(())
        } else {
            Err(p["status"].to_string())
        }
    })
    .await;
    server.set_node_ready("worker-1", false);
    clock.advance(Duration::from_secs(51));
    until_condition(&nodes, "worker-1", "Ready", "Unknown").await;
    // Deleted by hand: nothing confirms it, until the operator marks the node out of service.
    pods.delete("web", &Default::default())
        .await
        .expect("deleted");
    clock.advance(Duration::from_secs(60));
    assert!(get(&pods, "web").await["metadata"]["deletionTimestamp"].is_string());
    let taint = json!({"spec": {"taints": [
        {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}]}});
    nodes
        .patch("worker-1", &PatchParams::default(), &Patch::Merge(taint))
        .await
        .expect("tainted");
    until("web to be force deleted", || async {
        let p = get(&pods, "web").await;
        if p.is_null() {
            Ok(())
        } else {
            Err(p.to_string())
        }
    })
    .await;
}
