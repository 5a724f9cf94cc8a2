//! `#[condition]`: a condition vocabulary declared on an enum, checked at compile time, with a
//! typestate API over its transitions.

mod ast;
pub(crate) use ast::path_name;
mod expand;
mod valid;

use proc_macro2::TokenStream;
use quote::quote;

use crate::util::Errors;

/// Expands `#[condition(args)] input`. On error, the user's enum is still emitted beside the
/// errors, with as much of the generated API as the declaration allows.
pub fn condition(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    match ast::Condition::parse(args, input.clone(), &mut errors) {
        Ok(mut model) => {
            let checked = valid::check(&mut model, &mut errors);
            let expanded = expand::expand(&model, &checked);
            let errors = errors.into_compile_errors();
            quote!(#expanded #errors)
        }
        Err(error) => {
            let error = error.into_compile_error();
            quote!(#input #error)
        }
    }
}
