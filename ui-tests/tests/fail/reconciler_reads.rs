// `reads(labels(..), annotations(..))` takes label and annotation keys (qualified names), each
// once, and no other map.
use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[kubeward::reconciler(
    resource = ConfigMap,
    controller = "demo.kubeward.dev/a",
    reads(labels("team", "team", "not a key"), annotations("example.com/approved"), fields("spec")),
)]
async fn a(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> {
    Ok(Action::await_change())
}

fn main() {}
