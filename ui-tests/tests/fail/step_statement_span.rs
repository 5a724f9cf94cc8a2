use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

#[derive(Debug, thiserror::Error, kubeward::Terminal)]
#[error("reconcile failed")]
pub struct Error;

pub struct Spans;

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/spans")]
impl Spans {
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, Error> {
        // `ParseIntError` does not convert into `Error`: reported at this `?`, as without `#[step]`.
        #[step("parse")]
        let _n = "1".parse::<u8>()?;
        #[step("fetch")]
        let _m = fetch().await?;
        Ok(Action::await_change())
    }
}

async fn fetch() -> Result<u8, std::num::ParseIntError> {
    Ok(1)
}

fn main() {}
