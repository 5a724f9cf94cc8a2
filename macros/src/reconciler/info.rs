//! `info(label = "path", ..)` of `#[reconciler]`: spec or status fields exported as the labels of
//! one `kubeward_object_info` series per object (see `kubeward::info`). Parsed and checked here,
//! expanded into the `Reconciler::INFO` constant.

use proc_macro2::TokenStream;
use quote::quote;
use syn::meta::ParseNestedMeta;
use syn::{Ident, LitStr, Path};

use crate::util::Errors;

/// The labels every per-object series already has (`kubeward::info::RESERVED_LABELS`).
const RESERVED: [&str; 3] = ["controller", "namespace", "name"];

/// One `label = "path"`.
pub(crate) struct InfoLabel {
    label: Ident,
    /// The path without a leading dot (`.status.revision` and `status.revision` are the same).
    path: String,
}

/// Parses the parenthesized list after `info`, appending to `out` and reporting each bad label or
/// path at its token.
pub(crate) fn parse(
    meta: &ParseNestedMeta,
    out: &mut Vec<InfoLabel>,
    errors: &mut Errors,
) -> syn::Result<()> {
    meta.parse_nested_meta(|entry| {
        let label = entry.path.require_ident()?.clone();
        let lit: LitStr = entry.value()?.parse()?;
        let name = label.to_string();
        if RESERVED.contains(&name.as_str()) {
            errors.at(
                &label,
                format!(
                    "info label `{name}` is taken: every per-object series has the labels {}",
                    RESERVED.map(|r| format!("`{r}`")).join(", ")
                ),
            );
        } else if name.starts_with("__") || name.starts_with("r#") {
            errors.at(
                &label,
                format!("info label `{name}` is not a Prometheus label name (`__` is reserved)"),
            );
        } else if out.iter().any(|i| i.label == label) {
            errors.at(&label, format!("duplicate info label `{name}`"));
        }
        let value = lit.value();
        let path = value.strip_prefix('.').unwrap_or(&value);
        if path.is_empty() || path.split('.').any(str::is_empty) {
            errors.at(
                &lit,
                format!(
                    "info field path {value:?} is not a dot-separated field path such as \"status.revision\""
                ),
            );
        }
        out.push(InfoLabel {
            label,
            path: path.to_owned(),
        });
        Ok(())
    })
}

/// `const INFO` for the `Reconciler` implementation, nothing when no field is declared.
pub(crate) fn expand(labels: &[InfoLabel], krate: &Path) -> Option<TokenStream> {
    if labels.is_empty() {
        return None;
    }
    let fields = labels.iter().map(|InfoLabel { label, path }| {
        let label = label.to_string();
        quote!(#krate::info::InfoField::new(#label, #path))
    });
    Some(quote! {
        const INFO: &'static [#krate::info::InfoField] = &[#(#fields),*];
    })
}
