//! [`ReconcileObserver`]: the receiver of records, and [`Observers`], a controller's set of them.

use std::fmt;
use std::sync::Arc;

use super::{ControllerInfo, PassRecord, PublishRecord, StepRecord};

/// Receives the records of passes, steps and event publishes.
///
/// Methods are called synchronously on the reconciling task, at the end of the pass or step:
/// implementations must be cheap and must not block (update counters, send to a channel).
pub trait ReconcileObserver: Send + Sync + 'static {
    /// A controller using this observer started.
    fn controller_registered(&self, _controller: &ControllerInfo) {}
    /// A pass finished (or was abandoned).
    fn pass_finished(&self, record: &PassRecord);
    /// A step finished (or failed, or was abandoned).
    fn step_finished(&self, _record: &StepRecord) {}
    /// An event was published, aggregated or flushed, or a publish failed.
    fn event_published(&self, _record: &PublishRecord) {}
}

/// The observers of one controller; cheap to clone.
#[derive(Clone, Default)]
pub struct Observers(Arc<[Arc<dyn ReconcileObserver>]>);

impl Observers {
    /// A set of observers.
    pub fn new(observers: Vec<Arc<dyn ReconcileObserver>>) -> Self {
        Self(observers.into())
    }

    /// This set with `observer` added.
    #[must_use]
    pub fn with(&self, observer: Arc<dyn ReconcileObserver>) -> Self {
        let mut all = self.0.to_vec();
        all.push(observer);
        Self::new(all)
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Observers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Observers({})", self.0.len())
    }
}

impl ReconcileObserver for Observers {
    fn controller_registered(&self, controller: &ControllerInfo) {
        self.0
            .iter()
            .for_each(|o| o.controller_registered(controller));
    }
    fn pass_finished(&self, record: &PassRecord) {
        self.0.iter().for_each(|o| o.pass_finished(record));
    }
    fn step_finished(&self, record: &StepRecord) {
        self.0.iter().for_each(|o| o.step_finished(record));
    }
    fn event_published(&self, record: &PublishRecord) {
        self.0.iter().for_each(|o| o.event_published(record));
    }
}
