//! The arguments of `#[reconciler(..)]`.

use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{LitStr, Path, Token, Type};

use crate::condition::path_name;
use crate::util::{self, Errors};
use kubeward_names::NameKind;

const KEYS: &[&str] = &[
    "resource",
    "controller",
    "finalizer",
    "conditions",
    "steps",
    "error",
    "info",
    "timeout",
    "kstatus",
    "owns",
    "watches",
    "reads",
    "crate",
];

/// `#[reconciler(resource = .., controller = "..", finalizer = "..", conditions(..), steps(..), error = .., info(..), timeout = "..", kstatus(..), owns(..), watches(..).., reads(..), crate = "..")]`
pub(crate) struct Args {
    pub resource: Option<Type>,
    pub controller: Option<LitStr>,
    pub finalizer: Option<LitStr>,
    pub conditions: Vec<Path>,
    /// The `#[step]` fns outside the item that its passes call (`steps(render, helpers::deploy)`).
    pub steps: Vec<Path>,
    pub error: Option<Type>,
    pub info: Vec<super::info::InfoLabel>,
    /// The reconcile timeout (`timeout = "30s"`), in milliseconds.
    pub timeout: Option<u64>,
    /// `kstatus = false` or `kstatus(..)`; `None` for the runtime's default.
    pub kstatus: Option<Kstatus>,
    /// `owns(..)` and each `watches(..)`.
    pub relations: super::relations::Relations,
    /// `reads(labels(..), annotations(..))`; `None`: every label and annotation.
    pub reads: Option<super::reads::Reads>,
    pub krate: Path,
}

/// The kstatus status a reconciler reports (`kubeward::kstatus`).
pub(crate) enum Kstatus {
    /// `kstatus = false`: none.
    Off,
    /// `kstatus(stalled_after = N, current_at(gate, ..))`.
    On {
        stalled_after: Option<u32>,
        /// The gates (reason types) reported as Current.
        current_at: Vec<Path>,
    },
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
            steps: Vec::new(),
            error: None,
            info: Vec::new(),
            timeout: None,
            kstatus: None,
            relations: super::relations::Relations::default(),
            reads: None,
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
                "conditions" => out.conditions = path_list(&meta, "condition", errors)?,
                "steps" => out.steps = path_list(&meta, "step fn", errors)?,
                "error" => out.error = Some(meta.value()?.parse()?),
                "info" => super::info::parse(&meta, &mut out.info, errors)?,
                "timeout" => {
                    let lit: LitStr = meta.value()?.parse()?;
                    match parse_duration(&lit.value()) {
                        Ok(millis) => out.timeout = Some(millis),
                        Err(message) => errors.at(&lit, message),
                    }
                }
                "kstatus" => out.kstatus = Some(parse_kstatus(&meta, errors)?),
                "owns" => out.relations.parse_owns(&meta, errors)?,
                // One `watches(..)` per related kind: the key repeats.
                "watches" => return out.relations.parse_watches(&meta, errors),
                "reads" => out.reads = Some(super::reads::Reads::parse(&meta, errors)?),
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

const KSTATUS_KEYS: &[&str] = &["stalled_after", "current_at"];

/// `kstatus = true | false` or `kstatus(stalled_after = 5, current_at(up_to_date::WaitingForApproval))`.
fn parse_kstatus(meta: &syn::meta::ParseNestedMeta, errors: &mut Errors) -> syn::Result<Kstatus> {
    if meta.input.peek(Token![=]) {
        let on: syn::LitBool = meta.value()?.parse()?;
        return Ok(if on.value {
            Kstatus::On {
                stalled_after: None,
                current_at: Vec::new(),
            }
        } else {
            Kstatus::Off
        });
    }
    let mut stalled_after = None;
    let mut current_at = Vec::new();
    meta.parse_nested_meta(|inner| {
        let key = path_name(&inner.path);
        match key.as_str() {
            "stalled_after" => {
                let lit: syn::LitInt = inner.value()?.parse()?;
                match lit.base10_parse::<u32>() {
                    Ok(n) if n > 0 => stalled_after = Some(n),
                    _ => errors.at(
                        &lit,
                        "`stalled_after` is the number of consecutive failed passes after which an object is reported Stalled: a whole number of at least 1",
                    ),
                }
            }
            "current_at" => current_at = path_list(&inner, "gate", errors)?,
            _ => {
                errors.push(inner.error(util::unknown_key("kstatus key", &key, KSTATUS_KEYS)));
                return util::skip_value(&inner);
            }
        }
        Ok(())
    })?;
    Ok(Kstatus::On {
        stalled_after,
        current_at,
    })
}

/// `(A, b::C, ..)`, each path once (`what` names a duplicate in the error).
fn path_list(
    meta: &syn::meta::ParseNestedMeta,
    what: &str,
    errors: &mut Errors,
) -> syn::Result<Vec<Path>> {
    let content;
    syn::parenthesized!(content in meta.input);
    let mut paths: Vec<Path> = Vec::new();
    for path in Punctuated::<Path, Token![,]>::parse_terminated(&content)? {
        let name = path_name(&path);
        if paths.iter().any(|p| path_name(p) == name) {
            errors.at(&path, format!("duplicate {what} `{name}`"));
        } else {
            paths.push(path);
        }
    }
    Ok(paths)
}

/// The milliseconds of a duration written as a number and a unit (`ms`, `s`, `m`, `h`), such as
/// `"30s"` or `"500ms"`; at least 1 ms.
pub(crate) fn parse_duration(text: &str) -> Result<u64, String> {
    let invalid = || {
        format!(
            "`timeout` must be a positive whole number with a unit (ms, s, m or h), such as \"30s\", got {text:?}"
        )
    };
    let digits = text.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &text[digits.len()..];
    let value: u64 = digits.parse().map_err(|_| invalid())?;
    let per_unit = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(invalid()),
    };
    match value.checked_mul(per_unit) {
        Some(0) | None => Err(invalid()),
        Some(millis) => Ok(millis),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations_take_a_whole_number_and_a_unit() {
        assert_eq!(parse_duration("30s"), Ok(30_000));
        assert_eq!(parse_duration("500ms"), Ok(500));
        assert_eq!(parse_duration("2m"), Ok(120_000));
        assert_eq!(parse_duration("1h"), Ok(3_600_000));
        for bad in ["30", "s", "0s", "1.5s", "-1s", "30 s", "30sec", ""] {
            let error = parse_duration(bad).unwrap_err();
            assert!(error.contains("such as \"30s\""), "{bad}: {error}");
        }
    }
}
