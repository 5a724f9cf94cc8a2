//! Generated public items are documented: a crate under `#![deny(missing_docs)]` compiles.
#![deny(missing_docs, warnings)]

use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass};

/// Whether the config is served.
#[kubeward::condition]
#[transitions(Loading -> Served, Served -> Loading)]
pub enum Served {
    /// Being loaded.
    #[reason(Unknown)]
    Loading,
    /// Served.
    #[reason(True)]
    Served,
}

/// Serves config maps.
#[kubeward::reconciler(resource = ConfigMap, controller = "demo.kubeward.dev/serve", conditions(Served))]
pub async fn serve(_object: &ConfigMap, pass: &mut Pass<ConfigMap>) -> Result<Action, std::io::Error> {
    if let served::State::Absent(now) = pass.condition::<Served>() {
        let _ = pass.set(now.to(served::Loading, "loading"));
    }
    Ok(Action::await_change())
}

/// A documented step.
#[kubeward::step("load")]
pub fn load() -> u8 {
    1
}

fn main() {
    let _ = Serve;
    let _ = load();
}
