use std::future::Future;
use std::pin::Pin;

#[kubeward::step("deploy")]
fn deploy() -> impl Future<Output = Result<(), std::io::Error>> {
    async { Ok(()) }
}

#[kubeward::step("render")]
fn render() -> Pin<Box<dyn Future<Output = u8> + Send>> {
    Box::pin(async { 1 })
}

// Not refused: an async fn is timed while it runs, and a sync fn returning a value is fine.
#[kubeward::step("verify")]
async fn verify() -> u8 {
    1
}

struct Rollouts;

#[kubeward::reconciler(resource = k8s_openapi::api::core::v1::ConfigMap, controller = "demo.kubeward.dev/rollouts")]
impl Rollouts {
    async fn apply(
        &self,
        _: &k8s_openapi::api::core::v1::ConfigMap,
        _: &mut kubeward::Pass<k8s_openapi::api::core::v1::ConfigMap>,
    ) -> Result<kubeward::Action, std::io::Error> {
        Ok(kubeward::Action::await_change())
    }

    #[step("publish")]
    fn publish(&self) -> impl Future<Output = ()> + '_ {
        async {}
    }
}

fn main() {}
