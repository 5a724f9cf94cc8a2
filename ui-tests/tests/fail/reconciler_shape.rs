use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

pub struct NoApply;

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/a")]
impl NoApply {
    async fn cleanup(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
        Ok(Action::await_change())
    }
}

pub struct Blocking;

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/b")]
impl Blocking {
    fn apply(&self, _: &ConfigMap) -> Result<Action, std::io::Error> {
        Ok(Action::await_change())
    }
}

mod alias {
    use super::*;
    pub type Result<T> = std::result::Result<T, std::io::Error>;

    #[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/c")]
    async fn alias(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action> {
        Ok(Action::await_change())
    }
}

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/d")]
struct NotAnImpl;

pub struct ByHand;

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/e")]
impl kubeward::Reconciler for ByHand {
    type Resource = ConfigMap;
    type Error = std::io::Error;
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
        Ok(Action::await_change())
    }
}

fn main() {}
