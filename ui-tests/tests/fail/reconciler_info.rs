use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[kubeward::reconciler(
    resource = ConfigMap,
    controller = "demo.kubeward.dev/web",
    info(name = "data.name", revision = "data..rev", revision = "data.rev", __hidden = "data.x", empty = ""),
)]
async fn web(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
    Ok(Action::await_change())
}

fn main() {}
