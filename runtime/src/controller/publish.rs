//! The effects of a pass on the events API: one transition event per condition whose status or
//! reason the stored write changed, and the failure event of a failed pass.

use kube::runtime::events::EventType;

use super::context::Context;
use super::failure::PassError;
use super::{Reconciler, status};
use crate::Pass;
use crate::conditions::ConditionStatus;
use crate::events::Event;
use crate::observe::Phase;
use crate::vocabulary::default_event_type;

/// One event per condition whose (status, reason) the stored write changed.
pub(super) async fn publish_transitions<R: Reconciler>(
    context: &Context<R>,
    pass: &Pass<R::Resource>,
    regarding: &k8s_openapi::api::core::v1::ObjectReference,
) {
    let Some(recorder) = &context.recorder else {
        return;
    };
    for condition in status::transitions(pass.stored_conditions(), pass.conditions()) {
        let event_type = pass
            .declared_event_type(&condition.type_, &condition.reason)
            .unwrap_or_else(|| {
                transition_event_type::<R>(&condition.type_, &condition.reason, &condition.status)
            });
        let mut event = Event::new(
            event_type,
            condition.reason.clone(),
            phase_action(pass.phase()),
        );
        if !condition.message.is_empty() {
            event = event.with_note(condition.message.clone());
        }
        if let Err(error) = recorder.publish(&event, regarding).await {
            tracing::warn!(%error, reason = %condition.reason, "could not publish transition event");
        }
    }
}

/// The event type of a transition into `reason` that its `set` did not declare (a typed
/// transition always does): as `R::CONDITIONS` declares the reason, else False → Warning and
/// True/Unknown → Normal.
fn transition_event_type<R: Reconciler>(type_: &str, reason: &str, status: &str) -> EventType {
    let status = status.parse().unwrap_or(ConditionStatus::Unknown);
    R::CONDITIONS.iter().find(|v| v.type_ == type_).map_or_else(
        || default_event_type(status),
        |v| v.event_type_or(reason, status),
    )
}

/// The `action` of the events a pass in `phase` publishes.
fn phase_action(phase: Phase) -> &'static str {
    match phase {
        Phase::Init | Phase::Apply => "Reconcile",
        Phase::Cleanup | Phase::Delete => "Cleanup",
    }
}

pub(super) async fn publish_failure<R: Reconciler>(
    context: &Context<R>,
    error: &PassError<R::Error>,
    phase: Phase,
    regarding: &k8s_openapi::api::core::v1::ObjectReference,
) {
    let Some(recorder) = &context.recorder else {
        return;
    };
    let Some(event) = context.reconciler.failure_event(error, phase) else {
        return;
    };
    if let Err(publish_error) = recorder.publish(&event.as_failure(), regarding).await {
        tracing::warn!(error = %publish_error, "could not publish failure event");
    }
}
