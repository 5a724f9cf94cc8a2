//! The item under `#[reconciler]`: an impl block or a single reconcile fn, with its `#[step]`s
//! found (on methods and on statements), recorded and rewritten into step calls.

use proc_macro2::TokenStream;
use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{Attribute, Expr, ImplItem, ImplItemFn, ItemFn, ItemImpl, LitStr, Stmt, Type};

use super::attr::Args;
use crate::step::ast::{StepArgs, StepFn};
use crate::step::expand::{step_expr, step_fn};
use crate::util::Errors;

/// The two forms `#[reconciler]` accepts.
pub(crate) enum Form {
    /// `impl Rollouts { async fn apply(..) .. async fn cleanup(..) .. }`
    Impl(ItemImpl),
    /// `async fn reconcile(object: &R, pass: &mut Pass<R>) -> Result<Action, E> { .. }`
    Fn(ItemFn),
}

/// A reconciler as declared, its steps already rewritten.
pub(crate) struct Reconciler {
    pub args: Args,
    pub form: Form,
    /// Every step name, in source order (duplicates included, for validation).
    pub steps: Vec<LitStr>,
    /// The `T` of every `.condition::<T>()` call in the bodies.
    pub conditions_used: Vec<Type>,
}

impl Reconciler {
    /// Parses the item; fails only when it is neither an impl block nor a fn.
    pub(crate) fn parse(
        args: TokenStream,
        input: TokenStream,
        errors: &mut Errors,
    ) -> syn::Result<Self> {
        let item: syn::Item = syn::parse2(input)?;
        let (form, name_span) = match item {
            syn::Item::Impl(item) => {
                let span = syn::spanned::Spanned::span(&item.self_ty);
                (Form::Impl(item), span)
            }
            syn::Item::Fn(item) => {
                let span = item.sig.ident.span();
                (Form::Fn(item), span)
            }
            other => {
                return Err(syn::Error::new_spanned(
                    first_token(&other),
                    "#[reconciler] goes on an impl block with `async fn apply` (and optionally `async fn cleanup`) \
                     or on a single async reconcile fn",
                ));
            }
        };
        let args = Args::parse(args, name_span, errors);
        let mut finder = StepFinder {
            args: &args,
            errors,
            steps: Vec::new(),
            conditions_used: Vec::new(),
        };
        let form = match form {
            Form::Impl(mut item) => {
                for impl_item in &mut item.items {
                    if let ImplItem::Fn(method) = impl_item {
                        finder.visit_block_mut(&mut method.block);
                        if let Some(expanded) = finder.step_method(method) {
                            *impl_item = ImplItem::Verbatim(expanded);
                        }
                    }
                }
                Form::Impl(item)
            }
            Form::Fn(mut item) => {
                finder.visit_block_mut(&mut item.block);
                Form::Fn(item)
            }
        };
        let StepFinder {
            steps,
            conditions_used,
            ..
        } = finder;
        Ok(Reconciler {
            args,
            form,
            steps,
            conditions_used,
        })
    }
}

/// The first token of an item, for an error that should not underline the whole item.
fn first_token(item: &syn::Item) -> TokenStream {
    quote!(#item).into_iter().take(2).collect()
}

/// Finds `#[step]` on methods and statements, records the names and rewrites the code; records
/// `.condition::<T>()` calls.
struct StepFinder<'a> {
    args: &'a Args,
    errors: &'a mut Errors,
    steps: Vec<LitStr>,
    conditions_used: Vec<Type>,
}

impl StepFinder<'_> {
    /// Removes the `#[step]` attribute from `attrs`, returning its parsed arguments.
    fn take_step(&mut self, attrs: &mut Vec<Attribute>) -> Option<Option<StepArgs>> {
        let index = attrs.iter().position(is_step)?;
        let attr = attrs.remove(index);
        let tokens = match attr.meta.require_list() {
            Ok(list) => list.tokens.clone(),
            Err(_) => {
                self.errors
                    .at(attr.path(), "expected the step name: `#[step(\"render\")]`");
                return Some(None);
            }
        };
        let args = StepArgs::parse(tokens, &self.args.krate, self.errors);
        if let Some(args) = &args {
            self.steps.push(args.name.clone());
        }
        Some(args)
    }

    /// A method with `#[step]`, expanded as `#[step]` on a fn would be.
    fn step_method(&mut self, method: &mut ImplItemFn) -> Option<TokenStream> {
        let args = self.take_step(&mut method.attrs)??;
        let tokens = quote!(#method);
        match StepFn::parse(tokens) {
            Ok(item) => crate::step::valid::check_fn(&item, self.errors)
                .then(|| step_fn(&args, &item, false)),
            Err(error) => {
                self.errors.push(error);
                None
            }
        }
    }
}

/// `#[step(..)]`, `#[kubeward::step(..)]` or any path ending in `step`.
fn is_step(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "step")
}

impl VisitMut for StepFinder<'_> {
    fn visit_stmt_mut(&mut self, stmt: &mut Stmt) {
        // `#[step("sum")] total = compute()?;`: syn attaches the attribute to the assignee; the
        // step times the assigned value.
        if let Stmt::Expr(Expr::Assign(assign), _) = stmt
            && let Some(attrs) = expr_attrs(&mut assign.left)
            && let Some(args) = self.take_step(attrs)
        {
            syn::visit_mut::visit_expr_mut(self, &mut assign.right);
            if let Some(args) = args {
                let wrapped = step_expr(&args, &assign.right, self.errors);
                *assign.right = Expr::Verbatim(wrapped);
            }
            return;
        }
        let attrs = match stmt {
            Stmt::Local(local) => &mut local.attrs,
            Stmt::Expr(expr, _) => match expr_attrs(expr) {
                Some(attrs) => attrs,
                None => return syn::visit_mut::visit_stmt_mut(self, stmt),
            },
            Stmt::Macro(mac) => &mut mac.attrs,
            // Items: `#[step]` on a nested fn is the attribute macro's own business.
            Stmt::Item(_) => return,
        };
        let Some(args) = self.take_step(attrs) else {
            return syn::visit_mut::visit_stmt_mut(self, stmt);
        };
        // Nested statements first (a step inside a step's block is timed on its own).
        syn::visit_mut::visit_stmt_mut(self, stmt);
        let Some(args) = args else { return };
        match stmt {
            Stmt::Local(local) => match &mut local.init {
                Some(init) => {
                    let wrapped = step_expr(&args, &init.expr, self.errors);
                    *init.expr = Expr::Verbatim(wrapped);
                }
                None => self.errors.at(
                    local.let_token,
                    "a `#[step]` statement times its initializer: `let x = work();`",
                ),
            },
            Stmt::Expr(expr, _) => {
                let wrapped = step_expr(&args, expr, self.errors);
                *expr = Expr::Verbatim(wrapped);
            }
            Stmt::Macro(mac) => {
                let expr = Expr::Macro(syn::ExprMacro {
                    attrs: Vec::new(),
                    mac: mac.mac.clone(),
                });
                let wrapped = step_expr(&args, &expr, self.errors);
                *stmt = Stmt::Expr(Expr::Verbatim(wrapped), mac.semi_token);
            }
            Stmt::Item(_) => {}
        }
    }

    fn visit_expr_method_call_mut(&mut self, call: &mut syn::ExprMethodCall) {
        if call.method == "condition"
            && let Some(turbofish) = &call.turbofish
            && let [syn::GenericArgument::Type(ty)] = turbofish.args.iter().collect::<Vec<_>>()[..]
        {
            self.conditions_used.push(ty.clone());
        }
        syn::visit_mut::visit_expr_method_call_mut(self, call);
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The outer attributes of an expression statement, where `#[step]` would be.
fn expr_attrs(expr: &mut Expr) -> Option<&mut Vec<Attribute>> {
    Some(match expr {
        Expr::Await(e) => &mut e.attrs,
        Expr::Try(e) => &mut e.attrs,
        Expr::Call(e) => &mut e.attrs,
        Expr::MethodCall(e) => &mut e.attrs,
        Expr::Macro(e) => &mut e.attrs,
        Expr::Block(e) => &mut e.attrs,
        Expr::Path(e) => &mut e.attrs,
        Expr::Field(e) => &mut e.attrs,
        Expr::Index(e) => &mut e.attrs,
        Expr::Unary(e) => &mut e.attrs,
        Expr::If(e) => &mut e.attrs,
        Expr::Match(e) => &mut e.attrs,
        _ => return None,
    })
}
