//! Generated code uses fully qualified paths: user code that shadows `Result`, `Ok`, `Option`,
//! `Vec` (and `String`, `Some`, `Send`) still compiles, without warnings.
#![deny(warnings)]
#![allow(dead_code)]

use k8s_openapi::api::core::v1::ConfigMap;
use kubeward::{Action, Pass, Reconciler};

pub struct Result;
pub struct Ok;
pub struct Option;
pub struct Vec;
pub struct String;
pub struct Some;
pub trait Send {}
pub mod core {}
pub mod std {}

type Outcome = ::std::result::Result<Action, ::std::io::Error>;

#[kubeward::condition]
#[transitions(Applying -> Applied)]
pub enum UpToDate {
    #[reason(Unknown)]
    Applying,
    #[reason(True)]
    Applied,
}

pub struct Rollouts;

#[kubeward::reconciler(
    resource = ConfigMap,
    controller = "demo.kubeward.dev/rollouts",
    finalizer = "demo.kubeward.dev/cleanup",
    conditions(UpToDate),
    error = ::std::io::Error,
)]
impl Rollouts {
    async fn apply(&self, _object: &ConfigMap, pass: &mut Pass<ConfigMap>) -> Outcome {
        #[step("render")]
        let manifest = render()?;
        #[step("deploy")]
        deploy(manifest).await?;
        if let up_to_date::State::Absent(now) = pass.condition::<UpToDate>() {
            let _ = pass.set(now.to(up_to_date::Applying, "starting"));
        }
        ::std::result::Result::Ok(Action::await_change())
    }

    async fn cleanup(&self, _object: &ConfigMap, _pass: &mut Pass<ConfigMap>) -> Outcome {
        ::std::result::Result::Ok(Action::await_change())
    }
}

#[kubeward::step("render-fn")]
fn render() -> ::std::io::Result<u8> {
    ::std::result::Result::Ok(1)
}

#[kubeward::step("deploy-fn")]
async fn deploy(_manifest: u8) -> ::std::result::Result<(), ::std::io::Error> {
    ::std::result::Result::Ok(())
}

fn main() {
    assert_eq!(Rollouts::STEPS.len(), 2);
    assert_eq!(UpToDate::Applied.reason(), "Applied");
}
