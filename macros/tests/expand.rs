//! Expansion snapshots: what the macros generate for a representative vocabulary, reconciler and
//! step fn, pretty-printed and diffed against the checked-in `tests/expand/*.expanded.rs`.
//! Regenerate with `UPDATE_SNAPSHOTS=1 cargo test -p kubeward-macros --test expand` and review
//! the diff.
#![allow(dead_code, unreachable_pub)]

// The macro implementation compiled into this test (a proc-macro crate exports only its macros).
#[path = "../src/condition/mod.rs"]
mod condition;
#[path = "../src/reconciler/mod.rs"]
mod reconciler;
#[path = "../src/step/mod.rs"]
mod step;
#[path = "../src/util.rs"]
mod util;

use proc_macro2::TokenStream;
use quote::quote;

fn check_snapshot(name: &str, expanded: TokenStream) {
    let file: syn::File = syn::parse2(expanded).expect("the expansion parses as a file");
    let pretty = prettyplease::unparse(&file);
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expand")
        .join(format!("{name}.expanded.rs"));
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() || !path.exists() {
        std::fs::write(&path, &pretty).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).expect("read snapshot");
    assert!(
        expected == pretty,
        "expansion of {name} changed; rerun with UPDATE_SNAPSHOTS=1 and review the diff.\n--- new ---\n{pretty}"
    );
}

#[test]
fn vocabulary_expansion_matches_snapshot() {
    let expanded = condition::condition(
        quote!(type = "UpToDate"),
        quote! {
            #[transitions(
                Applied -> Applying | WaitingForApproval,
                WaitingForApproval -> Applying,
                Applying -> Applied | FailedDeploy,
                FailedDeploy -> Applying,
            )]
            pub enum UpToDate {
                #[reason(Unknown, initial)] Applying,
                #[reason(False, gate)] WaitingForApproval,
                #[reason(True)] Applied,
                #[reason(False)] FailedDeploy,
            }
        },
    );
    check_snapshot("vocabulary", expanded);
}

#[test]
fn reconciler_expansion_matches_snapshot() {
    let expanded = reconciler::reconciler(
        quote! {
            resource = Rollout,
            controller = "demo.kubeward.dev/rollouts",
            finalizer = "demo.kubeward.dev/cleanup",
            conditions(UpToDate),
            steps(checks::verify),
            owns(ConfigMap),
            watches(Secret, map = secret_users),
        },
        quote! {
            impl Rollouts {
                async fn apply(&self, rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Error> {
                    #[step("render")]
                    let manifest = render(rollout)?;
                    #[step("deploy")]
                    self.deploy(&manifest).await?;
                    #[step("probe")]
                    let probed = self.probe().await;
                    if let up_to_date::State::Applied(now) = pass.condition::<UpToDate>() {
                        pass.set(now.to(up_to_date::Applying, "rolling out"));
                    }
                    Ok(Action::await_change())
                }

                #[step("publish")]
                async fn publish(&self, m: &Manifest) -> Result<(), Error> {
                    self.client.apply(m).await
                }

                async fn cleanup(&self, rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Error> {
                    Ok(Action::await_change())
                }
            }
        },
    );
    check_snapshot("reconciler", expanded);
}

#[test]
fn step_fn_expansion_matches_snapshot() {
    let expanded = step::step(
        quote!("render"),
        quote! {
            /// Renders the manifest.
            pub fn render(rollout: &Rollout) -> anyhow::Result<Manifest> {
                Ok(Manifest::from(rollout))
            }
        },
    );
    check_snapshot("step_fn", expanded);
}

#[test]
fn errors_point_at_tokens_and_keep_the_item() {
    let expanded = condition::condition(
        quote!(),
        quote! {
            #[transitions(A -> Missing)]
            enum Broken { #[reason(True)] A, #[reason(False)] B }
        },
    )
    .to_string();
    assert!(
        expanded.contains("enum Broken"),
        "the item is kept: {expanded}"
    );
    assert!(expanded.contains("is not a reason of `Broken`"));
    assert!(expanded.contains("reason `B` is unreachable"));
}
