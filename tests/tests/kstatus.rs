//! The kstatus reporting a reconciler declares, through the controller: a gate listed in
//! `current_at` is Current (`Ready` True at the gate, no `Reconciling`), failures are InProgress
//! until `stalled_after` of them in a row make the object `Stalled`, and a success clears it. The
//! controller runs as the identity its generated RBAC grants; every stored version is watched. A
//! converged pass that asks to be checked back later (kube-rs's periodic requeue) is Current.

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use kubeward::{Action, Pass};
use kubeward_tests::*;

/// The phase of a widget: parked by hand, or done.
#[kubeward::condition(type = "Phase")]
#[transitions(Held -> Done, Done -> Held)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Parked until someone moves it on: a gate.
    #[reason(False, gate, initial)]
    Held,
    /// Done.
    #[reason(True, initial)]
    Done,
}

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/phases",
    conditions(Phase),
    kstatus(stalled_after = 2, current_at(phase::Held)),
)]
async fn phases(widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, WidgetError> {
    let (target, message) = match widget.spec.mode {
        Mode::Fail => return Err(WidgetError("boom".into())),
        Mode::Skip => (Phase::Held, "held by hand"),
        _ => (Phase::Done, "done"),
    };
    if let Some(set) = pass.condition::<Phase>().try_to(target, message) {
        pass.set(set);
    }
    Ok(Action::await_change())
}

/// The condition `type_` of `widget` as (status, reason, message).
fn condition(widget: &Widget, type_: &str) -> Option<(String, String, String)> {
    let condition = widget
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_)?;
    Some((
        condition.status.clone(),
        condition.reason.clone(),
        condition.message.clone(),
    ))
}

/// `reconciler`'s controller run as the service account `account` its generated rules are
/// granted to, and every stored version of the widget `w` from now on.
async fn run_watching_w<R: kubeward::Reconciler<Resource = Widget>>(
    server: &kubeward_testing::Cluster,
    admin: &kube::Client,
    account: &str,
    reconciler: R,
) -> (
    Running,
    futures::stream::BoxStream<'static, Result<Widget, watcher::Error>>,
) {
    let running = run_as(server, account, reconciler, |c| c).await;
    let widgets: Api<Widget> = Api::namespaced(admin.clone(), "default");
    let config = watcher::Config::default().fields("metadata.name=w");
    (running, watcher(widgets, config).applied_objects().boxed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_current_gate_is_ready_failures_stall_after_the_threshold_and_success_clears_it() {
    let (server, admin) = server_with_widgets().await;
    let (running, mut versions) = run_watching_w(&server, &admin, "phases", Phases).await;
    let widgets: Api<Widget> = Api::namespaced(admin.clone(), "default");
    create_widget(
        &admin,
        "w",
        WidgetSpec {
            mode: Mode::Skip,
            ..WidgetSpec::default()
        },
    )
    .await;
    // Every stored version until `done` holds for one; that one.
    let mut until = async |done: &dyn Fn(&Widget) -> bool, seen: &mut Vec<Widget>| -> Widget {
        let next = async {
            while let Some(widget) = versions.try_next().await.expect("watch") {
                seen.push(widget.clone());
                if done(&widget) {
                    return widget;
                }
            }
            panic!("the watch ended");
        };
        tokio::time::timeout(std::time::Duration::from_secs(60), next)
            .await
            .unwrap_or_else(|_| panic!("never reached; seen: {seen:#?}"))
    };

    let mut seen = Vec::new();
    let held = until(
        &|w| condition(w, "Phase").is_some_and(|(_, r, _)| r == "Held"),
        &mut seen,
    )
    .await;
    assert_eq!(
        condition(&held, "Ready"),
        Some(("True".into(), "Held".into(), "held by hand".into()))
    );
    assert_eq!(condition(&held, "Reconciling"), None);

    widgets
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"mode": "fail"}})),
        )
        .await
        .expect("fail");
    let mut seen = Vec::new();
    let stalled = until(&|w| condition(w, "Stalled").is_some(), &mut seen).await;
    assert_eq!(
        condition(&stalled, "Stalled"),
        Some((
            "True".into(),
            "ReconcileFailed".into(),
            "failed 2 times in a row: boom".into()
        )),
        "the first Stalled version is the second failure's"
    );
    assert_eq!(condition(&stalled, "Reconciling"), None);
    assert!(
        seen.iter().any(|w| condition(w, "Reconciling")
            == Some(("True".into(), "ReconcileFailed".into(), "boom".into()))),
        "the first failure is in progress: {seen:#?}"
    );

    widgets
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"mode": "complete"}})),
        )
        .await
        .expect("recover");
    let mut seen = Vec::new();
    let done = until(
        &|w| condition(w, "Phase").is_some_and(|(_, r, _)| r == "Done"),
        &mut seen,
    )
    .await;
    assert_eq!(
        condition(&done, "Ready"),
        Some(("True".into(), "Done".into(), "done".into()))
    );
    assert_eq!(condition(&done, "Stalled"), None);
    running.stop().await;
}

/// Converges at once, then asks to be checked back in five minutes, as kube-rs's controller-rs
/// does.
#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/periodic",
    conditions(Phase),
)]
async fn periodic(_widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, WidgetError> {
    if let Some(set) = pass.condition::<Phase>().try_to(Phase::Done, "done") {
        pass.set(set);
    }
    Ok(Action::requeue(std::time::Duration::from_secs(300)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_converged_pass_that_requeues_is_ready_and_not_reconciling() {
    let (server, admin) = server_with_widgets().await;
    let (running, mut versions) = run_watching_w(&server, &admin, "periodic", Periodic).await;
    create_widget(&admin, "w", WidgetSpec::default()).await;
    let mut seen = Vec::new();
    let next = async {
        while let Some(widget) = versions.try_next().await.expect("watch") {
            seen.push(widget.clone());
            if condition(&widget, "Phase").is_some_and(|(_, r, _)| r == "Done") {
                return widget;
            }
        }
        panic!("the watch ended");
    };
    let done = tokio::time::timeout(std::time::Duration::from_secs(60), next)
        .await
        .unwrap_or_else(|_| panic!("never done; seen: {seen:#?}"));
    assert_eq!(
        condition(&done, "Ready"),
        Some(("True".into(), "Done".into(), "done".into())),
        "{done:#?}"
    );
    assert_eq!(condition(&done, "Reconciling"), None, "{done:#?}");
    assert_eq!(condition(&done, "Stalled"), None, "{done:#?}");
    running.stop().await;
}
