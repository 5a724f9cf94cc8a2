//! The controller runtime on the in-process API server: phases and finalizers, status writes,
//! transition and failure events, shutdown, and the operations endpoint.

use std::sync::Arc;

use http::Method;
use kube::api::{DeleteParams, Patch, PatchParams};
use kubeward::controller::Controller;
use kubeward::observe::{Outcome, Phase};
use kubeward_testing::{Fault, FaultAction};
use kubeward_tests::*;
use serde_json::json;

#[tokio::test]
async fn phases_follow_an_objects_life_with_their_outcomes() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;

    create_widget(&client, "w1", WidgetSpec::with_mode(Mode::Complete)).await;
    eventually("init and apply passes", || async {
        observer.passes_of("w1").len() >= 2
    })
    .await;
    let stored = widgets(&client).get("w1").await.unwrap();
    assert_eq!(stored.metadata.finalizers, Some(vec![FINALIZER.to_owned()]));

    widgets(&client)
        .delete("w1", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the widget is gone", || async {
        widgets(&client).get_opt("w1").await.unwrap().is_none()
    })
    .await;
    eventually("the delete pass is recorded", || async {
        observer.passes_of("w1").len() >= 4
    })
    .await;
    assert_eq!(
        observer.passes_of("w1"),
        [
            (Phase::Init, Outcome::Completed),
            (Phase::Apply, Outcome::Completed),
            (Phase::Cleanup, Outcome::Completed),
            (Phase::Delete, Outcome::Completed),
        ]
    );
    running.stop().await;
}

#[tokio::test]
async fn a_failed_finalizer_patch_is_a_failed_init_pass() {
    let (server, client) = server_with_widgets().await;
    server.faults().add(
        Fault::new(FaultAction::Status(500))
            .method(Method::PATCH)
            .path_prefix("/apis/test.kubeward.dev/v1/namespaces/default/widgets/w1")
            .times(1),
    );
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    create_widget(&client, "w1", WidgetSpec::with_mode(Mode::Complete)).await;
    eventually("the retried init and the apply", || async {
        observer
            .passes_of("w1")
            .contains(&(Phase::Apply, Outcome::Completed))
    })
    .await;
    assert_eq!(
        observer.passes_of("w1")[..3],
        [
            (Phase::Init, Outcome::Failed),
            (Phase::Init, Outcome::Completed),
            (Phase::Apply, Outcome::Completed),
        ]
    );
    let events = events_about(&client, "w1").await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0].type_.as_deref(), Some("Warning"));
    assert_eq!(events[0].reason.as_deref(), Some("ReconcileFailed"));
    let note = events[0].note.as_deref().unwrap_or_default();
    assert!(
        note.starts_with("failed to add finalizer \"test.kubeward.dev/cleanup\": "),
        "{note}"
    );
    running.stop().await;
}

#[tokio::test]
async fn a_requeuing_cleanup_keeps_the_finalizer() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    let mut script = WidgetSpec::with_mode(Mode::Complete);
    script.cleanup = Mode::Requeue;
    create_widget(&client, "w1", script).await;
    eventually("apply", || async {
        observer.count("w1", Outcome::Completed) >= 2
    })
    .await;
    widgets(&client)
        .delete("w1", &DeleteParams::default())
        .await
        .unwrap();
    eventually("three requeuing cleanups", || async {
        observer
            .passes_of("w1")
            .iter()
            .filter(|p| **p == (Phase::Cleanup, Outcome::Waiting))
            .count()
            >= 3
    })
    .await;
    let stored = widgets(&client).get("w1").await.unwrap();
    assert!(stored.metadata.deletion_timestamp.is_some());
    assert_eq!(stored.metadata.finalizers, Some(vec![FINALIZER.to_owned()]));
    assert!(
        !observer
            .passes_of("w1")
            .iter()
            .any(|(phase, _)| *phase == Phase::Delete)
    );

    // Once cleanup completes, the finalizer goes and so does the object.
    let patch = json!({"spec": {"cleanup": "complete"}}); // only the cleanup mode changes
    widgets(&client)
        .patch("w1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually("the widget is gone", || async {
        widgets(&client).get_opt("w1").await.unwrap().is_none()
    })
    .await;
    running.stop().await;
}

#[tokio::test]
async fn a_pass_in_flight_at_shutdown_is_abandoned() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let reconciler = Widgets::default();
    let running = start_widgets(&server, &reconciler, &observer).await;
    create_widget(&client, "w1", WidgetSpec::with_mode(Mode::Hang)).await;
    eventually("apply started", || async { reconciler.started("w1") == 1 }).await;
    running.stop().await;
    assert_eq!(
        observer.passes_of("w1"),
        [
            (Phase::Init, Outcome::Completed),
            (Phase::Apply, Outcome::Abandoned)
        ]
    );
}

#[tokio::test]
async fn a_transition_publishes_one_event_and_a_conflicted_write_none() {
    let (server, client) = server_with_widgets().await;
    conflict_status_writes(&server, "w1", 1);
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    let mut script = WidgetSpec::ready(Mode::Requeue, "False", "FailedDeploy", "image pull failed");
    script.requeue_ms = Some(5);
    create_widget(&client, "w1", script).await;

    // The first apply's write met the conflict: it stored nothing and must publish nothing.
    // Then comes a steady state: 100 more passes, same condition, nothing to write or publish.
    eventually("100 steady passes", || async {
        observer
            .passes_of("w1")
            .iter()
            .filter(|(phase, _)| *phase == Phase::Apply)
            .count()
            >= 102
    })
    .await;
    running.stop().await;

    assert_eq!(
        status_writes(&server, "w1"),
        [409, 200],
        "one conflicted write, one stored, then none"
    );
    let events = events_about(&client, "w1").await;
    assert_eq!(events.len(), 1, "exactly one transition event: {events:#?}");
    let event = &events[0];
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.reason.as_deref(), Some("FailedDeploy"));
    assert_eq!(event.note.as_deref(), Some("image pull failed"));
    assert_eq!(
        event.series, None,
        "a steady state must not count into the event"
    );
    let stored = widgets(&client).get("w1").await.unwrap();
    let conditions = stored.status.unwrap().conditions;
    assert_eq!(conditions.len(), 1);
    assert_eq!(
        (conditions[0].status.as_str(), conditions[0].reason.as_str()),
        ("False", "FailedDeploy")
    );
    assert_eq!(conditions[0].observed_generation, Some(1));
}

#[tokio::test]
async fn event_types_follow_the_vocabulary_with_overrides_both_ways() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    let cases = [
        ("approval", "False", "WaitingForApproval", "Normal"),
        ("failing", "False", "FailedDeploy", "Warning"),
        ("stalled", "True", "Stalled", "Warning"),
        ("applied", "True", "Applied", "Normal"),
        ("applying", "Unknown", "Applying", "Normal"),
    ];
    for (name, status, reason, _) in cases {
        create_widget(
            &client,
            name,
            WidgetSpec::ready(Mode::Complete, status, reason, ""),
        )
        .await;
    }
    for (name, _, reason, event_type) in cases {
        eventually("the transition event", || async {
            !events_about(&client, name).await.is_empty()
        })
        .await;
        let events = events_about(&client, name).await;
        assert_eq!(events.len(), 1, "{name}: {events:#?}");
        assert_eq!(events[0].reason.as_deref(), Some(reason), "{name}");
        assert_eq!(events[0].type_.as_deref(), Some(event_type), "{name}");
        assert_eq!(events[0].reporting_controller.as_deref(), Some(CONTROLLER));
    }
    running.stop().await;
}

#[tokio::test]
async fn failure_events_follow_the_error_and_restart_after_a_recovery() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    let script = |mode, error: &str| WidgetSpec {
        mode,
        error: Some(error.into()),
        ..WidgetSpec::default()
    };
    let set_script = |spec: WidgetSpec| {
        let client = client.clone();
        async move {
            let patch = json!({ "spec": spec });
            widgets(&client)
                .patch("w1", &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .unwrap();
        }
    };
    let notes = || async {
        let mut events = events_about(&client, "w1").await;
        events.sort_by_key(|e| e.event_time.clone().map(|t| t.0));
        events
            .into_iter()
            .map(|e| e.note.unwrap_or_default())
            .collect::<Vec<_>>()
    };

    create_widget(&client, "w1", script(Mode::Fail, "secret \"db\" not found")).await;
    eventually("first failure event", || async { notes().await.len() == 1 }).await;
    // The cause changed: a new event with the new note, not the old one counted up.
    set_script(script(Mode::Fail, "license key invalid")).await;
    eventually("second failure event", || async {
        notes().await.len() == 2
    })
    .await;
    assert_eq!(
        notes().await,
        ["secret \"db\" not found", "license key invalid"]
    );
    // Recovery, then the same failure again: a new event, not a higher count on the old one.
    set_script(script(Mode::Complete, "license key invalid")).await;
    eventually("a completed pass", || async {
        observer.count("w1", Outcome::Completed) >= 2
    })
    .await;
    set_script(script(Mode::Fail, "license key invalid")).await;
    eventually("third failure event", || async { notes().await.len() == 3 }).await;
    let events = events_about(&client, "w1").await;
    assert!(
        events.iter().all(|e| e.type_.as_deref() == Some("Warning")
            && e.reason.as_deref() == Some("ReconcileFailed"))
    );
    running.stop().await;
}

#[tokio::test]
async fn the_ops_server_answers_metrics_health_and_readiness() {
    let (_server, client) = server_with_widgets().await;
    let metrics = kubeward::metrics::Metrics::builder().build().unwrap();
    let registry = prometheus::Registry::new();
    registry.register(Box::new(metrics.clone())).unwrap();
    let controller =
        Controller::new(Widgets::default(), client.clone()).with_observer(Arc::new(metrics));
    let ops = kubeward::ops::OpsServer::bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
        .with_registry(registry)
        .with_readiness(controller.readiness());
    let addr = ops.local_addr().unwrap();
    let ops = tokio::spawn(ops.serve());

    assert_eq!(http_get(addr, "/healthz").await, (200, "ok\n".into()));
    let (status, body) = http_get(addr, "/readyz").await;
    assert_eq!(status, 503, "not ready before the watch has listed: {body}");

    let running = Running::start(controller);
    create_widget(&client, "w1", WidgetSpec::with_mode(Mode::Complete)).await;
    eventually("ready", || async {
        http_get(addr, "/readyz").await.0 == 200
    })
    .await;
    eventually("the apply pass in /metrics", || async {
        http_get(addr, "/metrics").await.1.contains(
            r#"kubeward_reconcile_passes_total{controller="test.kubeward.dev/widgets",outcome="completed",phase="apply"} 1"#,
        )
    })
    .await;
    let (_, body) = http_get(addr, "/metrics").await;
    assert!(body.contains(r#"kubeward_reconcile_passes_total{controller="test.kubeward.dev/widgets",outcome="completed",phase="init"} 1"#));
    assert!(body.contains(r#"kubeward_reconcile_passes_total{controller="test.kubeward.dev/widgets",outcome="failed",phase="cleanup"} 0"#));
    assert_eq!(http_get(addr, "/nope").await.0, 404);
    running.stop().await;
    ops.abort();
}

#[tokio::test]
async fn object_state_metrics_come_from_the_cache_and_vanish_with_the_object() {
    let (_server, client) = server_with_widgets().await;
    let controller = Controller::new(Widgets::default(), client.clone());
    let registry = object_metrics_registry(&controller);
    assert!(
        !scrape(&registry).contains("kubeward_object_"),
        "no series before the cache has objects"
    );

    let running = Running::start(controller);
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "False", "WaitingForApproval", "approve it"),
    )
    .await;
    let labels = r#"controller="test.kubeward.dev/widgets",name="w1",namespace="default""#;
    eventually("the condition in the metrics", || async {
        scrape(&registry).contains(&format!(
            r#"kubeward_object_condition{{{labels},status="False",type="Ready"}} 1"#
        ))
    })
    .await;
    let text = scrape(&registry);
    for sample in [
        format!("kubeward_object_generation{{{labels}}} 1"),
        format!("kubeward_object_suspended{{{labels}}} 0"),
        format!(r#"kubeward_object_condition{{{labels},status="True",type="Ready"}} 0"#),
        format!(r#"kubeward_object_condition{{{labels},status="Unknown",type="Ready"}} 0"#),
        format!(r#"kubeward_object_condition_observed_generation{{{labels},type="Ready"}} 1"#),
    ] {
        assert!(text.contains(&sample), "missing {sample} in\n{text}");
    }
    // One series per reason of the vocabulary, classed by its declaration: the approval gate
    // is `waiting`, not `failed`.
    for (reason, class, value) in [
        ("Applying", "progressing", 0),
        ("WaitingForApproval", "waiting", 1),
        ("Applied", "done", 0),
        ("FailedDeploy", "failed", 0),
        ("Stalled", "failed", 0),
    ] {
        let sample = format!(
            r#"kubeward_object_condition_reason{{class="{class}",{labels},reason="{reason}",type="Ready"}} {value}"#
        );
        assert!(text.contains(&sample), "missing {sample} in\n{text}");
    }
    assert_eq!(
        text.matches("kubeward_object_condition_reason{").count(),
        5,
        "{text}"
    );
    // The declared info fields, one series per object.
    let info = |mode: &str| {
        format!(
            r#"kubeward_object_info{{controller="test.kubeward.dev/widgets",mode="{mode}",name="w1",namespace="default",wanted="WaitingForApproval"}} 1"#
        )
    };
    assert!(text.contains(&info("complete")), "{text}");
    assert_eq!(text.matches("kubeward_object_info{").count(), 1, "{text}");

    let stored = widgets(&client).get("w1").await.unwrap();
    let transition = stored.status.unwrap().conditions[0]
        .last_transition_time
        .0
        .as_second();
    assert!(text.contains(&format!(
        r#"kubeward_object_condition_last_transition_time_seconds{{{labels},type="Ready"}} {transition}"#
    )));

    // A field change replaces the info series: still one per object.
    widgets(&client)
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"mode": "requeue"}})),
        )
        .await
        .unwrap();
    eventually("the info series follows the spec", || async {
        scrape(&registry).contains(&info("requeue"))
    })
    .await;
    assert_eq!(
        scrape(&registry).matches("kubeward_object_info{").count(),
        1
    );

    widgets(&client)
        .delete("w1", &DeleteParams::default())
        .await
        .unwrap();
    eventually("no series left for the deleted object", || async {
        !scrape(&registry).contains(r#"name="w1""#)
    })
    .await;
    running.stop().await;
}

#[tokio::test]
async fn an_invalid_controller_name_is_a_typed_error_before_anything_runs() {
    let (server, client) = server_with_widgets().await;
    let result = Controller::new(Widgets::default(), client)
        .with_name("Widgets Controller")
        .shutdown_on(async {})
        .run()
        .await;
    let error = result.expect_err("an invalid name must not run");
    assert!(
        error.to_string().starts_with(
            "invalid controller name \"Widgets Controller\": name part must consist of"
        ),
        "{error}"
    );
    assert!(
        server.requests().is_empty(),
        "nothing was sent to the API server: {:?}",
        server.requests()
    );
}
