//! Unit tests of outcomes, pass guards and steps.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::runtime::controller::Action;

use super::guard::CURRENT_PASS;
use super::*;
use crate::names::NameKind;

#[derive(Default)]
struct Recording {
    passes: Mutex<Vec<(Phase, Outcome)>>,
    steps: Mutex<Vec<(&'static str, Outcome)>>,
}

impl ReconcileObserver for Recording {
    fn pass_finished(&self, record: &PassRecord) {
        self.passes
            .lock()
            .unwrap()
            .push((record.phase, record.outcome));
    }
    fn step_finished(&self, record: &StepRecord) {
        self.steps
            .lock()
            .unwrap()
            .push((record.step.as_str(), record.outcome));
    }
}

const RENDER: StepName = StepName::from_static("render");
const DEPLOY: StepName = StepName::from_static("deploy");

fn object() -> Arc<ObjectRef> {
    Arc::new(ObjectRef {
        api_version: "demo.kubeward.dev/v1".into(),
        kind: "Rollout".into(),
        namespace: Some("demo".into()),
        name: "web".into(),
        uid: Some("0000".into()),
    })
}

fn guard(recording: &Arc<Recording>, phase: Phase) -> PassGuard {
    PassGuard::start(
        "demo.kubeward.dev/rollouts".into(),
        object(),
        phase,
        Observers::new(vec![recording.clone()]),
    )
}

#[test]
fn ok_await_change_is_completed() {
    let result: Result<Action, ()> = Ok(Action::await_change());
    assert_eq!(Outcome::of_pass(&result, None), Outcome::Completed);
}

#[test]
fn ok_requeue_is_waiting() {
    let result: Result<Action, ()> = Ok(Action::requeue(Duration::from_secs(1)));
    assert_eq!(Outcome::of_pass(&result, None), Outcome::Waiting);
}

#[test]
fn err_is_failed() {
    let result: Result<Action, &str> = Err("boom");
    assert_eq!(Outcome::of_pass(&result, None), Outcome::Failed);
}

#[test]
fn override_applies_only_to_an_ok_pass() {
    let ok: Result<Action, &str> = Ok(Action::requeue(Duration::from_secs(1)));
    assert_eq!(
        Outcome::of_pass(&ok, Some(Outcome::Skipped)),
        Outcome::Skipped
    );
    assert_eq!(
        Outcome::of_pass(&ok, Some(Outcome::Completed)),
        Outcome::Completed
    );
    let err: Result<Action, &str> = Err("boom");
    for outcome in Outcome::ALL {
        assert_eq!(Outcome::of_pass(&err, Some(outcome)), Outcome::Failed);
    }
}

#[tokio::test]
async fn pass_guard_records_the_finished_outcome_once() {
    let recording = Arc::new(Recording::default());
    guard(&recording, Phase::Apply).finish(Outcome::Waiting);
    assert_eq!(
        *recording.passes.lock().unwrap(),
        [(Phase::Apply, Outcome::Waiting)]
    );
}

#[tokio::test]
async fn dropped_pass_is_abandoned() {
    let recording = Arc::new(Recording::default());
    let pass = guard(&recording, Phase::Cleanup);
    drop(pass);
    assert_eq!(
        *recording.passes.lock().unwrap(),
        [(Phase::Cleanup, Outcome::Abandoned)]
    );
}

#[tokio::test]
async fn steps_report_into_the_current_pass_from_nested_calls() {
    async fn nested() -> u32 {
        step(DEPLOY, async { 7 }).await
    }
    let recording = Arc::new(Recording::default());
    let pass = guard(&recording, Phase::Apply);
    let value = pass
        .run(async {
            let a = step_sync(RENDER, || 1);
            a + nested().await
        })
        .await;
    pass.finish(Outcome::Completed);
    assert_eq!(value, 8);
    assert_eq!(
        *recording.steps.lock().unwrap(),
        [
            ("render", Outcome::Completed),
            ("deploy", Outcome::Completed)
        ]
    );
}

#[tokio::test]
async fn step_outside_a_pass_is_a_no_op() {
    assert!(!in_pass());
    assert_eq!(step(RENDER, async { 3 }).await, 3);
    assert_eq!(try_step_sync(RENDER, || Err::<(), _>("x")), Err("x"));
}

#[tokio::test]
async fn failing_step_is_recorded_as_failed() {
    let recording = Arc::new(Recording::default());
    let pass = guard(&recording, Phase::Apply);
    let result = pass
        .run(async {
            try_step(DEPLOY, async { Err::<(), _>("image pull failed") }).await?;
            Ok::<_, &str>(())
        })
        .await;
    pass.finish(Outcome::of_pass(
        &result.map(|()| Action::await_change()),
        None,
    ));
    assert_eq!(
        *recording.steps.lock().unwrap(),
        [("deploy", Outcome::Failed)]
    );
    assert_eq!(
        *recording.passes.lock().unwrap(),
        [(Phase::Apply, Outcome::Failed)]
    );
}

#[tokio::test]
async fn step_of_an_abandoned_pass_is_recorded_as_abandoned() {
    let recording = Arc::new(Recording::default());
    let pass = guard(&recording, Phase::Apply);
    let never = pass.run(step(DEPLOY, futures::future::pending::<()>()));
    // Poll once so the step starts, then drop everything, as a shutdown would.
    let mut never = Box::pin(never);
    assert!(futures::poll!(never.as_mut()).is_pending());
    drop(never);
    drop(pass);
    assert_eq!(
        *recording.steps.lock().unwrap(),
        [("deploy", Outcome::Abandoned)]
    );
    assert_eq!(
        *recording.passes.lock().unwrap(),
        [(Phase::Apply, Outcome::Abandoned)]
    );
}

#[tokio::test]
async fn panicking_step_is_recorded_as_failed() {
    let recording = Arc::new(Recording::default());
    let pass = guard(&recording, Phase::Apply);
    let scope = pass.scope.clone();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        CURRENT_PASS.sync_scope(scope, || step_sync(RENDER, || panic!("render bug")))
    }));
    assert!(panicked.is_err());
    pass.finish(Outcome::Failed);
    assert_eq!(
        *recording.steps.lock().unwrap(),
        [("render", Outcome::Failed)]
    );
}

#[test]
fn invalid_step_names_are_typed_errors() {
    let err = StepName::new("Render").unwrap_err();
    assert_eq!(err.kind, NameKind::StepName);
}
