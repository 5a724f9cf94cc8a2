// `owns(..)` names each kind once; `watches(Kind, map = f)` needs its map fn, of the right
// signature, and takes `labels = ".."` besides.
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::runtime::reflector::{ObjectRef, Store};
use kubeward::{Action, Pass};

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/a", owns(Secret, Secret), watches(Secret))]
async fn a(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> {
    Ok(Action::await_change())
}

fn users(_: &Secret, _: &Store<ConfigMap>) -> Vec<ObjectRef<ConfigMap>> {
    Vec::new()
}

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/b", watches(Secret, map = users, label = "app"))]
async fn b(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> {
    Ok(Action::await_change())
}

fn wrong(_: &Secret) -> Vec<ObjectRef<ConfigMap>> {
    Vec::new()
}

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/c", watches(Secret, map = wrong))]
async fn c(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> {
    Ok(Action::await_change())
}

fn main() {}
