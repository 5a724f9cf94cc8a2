//! The kstatus conditions and `status.observedGeneration` the runtime adds to an `apply` pass's
//! status before it is written ([`crate::kstatus`] has the rules).

use std::sync::atomic::{AtomicBool, Ordering};

use super::failure::{ErrorChain, PassError};
use super::next::Next;
use super::{Pass, Reconciler};
use crate::conditions::DesiredCondition;
use crate::kstatus::{self, OBSERVED_GENERATION, Verdict};
use crate::observe::{Outcome, Phase};

/// Adds the derived conditions of `R::KSTATUS` to `pass`, which ended with `result` after
/// `retries` consecutive retried passes of its object. Nothing for a skipped pass, a `cleanup`,
/// a reconciler that opted out, or an object without status (no declared vocabulary, nothing
/// stored in `status`, nothing written there by the pass).
pub(super) fn derive<R: Reconciler>(
    pass: &mut Pass<R::Resource>,
    result: &Result<Next, PassError<R::Error>>,
    retries: u32,
) {
    let Some(policy) = R::KSTATUS else {
        return;
    };
    if pass.phase() != Phase::Apply || pass.outcome_override() == Some(Outcome::Skipped) {
        return;
    }
    // Only objects with a status: a resource without one (a ConfigMap) has no status
    // subresource to write to.
    let has_status =
        !R::CONDITIONS.is_empty() || pass.status_needs_write() || !pass.stored_status().is_empty();
    if !has_status {
        return;
    }
    let verdict = match result {
        Ok(Next::Done { action, .. }) => {
            match Outcome::of_pass::<()>(&Ok(action.clone()), pass.outcome_override()) {
                Outcome::Completed => Verdict::Completed,
                _ => Verdict::Requeued,
            }
        }
        Ok(Next::Conflict { .. }) => return,
        Err(error) => Verdict::Failed {
            terminal: error.is_terminal(),
            consecutive: retries.saturating_add(1),
            message: ErrorChain(error).to_string(),
        },
    };
    // A pass that moved a declared condition further than one declared transition writes it
    // hop by hop; each hop's status is that of the hop, in progress (derived anew per hop).
    let state = match pass.first_hop(R::CONDITIONS) {
        Some(hop) if !matches!(verdict, Verdict::Failed { .. }) => {
            policy.state_of_hop(R::CONDITIONS, &hop)
        }
        _ => policy.state(R::CONDITIONS, pass.conditions(), &verdict),
    };
    let derived = kstatus::derived_types(Some(&policy), R::CONDITIONS);
    for (type_, condition) in state.conditions(&derived) {
        let Some((status, reason, message)) = condition else {
            pass.remove_condition(type_);
            continue;
        };
        match DesiredCondition::new(type_, status, reason, message) {
            Ok(desired) => {
                pass.set(desired);
            }
            Err(error) => tracing::error!(%error, type_, "a derived condition is invalid; not set"),
        }
    }
    if let Some(generation) = pass.generation() {
        pass.set_status_field(OBSERVED_GENERATION, generation);
    }
}

/// Says once per controller, as an error, that the resource's status type dropped the
/// `observedGeneration` the runtime wrote (`sent`; its struct has no such field): the server
/// stores it, but every pass then writes it again, and a reader through the type never sees it.
pub(super) fn check_stored<R: Reconciler>(
    sent: &serde_json::Map<String, serde_json::Value>,
    stored: &super::status::StoredStatus,
    warned: &AtomicBool,
) {
    if !sent.contains_key(OBSERVED_GENERATION)
        || stored.fields.contains_key(OBSERVED_GENERATION)
        || warned.swap(true, Ordering::Relaxed)
    {
        return;
    }
    tracing::error!(
        "the status type of {} has no `observedGeneration` field: add \
         `observed_generation: Option<i64>` (serialized as `observedGeneration`) to it, or opt out \
         of kstatus status with `#[reconciler(kstatus = false)]`",
        std::any::type_name::<R::Resource>()
    );
}
