//! The reconciler's hooks the runtime calls outside a pass, each panic-safe: a panic in a hook
//! (a reconciler bug) is logged at error and the hook's default is used instead, so that one
//! object's bug never stops the controller, its events or its metrics.

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use super::Reconciler;
use super::backoff::backoff_delay;
use super::failure::{PassError, default_failure_event};
use crate::events::Event;
use crate::observe::Phase;

/// Calls `hook`; on a panic logs `what` and returns `fallback()`.
fn or_default<T>(hook: impl FnOnce() -> T, what: &str, fallback: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(AssertUnwindSafe(hook)).unwrap_or_else(|_| {
        tracing::error!("{what}");
        fallback()
    })
}

/// The failure event of a pass in `phase` that failed with `error`, as the reconciler's
/// [`failure_event`](Reconciler::failure_event) words it (or `None` if it suppresses it); the
/// default event if the hook panics.
pub(super) fn failure_event<R: Reconciler>(
    reconciler: &R,
    error: &PassError<R::Error>,
    phase: Phase,
) -> Option<Event> {
    or_default(
        || reconciler.failure_event(error, phase),
        "failure_event panicked; publishing the default failure event",
        || Some(default_failure_event(error, phase)),
    )
    .map(Event::as_failure)
}

/// How long to wait before the `attempt`th retry after `error`, as the reconciler's
/// [`error_backoff`](Reconciler::error_backoff) says; the default backoff if the hook panics.
pub(super) fn error_backoff<R: Reconciler>(
    reconciler: &R,
    error: &PassError<R::Error>,
    attempt: u32,
) -> Duration {
    or_default(
        || reconciler.error_backoff(error, attempt),
        "error_backoff panicked; using the default backoff",
        || backoff_delay(attempt),
    )
}

/// Whether `object` is suspended, as the reconciler's [`is_suspended`](Reconciler::is_suspended)
/// says at scrape time; not suspended if the hook panics, so that the scrape — every other
/// series of the process — still succeeds.
#[cfg(feature = "prometheus")]
pub(super) fn is_suspended<R: Reconciler>(object: &R::Resource) -> bool {
    std::panic::catch_unwind(AssertUnwindSafe(|| R::is_suspended(object))).unwrap_or_else(|_| {
        tracing::error!(
            object = %crate::observe::ObjectRef::from_resource(object),
            "is_suspended panicked; exporting the object as not suspended"
        );
        false
    })
}
