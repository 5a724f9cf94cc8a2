//! `#[derive(Terminal)]`: `kubeward::Terminal` for an error enum or struct. A variant (or the
//! struct) marked `#[terminal]` is terminal; any other asks its source — the field marked
//! `#[source]` or `#[from]`, else the field named `source`, else the only field of an
//! `#[error(transparent)]` variant — through the runtime's probe (terminal only when the source's
//! type implements `Terminal` and says so); without a source it is not terminal.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Fields, Index, Member};

use crate::util::{self, Errors};

/// Expands `#[derive(Terminal)]` on `input`.
pub fn terminal(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.into_compile_error(),
    };
    let mut errors = Errors::default();
    let mut krate = util::default_crate();
    let type_marked = marked(&input.attrs, &mut errors, Some(&mut krate));
    let body = match &input.data {
        Data::Enum(data) => {
            if type_marked {
                errors.at(
                    &input.ident,
                    "`#[terminal]` goes on the variants of an enum that are permanent, not on the enum",
                );
            }
            let arms = data.variants.iter().map(|variant| {
                let ident = &variant.ident;
                if marked(&variant.attrs, &mut errors, None) {
                    return quote!(Self::#ident { .. } => true,);
                }
                match source(&variant.fields, transparent(&variant.attrs)) {
                    Some((member, span)) => {
                        let verdict = probe(&krate, &quote!(__kubeward_source), span);
                        quote!(Self::#ident { #member: __kubeward_source, .. } => #verdict,)
                    }
                    None => quote!(Self::#ident { .. } => false,),
                }
            });
            let arms: Vec<_> = arms.collect();
            if data.variants.is_empty() {
                quote!(match *self {})
            } else {
                quote!(match self { #(#arms)* })
            }
        }
        Data::Struct(data) => {
            if type_marked {
                quote!(true)
            } else {
                match source(&data.fields, transparent(&input.attrs)) {
                    Some((member, span)) => {
                        let access = quote!(&self.#member);
                        probe(&krate, &access, span)
                    }
                    None => quote!(false),
                }
            }
        }
        Data::Union(_) => {
            errors.at(
                &input.ident,
                "`#[derive(Terminal)]` is for error enums and structs, not unions",
            );
            quote!(false)
        }
    };
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let errors = errors.into_compile_errors();
    quote! {
        #[automatically_derived]
        impl #impl_generics #krate::Terminal for #ident #ty_generics #where_clause {
            // The probe's double reference is what picks the source's `Terminal` impl.
            #[allow(clippy::needless_borrow)]
            fn is_terminal(&self) -> ::core::primitive::bool {
                #[allow(unused_imports)]
                use #krate::__private::terminal::{ProbeOther as _, ProbeTerminal as _};
                #body
            }
        }
        #errors
    }
}

/// The probe of the source at `access`: its `is_terminal()` when its type implements `Terminal`.
fn probe(krate: &syn::Path, access: &TokenStream, span: proc_macro2::Span) -> TokenStream {
    quote_spanned!(span=> (&&#krate::__private::terminal::Probe(#access)).terminal())
}

/// Whether `attrs` hold `#[terminal]`; `#[terminal(crate = "path")]` on the type sets `krate`.
fn marked(attrs: &[Attribute], errors: &mut Errors, mut krate: Option<&mut syn::Path>) -> bool {
    let mut marked = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("terminal")) {
        if matches!(attr.meta, syn::Meta::Path(_)) {
            marked = true;
            continue;
        }
        let result = attr.parse_nested_meta(|meta| match &mut krate {
            Some(krate) if meta.path.is_ident("crate") => {
                **krate = util::crate_path(&meta.value()?.parse()?)?;
                Ok(())
            }
            _ => Err(meta.error(
                "`#[terminal]` takes no arguments (on the type: `#[terminal(crate = \"path\")]`)",
            )),
        });
        errors.ok(result);
    }
    marked
}

/// Whether `attrs` hold thiserror's `#[error(transparent)]`.
fn transparent(attrs: &[Attribute]) -> bool {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("error"))
        .any(|a| {
            a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "transparent")
        })
}

/// The source field of `fields` (thiserror's rules) and its span.
fn source(fields: &Fields, transparent: bool) -> Option<(Member, proc_macro2::Span)> {
    let member = |index: usize, field: &syn::Field| match &field.ident {
        Some(ident) => Member::Named(ident.clone()),
        None => Member::Unnamed(Index::from(index)),
    };
    let all: Vec<_> = fields.iter().enumerate().collect();
    let attributed = all.iter().find(|(_, field)| {
        field
            .attrs
            .iter()
            .any(|a| a.path().is_ident("source") || a.path().is_ident("from"))
    });
    let named = || {
        all.iter()
            .find(|(_, field)| field.ident.as_ref().is_some_and(|i| i == "source"))
    };
    let only = || (transparent && all.len() == 1).then(|| &all[0]);
    attributed
        .or_else(named)
        .or_else(only)
        .map(|(index, field)| (member(*index, field), field.ty.span()))
}
