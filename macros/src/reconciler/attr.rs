//! The arguments of `#[reconciler(..)]`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{LitStr, Path, Token, Type};

use crate::condition::path_name;
use crate::names::NameKind;
use crate::util::{self, Errors};

const KEYS: &[&str] = &[
    "resource",
    "controller",
    "finalizer",
    "conditions",
    "error",
    "info",
    "crate",
];

/// `#[reconciler(resource = .., controller = "..", finalizer = "..", conditions(..), error = .., info(..), crate = "..")]`
pub(crate) struct Args {
    pub resource: Option<Type>,
    pub controller: Option<LitStr>,
    pub finalizer: Option<LitStr>,
    pub conditions: Vec<Path>,
    pub error: Option<Type>,
    pub info: Vec<super::info::InfoLabel>,
    pub krate: Path,
}

impl Args {
    /// Parses the arguments, reporting unknown, duplicate and missing keys (at `item_span`, the
    /// name of the item the attribute is on) and invalid names.
    pub(crate) fn parse(args: TokenStream, item_span: Span, errors: &mut Errors) -> Self {
        let mut out = Args {
            resource: None,
            controller: None,
            finalizer: None,
            conditions: Vec::new(),
            error: None,
            info: Vec::new(),
            krate: util::default_crate(),
        };
        let mut seen: Vec<String> = Vec::new();
        let parser = syn::meta::parser(|meta| {
            let key = path_name(&meta.path);
            if seen.contains(&key) {
                return Err(meta.error(format!("duplicate key `{key}`")));
            }
            match key.as_str() {
                "resource" => out.resource = Some(meta.value()?.parse()?),
                "controller" => {
                    let lit: LitStr = meta.value()?.parse()?;
                    util::check_name(errors, NameKind::ControllerName, &lit.value(), &lit);
                    out.controller = Some(lit);
                }
                "finalizer" => {
                    let lit: LitStr = meta.value()?.parse()?;
                    util::check_name(errors, NameKind::Finalizer, &lit.value(), &lit);
                    out.finalizer = Some(lit);
                }
                "conditions" => {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    let list = Punctuated::<Path, Token![,]>::parse_terminated(&content)?;
                    for path in list {
                        let name = path_name(&path);
                        if out.conditions.iter().any(|c| path_name(c) == name) {
                            errors.at(&path, format!("duplicate condition `{name}`"));
                        } else {
                            out.conditions.push(path);
                        }
                    }
                }
                "error" => out.error = Some(meta.value()?.parse()?),
                "info" => super::info::parse(&meta, &mut out.info, errors)?,
                "crate" => out.krate = util::crate_path(&meta.value()?.parse()?)?,
                _ => {
                    errors.push(meta.error(util::unknown_key("key", &key, KEYS)));
                    return util::skip_value(&meta);
                }
            }
            seen.push(key);
            Ok(())
        });
        let result = parser.parse2(args);
        errors.ok(result);
        if out.resource.is_none() {
            errors.at_span(
                item_span,
                "#[reconciler] needs `resource = YourResource`, the type this controller reconciles",
            );
        }
        if out.controller.is_none() {
            errors.at_span(
                item_span,
                "#[reconciler] needs `controller = \"your.domain/name\"`: events' reportingController and the metric label",
            );
        }
        out
    }
}
