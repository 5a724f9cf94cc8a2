#[kubeward::condition(type = "UpToDate")]
#[transitions(
    Applying -> Applied | FailedDeploy,
    Applied -> Applying | WaitingForApproval,
    WaitingForApproval -> Applying,
    FailedDeploy -> Applying,
)]
pub enum UpToDate {
    #[reason(Unknown)]
    Applying,
    #[reason(False, event = Normal)]
    WaitingForApproval,
    #[reason(True)]
    Applied,
    #[reason(False)]
    FailedDeploy,
}

fn main() {
    use kubeward::vocabulary::ConditionType;
    use up_to_date::*;
    if let State::Applied(now) = UpToDate::state(None) {
        let _ = now.to(FailedDeploy, "Applied -> FailedDeploy is not declared");
    }
    if let State::Absent(now) = UpToDate::state(None) {
        let _ = now.to(Applied, "a condition cannot start in Applied");
    }
    if let State::Applying(now) = UpToDate::state(None) {
        let _ = now.to(up_to_date::Bogus, "no such reason");
    }
}
