//! Expansion time of a 20-step reconciler with two 8-reason vocabularies (the design's target:
//! a few milliseconds). Calls the expand functions directly, parsing included; run with
//! `cargo bench -p kubeward-macros`.
#![allow(dead_code, unreachable_pub)]
// The included modules' unit tests are compiled out of a harness-less bench, leaving their imports.
#![cfg_attr(test, allow(unused_imports))]

// The macro implementation compiled into this bench (a proc-macro crate exports only its macros).
#[path = "../src/condition/mod.rs"]
mod condition;
#[path = "../src/reconciler/mod.rs"]
mod reconciler;
#[path = "../src/step/mod.rs"]
mod step;
#[path = "../src/util.rs"]
mod util;

use std::hint::black_box;
use std::time::{Duration, Instant};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// An 8-reason vocabulary: a chain R0 -> R1 -> ... -> R7 -> R0 with a shortcut from each reason.
fn vocabulary(name: &str) -> (TokenStream, TokenStream) {
    let ident = format_ident!("{name}");
    let reasons: Vec<_> = (0..8).map(|i| format_ident!("{name}Reason{i}")).collect();
    let next: Vec<_> = (0..8).map(|i| &reasons[(i + 1) % 8]).collect();
    let skip: Vec<_> = (0..8).map(|i| &reasons[(i + 2) % 8]).collect();
    let statuses = [
        "Unknown", "True", "False", "Unknown", "True", "False", "Unknown", "True",
    ]
    .map(|s| format_ident!("{s}"));
    let input = quote! {
        #[transitions(#(#reasons -> #next | #skip),*)]
        pub enum #ident {
            #(#[reason(#statuses)] #reasons,)*
        }
    };
    (quote!(), input)
}

/// A reconciler whose apply has 16 step statements and 4 step methods.
fn reconciler_input() -> (TokenStream, TokenStream) {
    let statements = (0..16).map(|i| {
        let name = format!("step-{i}");
        let var = format_ident!("v{i}");
        match i % 3 {
            0 => quote!(#[step(#name)] let #var = work(#i)?;),
            1 => quote!(#[step(#name)] let #var = self.remote(#i).await?;),
            _ => quote!(#[step(#name)] let #var = compute(#i);),
        }
    });
    let methods = (0..4).map(|i| {
        let name = format!("method-{i}");
        let ident = format_ident!("method_{i}");
        quote! {
            #[step(#name)]
            async fn #ident(&self, x: u32) -> Result<u32, Error> { Ok(x + 1) }
        }
    });
    let args = quote! {
        resource = Rollout,
        controller = "demo.kubeward.dev/rollouts",
        finalizer = "demo.kubeward.dev/cleanup",
        conditions(First, Second),
    };
    let input = quote! {
        impl Rollouts {
            async fn apply(&self, rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Error> {
                #(#statements)*
                if let first::State::Absent(now) = pass.condition::<First>() {
                    pass.set(now.to(first::FirstReason0, "starting"));
                }
                Ok(Action::await_change())
            }
            #(#methods)*
            async fn cleanup(&self, rollout: &Rollout, pass: &mut Pass<Rollout>) -> Result<Action, Error> {
                Ok(Action::await_change())
            }
        }
    };
    (args, input)
}

fn measure(label: &str, mut run: impl FnMut()) {
    for _ in 0..20 {
        run();
    }
    let mut iterations = 0u32;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        run();
        iterations += 1;
    }
    let per = started.elapsed() / iterations;
    println!("{label}: {per:?} per expansion ({iterations} iterations)");
}

fn main() {
    let first = vocabulary("First");
    let second = vocabulary("Second");
    let rec = reconciler_input();
    // Sanity: the inputs are valid, so no compile_error! is generated.
    for out in [
        condition::condition(first.0.clone(), first.1.clone()),
        reconciler::reconciler(rec.0.clone(), rec.1.clone()),
    ] {
        assert!(!out.to_string().contains("compile_error"), "{out}");
    }
    measure("8-reason vocabulary", || {
        black_box(condition::condition(first.0.clone(), first.1.clone()));
    });
    measure("20-step reconciler", || {
        black_box(reconciler::reconciler(rec.0.clone(), rec.1.clone()));
    });
    measure("20-step reconciler + two 8-reason vocabularies", || {
        black_box(condition::condition(first.0.clone(), first.1.clone()));
        black_box(condition::condition(second.0.clone(), second.1.clone()));
        black_box(reconciler::reconciler(rec.0.clone(), rec.1.clone()));
    });
}
