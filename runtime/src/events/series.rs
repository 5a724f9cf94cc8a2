//! One event series: its identity ([`SeriesKey`]) and what the recorder knows about the event that
//! stores it on the server ([`SeriesState`]).

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use jiff::Timestamp;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events::EventType;

use super::event::{Event, EventKind};
use crate::limits::{EVENT_NOTE_MAX_BYTES, truncated_with_ellipsis};

/// The fields of an object reference that identify the object. `resourceVersion` is left out: it
/// changes with every write to the object, and a series must survive those.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct RefKey {
    api_version: Option<String>,
    kind: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    pub(crate) uid: Option<String>,
    field_path: Option<String>,
}

impl RefKey {
    fn of(reference: &ObjectReference) -> Self {
        Self {
            api_version: reference.api_version.clone(),
            kind: reference.kind.clone(),
            namespace: reference.namespace.clone(),
            name: reference.name.clone(),
            uid: reference.uid.clone(),
            field_path: reference.field_path.clone(),
        }
    }
}

/// What makes two publishes the same occurrence repeated: everything an event shows, after
/// truncation. The note is part of it, so a changed note starts a new event instead of being
/// hidden under the first one's count (kube-runtime's `Recorder` leaves it out and pins the first
/// note). The reporter is the recorder's own, the same for every key of one recorder.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SeriesKey {
    pub(crate) kind: EventKind,
    pub(crate) type_: EventType,
    pub(crate) reason: Cow<'static, str>,
    pub(crate) action: Cow<'static, str>,
    /// The note as stored: cut to 1 KiB.
    pub(crate) note: Option<String>,
    pub(crate) regarding: RefKey,
    pub(crate) related: Option<RefKey>,
}

impl SeriesKey {
    /// The key of `event` about `regarding` (reason and action already validated).
    pub(crate) fn new(event: &Event, regarding: &ObjectReference) -> Self {
        Self {
            kind: event.kind,
            type_: event.type_,
            reason: event.reason.clone(),
            action: event.action.clone(),
            note: event
                .note
                .as_deref()
                .map(|note| truncated_with_ellipsis(note, EVENT_NOTE_MAX_BYTES).into_owned()),
            regarding: RefKey::of(regarding),
            related: event.related.as_ref().map(RefKey::of),
        }
    }

    /// The UID of the object the series is about.
    pub(crate) fn uid(&self) -> Option<&str> {
        self.regarding.uid.as_deref()
    }
}

/// Whether the series' event exists on the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stored {
    /// Not created yet, or expired by the server (PATCH 404).
    No,
    /// A create under the current name was sent and its answer never arrived (the publish timed
    /// out). The next write sends the same create again: `201` means the first never landed,
    /// `409 AlreadyExists` means it did, and the count is patched onto it. Either way no extra
    /// event and no lost count.
    InDoubt,
    /// Created under the current name.
    Yes,
}

/// What the recorder knows about one series, guarded by the series' async lock.
#[derive(Debug)]
pub(crate) struct SeriesState {
    /// The event's `metadata.name`, fixed before its create is sent.
    pub(crate) name: String,
    pub(crate) stored: Stored,
    /// The event is being created again after the server expired it.
    pub(crate) recreating: bool,
    /// Occurrences observed (the value of `series.count`, which counts the first one too).
    pub(crate) count: i32,
    /// The count the server holds.
    pub(crate) written: i32,
    /// The event's `eventTime`: the first occurrence.
    pub(crate) first_observed: Timestamp,
    /// `series.lastObservedTime`.
    pub(crate) last_observed: Timestamp,
    /// When the server last accepted a write of this series.
    pub(crate) last_write: Option<Timestamp>,
}

impl SeriesState {
    pub(crate) fn new(name: String, now: Timestamp) -> Self {
        Self {
            name,
            stored: Stored::No,
            recreating: false,
            count: 0,
            written: 0,
            first_observed: now,
            last_observed: now,
            last_write: None,
        }
    }

    /// Whether the server lacks something the recorder has counted.
    pub(crate) fn needs_write(&self) -> bool {
        match self.stored {
            Stored::Yes => self.count > self.written,
            Stored::No | Stored::InDoubt => self.count > 0,
        }
    }

    /// Whether a write is needed and allowed at `now`: a series whose event exists is written at
    /// most once per `interval`; a missing event is created at once.
    pub(crate) fn write_due(&self, now: Timestamp, interval: Duration) -> bool {
        self.needs_write()
            && (self.stored != Stored::Yes
                || self
                    .last_write
                    .is_none_or(|last| elapsed(last, now) >= interval))
    }
}

/// Time from `earlier` to `later`, zero if the clock went backwards.
pub(crate) fn elapsed(earlier: Timestamp, later: Timestamp) -> Duration {
    Duration::try_from(later.duration_since(earlier)).unwrap_or(Duration::ZERO)
}

/// One series: its identity, the object it is about, and its state behind an async lock that is
/// held across the API request, so publishes to one series are serialized (exact counts) while
/// different series proceed in parallel.
#[derive(Debug)]
pub(crate) struct Series {
    pub(crate) key: Arc<SeriesKey>,
    /// Where the event lives: the regarding object's namespace, `default` for cluster-scoped ones.
    pub(crate) namespace: String,
    /// The regarding object as given by the first publish (with its `resourceVersion`).
    pub(crate) regarding: ObjectReference,
    pub(crate) related: Option<ObjectReference>,
    /// Mirrors [`SeriesState::needs_write`] so sweeps find work without taking every lock. Set
    /// before a write is attempted and cleared only after it succeeded, so a publish dropped
    /// mid-request leaves it set.
    dirty: AtomicBool,
    /// Set (under the lock) once the series left the recorder for good: a publish that was
    /// waiting for its lock must look the series up again instead of counting into it.
    retired: AtomicBool,
    pub(crate) state: tokio::sync::Mutex<SeriesState>,
}

impl Series {
    pub(crate) fn new(
        key: Arc<SeriesKey>,
        regarding: &ObjectReference,
        related: Option<&ObjectReference>,
        now: Timestamp,
    ) -> Self {
        let namespace = regarding
            .namespace
            .clone()
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "default".to_owned());
        let name = super::naming::event_name(regarding.name.as_deref());
        Self {
            key,
            namespace,
            regarding: regarding.clone(),
            related: related.cloned(),
            dirty: AtomicBool::new(false),
            retired: AtomicBool::new(false),
            state: tokio::sync::Mutex::new(SeriesState::new(name, now)),
        }
    }

    pub(crate) fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::Acquire)
    }

    pub(crate) fn set_dirty(&self, dirty: bool) {
        self.dirty.store(dirty, Ordering::Release);
    }

    pub(crate) fn is_retired(&self) -> bool {
        self.retired.load(Ordering::Acquire)
    }

    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(uid: &str, resource_version: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("demo.kubeward.dev/v1".into()),
            kind: Some("Rollout".into()),
            namespace: Some("demo".into()),
            name: Some("web".into()),
            uid: Some(uid.into()),
            resource_version: Some(resource_version.into()),
            field_path: None,
        }
    }

    #[test]
    fn identical_repeats_share_a_key_across_resource_versions() {
        let event = Event::warning("FailedDeploy", "Deploy").with_note("image pull failed");
        assert_eq!(
            SeriesKey::new(&event, &object("u1", "10")),
            SeriesKey::new(&event, &object("u1", "11"))
        );
    }

    #[test]
    fn any_difference_including_the_note_is_a_new_series() {
        let base = Event::warning("FailedDeploy", "Deploy").with_note("image pull failed");
        let key = SeriesKey::new(&base, &object("u1", "1"));
        let variants = [
            base.clone().with_note("invalid license key"),
            Event {
                note: None,
                ..base.clone()
            },
            Event::normal("FailedDeploy", "Deploy").with_note("image pull failed"),
            Event::warning("RolloutTimeout", "Deploy").with_note("image pull failed"),
            Event::warning("FailedDeploy", "Rollout").with_note("image pull failed"),
            base.clone().as_failure(),
            base.clone().with_related(object("u2", "1")),
        ];
        for variant in variants {
            assert_ne!(
                key,
                SeriesKey::new(&variant, &object("u1", "1")),
                "{variant:?}"
            );
        }
        assert_ne!(key, SeriesKey::new(&base, &object("u3", "1")));
    }

    #[test]
    fn notes_that_differ_only_past_the_limit_share_a_series() {
        let long = "é".repeat(600);
        let a = Event::normal("R", "A").with_note(format!("{long}a"));
        let b = Event::normal("R", "A").with_note(format!("{long}b"));
        let key = SeriesKey::new(&a, &object("u", "1"));
        assert_eq!(key, SeriesKey::new(&b, &object("u", "1")));
        let note = key.note.unwrap();
        assert!(note.len() <= EVENT_NOTE_MAX_BYTES);
        assert!(note.ends_with('…'));
    }

    #[test]
    fn write_is_due_at_most_once_per_interval() {
        let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let minute = Duration::from_secs(60);
        let mut state = SeriesState::new("e".into(), t0);
        assert!(!state.write_due(t0, minute), "nothing counted yet");
        state.count = 1;
        assert!(
            state.write_due(t0, minute),
            "a new event is created at once"
        );
        state.stored = Stored::Yes;
        state.written = 1;
        state.last_write = Some(t0);
        state.count = 2;
        assert!(!state.write_due(t0 + Duration::from_secs(59), minute));
        assert!(state.write_due(t0 + minute, minute));
        state.written = 2;
        assert!(
            !state.write_due(t0 + minute * 2, minute),
            "nothing new to write"
        );
    }
}
