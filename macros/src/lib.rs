//! Procedural macros for kubeward.
//!
//! The `#[reconciler]`, `#[step]` and `#[condition]` attributes live here; they expand onto the
//! public items of the `kubeward` runtime crate and its hidden `__private` module. Use them
//! through `kubeward` (`#[kubeward::reconciler]`), which re-exports them.
//!
//! Each macro has a parse (`ast`), a validation (`valid`) and an expansion (`expand`) module;
//! this file only converts between `proc_macro` and `proc_macro2` token streams.

extern crate proc_macro;

mod condition;
// The API server's naming rules, compiled from the runtime's own source so the compile-time
// checks and the runtime checks cannot drift apart.
#[allow(dead_code, unreachable_pub)]
#[path = "../../runtime/src/limits.rs"]
mod limits;
#[allow(dead_code, unreachable_pub)]
#[path = "../../runtime/src/names.rs"]
mod names;
mod reconciler;
mod step;
mod util;

use proc_macro::TokenStream;

/// Declares a condition vocabulary on an enum: one unit variant per reason, each with the status
/// it implies, and the transitions allowed between them. See the `kubeward` crate's docs.
#[proc_macro_attribute]
pub fn condition(args: TokenStream, input: TokenStream) -> TokenStream {
    condition::condition(args.into(), input.into()).into()
}

/// Times a fn as a named step of the current reconcile pass (a no-op outside a pass):
/// `#[kubeward::step("render")]`. Inside `#[kubeward::reconciler]`, also on statements.
#[proc_macro_attribute]
pub fn step(args: TokenStream, input: TokenStream) -> TokenStream {
    step::step(args.into(), input.into()).into()
}

/// Generates a `kubeward::Reconciler` from a declaration on an impl block (`async fn apply`,
/// optional `async fn cleanup`) or on a single async reconcile fn, with `#[step]` allowed on
/// its statements.
#[proc_macro_attribute]
pub fn reconciler(args: TokenStream, input: TokenStream) -> TokenStream {
    reconciler::reconciler(args.into(), input.into()).into()
}
