//! [`ReconcileObserver`]: the receiver of records, and [`Observers`], a controller's set of them,
//! each isolated from the controller: an observer that panics is reported once and switched off,
//! and the controller goes on reconciling.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{
    ChildWriteRecord, ControllerInfo, PassRecord, PassStarted, PublishRecord, QueueRecord,
    StepRecord,
};

/// Receives the records of passes, steps and event publishes.
///
/// Methods are called synchronously on the reconciling task, at the end of the pass or step:
/// implementations must be cheap and must not block (update counters, send to a channel).
///
/// A panic in any method is caught: it is logged once at error level (naming the observer by
/// [`observer_name`](ReconcileObserver::observer_name) and quoting the panic), the observer is
/// switched off for good — it receives no further records, from this controller or any other
/// sharing the same [`Observers`] — and the pass, step or publish it was told about goes on.
pub trait ReconcileObserver: Send + Sync + 'static {
    /// A controller using this observer started.
    fn controller_registered(&self, _controller: &ControllerInfo) {}
    /// A pass started; its [`pass_finished`](ReconcileObserver::pass_finished) follows, exactly
    /// once, also when it is abandoned.
    fn pass_started(&self, _pass: &PassStarted) {}
    /// A pass finished (or was abandoned).
    fn pass_finished(&self, record: &PassRecord);
    /// A step finished (or failed, or was abandoned).
    fn step_finished(&self, _record: &StepRecord) {}
    /// An event was published, aggregated or flushed, or a publish failed.
    fn event_published(&self, _record: &PublishRecord) {}
    /// A pass wrote (or failed to write) a child.
    fn child_written(&self, _record: &ChildWriteRecord) {}
    /// An object whose change was seen starts its pass, after waiting `record.waited`.
    fn pass_dequeued(&self, _record: &QueueRecord) {}
    /// The observer's name in the log line that reports its panic. Default: its type's name.
    fn observer_name(&self) -> &'static str {
        std::any::type_name::<Self>()
    }
}

/// The observers of one controller; cheap to clone.
#[derive(Clone, Default)]
pub struct Observers(Arc<[Arc<Isolated>]>);

/// One observer, and whether it panicked (then it is called no more).
struct Isolated {
    observer: Arc<dyn ReconcileObserver>,
    panicked: AtomicBool,
}

impl Isolated {
    /// Calls `notify` on the observer unless it panicked before; a panic now is logged and
    /// switches it off.
    fn call(&self, method: &'static str, notify: impl FnOnce(&dyn ReconcileObserver)) {
        if self.panicked.load(Ordering::Relaxed) {
            return;
        }
        let observer = &*self.observer;
        if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| notify(observer)))
            && !self.panicked.swap(true, Ordering::Relaxed)
        {
            tracing::error!(
                observer = observer.observer_name(),
                method,
                panic = crate::panics::panic_message(&*panic),
                "a reconcile observer panicked; it is switched off and receives no further records"
            );
        }
    }
}

impl Observers {
    /// A set of observers.
    pub fn new(observers: Vec<Arc<dyn ReconcileObserver>>) -> Self {
        Self(
            observers
                .into_iter()
                .map(|observer| {
                    Arc::new(Isolated {
                        observer,
                        panicked: AtomicBool::new(false),
                    })
                })
                .collect(),
        )
    }

    /// This set with `observer` added.
    #[must_use]
    pub fn with(&self, observer: Arc<dyn ReconcileObserver>) -> Self {
        let mut all = self.0.to_vec();
        all.push(Arc::new(Isolated {
            observer,
            panicked: AtomicBool::new(false),
        }));
        Self(all.into())
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn each(&self, method: &'static str, notify: impl Fn(&dyn ReconcileObserver)) {
        self.0.iter().for_each(|o| o.call(method, &notify));
    }
}

impl fmt::Debug for Observers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Observers({})", self.0.len())
    }
}

impl ReconcileObserver for Observers {
    fn controller_registered(&self, controller: &ControllerInfo) {
        self.each("controller_registered", |o| {
            o.controller_registered(controller);
        });
    }
    fn pass_started(&self, pass: &PassStarted) {
        self.each("pass_started", |o| o.pass_started(pass));
    }
    fn pass_finished(&self, record: &PassRecord) {
        self.each("pass_finished", |o| o.pass_finished(record));
    }
    fn step_finished(&self, record: &StepRecord) {
        self.each("step_finished", |o| o.step_finished(record));
    }
    fn event_published(&self, record: &PublishRecord) {
        self.each("event_published", |o| o.event_published(record));
    }
    fn child_written(&self, record: &ChildWriteRecord) {
        self.each("child_written", |o| o.child_written(record));
    }
    fn pass_dequeued(&self, record: &QueueRecord) {
        self.each("pass_dequeued", |o| o.pass_dequeued(record));
    }
}
