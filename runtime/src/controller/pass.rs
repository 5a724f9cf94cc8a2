//! The handle a reconciler gets for one pass: what it is working on, and what it wants the
//! runtime to do at the end of the pass (outcome, conditions).

use std::sync::Arc;

use jiff::Timestamp;

use crate::conditions::{self, Change, Condition, DesiredCondition};
use crate::observe::{ObjectRef, Outcome, Phase};
use crate::vocabulary::ConditionType;

/// One reconcile pass over an object of type `K`.
///
/// The pass collects what the reconciler decides — condition changes, an outcome override — and
/// the runtime acts on it when the pass returns: it writes the status (only if something other
/// than a `lastTransitionTime` changed, with the object's resourceVersion as a precondition),
/// then publishes one event per transition that the write made durable.
#[derive(Debug)]
pub struct Pass<K> {
    object: Arc<ObjectRef>,
    phase: Phase,
    generation: Option<i64>,
    stored: Vec<Condition>,
    pending: Vec<Condition>,
    outcome: Option<Outcome>,
    skip_reason: Option<String>,
    now: Timestamp,
    _resource: std::marker::PhantomData<fn() -> K>,
}

impl<K> Pass<K> {
    /// A pass over `object` in `phase`, whose stored status has `conditions` and whose
    /// `metadata.generation` is `generation`. `now` stamps condition transitions of this pass.
    pub fn new(
        object: Arc<ObjectRef>,
        phase: Phase,
        generation: Option<i64>,
        conditions: Vec<Condition>,
        now: Timestamp,
    ) -> Self {
        Self {
            object,
            phase,
            generation,
            pending: conditions.clone(),
            stored: conditions,
            outcome: None,
            skip_reason: None,
            now,
            _resource: std::marker::PhantomData,
        }
    }

    /// The object this pass works on.
    pub fn object(&self) -> &ObjectRef {
        &self.object
    }

    /// The phase of this pass.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The object's `metadata.generation` when the pass started.
    pub fn generation(&self) -> Option<i64> {
        self.generation
    }

    /// Overrides the outcome this pass is recorded with, if it returns `Ok` (an `Err` is always
    /// recorded as failed). For example, a controller that requeues as a periodic resync after
    /// converging sets [`Outcome::Completed`].
    pub fn set_outcome(&mut self, outcome: Outcome) {
        self.outcome = Some(outcome);
    }

    /// Records this pass as [`Outcome::Skipped`] (if it returns `Ok`), saying why — for
    /// example, "suspended". The reason is logged with the pass.
    pub fn skip(&mut self, reason: impl Into<String>) {
        self.outcome = Some(Outcome::Skipped);
        self.skip_reason = Some(reason.into());
    }

    /// The outcome override, if any.
    pub fn outcome_override(&self) -> Option<Outcome> {
        self.outcome
    }

    /// Why the pass was skipped, if it was.
    pub fn skip_reason(&self) -> Option<&str> {
        self.skip_reason.as_deref()
    }

    /// The conditions as the pass will write them: the stored ones with this pass's changes.
    pub fn conditions(&self) -> &[Condition] {
        &self.pending
    }

    /// The conditions as they were stored when the pass started.
    pub fn stored_conditions(&self) -> &[Condition] {
        &self.stored
    }

    /// Sets a condition for the end of the pass, with `observedGeneration` filled from the
    /// object's generation. Returns what changed relative to the conditions as they stand in
    /// this pass.
    pub fn set(&mut self, desired: DesiredCondition) -> Change {
        let desired = match self.generation {
            Some(generation) => desired.observed_generation(generation),
            None => desired,
        };
        let at = self.now;
        conditions::set_with_clock(&mut self.pending, desired, &FixedClock(at))
    }

    /// The typed state of the condition `C`, read from the conditions as they stand in this pass.
    pub fn condition<C: ConditionType>(&self) -> C::State {
        C::state(conditions::find(&self.pending, C::VOCABULARY.type_))
    }
}

struct FixedClock(Timestamp);

impl crate::clock::Clock for FixedClock {
    fn now(&self) -> Timestamp {
        self.0
    }
}
