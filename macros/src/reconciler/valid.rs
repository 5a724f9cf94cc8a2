//! Rules across the declaration and the bodies: unique step names, conditions used are
//! declared, `apply`/`cleanup` present and async, an error type known.

use std::collections::HashSet;

use syn::{FnArg, GenericArgument, ImplItem, PathArguments, ReturnType, Signature, Type};

use super::ast::{Form, Reconciler};
use crate::util::Errors;

/// What validation derives for expansion.
pub(crate) struct Checked {
    /// The error type (`error = ..` or the `E` of apply's `Result<Action, E>`), if known.
    pub error: Option<Type>,
    /// Whether the impl has a `cleanup` method.
    pub has_cleanup: bool,
    /// Whether the impl has an `is_suspended(object) -> bool` associated fn.
    pub has_is_suspended: bool,
    /// The step names, each once, in source order.
    pub steps: Vec<syn::LitStr>,
}

pub(crate) fn check(model: &Reconciler, errors: &mut Errors) -> Checked {
    let mut seen = HashSet::new();
    let mut steps = Vec::new();
    for name in &model.steps {
        if seen.insert(name.value()) {
            steps.push(name.clone());
        } else {
            errors.at(
                name,
                format!(
                    "duplicate step name \"{}\": each step is its own metric series; name this one differently",
                    name.value()
                ),
            );
        }
    }

    let declared: Vec<String> = model
        .args
        .conditions
        .iter()
        .filter_map(|p| p.segments.last().map(|s| s.ident.to_string()))
        .collect();
    for used in &model.conditions_used {
        let name = match used {
            Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        if let Some(name) = name
            && !declared.contains(&name)
        {
            errors.at(
                used,
                format!(
                    "condition `{name}` is not declared on this reconciler: add it to `conditions({})`",
                    declared
                        .iter()
                        .map(String::as_str)
                        .chain([name.as_str()])
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
    }

    if let Form::Impl(item) = &model.form
        && let Some((path, _)) = &item.trait_
    {
        errors.at(
            path,
            "#[reconciler] goes on an inherent impl (`impl Rollouts { .. }`): it implements the trait for you",
        );
    }
    let (apply, cleanup, is_suspended) = match &model.form {
        Form::Impl(item) => {
            let find = |name: &str| {
                item.items.iter().find_map(|i| match i {
                    ImplItem::Fn(f) if f.sig.ident == name => Some(f.sig.clone()),
                    ImplItem::Verbatim(tokens) => syn::parse2::<syn::ImplItemFn>(tokens.clone())
                        .ok()
                        .filter(|f| f.sig.ident == name)
                        .map(|f| f.sig),
                    _ => None,
                })
            };
            let apply = find("apply");
            if apply.is_none() {
                errors.at(
                    &item.self_ty,
                    "a reconciler needs `async fn apply(&self, object: &Resource, pass: &mut Pass<Resource>) -> Result<Action, Error>`",
                );
            }
            (apply, find("cleanup"), find("is_suspended"))
        }
        Form::Fn(item) => (Some(item.sig.clone()), None, None),
    };
    for sig in apply.iter().chain(&cleanup) {
        check_signature(sig, matches!(model.form, Form::Impl(_)), errors);
    }
    if let (Some(cleanup), None) = (&cleanup, &model.args.finalizer) {
        errors.at(
            &cleanup.ident,
            "`cleanup` runs only with a finalizer: add `finalizer = \"your.domain/cleanup\"` to #[reconciler]",
        );
    }

    let error = model.args.error.clone().or_else(|| {
        let sig = apply.as_ref()?;
        let inferred = error_of(&sig.output);
        if inferred.is_none() {
            errors.at(
                &sig.output,
                "cannot tell the error type from this return type: add `error = YourError` to #[reconciler]",
            );
        }
        inferred
    });

    Checked {
        error,
        has_cleanup: cleanup.is_some(),
        has_is_suspended: is_suspended.is_some(),
        steps,
    }
}

fn check_signature(sig: &Signature, method: bool, errors: &mut Errors) {
    if sig.asyncness.is_none() {
        errors.at(
            sig.fn_token,
            format!("`{}` must be an `async fn`", sig.ident),
        );
    }
    let receiver = matches!(sig.inputs.first(), Some(FnArg::Receiver(_)));
    let expected = if method { 3 } else { 2 };
    if (method && !receiver) || sig.inputs.len() != expected {
        let shape = if method {
            "(&self, object: &Resource, pass: &mut Pass<Resource>)"
        } else {
            "(object: &Resource, pass: &mut Pass<Resource>)"
        };
        errors.push(syn::Error::new(
            sig.paren_token.span.join(),
            format!("`{}` takes {shape}", sig.ident),
        ));
    }
}

/// `E` of `Result<Action, E>` as written.
fn error_of(output: &ReturnType) -> Option<Type> {
    let ReturnType::Type(_, ty) = output else {
        return None;
    };
    let Type::Path(path) = &**ty else { return None };
    let last = path.path.segments.last()?;
    if last.ident != "Result" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let types: Vec<&Type> = args
        .args
        .iter()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .collect();
    match types[..] {
        [_, error] => Some(error.clone()),
        _ => None,
    }
}
