//! The effects of a pass on the events API: one transition event per condition whose status or
//! reason the stored write changed, and the failure event of a failed pass.
//!
//! A pass publishes all its events together ([`publish`]): each publish is bounded by the
//! recorder's timeout and they run concurrently (each to its own series), so a hung events API
//! delays the pass's requeue by one timeout, not one per event.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::EventType;

use super::Reconciler;
use super::context::Context;
use super::status;
use crate::Pass;
use crate::conditions::ConditionStatus;
use crate::events::Event;
use crate::observe::Phase;
use crate::vocabulary::default_event_type;

/// One event per condition whose (status, reason) the pass's stored write of `written` changed.
pub(super) fn transition_events<R: Reconciler>(
    pass: &Pass<R::Resource>,
    written: &[crate::conditions::Condition],
) -> Vec<Event> {
    // The derived kstatus conditions restate the declared ones' transitions: no events of
    // their own.
    let derived = crate::kstatus::derived_types(R::KSTATUS.as_ref(), R::CONDITIONS);
    status::transitions(pass.stored_status(), written)
        .into_iter()
        .filter(|condition| !derived.contains(&condition.type_.as_str()))
        .map(|condition| {
            let event_type = pass
                .declared_event_type(&condition.type_, &condition.reason)
                .unwrap_or_else(|| {
                    transition_event_type::<R>(
                        &condition.type_,
                        &condition.reason,
                        &condition.status,
                    )
                });
            let event = Event::new(
                event_type,
                condition.reason.clone(),
                phase_action(pass.phase()),
            );
            if condition.message.is_empty() {
                event
            } else {
                event.with_note(condition.message.clone())
            }
        })
        .collect()
}

/// Publishes a pass's `events` about `regarding`, concurrently: the whole is bounded by the
/// recorder's timeout. Failures are logged; they never fail the pass.
pub(super) async fn publish<R: Reconciler>(
    context: &Context<R>,
    events: Vec<Event>,
    regarding: &ObjectReference,
) {
    let Some(recorder) = &context.recorder else {
        return;
    };
    let publishes = events.iter().map(|event| async move {
        match recorder.publish(event, regarding).await {
            Ok(()) => {
                tracing::debug!(reason = %event.reason, note = ?event.note, "event published")
            }
            Err(error) => tracing::warn!(%error, reason = %event.reason, "could not publish event"),
        }
    });
    futures::future::join_all(publishes).await;
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
