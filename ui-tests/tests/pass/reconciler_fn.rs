//! The fn form: a single async reconcile fn becomes a unit struct implementing `Reconciler`.
#![deny(warnings)]

use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass, Reconciler};

#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/web-config")]
pub async fn web_config(object: &ConfigMap, pass: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
    #[kubeward::step("read")]
    let data = object.data.clone().unwrap_or_default();
    if data.is_empty() {
        pass.skip("no data");
    }
    Ok(Action::await_change())
}

fn main() {
    assert_eq!(WebConfig::NAME, Some("demo.kubeward.dev/web-config"));
    assert_eq!(WebConfig::FINALIZER, None);
    assert_eq!(WebConfig::STEPS.len(), 1);
    assert!(WebConfig::CONDITIONS.is_empty());
    assert_eq!(WebConfig::rbac_rules(false).len(), 3);
}
