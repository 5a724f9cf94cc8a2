//! Which watch events of the resource start a pass. By default every change (status writes
//! too), but not a relist's event of an object that did not change. With
//! `with_relevant_changes`, a change of what the reconciler reads: the spec (generation), the
//! finalizers, the deletion timestamp and its labels and annotations — every one, or those it
//! declares in `reads(..)`; a status write (the controller's own or anyone else's) starts none.
//! Passes are counted through the reconciler (each `apply` call), the controller run as its
//! generated RBAC.

use std::sync::Arc;

use kube::api::{Patch, PatchParams};
use kubeward::controller::Controller;
use kubeward::{Action, Pass};
use kubeward_tests::{
    Mode, Recording, Running, Widget, WidgetError, WidgetSpec, Widgets, create_widget,
    operator_client, recorder, server_with_widgets, set_spec, settles_at, widgets,
    write_conditions,
};

fn ready() -> WidgetSpec {
    WidgetSpec::ready(Mode::Complete, "True", "Applied", "converged")
}

fn controller(client: &kube::Client, widgets: &Widgets) -> Controller<Widgets> {
    Controller::new(widgets.clone(), client.clone())
        .with_observer(Arc::new(Recording::default()))
        .with_event_recorder(recorder(client))
}

async fn ready_is_stored(client: &kube::Client, name: &str) {
    kubeward_tests::eventually("Ready stored", || async {
        widgets(client)
            .get(name)
            .await
            .expect("get")
            .status
            .is_some_and(|s| s.conditions.iter().any(|c| c.reason == "Applied"))
    })
    .await;
}

async fn merge_metadata(client: &kube::Client, name: &str, metadata: serde_json::Value) {
    widgets(client)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({ "metadata": metadata })),
        )
        .await
        .expect("metadata patch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_relevant_changes_status_writes_start_no_pass_and_spec_labels_and_annotations_do() {
    let (server, admin) = server_with_widgets().await;
    let reconciler = Widgets::default();
    let client = operator_client(&server, kubeward_tests::OPERATOR).await;
    let running = Running::start(controller(&client, &reconciler).with_relevant_changes());
    create_widget(&admin, "w", ready()).await;
    ready_is_stored(&admin, "w").await;
    // The first pass stored a transition (Ready added) and awaits a change: it is run once more,
    // as its own write's event would have; that event itself starts none.
    settles_at("passes of w", || reconciler.started("w"), 2).await;

    // Widgets declares no `reads`: every label and annotation counts.
    merge_metadata(
        &admin,
        "w",
        serde_json::json!({ "labels": { "team": "a" } }),
    )
    .await;
    settles_at("passes of w", || reconciler.started("w"), 3).await;
    merge_metadata(
        &admin,
        "w",
        serde_json::json!({ "annotations": { "note": "x" } }),
    )
    .await;
    settles_at("passes of w", || reconciler.started("w"), 4).await;

    // The spec: a new generation (Ready's observedGeneration moves; no transition, no second
    // pass).
    let mut spec = ready();
    spec.requeue_ms = Some(60_000);
    spec.mode = Mode::Complete;
    set_spec(&admin, "w", &spec).await;
    settles_at("passes of w", || reconciler.started("w"), 5).await;

    // Another writer's status: no pass (Ready stays as that writer left it).
    write_conditions(&admin, "w", serde_json::json!([])).await;
    settles_at("passes of w", || reconciler.started("w"), 5).await;
    let stored = widgets(&admin).get("w").await.expect("get");
    assert!(stored.status.is_none_or(|s| s.conditions.is_empty()));
    running.stop().await;
}

/// Counts its passes; declares the one label and the one annotation it reads.
#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/readers",
    kstatus = false,
    reads(labels("team"), annotations("test.kubeward.dev/approved")),
)]
async fn readers(widget: &Widget, _: &mut Pass<Widget>) -> Result<Action, WidgetError> {
    PASSES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    if widget.metadata.managed_fields.is_some() {
        WITH_MANAGED_FIELDS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    Ok(Action::await_change())
}

static PASSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
/// Passes whose object (from the controller's cache) still carried managedFields.
static WITH_MANAGED_FIELDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_declared_labels_and_annotations_start_passes() {
    let (server, admin) = server_with_widgets().await;
    let client = server
        .service_account_client("default", "readers", Readers::rbac_rules(false))
        .await
        .expect("the generated RBAC is stored");
    let running = Running::start(
        Readers
            .controller(client)
            .with_relevant_changes()
            .without_events(),
    );
    let passes = || PASSES.load(std::sync::atomic::Ordering::SeqCst);
    create_widget(&admin, "w", WidgetSpec::default()).await;
    settles_at("passes", passes, 1).await;

    for undeclared in [
        serde_json::json!({ "labels": { "other": "x" } }),
        serde_json::json!({ "annotations": { "test.kubeward.dev/other": "x" } }),
    ] {
        merge_metadata(&admin, "w", undeclared).await;
    }
    settles_at("passes after undeclared keys", passes, 1).await;

    merge_metadata(
        &admin,
        "w",
        serde_json::json!({ "labels": { "team": "a" } }),
    )
    .await;
    settles_at("passes after the declared label", passes, 2).await;
    let approved = serde_json::json!({ "annotations": { "test.kubeward.dev/approved": "1" } });
    merge_metadata(&admin, "w", approved).await;
    settles_at("passes after the declared annotation", passes, 3).await;
    running.stop().await;

    // The cache drops managedFields before objects enter it: the server stores them (two
    // managers here), no pass saw them.
    let stored = kubeward_tests::widgets(&admin).get("w").await.expect("get");
    assert!(
        stored
            .metadata
            .managed_fields
            .is_some_and(|m| !m.is_empty())
    );
    assert_eq!(
        WITH_MANAGED_FIELDS.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_every_change_starts_a_pass_the_own_status_write_too() {
    let (server, admin) = server_with_widgets().await;
    let reconciler = Widgets::default();
    let client = operator_client(&server, kubeward_tests::OPERATOR).await;
    let running = Running::start(controller(&client, &reconciler).with_every_change());
    create_widget(&admin, "w", ready()).await;
    ready_is_stored(&admin, "w").await;
    // The pass that wrote Ready, and the one its write's event started.
    settles_at("passes of w", || reconciler.started("w"), 2).await;
    // Another writer's status starts one too (which writes Ready back: one more).
    write_conditions(&admin, "w", serde_json::json!([])).await;
    ready_is_stored(&admin, "w").await;
    settles_at("passes of w", || reconciler.started("w"), 4).await;
    running.stop().await;
}

/// The widgets list requests the controller sent (its watch's lists, not its watches).
fn widget_lists(server: &kubeward_testing::Cluster) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && !r.is_watch() && r.path.ends_with("/widgets"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_starts_no_pass_for_an_object_that_did_not_move() {
    let (server, admin) = server_with_widgets().await;
    let reconciler = Widgets::default();
    let client = operator_client(&server, kubeward_tests::OPERATOR).await;
    let running = Running::start(controller(&client, &reconciler).with_every_change());
    for name in ["a", "b"] {
        create_widget(&admin, name, ready()).await;
        ready_is_stored(&admin, name).await;
    }
    // Each: the pass that wrote Ready, and the one its write's event started.
    settles_at("passes of a", || reconciler.started("a"), 2).await;
    settles_at("passes of b", || reconciler.started("b"), 2).await;

    // The watch expires (410): the controller relists both, unchanged.
    let lists = widget_lists(&server);
    server.expire_watches();
    kubeward_tests::eventually("the relist", || async { widget_lists(&server) > lists }).await;
    settles_at("passes of a", || reconciler.started("a"), 2).await;
    assert_eq!(reconciler.started("b"), 2);

    // A change after the relist still starts its pass.
    merge_metadata(
        &admin,
        "a",
        serde_json::json!({ "labels": { "team": "a" } }),
    )
    .await;
    settles_at("passes of a", || reconciler.started("a"), 3).await;
    assert_eq!(reconciler.started("b"), 2);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_resync_every_object_is_reconciled_each_interval() {
    let (server, admin) = server_with_widgets().await;
    let reconciler = Widgets::default();
    let client = operator_client(&server, kubeward_tests::OPERATOR).await;
    let running = Running::start(
        Controller::new(reconciler.clone(), client)
            .with_resync(std::time::Duration::from_millis(300)),
    );
    create_widget(&admin, "w", ready()).await;
    ready_is_stored(&admin, "w").await;
    // Nothing changes, and passes keep coming: one per interval.
    kubeward_tests::eventually("three resyncs", || async { reconciler.started("w") >= 4 }).await;
    running.stop().await;
}
