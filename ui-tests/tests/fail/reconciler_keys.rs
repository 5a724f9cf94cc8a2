use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

pub struct Rollouts;

#[kubeward::reconciler(resource = ConfigMap, finaliser = "demo.kubeward.dev/cleanup", contoller = "x")]
impl Rollouts {
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
        Ok(Action::await_change())
    }
}

#[kubeward::reconciler(controller = "demo.kubeward.dev/web", resource = ConfigMap, resource = ConfigMap)]
async fn web(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
    Ok(Action::await_change())
}

#[kubeward::reconciler()]
async fn nothing(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
    Ok(Action::await_change())
}

fn main() {}
