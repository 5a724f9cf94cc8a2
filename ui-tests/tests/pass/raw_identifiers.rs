//! Raw identifiers declare the reason they spell without `r#`.
use kubeward::vocabulary::ConditionType;

#[kubeward::condition]
#[transitions(r#Pending -> r#Ready, Ready -> Pending)]
pub enum r#Provisioned {
    #[reason(Unknown)]
    r#Pending,
    #[reason(True)]
    r#Ready,
}

fn main() {
    assert_eq!(Provisioned::VOCABULARY.type_, "Provisioned");
    assert_eq!(Provisioned::Ready.reason(), "Ready");
    assert!(Provisioned::VOCABULARY.allows(Some("Pending"), "Ready"));
    if let provisioned::State::Absent(now) = Provisioned::state(None) {
        let desired = now.to(provisioned::r#Pending, "starting");
        assert_eq!(desired.reason(), "Pending");
    }
}
