//! `#[reconciler(..)]`: a `Reconciler` implementation, a controller constructor and RBAC rules
//! generated from a declaration on an impl block or a single reconcile fn.

mod ast;
mod attr;
mod expand;
mod hooks;
mod info;
mod reads;
mod relations;
mod valid;

use proc_macro2::TokenStream;
use quote::quote;

use crate::util::Errors;

/// Expands `#[reconciler(args)] input`. On error, the item (with its steps rewritten) is still
/// emitted beside the errors.
pub fn reconciler(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    match ast::Reconciler::parse(args, input.clone(), &mut errors) {
        Ok(model) => {
            let checked = valid::check(&model, &mut errors);
            let expanded = if errors.is_empty() {
                expand::expand(&model, &checked)
            } else {
                match &model.form {
                    ast::Form::Impl(item) => quote!(#item),
                    ast::Form::Fn(item) => quote!(#item),
                }
            };
            let errors = errors.into_compile_errors();
            quote!(#expanded #errors)
        }
        Err(error) => {
            let error = error.into_compile_error();
            quote!(#input #error)
        }
    }
}
