use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[kubeward::step("render")]
fn render(_: &ConfigMap) -> u8 {
    1
}

mod helpers {
    #[kubeward::step("verify")]
    pub fn verify() {}

    #[kubeward::step("fetch")]
    pub async fn fetch() {}

    pub fn untimed() {}
}

pub struct Dup;

// `render` has the name of the method's step.
#[kubeward::reconciler(
    resource = ConfigMap,
    controller = "demo.kubeward.dev/dup",
    steps(helpers::verify, render, helpers::fetch),
)]
impl Dup {
    async fn apply(&self, object: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
        let _ = render(object);
        self.again().await;
        Ok(Action::await_change())
    }

    #[step("render")]
    async fn again(&self) {}
}

pub struct Twice;

#[kubeward::step("verify")]
fn verify_again() {}

// Two fns with one step name.
#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/twice", steps(helpers::verify, verify_again))]
impl Twice {
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
        helpers::verify();
        verify_again();
        Ok(Action::await_change())
    }
}

fn main() {}
