//! The arguments of `#[step]` and the fn it is on (its body is kept as tokens, never parsed).

use proc_macro2::{Group, TokenStream};
use syn::ext::IdentExt as _;
use syn::parse::{Parse, ParseStream, Parser};
use syn::{Attribute, LitStr, Path, Signature, Token, Visibility};

use crate::util::{self, Errors};
use kubeward_names::NameKind;

/// `"name"` and an optional `crate = "path"`.
pub(crate) struct StepArgs {
    /// The step name, validated.
    pub name: LitStr,
    pub krate: Path,
}

impl StepArgs {
    /// Parses and validates the arguments; `None` after reporting an error.
    /// `default_crate` is used unless the arguments say `crate = ".."`.
    pub(crate) fn parse(
        args: TokenStream,
        default_crate: &Path,
        errors: &mut Errors,
    ) -> Option<Self> {
        let parsed = (|input: ParseStream| {
            let name: LitStr = input.parse().map_err(|e| {
                syn::Error::new(e.span(), "expected the step name: `#[step(\"render\")]`")
            })?;
            let mut krate = None;
            while !input.is_empty() {
                input.parse::<Token![,]>()?;
                if input.is_empty() {
                    break;
                }
                let key = input.call(syn::Ident::parse_any)?;
                if key != "crate" {
                    return Err(syn::Error::new(
                        key.span(),
                        util::unknown_key("key", &key.to_string(), &["crate"]),
                    ));
                }
                input.parse::<Token![=]>()?;
                krate = Some(util::crate_path(&input.parse::<LitStr>()?)?);
            }
            Ok((name, krate))
        })
        .parse2(args);
        let (name, krate) = errors.ok(parsed)?;
        util::check_name(errors, NameKind::StepName, &name.value(), &name).then(|| StepArgs {
            name,
            krate: krate.unwrap_or_else(|| default_crate.clone()),
        })
    }
}

/// A fn with a body: the signature is parsed (to find `async` and the return type), the body
/// is kept as tokens.
pub(crate) struct StepFn {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub sig: Signature,
    pub body: Group,
}

impl StepFn {
    pub(crate) fn parse(input: TokenStream) -> syn::Result<Self> {
        syn::parse2(input)
    }
}

impl Parse for StepFn {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let fork = input.fork();
        if fork.parse::<Signature>().is_err() {
            let next = input.cursor().token_tree().map(|(tt, _)| tt.span());
            return Err(syn::Error::new(
                next.unwrap_or_else(|| input.span()),
                "#[step] goes on a fn (or, inside #[reconciler], on a statement)",
            ));
        }
        let sig: Signature = input.parse()?;
        if input.peek(Token![;]) {
            return Err(input.error("#[step] needs a fn with a body"));
        }
        let body: Group = input.parse()?;
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the fn body"));
        }
        Ok(StepFn {
            attrs,
            vis,
            sig,
            body,
        })
    }
}
