//! What a user of the `#[reconciler]` / `#[step]` / condition DSL observes, on the in-process API
//! server: the outcome a statement step records, the class a kstatus-style `Stalled` condition's
//! healthy reason is exported with, and the note of a failure the API server caused.

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams};
use kubeward::{Action, Pass};
use kubeward_tests::*;

const TRIALS: &str = "test.kubeward.dev/trials";

/// A kstatus-style negative-polarity condition: False is healthy, True is the failure.
#[kubeward::condition]
#[transitions(NotStalled -> RetriesExhausted, RetriesExhausted -> NotStalled)]
pub enum Stalled {
    /// Healthy: not a failure, and not a human gate either.
    #[reason(False, event = Normal)]
    NotStalled,
    #[reason(True, event = Warning)]
    RetriesExhausted,
}

/// Why a trial pass failed.
#[derive(Debug, thiserror::Error, kubeward::Terminal)]
pub enum TrialError {
    /// The widget's own script failed.
    #[error(transparent)]
    Widget(#[from] WidgetError),
    /// The API server refused the write.
    #[error("failed to rewrite the widget's spec")]
    Rewrite(#[source] kube::Error),
}

/// Marks widgets `NotStalled`; `mode: Fail` makes it write a spec the API server refuses.
pub struct Trials {
    client: kube::Client,
}

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/trials",
    conditions(Stalled),
)]
impl Trials {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, TrialError> {
        // A statement step without `?`: its outcome is the value's.
        #[step("probe")]
        let probed = probe(widget);
        if let stalled::State::Absent(now) = pass.condition::<Stalled>() {
            pass.set(now.to(stalled::NotStalled, "making progress"));
        }
        if widget.spec.mode == Mode::Fail {
            let invalid = serde_json::json!({"spec": {"mode": "Sideways"}});
            Api::<Widget>::namespaced(self.client.clone(), "default")
                .patch(
                    &widget.metadata.name.clone().unwrap_or_default(),
                    &PatchParams::default(),
                    &Patch::Merge(&invalid),
                )
                .await
                .map_err(TrialError::Rewrite)?;
        }
        drop(probed);
        Ok(Action::await_change())
    }
}

/// `Err` when the widget's script carries an error message.
fn probe(widget: &Widget) -> Result<(), WidgetError> {
    match &widget.spec.error {
        Some(message) => Err(WidgetError(message.clone())),
        None => Ok(()),
    }
}

fn step_count(scrape: &str, step: &str, outcome: &str) -> Option<u64> {
    let series = format!(
        r#"kubeward_reconcile_step_duration_seconds_count{{controller="{TRIALS}",outcome="{outcome}",step="{step}"}} "#
    );
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(series.as_str()))
        .map(|value| value.parse().expect("a count"))
}

#[tokio::test]
async fn a_statement_step_whose_value_is_err_records_a_failed_step() {
    let (_server, client) = server_with_widgets().await;
    let metrics = kubeward::metrics::Metrics::builder().build().unwrap();
    let registry = prometheus::Registry::new();
    registry.register(Box::new(metrics.clone())).unwrap();
    let running = Running::start(
        Trials {
            client: client.clone(),
        }
        .controller(client.clone())
        .with_observer(std::sync::Arc::new(metrics))
        .with_shutdown_grace(Duration::from_millis(200)),
    );
    let spec = WidgetSpec {
        error: Some("probe refused".into()),
        ..WidgetSpec::default()
    };
    create_widget(&client, "w1", spec).await;
    eventually("the probe step is counted failed", || async {
        step_count(&scrape(&registry), "probe", "failed").is_some_and(|n| n >= 1)
    })
    .await;
    assert_eq!(
        step_count(&scrape(&registry), "probe", "completed"),
        Some(0),
        "an Err value is not a completed step"
    );
    running.stop().await;
}

#[tokio::test]
async fn the_healthy_false_of_a_stalled_condition_is_done_not_waiting_for_a_human() {
    let (_server, client) = server_with_widgets().await;
    let controller = Trials {
        client: client.clone(),
    }
    .controller(client.clone());
    let registry = object_metrics_registry(&controller);
    let running = Running::start(controller.with_shutdown_grace(Duration::from_millis(200)));
    create_widget(&client, "w1", WidgetSpec::default()).await;
    let healthy = r#"kubeward_object_condition_reason{class="done",controller="test.kubeward.dev/trials",name="w1",namespace="default",reason="NotStalled",type="Stalled"} 1"#;
    eventually("NotStalled is exported", || async {
        scrape(&registry).contains(healthy)
    })
    .await;
    let text = scrape(&registry);
    assert!(!text.contains(r#"class="waiting""#), "{text}");
    running.stop().await;
}

#[tokio::test]
async fn a_refused_write_is_noted_as_kubectl_prints_it() {
    let (_server, client) = server_with_widgets().await;
    let running = Running::start(
        Trials {
            client: client.clone(),
        }
        .controller(client.clone())
        .with_shutdown_grace(Duration::from_millis(200)),
    );
    create_widget(&client, "w1", WidgetSpec::with_mode(Mode::Fail)).await;
    eventually("the failure event is published", || async {
        events_about(&client, "w1")
            .await
            .iter()
            .any(|e| e.reason.as_deref() == Some("ReconcileFailed"))
    })
    .await;
    let events = events_about(&client, "w1").await;
    let failed = events
        .iter()
        .find(|e| e.reason.as_deref() == Some("ReconcileFailed"))
        .unwrap();
    assert_eq!(failed.type_.as_deref(), Some("Warning"));
    // `<reason>: <message>`, as `kubectl` prints `Error from server (Invalid): ..`; not
    // kube-client's `ApiError: ..: Invalid (Status { .. })`.
    assert_eq!(
        failed.note.as_deref(),
        Some(
            "failed to rewrite the widget's spec: Invalid: Widget.test.kubeward.dev \"w1\" is invalid: \
             spec.mode: Unsupported value: \"Sideways\": supported values: \"complete\", \"requeue\", \
             \"fail\", \"skip\", \"hang\""
        )
    );
    running.stop().await;
}

/// A hand-written reconciler that lists two vocabularies of one condition type (`#[reconciler]`
/// refuses that at compile time).
struct TwoReadies;

static ALSO_READY: kubeward::vocabulary::Vocabulary = kubeward::vocabulary::Vocabulary {
    type_: "Ready",
    reasons: &[kubeward::vocabulary::Reason::new(
        "Serving",
        kubeward::conditions::ConditionStatus::True,
    )],
};

impl kubeward::Reconciler for TwoReadies {
    type Resource = Widget;
    type Error = WidgetError;
    const NAME: Option<&'static str> = Some(TRIALS);
    const CONDITIONS: &'static [&'static kubeward::vocabulary::Vocabulary] = &[&READY, &ALSO_READY];

    async fn apply(&self, _: &Widget, _: &mut Pass<Widget>) -> Result<Action, WidgetError> {
        Ok(Action::await_change())
    }
}

#[tokio::test]
async fn two_vocabularies_of_one_condition_type_are_a_typed_error_before_anything_runs() {
    let (server, client) = server_with_widgets().await;
    let error = kubeward::controller::Controller::new(TwoReadies, client)
        .shutdown_on(async {})
        .run()
        .await
        .expect_err("refused");
    let kubeward::controller::ControllerError::DuplicateConditionType(duplicate) = &error else {
        panic!("a duplicate condition type, not {error}");
    };
    assert_eq!(duplicate.condition_type, "Ready");
    assert_eq!(
        duplicate.first,
        "Applying, WaitingForApproval, Applied, FailedDeploy, Stalled"
    );
    assert_eq!(duplicate.second, "Serving");
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}
