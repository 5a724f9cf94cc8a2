//! Observation of reconcile passes and steps: phases, outcomes, durations, reported to
//! [`ReconcileObserver`]s.
//!
//! The controller runtime opens a [`PassGuard`] for every pass and runs the pass inside it. Code
//! anywhere inside the pass — the reconciler, a helper three calls deep — times a named step with
//! [`step`] / [`try_step`] (or `#[step("name")]`, which expands to them); outside a pass they do
//! nothing but run the step. A pass or step whose future is dropped before it finished is reported
//! as [`Outcome::Abandoned`], so a shutdown or a lost lease never loses a record.

//!
//! One concept per module: the model ([`Phase`], [`Outcome`], [`ObjectRef`], [`StepName`]), the
//! records observers receive ([`PassRecord`], [`StepRecord`], [`PublishRecord`]), the
//! [`ReconcileObserver`] trait, the [`PassGuard`] that makes a pass current, and the steps
//! ([`step`], [`try_step`], ...).

mod guard;
mod model;
mod observer;
mod records;
mod step;
#[cfg(test)]
mod tests;

pub use self::guard::{PassGuard, in_pass};
pub use self::model::{FailureReason, ObjectRef, Outcome, Phase, ReconcileId, StepName};
pub use self::observer::{Observers, ReconcileObserver};
pub use self::records::{
    ChildOperation, ChildWriteRecord, ControllerInfo, PassRecord, PassStarted, PublishRecord,
    PublishResult, QueueRecord, StepRecord,
};
pub use self::step::{step, step_sync, step_sync_with, step_with, try_step, try_step_sync};
