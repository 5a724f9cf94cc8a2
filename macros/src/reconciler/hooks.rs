//! The `kubeward::Reconciler` hooks a `#[reconciler]` impl block may define. Every one the impl
//! defines is forwarded to the trait; a method with a hook's name but another shape is an error
//! naming the hook's signature, never a method silently left out.
//!
//! A hook added to `kubeward::Reconciler` is added to [`HOOKS`] too: a unit test compares the
//! table with the trait's source and fails naming the difference.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{FnArg, Path, ReturnType, Signature, Type};

use crate::util::{self, Errors};

/// One overridable method of `kubeward::Reconciler`.
pub(crate) struct Hook {
    /// The method's name.
    pub name: &'static str,
    /// Whether it is an `async fn`.
    pub is_async: bool,
    /// Whether it takes `&self` first.
    pub receiver: bool,
    /// Its other parameters' names, as the trait names them.
    pub params: &'static [&'static str],
    /// The signature as error messages show it.
    pub expected: &'static str,
    /// The trait method's parameters and return type (after `fn name`), with the runtime at the
    /// path given.
    pub signature: fn(&Path) -> TokenStream,
}

/// Every hook, in the trait's order.
pub(crate) const HOOKS: &[Hook] = &[
    Hook {
        name: "apply",
        is_async: true,
        receiver: true,
        params: &["object", "pass"],
        expected: "async fn apply(&self, object: &Resource, pass: &mut Pass<Resource>) -> Result<Action, Error>",
        signature: reconcile_signature,
    },
    Hook {
        name: "cleanup",
        is_async: true,
        receiver: true,
        params: &["object", "pass"],
        expected: "async fn cleanup(&self, object: &Resource, pass: &mut Pass<Resource>) -> Result<Action, Error>",
        signature: reconcile_signature,
    },
    Hook {
        name: "is_suspended",
        is_async: false,
        receiver: false,
        params: &["object"],
        expected: "fn is_suspended(object: &Resource) -> bool",
        signature: |_| quote!((object: &Self::Resource) -> ::core::primitive::bool),
    },
    Hook {
        name: "failure_event",
        is_async: false,
        receiver: true,
        params: &["error", "phase"],
        expected: "fn failure_event(&self, error: &PassError<Error>, phase: Phase) -> Option<Event>",
        signature: |krate| {
            quote! {
                (&self, error: &#krate::controller::PassError<Self::Error>, phase: #krate::observe::Phase)
                    -> ::core::option::Option<#krate::events::Event>
            }
        },
    },
    Hook {
        name: "error_backoff",
        is_async: false,
        receiver: true,
        params: &["error", "attempt"],
        expected: "fn error_backoff(&self, error: &PassError<Error>, attempt: u32) -> Duration",
        signature: |krate| {
            quote! {
                (&self, error: &#krate::controller::PassError<Self::Error>, attempt: ::core::primitive::u32)
                    -> ::core::time::Duration
            }
        },
    },
];

fn reconcile_signature(krate: &Path) -> TokenStream {
    quote! {
        (&self, object: &Self::Resource, pass: &mut #krate::Pass<Self::Resource>)
            -> impl ::core::future::Future<Output = ::core::result::Result<#krate::Action, Self::Error>> + ::core::marker::Send
    }
}

/// The hook named `name`, if any.
pub(crate) fn hook(name: &str) -> Option<&'static Hook> {
    HOOKS.iter().find(|hook| hook.name == name)
}

impl Hook {
    /// Checks that `sig` has this hook's shape (async or not, receiver, number of parameters, a
    /// return type); reports each mismatch with the expected signature. Types are left to rustc,
    /// at the forwarding call spanned on `sig`.
    pub(crate) fn check(&self, sig: &Signature, errors: &mut Errors) -> bool {
        let expected = self.expected;
        let mut ok = true;
        if sig.asyncness.is_some() != self.is_async {
            ok = false;
            match &sig.asyncness {
                Some(asyncness) => errors.at(
                    asyncness,
                    format!(
                        "`{}` must not be `async`: the `Reconciler` hook is `{expected}`",
                        self.name
                    ),
                ),
                None => errors.at(
                    sig.fn_token,
                    format!(
                        "`{}` must be an `async fn`: the `Reconciler` hook is `{expected}`",
                        self.name
                    ),
                ),
            }
        }
        let receiver = matches!(sig.inputs.first(), Some(FnArg::Receiver(_)));
        let params = sig.inputs.len() - usize::from(receiver);
        if receiver != self.receiver || params != self.params.len() {
            ok = false;
            errors.at_span(
                sig.paren_token.span.join(),
                format!(
                    "`{}` has the wrong parameters: the `Reconciler` hook is `{expected}`",
                    self.name
                ),
            );
        } else if matches!(sig.output, ReturnType::Default) {
            ok = false;
            errors.at(
                &sig.ident,
                format!(
                    "`{}` returns nothing: the `Reconciler` hook is `{expected}`",
                    self.name
                ),
            );
        }
        ok
    }

    /// The trait method forwarding to the impl's method `sig` on `self_ty`. Each argument is
    /// spanned at the user's parameter, so a type mismatch is reported at it.
    pub(crate) fn forward(&self, krate: &Path, self_ty: &Type, sig: &Signature) -> TokenStream {
        let name = format_ident!("{}", self.name);
        let signature = (self.signature)(krate);
        let user_params = sig.inputs.iter().filter(|i| matches!(i, FnArg::Typed(_)));
        let params = self
            .params
            .iter()
            .zip(user_params)
            .map(|(p, user)| format_ident!("{p}", span = user.span()));
        let receiver = self.receiver.then(|| quote!(self,));
        let call = util::respan(quote!(<#self_ty>::#name), sig.ident.span());
        quote! {
            fn #name #signature {
                #call(#receiver #(#params),*)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::HOOKS;

    /// The methods of `kubeward::Reconciler` as its source declares them: name, whether it takes
    /// `self`, and its other parameters' names.
    fn trait_methods() -> Vec<(String, bool, Vec<String>)> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../runtime/src/controller/reconciler.rs"
        );
        let source = std::fs::read_to_string(path).expect("the runtime's controller module");
        let file = syn::parse_file(&source).expect("the controller module parses");
        let reconciler = file
            .items
            .iter()
            .find_map(|item| match item {
                syn::Item::Trait(t) if t.ident == "Reconciler" => Some(t),
                _ => None,
            })
            .expect("trait Reconciler in runtime/src/controller/reconciler.rs");
        reconciler
            .items
            .iter()
            .filter_map(|item| match item {
                // Generated from the declaration (`owns(..)`, `watches(..)`), not forwarded.
                syn::TraitItem::Fn(f) if f.sig.ident == "relations" => None,
                syn::TraitItem::Fn(f) => Some(&f.sig),
                _ => None,
            })
            .map(|sig| {
                let receiver = sig.receiver().is_some();
                let params = sig
                    .inputs
                    .iter()
                    .filter_map(|arg| match arg {
                        syn::FnArg::Typed(t) => match &*t.pat {
                            syn::Pat::Ident(p) => Some(p.ident.to_string()),
                            _ => None,
                        },
                        syn::FnArg::Receiver(_) => None,
                    })
                    .collect();
                (sig.ident.to_string(), receiver, params)
            })
            .collect()
    }

    /// A hook added to the trait and not to [`HOOKS`] would be silently left out of generated
    /// impls: this fails instead, naming it.
    #[test]
    fn every_reconciler_method_is_a_forwarded_hook() {
        let methods = trait_methods();
        let table: Vec<(String, bool, Vec<String>)> = HOOKS
            .iter()
            .map(|h| {
                let params = h.params.iter().map(|p| (*p).to_owned()).collect();
                (h.name.to_owned(), h.receiver, params)
            })
            .collect();
        assert_eq!(
            methods, table,
            "kubeward::Reconciler's methods (left) and the hooks #[reconciler] forwards (right, \
             macros/src/reconciler/hooks.rs HOOKS) differ"
        );
    }
}
