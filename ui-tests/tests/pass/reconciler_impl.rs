//! The impl form: apply and cleanup, steps on methods (async and sync) and on statements
//! (sync, awaited, with and without `?`), typed transitions, the generated constructor and RBAC.
#![deny(warnings)]

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass, Reconciler, step};

#[derive(Debug, thiserror::Error, kubeward::Terminal)]
pub enum Error {
    #[error("render failed")]
    Render,
}

#[kubeward::condition(type = "UpToDate")]
#[transitions(Applying -> Applied, Applied -> Applying)]
pub enum UpToDate {
    #[reason(Unknown)]
    Applying,
    #[reason(True)]
    Applied,
}

pub struct Rollouts {
    replicas: u32,
}

#[kubeward::reconciler(
    resource = ConfigMap,
    controller = "demo.kubeward.dev/rollouts",
    finalizer = "demo.kubeward.dev/cleanup",
    conditions(UpToDate),
)]
impl Rollouts {
    async fn apply(&self, object: &ConfigMap, pass: &mut Pass<ConfigMap>) -> Result<Action, Error> {
        #[step("render")]
        let manifest = render(object)?;
        #[step("count")]
        let count = manifest.len() as u32 + self.replicas;
        #[step("deploy")]
        self.deploy(&manifest).await?;
        #[step("wait")]
        let mut waited = wait(count).await;
        #[step("add")]
        waited = waited.checked_add(1).ok_or(Error::Render)?;
        if let up_to_date::State::Absent(now) = pass.condition::<UpToDate>() {
            let _ = pass.set(now.to(up_to_date::Applying, format!("rolling out {waited}")));
        }
        let _ = self.checksum(&manifest)?;
        Ok(Action::requeue(Duration::from_secs(5)))
    }

    #[step("publish")]
    async fn deploy(&self, manifest: &str) -> Result<(), Error> {
        if manifest.is_empty() {
            return Err(Error::Render);
        }
        Ok(())
    }

    #[step("checksum")]
    fn checksum(&self, manifest: &str) -> Result<usize, Error> {
        Ok(manifest.len())
    }

    async fn cleanup(&self, _object: &ConfigMap, _pass: &mut Pass<ConfigMap>) -> Result<Action, Error> {
        Ok(Action::await_change())
    }
}

fn render(object: &ConfigMap) -> Result<String, Error> {
    object.metadata.name.clone().ok_or(Error::Render)
}

#[step("wait")]
async fn wait(n: u32) -> u32 {
    n
}

#[step("sync-helper")]
fn helper(x: u8) -> u8 {
    x + 1
}

fn main() {
    assert_eq!(Rollouts::NAME, Some("demo.kubeward.dev/rollouts"));
    assert_eq!(Rollouts::FINALIZER, Some("demo.kubeward.dev/cleanup"));
    let steps: Vec<&str> = Rollouts::STEPS.iter().map(|s| s.as_str()).collect();
    assert_eq!(steps, ["render", "count", "deploy", "wait", "add", "publish", "checksum"]);
    assert_eq!(Rollouts::CONDITIONS[0].type_, "UpToDate");
    let rules = Rollouts::rbac_rules(true);
    assert!(rules.iter().any(|r| r.resources.as_deref() == Some(&["configmaps/finalizers".to_owned()][..])));
    assert_eq!(helper(1), 2);
    let _controller = |client: kube::Client| Rollouts { replicas: 1 }.controller(client);
}
