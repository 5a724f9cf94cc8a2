//! Rules across the declaration and the bodies: unique step names, conditions used are
//! declared, `apply` present, every `Reconciler` hook the impl defines of the right shape, an
//! error type known.

use std::collections::HashSet;

use syn::{FnArg, GenericArgument, ImplItem, ItemImpl, PathArguments, ReturnType, Signature, Type};

use super::ast::{Form, Reconciler};
use super::hooks::{self, Hook};
use crate::util::{self, Errors};

/// What validation derives for expansion.
pub(crate) struct Checked {
    /// The error type (`error = ..` or the `E` of apply's `Result<Action, E>`), if known.
    pub error: Option<Type>,
    /// The `Reconciler` hooks the impl defines with the right shape, with their signatures.
    pub hooks: Vec<(&'static Hook, Signature)>,
    /// The step names, each once, in source order.
    pub steps: Vec<syn::LitStr>,
    /// The single reconcile fn's context type: the `C` of its third parameter, `context: &C`.
    pub context: Option<Type>,
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
        .filter_map(|p| p.segments.last().map(|s| util::name_of(&s.ident)))
        .collect();
    for used in &model.conditions_used {
        let name = match used {
            Type::Path(path) => path.path.segments.last().map(|s| util::name_of(&s.ident)),
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
    let mut hooks = Vec::new();
    let mut context = None;
    let apply = match &model.form {
        Form::Impl(item) => {
            for sig in methods(item) {
                if let Some(hook) = hooks::hook(&util::name_of(&sig.ident))
                    && hook.check(&sig, errors)
                {
                    hooks.push((hook, sig.clone()));
                }
            }
            let apply = methods(item).find(|sig| sig.ident == "apply");
            if apply.is_none() {
                errors.at(
                    &item.self_ty,
                    format!("a reconciler needs `{}`", hooks::HOOKS[0].expected),
                );
            }
            apply
        }
        Form::Fn(item) => {
            context = check_fn_signature(&item.sig, errors);
            Some(item.sig.clone())
        }
    };
    if let (Some((_, cleanup)), None) = (
        hooks.iter().find(|(hook, _)| hook.name == "cleanup"),
        &model.args.finalizer,
    ) {
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
        hooks,
        steps,
        context,
    }
}

/// The signatures of the impl's methods, `#[step]` methods (already expanded) included.
fn methods(item: &ItemImpl) -> impl Iterator<Item = Signature> + '_ {
    item.items.iter().filter_map(|i| match i {
        ImplItem::Fn(f) => Some(f.sig.clone()),
        ImplItem::Verbatim(tokens) => syn::parse2::<syn::ImplItemFn>(tokens.clone())
            .ok()
            .map(|f| f.sig),
        _ => None,
    })
}

/// The single reconcile fn: `async fn name(object: &Resource, pass: &mut Pass<Resource>)`, or
/// with a third parameter `context: &C`, whose `C` it returns.
fn check_fn_signature(sig: &Signature, errors: &mut Errors) -> Option<Type> {
    if sig.asyncness.is_none() {
        errors.at(
            sig.fn_token,
            format!("`{}` must be an `async fn`", sig.ident),
        );
    }
    let receiver = matches!(sig.inputs.first(), Some(FnArg::Receiver(_)));
    if receiver || !(2..=3).contains(&sig.inputs.len()) {
        errors.push(syn::Error::new(
            sig.paren_token.span.join(),
            format!(
                "`{}` takes (object: &Resource, pass: &mut Pass<Resource>), or with a context \
                 (object: &Resource, pass: &mut Pass<Resource>, context: &Context)",
                sig.ident
            ),
        ));
        return None;
    }
    let FnArg::Typed(third) = sig.inputs.iter().nth(2)? else {
        return None;
    };
    match &*third.ty {
        Type::Reference(reference) if reference.mutability.is_none() => {
            Some((*reference.elem).clone())
        }
        other => {
            errors.at(
                other,
                "the context parameter is a shared reference, `context: &Context`: the \
                 generated reconciler owns the context and lends it to every pass",
            );
            None
        }
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
