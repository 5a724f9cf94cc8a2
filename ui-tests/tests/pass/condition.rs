//! A vocabulary with event overrides both ways, typed transitions and the generated helpers.
#![deny(warnings)]

use kube::runtime::events::EventType;
use kubeward::conditions::{Condition, ConditionStatus};
use kubeward::vocabulary::ConditionType;

/// Reasons of the `UpToDate` condition.
#[kubeward::condition(type = "UpToDate")]
#[transitions(
    Applied -> Applying | WaitingForApproval,
    WaitingForApproval -> Applying,
    Applying -> ReadyToPromote | FailedDeploy | RolloutTimeout,
    ReadyToPromote -> Promoting,
    Promoting -> Applied | FailedDeploy,
    FailedDeploy | RolloutTimeout -> Applying,
)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpToDate {
    #[reason(Unknown, initial)]
    Applying,
    /// A False the user chose, not a failure.
    #[reason(False, event = Normal)]
    WaitingForApproval,
    #[reason(Unknown)]
    ReadyToPromote,
    #[reason(Unknown)]
    Promoting,
    #[reason(True)]
    Applied,
    #[reason(False)]
    RolloutTimeout,
    #[reason(False)]
    FailedDeploy,
}

/// An abnormal-true condition: `Stalled` is True but a Warning. No `initial`: the first reason
/// is the start state. The same reason names as `UpToDate` do not collide.
#[kubeward::condition]
#[transitions(Progressing -> Stalled | Applied, Stalled -> Progressing)]
pub enum Stalled {
    #[reason(Unknown)]
    Progressing,
    #[reason(True, event = Warning)]
    Stalled,
    #[reason(False)]
    Applied,
}

fn stored(reason: &str) -> Condition {
    Condition {
        type_: "UpToDate".into(),
        status: "True".into(),
        reason: reason.into(),
        message: "done".into(),
        observed_generation: None,
        last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
    }
}

fn main() {
    use up_to_date::{Applying, State, WaitingForApproval};

    assert_eq!(UpToDate::WaitingForApproval.reason(), "WaitingForApproval");
    assert_eq!(UpToDate::WaitingForApproval.status(), ConditionStatus::False);
    assert_eq!(UpToDate::WaitingForApproval.event_type(), EventType::Normal);
    assert_eq!(UpToDate::FailedDeploy.event_type(), EventType::Warning);
    assert_eq!(Stalled::Stalled.event_type(), EventType::Warning);
    assert!(UpToDate::mermaid().contains("[*] --> Applying"));
    assert!(Stalled::mermaid().contains("[*] --> Progressing"));
    assert_eq!(<UpToDate as ConditionType>::VOCABULARY.type_, "UpToDate");

    // Absent: may start in Applying.
    let State::Absent(now) = UpToDate::state(None) else { panic!("absent") };
    let desired = now.to(Applying, "rolling out generation 4");
    assert_eq!(desired.reason(), "Applying");
    assert_eq!(desired.status(), ConditionStatus::Unknown);

    // Applied: may go to Applying or WaitingForApproval, or stay.
    let condition = stored("Applied");
    match UpToDate::state(Some(&condition)) {
        State::Applied(now) => {
            assert_eq!(now.message(), Some("done"));
            let desired = now.clone().to(WaitingForApproval, "waiting for approval");
            assert_eq!(desired.status(), ConditionStatus::False);
            let _ = now.to(up_to_date::Applied, "still applied, new message");
        }
        other => panic!("expected Applied, got {other:?}"),
    }

    // A reason an older version wrote is a state, not a panic.
    let condition = stored("LegacyReason");
    let State::Unrecognized(now) = UpToDate::state(Some(&condition)) else { panic!("unrecognized") };
    assert_eq!(now.reason(), Some("LegacyReason"));
    let _ = now.to(Applying, "recovering");

    // The run-time-checked escape hatch: allowed transitions only.
    let condition = stored("Applied");
    assert!(UpToDate::state(Some(&condition)).try_to(UpToDate::Promoting, "x").is_none());
    let desired = UpToDate::state(Some(&condition))
        .try_to(UpToDate::WaitingForApproval, "gate")
        .expect("declared");
    assert_eq!(desired.reason(), "WaitingForApproval");
    assert_eq!(UpToDate::state(Some(&condition)).stored().message(), Some("done"));

    // The other vocabulary's state.
    let State::Absent(_) = UpToDate::state(None) else { unreachable!() };
    let stalled::State::Absent(now) = Stalled::state(None) else { panic!() };
    let _ = now.to(stalled::Progressing, "starting");
}
