//! One declaration, nothing kept in sync by hand: reconcilers declared with the macros and run by
//! the generated controller with no wiring, on the in-process API server. Event types travel
//! with the typed transitions (no `conditions(..)` list to forget), hooks written in the impl are
//! the ones that run, the controller publishes events as its declared name and registers every
//! metric family in one call, and `#[step]` fns outside the impl start their series at zero.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use k8s_openapi::api::events::v1::Event as StoredEvent;
use kubeward::controller::PassError;
use kubeward::events::Event;
use kubeward::observe::{Outcome, Phase};
use kubeward::{Action, Pass};
use kubeward_testing::metric_value;
use kubeward_tests::*;

/// Reasons of the `Provisioned` condition of a database-like widget.
#[kubeward::condition]
#[transitions(
    Provisioning -> WaitingForApproval | Provisioned | Failed,
    WaitingForApproval -> Provisioning,
    Failed -> Provisioning,
    Provisioned -> Provisioning,
)]
pub enum Provisioned {
    #[reason(Unknown)]
    Provisioning,
    /// A False the user chose: an approval gate, not a failure.
    #[reason(False, event = Normal)]
    WaitingForApproval,
    #[reason(False)]
    Failed,
    #[reason(True)]
    Provisioned,
}

const DATABASES: &str = "test.kubeward.dev/databases";

/// Provisions a widget in two passes, reading its condition in a helper fn outside the impl,
/// and declaring no `conditions(..)`. The `failed` label sends it to `Failed`, otherwise it stops
/// at the approval gate.
pub struct Databases;

#[kubeward::reconciler(resource = Widget, controller = "test.kubeward.dev/databases", steps(check_quota))]
impl Databases {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, WidgetError> {
        check_quota()?;
        advance(widget, pass);
        Ok(Action::await_change())
    }
}

/// The helper the macro cannot see into.
fn advance(widget: &Widget, pass: &mut Pass<Widget>) {
    use provisioned::State;
    let failed = widget
        .metadata
        .labels
        .as_ref()
        .is_some_and(|l| l.contains_key("failed"));
    match pass.condition::<Provisioned>() {
        State::Absent(now) => pass.set(now.to(provisioned::Provisioning, "provisioning")),
        State::Provisioning(now) if failed => pass.set(now.to(provisioned::Failed, "no capacity")),
        State::Provisioning(now) => pass.set(now.to(provisioned::WaitingForApproval, "approve it")),
        _ => return,
    };
}

#[kubeward::step("check-quota")]
fn check_quota() -> Result<(), WidgetError> {
    Ok(())
}

/// The type of the stored event with `reason` about `name`, once there is one.
async fn event_type(client: &kube::Client, name: &str, reason: &str) -> String {
    let find = || async {
        events_about(client, name)
            .await
            .into_iter()
            .find(|e| e.reason.as_deref() == Some(reason))
    };
    eventually(&format!("a {reason} event about {name}"), || async {
        find().await.is_some()
    })
    .await;
    let event: StoredEvent = find().await.unwrap();
    assert_eq!(
        event.reporting_controller.as_deref(),
        Some(DATABASES),
        "the reporter is named from the declaration"
    );
    event.type_.unwrap_or_default()
}

#[tokio::test]
async fn a_condition_read_in_a_helper_without_conditions_publishes_its_declared_event_type() {
    let (_server, client) = server_with_widgets().await;
    // No recorder, no observer: the generated controller as it comes.
    let running = Running::start(
        Databases
            .controller(client.clone())
            .with_shutdown_grace(Duration::from_millis(200)),
    );
    create_widget(&client, "gated", WidgetSpec::default()).await;
    // False, declared `event = Normal`: an approval gate pages nobody, with no list to keep.
    assert_eq!(
        event_type(&client, "gated", "WaitingForApproval").await,
        "Normal"
    );
    assert_eq!(event_type(&client, "gated", "Provisioning").await, "Normal");

    // A False reason without an override is still a Warning.
    let mut failing = Widget::new("failing", WidgetSpec::default());
    failing.metadata.labels = Some([("failed".to_owned(), "yes".to_owned())].into());
    kube::Api::<Widget>::namespaced(client.clone(), "default")
        .create(&Default::default(), &failing)
        .await
        .unwrap();
    assert_eq!(event_type(&client, "failing", "Failed").await, "Warning");
    running.stop().await;
}

#[tokio::test]
async fn the_generated_controller_registers_every_metric_family_in_one_call() {
    let (_server, client) = server_with_widgets().await;
    let registry = prometheus::Registry::new();
    let running = Running::start(
        Databases
            .controller(client.clone())
            .register_metrics(&registry)
            .expect("metrics register")
            .with_shutdown_grace(Duration::from_millis(200)),
    );
    create_widget(&client, "db", WidgetSpec::default()).await;
    event_type(&client, "db", "WaitingForApproval").await;
    let controller = ("controller", DATABASES);
    eventually("passes, steps and publishes are counted", || async {
        metric_value(
            &registry,
            "kubeward_event_publishes_total",
            &[controller, ("type", "Normal"), ("result", "created")],
        ) == Some(2.0)
    })
    .await;
    let completed = metric_value(
        &registry,
        "kubeward_reconcile_passes_total",
        &[controller, ("phase", "apply"), ("outcome", "completed")],
    );
    assert!(completed >= Some(2.0), "passes: {completed:?}");
    assert!(
        metric_value(
            &registry,
            "kubeward_reconcile_pass_duration_seconds_count",
            &[controller, ("outcome", "completed")],
        ) >= Some(2.0)
    );
    // The `#[step]` fn outside the impl, listed in `steps(..)`: a series from the start (zero
    // failures) that counts its runs.
    let step = |outcome| {
        metric_value(
            &registry,
            "kubeward_reconcile_step_duration_seconds_count",
            &[controller, ("step", "check-quota"), ("outcome", outcome)],
        )
    };
    assert_eq!(step("failed"), Some(0.0));
    assert!(step("completed") >= Some(2.0));
    // Per-object state, read from the controller's cache.
    assert_eq!(
        metric_value(&registry, "kubeward_object_generation", &[("name", "db")]),
        Some(1.0)
    );
    assert_eq!(
        metric_value(
            &registry,
            "kubeward_object_condition",
            &[("name", "db"), ("type", "Provisioned"), ("status", "False")],
        ),
        Some(1.0)
    );
    running.stop().await;
}

#[tokio::test]
async fn without_events_publishes_nothing() {
    let (_server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = Running::start(
        Databases
            .controller(client.clone())
            .without_events()
            .with_observer(observer.clone())
            .with_shutdown_grace(Duration::from_millis(200)),
    );
    create_widget(&client, "quiet", WidgetSpec::default()).await;
    eventually("the gate is reached", || async {
        widgets(&client)
            .get("quiet")
            .await
            .unwrap()
            .status
            .is_some_and(|s| {
                s.conditions
                    .iter()
                    .any(|c| c.reason == "WaitingForApproval")
            })
    })
    .await;
    eventually("both passes finished", || async {
        observer.count("quiet", Outcome::Completed) >= 2
    })
    .await;
    assert!(events_about(&client, "quiet").await.is_empty());
    running.stop().await;
}

/// Fails every pass; suppresses its failure events and retries quickly, through hooks written in
/// the impl, which count their calls.
#[derive(Default)]
pub struct Quiet {
    failure_events: Arc<AtomicU32>,
    backoffs: Arc<AtomicU32>,
}

#[kubeward::reconciler(resource = Widget, controller = "test.kubeward.dev/quiet")]
impl Quiet {
    async fn apply(&self, _: &Widget, _: &mut Pass<Widget>) -> Result<Action, WidgetError> {
        Err(WidgetError("the database is down".into()))
    }

    /// Expected failures are reported elsewhere: no failure event.
    pub fn failure_event(&self, _: &PassError<WidgetError>, _: Phase) -> Option<Event> {
        self.failure_events.fetch_add(1, Ordering::SeqCst);
        None
    }

    fn error_backoff(&self, _: &PassError<WidgetError>, _: u32) -> Duration {
        self.backoffs.fetch_add(1, Ordering::SeqCst);
        Duration::from_millis(20)
    }
}

#[tokio::test]
async fn hooks_written_in_the_impl_are_the_ones_that_run() {
    let (_server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let quiet = Quiet::default();
    let (failure_events, backoffs) = (quiet.failure_events.clone(), quiet.backoffs.clone());
    let running = Running::start(
        quiet
            .controller(client.clone())
            .with_observer(observer.clone())
            .with_shutdown_grace(Duration::from_millis(200)),
    );
    create_widget(&client, "down", WidgetSpec::default()).await;
    eventually("five failed passes", || async {
        observer.count("down", Outcome::Failed) >= 5
    })
    .await;
    assert!(failure_events.load(Ordering::SeqCst) >= 5);
    assert!(backoffs.load(Ordering::SeqCst) >= 4);
    // A failed pass publishes its failure event before it is recorded: none was.
    assert!(
        events_about(&client, "down").await.is_empty(),
        "the impl's failure_event suppresses the ReconcileFailed event"
    );
    running.stop().await;
}
