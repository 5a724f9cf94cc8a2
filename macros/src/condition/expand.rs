//! The code a vocabulary generates: the vocabulary as runtime data, a reason type per reason, the
//! typed `State` with only the declared transitions, and helper methods on the user's enum.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::ast::Condition;
use super::valid::Checked;
use crate::util;

/// Expands a checked vocabulary. Cannot fail: validation left `model` expandable.
pub(crate) fn expand(model: &Condition, checked: &Checked) -> TokenStream {
    let krate = &model.krate;
    let item = &model.item;
    let vis = &item.vis;
    let enum_ident = &item.ident;
    let module = &checked.module;
    let type_ = &checked.type_;
    let names: Vec<String> = model
        .reasons
        .iter()
        .map(|r| util::name_of(&r.ident))
        .collect();
    let idents: Vec<_> = model.reasons.iter().map(|r| &r.ident).collect();
    let starts: Vec<String> = checked.initial.iter().map(|&i| names[i].clone()).collect();
    let start_idents: Vec<_> = checked.initial.iter().map(|&i| idents[i]).collect();

    let declarations = model.reasons.iter().enumerate().map(|(i, reason)| {
        let name = &names[i];
        let status = reason
            .status
            .clone()
            .unwrap_or_else(|| format_ident!("Unknown"));
        let mut expr = quote!(#krate::vocabulary::Reason::new(#name, #krate::conditions::ConditionStatus::#status));
        if let Some(event) = &reason.event {
            expr = quote!(#expr.event(#krate::__private::kube::runtime::events::EventType::#event));
        }
        if reason.gate.is_some() {
            expr = quote!(#expr.gate());
        }
        if checked.initial.contains(&i) {
            expr = quote!(#expr.initial());
        }
        if !reason.targets.is_empty() {
            let targets = reason.targets.iter().map(|&t| &names[t]);
            expr = quote!(#expr.to(&[#(#targets),*]));
        }
        expr
    });

    let derives = quote! {
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy)]
    };
    let reason_types = model.reasons.iter().enumerate().map(|(i, reason)| {
        let ident = &reason.ident;
        let name = &names[i];
        let index = Literal::usize_unsuffixed(i);
        let status = reason
            .status
            .as_ref()
            .map_or("Unknown".to_owned(), ToString::to_string);
        let event = match &reason.event {
            Some(event) => event.to_string(),
            None if status == "False" && reason.gate.is_none() => "Warning".to_owned(),
            None => "Normal".to_owned(),
        };
        let gate = if reason.gate.is_some() {
            ", a human gate"
        } else {
            ""
        };
        let doc = format!("Reason `{name}` of `{type_}`: status {status}, {event} event{gate}.");
        quote! {
            #[doc = #doc]
            #derives
            pub struct #ident;
            impl #krate::vocabulary::ReasonType for #ident {
                const VOCABULARY: &'static #krate::vocabulary::Vocabulary = &VOCABULARY;
                const REASON: &'static #krate::vocabulary::Reason = &VOCABULARY.reasons[#index];
            }
        }
    });

    // `to` on every state, bounded by the state's own trait so a wrong target is reported with
    // the allowed ones.
    let message_ty = quote!(impl ::core::convert::Into<::std::string::String>);
    let desired_ty = quote!(#krate::conditions::DesiredCondition);
    let mut to_methods = Vec::new();
    let mut target_traits = Vec::new();
    let enum_name = util::name_of(enum_ident);
    let variant_note = format!(
        "`to(..)` takes a reason's unit type from the `{module}` module (such as `{module}::{}`), not a variant of the enum `{enum_name}`",
        names.first().map_or("Reason", String::as_str),
    );
    for (i, reason) in model.reasons.iter().enumerate() {
        let ident = &reason.ident;
        let name = &names[i];
        let targets: Vec<String> = reason.targets.iter().map(|&t| names[t].clone()).collect();
        let allowed = if targets.is_empty() {
            format!("`{type_}` may only stay `{name}`")
        } else {
            format!(
                "`{type_}` may go to {} (or stay `{name}`)",
                util::or_list(&targets)
            )
        };
        let doc = format!("Goes to `target` with `message`: from `{name}`, {allowed}.");
        to_methods.push(quote! {
            impl Now<#ident> {
                #[doc = #doc]
                pub fn to<T: targets_of::#ident>(self, target: T, message: #message_ty) -> #desired_ty {
                    #krate::__private::transition(target, message)
                }
            }
        });
        let message = format!("`{type_}` cannot go from `{name}` to `{{Self}}`");
        let note = format!(
            "from `{name}`, {allowed}; transitions are declared in `#[transitions(..)]` on `{enum_name}`"
        );
        let trait_doc = format!("The reasons `{type_}` may go to from `{name}`.");
        let target_idents = reason.targets.iter().map(|&t| idents[t]);
        let stays = (!reason.targets.iter().any(|&t| idents[t] == ident))
            .then(|| quote!(impl #ident for super::#ident {}));
        target_traits.push(quote! {
            #[doc = #trait_doc]
            #[diagnostic::on_unimplemented(
                message = #message,
                label = "not a declared transition",
                note = #note,
                note = #variant_note,
            )]
            pub trait #ident: #krate::vocabulary::ReasonType {}
            #(impl #ident for super::#target_idents {})*
            #stays
        });
    }

    let start_list = util::or_list(&starts);
    let start_message = format!("`{type_}` cannot start in `{{Self}}`");
    let start_note = format!(
        "a `{type_}` condition starts in {start_list}; mark start states with `#[reason(.., initial)]`"
    );
    let unrecognized_message =
        format!("`{type_}` cannot go from an unrecognized reason to `{{Self}}`");
    let unrecognized_note = format!(
        "from a reason outside the vocabulary, `{type_}` may go to its start states: {start_list}"
    );
    let absent_doc = format!("Starts the condition with `message`: in {start_list}.");
    let unrecognized_doc =
        format!("Leaves the unrecognized reason for a start state ({start_list}) with `message`.");

    let state_doc = format!(
        "The `{type_}` condition as it stands: one value per reason, offering only the transitions declared from it."
    );
    let absent_variant_doc = format!("No `{type_}` condition yet: it may start in {start_list}.");
    let variant_docs = names
        .iter()
        .map(|n| format!("The condition's reason is `{n}`."));
    let indices = (0..names.len()).map(Literal::usize_unsuffixed);
    let module_doc = format!(
        "The reason types and typed state of the `{type_}` condition, generated by `#[kubeward::condition]` on `{enum_name}`."
    );
    let vocabulary_doc = format!("The `{type_}` vocabulary as runtime data.");
    // Every variant of the enum as written (a duplicate or reserved one that validation dropped
    // maps to the first reason), so the match stays exhaustive while errors are reported.
    let variant_idents: Vec<_> = item.variants.iter().map(|v| &v.ident).collect();
    // Only when validation dropped a variant: duplicates make the arms above incomplete.
    let fallback = (item.variants.len() != model.reasons.len())
        .then(|| quote!(#[allow(unreachable_patterns)] _ => 0,));
    let match_indices = item.variants.iter().map(|v| {
        let name = util::name_of(&v.ident);
        Literal::usize_unsuffixed(names.iter().position(|n| *n == name).unwrap_or(0))
    });

    let item_and_module = quote! {
        #item

        #[doc = #module_doc]
        #[allow(dead_code)]
        #vis mod #module {
            #[doc = #vocabulary_doc]
            pub static VOCABULARY: #krate::vocabulary::Vocabulary = #krate::vocabulary::Vocabulary {
                type_: #type_,
                reasons: &[#(#declarations),*],
            };

            #(#reason_types)*

            /// The condition is absent: the state it starts from.
            #derives
            pub struct Absent;
            /// The stored reason is not in the vocabulary.
            #derives
            pub struct Unrecognized;

            /// The condition as it stands in the state `R`. It derefs to the stored condition;
            /// `to` makes a declared transition.
            #[derive(::core::fmt::Debug, ::core::clone::Clone)]
            pub struct Now<R> {
                stored: #krate::vocabulary::Stored,
                state: ::core::marker::PhantomData<R>,
            }

            impl<R> Now<R> {
                fn new(stored: #krate::vocabulary::Stored) -> Self {
                    Now { stored, state: ::core::marker::PhantomData }
                }
            }

            impl<R> ::core::ops::Deref for Now<R> {
                type Target = #krate::vocabulary::Stored;
                fn deref(&self) -> &Self::Target {
                    &self.stored
                }
            }

            impl Now<Absent> {
                #[doc = #absent_doc]
                pub fn to<T: targets_of::Absent>(self, target: T, message: #message_ty) -> #desired_ty {
                    #krate::__private::transition(target, message)
                }
            }

            impl Now<Unrecognized> {
                #[doc = #unrecognized_doc]
                pub fn to<T: targets_of::Unrecognized>(self, target: T, message: #message_ty) -> #desired_ty {
                    #krate::__private::transition(target, message)
                }
            }

            #(#to_methods)*

            #[doc = #state_doc]
            #[derive(::core::fmt::Debug, ::core::clone::Clone)]
            pub enum State {
                #[doc = #absent_variant_doc]
                Absent(Now<Absent>),
                #(#[doc = #variant_docs] #idents(Now<#idents>),)*
                /// The stored reason is not in the vocabulary (an older version of the controller
                /// wrote it): it may go to the start states.
                Unrecognized(Now<Unrecognized>),
            }

            impl State {
                /// The stored condition, whatever the state.
                pub fn stored(&self) -> &#krate::vocabulary::Stored {
                    match self {
                        State::Absent(now) => &now.stored,
                        #(State::#idents(now) => &now.stored,)*
                        State::Unrecognized(now) => &now.stored,
                    }
                }

                /// The typed state of the stored condition (what `ConditionType::state` returns).
                pub fn read(stored: ::core::option::Option<&#krate::conditions::Condition>) -> Self {
                    use #krate::__private::Classified;
                    match #krate::__private::classify(&VOCABULARY, stored) {
                        (Classified::Absent, stored) => State::Absent(Now::new(stored)),
                        #((Classified::Reason(#indices), stored) => State::#idents(Now::new(stored)),)*
                        (_, stored) => State::Unrecognized(Now::new(stored)),
                    }
                }
            }

            /// For each state, the reasons it may go to (a trait per state).
            pub mod targets_of {
                /// The reasons an absent condition may start in.
                #[diagnostic::on_unimplemented(
                    message = #start_message,
                    label = "not a start state",
                    note = #start_note,
                    note = #variant_note,
                )]
                pub trait Absent: #krate::vocabulary::ReasonType {}
                #(impl Absent for super::#start_idents {})*

                /// The reasons a condition with an unrecognized reason may go to.
                #[diagnostic::on_unimplemented(
                    message = #unrecognized_message,
                    label = "not a start state",
                    note = #unrecognized_note,
                    note = #variant_note,
                )]
                pub trait Unrecognized: #krate::vocabulary::ReasonType {}
                #(impl Unrecognized for super::#start_idents {})*

                #(#target_traits)*
            }
        }
    };

    quote! {
        #item_and_module

        impl #krate::vocabulary::ConditionType for #enum_ident {
            const VOCABULARY: &'static #krate::vocabulary::Vocabulary = &#module::VOCABULARY;
            type State = #module::State;
            fn state(stored: ::core::option::Option<&#krate::conditions::Condition>) -> #module::State {
                #module::State::read(stored)
            }
        }

        impl #module::State {
            /// Goes to `target` with `message` if the vocabulary allows it from this state,
            /// checked at run time (for code that treats every state alike, such as an error
            /// path); `None` if it does not. Prefer the typed `now.to(..)` of each state.
            #[allow(dead_code)]
            pub fn try_to(
                self,
                target: #enum_ident,
                message: #message_ty,
            ) -> ::core::option::Option<#desired_ty> {
                #krate::__private::checked_transition(&#module::VOCABULARY, self.stored(), target.declaration(), message)
            }
        }

        #[allow(dead_code)]
        impl #enum_ident {
            /// This reason's declaration: its name, status, event type and targets.
            pub fn declaration(&self) -> &'static #krate::vocabulary::Reason {
                &#module::VOCABULARY.reasons[match self {
                    #(Self::#variant_idents { .. } => #match_indices,)*
                    #fallback
                }]
            }
            /// The reason string (the condition's `reason` and the transition event's reason).
            pub fn reason(&self) -> &'static str {
                self.declaration().name
            }
            /// The condition status this reason implies.
            pub fn status(&self) -> #krate::conditions::ConditionStatus {
                self.declaration().status
            }
            /// The type of the event published on a transition into this reason.
            pub fn event_type(&self) -> #krate::__private::kube::runtime::events::EventType {
                self.declaration().event_type
            }
            /// A Mermaid state diagram of the vocabulary, for docs and READMEs.
            pub fn mermaid() -> ::std::string::String {
                #module::VOCABULARY.mermaid()
            }
        }
    }
}
