//! `#[condition(..)]` parsed into a typed model that keeps the user's tokens for error spans.

use proc_macro2::TokenStream;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Attribute, Fields, Ident, ItemEnum, LitStr, Path, Token};

use crate::util::{self, Errors};

/// A condition vocabulary as declared.
pub(crate) struct Condition {
    /// The user's enum, with the `#[reason]` and `#[transitions]` attributes removed.
    pub item: ItemEnum,
    /// The path to the runtime.
    pub krate: Path,
    /// `type = "..."`, if given (else the enum's name is the condition type).
    pub type_lit: Option<LitStr>,
    /// The reasons in declaration order.
    pub reasons: Vec<Reason>,
    /// Every `from -> to` pair of `#[transitions(..)]`, in order.
    pub edges: Vec<(Ident, Ident)>,
}

/// One variant of the enum.
pub(crate) struct Reason {
    pub ident: Ident,
    /// `True`, `False` or `Unknown` as written.
    pub status: Option<Ident>,
    /// `Normal` or `Warning` as written after `event =`.
    pub event: Option<Ident>,
    /// `initial`, if written.
    pub initial: Option<Ident>,
    /// `gate`, if written: a human gate (classed `waiting`, its event Normal).
    pub gate: Option<Ident>,
    /// Indices of the reasons it may go to (filled by validation).
    pub targets: Vec<usize>,
}

const ARG_KEYS: &[&str] = &["type", "crate"];
const REASON_KEYS: &[&str] = &["True", "False", "Unknown", "event", "initial", "gate"];

impl Condition {
    /// Parses the attribute's arguments and the enum, reporting every problem into `errors`.
    /// Fails only when the item is not an enum.
    pub(crate) fn parse(
        args: TokenStream,
        input: TokenStream,
        errors: &mut Errors,
    ) -> syn::Result<Self> {
        let mut item = match syn::parse2::<syn::Item>(input)? {
            syn::Item::Enum(item) => item,
            other => return Err(not_an_enum(&other)),
        };
        let mut type_lit = None;
        let mut krate = None;
        let mut unknown = Vec::new();
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("type") {
                type_lit = Some(meta.value()?.parse::<LitStr>()?);
            } else if meta.path.is_ident("crate") {
                let lit = meta.value()?.parse::<LitStr>()?;
                krate = Some(util::crate_path(&lit)?);
            } else {
                let key = path_name(&meta.path);
                unknown.push(meta.error(util::unknown_key("key", &key, ARG_KEYS)));
                util::skip_value(&meta)?;
            }
            Ok(())
        });
        errors.ok(parser.parse2(args));
        unknown.into_iter().for_each(|e| errors.push(e));

        let mut edges = Vec::new();
        item.attrs.retain(|attr| {
            if !attr.path().is_ident("transitions") {
                return true;
            }
            if let Some(groups) = errors.ok(attr.parse_args_with(parse_transitions)) {
                edges.extend(groups);
            }
            false
        });

        let mut reasons = Vec::new();
        for variant in &mut item.variants {
            if !matches!(variant.fields, Fields::Unit) {
                errors.at(
                    &variant.fields,
                    "a reason is a unit variant: the condition's message is given at each transition",
                );
            }
            let mut reason = Reason {
                ident: variant.ident.clone(),
                status: None,
                event: None,
                initial: None,
                gate: None,
                targets: Vec::new(),
            };
            let mut seen = None::<Attribute>;
            variant.attrs.retain(|attr| {
                if !attr.path().is_ident("reason") {
                    return true;
                }
                if seen.is_some() {
                    errors.at(attr.path(), "duplicate `#[reason]` on one variant");
                } else {
                    parse_reason(attr, &mut reason, errors);
                    seen = Some(attr.clone());
                }
                false
            });
            match seen {
                None => errors.at(
                    &variant.ident,
                    format!(
                        "reason `{}` needs a status: add `#[reason(True)]`, `#[reason(False)]` or `#[reason(Unknown)]`",
                        variant.ident
                    ),
                ),
                Some(attr) if reason.status.is_none() => errors.at(
                    attr.path(),
                    "missing status: the first argument of `#[reason(..)]` is `True`, `False` or `Unknown`",
                ),
                Some(_) => {}
            }
            reasons.push(reason);
        }

        Ok(Condition {
            item,
            krate: krate.unwrap_or_else(util::default_crate),
            type_lit,
            reasons,
            edges,
        })
    }
}

/// `A | B -> C | D, E -> F`
fn parse_transitions(input: ParseStream) -> syn::Result<Vec<(Ident, Ident)>> {
    let mut edges = Vec::new();
    while !input.is_empty() {
        let sources = Punctuated::<Ident, Token![|]>::parse_separated_nonempty(input)?;
        input.parse::<Token![->]>()?;
        let targets = Punctuated::<Ident, Token![|]>::parse_separated_nonempty(input)?;
        for source in &sources {
            for target in &targets {
                edges.push((source.clone(), target.clone()));
            }
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(edges)
}

fn parse_reason(attr: &Attribute, reason: &mut Reason, errors: &mut Errors) {
    let result = attr.parse_nested_meta(|meta| {
        let key = path_name(&meta.path);
        match key.as_str() {
            "True" | "False" | "Unknown" => {
                if reason.status.is_some() {
                    return Err(meta.error("a reason has one status"));
                }
                reason.status = meta.path.get_ident().cloned();
            }
            "event" => {
                let value: Ident = meta.value()?.parse()?;
                if value != "Normal" && value != "Warning" {
                    return Err(syn::Error::new(
                        value.span(),
                        format!("unknown event type `{value}`: expected `Normal` or `Warning`"),
                    ));
                }
                reason.event = Some(value);
            }
            "initial" => reason.initial = meta.path.get_ident().cloned(),
            "gate" => reason.gate = meta.path.get_ident().cloned(),
            _ => return Err(meta.error(util::unknown_key("argument", &key, REASON_KEYS))),
        }
        Ok(())
    });
    errors.ok(result);
}

/// The path as written, for messages (`crate`, `type` and other keywords included).
pub(crate) fn path_name(path: &Path) -> String {
    path.segments
        .iter()
        .map(|s| util::name_of(&s.ident))
        .collect::<Vec<_>>()
        .join("::")
}

fn not_an_enum(item: &syn::Item) -> syn::Error {
    let message = "#[kubeward::condition] goes on an enum with one unit variant per reason";
    match item {
        syn::Item::Struct(s) => syn::Error::new_spanned(s.struct_token, message),
        syn::Item::Fn(f) => syn::Error::new_spanned(f.sig.fn_token, message),
        syn::Item::Union(u) => syn::Error::new_spanned(u.union_token, message),
        other => syn::Error::new_spanned(other, message),
    }
}
