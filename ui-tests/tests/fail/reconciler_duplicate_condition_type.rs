use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[kubeward::condition(type = "Ready")]
#[transitions(Starting -> Running)]
pub enum Ready {
    #[reason(Unknown)]
    Starting,
    #[reason(True)]
    Running,
}

/// Another vocabulary of the same condition type: its reasons would be missing from the metrics.
#[kubeward::condition(type = "Ready")]
#[transitions(Down -> Up)]
pub enum Serving {
    #[reason(False)]
    Down,
    #[reason(True)]
    Up,
}

#[kubeward::condition]
#[transitions(Applying -> Applied)]
pub enum UpToDate {
    #[reason(Unknown)]
    Applying,
    #[reason(True)]
    Applied,
}

#[kubeward::reconciler(
    resource = ConfigMap,
    controller = "demo.kubeward.dev/rollouts",
    conditions(Ready, UpToDate, Serving),
)]
async fn rollouts(_: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
    Ok(Action::await_change())
}

fn main() {}
