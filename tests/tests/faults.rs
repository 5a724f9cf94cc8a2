//! The controller under faults of the API server, each case checking the invariants: no
//! transition event for a status that did not persist, no lost or double-counted event series,
//! no heartbeat events, no wedged controller, every pass observed with the right outcome.

use std::time::Duration;

use http::Method;
use k8s_openapi::api::events::v1::Event as StoredEvent;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kubeward::controller::Controller;
use kubeward::observe::{Outcome, Phase};
use kubeward_testing::{Fault, FaultAction};
use kubeward_tests::*;
use serde_json::json;

fn events_api_fault(action: FaultAction) -> Fault {
    Fault::new(action).resource("events.k8s.io", "events")
}

async fn stored_ready(client: &kube::Client, name: &str) -> Option<(String, String)> {
    let widget = Api::<Widget>::namespaced(client.clone(), "default")
        .get(name)
        .await
        .unwrap();
    let conditions = widget.status?.conditions;
    conditions
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| (c.status, c.reason))
}

/// Events API failing or hanging: publishes fail with typed errors within the bound, passes go
/// on with the right outcomes and their status writes, and once the API is back, the next
/// transition is published once — nothing double-counted.
#[tokio::test]
async fn a_failing_or_hanging_events_api_never_wedges_the_controller() {
    for action in [
        FaultAction::Hang,
        FaultAction::Status(404),
        FaultAction::Status(403),
        FaultAction::Status(429),
        FaultAction::Status(500),
        FaultAction::Latency(Duration::from_millis(100)),
    ] {
        let (server, client) = server_with_widgets().await;
        server.faults().add(events_api_fault(action.clone()));
        let observer = Recording::new();
        let running = start_widgets(&server, &Widgets::default(), &observer).await;

        create_widget(
            &client,
            "w1",
            WidgetSpec::ready(Mode::Complete, "Unknown", "Applying", "rolling out"),
        )
        .await;
        eventually("the status is written despite the events API", || async {
            stored_ready(&client, "w1").await == Some(("Unknown".into(), "Applying".into()))
        })
        .await;
        // The controller is not wedged: a spec change is reconciled promptly.
        set_spec(
            &client,
            "w1",
            &WidgetSpec::ready(Mode::Complete, "True", "Applied", "done"),
        )
        .await;
        eventually("the next transition is reconciled", || async {
            stored_ready(&client, "w1").await == Some(("True".into(), "Applied".into()))
        })
        .await;
        assert!(
            observer
                .passes_of("w1")
                .iter()
                .all(|(_, outcome)| *outcome == Outcome::Completed),
            "{action:?}: {:?}",
            observer.passes_of("w1")
        );

        server.faults().clear();
        set_spec(
            &client,
            "w1",
            &WidgetSpec::ready(Mode::Complete, "False", "FailedDeploy", "image pull failed"),
        )
        .await;
        eventually("the transition after recovery is published", || async {
            events_about(&client, "w1")
                .await
                .iter()
                .any(|e| e.reason.as_deref() == Some("FailedDeploy"))
        })
        .await;
        running.stop().await; // flushes pending series
        let events = events_about(&client, "w1").await;
        let failed: Vec<&StoredEvent> = events
            .iter()
            .filter(|e| e.reason.as_deref() == Some("FailedDeploy"))
            .collect();
        assert_eq!(
            failed.len(),
            1,
            "{action:?}: exactly one event for one transition: {events:#?}"
        );
        assert_eq!(failed[0].series, None, "{action:?}: not counted twice");
        let applied = events
            .iter()
            .filter(|e| e.reason.as_deref() == Some("Applied"))
            .count();
        match action {
            // A publish that timed out mid-request (a hang, or kube's client retrying 429s past
            // the recorder's timeout) or met a server error is completed by the series' next
            // write once the API answers again: the event is late, never lost, never doubled.
            FaultAction::Hang
            | FaultAction::Latency(_)
            | FaultAction::Status(429)
            | FaultAction::Status(500) => {
                assert_eq!(applied, 1, "{action:?}: {events:#?}")
            }
            // An event the API refused (a client error) is not published later as if it had
            // been.
            _ => assert_eq!(applied, 0, "{action:?}: {events:#?}"),
        }
    }
}

/// A concurrent writer keeps changing the object: status writes conflict, nothing that did not
/// persist is published, and the controller converges to exactly one event per transition.
#[tokio::test]
async fn conflicting_status_writes_publish_only_what_persisted() {
    let (server, client) = server_with_widgets().await;
    conflict_status_writes(&server, "w1", 5);
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "False", "WaitingForApproval", "approve me"),
    )
    .await;
    // A concurrent writer touching labels while the controller works.
    for i in 0..5 {
        let patch = json!({"metadata": {"labels": {"touched": format!("{i}")}}});
        Api::<Widget>::namespaced(client.clone(), "default")
            .patch("w1", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
    }
    eventually("the status persists", || async {
        stored_ready(&client, "w1").await == Some(("False".into(), "WaitingForApproval".into()))
    })
    .await;
    eventually("the transition event", || async {
        !events_about(&client, "w1").await.is_empty()
    })
    .await;
    running.stop().await;
    let writes = status_writes(&server, "w1");
    // The injected conflicts meet the writes and the dry runs that resolve a conflicted write.
    let conflicts = server
        .requests()
        .iter()
        .filter(|r| {
            r.method == http::Method::PATCH && r.path == status_path("w1") && r.status == 409
        })
        .count();
    assert_eq!(conflicts, 5);
    assert_eq!(
        writes.iter().filter(|s| **s == 200).count(),
        1,
        "{writes:?}"
    );
    let events = events_about(&client, "w1").await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(
        events[0].type_.as_deref(),
        Some("Normal"),
        "an approval gate is not a Warning"
    );
    assert_eq!(events[0].series, None);
    assert!(
        observer.count("w1", Outcome::Failed) == 0,
        "a conflict is not a failure"
    );
}

/// Watches cut and history expired (410 → relist), and the API server restarting with its
/// state: the controller keeps reconciling, including objects created meanwhile.
#[tokio::test]
async fn cut_watches_expired_history_and_a_restarting_server_lose_no_object() {
    let (server, client) = embedded_with_widgets().await;
    let embedded = server.embedded().expect("embedded");
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    create_widget(&client, "before", WidgetSpec::default()).await;
    eventually("reconciled", || async {
        observer
            .passes_of("before")
            .contains(&(Phase::Apply, Outcome::Completed))
    })
    .await;

    embedded.compact();
    create_widget(&client, "after-compaction", WidgetSpec::default()).await;
    eventually("reconciled after a 410 relist", || async {
        observer
            .passes_of("after-compaction")
            .contains(&(Phase::Apply, Outcome::Completed))
    })
    .await;

    server.faults().add(
        Fault::new(FaultAction::CloseConnection)
            .method(Method::GET)
            .path_prefix("/apis/test.kubeward.dev/v1/widgets")
            .times(3),
    );
    embedded.restart().await.unwrap();
    create_widget(&client, "after-restart", WidgetSpec::default()).await;
    eventually("reconciled after the restart and cut watches", || async {
        observer
            .passes_of("after-restart")
            .contains(&(Phase::Apply, Outcome::Completed))
    })
    .await;
    running.stop().await;
    for name in ["before", "after-compaction", "after-restart"] {
        assert!(
            observer
                .passes_of(name)
                .iter()
                .all(|(_, o)| *o == Outcome::Completed),
            "{name}: {:?}",
            observer.passes_of(name)
        );
    }
}

/// Repeated failures of one object aggregate into one series whose count is exact on the
/// server after shutdown flushes it.
#[tokio::test]
async fn shutdown_flushes_event_series_with_exact_counts() {
    let (_server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let recorder = recorder(&client).with_flush_interval(Duration::from_secs(3600));
    let widgets = Widgets::default();
    let running = Running::start(
        Controller::new(widgets.clone(), client.clone())
            .with_observer(observer.clone())
            .with_event_recorder(recorder),
    );
    create_widget(
        &client,
        "w1",
        WidgetSpec {
            mode: Mode::Fail,
            error: Some("boom".into()),
            ..WidgetSpec::default()
        },
    )
    .await;
    eventually("three failed passes", || async {
        observer.count("w1", Outcome::Failed) >= 3
    })
    .await;
    running.stop().await;
    let failures = observer.count("w1", Outcome::Failed);
    let events = events_about(&client, "w1").await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let count = events[0].series.as_ref().map_or(1, |s| s.count);
    assert_eq!(
        count as usize, failures,
        "the stored count equals the failed passes"
    );
}

/// A thousand objects failing at once: every pass is observed failed, each object gets its
/// failure event, and the controller stays responsive.
#[tokio::test]
async fn a_thousand_objects_failing_at_once() {
    const OBJECTS: usize = 1000;
    let (server, client) = server_with_widgets().await;
    let failing = WidgetSpec {
        mode: Mode::Fail,
        error: Some("database unreachable".into()),
        ..WidgetSpec::default()
    };
    for i in 0..OBJECTS {
        create_widget(&client, &format!("w{i}"), failing.clone()).await;
    }
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    eventually("every object failed once", || async {
        (0..OBJECTS).all(|i| observer.count(&format!("w{i}"), Outcome::Failed) >= 1)
    })
    .await;
    // Still responsive: a healthy object created now is reconciled.
    create_widget(&client, "healthy", WidgetSpec::default()).await;
    eventually("the healthy object is reconciled", || async {
        observer
            .passes_of("healthy")
            .contains(&(Phase::Apply, Outcome::Completed))
    })
    .await;
    running.stop().await;
    let events = Api::<StoredEvent>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    let failure_events = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("ReconcileFailed"))
        .count();
    assert_eq!(failure_events, OBJECTS, "one failure event per object");
}
