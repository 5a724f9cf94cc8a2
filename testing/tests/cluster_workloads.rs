//! A simulated cluster through `Cluster::builder().workloads(..)`, on whichever backend
//! `KUBEWARD_TEST_APISERVER` picks: the embedded server's controllers, scheduler and kubelet, or
//! on the real tier kube-controller-manager (all controllers), kube-scheduler and KWOK. The same
//! observations hold on both: pods land on the declared nodes and run, Deployments become
//! available.
//!
//! Real tier:
//! `KUBEWARD_TEST_APISERVER=real KUBEBUILDER_ASSETS=$HOME/.cache/kubeward/kube-assets/v1.34.12
//!  cargo test -p kubeward-testing --test cluster_workloads -- --test-threads=1`

mod workloads_support;

use std::time::{Duration, Instant};

use kube::Client;
use kubeward_testing::{Backend, Cluster, PodFault, WorkerNode, Workloads};
use serde_json::{Value, json};
use workloads_support::{api, condition, create, get, pod};

/// A cluster of `workloads` on the backend the environment names, and an admin client.
async fn cluster(workloads: Workloads) -> (Cluster, Client) {
    let started = Instant::now();
    let cluster = Cluster::builder()
        .workloads(workloads)
        .start()
        .await
        .expect("cluster starts");
    eprintln!(
        "backend: {}, started in {:?}",
        cluster.describe(),
        started.elapsed()
    );
    assert!(cluster.has_workloads());
    let client = cluster.client().expect("client");
    (cluster, client)
}

/// Polls `probe` every 50 ms until it returns `Ok`; bounded (60 s) only so that a broken
/// backend fails instead of hanging. Panics with `what` and the last value seen.
async fn until<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        match probe().await {
            Ok(value) => return value,
            Err(last) if tokio::time::Instant::now() > deadline => {
                panic!("timed out waiting for {what}; last seen: {last}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

fn is_true(object: &Value, type_: &str) -> bool {
    condition(object, type_).is_some_and(|c| c["status"] == "True")
}

fn deployment(name: &str, replicas: u32, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    })
}

#[tokio::test]
async fn a_bare_pod_runs_and_becomes_ready_on_a_declared_node() {
    let (_cluster, client) = cluster(Workloads::new().node(WorkerNode::new("worker-a"))).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&pods, pod("web", "nginx:1.27")).await;

    let pod = until("the pod Running and Ready", || async {
        let pod = get(&pods, "web").await;
        if pod["status"]["phase"] == "Running" && is_true(&pod, "Ready") {
            Ok(pod)
        } else {
            Err(pod["status"].to_string())
        }
    })
    .await;

    assert_eq!(pod["spec"]["nodeName"], "worker-a");
    for type_ in [
        "PodScheduled",
        "Initialized",
        "PodReadyToStartContainers",
        "ContainersReady",
    ] {
        assert!(is_true(&pod, type_), "{type_}: {}", pod["status"]);
    }
    let status = &pod["status"]["containerStatuses"][0];
    assert_eq!(status["name"], "app");
    assert_eq!(status["ready"], true);
    assert!(
        status["state"]["running"]["startedAt"].is_string(),
        "{status}"
    );
    // The declared node's addresses: the kubelet's InternalIP, an IP of its pod CIDR.
    assert_eq!(pod["status"]["hostIP"], "172.18.0.2");
    let ip = pod["status"]["podIP"].as_str().unwrap_or_default();
    assert!(ip.starts_with("10.244.0."), "podIP {ip}");
}

#[tokio::test]
async fn a_container_is_ready_once_its_readiness_probe_delay_passed() {
    let (_cluster, client) = cluster(Workloads::with_nodes(1)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut slow = pod("slow", "nginx:1.27");
    slow["spec"]["containers"][0]["readinessProbe"] =
        json!({"httpGet": {"path": "/", "port": 80}, "initialDelaySeconds": 2});
    create(&pods, slow).await;

    let ready = until("the pod Running but not Ready", || async {
        let pod = get(&pods, "slow").await;
        match condition(&pod, "Ready") {
            Some(ready) if pod["status"]["phase"] == "Running" => Ok(ready.clone()),
            _ => Err(pod["status"].to_string()),
        }
    })
    .await;
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "ContainersNotReady");
    assert_eq!(ready["message"], "containers with unready status: [app]");

    let pod = until("the pod Ready", || async {
        let pod = get(&pods, "slow").await;
        if is_true(&pod, "Ready") {
            Ok(pod)
        } else {
            Err(pod["status"].to_string())
        }
    })
    .await;
    let status = &pod["status"]["containerStatuses"][0];
    assert_eq!(status["ready"], true);
    let started: jiff::Timestamp = status["state"]["running"]["startedAt"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("startedAt");
    let ready_since: jiff::Timestamp = condition(&pod, "Ready")
        .and_then(|c| c["lastTransitionTime"].as_str())
        .and_then(|t| t.parse().ok())
        .expect("Ready's lastTransitionTime");
    // Timestamps have whole seconds: at least the delay, less a second of rounding.
    assert!(
        ready_since.duration_since(started) >= jiff::SignedDuration::from_secs(1),
        "started {started}, ready {ready_since}"
    );
}

#[tokio::test]
async fn a_pod_that_runs_to_completion_succeeds() {
    let (_cluster, client) = cluster(Workloads::with_nodes(1)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut once = pod("once", "busybox:1.36");
    once["spec"]["restartPolicy"] = json!("Never");
    create(&pods, once).await;

    let pod = until("the pod Succeeded", || async {
        let pod = get(&pods, "once").await;
        if pod["status"]["phase"] == "Succeeded" {
            Ok(pod)
        } else {
            Err(pod["status"].to_string())
        }
    })
    .await;
    let terminated = &pod["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(terminated["reason"], "Completed");
    assert_eq!(terminated["exitCode"], 0);
    let ready = condition(&pod, "Ready").expect("a Ready condition");
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "PodCompleted");
}

/// A Deployment of `replicas` becomes Available with every replica ready and running.
async fn deployment_becomes_available(replicas: u32) {
    let (_cluster, client) = cluster(Workloads::with_nodes(2)).await;
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let started = Instant::now();
    create(&deployments, deployment("web", replicas, "nginx:1.27")).await;

    let web = until("the Deployment Available", || async {
        let web = get(&deployments, "web").await;
        let status = &web["status"];
        let available = condition(&web, "Available")
            .is_some_and(|c| c["status"] == "True" && c["reason"] == "MinimumReplicasAvailable");
        if available && status["availableReplicas"] == replicas {
            Ok(web)
        } else {
            Err(status.to_string())
        }
    })
    .await;
    eprintln!(
        "{replicas} replicas Available after {:?}",
        started.elapsed()
    );
    assert_eq!(web["status"]["readyReplicas"], replicas);
    assert_eq!(web["status"]["updatedReplicas"], replicas);
    let available = condition(&web, "Available").expect("Available");
    assert_eq!(available["message"], "Deployment has minimum availability.");

    let pods = api(&client, "v1", "Pod", "pods", "default");
    let listed = pods.list(&Default::default()).await.expect("pods list");
    let running: Vec<_> = listed
        .items
        .iter()
        .map(|p| serde_json::to_value(p).expect("json"))
        .filter(|p| p["status"]["phase"] == "Running")
        .collect();
    assert_eq!(running.len(), replicas as usize);
    for pod in &running {
        let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
        assert!(["worker-1", "worker-2"].contains(&node), "node {node}");
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
    }
}

#[tokio::test]
async fn a_deployment_of_two_replicas_becomes_available() {
    deployment_becomes_available(2).await;
}

#[tokio::test]
async fn a_deployment_of_ten_replicas_becomes_available() {
    deployment_becomes_available(10).await;
}

#[tokio::test]
async fn an_image_that_does_not_pull_backs_off() {
    let broken = "registry.example/broken:v1";
    let workloads = Workloads::with_nodes(1).fault(PodFault::image_pull(broken));
    let (_cluster, client) = cluster(workloads).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&pods, pod("broken", broken)).await;

    let waiting = until("the container in ImagePullBackOff", || async {
        let pod = get(&pods, "broken").await;
        let waiting = &pod["status"]["containerStatuses"][0]["state"]["waiting"];
        if waiting["reason"] == "ImagePullBackOff" {
            Ok(waiting.clone())
        } else {
            Err(pod["status"].to_string())
        }
    })
    .await;
    let message = waiting["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(&format!(
            "Back-off pulling image \"{broken}\": ErrImagePull: "
        )),
        "{message}"
    );
    let pod = get(&pods, "broken").await;
    assert_eq!(pod["status"]["phase"], "Pending");
    let ready = condition(&pod, "Ready").expect("Ready");
    assert_eq!(ready["reason"], "ContainersNotReady");
    assert_eq!(ready["message"], "containers with unready status: [app]");

    // The kubelet's events of the pull, the back-off and the container's failure.
    let pulling = format!("Pulling image \"{broken}\"");
    let failed = format!("Failed to pull image \"{broken}\": rpc error: code = NotFound");
    let backing_off = format!("Back-off pulling image \"{broken}\"");
    let wanted = [
        ("Pulling", pulling.as_str()),
        ("Failed", failed.as_str()),
        ("Failed", "Error: ErrImagePull"),
        ("BackOff", backing_off.as_str()),
        ("Failed", "Error: ImagePullBackOff"),
    ];
    let events = api(&client, "v1", "Event", "events", "default");
    until("the pull's events", || async {
        let listed = events.list(&Default::default()).await.expect("events");
        let seen: Vec<(String, String)> = listed
            .items
            .iter()
            .map(|e| serde_json::to_value(e).expect("json"))
            .filter(|e| e["involvedObject"]["name"] == "broken")
            .map(|e| {
                let text = |key: &str| e[key].as_str().unwrap_or_default().to_owned();
                (text("reason"), text("message"))
            })
            .collect();
        let found = |(reason, message): &(&str, &str)| {
            seen.iter()
                .any(|(r, m)| r == reason && m.starts_with(message))
        };
        if wanted.iter().all(found) {
            Ok(())
        } else {
            Err(format!("{seen:?}"))
        }
    })
    .await;
}

#[tokio::test]
async fn a_container_that_is_never_ready_runs_unready() {
    let stuck = "registry.example/stuck:v1";
    let workloads = Workloads::with_nodes(1).fault(PodFault::never_ready(stuck));
    let (_cluster, client) = cluster(workloads).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut two = pod("two", stuck);
    two["spec"]["containers"]
        .as_array_mut()
        .expect("containers")
        .push(json!({"name": "sidecar", "image": "nginx:1.27"}));
    create(&pods, two).await;

    let pod = until("the pod Running", || async {
        let pod = get(&pods, "two").await;
        if pod["status"]["phase"] == "Running" {
            Ok(pod)
        } else {
            Err(pod["status"].to_string())
        }
    })
    .await;
    let ready = condition(&pod, "Ready").expect("Ready");
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "ContainersNotReady");
    assert_eq!(ready["message"], "containers with unready status: [app]");
    let statuses = pod["status"]["containerStatuses"]
        .as_array()
        .expect("container statuses");
    let app = statuses.iter().find(|s| s["name"] == "app").expect("app");
    assert!(app["state"]["running"].is_object(), "{app}");
    assert_eq!(app["ready"], false);
    let sidecar = statuses
        .iter()
        .find(|s| s["name"] == "sidecar")
        .expect("sidecar");
    assert_eq!(sidecar["ready"], true);
}

#[tokio::test]
async fn a_fault_pattern_is_refused_on_the_real_tier() {
    if Backend::from_env().expect("backend") == Backend::Embedded {
        eprintln!("skipped on the embedded server: it plays fault patterns");
        return;
    }
    let workloads = Workloads::with_nodes(1).fault(PodFault::image_pull("registry.example/*"));
    let error = Cluster::builder()
        .workloads(workloads)
        .start()
        .await
        .expect_err("a pattern cannot be played by KWOK");
    assert!(error.to_string().contains("exact image"), "{error}");
}

#[tokio::test]
async fn a_node_not_declared_or_no_simulated_cluster_is_refused_by_name() {
    let (cluster, _client) = cluster(Workloads::with_nodes(1)).await;
    let error = cluster
        .set_node_ready("worker-9", false)
        .await
        .expect_err("no kubelet to stop");
    assert_eq!(
        error.to_string(),
        "Cluster::set_node_ready(\"worker-9\"): not a declared node (declared: worker-1)"
    );
    let bare = Cluster::start().await.expect("cluster starts");
    let error = bare
        .set_node_ready("worker-1", false)
        .await
        .expect_err("no simulated cluster");
    assert!(
        error.to_string().contains("no simulated cluster runs"),
        "{error}"
    );
}

#[tokio::test]
async fn elapse_refuses_an_embedded_server_started_with_its_own_clock() {
    let server = kubeward_testing::ApiServer::start()
        .await
        .expect("server starts");
    let cluster = Cluster::from(server);
    let error = cluster
        .elapse(Duration::from_secs(1))
        .await
        .expect_err("its clock is its owner's");
    assert!(error.to_string().contains("its own clock"), "{error}");
}

#[tokio::test]
async fn a_crashing_container_restarts_when_each_doubling_back_off_ends() {
    const CRASHING: &str = "registry.example/app:crashing";
    let (cluster, client) =
        cluster(Workloads::with_nodes(1).fault(PodFault::crash_loop(CRASHING))).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&pods, pod("web", CRASHING)).await;
    // The container's status once it waits out the back-off after `restarts` restarts.
    let backing_off = |restarts: i64| {
        let pods = pods.clone();
        async move {
            let p = get(&pods, "web").await;
            let status = &p["status"]["containerStatuses"][0];
            let waiting = &status["state"]["waiting"];
            if waiting["reason"] == "CrashLoopBackOff" && status["restartCount"] == restarts {
                Ok(status.clone())
            } else {
                Err(status.to_string())
            }
        }
    };
    let first = until("the first back-off", || backing_off(1)).await;
    let uid = get(&pods, "web").await["metadata"]["uid"].clone();
    let pod_desc = format!("web_default({})", uid.as_str().unwrap());
    assert_eq!(
        first["state"]["waiting"]["message"],
        format!("back-off 10s restarting failed container=app pod={pod_desc}")
    );
    assert_eq!(first["lastState"]["terminated"]["reason"], "Error");
    assert_eq!(first["lastState"]["terminated"]["exitCode"], 1);
    assert_eq!(first["ready"], false);
    cluster
        .elapse(Duration::from_secs(10))
        .await
        .expect("time passes");
    let second = until("the second back-off", || backing_off(2)).await;
    assert_eq!(
        second["state"]["waiting"]["message"],
        format!("back-off 20s restarting failed container=app pod={pod_desc}")
    );
    assert_eq!(second["containerID"], "kubeward://app-2");
    assert_eq!(second["lastState"]["terminated"]["reason"], "Error");
}
