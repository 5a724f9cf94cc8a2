//! Dispatch: what kube-runtime calls for an object. Decides the phase (init, apply, cleanup,
//! delete), runs each pass inside a [`PassGuard`], and turns how it ended into the next action.
//!
//! - Failures (an `Err`, a panic, a failed write) and conflicts (409 on the status write or the
//!   finalizer patch, [`PassError::Conflict`]) are retried after the reconciler's `error_backoff`
//!   (by default the exponential backoff), their attempts counted per uid in
//!   [`ObjectMemory`](super::memory::ObjectMemory): a stale cache no longer hot-loops, and a
//!   success resets the count.
//! - The finalizer is removed only when cleanup *returned* `Ok(Action::await_change())`, whatever
//!   outcome the reconciler reported for its metrics, and the removal builds on the resourceVersion
//!   of cleanup's own status write: one delete runs cleanup once. A removal that fails (a lost
//!   answer the read-back does not resolve as stored) or conflicts is retried alone, and so is
//!   one after a cleanup whose own status write conflicted or failed (another controller removed
//!   its finalizer meanwhile): cleanup is remembered as finished and does not run again.
//! - A panic in `apply` or `cleanup` is caught: a failed pass with a failure event and backoff. A
//!   panic in the `failure_event` or `error_backoff` hook falls back to the default.
//! - A pass never starts from the version its object had before this controller's last stored
//!   status write when the watch is about to deliver the newer one: it is put off (bounded, and
//!   without holding a concurrency slot) until the cache has it, so a requeue or retry that
//!   fires early does not recompute a stored transition. If the
//!   cache lags longer, the pass runs on the old version, and its status write is known to build
//!   on a replaced version ([`status::Basis::Replaced`]): its 409 is a conflict, never read back
//!   as stored, so the transition is not published twice.
//! - A pass that fails with a [terminal](super::Terminal) error is not retried: its object is
//!   held (in [`ObjectMemory`](super::memory::ObjectMemory)) until it changes in generation,
//!   labels, annotations or deletion; calls for it meanwhile (its own status write's watch event,
//!   a resync) run no pass. The change runs the next pass at once.
//! - A pass that runs past its reconcile timeout is abandoned (the reconciler's future dropped:
//!   its steps are recorded as abandoned), fails with [`PassError::TimedOut`] and is retried
//!   with backoff; nothing it decided is written, and its concurrency slot is freed.
//! - Once the reconciler returned, the status write and the events it makes durable run as one
//!   [unit](super::effects) that is not cancelled with the pass: a persisted transition always
//!   gets its event, also when the pass is abandoned.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use kube::runtime::controller::Action;
use kube::{Resource, ResourceExt};
use tracing::Instrument;

use super::context::Context;
use super::failure::PassError;
use super::hooks::failure_event;
use super::memory::{Normalised, Unresolved};
use super::next::Next;
use super::publish::{publish, transition_events};
use super::{Reconciler, Trigger, derived_status, finalizer, status};
use crate::Pass;
use crate::events::Event;
use crate::observe::{ObjectRef, Outcome, PassGuard, Phase, QueueRecord, ReconcileObserver};

/// The error policy kube-runtime calls after a failed pass: the object's next backoff delay, or
/// no retry at all after a terminal failure (the object's next change triggers it).
pub(super) fn error_policy<R: Reconciler>(
    object: Arc<R::Resource>,
    error: &PassError<R::Error>,
    context: Arc<Context<R>>,
) -> Action {
    if error.is_terminal() {
        return Action::await_change();
    }
    retry::<R>(&context, &object, error)
}

/// Counts one more retry of `object` (after a failure or a conflict, `error`) and requeues it
/// after the reconciler's [`error_backoff`](Reconciler::error_backoff) for that attempt, or
/// after the default backoff if the hook panics.
fn retry<R: Reconciler>(
    context: &Context<R>,
    object: &R::Resource,
    error: &PassError<R::Error>,
) -> Action {
    let attempt = context.memory.retry(object, |w| context.cached(w));
    Action::requeue(super::hooks::error_backoff(
        &context.reconciler,
        error,
        attempt,
    ))
}

/// The triggers of a pass no watch queued (shared: no allocation per pass).
static RETRY: std::sync::LazyLock<Arc<[Trigger]>> =
    std::sync::LazyLock::new(|| Arc::new([Trigger::Retry]));
static SCHEDULED: std::sync::LazyLock<Arc<[Trigger]>> =
    std::sync::LazyLock::new(|| Arc::new([Trigger::Scheduled]));

/// One call from kube-runtime: decides the phase, runs the pass(es), and acts on the result.
pub(super) async fn reconcile<R: Reconciler>(
    object: Arc<R::Resource>,
    context: Arc<Context<R>>,
) -> Result<Action, PassError<R::Error>> {
    let meta = object.meta();
    let name = meta.name.as_deref().unwrap_or_default();
    let triggers: Arc<[Trigger]> = match context.queue.started(meta.namespace.as_deref(), name) {
        Some(dequeued) => {
            context.observers.pass_dequeued(&QueueRecord {
                controller: context.name.clone(),
                waited: dequeued.waited,
            });
            dequeued.triggers.into()
        }
        // Not queued by a watch: scheduled by the controller loop.
        None if context.memory.retries(&*object) > 0 => RETRY.clone(),
        None => SCHEDULED.clone(),
    };
    // The object's reference is built only when the line is logged (a pass's hot path).
    tracing::debug!(object = %ObjectRef::from_resource(&*object), resource_version = object.resource_version(), "called");
    let object = match caught_up(&context, object) {
        Start::From(object) => object,
        Start::Later(delay) => return Ok(Action::requeue(delay)),
    };
    if context.memory.is_held_terminal(&*object) {
        if !triggers.iter().any(Trigger::ends_terminal_hold) {
            // Its last pass failed terminally and nothing it could depend on changed since.
            tracing::trace!(object = %ObjectRef::from_resource(&*object), "held after a terminal failure");
            return Ok(Action::await_change());
        }
        context.memory.release_terminal_hold(&*object);
    }
    let result = reconcile_phase(context.clone(), object.clone(), triggers).await;
    // (A failure is logged by the controller loop, with the object.)
    if let Ok(action) = &result {
        tracing::debug!(object = %ObjectRef::from_resource(&*object), ?action, "next");
    }
    if let Err(error) = &result
        && error.is_terminal()
    {
        // Recorded before the call returns: the watch event of this pass's own status write
        // must already find the object held.
        context
            .memory
            .failed_terminally(&*object, |w| context.cached(w));
    }
    result
}

/// The pass(es) of one call for `object`, by phase.
async fn reconcile_phase<R: Reconciler>(
    context: Arc<Context<R>>,
    object: Arc<R::Resource>,
    triggers: Arc<[Trigger]>,
) -> Result<Action, PassError<R::Error>> {
    let deleting = object.meta().deletion_timestamp.is_some();
    let next = match R::FINALIZER {
        Some(finalizer) if deleting => {
            if !finalizer::has(&*object, finalizer) || context.memory.is_finalized(&*object) {
                // Not ours (any more), or a cache entry from before our own removal: nothing to
                // clean up.
                return Ok(Action::await_change());
            }
            if context.memory.is_cleaned_up(&*object) {
                // Cleanup finished; its finalizer removal failed or met a conflict: retry that
                // alone.
                let removal = FinalizerPatch::Remove {
                    resource_version: None,
                };
                run_finalizer_pass(&context, &object, finalizer, removal, &triggers).await?
            } else {
                match run_pass(&context, &object, Phase::Cleanup, &triggers).await? {
                    Next::Done {
                        finished: true,
                        resource_version,
                        ..
                    } => {
                        let removal = FinalizerPatch::Remove { resource_version };
                        run_finalizer_pass(&context, &object, finalizer, removal, &triggers).await?
                    }
                    next => next,
                }
            }
        }
        None if deleting => return Ok(Action::await_change()),
        Some(finalizer) if !finalizer::has(&*object, finalizer) => {
            run_finalizer_pass(&context, &object, finalizer, FinalizerPatch::Add, &triggers).await?
        }
        _ => run_pass(&context, &object, Phase::Apply, &triggers).await?,
    };
    Ok(match next {
        Next::Done { action, .. } => {
            context.memory.succeeded(&*object);
            action
        }
        Next::Conflict { write } => retry::<R>(&context, &object, &PassError::Conflict { write }),
    })
}

/// Runs the object's next pass at once when the pass `result` ends with
/// `Ok(Action::await_change())` after storing a transition: its own status write's watch event
/// starts no pass (see [`Reads`](super::Reads)), and a reconciler that makes a transition and
/// awaits a change counts on seeing it — the next stage of a condition that moves one reason per
/// pass. (The outcome stays the reconciler's: reported before this.) A steady pass, a write that
/// changes no reason, and a pass that asked for its own requeue get no follow-up.
fn follow_up<E>(result: &mut Result<Next, E>) {
    if let Ok(Next::Done { action, .. }) = result
        && *action == Action::await_change()
    {
        *action = Action::requeue(Duration::ZERO);
    }
}

/// The most status writes one pass makes to store its conditions' paths hop by hop (each a
/// declared transition): far more than any vocabulary's longest path.
const MAX_HOPS: usize = 32;

/// How long a pass is put off for the cache to deliver the object its last status write stored.
const CATCH_UP: Duration = Duration::from_secs(5);

/// How soon an object put off for its cache is tried again (the watch delivering the written
/// version triggers it sooner).
const CATCH_UP_POLL: Duration = Duration::from_millis(50);

/// Where a pass should start.
enum Start<K> {
    /// From this version.
    From(Arc<K>),
    /// Not yet: try again after this delay, without holding a concurrency slot meanwhile.
    Later(Duration),
}

/// The version of `object` a pass should start from. When `object` is the version this
/// controller's last stored status write replaced (a requeue or retry fired before the watch
/// delivered the write), the pass starts from the newer version if the cache holds it by now, or
/// is put off ([`Start::Later`]: the slot is freed, and the watch's delivery of the write
/// triggers the object again) for up to [`CATCH_UP`] after the write; after that it runs on
/// `object` itself. The replaced version is remembered until a pass starts from a newer one, so
/// that a pass run on it after the wait writes its status as [`status::Basis::Replaced`].
fn caught_up<R: Reconciler>(context: &Context<R>, object: Arc<R::Resource>) -> Start<R::Resource> {
    let Some(waited) = context.memory.superseded_for(&*object) else {
        context.memory.caught_up(&*object);
        return Start::From(object);
    };
    let reference = kube::runtime::reflector::ObjectRef::from_obj(&*object);
    let cached = context
        .cache
        .borrow()
        .clone()
        .and_then(|store| store.get(&reference));
    match cached {
        // The object left the cache, or another of its name took its place: nothing to wait for.
        Some(fresh) if fresh.uid() != object.uid() => Start::From(object),
        None => Start::From(object),
        Some(fresh) if fresh.resource_version() != object.resource_version() => {
            context.memory.caught_up(&*fresh);
            Start::From(fresh)
        }
        Some(_) if waited < CATCH_UP => {
            tracing::debug!(object = %ObjectRef::from_resource(&*object), "put off until the cache has the written version");
            Start::Later(CATCH_UP_POLL)
        }
        Some(_) => {
            tracing::debug!(
                "the cache did not deliver the written version in time; running on the replaced one"
            );
            Start::From(object)
        }
    }
}

/// An `apply` or `cleanup` pass: runs the reconciler, writes the status, publishes events.
async fn run_pass<R: Reconciler>(
    context: &Arc<Context<R>>,
    object: &Arc<R::Resource>,
    phase: Phase,
    triggers: &Arc<[Trigger]>,
) -> Result<Next, PassError<R::Error>> {
    let reference = Arc::new(ObjectRef::from_resource(&**object));
    let guard = PassGuard::start(
        context.name.clone(),
        reference.clone(),
        phase,
        context.observers.clone(),
    );
    let span = pass_span(&context.name, &reference, phase, &guard, triggers);
    span.in_scope(|| {
        tracing::debug!(resource_version = object.resource_version(), "pass started");
    });
    let end = guard
        .run(pass_body(
            context,
            object,
            reference,
            phase,
            triggers.clone(),
        ))
        .instrument(span.clone())
        .await;
    let _entered = span.enter();
    match &end.result {
        Ok(_) => {
            tracing::debug!(outcome = %end.outcome, skip_reason = end.skip_reason, "pass finished")
        }
        Err(error) => {
            let terminal = error.is_terminal();
            tracing::warn!(error = %super::ErrorChain(error), terminal, "pass failed");
        }
    }
    match &end.result {
        Err(error) if end.outcome == Outcome::Failed => guard.fail(error.failure_reason()),
        _ => guard.finish(end.outcome),
    }
    end.result
}

/// The `reconcile` span of one pass: controller, object, phase, the pass's reconcile id and
/// its triggers.
fn pass_span(
    controller: &str,
    object: &ObjectRef,
    phase: Phase,
    guard: &PassGuard,
    triggers: &[Trigger],
) -> tracing::Span {
    let reconcile_id = guard.reconcile_id();
    let triggers = crate::trigger::Listed(triggers);
    tracing::info_span!("reconcile", controller, %object, %phase, %reconcile_id, %triggers)
}

/// How a pass body ended.
struct PassEnd<E: std::error::Error + 'static> {
    result: Result<Next, PassError<E>>,
    outcome: Outcome,
    skip_reason: Option<String>,
}

async fn pass_body<R: Reconciler>(
    context: &Arc<Context<R>>,
    object: &Arc<R::Resource>,
    reference: Arc<ObjectRef>,
    phase: Phase,
    triggers: Arc<[Trigger]>,
) -> PassEnd<R::Error> {
    let source = object.clone();
    let load = Box::new(move || status::status_of(&*source));
    let mut pass = Pass::with_lazy_status(reference, phase, object.meta().generation, load)
        .with_clock(&*context.clock)
        .with_triggers(triggers);
    if let Some(recorder) = &context.recorder {
        let of = object.clone();
        pass = pass.with_events(recorder.clone(), move || of.object_ref(&()));
    }
    let (for_children, of_children) = (context.clone(), object.clone());
    pass = pass.with_children(move || for_children.child_writer(&of_children));
    let reconciled = AssertUnwindSafe(async {
        match phase {
            Phase::Cleanup => context.reconciler.cleanup(object, &mut pass).await,
            _ => context.reconciler.apply(object, &mut pass).await,
        }
    })
    .catch_unwind();
    // Past the timeout the reconciler's future is dropped: its steps record themselves abandoned.
    let timeout = context.reconcile_timeout;
    let Ok(reconciled) = tokio::time::timeout(timeout, reconciled).await else {
        tracing::warn!(
            ?timeout,
            "the pass ran past its reconcile timeout; abandoning it"
        );
        let decided = Decided::Unfinished(PassError::TimedOut { after: timeout });
        return run_effects(context, object, pass, decided).await;
    };
    let decided = match reconciled {
        Ok(reconciled) => Decided::Completed(
            reconciled
                .map(|action| Next::Done {
                    finished: action == Action::await_change(),
                    action,
                    resource_version: None,
                })
                .map_err(PassError::Reconcile),
        ),
        // What a panicking pass decided is not written: it never finished deciding.
        Err(panic) => Decided::Unfinished(PassError::panicked(&*panic)),
    };
    run_effects(context, object, pass, decided).await
}

/// Runs the effects of a pass whose reconciler `decided` as one unit, and returns how the pass
/// ended.
async fn run_effects<R: Reconciler>(
    context: &Arc<Context<R>>,
    object: &Arc<R::Resource>,
    pass: Pass<R::Resource>,
    decided: Decided<R::Error>,
) -> PassEnd<R::Error> {
    let settled = Settled::new(context, object, pass, decided);
    if let Some(next) = settled.quiet_end(context, object) {
        // Nothing to write or publish: nothing a dropped pass could leave half done, so no task
        // (most passes of a converged object end here).
        let outcome = outcome_of(context, next, &settled.pass, object.meta().uid.as_deref());
        let skip_reason = settled.pass.skip_reason().map(str::to_owned);
        return PassEnd {
            result: settled.result,
            outcome,
            skip_reason,
        };
    }
    // From here on the pass's effects run as one unit that survives the pass being dropped
    // (abandoned on lost leadership or at the end of the shutdown grace): a status write that
    // persists always gets its transition events.
    let unit =
        effects(context.clone(), object.clone(), settled).instrument(tracing::Span::current());
    match context.effects.spawn(unit).await {
        Ok(end) => end,
        // A panic in the effects (a bug) fails the pass like a panic in the reconciler.
        Err(join) => {
            let payload = join.try_into_panic().unwrap_or_else(|_| {
                Box::new("the pass's effects were cancelled: the runtime is shutting down")
                    as Box<dyn std::any::Any + Send>
            });
            PassEnd {
                result: Err(PassError::panicked(&*payload)),
                outcome: Outcome::Failed,
                skip_reason: None,
            }
        }
    }
}

/// A pass whose reconciler decided, its derived status set: what its effects start from.
struct Settled<R: Reconciler> {
    pass: Pass<R::Resource>,
    result: Result<Next, PassError<R::Error>>,
    /// Whether the reconciler returned (rather than panicked or timed out): only then is its
    /// status written.
    completed: bool,
    /// The object's retries so far, for the derived status.
    retries: u32,
}

impl<R: Reconciler> Settled<R> {
    fn new(
        context: &Context<R>,
        object: &R::Resource,
        mut pass: Pass<R::Resource>,
        decided: Decided<R::Error>,
    ) -> Self {
        let (result, completed) = match decided {
            Decided::Completed(result) => (result, true),
            Decided::Unfinished(error) => (Err(error), false),
        };
        if pass.phase() == Phase::Cleanup && matches!(result, Ok(Next::Done { finished: true, .. }))
        {
            // Cleanup is finished, whatever becomes of its status write: when the write
            // conflicts or fails, the retry removes the finalizer without running cleanup again
            // (one delete, one cleanup). A status that did not persist is not retried: the
            // object is going.
            context.memory.cleaned_up(object, |w| context.cached(w));
        }
        let retries = context.memory.retries(object);
        if completed {
            derived_status::derive::<R>(&mut pass, &result, retries);
        }
        Self {
            pass,
            result,
            completed,
            retries,
        }
    }

    /// How the pass ended if its effects make no request: it succeeded, its status is stored as
    /// it is, and no earlier write of the object is in doubt.
    fn quiet_end(&self, context: &Context<R>, object: &R::Resource) -> Option<&Next> {
        let quiet = self.completed
            && !self.pass.status_needs_write()
            && !context.memory.has_unresolved(object);
        self.result.as_ref().ok().filter(|_| quiet)
    }
}

/// The outcome of a pass that ended with `next`; a finished pass forgets the object's failure
/// events (the next failure is a new series).
fn outcome_of<R: Reconciler>(
    context: &Context<R>,
    next: &Next,
    pass: &Pass<R::Resource>,
    uid: Option<&str>,
) -> Outcome {
    match next {
        Next::Done { action, .. } => {
            if let (Some(recorder), Some(uid)) = (&context.recorder, uid) {
                recorder.forget_failures(uid);
            }
            Outcome::of_pass::<()>(&Ok(action.clone()), pass.outcome_override())
        }
        Next::Conflict { .. } => Outcome::Waiting,
    }
}

/// What the reconciler decided in a pass.
enum Decided<E: std::error::Error + 'static> {
    /// It returned: its status is written whatever the result.
    Completed(Result<Next, PassError<E>>),
    /// It panicked or ran past its timeout: nothing it decided is written.
    Unfinished(PassError<E>),
}

/// The effects of a pass once the reconciler `decided`: writes its status, then publishes the
/// transition events of a stored write and the failure event of a failed pass, all at once.
async fn effects<R: Reconciler>(
    context: Arc<Context<R>>,
    object: Arc<R::Resource>,
    settled: Settled<R>,
) -> PassEnd<R::Error> {
    let Settled {
        mut pass,
        mut result,
        completed,
        retries,
    } = settled;
    // The status is written whatever the result: a reconciler that sets `FailedDeploy` and
    // returns the error wants both the condition and the failed pass.
    let mut events = Vec::new();
    let mut gone = false;
    events.extend(resolve_unresolved(&context, &object).await);
    if completed && pass.status_needs_write() {
        // Several transitions of one condition in this pass that the vocabulary does not declare
        // as one: written one declared transition at a time, each write's events published,
        // until the pass's last state is stored — whatever the pass returned.
        let mut object = object.clone();
        for _ in 0..MAX_HOPS {
            let hop = pass.first_hop(R::CONDITIONS);
            let no_fields = serde_json::Map::new();
            let (conditions, fields, status) = match &hop {
                Some(hop) => (&hop[..], &no_fields, pass.hop_to_write(hop)),
                None => (
                    pass.conditions(),
                    pass.status_fields(),
                    pass.status_to_write(),
                ),
            };
            let sent = status::fingerprint(&status);
            let stored_fingerprint = || status::fingerprint(&pass.stored_status().to_json());
            if context
                .memory
                .is_normalised_repeat(&*object, sent, stored_fingerprint)
            {
                // The server made this very write into the status it holds now (it pruned a
                // field, the type does not model one): sending it again would change nothing.
                tracing::trace!(
                    "status write skipped: the server normalised it to the stored status"
                );
                break;
            }
            let basis = if context.memory.is_superseded(&*object) {
                status::Basis::Replaced
            } else {
                status::Basis::Current
            };
            let observed_gone = || context.observed_gone(&object);
            let written =
                status::write(context.writer(&observed_gone), &*object, basis, &status).await;
            match written {
                Ok(status::Written::Stored {
                    resource_version,
                    stored,
                }) => {
                    tracing::debug!(?resource_version, "status stored");
                    if resource_version.is_some() && resource_version != object.resource_version() {
                        context.memory.wrote(&*object, |w| context.cached(w));
                    }
                    if let Some(stored) = &stored {
                        derived_status::check_stored::<R>(
                            &status,
                            stored,
                            &context.observed_generation_dropped,
                        );
                        // A write the server stored as something a repeat of it would not
                        // match is remembered, so that the repeat is not sent.
                        let normalised =
                            status::needs_write(stored, conditions, fields).then(|| Normalised {
                                sent,
                                stored: status::fingerprint(&stored.to_json()),
                            });
                        context
                            .memory
                            .normalised(&*object, normalised, |w| context.cached(w));
                    }
                    events.extend(transition_events::<R>(&pass, conditions));
                    if let Ok(Next::Done {
                        resource_version: written,
                        ..
                    }) = &mut result
                    {
                        written.clone_from(&resource_version);
                    }
                    let Some(hop) = hop else { break };
                    // The next hop builds on this one: the stored status and version it wrote.
                    pass.hop_stored(hop, stored);
                    let mut at_hop = R::Resource::clone(&object);
                    at_hop.meta_mut().resource_version = resource_version;
                    object = Arc::new(at_hop);
                    derived_status::derive::<R>(&mut pass, &result, retries);
                }
                Ok(status::Written::Conflict) => {
                    // Someone changed the object since this pass read it: nothing was stored, so
                    // nothing is published; the object is retried with its backoff. So is a
                    // terminal failure: it holds the object only once its status is stored.
                    tracing::debug!("status write conflicted; retrying with backoff");
                    if result
                        .as_ref()
                        .map_or_else(PassError::is_terminal, |_| true)
                    {
                        result = Ok(Next::Conflict { write: "status" });
                    }
                    break;
                }
                Err(kube::Error::Api(status))
                    if status.code == 404 && context.observed_gone(&object) =>
                {
                    // The object was deleted while the pass ran: there is nothing to report
                    // about it, neither the status nor a failure.
                    tracing::debug!("the object is gone; its status is not written");
                    gone = true;
                    break;
                }
                Err(error) => {
                    if basis == status::Basis::Current && super::in_doubt::in_doubt(&error) {
                        // It may have committed (its read-back failed too): the next pass
                        // finds out, and publishes its transitions if it did.
                        let unresolved = Unresolved {
                            status: status.clone(),
                            events: transition_events::<R>(&pass, conditions),
                        };
                        context
                            .memory
                            .unresolved(&*object, unresolved, |w| context.cached(w));
                    }
                    // A terminal failure whose status did not persist is retried, not held.
                    if result
                        .as_ref()
                        .map_or_else(PassError::is_terminal, |_| true)
                    {
                        result = Err(PassError::Status(error));
                    } else {
                        tracing::warn!(error = %super::ErrorChain(&error), "status write failed too");
                    }
                    break;
                }
            }
        }
    }
    let outcome = match &result {
        Ok(next) => outcome_of(&context, next, &pass, object.meta().uid.as_deref()),
        Err(error) => {
            if !gone {
                events.extend(failure_event(&context.reconciler, error, pass.phase()));
            }
            Outcome::Failed
        }
    };
    if context.follow_up_transitions && pass.phase() == Phase::Apply && !events.is_empty() {
        follow_up(&mut result);
    }
    if !events.is_empty() {
        publish(&context, events, &object.object_ref(&())).await;
    }
    PassEnd {
        result,
        outcome,
        skip_reason: pass.skip_reason().map(str::to_owned),
    }
}

/// The transition events of `object`'s last status write if it was stored after all: a write
/// whose answer and read-back were lost ([`Unresolved`]) is read back again now, before this
/// pass writes. Stored: its events (this pass finds the transitions stored, and has none of its
/// own for them). Not stored: none (this pass writes the status again and publishes its own).
/// Still unknown: kept for the next pass.
async fn resolve_unresolved<R: Reconciler>(
    context: &Context<R>,
    object: &Arc<R::Resource>,
) -> Vec<Event> {
    let Some(unresolved) = context.memory.take_unresolved(&**object) else {
        return Vec::new();
    };
    let observed_gone = || context.observed_gone(object);
    let writer = context.writer(&observed_gone);
    match status::read_back(writer, &**object, &unresolved.status).await {
        Ok(Some(_)) => {
            tracing::debug!(
                "an earlier status write in doubt was stored: publishing its transitions"
            );
            unresolved.events
        }
        Ok(None) => {
            tracing::debug!("an earlier status write in doubt was not stored");
            Vec::new()
        }
        Err(error) => {
            tracing::debug!(error = %super::ErrorChain(&error), "an earlier status write in doubt still cannot be read back");
            context
                .memory
                .unresolved(&**object, unresolved, |w| context.cached(w));
            Vec::new()
        }
    }
}

/// The finalizer patch of an `init` or `delete` pass.
enum FinalizerPatch {
    /// Add the finalizer (the `init` pass).
    Add,
    /// Remove it (the `delete` pass), building on the resourceVersion of cleanup's status write
    /// if it made one.
    Remove { resource_version: Option<String> },
}

/// The `init` pass (add the finalizer) or the `delete` pass (remove it).
async fn run_finalizer_pass<R: Reconciler>(
    context: &Context<R>,
    object: &Arc<R::Resource>,
    finalizer_name: &'static str,
    patch: FinalizerPatch,
    triggers: &[Trigger],
) -> Result<Next, PassError<R::Error>> {
    let phase = match patch {
        FinalizerPatch::Add => Phase::Init,
        FinalizerPatch::Remove { .. } => Phase::Delete,
    };
    let reference = Arc::new(ObjectRef::from_resource(&**object));
    let guard = PassGuard::start(
        context.name.clone(),
        reference.clone(),
        phase,
        context.observers.clone(),
    );
    let span = pass_span(&context.name, &reference, phase, &guard, triggers);
    let observed_gone = || context.observed_gone(object);
    let (action, patched) = match &patch {
        FinalizerPatch::Add => (
            "add",
            finalizer::add(context.writer(&observed_gone), &**object, finalizer_name)
                .instrument(span.clone())
                .await,
        ),
        FinalizerPatch::Remove { resource_version } => (
            "remove",
            finalizer::remove(
                context.writer(&observed_gone),
                &**object,
                resource_version.as_deref(),
                finalizer_name,
            )
            .instrument(span.clone())
            .await,
        ),
    };
    let regarding = object.object_ref(&());
    span.in_scope(|| match &patched {
        Ok(patched) => tracing::debug!(?patched, "finalizer {action}"),
        Err(error) => {
            tracing::debug!(error = %super::ErrorChain(error), "finalizer {action} failed")
        }
    });
    match patched {
        Ok(finalizer::Patched::Stored | finalizer::Patched::Gone) => {
            guard.finish(Outcome::Completed);
            if phase == Phase::Delete {
                // Cleanup is done for good: neither a stale cache entry nor a retry runs it again.
                context.memory.finalized(&**object, |w| context.cached(w));
                if let (Some(recorder), Some(uid)) = (&context.recorder, &regarding.uid) {
                    recorder.forget(uid);
                }
            }
            Ok(Next::Done {
                action: Action::await_change(),
                finished: true,
                resource_version: None,
            })
        }
        Ok(finalizer::Patched::Stale) => {
            guard.finish(Outcome::Waiting);
            Ok(Next::Conflict { write: "finalizer" })
        }
        Err(source) => {
            let error = PassError::Finalizer {
                action,
                finalizer: finalizer_name,
                source,
            };
            let events = failure_event(&context.reconciler, &error, phase);
            publish(context, events.into_iter().collect(), &regarding).await;
            guard.fail(error.failure_reason());
            Err(error)
        }
    }
}
