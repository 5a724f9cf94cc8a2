use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[kubeward::condition]
#[transitions(Applying -> Applied)]
pub enum UpToDate {
    #[reason(Unknown)]
    Applying,
    #[reason(True)]
    Applied,
}

#[kubeward::condition]
#[transitions(Starting -> Running)]
pub enum Ready {
    #[reason(Unknown)]
    Starting,
    #[reason(True)]
    Running,
}

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/rollouts", conditions(UpToDate, UpToDate))]
async fn rollouts(_: &ConfigMap, pass: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
    let _ = pass.condition::<UpToDate>();
    let _ = pass.condition::<Ready>();
    Ok(Action::await_change())
}

fn main() {}
