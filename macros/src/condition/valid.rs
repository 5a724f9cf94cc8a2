//! The rules of a vocabulary that span several attributes: valid names, no duplicates, declared
//! endpoints, every reason reachable from a start state.

use std::collections::HashSet;

use syn::Ident;

use super::ast::Condition;
use crate::util::{self, Errors};
use kubeward_names::NameKind;

/// Names the generated module defines beside the reason types.
const RESERVED: &[&str] = &["State", "Now", "Absent", "Unrecognized", "VOCABULARY"];

/// What validation derives for expansion.
pub(crate) struct Checked {
    /// The condition type string.
    pub type_: String,
    /// The generated module's name (`up_to_date` for `UpToDate`).
    pub module: Ident,
    /// Indices of the start states.
    pub initial: Vec<usize>,
}

/// Checks `model`, reporting into `errors`, and leaves it expandable whatever was wrong:
/// duplicate reasons and edges to unknown reasons are dropped, a missing status reads as Unknown.
pub(crate) fn check(model: &mut Condition, errors: &mut Errors) -> Checked {
    let enum_name = util::name_of(&model.item.ident);
    let type_ = match &model.type_lit {
        Some(lit) => {
            let value = lit.value();
            util::check_name(errors, NameKind::ConditionType, &value, lit);
            value
        }
        None => {
            util::check_name(
                errors,
                NameKind::ConditionType,
                &enum_name,
                &model.item.ident,
            );
            enum_name.clone()
        }
    };
    if !model.item.generics.params.is_empty() {
        errors.at(
            &model.item.generics,
            "a condition vocabulary cannot be generic",
        );
    }

    // Reasons: unique, valid as both condition reason and event reason, not a generated name.
    let mut seen = HashSet::new();
    let mut reserved = HashSet::new();
    model.reasons.retain(|reason| {
        let name = util::name_of(&reason.ident);
        if !seen.insert(name.clone()) {
            errors.at(&reason.ident, format!("duplicate reason `{name}`"));
            return false;
        }
        if RESERVED.contains(&name.as_str()) {
            errors.at(
                &reason.ident,
                format!(
                    "`{name}` is generated next to the reason types (the typed state has `State::Absent` and \
                     `State::Unrecognized`); rename this reason"
                ),
            );
            reserved.insert(name);
            return false;
        }
        let _ = util::check_name(errors, NameKind::ConditionReason, &name, &reason.ident)
            && util::check_name(errors, NameKind::EventReason, &name, &reason.ident);
        if let (Some(gate), Some(event)) = (&reason.gate, &reason.event)
            && event == "Warning"
        {
            errors.at(
                gate,
                format!(
                    "reason `{name}` is a `gate` (waiting for a human, not a failure) with a Warning \
                     event: drop `event = {event}`, or drop `gate` if it is a failure"
                ),
            );
        }
        true
    });

    // Transitions between declared reasons, each once.
    let names: Vec<String> = model
        .reasons
        .iter()
        .map(|r| util::name_of(&r.ident))
        .collect();
    let index = |ident: &Ident, errors: &mut Errors| {
        let name = util::name_of(ident);
        let found = names.iter().position(|n| *n == name);
        // A reserved name was reported at its variant; its transitions are dropped with it.
        if found.is_none() && !reserved.contains(&name) {
            let candidates: Vec<&str> = names.iter().map(String::as_str).collect();
            let hint = match util::did_you_mean(&name, &candidates) {
                Some(suggestion) => format!("did you mean `{suggestion}`?"),
                None => format!("its reasons are {}", util::or_list(&names)),
            };
            errors.at(
                ident,
                format!("`{name}` is not a reason of `{enum_name}`: {hint}"),
            );
        }
        found
    };
    let mut declared = HashSet::new();
    for (from, to) in &model.edges {
        let (Some(f), Some(t)) = (index(from, errors), index(to, errors)) else {
            continue;
        };
        if !declared.insert((f, t)) {
            errors.at(to, format!("duplicate transition `{from} -> {to}`"));
            continue;
        }
        model.reasons[f].targets.push(t);
    }

    // Start states: the reasons marked `initial`, else the first.
    let mut initial: Vec<usize> = (0..model.reasons.len())
        .filter(|&i| model.reasons[i].initial.is_some())
        .collect();
    if initial.is_empty() && !model.reasons.is_empty() {
        initial.push(0);
    }
    if model.reasons.is_empty() {
        errors.at_span(
            model.item.ident.span(),
            format!("`{enum_name}` has no reasons: add a variant per reason"),
        );
    }

    // Every reason reachable from a start state.
    let mut reached = vec![false; model.reasons.len()];
    let mut queue = initial.clone();
    while let Some(i) = queue.pop() {
        if std::mem::replace(&mut reached[i], true) {
            continue;
        }
        queue.extend(model.reasons[i].targets.iter().copied());
    }
    let starts: Vec<String> = initial.iter().map(|&i| names[i].clone()).collect();
    for (reason, reached) in model.reasons.iter().zip(reached) {
        if !reached {
            errors.at(
                &reason.ident,
                format!(
                    "reason `{}` is unreachable: no declared transition leads to it from the start state{} {}; \
                     add one to `#[transitions(..)]` or mark it `#[reason(.., initial)]`",
                    reason.ident,
                    if starts.len() == 1 { "" } else { "s" },
                    util::or_list(&starts),
                ),
            );
        }
    }

    Checked {
        type_,
        module: Ident::new(&util::snake_case(&enum_name), model.item.ident.span()),
        initial,
    }
}
