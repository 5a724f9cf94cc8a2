#[kubeward::condition]
#[transitions(Provisioning -> Ready, Ready -> Provisioning)]
pub enum Provisioned {
    #[reason(Unknown)]
    Provisioning,
    #[reason(True)]
    Ready,
}

fn main() {
    use kubeward::vocabulary::ConditionType;
    if let provisioned::State::Provisioning(now) = Provisioned::state(None) {
        // The enum's variant, not the reason type `provisioned::Ready`.
        let _ = now.to(Provisioned::Ready, "provisioned");
    }
}
