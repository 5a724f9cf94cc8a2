//! Status writes as a real cluster answers them, each run as the test controller's service
//! account holding its generated RBAC: an in-doubt write is resolved by the whole status (not
//! only its conditions); writes the server normalises (a pruned field, a `null`) are not re-sent;
//! (another writer's malformed condition, kept and never republished, is tested where the status is
//! read: `runtime/src/controller/status.rs`, as a typed resource cannot even decode such an object); one delete runs cleanup
//! once even when its status write conflicts; a CRD without the status subresource gets an error
//! that says what to add; a status write for an object deleted meanwhile publishes no Warning.

use std::collections::BTreeMap;
use std::time::Duration;

use http::Method;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use kube::api::{Patch, PatchParams};
use kubeward::observe::{Outcome, Phase};
use kubeward_testing::{Cluster, Fault, FaultAction};
use kubeward_tests::*;
use serde_json::{Value, json};

/// A server with the Widget CRD as `change` leaves it, and an administrator's client.
async fn server_with(change: impl FnOnce(&mut Value)) -> (Cluster, kube::Client) {
    let server = Cluster::start().await.expect("API server starts");
    let mut crd = serde_json::to_value(Widget::crd()).unwrap();
    change(&mut crd);
    let crd: CustomResourceDefinition = serde_json::from_value(crd).unwrap();
    server.install_crd(&crd).await.expect("Widget CRD installs");
    let client = server.client().expect("client");
    (server, client)
}

/// The widget's status as the server stores it (all of it, not what the Rust type models).
async fn stored_status(server: &Cluster, name: &str) -> Value {
    let request = http::Request::get(format!(
        "/apis/test.kubeward.dev/v1/namespaces/default/widgets/{name}"
    ))
    .body(Vec::new())
    .unwrap();
    let stored: Value = server
        .client()
        .unwrap()
        .request(request)
        .await
        .expect("widget read");
    stored["status"].clone()
}

async fn annotate(client: &kube::Client, name: &str, value: &str) {
    let patch = json!({ "metadata": { "annotations": { "test.kubeward.dev/poke": value } } });
    widgets(client)
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("annotated");
}

fn ready_with_fields(fields: &[(&str, Option<&str>)]) -> WidgetSpec {
    WidgetSpec {
        status_fields: fields
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
            .collect::<BTreeMap<_, _>>(),
        ..WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out")
    }
}

/// A write of a status field alone (the conditions are already stored) whose connection drops
/// before it commits: the read-back must see that the field is not stored — comparing the
/// conditions alone takes it for stored and, with `await_change`, never retries it.
#[tokio::test]
async fn an_in_doubt_write_of_status_fields_that_did_not_commit_is_retried() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    create_widget(&client, "w1", ready_with_fields(&[("phase", Some("One"))])).await;
    eventually("converged", || async {
        stored_status(&server, "w1").await["phase"] == "One"
    })
    .await;
    // Another writer changes the field; the controller's write putting it back (in the pass a
    // label starts) is lost before it commits.
    server.faults().add(
        Fault::new(FaultAction::CloseConnection)
            .method(Method::PATCH)
            .path_prefix(&status_path("w1"))
            .user(&service_account_user(OPERATOR))
            .times(1),
    );
    widgets(&client)
        .patch_status(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": { "phase": "Other" } })),
        )
        .await
        .expect("status patched");
    // A status write starts no pass; a label the reconciler reads does.
    widgets(&client)
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({ "metadata": { "labels": { "touched": "yes" } } })),
        )
        .await
        .expect("labelled");
    eventually("the field is written back", || async {
        stored_status(&server, "w1").await["phase"] == "One"
    })
    .await;
    assert_eq!(
        status_writes(&server, "w1")
            .iter()
            .filter(|s| **s == 0)
            .count(),
        1,
        "the write was lost once"
    );
    running.stop().await;
}

/// Status fields the schema prunes and `null`s (which delete a field) are written once; after
/// that, passes that decide the same status send nothing: steady state is 0 writes.
#[tokio::test]
async fn writes_the_server_normalises_are_not_resent() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    let spec = ready_with_fields(&[
        ("phase", Some("One")),
        ("prunedByTheSchema", Some("x")),
        ("deleted", None),
    ]);
    create_widget(&client, "w1", spec).await;
    eventually("converged", || async {
        stored_status(&server, "w1").await["phase"] == "One"
    })
    .await;
    assert_eq!(
        stored_status(&server, "w1").await.get("prunedByTheSchema"),
        None
    );
    let writes = status_writes(&server, "w1").len();
    // One poke at a time: pokes sent together may be served by one pass.
    for poke in ["1", "2", "3"] {
        let passes = observer.passes_of("w1").len();
        annotate(&client, "w1", poke).await;
        eventually("a pass for the poke", || async {
            observer.passes_of("w1").len() > passes
        })
        .await;
    }
    assert_eq!(
        status_writes(&server, "w1").len(),
        writes,
        "a pass re-sent a write the server had normalised"
    );
    running.stop().await;
}

/// Cleanup finished, but its status write met a conflict (another controller removed its own
/// finalizer meanwhile): the retry removes the finalizer without running cleanup again.
#[tokio::test]
async fn cleanup_runs_once_when_its_status_write_conflicts() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    let spec = WidgetSpec {
        cleanup_condition: Some(WantedCondition {
            status: "False".into(),
            reason: "FailedDeploy".into(),
            message: "cleaning up".into(),
        }),
        ..WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out")
    };
    create_widget(&client, "w1", spec).await;
    let other = "other.example/hold";
    eventually("converged with our finalizer", || async {
        widgets(&client).get("w1").await.is_ok_and(|w| {
            w.metadata
                .finalizers
                .unwrap_or_default()
                .contains(&FINALIZER.to_owned())
        })
    })
    .await;
    let patch = json!([{ "op": "add", "path": "/metadata/finalizers/-", "value": other }]);
    widgets(&client)
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::<()>::Json(serde_json::from_value(patch).unwrap()),
        )
        .await
        .expect("second finalizer");
    conflict_status_writes(&server, "w1", 1);
    widgets(&client)
        .delete("w1", &Default::default())
        .await
        .expect("deleted");
    eventually("our finalizer is removed", || async {
        widgets(&client)
            .get("w1")
            .await
            .is_ok_and(|w| w.metadata.finalizers.unwrap_or_default() == [other.to_owned()])
    })
    .await;
    let cleanups = observer
        .passes_of("w1")
        .iter()
        .filter(|(phase, _)| *phase == Phase::Cleanup)
        .count();
    assert_eq!(cleanups, 1, "{:?}", observer.passes_of("w1"));
    running.stop().await;
}

/// A CRD served without the status subresource answers every status write 404 although the
/// object exists: the pass fails with an error that says what to add, not a bare 404.
#[tokio::test]
async fn a_crd_without_the_status_subresource_fails_with_what_to_add() {
    let (server, client) = server_with(|crd| {
        crd["spec"]["versions"][0]
            .as_object_mut()
            .unwrap()
            .remove("subresources");
    })
    .await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out"),
    )
    .await;
    eventually("a failure event", || async {
        events_about(&client, "w1")
            .await
            .iter()
            .any(|e| e.type_.as_deref() == Some("Warning"))
    })
    .await;
    running.stop().await;
    let events = events_about(&client, "w1").await;
    let note = events
        .iter()
        .find(|e| e.type_.as_deref() == Some("Warning"))
        .and_then(|e| e.note.clone())
        .unwrap_or_default();
    assert!(
        note.contains("has no status subresource") && note.contains("subresources: {status: {}}"),
        "{note}"
    );
    assert!(observer.count("w1", Outcome::Failed) >= 1);
}

/// The object is deleted while its pass runs (no finalizer holds it): the status write is
/// answered 404, and once the watch has seen the delete nothing is published about a gone object.
#[tokio::test]
async fn a_status_write_for_an_object_deleted_meanwhile_publishes_no_warning() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let reconciler = Widgets::default();
    let running = start_widgets(&server, &reconciler, &observer).await;
    create_widget(&client, "w1", WidgetSpec::with_mode(Mode::Complete)).await;
    eventually("converged", || async {
        observer.count("w1", Outcome::Completed) >= 2
    })
    .await;
    // The next status write waits 500 ms; meanwhile the object goes for good.
    server.faults().add(
        Fault::new(FaultAction::Latency(Duration::from_millis(500)))
            .method(Method::PATCH)
            .path_prefix(&status_path("w1"))
            .times(1),
    );
    set_spec(
        &client,
        "w1",
        &WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out"),
    )
    .await;
    eventually("the pass started", || async {
        reconciler.started("w1") >= 2
    })
    .await;
    let strip = json!({ "metadata": { "finalizers": null } });
    widgets(&client)
        .patch("w1", &PatchParams::default(), &Patch::Merge(&strip))
        .await
        .expect("finalizers stripped");
    widgets(&client)
        .delete("w1", &Default::default())
        .await
        .expect("deleted");
    eventually("the delayed write was answered", || async {
        status_writes(&server, "w1").contains(&404)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    running.stop().await;
    let warnings: Vec<_> = events_about(&client, "w1")
        .await
        .into_iter()
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .map(|e| e.note)
        .collect();
    assert!(warnings.is_empty(), "{warnings:?}");
}
