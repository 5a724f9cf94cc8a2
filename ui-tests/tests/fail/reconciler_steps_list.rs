use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

mod helpers {
    #[kubeward::step("fetch")]
    pub async fn fetch() {}
}

pub struct Listed;

// `helpers::fetch` is listed twice.
#[kubeward::reconciler(
    resource = ConfigMap,
    controller = "demo.kubeward.dev/listed",
    steps(helpers::fetch, helpers::fetch),
)]
impl Listed {
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
        helpers::fetch().await;
        Ok(Action::await_change())
    }
}

fn main() {}
