//! What the three macros share: error accumulation, the `crate = "path"` override, name
//! validation with the runtime's rules, and "did you mean" suggestions.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::{LitStr, Path};

use kubeward_names::NameKind;

/// Every error of one macro invocation, reported together (serde_derive's `Ctxt`).
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    /// Adds `error`.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// Adds an error pointing at `tokens`.
    pub(crate) fn at(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Adds an error pointing at `span`.
    pub(crate) fn at_span(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Adds the error of `result`, if any, and returns its value.
    pub(crate) fn ok<T>(&mut self, result: syn::Result<T>) -> Option<T> {
        result.map_err(|e| self.push(e)).ok()
    }

    /// Whether no error was reported.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// `compile_error!` invocations for every error (nothing when there is none).
    pub(crate) fn into_compile_errors(self) -> TokenStream {
        self.0
            .map(syn::Error::into_compile_error)
            .unwrap_or_default()
    }
}

/// The path generated code reaches the runtime by: `::kubeward` unless `crate = "path"` says
/// otherwise (for facades that re-export kubeward).
pub(crate) fn default_crate() -> Path {
    syn::parse_quote!(::kubeward)
}

/// Parses the value of `crate = "path"`.
pub(crate) fn crate_path(lit: &LitStr) -> syn::Result<Path> {
    lit.parse::<Path>().map_err(|_| {
        syn::Error::new(
            lit.span(),
            "`crate` must be a path to the kubeward crate, such as \"::my_facade::kubeward\"",
        )
    })
}

/// Checks `value` with the runtime's rules for `kind` (the same source as `kubeward::names`),
/// reporting the runtime's message at `tokens`.
pub(crate) fn check_name(
    errors: &mut Errors,
    kind: NameKind,
    value: &str,
    tokens: impl ToTokens,
) -> bool {
    match kind.validate(value) {
        Ok(()) => true,
        Err(invalid) => {
            errors.at(tokens, invalid);
            false
        }
    }
}

/// `tokens` with every span set to `span`: generated code around the user's tokens takes their
/// place in error messages, instead of the attribute's.
pub(crate) fn respan(tokens: impl ToTokens, span: Span) -> TokenStream {
    tokens
        .into_token_stream()
        .into_iter()
        .map(|mut tree| {
            if let proc_macro2::TokenTree::Group(group) = &tree {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                tree = proc_macro2::TokenTree::Group(inner);
            } else {
                tree.set_span(span);
            }
            tree
        })
        .collect()
}

/// The name an identifier stands for, without `r#`: `r#Ready` declares the reason `Ready`.
pub(crate) fn name_of(ident: &proc_macro2::Ident) -> String {
    syn::ext::IdentExt::unraw(ident).to_string()
}

/// The candidate `word` is one edit (insertion, deletion, substitution or transposition) away
/// from, if any.
pub(crate) fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .copied()
        .find(|candidate| edit_distance(word, candidate) <= 1)
}

/// Optimal string alignment distance, enough to suggest a key one typo away.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// Skips the value of a key that was reported as unknown (`= value` or `(..)`), so the keys
/// after it are still checked.
pub(crate) fn skip_value(meta: &syn::meta::ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

/// "unknown key `x`" with the valid keys, or a suggestion when one is a typo away.
pub(crate) fn unknown_key(what: &str, key: &str, keys: &[&str]) -> String {
    match did_you_mean(key, keys) {
        Some(suggestion) => format!("unknown {what} `{key}`: did you mean `{suggestion}`?"),
        None => format!(
            "unknown {what} `{key}`: expected one of {}",
            keys.iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `UpToDate` -> `up_to_date`, `HTTPReady` -> `http_ready`.
pub(crate) fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let boundary = match prev {
                None | Some('_') => false,
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                Some(p) => p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()),
            };
            if boundary {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `web_config` -> `WebConfig`.
pub(crate) fn camel_case(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// A list of names for messages: "`A`, `B` or `C`".
pub(crate) fn or_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("`{one}`"),
        [init @ .., last] => format!(
            "{} or `{last}`",
            init.iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_are_one_edit_away() {
        let keys = ["resource", "controller", "finalizer"];
        assert_eq!(did_you_mean("finaliser", &keys), Some("finalizer"));
        assert_eq!(did_you_mean("finalzier", &keys), Some("finalizer"));
        assert_eq!(did_you_mean("resources", &keys), Some("resource"));
        assert_eq!(did_you_mean("ctrl", &keys), None);
    }

    #[test]
    fn case_conversions() {
        assert_eq!(snake_case("UpToDate"), "up_to_date");
        assert_eq!(snake_case("HTTPReady"), "http_ready");
        assert_eq!(snake_case("Ready2Go"), "ready2_go");
        assert_eq!(camel_case("web_config"), "WebConfig");
        assert_eq!(camel_case("reconcile"), "Reconcile");
    }
}
