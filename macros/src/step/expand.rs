//! Wrapping a fn body or a statement's expression in the runtime's step timers.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::ext::IdentExt as _;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Ident, ReturnType, Type};

use super::ast::{StepArgs, StepFn};
use crate::util::{self, Errors};

/// The step name as a compile-time constant: `const { StepName::from_static("render") }`.
fn step_name(args: &StepArgs) -> TokenStream {
    let krate = &args.krate;
    let name = &args.name;
    quote!(const { #krate::__private::StepName::from_static(#name) })
}

/// The const a `#[step]` fn outside an impl block is named by in `#[reconciler(steps(..))]`:
/// `__kubeward_step_render` for `fn render`.
pub(crate) fn step_const(fn_ident: &Ident) -> Ident {
    format_ident!(
        "__kubeward_step_{}",
        fn_ident.unraw(),
        span = fn_ident.span()
    )
}

/// The fn with its signature re-emitted exactly and its body run as the step.
///
/// A `standalone` fn without a receiver (not a method of a `#[reconciler]` impl) also gets its
/// step name as a hidden const beside it ([`step_const`]), so a reconciler's `steps(..)` can list
/// it: its metric series then start at zero, and its name is checked against the others.
///
/// `async fn` bodies become `async move { body }` passed to `step`/`try_step` and awaited; sync
/// bodies become `move || { body }` passed to `step_sync`/`try_step_sync`. A syntactic
/// `Result<..>` (or `path::Result<..>`) return type selects the `try_` form, in which an `Err`
/// marks the step failed. The return type is named as the helper's first type argument so `?`
/// in the body converts errors exactly as in the original fn.
pub(crate) fn step_fn(args: &StepArgs, item: &StepFn, standalone: bool) -> TokenStream {
    let StepFn {
        attrs,
        vis,
        sig,
        body,
    } = item;
    let krate = &args.krate;
    let name = step_name(args);
    let (output, is_result) = match &sig.output {
        ReturnType::Default => (quote!(()), false),
        ReturnType::Type(_, ty) => (
            if mentions_impl(ty) {
                quote!(_)
            } else {
                ty.to_token_stream()
            },
            is_result(ty),
        ),
    };
    let span = body.span();
    let wrapped = match (sig.asyncness.is_some(), is_result) {
        (true, false) => {
            quote_spanned!(span=> #krate::__private::step::<#output, _>(#name, async move #body).await)
        }
        (true, true) => {
            quote_spanned!(span=> #krate::__private::try_step::<#output, _>(#name, async move #body).await)
        }
        (false, false) => {
            quote_spanned!(span=> #krate::__private::step_sync::<#output>(#name, move || #body))
        }
        (false, true) => {
            quote_spanned!(span=> #krate::__private::try_step_sync::<#output>(#name, move || #body))
        }
    };
    let receiver = matches!(sig.inputs.first(), Some(syn::FnArg::Receiver(_)));
    let companion = (standalone && !receiver).then(|| {
        let ident = step_const(&sig.ident);
        let step_name = &args.name;
        quote! {
            #[doc(hidden)]
            #[allow(dead_code, non_upper_case_globals)]
            #vis const #ident: #krate::__private::StepName = #krate::__private::StepName::from_static(#step_name);
        }
    });
    quote! {
        #(#attrs)*
        #vis #sig {
            #wrapped
        }
        #companion
    }
}

/// `Result<..>` or `some::path::Result<..>`.
fn is_result(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "Result"),
        Type::Group(group) => is_result(&group.elem),
        Type::Paren(paren) => is_result(&paren.elem),
        _ => false,
    }
}

/// Whether a type mentions `impl Trait` (which cannot be named as a type argument).
fn mentions_impl(ty: &Type) -> bool {
    fn walk(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|tt| match tt {
            TokenTree::Ident(ident) => ident == "impl",
            TokenTree::Group(group) => walk(group.stream()),
            _ => false,
        })
    }
    walk(ty.to_token_stream())
}

/// The expression of a `#[step("name")]` statement inside a reconciler body, timed as the step.
///
/// A trailing `?` stays outside the step (it returns from the enclosing fn, as written) and makes
/// the step fail on `Err`; without it, the step fails when its value is an `Err` (judged by the
/// value's type through `__private::Probe`, since `let r = f().await;` may keep the `Err` to
/// handle it). A trailing `.await` times the awaited future itself. What remains runs in a
/// closure, so it must not contain `?`, `.await` or `return` (reported at the token).
pub(crate) fn step_expr(args: &StepArgs, expr: &Expr, errors: &mut Errors) -> TokenStream {
    let (inner, question) = match expr {
        Expr::Try(try_) => (&*try_.expr, Some(&try_.question_token)),
        other => (other, None),
    };
    // Every generated token takes the user's span, so that an error at the `?` (an error type
    // without `From`) is reported there, as it would be without `#[step]`.
    let span = inner.span();
    let krate = util::respan(&args.krate, span);
    let name = util::respan(step_name(args), span);
    let judge = quote_spanned!(span=> |value| #krate::__private::Probe(value).is_failure());
    if let Expr::Await(await_) = inner {
        let future = &await_.base;
        let await_token = &await_.await_token;
        return match question {
            Some(question) => quote_spanned!(span=>
                #krate::__private::try_step(#name, #future).#await_token #question
            ),
            None => quote_spanned!(span=>
                #krate::__private::step_with(#name, #future, #judge).#await_token
            ),
        };
    }
    if !ClosureSafe::check(inner, errors) {
        // Reported; keep the statement as written so the error is not followed by others.
        return quote!(#expr);
    }
    match question {
        Some(question) => quote_spanned!(span=>
            #krate::__private::try_step_sync(#name, || #inner) #question
        ),
        None => quote_spanned!(span=>
            #krate::__private::step_sync_with(#name, || #inner, #judge)
        ),
    }
}

/// Finds what cannot move into a closure: `?`, `.await` and `return` outside nested closures,
/// async blocks and items.
struct ClosureSafe<'e> {
    errors: &'e mut Errors,
    safe: bool,
}

impl ClosureSafe<'_> {
    /// Whether `expr` can run in a closure; reports what cannot.
    fn check(expr: &Expr, errors: &mut Errors) -> bool {
        let mut visitor = ClosureSafe { errors, safe: true };
        visitor.visit_expr(expr);
        visitor.safe
    }

    fn report(&mut self, span: Span, what: &str) {
        self.safe = false;
        let message = if what == "`return`" {
            "`return` cannot be inside a `#[step]` statement (the step runs it in a closure); \
             move this code into a `#[step]` fn"
                .to_owned()
        } else {
            format!(
                "{what} inside a `#[step]` statement works only at its end (`let x = f(..)?;`, \
                 `let x = f(..).await?;`); move this code into a `#[step]` fn"
            )
        };
        self.errors.at_span(span, message);
    }
}

impl<'ast> Visit<'ast> for ClosureSafe<'_> {
    fn visit_expr_try(&mut self, node: &'ast syn::ExprTry) {
        self.report(node.question_token.span(), "`?`");
        syn::visit::visit_expr_try(self, node);
    }
    fn visit_expr_await(&mut self, node: &'ast syn::ExprAwait) {
        self.report(node.await_token.span(), "`.await`");
        syn::visit::visit_expr_await(self, node);
    }
    fn visit_expr_return(&mut self, node: &'ast syn::ExprReturn) {
        self.report(node.return_token.span(), "`return`");
        syn::visit::visit_expr_return(self, node);
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}
