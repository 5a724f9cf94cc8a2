// A reconciler's error must say which of its errors are terminal: the compiler asks, naming the
// derive that answers.
use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[derive(Debug, thiserror::Error)]
#[error("reconcile failed")]
pub struct Error;

pub struct Undecided;

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/undecided")]
impl Undecided {
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, Error> {
        Ok(Action::await_change())
    }
}

fn main() {}
