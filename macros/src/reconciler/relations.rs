//! `owns(Kind, whole(Kind), ..)` and `watches(Kind, map = path, labels = "..")` of `#[reconciler]`: the kinds a
//! controller watches beside its resource (see `kubeward::relations`). Parsed and checked here,
//! expanded into `Reconciler::relations`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{LitStr, Path, Token, Type};

use crate::util::{self, Errors};

/// A kind watched with a map function.
pub(crate) struct Watch {
    kind: Type,
    map: Path,
    labels: Option<LitStr>,
    fields: Option<LitStr>,
}

/// A kind owned: its children cached by their metadata, or `whole(Kind)`.
pub(crate) struct Owned {
    kind: Type,
    whole: bool,
}

/// What `owns(..)` and every `watches(..)` declared.
#[derive(Default)]
pub(crate) struct Relations {
    pub(crate) owns: Vec<Owned>,
    pub(crate) watches: Vec<Watch>,
}

fn type_name(ty: &Type) -> String {
    quote!(#ty).to_string().replace(' ', "")
}

const WATCH_KEYS: &[&str] = &["map", "labels", "fields"];

impl Relations {
    /// `owns(ConfigMap, whole(Deployment))`: each kind once; `whole(..)` caches its children
    /// whole, not only their metadata.
    pub(crate) fn parse_owns(
        &mut self,
        meta: &ParseNestedMeta,
        errors: &mut Errors,
    ) -> syn::Result<()> {
        let content;
        syn::parenthesized!(content in meta.input);
        let mut declared = 0;
        while !content.is_empty() {
            let whole = content.peek(syn::Ident) && content.peek2(syn::token::Paren) && {
                let fork = content.fork();
                fork.parse::<syn::Ident>()
                    .is_ok_and(|ident| ident == "whole")
            };
            let kind: Type = if whole {
                content.parse::<syn::Ident>()?;
                let inner;
                syn::parenthesized!(inner in content);
                inner.parse()?
            } else {
                content.parse()?
            };
            declared += 1;
            let name = type_name(&kind);
            if self.owns.iter().any(|o| type_name(&o.kind) == name) {
                errors.at(&kind, format!("duplicate owned kind `{name}`"));
            } else {
                self.owns.push(Owned { kind, whole });
            }
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        if declared == 0 {
            errors.push(meta.error(
                "`owns(..)` names the kinds this controller owns, such as `owns(ConfigMap)` (or `owns(whole(Deployment))` to cache the children whole)",
            ));
        }
        Ok(())
    }

    /// `watches(Secret, map = path::to_fn)`, with `labels = "app=web"` and `fields =
    /// "type=kubernetes.io/tls"` selectors narrowing the watch.
    pub(crate) fn parse_watches(
        &mut self,
        meta: &ParseNestedMeta,
        errors: &mut Errors,
    ) -> syn::Result<()> {
        let content;
        syn::parenthesized!(content in meta.input);
        let kind: Type = content.parse()?;
        let mut map = None;
        let mut labels = None;
        let mut fields = None;
        while content.parse::<Option<Token![,]>>()?.is_some() && !content.is_empty() {
            let key: syn::Ident = content.parse()?;
            content.parse::<Token![=]>()?;
            match key.to_string().as_str() {
                "map" => map = Some(content.parse::<Path>()?),
                "labels" => labels = Some(content.parse::<LitStr>()?),
                "fields" => fields = Some(content.parse::<LitStr>()?),
                other => {
                    errors.at(&key, util::unknown_key("watches key", other, WATCH_KEYS));
                    content.parse::<syn::Expr>()?;
                }
            }
        }
        if !content.is_empty() {
            return Err(content.error("expected `,`"));
        }
        let Some(map) = map else {
            errors.at(
                &kind,
                format!(
                    "`watches({})` needs `map = path::to_fn`: the fn that names the objects a change to one concerns, `fn(&{0}, &Store<Resource>) -> Vec<ObjectRef<Resource>>`",
                    type_name(&kind)
                ),
            );
            return Ok(());
        };
        self.watches.push(Watch {
            kind,
            map,
            labels,
            fields,
        });
        Ok(())
    }

    /// The `relations` fn of the `Reconciler` impl, or nothing when none is declared (the
    /// trait's default).
    pub(crate) fn expand(&self, krate: &Path) -> TokenStream {
        if self.owns.is_empty() && self.watches.is_empty() {
            return TokenStream::new();
        }
        let owns = self.owns.iter().map(|Owned { kind, whole }| {
            if *whole {
                quote_spanned!(kind.span()=> .owns_whole::<#kind>())
            } else {
                quote_spanned!(kind.span()=> .owns::<#kind>())
            }
        });
        let watches = self.watches.iter().map(
            |Watch {
                 kind,
                 map,
                 labels,
                 fields,
             }| {
                if labels.is_none() && fields.is_none() {
                    return quote_spanned!(map.span()=> .watches::<#kind, _>(#map));
                }
                let labels = labels.iter();
                let fields = fields.iter();
                quote_spanned!(map.span()=> .watches_with::<#kind, _>(
                    #krate::__private::kube::runtime::watcher::Config::default()
                        #(.labels(#labels))* #(.fields(#fields))*,
                    #map,
                ))
            },
        );
        quote! {
            fn relations() -> #krate::relations::Relations<Self::Resource> {
                #krate::relations::Relations::new() #(#owns)* #(#watches)*
            }
        }
    }
}
