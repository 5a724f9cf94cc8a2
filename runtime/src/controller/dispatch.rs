//! Dispatch: what kube-runtime calls for an object. Decides the phase (init, apply, cleanup,
//! delete), runs the pass inside a [`PassGuard`], writes the status and keeps the backoff state.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::controller::Action;
use kube::{Resource, ResourceExt};
use tracing::Instrument;

use super::context::Context;
use super::failure::PassError;
use super::publish::{publish_failure, publish_transitions};
use super::{Reconciler, finalizer, status};
use crate::Pass;
use crate::observe::{ObjectRef, Outcome, PassGuard, Phase};

/// How soon an object whose status write or finalizer patch met a conflict is retried.
pub const CONFLICT_REQUEUE: Duration = Duration::from_millis(200);

fn object_key<K: Resource>(object: &K) -> (Option<String>, String) {
    (object.namespace(), object.name_any())
}

pub(super) fn error_policy<R: Reconciler>(
    object: Arc<R::Resource>,
    error: &PassError<R::Error>,
    context: Arc<Context<R>>,
) -> Action {
    let attempt = {
        let mut failures = context.failures.lock().unwrap_or_else(|p| p.into_inner());
        let attempt = failures.entry(object_key(&*object)).or_insert(0);
        *attempt = attempt.saturating_add(1);
        *attempt
    };
    Action::requeue(context.reconciler.error_backoff(error, attempt))
}

/// One call from kube-runtime: decides the phase, runs the pass(es), and acts on the result.
pub(super) async fn reconcile<R: Reconciler>(
    object: Arc<R::Resource>,
    context: Arc<Context<R>>,
) -> Result<Action, PassError<R::Error>> {
    let deleting = object.meta().deletion_timestamp.is_some();
    let result = match R::FINALIZER {
        Some(finalizer) if deleting => {
            if !finalizer::has(&*object, finalizer) {
                // Not ours (any more): nothing to clean up.
                return Ok(Action::await_change());
            }
            let action = run_pass(&context, &object, Phase::Cleanup).await?;
            if action.completed {
                run_finalizer_pass(&context, &object, Phase::Delete, finalizer).await
            } else {
                Ok(action.action)
            }
        }
        None if deleting => return Ok(Action::await_change()),
        Some(finalizer) if !finalizer::has(&*object, finalizer) => {
            run_finalizer_pass(&context, &object, Phase::Init, finalizer).await
        }
        _ => run_pass(&context, &object, Phase::Apply)
            .await
            .map(|a| a.action),
    };
    if result.is_ok() {
        let mut failures = context.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures.remove(&object_key(&*object));
    }
    result
}

/// What a pass returned to kube-runtime, and whether it counts as completed.
struct PassAction {
    action: Action,
    completed: bool,
}

/// An `apply` or `cleanup` pass: runs the reconciler, writes the status, publishes events.
async fn run_pass<R: Reconciler>(
    context: &Context<R>,
    object: &Arc<R::Resource>,
    phase: Phase,
) -> Result<PassAction, PassError<R::Error>> {
    let reference = Arc::new(ObjectRef::from_resource(&**object));
    let span =
        tracing::info_span!("reconcile", controller = %context.name, object = %reference, %phase);
    let guard = PassGuard::start(
        context.name.clone(),
        reference.clone(),
        phase,
        context.observers.clone(),
    );
    let (result, skip_reason) = guard
        .run(pass_body(context, object, reference, phase))
        .instrument(span.clone())
        .await;
    let outcome = match &result {
        Ok((action, outcome)) => Outcome::of_pass::<()>(&Ok(action.clone()), *outcome),
        Err(_) => Outcome::Failed,
    };
    let _entered = span.enter();
    match &result {
        Ok(_) => tracing::debug!(%outcome, skip_reason, "pass finished"),
        Err(error) => tracing::warn!(error = %super::ErrorChain(error), "pass failed"),
    }
    guard.finish(outcome);
    result.map(|(action, _)| PassAction {
        action,
        completed: outcome == Outcome::Completed,
    })
}

type PassResult<E> = (
    Result<(Action, Option<Outcome>), PassError<E>>,
    Option<String>,
);

async fn pass_body<R: Reconciler>(
    context: &Context<R>,
    object: &Arc<R::Resource>,
    reference: Arc<ObjectRef>,
    phase: Phase,
) -> PassResult<R::Error> {
    let regarding = object.object_ref(&());
    let source = object.clone();
    let load = Box::new(move || status::status_of(&*source));
    let mut pass = Pass::with_lazy_status(reference, phase, object.meta().generation, load)
        .with_clock(&*context.clock);
    if let Some(recorder) = &context.recorder {
        pass = pass.with_events(recorder.clone(), regarding.clone());
    }
    let reconciled = match phase {
        Phase::Cleanup => context.reconciler.cleanup(object, &mut pass).await,
        _ => context.reconciler.apply(object, &mut pass).await,
    };
    // The status is written whatever the result: a reconciler that sets `FailedDeploy` and
    // returns the error wants both the condition and the failed pass.
    let mut result = reconciled.map_err(PassError::Reconcile);
    if pass.status_needs_write() {
        match status::write(
            &context.client,
            &**object,
            pass.conditions(),
            Some(pass.status_fields()),
        )
        .await
        {
            Ok(status::Written::Stored) => {
                publish_transitions::<R>(context, &pass, &regarding).await
            }
            Ok(status::Written::Conflict) => {
                // Someone changed the object since this pass read it: nothing was stored, so
                // nothing is published; the fresh object is reconciled again promptly.
                tracing::debug!("status write conflicted; requeueing");
                if result.is_ok() {
                    result = Ok(Action::requeue(CONFLICT_REQUEUE));
                    pass.set_outcome(Outcome::Waiting);
                }
            }
            Err(error) => {
                if result.is_ok() {
                    result = Err(PassError::Status(error));
                } else {
                    tracing::warn!(error = %super::ErrorChain(&error), "status write failed too");
                }
            }
        }
    }
    match &result {
        Ok(_) => {
            if let (Some(recorder), Some(uid)) = (&context.recorder, &regarding.uid) {
                recorder.forget_failures(uid);
            }
        }
        Err(error) => publish_failure(context, error, phase, &regarding).await,
    }
    let skip_reason = pass.skip_reason().map(str::to_owned);
    (
        result.map(|action| (action, pass.outcome_override())),
        skip_reason,
    )
}

/// The `init` pass (add the finalizer) or the `delete` pass (remove it).
async fn run_finalizer_pass<R: Reconciler>(
    context: &Context<R>,
    object: &Arc<R::Resource>,
    phase: Phase,
    finalizer_name: &'static str,
) -> Result<Action, PassError<R::Error>> {
    let reference = Arc::new(ObjectRef::from_resource(&**object));
    let span =
        tracing::info_span!("reconcile", controller = %context.name, object = %reference, %phase);
    let guard = PassGuard::start(
        context.name.clone(),
        reference,
        phase,
        context.observers.clone(),
    );
    let (action, patched) = match phase {
        Phase::Init => (
            "add",
            finalizer::add(&context.client, &**object, finalizer_name)
                .instrument(span.clone())
                .await,
        ),
        _ => (
            "remove",
            finalizer::remove(&context.client, &**object, finalizer_name)
                .instrument(span.clone())
                .await,
        ),
    };
    let regarding = object.object_ref(&());
    match patched {
        Ok(finalizer::Patched::Stored) => {
            guard.finish(Outcome::Completed);
            if phase == Phase::Delete
                && let (Some(recorder), Some(uid)) = (&context.recorder, &regarding.uid)
            {
                recorder.forget(uid);
            }
            Ok(Action::await_change())
        }
        Ok(finalizer::Patched::Stale) => {
            guard.finish(Outcome::Waiting);
            Ok(Action::requeue(CONFLICT_REQUEUE))
        }
        Err(source) => {
            let error = PassError::Finalizer {
                action,
                finalizer: finalizer_name,
                source,
            };
            publish_failure(context, &error, phase, &regarding).await;
            guard.finish(Outcome::Failed);
            Err(error)
        }
    }
}
