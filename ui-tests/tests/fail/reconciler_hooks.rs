use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::controller::PassError;
use kubeward::events::Event;
use kubeward::observe::Phase;
use kubeward::{Action, Pass};

pub struct Hooks;

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/hooks")]
impl Hooks {
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
        Ok(Action::await_change())
    }

    // The phase is missing.
    pub fn failure_event(&self, _: &PassError<std::io::Error>) -> Option<Event> {
        None
    }

    // Not async in the trait.
    async fn error_backoff(&self, _: &PassError<std::io::Error>, _: u32) -> std::time::Duration {
        std::time::Duration::from_secs(1)
    }

    // An associated fn in the trait, without `self`.
    fn is_suspended(&self, _: &ConfigMap) -> bool {
        false
    }
}

pub struct Typed;

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/typed")]
impl Typed {
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
        Ok(Action::await_change())
    }

    // The right shape, the wrong type: rustc reports it at this signature.
    fn failure_event(&self, _: &std::io::Error, _: Phase) -> Option<Event> {
        None
    }
}

fn main() {}
