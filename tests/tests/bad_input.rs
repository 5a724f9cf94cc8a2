//! Bad input, each with a clear typed error and nothing lost: oversized and multi-byte messages,
//! names that make long event names, an invalid reason computed at run time, condition lists
//! someone else wrote with duplicate types, and a stored reason unknown to the vocabulary.

use kube::api::Api;
use kubeward::events::{EventRecorder, Reporter};
use kubeward::limits::{CONDITION_MESSAGE_MAX_BYTES, EVENT_NOTE_MAX_BYTES};
use kubeward::observe::{Outcome, Phase};
use kubeward_tests::*;
use serde_json::json;

#[tokio::test]
async fn oversized_multibyte_messages_are_cut_at_char_boundaries_not_rejected() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    // 3-byte chars: 40,002 bytes, over both the condition (32 KiB) and the note (1 KiB) limits.
    let message = "€".repeat(13_334);
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "False", "FailedDeploy", &message),
    )
    .await;
    eventually("the transition event", || async {
        !events_about(&client, "w1").await.is_empty()
    })
    .await;
    running.stop().await;

    let widget = Api::<Widget>::namespaced(client.clone(), "default")
        .get("w1")
        .await
        .unwrap();
    let stored = &widget.status.unwrap().conditions[0].message;
    assert!(
        stored.len() <= CONDITION_MESSAGE_MAX_BYTES
            && stored.len() > CONDITION_MESSAGE_MAX_BYTES - 3
    );
    assert!(message.starts_with(stored.as_str()));
    let note = events_about(&client, "w1").await[0].note.clone().unwrap();
    assert!(note.len() <= EVENT_NOTE_MAX_BYTES, "{}", note.len());
    assert!(note.ends_with('…'));
    assert!(message.starts_with(note.trim_end_matches('…')));
}

#[tokio::test]
async fn a_name_too_long_for_an_event_name_still_gets_its_events() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    // A valid 253-byte object name: `<name>.<suffix>` would exceed the event name limit.
    let name = format!(
        "{}.{}.{}.{}",
        "a".repeat(63),
        "b".repeat(63),
        "c".repeat(63),
        "d".repeat(61)
    );
    assert_eq!(name.len(), 253);
    let failing = WidgetSpec {
        mode: Mode::Fail,
        error: Some("boom".into()),
        ..WidgetSpec::default()
    };
    create_widget(&client, &name, failing).await;
    eventually("the failure event", || async {
        !events_about(&client, &name).await.is_empty()
    })
    .await;
    running.stop().await;
    let event = &events_about(&client, &name).await[0];
    let event_name = event.metadata.name.as_deref().unwrap();
    assert!(event_name.len() <= 253, "{event_name}");
    assert_eq!(event.reason.as_deref(), Some("ReconcileFailed"));
}

#[tokio::test]
async fn an_invalid_reason_computed_at_run_time_is_a_typed_error_that_fails_the_pass() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "False", "not a reason!", ""),
    )
    .await;
    eventually("the failure event", || async {
        !events_about(&client, "w1").await.is_empty()
    })
    .await;
    running.stop().await;
    assert!(
        observer
            .passes_of("w1")
            .contains(&(Phase::Apply, Outcome::Failed))
    );
    let note = events_about(&client, "w1").await[0].note.clone().unwrap();
    assert!(
        note.starts_with(
            "invalid condition reason \"not a reason!\": a condition reason must start"
        ),
        "{note}"
    );
    // Nothing was written: the invalid condition never reached the status.
    let widget = Api::<Widget>::namespaced(client.clone(), "default")
        .get("w1")
        .await
        .unwrap();
    assert!(widget.status.is_none_or(|s| s.conditions.is_empty()));
}

#[tokio::test]
async fn duplicate_condition_types_written_by_someone_else_are_collapsed() {
    let (server, client) = server_with_widgets().await;
    let widgets = widgets(&client);
    create_widget(&client, "w1", WidgetSpec::default()).await;
    let condition = |reason: &str| {
        json!({"type": "Ready", "status": "False", "reason": reason, "message": "",
               "lastTransitionTime": "2026-01-01T00:00:00Z"})
    };
    write_conditions(&client, "w1", json!([condition("Old"), condition("Older")])).await;

    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    set_spec(
        &client,
        "w1",
        &WidgetSpec::ready(Mode::Complete, "True", "Applied", ""),
    )
    .await;
    eventually("the status is rewritten", || async {
        let conditions = widgets.get("w1").await.unwrap().status.unwrap().conditions;
        conditions.iter().any(|c| c.reason == "Applied")
    })
    .await;
    running.stop().await;
    let conditions = widgets.get("w1").await.unwrap().status.unwrap().conditions;
    assert_eq!(conditions.len(), 1, "{conditions:#?}");
    assert_eq!(
        (conditions[0].status.as_str(), conditions[0].reason.as_str()),
        ("True", "Applied")
    );
}

#[tokio::test]
async fn a_stored_reason_unknown_to_the_vocabulary_is_a_state_not_a_panic() {
    let (server, client) = server_with_widgets().await;
    create_widget(&client, "w1", WidgetSpec::default()).await;
    // An older controller version wrote a reason this one does not know.
    let legacy = json!([{"type": "Ready", "status": "False", "reason": "LegacyReason",
        "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]);
    write_conditions(&client, "w1", legacy).await;

    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    set_spec(
        &client,
        "w1",
        &WidgetSpec::ready(Mode::Complete, "Unknown", "Applying", "rolling out"),
    )
    .await;
    eventually("the transition out of the unknown reason", || async {
        events_about(&client, "w1")
            .await
            .iter()
            .any(|e| e.reason.as_deref() == Some("Applying"))
    })
    .await;
    running.stop().await;
    // The init pass may meet a 409 from the spec patch racing it (a requeue, not a failure);
    // no pass fails on the unknown reason.
    let passes = observer.passes_of("w1");
    assert!(
        passes.iter().all(|(_, o)| *o != Outcome::Failed),
        "{passes:?}"
    );
    assert!(
        passes.contains(&(Phase::Apply, Outcome::Completed)),
        "{passes:?}"
    );
}

#[tokio::test]
async fn an_event_about_an_object_without_kind_name_or_uid_is_a_typed_error_and_sends_nothing() {
    use k8s_openapi::api::core::v1::ObjectReference;
    use kubeward::events::{Event, PublishError};
    let (server, client) = server_with_widgets().await;
    let recorder = EventRecorder::new(client, Reporter::new(CONTROLLER, "test-pod").unwrap());
    let stored = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("ConfigMap".into()),
        namespace: Some("default".into()),
        name: Some("web".into()),
        uid: Some("6a1c4a8e-0000-4000-8000-000000000001".into()),
        ..ObjectReference::default()
    };
    let event = Event::normal("Rendered", "Reconcile");
    for (missing, regarding) in [
        (
            "uid",
            ObjectReference {
                uid: None,
                ..stored.clone()
            },
        ),
        (
            "name",
            ObjectReference {
                name: Some(String::new()),
                ..stored.clone()
            },
        ),
        (
            "kind",
            ObjectReference {
                kind: None,
                ..stored.clone()
            },
        ),
    ] {
        let error = recorder.publish(&event, &regarding).await.unwrap_err();
        assert!(
            matches!(error, PublishError::InvalidRegarding { missing: m } if m == missing),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "event not published: the regarding object has no {missing}; publish events about stored objects"
            )
        );
    }
    assert!(
        server.requests().iter().all(|r| !r.path.contains("events")),
        "nothing was sent"
    );
    recorder
        .publish(&event, &stored)
        .await
        .expect("a stored object's event publishes");
}
