//! The example's scripted scenario, end to end on the API server `KUBEWARD_TEST_APISERVER` picks
//! (embedded by default; `scripts/test` runs it again on the real kube-apiserver), with its
//! simulated cluster: the events it publishes (one per transition, typed by the vocabulary, the
//! failure naming the pod and the kubelet's reason), the status and the Deployment it leaves,
//! the metrics.

use kube::runtime::events::EventType;
use kubeward_examples::rollouts::UpToDate;
use kubeward_examples::rollouts::operator::parse_samples;
use kubeward_examples::rollouts::scenario::{ScenarioOptions, cluster, run_on};

fn sum(metrics: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    parse_samples(metrics, name)
        .into_iter()
        .filter(|(l, _)| {
            labels
                .iter()
                .all(|(k, v)| l.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|(_, v)| v)
        .sum()
}

#[tokio::test]
async fn the_scenario_publishes_one_typed_event_per_transition_and_ends_applied() {
    let mut output = Vec::new();
    let cluster = cluster().await.expect("cluster");
    let report = run_on(&cluster, &ScenarioOptions::default(), &mut output)
        .await
        .unwrap_or_else(|e| panic!("scenario failed: {e}\n{}", String::from_utf8_lossy(&output)));
    let output = String::from_utf8_lossy(&output);

    // Event types per reason: the vocabulary's (WaitingForApproval is a Normal False).
    let type_of = |reason: &str| -> Vec<String> {
        report
            .events
            .iter()
            .filter(|e| e.reason.as_deref() == Some(reason))
            .map(|e| e.type_.clone().unwrap_or_default())
            .collect()
    };
    assert_eq!(type_of("Applying"), ["Normal"; 3], "generations 1, 2, 3");
    assert_eq!(
        type_of("WaitingForApproval"),
        ["Normal"; 3],
        "generations 1, 2 and 3"
    );
    assert_eq!(type_of("ReadyToPromote"), ["Normal"; 3]);
    assert_eq!(type_of("Promoting"), ["Normal"; 3]);
    assert_eq!(type_of("Applied"), ["Normal"; 2], "generations 1 and 3");
    assert_eq!(
        type_of("FailedDeploy"),
        ["Warning"],
        "one event for one transition"
    );
    assert_eq!(type_of("RolloutTimeout"), Vec::<String>::new());
    // ... which is what the declaration says.
    for reason in [
        UpToDate::Applying,
        UpToDate::WaitingForApproval,
        UpToDate::ReadyToPromote,
        UpToDate::Promoting,
        UpToDate::Applied,
        UpToDate::FailedDeploy,
    ] {
        let expected = match reason.event_type() {
            EventType::Warning => "Warning",
            EventType::Normal => "Normal",
        };
        assert!(
            type_of(reason.reason()).iter().all(|t| t == expected),
            "{reason:?}"
        );
    }
    // The failure names the pod and what its kubelet says.
    let failed = report
        .events
        .iter()
        .find(|e| e.reason.as_deref() == Some("FailedDeploy"))
        .and_then(|e| e.note.as_deref())
        .expect("a FailedDeploy event");
    let (pod, kubelet) = failed
        .strip_prefix("pod ")
        .and_then(|rest| rest.split_once(": "))
        .unwrap_or_else(|| panic!("names no pod: {failed}"));
    assert!(pod.starts_with("web-"), "{failed}");
    assert!(
        kubelet.starts_with("ErrImagePull: ")
            || kubelet.starts_with(
                "ImagePullBackOff: Back-off pulling image \"registry.example/web:broken\""
            ),
        "{failed}"
    );
    assert!(kubelet.contains("registry.example/web:broken"), "{failed}");
    // The retries of the failing image: one Warning series, not one event per retry.
    let failures: Vec<_> = report
        .events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("ReconcileFailed"))
        .collect();
    assert_eq!(failures.len(), 1, "{failures:#?}");
    assert_eq!(failures[0].type_.as_deref(), Some("Warning"));
    assert!(failures[0].series.as_ref().is_some_and(|s| s.count >= 3));
    assert!(
        failures[0]
            .note
            .as_deref()
            .is_some_and(|n| n
                == format!(
                    "cannot deploy generation 2: pod {pod} cannot pull image registry.example/web:broken"
                )),
        "{failures:#?}"
    );

    // The status before deletion: generation 3 applied; generation 4 (suspend) not acted on.
    let condition = report
        .status
        .conditions
        .iter()
        .find(|c| c.type_ == "UpToDate")
        .expect("UpToDate condition");
    assert_eq!(
        (condition.status.as_str(), condition.reason.as_str()),
        ("True", "Applied")
    );
    assert_eq!(condition.observed_generation, Some(3));
    assert_eq!(report.generation, 4);
    assert_eq!(
        report.status.live_image.as_deref(),
        Some("registry.example/web:1.1")
    );
    assert!(report.deleted);

    // The Deployment it left: generation 3's image on every replica, all available.
    let deployment = &report.deployment;
    let container = &deployment
        .spec
        .as_ref()
        .expect("spec")
        .template
        .spec
        .as_ref()
        .expect("pod spec")
        .containers[0];
    assert_eq!(container.image.as_deref(), Some("registry.example/web:1.1"));
    let status = deployment.status.clone().expect("status");
    assert_eq!(
        (
            status.replicas,
            status.updated_replicas,
            status.available_replicas
        ),
        (Some(3), Some(3), Some(3))
    );
    let conditions: Vec<(String, String, String)> = status
        .conditions
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.type_, c.status, c.reason.unwrap_or_default()))
        .collect();
    for expected in [
        ("Available", "True", "MinimumReplicasAvailable"),
        ("Progressing", "True", "NewReplicaSetAvailable"),
    ] {
        assert!(
            conditions
                .iter()
                .any(|(t, s, r)| (t.as_str(), s.as_str(), r.as_str()) == expected),
            "{conditions:?}"
        );
    }

    // Metrics: every phase and outcome the scenario goes through, steps, event publishes.
    let m = &report.metrics;
    let passes = |phase, outcome| {
        sum(
            m,
            "kubeward_reconcile_passes_total",
            &[("phase", phase), ("outcome", outcome)],
        )
    };
    assert_eq!(passes("init", "completed"), 1.0);
    assert!(
        passes("apply", "waiting") >= 9.0,
        "one per staged transition: new generation, approved, promoting (three generations)"
    );
    assert!(passes("apply", "failed") >= 3.0);
    assert!(passes("apply", "skipped") >= 1.0);
    assert_eq!(passes("cleanup", "completed"), 1.0);
    assert_eq!(passes("delete", "completed"), 1.0);
    let steps = |step, outcome| {
        sum(
            m,
            "kubeward_reconcile_step_duration_seconds_count",
            &[("step", step), ("outcome", outcome)],
        )
    };
    // Each generation staged (applied and verified at least once), promoted (at least once: a
    // promotion follows the rollout pass by pass), generation 1's children restored twice.
    assert!(steps("apply", "completed") >= 3.0);
    assert!(steps("verify", "completed") >= 3.0);
    assert!(steps("promote", "completed") >= 3.0);
    assert!(steps("restore", "completed") >= 2.0);
    assert_eq!(steps("delete", "completed"), 1.0);
    for step in ["render", "apply", "verify", "promote", "restore", "delete"] {
        assert_eq!(steps(step, "failed"), 0.0, "{step}");
    }
    let publishes = |type_, result| {
        sum(
            m,
            "kubeward_event_publishes_total",
            &[("type", type_), ("result", result)],
        )
    };
    assert_eq!(publishes("Normal", "created"), 14.0);
    assert!(publishes("Warning", "aggregated") >= 2.0);
    // The cleanup deletes each child once; no write of a child failed.
    let children = |kind, operation, result| {
        sum(
            m,
            "kubeward_child_writes_total",
            &[("kind", kind), ("operation", operation), ("result", result)],
        )
    };
    for kind in ["Deployment", "Service"] {
        assert_eq!(children(kind, "delete", "ok"), 1.0, "{kind}");
        assert!(children(kind, "apply", "ok") >= 6.0, "{kind}");
        for operation in ["apply", "delete", "prune"] {
            assert_eq!(
                children(kind, operation, "failed"),
                0.0,
                "{kind} {operation}"
            );
        }
    }

    // What the user saw.
    assert!(
        output.contains("Type     Reason              Age"),
        "{output}"
    );
    assert!(
        output.contains(" (x"),
        "a series is shown with its count:\n{output}"
    );
    assert!(
        output.contains("Replicas:  3 desired | 1 updated | 4 total | 3 available | 1 unavailable"),
        "generation 1 keeps serving while generation 2's pod cannot pull its image:\n{output}"
    );
    assert!(output.contains("Scenario completed"), "{output}");
}

/// A generation whose Deployment cannot be applied (the API server answers its server-side apply
/// with 500) stays Applying and, past `spec.timeoutSeconds`, is declared RolloutTimeout with a
/// Warning.
#[tokio::test]
async fn a_rollout_stuck_applying_past_its_timeout_is_rollout_timeout_with_a_warning() {
    use http::Method;
    use k8s_openapi::api::events::v1::Event;
    use kube::api::{Api, ListParams, PostParams};
    use kubeward_examples::rollouts::scenario::RunningOperator;
    use kubeward_examples::rollouts::{Rollout, RolloutSpec, Strategy};
    use kubeward_testing::{Fault, FaultAction};

    let server = cluster().await.expect("cluster");
    let client = server.client().expect("client");
    server.faults().add(
        Fault::new(FaultAction::Status(500))
            .method(Method::PATCH)
            .resource("apps", "deployments"),
    );
    let operator = RunningOperator::start(client.clone(), &ScenarioOptions::default().operator())
        .expect("operator");
    let rollouts: Api<Rollout> = Api::namespaced(client.clone(), "default");
    let mut rollout = Rollout::new(
        "slow",
        RolloutSpec {
            image: "registry.example/slow:1.0".into(),
            replicas: 1,
            strategy: Strategy::Automatic,
            timeout_seconds: 1,
            suspend: false,
        },
    );
    rollout.metadata.namespace = Some("default".into());
    rollouts
        .create(&PostParams::default(), &rollout)
        .await
        .expect("create");

    // Bounded only so that a broken operator fails the test instead of hanging it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let condition = loop {
        let stored = rollouts.get("slow").await.expect("get");
        if let Some(c) = stored.up_to_date().filter(|c| c.reason == "RolloutTimeout") {
            break c.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no RolloutTimeout: {:?}",
            stored.status
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(condition.status, "False");
    assert_eq!(condition.message, "generation 1 was not staged within 1s");
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let list = events.list(&ListParams::default()).await.expect("events");
        let timeout = list
            .items
            .iter()
            .find(|e| e.reason.as_deref() == Some("RolloutTimeout"));
        if let Some(event) = timeout {
            assert_eq!(event.type_.as_deref(), Some("Warning"));
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no RolloutTimeout event"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    operator.stop().await.expect("stop");
}

/// A pod that fails after its Deployment stopped changing (on a cluster without nodes, its
/// container status written as a kubelet would) wakes the operator through its watch of the pods:
/// the generation goes FailedDeploy naming the pod and the kubelet's reason and message, with
/// one Warning event.
#[tokio::test]
async fn a_pod_failing_after_its_deployment_settled_wakes_the_operator() {
    use k8s_openapi::api::events::v1::Event;
    use kube::api::{Api, ListParams};
    use kubeward_examples::rollouts::scenario::{RunningOperator, cluster_with, drive_pod_failure};
    use kubeward_testing::{Backend, Workloads};

    let server = cluster_with(Backend::from_env().expect("backend"), Workloads::new())
        .await
        .expect("cluster");
    let client = server.client().expect("client");
    let options = ScenarioOptions::default();
    let operator = RunningOperator::start(client.clone(), &options.operator()).expect("operator");
    let mut output = Vec::new();
    let result = drive_pod_failure(&client, &operator, &options, &mut output).await;
    operator.stop().await.expect("stop");
    if let Err(error) = result {
        panic!("{error}\n{}", String::from_utf8_lossy(&output));
    }
    let events: Api<Event> = Api::namespaced(client, "default");
    let failed: Vec<Event> = events
        .list(&ListParams::default())
        .await
        .expect("events")
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("FailedDeploy"))
        .collect();
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0].type_.as_deref(), Some("Warning"));
    let note = failed[0].note.as_deref().unwrap_or_default();
    assert!(
        note.starts_with("pod web-")
            && note.ends_with(
                ": ErrImagePull: failed to pull image \"registry.example/web:1.0\": not found"
            ),
        "{note}"
    );
}
