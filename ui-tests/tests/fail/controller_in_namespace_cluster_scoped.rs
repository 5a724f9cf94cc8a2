// Only a namespaced resource can be watched in one namespace.
use k8s_openapi::api::core::v1::Namespace;
use kubeward::{Action, Pass};

#[kubeward::reconciler(resource = Namespace, controller = "demo.kubeward.dev/tenants")]
async fn tenants(_: &Namespace, _: &mut Pass<Namespace>) -> Result<Action, kube::Error> {
    Ok(Action::await_change())
}

async fn run(client: kube::Client) {
    let _ = Tenants.controller(client).in_namespace("demo");
}

fn main() {}
