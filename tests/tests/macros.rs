//! A reconciler declared with the macros, run by the controller on the in-process API server:
//! the typed transitions land in the status, the transition events carry the declared event
//! types, steps are reported, and the generated RBAC rules name the resource.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams};
use kubeward::events::{EventRecorder, Reporter};
use kubeward::observe::{Outcome, PassRecord, ReconcileObserver, StepRecord};
use kubeward::{Action, Pass, Reconciler};
use kubeward_tests::*;

const GATES: &str = "test.kubeward.dev/gates";

/// Reasons of the `Ready` condition of gated widgets.
#[kubeward::condition]
#[transitions(
    Applying -> WaitingForApproval | Applied,
    WaitingForApproval -> Applying,
    Applied -> Applying,
)]
pub enum Ready {
    #[reason(Unknown)]
    Applying,
    /// A False the user chose: an approval gate, not a failure.
    #[reason(False, gate)]
    WaitingForApproval,
    #[reason(True)]
    Applied,
}

/// Rolls a widget out only once it carries the `approved` label.
pub struct Gates;

#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/gates",
    finalizer = "test.kubeward.dev/cleanup",
    conditions(Ready),
    info(mode = "spec.mode", wanted = ".spec.condition.reason"),
)]
impl Gates {
    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, WidgetError> {
        #[step("check-approval")]
        let approved = approval(widget)?;
        match pass.condition::<Ready>() {
            ready::State::Absent(now) => {
                pass.set(now.to(ready::Applying, "rolling out"));
            }
            ready::State::Applying(now) if approved => {
                #[step("deploy")]
                self.deploy().await?;
                pass.set(now.to(ready::Applied, "rolled out"));
            }
            ready::State::Applying(now) => {
                pass.set(now.to(ready::WaitingForApproval, "waiting for approval"));
            }
            ready::State::WaitingForApproval(now) if approved => {
                pass.set(now.to(ready::Applying, "approved, rolling out"));
            }
            _ => {}
        }
        Ok(Action::await_change())
    }

    #[step("deploy-call")]
    async fn deploy(&self) -> Result<(), WidgetError> {
        Ok(())
    }
}

fn approval(widget: &Widget) -> Result<bool, WidgetError> {
    Ok(widget.labels().contains_key("approved"))
}

#[derive(Default)]
struct Steps(Mutex<Vec<(String, Outcome)>>);

impl ReconcileObserver for Steps {
    fn pass_finished(&self, _: &PassRecord) {}
    fn step_finished(&self, record: &StepRecord) {
        self.0
            .lock()
            .unwrap()
            .push((record.step.as_str().to_owned(), record.outcome));
    }
}

#[tokio::test]
async fn a_macro_declared_reconciler_writes_typed_transitions_and_their_declared_events() {
    let (_server, client) = server_with_widgets().await;
    let steps = Arc::new(Steps::default());
    let metrics = kubeward::metrics::Metrics::builder().build().unwrap();
    let registry = prometheus::Registry::new();
    registry.register(Box::new(metrics.clone())).unwrap();
    let recorder = EventRecorder::new(
        client.clone(),
        Reporter::new(GATES, "test-pod").expect("valid reporter"),
    );
    let running = Running::start(
        Gates
            .controller(client.clone())
            .with_observer(steps.clone())
            .with_observer(Arc::new(metrics))
            .with_event_recorder(recorder)
            .with_shutdown_grace(Duration::from_millis(200)),
    );
    create_widget(&client, "w1", WidgetSpec::default()).await;
    let widgets: Api<Widget> = Api::namespaced(client.clone(), "default");
    eventually("the gate waits for approval", || async {
        let widget = widgets.get("w1").await.unwrap();
        widget.status.is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.reason == "WaitingForApproval" && c.status == "False")
        })
    })
    .await;
    eventually("the approval event is published", || async {
        events_about(&client, "w1")
            .await
            .iter()
            .any(|e| e.reason.as_deref() == Some("WaitingForApproval"))
    })
    .await;
    let events = events_about(&client, "w1").await;
    let waiting = events
        .iter()
        .find(|e| e.reason.as_deref() == Some("WaitingForApproval"))
        .unwrap();
    // False, but declared `event = Normal`: an approval gate is not a failure.
    assert_eq!(waiting.type_.as_deref(), Some("Normal"));
    assert_eq!(waiting.note.as_deref(), Some("waiting for approval"));
    assert_eq!(waiting.reporting_controller.as_deref(), Some(GATES));
    // The declared `Ready` is the reconciler's: the runtime derives only `Reconciling` (True at
    // the gate, its reason) and adds no second `Ready`; the derived condition publishes nothing.
    let stored = widgets.get("w1").await.unwrap().status.unwrap().conditions;
    let of = |type_: &str| {
        stored
            .iter()
            .filter(|c| c.type_ == type_)
            .map(|c| (c.status.clone(), c.reason.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(of("Ready"), [("False".into(), "WaitingForApproval".into())]);
    assert_eq!(
        of("Reconciling"),
        [("True".into(), "WaitingForApproval".into())]
    );
    assert_eq!(of("Stalled"), []);
    assert_eq!(
        events
            .iter()
            .filter(|e| e.reason.as_deref() == Some("WaitingForApproval"))
            .count(),
        1,
        "{events:#?}"
    );
    assert!(
        steps
            .0
            .lock()
            .unwrap()
            .contains(&("check-approval".to_owned(), Outcome::Completed))
    );

    // Approve: WaitingForApproval -> Applying -> Applied, the deploy steps run.
    let approve = serde_json::json!({"metadata": {"labels": {"approved": "yes"}}});
    widgets
        .patch("w1", &PatchParams::default(), &Patch::Merge(&approve))
        .await
        .unwrap();
    eventually("the widget is applied", || async {
        let widget = widgets.get("w1").await.unwrap();
        widget.status.is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.reason == "Applied" && c.status == "True")
        })
    })
    .await;
    eventually("the applied event is published", || async {
        events_about(&client, "w1")
            .await
            .iter()
            .any(|e| e.reason.as_deref() == Some("Applied"))
    })
    .await;
    let reasons: Vec<(String, String)> = events_about(&client, "w1")
        .await
        .iter()
        .map(|e| {
            (
                e.reason.clone().unwrap_or_default(),
                e.type_.clone().unwrap_or_default(),
            )
        })
        .collect();
    for expected in ["Applying", "WaitingForApproval", "Applied"] {
        assert!(
            reasons.iter().any(|(r, t)| r == expected && t == "Normal"),
            "{expected} as a Normal event in {reasons:?}"
        );
    }
    let recorded = steps.0.lock().unwrap().clone();
    for step in ["deploy", "deploy-call"] {
        assert!(
            recorded.contains(&(step.to_owned(), Outcome::Completed)),
            "{step} in {recorded:?}"
        );
    }
    // The declared steps' series exist from the start (at zero for outcomes never seen) and
    // count what ran.
    let scrape = prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap();
    let series = |step: &str, outcome: &str| {
        format!(
            r#"kubeward_reconcile_step_duration_seconds_count{{controller="{GATES}",outcome="{outcome}",step="{step}"}}"#
        )
    };
    for step in ["check-approval", "deploy", "deploy-call"] {
        assert!(
            scrape.contains(&format!("{} 0", series(step, "failed"))),
            "{step} pre-initialised:\n{scrape}"
        );
        assert!(
            !scrape.contains(&format!("{} 0", series(step, "completed"))),
            "{step} ran"
        );
    }
    running.stop().await;
}

/// The same reconciler with its kstatus reporting configured, and without it.
#[kubeward::reconciler(
    resource = Widget,
    controller = "test.kubeward.dev/gates-current",
    conditions(Ready),
    kstatus(stalled_after = 3, current_at(ready::WaitingForApproval)),
)]
async fn gates_current(_: &Widget, _: &mut Pass<Widget>) -> Result<Action, WidgetError> {
    Ok(Action::await_change())
}

#[kubeward::reconciler(resource = Widget, controller = "test.kubeward.dev/plain", kstatus = false)]
async fn plain(_: &Widget, _: &mut Pass<Widget>) -> Result<Action, WidgetError> {
    Ok(Action::await_change())
}

#[test]
fn the_kstatus_argument_is_the_reconcilers_kstatus_policy() {
    use kubeward::kstatus::{GateRef, Kstatus};
    assert_eq!(Gates::KSTATUS, Some(Kstatus::DEFAULT));
    assert_eq!(
        GatesCurrent::KSTATUS,
        Some(Kstatus {
            stalled_after: Some(3),
            current_at: &[GateRef {
                condition_type: "Ready",
                reason: "WaitingForApproval"
            }],
        })
    );
    assert_eq!(Plain::KSTATUS, None);
}

#[test]
fn the_declaration_is_the_reconcilers_metadata_and_rbac() {
    assert_eq!(Gates::NAME, Some(GATES));
    assert_eq!(Gates::FINALIZER, Some("test.kubeward.dev/cleanup"));
    let steps: Vec<&str> = Gates::STEPS.iter().map(|s| s.as_str()).collect();
    assert_eq!(steps, ["check-approval", "deploy", "deploy-call"]);
    assert_eq!(Gates::CONDITIONS[0].type_, "Ready");
    let rules = Gates::rbac_rules(false);
    assert_eq!(
        rules[0].api_groups.as_deref(),
        Some(&["test.kubeward.dev".to_owned()][..])
    );
    assert_eq!(
        rules[0].resources.as_deref(),
        Some(&["widgets".to_owned()][..])
    );
    assert!(Ready::mermaid().contains("WaitingForApproval: WaitingForApproval (False, Normal)"));
}

#[test]
fn the_declaration_yields_info_fields_and_alert_rules() {
    use kubeward::info::InfoField;
    assert_eq!(
        Gates::INFO,
        [
            InfoField::new("mode", "spec.mode"),
            InfoField::new("wanted", "spec.condition.reason"),
        ]
    );
    let alerts = kubeward::alerts::AlertRules::for_reconciler::<Gates>().unwrap();
    assert_eq!(alerts.rules_file_name(), "gates.rules.yaml");
    let rules = alerts.rules();
    assert!(rules.contains("- alert: KubewardWidgetInProgress"));
    assert!(
        rules.contains(r#"controller="test.kubeward.dev/gates", type="Ready", class="waiting"}"#)
    );
    assert!(rules.contains(
        ", mode {{ . | first | label `mode` }}, wanted {{ . | first | label `wanted` }}"
    ));
    assert!(rules.contains(
        "An object waiting in WaitingForApproval (a human gate) does not raise this alert."
    ));
}
