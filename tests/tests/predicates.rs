//! Which watch events of the resource start a pass: every change, including the controller's
//! own status write (a reconciler may count on it to run its next stage), but not a relist's
//! event of an object that did not move; with `skipping_own_status_writes` not the
//! controller's own status writes either, while a change by anyone else (spec, labels, another
//! writer's status) still does. Passes are counted through the reconciler (each `apply`
//! call), the controller run as its generated RBAC.

use std::sync::Arc;

use kube::api::{Patch, PatchParams};
use kubeward::controller::Controller;
use kubeward_tests::{
    Mode, Recording, Running, WidgetSpec, Widgets, create_widget, operator_client, recorder,
    server_with_widgets, settles_at, widgets, write_conditions,
};

fn ready() -> WidgetSpec {
    WidgetSpec::ready(Mode::Complete, "True", "Applied", "converged")
}

async fn run(
    server: &kubeward_testing::Cluster,
    widgets: &Widgets,
    skip_own_status_writes: bool,
) -> Running {
    let client = operator_client(server, kubeward_tests::OPERATOR).await;
    let mut controller = Controller::new(widgets.clone(), client.clone())
        .with_observer(Arc::new(Recording::default()))
        .with_event_recorder(recorder(&client));
    if skip_own_status_writes {
        controller = controller.skipping_own_status_writes();
    }
    Running::start(controller)
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipping_own_status_writes_the_controllers_write_starts_no_pass() {
    let (server, admin) = server_with_widgets().await;
    let reconciler = Widgets::default();
    let running = run(&server, &reconciler, true).await;
    create_widget(&admin, "w", ready()).await;
    ready_is_stored(&admin, "w").await;
    settles_at("passes of w", || reconciler.started("w"), 1).await;

    // Another writer's status: a pass, which writes Ready back (its own write: no pass).
    write_conditions(&admin, "w", serde_json::json!([])).await;
    ready_is_stored(&admin, "w").await;
    settles_at("passes of w", || reconciler.started("w"), 2).await;

    // A label: a pass.
    let label = serde_json::json!({ "metadata": { "labels": { "team": "a" } } });
    widgets(&admin)
        .patch("w", &PatchParams::default(), &Patch::Merge(&label))
        .await
        .expect("label");
    settles_at("passes of w", || reconciler.started("w"), 3).await;
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_the_own_status_write_starts_a_pass() {
    let (server, admin) = server_with_widgets().await;
    let reconciler = Widgets::default();
    let running = run(&server, &reconciler, false).await;
    create_widget(&admin, "w", ready()).await;
    ready_is_stored(&admin, "w").await;
    // The pass that wrote Ready, and the one its write's event started.
    settles_at("passes of w", || reconciler.started("w"), 2).await;
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
    let running = run(&server, &reconciler, false).await;
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
    let label = serde_json::json!({ "metadata": { "labels": { "team": "a" } } });
    widgets(&admin)
        .patch("a", &PatchParams::default(), &Patch::Merge(&label))
        .await
        .expect("label");
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
            .skipping_own_status_writes()
            .with_resync(std::time::Duration::from_millis(300)),
    );
    create_widget(&admin, "w", ready()).await;
    ready_is_stored(&admin, "w").await;
    // Nothing changes, and passes keep coming: one per interval.
    kubeward_tests::eventually("three resyncs", || async { reconciler.started("w") >= 4 }).await;
    running.stop().await;
}
