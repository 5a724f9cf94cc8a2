use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

mod helpers {
    pub fn untimed() {}
}

pub struct NotAStep;

// `helpers::untimed` has no `#[step]`: `steps(..)` lists `#[step]` fns only.
#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/not-a-step", steps(helpers::untimed))]
impl NotAStep {
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
        helpers::untimed();
        Ok(Action::await_change())
    }
}

fn main() {}
