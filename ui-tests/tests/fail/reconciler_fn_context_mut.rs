// A single reconcile fn's context is lent to every pass: a shared reference, not `&mut`.
use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

pub struct Context;

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/mutates")]
async fn mutates(
    _: &ConfigMap,
    _: &mut Pass<ConfigMap>,
    _: &mut Context,
) -> Result<Action, kube::Error> {
    Ok(Action::await_change())
}

fn main() {}
