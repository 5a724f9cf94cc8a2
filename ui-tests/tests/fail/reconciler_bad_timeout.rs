// `timeout` is a whole number with a unit.
use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/slow", timeout = "1.5s")]
async fn slow(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> {
    Ok(Action::await_change())
}

fn main() {}
