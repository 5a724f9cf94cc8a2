//! `#[step("name")]`: times a fn (anywhere) or a statement (inside `#[reconciler]`) as a named
//! step of the current pass.

pub(crate) mod ast;
pub(crate) mod expand;
pub(crate) mod valid;

use proc_macro2::TokenStream;
use quote::quote;

use crate::util::Errors;

/// Expands `#[step(args)] input` on a fn. On error the fn is emitted unchanged beside the errors.
pub fn step(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = ast::StepArgs::parse(args, &crate::util::default_crate(), &mut errors);
    let item = errors.ok(ast::StepFn::parse(input.clone()));
    if let Some(item) = &item {
        let _ = valid::check_fn(item, &mut errors);
    }
    let errors = errors.into_compile_errors();
    match (args, item) {
        (Some(args), Some(item)) if errors.is_empty() => expand::step_fn(&args, &item, true),
        _ => quote!(#input #errors),
    }
}
