//! An events.k8s.io/v1 event recorder for one controller, that never pins a note, never loses a
//! count and never hangs a controller.
//!
//! [`EventRecorder::publish`] publishes an [`Event`] about an object. What it guarantees, and
//! where it differs from kube-runtime's `Recorder`:
//!
//! - **Series.** Identical repeats — same type, reason, action, related object, note (after
//!   truncation), regarding object (by UID) and reporter — aggregate into one event's
//!   `series.count`. Any difference, including the note, starts a new event: `kubectl describe`
//!   never shows a stale note under a current count (kube-runtime leaves the note out of its key and
//!   keeps the first note for as long as the object keeps failing).
//! - **Exact counts under concurrency.** Publishes to one series are serialized by a per-series
//!   async lock held across the API request; different series proceed in parallel.
//! - **Write economy.** The first occurrence creates the event. Repeats are counted in memory and
//!   written (a merge patch of `series` only) at most once per series per flush interval (default
//!   60 s): by the repeat that arrives after the interval, by a background sweep for a series that
//!   stopped repeating, on eviction, and by [`EventRecorder::flush`] at shutdown. 1,000 identical
//!   failures cost a handful of writes, not 1,000, and the stored count is exact after a flush.
//! - **Expiry.** A series whose event the server has expired (PATCH 404) is created again, carrying
//!   the whole count so far.
//! - **Bounded time.** Every publish gives up after a timeout (default 5 s) that covers waiting
//!   for the series lock as well as the request, returning [`PublishError::Timeout`], so a hung
//!   events API never holds up a pass's requeue. See [`EventRecorder::publish`] for what a timeout
//!   leaves behind (nothing lost, nothing duplicated, except a publish that never got the lock).
//! - **Bounded memory.** Series idle for 10 minutes (longer than the longest retry backoff) are
//!   evicted (their count written first);
//!   at most 10,000 live series (configurable), least recently used evicted first.
//! - **Valid names.** Reason and action are checked before a request is sent; notes over 1 KiB are
//!   cut at a char boundary; event names are `<regarding name>.<16 random hex digits>`, repaired
//!   into a DNS subdomain, so two recorders publishing about one object in the same nanosecond do
//!   not collide. Events about cluster-scoped objects go to the `default` namespace.
//!
//! # One recorder per controller
//!
//! A recorder's [`Reporter`] names the controller in every event it publishes, and
//! [`EventRecorder::forget_failures`] — called when a pass succeeds — resets the failure series of
//! that object *in this recorder*. Shared between two controllers, events would name the wrong
//! controller, and one controller's success would reset the other's failure series. Clones of a
//! recorder share its series: clone it freely within one controller.
//!
//! # RBAC
//!
//! ```yaml
//! - apiGroups: ["events.k8s.io"]
//!   resources: ["events"]
//!   verbs: ["get", "create", "patch"]   # get: an in-doubt create or patch is read back
//! ```
//!
//! # Example
//!
//! ```no_run
//! # async fn run(client: kube::Client, object: k8s_openapi::api::core::v1::ObjectReference)
//! # -> Result<(), Box<dyn std::error::Error>> {
//! use kubeward::events::{Event, EventRecorder, Reporter};
//!
//! let recorder = EventRecorder::new(client, Reporter::for_controller("demo.kubeward.dev/rollouts")?);
//! recorder
//!     .publish(&Event::normal("Promoted", "Promote").with_note("generation 4 is live"), &object)
//!     .await?;
//! // At shutdown, write the counts still held in memory.
//! recorder.flush().await?;
//! # Ok(()) }
//! ```

mod cache;
mod event;
mod naming;
mod recorder;
mod reporter;
mod series;

use std::time::Duration;

pub use event::{Event, EventKind};
pub use kube::runtime::events::EventType;
pub use recorder::{
    DEFAULT_FLUSH_INTERVAL, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SERIES, DEFAULT_TIMEOUT,
    EventRecorder,
};
pub use reporter::{InvalidReporter, Reporter};

use crate::names::InvalidName;

/// Why an event was not published.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The event's reason or action is empty or longer than 128 bytes; nothing was sent.
    #[error("event not published: {0}")]
    InvalidEvent(#[from] InvalidName),
    /// The regarding object lacks a field `kubectl describe` finds its events by (kind, name,
    /// uid — an object the API server has stored always has them); nothing was sent, since an
    /// event nobody can find is as good as lost.
    #[error(
        "event not published: the regarding object has no {missing}; publish events about stored objects"
    )]
    InvalidRegarding {
        /// The missing field: `kind`, `name` or `uid`.
        missing: &'static str,
    },
    /// The API server refused the write or could not be reached (a `403` usually means the
    /// controller lacks `create`/`patch` on `events.k8s.io/events`). This occurrence is not
    /// counted; earlier counts of the series are kept and written by its next write.
    #[error("event not published: the events API failed: {0}")]
    Api(#[source] kube::Error),
    /// The publish gave up after the recorder's timeout (waiting for the series lock or for the
    /// API server). See [`EventRecorder::publish`] for what was counted.
    #[error(
        "event not published within {after:?}: the events API is slow or hung (the recorder recovers on its own)"
    )]
    Timeout {
        /// The recorder's timeout.
        after: Duration,
    },
}
