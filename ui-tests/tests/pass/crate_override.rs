//! `crate = "path"`: generated code reaches the runtime through a facade that re-exports it.
#![deny(warnings)]

mod facade {
    pub use ::kubeward;
}

use k8s_openapi::api::core::v1::ConfigMap;
use facade::kubeward::{Action, Pass, Reconciler};

#[facade::kubeward::condition(crate = "crate::facade::kubeward")]
#[transitions(Applying -> Applied)]
pub enum UpToDate {
    #[reason(Unknown)]
    Applying,
    #[reason(True)]
    Applied,
}

#[facade::kubeward::reconciler(
    resource = ConfigMap,
    controller = "demo.kubeward.dev/facade",
    conditions(UpToDate),
    crate = "crate::facade::kubeward",
)]
async fn facade_reconciler(_object: &ConfigMap, pass: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
    #[step("render")]
    let _x = step_fn();
    let _ = pass.condition::<UpToDate>();
    Ok(Action::await_change())
}

#[facade::kubeward::step("fn-step", crate = "crate::facade::kubeward")]
fn step_fn() -> u8 {
    1
}

fn main() {
    assert_eq!(FacadeReconciler::STEPS[0].as_str(), "render");
    assert_eq!(UpToDate::Applying.reason(), "Applying");
}
