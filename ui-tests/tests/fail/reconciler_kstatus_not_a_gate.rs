// `kstatus(current_at(..))` names gates: a reason that is not one is refused where it is named.
use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[kubeward::condition(type = "Approved")]
#[transitions(Waiting -> Granted)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approved {
    #[reason(False, gate, initial)]
    Waiting,
    #[reason(True)]
    Granted,
}

#[kubeward::reconciler(
    resource = ConfigMap,
    controller = "demo.kubeward.dev/gated",
    conditions(Approved),
    kstatus(current_at(approved::Granted)),
)]
async fn gated(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> {
    Ok(Action::await_change())
}

fn main() {}
