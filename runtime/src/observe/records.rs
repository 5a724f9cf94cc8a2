//! The records observers receive: a finished pass, a finished step, an event publish, and a
//! controller's declaration at start.

use std::sync::Arc;
use std::time::Duration;

use kube::runtime::events::EventType;

use super::{FailureReason, ObjectRef, Outcome, Phase, ReconcileId, StepName};

/// A pass that started (its [`PassRecord`] follows when it ends, also when it is abandoned).
#[derive(Debug, Clone)]
pub struct PassStarted {
    /// The controller's name.
    pub controller: Arc<str>,
    /// The object reconciled.
    pub object: Arc<ObjectRef>,
    /// The phase of the pass.
    pub phase: Phase,
    /// The pass's reconcile id.
    pub reconcile_id: ReconcileId,
}

/// An object whose change started a pass left the queue: its pass starts now.
#[derive(Debug, Clone)]
pub struct QueueRecord {
    /// The controller's name.
    pub controller: Arc<str>,
    /// How long since its change was seen (the first unanswered one).
    pub waited: std::time::Duration,
}

/// A finished pass.
#[derive(Debug, Clone)]
pub struct PassRecord {
    /// The controller's name (its metric label and events' `reportingController`).
    pub controller: Arc<str>,
    /// The object reconciled.
    pub object: Arc<ObjectRef>,
    /// The phase of the pass.
    pub phase: Phase,
    /// How the pass ended.
    pub outcome: Outcome,
    /// Why it failed, when `outcome` is [`Outcome::Failed`]; `None` otherwise.
    pub failure: Option<FailureReason>,
    /// Wall time from the start of the pass to its end (or to its abandonment).
    pub duration: Duration,
    /// The pass's reconcile id (also on its `reconcile` span): tells apart two passes over the
    /// same object in logs and traces.
    pub reconcile_id: ReconcileId,
}

/// A finished step of a pass.
#[derive(Debug, Clone)]
pub struct StepRecord {
    /// The controller's name.
    pub controller: Arc<str>,
    /// The object of the pass the step ran in.
    pub object: Arc<ObjectRef>,
    /// The phase of the pass the step ran in.
    pub phase: Phase,
    /// The step.
    pub step: StepName,
    /// [`Completed`](Outcome::Completed), [`Failed`](Outcome::Failed) (it returned `Err` or
    /// panicked) or [`Abandoned`](Outcome::Abandoned) (its future was dropped).
    pub outcome: Outcome,
    /// Wall time the step took.
    pub duration: Duration,
}

/// What became of one event publish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PublishResult {
    /// A new event was created on the server.
    Created,
    /// A repeat was counted into an existing series locally (no API write yet).
    Aggregated,
    /// A series' local count was written to the server.
    Flushed,
    /// A series whose event the server had expired was created anew, its count carried over.
    Recreated,
    /// The API server refused the write or could not be reached.
    Failed,
    /// The publish gave up after the recorder's timeout.
    TimedOut,
}

impl PublishResult {
    /// Every result.
    pub const ALL: [PublishResult; 6] = [
        PublishResult::Created,
        PublishResult::Aggregated,
        PublishResult::Flushed,
        PublishResult::Recreated,
        PublishResult::Failed,
        PublishResult::TimedOut,
    ];

    /// The result as a metric label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            PublishResult::Created => "created",
            PublishResult::Aggregated => "aggregated",
            PublishResult::Flushed => "flushed",
            PublishResult::Recreated => "recreated",
            PublishResult::Failed => "failed",
            PublishResult::TimedOut => "timed_out",
        }
    }
}

/// One event publish (or series flush) by a controller's event recorder.
#[derive(Debug, Clone)]
pub struct PublishRecord {
    /// The controller's name (the recorder's `reportingController`).
    pub controller: Arc<str>,
    /// Normal or Warning.
    pub event_type: EventType,
    /// What became of it.
    pub result: PublishResult,
}

/// What a controller declares about itself when it starts, so observers can prepare (the
/// Prometheus collector initialises every label combination to zero).
#[derive(Debug, Clone)]
pub struct ControllerInfo {
    /// The controller's name.
    pub name: Arc<str>,
    /// The steps it declares.
    pub steps: Vec<StepName>,
    /// The kinds of the children it owns ([`relations`](crate::relations)).
    pub owns: Vec<Arc<str>>,
}

/// A write of a child by a pass ([`Pass::apply_child`](crate::Pass::apply_child),
/// [`delete_child`](crate::Pass::delete_child), each delete of
/// [`prune_children`](crate::Pass::prune_children)).
#[derive(Debug, Clone)]
pub struct ChildWriteRecord {
    /// The controller's name.
    pub controller: Arc<str>,
    /// The child's kind (`ConfigMap`).
    pub kind: Arc<str>,
    /// What the pass did.
    pub operation: ChildOperation,
    /// Whether the API server took it (a delete of a child already gone counts as done).
    pub succeeded: bool,
}

/// What a pass did to a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildOperation {
    /// Server-side applied it.
    Apply,
    /// Deleted it by name.
    Delete,
    /// Deleted it as no longer wanted.
    Prune,
}

impl ChildOperation {
    /// Every operation.
    pub const ALL: [ChildOperation; 3] = [
        ChildOperation::Apply,
        ChildOperation::Delete,
        ChildOperation::Prune,
    ];

    /// The operation as a metric label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            ChildOperation::Apply => "apply",
            ChildOperation::Delete => "delete",
            ChildOperation::Prune => "prune",
        }
    }
}
