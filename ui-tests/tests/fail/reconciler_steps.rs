use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

pub struct Rollouts;

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/rollouts")]
impl Rollouts {
    async fn apply(&self, object: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
        #[step("render")]
        let a = object.data.clone();
        #[step("render")]
        let b = parse(read(object)?);
        #[step("fetch")]
        let c = parse(fetch().await);
        #[step("later")]
        let d;
        #[step("early-return")]
        let e = parse(if a.is_none() { return Ok(Action::await_change()) } else { 1 });
        d = 1;
        let _ = (a, b, c, d, e);
        Ok(Action::await_change())
    }

    #[step("fetch")]
    async fn helper(&self) {}
}

fn read(_: &ConfigMap) -> std::io::Result<u8> { Ok(1) }
fn parse(x: u8) -> u8 { x }
async fn fetch() -> u8 { 1 }

fn main() {}
