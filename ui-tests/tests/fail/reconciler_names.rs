use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[kubeward::reconciler(
    resource = ConfigMap,
    controller = "Demo.Kubeward.dev/rollouts",
    finalizer = "/cleanup",
)]
async fn rollouts(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
    #[step("Render")]
    let _x = 1;
    Ok(Action::await_change())
}

fn main() {}
