//! The handle a reconciler gets for one pass: what it is working on, and what it wants the
//! runtime to do at the end of the pass (outcome, conditions, status fields).

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::EventType;
use serde_json::{Map, Value};

use super::Trigger;
use crate::children::{ChildError, ChildWriter};
use crate::clock::Clock;
use crate::conditions::{self, Change, Condition, DesiredCondition};
use crate::events::{Event, EventRecorder, PublishError};
use crate::observe::{ObjectRef, Outcome, Phase};
use crate::vocabulary::{ConditionType, Vocabulary};

/// One reconcile pass over an object of type `K`.
///
/// The pass collects what the reconciler decides — condition changes, status fields, an outcome
/// override — and the runtime acts on it when the pass returns: it writes the status (only if
/// something other than a `lastTransitionTime` changed, with the object's resourceVersion as a
/// precondition), then publishes one event per condition transition that the write made durable.
///
/// ```
/// use std::sync::Arc;
/// use kubeward::Pass;
/// use kubeward::conditions::{Change, ConditionStatus, DesiredCondition};
/// use kubeward::observe::{ObjectRef, Outcome, Phase};
/// # use k8s_openapi::api::core::v1::ConfigMap;
///
/// let object = ObjectRef { api_version: "v1".into(), kind: "ConfigMap".into(),
///                          namespace: Some("demo".into()), name: "web".into(), uid: None };
/// let mut pass = Pass::<ConfigMap>::new(Arc::new(object), Phase::Apply, Some(3), Vec::new());
/// let ready = DesiredCondition::new("Ready", ConditionStatus::True, "Rendered", "")?;
/// assert_eq!(pass.set(ready), Change::Transitioned);
/// assert_eq!(pass.conditions()[0].observed_generation, Some(3));
/// pass.skip("suspended");
/// assert_eq!(pass.outcome_override(), Some(Outcome::Skipped));
/// # Ok::<(), kubeward::conditions::ConditionError>(())
/// ```
pub struct Pass<K> {
    object: Arc<ObjectRef>,
    phase: Phase,
    generation: Option<i64>,
    /// The stored status: conditions and the other fields, read on first use.
    stored: OnceLock<StoredStatus>,
    load_stored: Option<Box<dyn Fn() -> StoredStatus + Send + Sync>>,
    /// The conditions as this pass changed them; `None` until it changes any.
    pending: Option<Vec<Condition>>,
    status_fields: Map<String, Value>,
    outcome: Option<Outcome>,
    skip_reason: Option<String>,
    now: Timestamp,
    /// The recorder of the events the reconciler publishes, and what they regard (built on
    /// first publish: most passes publish nothing themselves).
    events: Option<(EventRecorder, Regarding)>,
    /// What the pass writes the object's children with, when a controller started it: built
    /// on first use (most passes write no child).
    children: Option<LazyChildWriter>,
    /// Per condition type, the reason and event type its last `set` declared.
    event_types: HashMap<String, (String, EventType)>,
    /// Per condition type, the condition as each `set` of this pass left it, in order.
    paths: HashMap<String, Vec<Condition>>,
    /// Why the pass runs.
    triggers: Arc<[Trigger]>,
    _resource: PhantomData<fn() -> K>,
}

/// A pass's [`ChildWriter`], built on first use.
struct LazyChildWriter {
    make: Box<dyn Fn() -> Option<ChildWriter> + Send + Sync>,
    writer: OnceLock<Option<ChildWriter>>,
}

impl<K> std::fmt::Debug for Pass<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pass")
            .field("object", &self.object)
            .field("phase", &self.phase)
            .field("generation", &self.generation)
            .field("conditions", &self.conditions())
            .field("outcome", &self.outcome)
            .finish_non_exhaustive()
    }
}

impl<K> Pass<K> {
    /// A pass over `object` in `phase`, whose stored status has `conditions` and whose
    /// `metadata.generation` is `generation`. Transitions are stamped with the system time at
    /// the start of the pass (a controller stamps them with its own clock instead).
    pub fn new(
        object: Arc<ObjectRef>,
        phase: Phase,
        generation: Option<i64>,
        conditions: Vec<Condition>,
    ) -> Self {
        Self {
            object,
            phase,
            generation,
            stored: OnceLock::from(StoredStatus {
                conditions,
                ..StoredStatus::default()
            }),
            load_stored: None,
            pending: None,
            status_fields: Map::new(),
            outcome: None,
            skip_reason: None,
            now: Timestamp::now(),
            events: None,
            children: None,
            event_types: HashMap::new(),
            paths: HashMap::new(),
            triggers: Arc::new([]),
            _resource: PhantomData,
        }
    }

    /// This pass with transitions stamped by `clock` (read once, now).
    #[must_use]
    pub(crate) fn with_clock(mut self, clock: &dyn Clock) -> Self {
        self.now = clock.now();
        self
    }

    /// This pass run for `triggers`.
    #[must_use]
    pub(crate) fn with_triggers(mut self, triggers: Arc<[Trigger]>) -> Self {
        self.triggers = triggers;
        self
    }

    /// Why this pass runs: the object's own change, a child's or a related object's, a retry or
    /// a scheduled pass, each once (several changes seen before the pass started are one
    /// pass). For logs: a pass reconciles the object's whole state whatever started it. Empty
    /// for a pass not started by a controller ([`Pass::new`]).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use kubeward::Pass;
    /// # use kubeward::observe::{ObjectRef, Phase};
    /// # let object = Arc::new(ObjectRef { api_version: "v1".into(), kind: "ConfigMap".into(), namespace: None, name: "web".into(), uid: None });
    /// let pass: Pass<k8s_openapi::api::core::v1::ConfigMap> = Pass::new(object, Phase::Apply, None, Vec::new());
    /// for trigger in pass.triggers() {
    ///     tracing::info!(%trigger, "reconciling");
    /// }
    /// assert!(pass.triggers().is_empty());
    /// ```
    pub fn triggers(&self) -> &[Trigger] {
        &self.triggers
    }

    /// A pass whose stored status (conditions and other fields) `load` reads when the pass first
    /// needs it: a pass that touches no condition never pays for reading them.
    pub(crate) fn with_lazy_status(
        object: Arc<ObjectRef>,
        phase: Phase,
        generation: Option<i64>,
        load: Box<dyn Fn() -> StoredStatus + Send + Sync>,
    ) -> Self {
        let mut pass = Self::new(object, phase, generation, Vec::new());
        pass.stored = OnceLock::new();
        pass.load_stored = Some(load);
        pass
    }

    fn stored(&self) -> &StoredStatus {
        self.stored.get_or_init(|| {
            self.load_stored
                .as_ref()
                .map(|load| load())
                .unwrap_or_default()
        })
    }

    /// Whether the status the pass will write differs from the stored one in anything but a
    /// condition's `lastTransitionTime`.
    pub fn status_needs_write(&self) -> bool {
        if self.pending.is_none() && self.status_fields.is_empty() {
            return false;
        }
        super::status::needs_write(self.stored(), self.conditions(), &self.status_fields)
    }

    /// The status the pass writes (a merge patch of it) if [it needs to](Pass::status_needs_write):
    /// the fields it set, and its conditions with the stored entries that did not parse kept in
    /// their places.
    pub(crate) fn status_to_write(&self) -> Map<String, Value> {
        super::status::status_json(
            self.conditions(),
            &self.stored().foreign,
            &self.status_fields,
        )
    }

    /// When this pass moved a declared condition through several reasons and its stored reason
    /// may not go to the last one directly — the vocabulary does not declare that transition,
    /// so the CRD's rules ([`crate::crd`]) would refuse the write — the conditions of the first
    /// write: each such condition at the farthest reason of its path that the stored one may go
    /// to. The controller writes it and goes on from there in the same pass ([`hop_stored`](Self::hop_stored)),
    /// one declared transition per write. `None` when the pass's conditions can be written as they are.
    pub(crate) fn first_hop(&self, vocabularies: &[&Vocabulary]) -> Option<Vec<Condition>> {
        let mut conditions = self.conditions().to_vec();
        let mut hopped = false;
        for vocabulary in vocabularies {
            let stored = conditions::find(self.stored_conditions(), vocabulary.type_)
                .map(|c| c.reason.as_str());
            let Some(last) = conditions.iter_mut().find(|c| c.type_ == vocabulary.type_) else {
                continue;
            };
            if vocabulary.allows(stored, &last.reason) {
                continue;
            }
            let path = self.paths.get(vocabulary.type_).into_iter().flatten();
            if let Some(hop) = path.rev().find(|c| vocabulary.allows(stored, &c.reason)) {
                *last = hop.clone();
                hopped = true;
            }
        }
        hopped.then_some(conditions)
    }

    /// The status of a [first hop](Self::first_hop): its conditions only (the fields the pass
    /// set wait for its last write).
    pub(crate) fn hop_to_write(&self, conditions: &[Condition]) -> Map<String, Value> {
        super::status::status_json(conditions, &self.stored().foreign, &Map::new())
    }

    /// A [first hop](Self::first_hop) of this pass was stored, as the server answered it
    /// (`stored`), or as written when the answer was resolved by reading back: the next hop
    /// builds on it.
    pub(crate) fn hop_stored(&mut self, hop: Vec<Condition>, stored: Option<StoredStatus>) {
        let stored = stored.unwrap_or_else(|| StoredStatus {
            conditions: hop,
            ..self.stored().clone()
        });
        self.stored = OnceLock::from(stored);
    }

    /// The status as it was stored when the pass started, or as its last hop stored it.
    pub(crate) fn stored_status(&self) -> &StoredStatus {
        self.stored()
    }

    /// This pass writing the object's children with the writer `make` builds when a child is
    /// first written or read (`None`: the object cannot own children).
    pub(crate) fn with_children(
        mut self,
        make: impl Fn() -> Option<ChildWriter> + Send + Sync + 'static,
    ) -> Self {
        self.children = Some(LazyChildWriter {
            make: Box::new(make),
            writer: OnceLock::new(),
        });
        self
    }

    /// The writer of this pass's children.
    fn child_writer(&self) -> Result<&ChildWriter, ChildError> {
        self.children
            .as_ref()
            .and_then(|lazy| lazy.writer.get_or_init(&lazy.make).as_ref())
            .ok_or(ChildError::NoController)
    }

    /// Applies `child`, a child of this pass's object, by server-side apply under the
    /// controller's field manager, with the controller ownerReference to the object, its
    /// namespace (when `child` names none) and the [`CONTROLLER_LABEL`](crate::children::CONTROLLER_LABEL)
    /// set; returns the child as stored. Its kind must be declared owned (`owns(..)`). See
    /// [`children`](crate::children).
    ///
    /// # Errors
    /// [`ChildError::Undeclared`] for a kind not declared owned, [`ChildError::Unnamed`],
    /// [`ChildError::OtherNamespace`], [`ChildError::NoController`] outside a controller's pass,
    /// and the API server's refusal ([`ChildError::Api`]).
    pub async fn apply_child<C>(&self, child: &C) -> Result<C, ChildError>
    where
        C: kube::Resource<DynamicType = ()>
            + serde::Serialize
            + serde::de::DeserializeOwned
            + Clone
            + std::fmt::Debug,
    {
        self.child_writer()?.apply(child).await
    }

    /// Reads this pass's object's child of kind `C` named `name`; `None` when there is none: from
    /// the controller's cache for a kind owned whole (`owns(whole(Deployment))`, no request),
    /// else from the API server (the kind is cached metadata-only). The child is
    /// looked for in the object's namespace, or for a cluster-scoped object in the namespace
    /// the controller's cache of its children has it in. Its kind must be declared owned
    /// (`owns(..)`: the generated RBAC then allows the `get`). With
    /// [`kstatus::readiness`](crate::kstatus::readiness) a dependent's readiness feeds one of the
    /// reconciler's conditions; the child's status changes start this object's passes.
    ///
    /// # Errors
    /// As [`apply_child`](Self::apply_child).
    pub async fn get_child<C>(&self, name: &str) -> Result<Option<C>, ChildError>
    where
        C: kube::Resource<DynamicType = ()> + serde::de::DeserializeOwned + Clone + std::fmt::Debug,
    {
        self.child_writer()?.get::<C>(name).await
    }

    /// The metadata of this pass's object's children of kind `C` (the objects whose controller
    /// ownerReference names it), as the controller's cache of the kind holds them: what its
    /// watch saw, and what this controller wrote. No request is made.
    ///
    /// # Errors
    /// [`ChildError::Undeclared`] for a kind not declared owned, [`ChildError::NoController`]
    /// outside a controller's pass.
    pub fn children<C>(&self) -> Result<Vec<kube::core::PartialObjectMeta<C>>, ChildError>
    where
        C: kube::Resource<DynamicType = ()>,
    {
        self.child_writer()?.children::<C>()
    }

    /// The related object of kind `O` named `name` in this pass's object's namespace (or the
    /// cluster-scoped one of that name), read from the controller's cache of the kind: `O` must
    /// be declared watched (`watches(O, map = ..)`), and reading it needs no request and no verb
    /// beyond the watch's `list` and `watch`. `None` when the cache holds no such object.
    ///
    /// # Errors
    /// [`ChildError::NotWatched`] for a kind not declared watched, [`ChildError::Undecodable`],
    /// [`ChildError::NoController`] outside a controller's pass.
    pub fn related<O>(&self, name: &str) -> Result<Option<O>, ChildError>
    where
        O: kube::Resource<DynamicType = ()> + serde::de::DeserializeOwned,
    {
        let namespace = self.object.namespace.clone();
        self.related_in(namespace.as_deref(), name)
    }

    /// [`related`](Self::related) in `namespace` (`None`: a cluster-scoped object).
    ///
    /// # Errors
    /// As [`related`](Self::related).
    pub fn related_in<O>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<O>, ChildError>
    where
        O: kube::Resource<DynamicType = ()> + serde::de::DeserializeOwned,
    {
        self.child_writer()?.related::<O>(namespace, name)
    }

    /// Deletes this pass's object's child of kind `C` named `name` (where
    /// [`get_child`](Self::get_child) looks for it), preconditioned on its uid; whether it was
    /// there. Its kind must be declared owned (`owns(..)`).
    ///
    /// # Errors
    /// As [`apply_child`](Self::apply_child), and [`ChildError::NotAChild`] when an object of
    /// that name is not this object's child (it is left alone).
    pub async fn delete_child<C>(&self, name: &str) -> Result<bool, ChildError>
    where
        C: kube::Resource<DynamicType = ()> + serde::de::DeserializeOwned + Clone + std::fmt::Debug,
    {
        self.child_writer()?.delete::<C>(name).await
    }

    /// Deletes this pass's object's children of kind `C` that the controller applied
    /// ([`apply_child`](Self::apply_child): they carry its
    /// [`CONTROLLER_LABEL`](crate::children::CONTROLLER_LABEL) and the object's controller
    /// ownerReference) and that `wanted` does not name: a pass that applies the children it
    /// wants and then prunes the rest leaves exactly those. Children someone else created, or
    /// owned by another object, are never deleted. Returns how many were deleted.
    ///
    /// # Errors
    /// As [`apply_child`](Self::apply_child).
    pub async fn prune_children<C>(&self, wanted: &[&str]) -> Result<usize, ChildError>
    where
        C: kube::Resource<DynamicType = ()> + serde::de::DeserializeOwned + Clone + std::fmt::Debug,
    {
        self.child_writer()?.prune::<C>(wanted).await
    }

    /// This pass publishing its events through `recorder`, regarding what `regarding` returns
    /// (called on the first publish).
    #[must_use]
    pub(crate) fn with_events(
        mut self,
        recorder: EventRecorder,
        regarding: impl Fn() -> ObjectReference + Send + Sync + 'static,
    ) -> Self {
        let regarding = Regarding {
            built: OnceLock::new(),
            build: Box::new(regarding),
        };
        self.events = Some((recorder, regarding));
        self
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
    /// converging sets [`Outcome::Completed`]. It changes only how the pass is recorded (metrics,
    /// logs): whether a cleanup is finished is decided from the action it returns.
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
    pub(crate) fn skip_reason(&self) -> Option<&str> {
        self.skip_reason.as_deref()
    }

    /// The conditions as the pass will write them: the stored ones with this pass's changes.
    pub fn conditions(&self) -> &[Condition] {
        match &self.pending {
            Some(pending) => pending,
            None => &self.stored().conditions,
        }
    }

    /// The conditions as they were stored when the pass started.
    pub fn stored_conditions(&self) -> &[Condition] {
        &self.stored().conditions
    }

    fn pending_mut(&mut self) -> &mut Vec<Condition> {
        if self.pending.is_none() {
            self.pending = Some(self.stored().conditions.clone());
        }
        self.pending.get_or_insert_with(Vec::new)
    }

    /// Sets a condition for the end of the pass, as `meta.SetStatusCondition` does, with
    /// `observedGeneration` filled from the object's generation. Returns what changed relative
    /// to the conditions as they stand in this pass.
    ///
    /// What is written is the net change against the stored status: a condition whose status
    /// ends the pass where it was stored keeps its stored `lastTransitionTime`, even if the pass
    /// moved it away and back (Unknown, then True again with a new message) — nobody saw it
    /// leave.
    ///
    /// The event a transition publishes has the type `desired` declares
    /// ([`DesiredCondition::event_type`]; typed transitions always do), else the controller's.
    pub fn set(&mut self, mut desired: DesiredCondition) -> Change {
        if let Some(generation) = self.generation.filter(|g| *g >= 0) {
            desired.observed_generation = Some(generation);
        }
        match desired.declared_event_type() {
            Some(event_type) => self.event_types.insert(
                desired.type_().to_owned(),
                (desired.reason().to_owned(), event_type),
            ),
            None => self.event_types.remove(desired.type_()),
        };
        let now = self.now;
        let type_ = desired.type_().to_owned();
        let change = conditions::set_with_clock(self.pending_mut(), desired, &PassStart(now));
        self.keep_stored_transition_times();
        if let Some(set) = conditions::find(self.conditions(), &type_).cloned() {
            self.paths.entry(type_).or_default().push(set);
        }
        change
    }

    /// Gives every pending condition whose status equals its stored one the stored
    /// `lastTransitionTime`.
    fn keep_stored_transition_times(&mut self) {
        let Some(pending) = self.pending.as_mut() else {
            return;
        };
        let Some(stored) = self.stored.get() else {
            return;
        };
        for condition in pending {
            if let Some(before) = stored
                .conditions
                .iter()
                .find(|s| s.type_ == condition.type_ && s.status == condition.status)
            {
                condition.last_transition_time = before.last_transition_time.clone();
            }
        }
    }

    /// The event type the last [`Pass::set`] of condition `type_` declared for a transition into
    /// `reason`, if it declared one.
    pub(crate) fn declared_event_type(&self, type_: &str, reason: &str) -> Option<EventType> {
        self.event_types
            .get(type_)
            .filter(|(declared, _)| declared == reason)
            .map(|(_, event_type)| *event_type)
    }

    /// Removes the condition `type_` at the end of the pass; whether it was present.
    pub fn remove_condition(&mut self, type_: &str) -> bool {
        conditions::remove(self.pending_mut(), type_)
    }

    /// The typed state of the condition `C`, read from the conditions as they stand in this pass.
    pub fn condition<C: ConditionType>(&self) -> C::State {
        C::state(conditions::find(self.conditions(), C::VOCABULARY.type_))
    }

    /// Sets the status field `name` (other than `conditions`) to `value` in the pass's status
    /// write. The write happens only if a condition changed or a field differs from the stored one.
    pub fn set_status_field(&mut self, name: impl Into<String>, value: impl Into<Value>) {
        self.status_fields.insert(name.into(), value.into());
    }

    /// The status fields set with [`Pass::set_status_field`].
    pub fn status_fields(&self) -> &Map<String, Value> {
        &self.status_fields
    }

    /// Publishes `event` about this pass's object through the controller's event recorder.
    /// Without a recorder, does nothing. The publish is bounded by the recorder's timeout.
    ///
    /// # Errors
    /// As [`EventRecorder::publish`].
    pub async fn publish_event(&self, event: &Event) -> Result<(), PublishError> {
        match &self.events {
            Some((recorder, regarding)) => {
                let regarding = regarding.built.get_or_init(|| (regarding.build)());
                recorder.publish(event, regarding).await
            }
            None => Ok(()),
        }
    }
}

use super::status::StoredStatus;

/// What a pass's own events regard: the object's reference, built on first use.
struct Regarding {
    built: OnceLock<ObjectReference>,
    build: Box<dyn Fn() -> ObjectReference + Send + Sync>,
}

/// The clock of a pass: every transition of one pass is stamped with the time the pass started.
struct PassStart(Timestamp);

impl Clock for PassStart {
    fn now(&self) -> Timestamp {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::ConditionStatus;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn stored_ready(status: &str, message: &str) -> Condition {
        Condition {
            last_transition_time: Time(Timestamp::from_second(1_577_836_800).unwrap()),
            message: message.into(),
            observed_generation: Some(1),
            reason: "Applied".into(),
            status: status.into(),
            type_: "Ready".into(),
        }
    }

    fn pass(stored: Vec<Condition>) -> Pass<ConfigMap> {
        let object = ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("demo".into()),
            name: "web".into(),
            uid: None,
        };
        Pass::new(Arc::new(object), Phase::Apply, Some(2), stored)
    }

    fn ready(status: ConditionStatus, reason: &str, message: &str) -> DesiredCondition {
        DesiredCondition::new("Ready", status, reason, message).unwrap()
    }

    #[test]
    fn a_condition_moved_away_and_back_keeps_its_stored_transition_time() {
        let stored = stored_ready("True", "v1");
        let mut pass = pass(vec![stored.clone()]);
        let away = pass.set(ready(ConditionStatus::Unknown, "Checking", "re-checking"));
        assert_eq!(away, Change::Transitioned);
        assert_ne!(
            pass.conditions()[0].last_transition_time,
            stored.last_transition_time
        );
        let back = pass.set(ready(ConditionStatus::True, "Applied", "v2"));
        assert_eq!(back, Change::Transitioned, "relative to the pass so far");
        let written = &pass.conditions()[0];
        assert_eq!(written.last_transition_time, stored.last_transition_time);
        assert_eq!(written.message, "v2");
        assert!(pass.status_needs_write(), "the message changed");
    }

    #[test]
    fn a_condition_that_ends_elsewhere_takes_the_pass_time() {
        let stored = stored_ready("True", "v1");
        let mut pass = pass(vec![stored.clone()]);
        pass.set(ready(ConditionStatus::False, "FailedDeploy", "boom"));
        assert_ne!(
            pass.conditions()[0].last_transition_time,
            stored.last_transition_time
        );
    }
}
