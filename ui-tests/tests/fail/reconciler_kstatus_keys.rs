// `kstatus(..)` takes `stalled_after = N` (at least 1) and `current_at(gates)`.
use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/a", kstatus(stalled_after = 0))]
async fn a(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> {
    Ok(Action::await_change())
}

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/b", kstatus(stalled = 3))]
async fn b(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> {
    Ok(Action::await_change())
}

fn main() {}
