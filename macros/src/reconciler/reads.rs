//! `reads(labels(".."), annotations(".."))` of `#[reconciler]`: the labels and annotations of its
//! objects a controller reads, so that a change of one of them — and no other label or
//! annotation — starts a pass (see `kubeward::controller::Reads`). Parsed and checked here,
//! expanded into `Reconciler::READS`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::{LitStr, Path, Token};

use crate::condition::path_name;
use crate::util::{self, Errors};
use kubeward_names::NameKind;

const KEYS: &[&str] = &["labels", "annotations"];

/// What `reads(..)` declared: the keys of each map (a map not named is not read).
#[derive(Default)]
pub(crate) struct Reads {
    labels: Vec<LitStr>,
    annotations: Vec<LitStr>,
}

impl Reads {
    /// `reads(labels("team"), annotations("example.com/approved", ..))`: each key a qualified
    /// name, once.
    pub(crate) fn parse(meta: &ParseNestedMeta, errors: &mut Errors) -> syn::Result<Self> {
        let mut reads = Reads::default();
        meta.parse_nested_meta(|inner| {
            let keys = match path_name(&inner.path).as_str() {
                "labels" => &mut reads.labels,
                "annotations" => &mut reads.annotations,
                other => {
                    errors.push(inner.error(util::unknown_key("reads key", other, KEYS)));
                    return util::skip_value(&inner);
                }
            };
            let content;
            syn::parenthesized!(content in inner.input);
            for key in Punctuated::<LitStr, Token![,]>::parse_terminated(&content)? {
                if keys.iter().any(|k| k.value() == key.value()) {
                    errors.at(&key, format!("duplicate key {:?}", key.value()));
                } else if util::check_name(errors, NameKind::MetadataKey, &key.value(), &key) {
                    keys.push(key);
                }
            }
            Ok(())
        })?;
        Ok(reads)
    }

    /// `const READS: Reads = ..;`
    pub(crate) fn expand(&self, krate: &Path) -> TokenStream {
        let (labels, annotations) = (&self.labels, &self.annotations);
        quote! {
            const READS: #krate::controller::Reads = #krate::controller::Reads {
                labels: #krate::controller::Keys::Only(&[#(#labels),*]),
                annotations: #krate::controller::Keys::Only(&[#(#annotations),*]),
            };
        }
    }
}
