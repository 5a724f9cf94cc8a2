//! Rules of `#[step]` on a fn that its syntax alone does not enforce.

use syn::{GenericArgument, PathArguments, ReturnType, Type, TypeParamBound};

use super::ast::StepFn;
use crate::util::Errors;

/// Reports a sync fn that returns a future (`impl Future<..>`, `Pin<Box<dyn Future<..>>>`,
/// `BoxFuture<..>`): `#[step]` would time building the future, not running it. Whether the fn
/// passed.
pub(crate) fn check_fn(item: &StepFn, errors: &mut Errors) -> bool {
    let ReturnType::Type(_, ty) = &item.sig.output else {
        return true;
    };
    let refused = item.sig.asyncness.is_none() && is_future(ty);
    if refused {
        errors.at(
            ty,
            format!(
                "#[step] on a fn that returns a future would time only building the future, not \
                 running it: make it `async fn {}(..)` returning the future's output",
                item.sig.ident
            ),
        );
    }
    !refused
}

/// `impl Future<..>` (or `IntoFuture`), `dyn Future<..>`, `Pin<Box<..>>` of one, or a
/// `BoxFuture<..>` / `LocalBoxFuture<..>` alias.
fn is_future(ty: &Type) -> bool {
    match ty {
        Type::ImplTrait(impl_trait) => impl_trait.bounds.iter().any(is_future_bound),
        Type::TraitObject(object) => object.bounds.iter().any(is_future_bound),
        Type::Group(group) => is_future(&group.elem),
        Type::Paren(paren) => is_future(&paren.elem),
        Type::Path(path) => path.path.segments.last().is_some_and(|segment| {
            match segment.ident.to_string().as_str() {
                "BoxFuture" | "LocalBoxFuture" => true,
                "Pin" | "Box" => match &segment.arguments {
                    PathArguments::AngleBracketed(args) => args
                        .args
                        .iter()
                        .any(|arg| matches!(arg, GenericArgument::Type(inner) if is_future(inner))),
                    _ => false,
                },
                _ => false,
            }
        }),
        _ => false,
    }
}

fn is_future_bound(bound: &TypeParamBound) -> bool {
    matches!(bound, TypeParamBound::Trait(bound)
        if bound.path.segments.last().is_some_and(|s| s.ident == "Future" || s.ident == "IntoFuture"))
}
