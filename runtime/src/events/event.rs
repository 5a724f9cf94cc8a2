//! What a controller publishes: [`Event`] and its [`EventKind`].

use std::borrow::Cow;

use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::EventType;

/// Who an event series belongs to, which decides whether
/// [`EventRecorder::forget_failures`](super::EventRecorder::forget_failures) resets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EventKind {
    /// Published by the reconciler or by any other code on the controller's behalf. Never reset by
    /// a successful pass: a reconciler that publishes the same event on every pass while it waits
    /// keeps counting into one event instead of creating one per pass.
    #[default]
    Regular,
    /// The automatic event of a failed pass. A successful pass resets these series for its object
    /// ([`forget_failures`](super::EventRecorder::forget_failures)), so a failure that recurs after
    /// a recovery is a new event rather than a higher count on the old one.
    Failure,
}

/// One occurrence to publish about an object (the object itself is `regarding`, passed to
/// [`EventRecorder::publish`](super::EventRecorder::publish)).
///
/// `kubectl describe` shows `type_` as Type, `reason` as Reason and `note` as Message.
///
/// ```
/// use kubeward::events::{Event, EventKind, EventType};
///
/// let event = Event::warning("FailedDeploy", "Deploy").with_note("image pull failed").as_failure();
/// assert_eq!(event.type_, EventType::Warning);
/// assert_eq!(event.kind, EventKind::Failure);
/// assert_eq!(event.note.as_deref(), Some("image pull failed"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Normal or Warning.
    pub type_: EventType,
    /// Why the action was taken, in `PascalCase`: non-empty, at most 128 bytes
    /// ([`EVENT_REASON_MAX_BYTES`](crate::limits::EVENT_REASON_MAX_BYTES)).
    pub reason: Cow<'static, str>,
    /// What was done (or failed), in `PascalCase`: non-empty, at most 128 bytes
    /// ([`EVENT_ACTION_MAX_BYTES`](crate::limits::EVENT_ACTION_MAX_BYTES)).
    pub action: Cow<'static, str>,
    /// A human-readable description. Longer than 1 KiB
    /// ([`EVENT_NOTE_MAX_BYTES`](crate::limits::EVENT_NOTE_MAX_BYTES)) it is cut at a char boundary
    /// and ends in `…`.
    pub note: Option<String>,
    /// A second object the event concerns (for example the ReplicaSet of a Deployment).
    pub related: Option<ObjectReference>,
    /// Whether this is a failure event (reset by a successful pass) or a regular one.
    pub kind: EventKind,
}

impl Event {
    /// A regular event of type `type_`, with no note and no related object.
    pub fn new(
        type_: EventType,
        reason: impl Into<Cow<'static, str>>,
        action: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            type_,
            reason: reason.into(),
            action: action.into(),
            note: None,
            related: None,
            kind: EventKind::Regular,
        }
    }

    /// A regular Normal event.
    pub fn normal(
        reason: impl Into<Cow<'static, str>>,
        action: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(EventType::Normal, reason, action)
    }

    /// A regular Warning event.
    pub fn warning(
        reason: impl Into<Cow<'static, str>>,
        action: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(EventType::Warning, reason, action)
    }

    /// This event with `note`.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    /// This event with a related object.
    #[must_use]
    pub fn with_related(mut self, related: ObjectReference) -> Self {
        self.related = Some(related);
        self
    }

    /// This event marked as the failure event of a pass ([`EventKind::Failure`]).
    #[must_use]
    pub fn as_failure(mut self) -> Self {
        self.kind = EventKind::Failure;
        self
    }
}
