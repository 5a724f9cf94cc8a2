//! The example's scripted scenario, end to end on the API server `KUBEWARD_TEST_APISERVER` picks
//! (embedded by default; `scripts/test` runs it again on the real kube-apiserver): the events it
//! publishes (one per transition, typed by the vocabulary), the status it leaves, the metrics.

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
        ["Normal"; 2],
        "generations 1 and 3"
    );
    assert_eq!(type_of("ReadyToPromote"), ["Normal"; 2]);
    assert_eq!(type_of("Promoting"), ["Normal"; 2]);
    assert_eq!(type_of("Applied"), ["Normal"; 2]);
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
            .is_some_and(|n| n.contains("registry.example/web:broken not found"))
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
        passes("apply", "waiting") >= 6.0,
        "one per staged transition"
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
    assert!(steps("render", "failed") >= 3.0);
    assert_eq!(steps("promote", "completed"), 2.0);
    assert_eq!(steps("delete", "completed"), 1.0);
    let publishes = |type_, result| {
        sum(
            m,
            "kubeward_event_publishes_total",
            &[("type", type_), ("result", result)],
        )
    };
    assert_eq!(publishes("Normal", "created"), 11.0);
    assert!(publishes("Warning", "aggregated") >= 2.0);
    // Each of the two promotions prunes the candidate it promoted; nothing failed.
    let children = |operation, result| {
        sum(
            m,
            "kubeward_child_writes_total",
            &[
                ("kind", "ConfigMap"),
                ("operation", operation),
                ("result", result),
            ],
        )
    };
    assert_eq!(children("prune", "ok"), 2.0);
    for operation in ["apply", "delete", "prune"] {
        assert_eq!(children(operation, "failed"), 0.0, "{operation}");
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
    assert!(output.contains("Scenario completed"), "{output}");
}

/// A generation whose candidate cannot be applied (the API server answers its server-side apply
/// with 500) stays Applying
/// and, past `spec.timeoutSeconds`, is declared RolloutTimeout with a Warning.
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
            .resource("", "configmaps"),
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
    assert_eq!(condition.message, "generation 1 was not ready within 1s");
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
