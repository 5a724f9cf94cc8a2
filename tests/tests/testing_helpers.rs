//! kubeward-testing's helpers for controller tests: waiting for a condition or an event.

use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::ResourceExt;
use kubeward::events::{Event, EventRecorder, Reporter};
use kubeward_testing::{ConditionMatch, EventMatch, WaitError, wait_for_condition, wait_for_event};
use kubeward_tests::{
    Mode, WidgetSpec, create_widget, server_with_widgets, widgets, write_conditions,
};
use serde_json::json;

#[tokio::test]
async fn wait_for_condition_returns_once_the_condition_is_written() {
    let (_server, client) = server_with_widgets().await;
    create_widget(&client, "web", WidgetSpec::with_mode(Mode::Complete)).await;
    let writer = {
        let client = client.clone();
        tokio::spawn(async move {
            write_conditions(
                &client,
                "web",
                json!([{"type": "Ready", "status": "Unknown", "reason": "Applying",
                        "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]),
            )
            .await;
            write_conditions(
                &client,
                "web",
                json!([{"type": "Ready", "status": "True", "reason": "Applied",
                        "message": "done", "lastTransitionTime": "2026-01-01T00:00:01Z"}]),
            )
            .await;
        })
    };
    let wanted = ConditionMatch::new("Ready")
        .status("True")
        .reason("Applied");
    let widget = wait_for_condition(&widgets(&client), "web", &wanted, Duration::from_secs(30))
        .await
        .expect("the condition is reached");
    writer.await.unwrap();
    let status = widget.status.expect("status");
    assert_eq!(status.conditions[0].reason, "Applied");
}

#[tokio::test]
async fn wait_for_condition_fails_with_what_it_last_saw() {
    let (_server, client) = server_with_widgets().await;
    create_widget(&client, "web", WidgetSpec::with_mode(Mode::Complete)).await;
    write_conditions(
        &client,
        "web",
        json!([{"type": "Ready", "status": "False", "reason": "FailedDeploy",
                "message": "image not found", "lastTransitionTime": "2026-01-01T00:00:00Z"}]),
    )
    .await;
    let wanted = ConditionMatch::new("Ready").status("True");
    let err = wait_for_condition(
        &widgets(&client),
        "web",
        &wanted,
        Duration::from_millis(300),
    )
    .await
    .expect_err("never reached");
    assert!(matches!(err, WaitError::Timeout { .. }));
    let text = err.to_string();
    assert!(
        text.contains("condition Ready=True on web") && text.contains("FailedDeploy"),
        "{text}"
    );
}

#[tokio::test]
async fn wait_for_event_finds_the_event_by_reason_and_type() {
    let (_server, client) = server_with_widgets().await;
    let widget = create_widget(&client, "web", WidgetSpec::with_mode(Mode::Complete)).await;
    let reporter = Reporter::new("test.kubeward.dev/widgets", "pod-0").unwrap();
    let recorder = EventRecorder::new(client.clone(), reporter);
    let regarding = ObjectReference {
        api_version: Some("test.kubeward.dev/v1".into()),
        kind: Some("Widget".into()),
        namespace: Some("default".into()),
        name: Some("web".into()),
        uid: widget.uid(),
        ..Default::default()
    };
    let approval = Event::normal("WaitingForApproval", "Apply").with_note("approve it");
    recorder.publish(&approval, &regarding).await.unwrap();

    let wanted = EventMatch::regarding("web")
        .reason("WaitingForApproval")
        .type_("Normal");
    let event = wait_for_event(&client, "default", &wanted, Duration::from_secs(30))
        .await
        .expect("the event is stored");
    assert_eq!(event.note.as_deref(), Some("approve it"));
    assert_eq!(
        event.reporting_controller.as_deref(),
        Some("test.kubeward.dev/widgets")
    );

    let warning = EventMatch::regarding("web")
        .reason("WaitingForApproval")
        .type_("Warning");
    let err = wait_for_event(&client, "default", &warning, Duration::from_millis(300))
        .await
        .expect_err("no Warning was published");
    assert!(
        err.to_string().contains("Normal WaitingForApproval"),
        "the error lists what was seen: {err}"
    );
}
