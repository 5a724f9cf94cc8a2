//! A terminal failure holds its object only once the pass's status write is stored: a write
//! that conflicts (or fails) is retried with backoff like any other, so the condition the failing
//! pass set is never left unwritten behind the hold.

use kubeward::conditions::{ConditionStatus, DesiredCondition};
use kubeward::controller::Controller;
use kubeward::observe::{Outcome, Phase};
use kubeward::{Action, Pass, Reconciler};
use kubeward_tests::*;

#[derive(Debug, thiserror::Error, kubeward::Terminal)]
enum Invalid {
    #[terminal]
    #[error("the spec can never work")]
    Spec,
}

/// Sets `Ready` False and fails terminally, every time.
struct Refuses;

impl Reconciler for Refuses {
    type Resource = Widget;
    type Error = Invalid;
    const NAME: Option<&'static str> = Some(CONTROLLER);

    async fn apply(&self, _: &Widget, pass: &mut Pass<Widget>) -> Result<Action, Invalid> {
        let invalid = DesiredCondition::new("Ready", ConditionStatus::False, "Invalid", "no");
        pass.set(invalid.expect("a valid condition"));
        Err(Invalid::Spec)
    }
}

#[tokio::test]
async fn a_terminal_failure_whose_status_write_conflicted_is_retried_then_held() {
    let (server, client) = server_with_widgets().await;
    conflict_status_writes(&server, "w1", 1);
    let observer = Recording::new();
    let running = Running::start(
        Controller::new(Refuses, client.clone())
            .with_observer(observer.clone())
            .with_event_recorder(recorder(&client)),
    );
    create_widget(&client, "w1", WidgetSpec::default()).await;
    eventually("the failed pass's condition stored", || async {
        let stored = widgets(&client).get("w1").await.unwrap();
        stored
            .status
            .is_some_and(|s| s.conditions.iter().any(|c| c.reason == "Invalid"))
    })
    .await;
    eventually("the terminal failure recorded", || async {
        observer.count("w1", Outcome::Failed) == 1
    })
    .await;
    running.stop().await;
    assert_eq!(status_writes(&server, "w1"), [409, 200]);
    assert_eq!(
        observer.passes_of("w1"),
        [
            (Phase::Apply, Outcome::Waiting),
            (Phase::Apply, Outcome::Failed)
        ],
        "the conflicted pass is retried; the stored failure is held"
    );
    let failures: Vec<_> = events_about(&client, "w1")
        .await
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("ReconcileFailed"))
        .collect();
    assert_eq!(failures.len(), 1, "{failures:#?}");
}
