//! The controller runtime: a [`Reconciler`] run on `kube::runtime::Controller` with phases,
//! finalizers, status writes, transition and failure events, metrics and graceful shutdown.

mod backoff;
mod builder;
mod context;
mod derived_status;
mod dispatch;
mod effects;
mod failure;
mod finalizer;
mod health;
mod in_doubt;
mod memory;
mod namespaces;
mod pass;
mod predicate;
mod publish;
mod queue;
mod scope;
mod status;
mod status_field;
pub(crate) mod terminal;
mod watch;
mod watch_failures;

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use kube::Resource;
use kube::runtime::controller::Action;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use self::backoff::{BACKOFF_BASE, BACKOFF_MAX, backoff_delay};
pub(crate) use self::builder::termination_signal;
pub use self::builder::{
    Controller, ControllerError, DEFAULT_CONCURRENCY, DEFAULT_RECONCILE_TIMEOUT,
    DEFAULT_SHUTDOWN_GRACE, DEFAULT_STATUS_WRITE_TIMEOUT,
};
pub(crate) use self::failure::panic_message;
pub use self::failure::{ErrorChain, PassError, default_failure_event, default_failure_reason};
pub use self::health::{ControllerState, DEFAULT_SYNC_TIMEOUT};
pub use self::pass::Pass;
pub use self::predicate::{Keys, Reads};
pub use self::status::NoStatusSubresource;
pub use self::terminal::Terminal;
use crate::events::Event;
use crate::observe::{Phase, StepName};
use crate::vocabulary::Vocabulary;

/// A controller's reconcile logic and its declaration.
///
/// `#[kubeward::reconciler]` implements this trait from a declaration, forwarding every hook the
/// impl block writes (a hook added to this trait is added to the macro's table of hooks,
/// `kubeward-macros/src/reconciler/hooks.rs`); it is as pleasant to implement by hand. `apply` converges an object that exists; `cleanup` releases what an object
/// owns when it is deleted (it runs only with a [`FINALIZER`](Reconciler::FINALIZER), and the
/// finalizer is removed only when cleanup returns `Ok(Action::await_change())` — decided from the
/// returned action, whatever outcome the pass reports with `set_outcome` or `skip`).
///
/// A panic in `apply` or `cleanup` is caught: the pass is failed ([`PassError::Panicked`]), its
/// failure event published and the object retried with backoff; other objects go on.
pub trait Reconciler: Send + Sync + 'static {
    /// The resource this controller reconciles.
    type Resource: Resource<DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug
        + Send
        + Sync
        + 'static;
    /// The error a pass may fail with. It says which of its errors are permanent
    /// ([`Terminal`]; `#[derive(kubeward::Terminal)]`): a pass failing with one is not retried
    /// until the object changes.
    type Error: std::error::Error + Terminal + Send + Sync + 'static;

    /// The controller's name: events' `reportingController` and the `controller` metric label;
    /// a qualified name such as `demo.kubeward.dev/rollouts`. When `None`, the finalizer is used,
    /// else the resource kind.
    const NAME: Option<&'static str> = None;
    /// The finalizer that keeps a deleted object until `cleanup` completes.
    const FINALIZER: Option<&'static str> = None;
    /// The condition vocabularies this controller manages.
    const CONDITIONS: &'static [&'static Vocabulary] = &[];
    /// The steps this controller declares (their metric series start at zero).
    const STEPS: &'static [StepName] = &[];
    /// Spec or status fields exported as labels of one `kubeward_object_info` series per object;
    /// see [`info`](crate::info).
    const INFO: &'static [crate::info::InfoField] = &[];
    /// How long one pass may run before it is abandoned (`#[reconciler(timeout = "30s")]`);
    /// `None` for the controller's ([`Controller::with_reconcile_timeout`], by default
    /// [`DEFAULT_RECONCILE_TIMEOUT`]).
    const RECONCILE_TIMEOUT: Option<Duration> = None;
    /// How the runtime reports kstatus-compatible status (`Ready`, `Reconciling`, `Stalled` and
    /// `status.observedGeneration`, derived from each `apply` pass; see [`kstatus`](crate::kstatus)),
    /// or `None` for none. `#[kubeward::reconciler]` sets [`Kstatus::DEFAULT`](crate::kstatus::Kstatus::DEFAULT)
    /// unless told otherwise (`kstatus(..)`, `kstatus = false`); a hand-written implementation
    /// states it here, as it states everything else the runtime manages for it.
    const KSTATUS: Option<crate::kstatus::Kstatus> = None;
    /// The labels and annotations of its objects this controller reads (`#[reconciler(reads(..))]`):
    /// a change of one of them starts a pass, as a change of the spec, the finalizers or the
    /// deletion timestamp does; a change of anything else (a status write, another label) starts
    /// none. Default: [`Reads::ALL`], every label and annotation. See
    /// [`Controller::with_every_change`] for the opt-out.
    const READS: Reads = Reads::ALL;

    /// The kinds this controller watches beside its resource: the children it owns and the
    /// related objects it maps to its own; see [`relations`](crate::relations).
    /// `#[kubeward::reconciler(owns(..), watches(..))]` generates it. Called when the controller
    /// starts and for its RBAC rules ([`rbac::rules`](crate::rbac::rules)); default: none.
    fn relations() -> crate::relations::Relations<Self::Resource> {
        crate::relations::Relations::new()
    }

    /// Converges `object`.
    fn apply(
        &self,
        object: &Self::Resource,
        pass: &mut Pass<Self::Resource>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;

    /// Releases what `object` owns before it is deleted. Return `Ok(Action::requeue(..))` to be
    /// called again (the finalizer stays); `Ok(Action::await_change())` lets the object go.
    fn cleanup(
        &self,
        object: &Self::Resource,
        pass: &mut Pass<Self::Resource>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send {
        let _ = (object, pass);
        async { Ok(Action::await_change()) }
    }

    /// Whether `object` is suspended: the reconciler skips it on purpose, and the
    /// `kubeward_object_suspended` metric tells alerts to leave it out. Default: never. Called at
    /// scrape time; a panic in it is logged and the object exported as not suspended.
    fn is_suspended(object: &Self::Resource) -> bool {
        let _ = object;
        false
    }

    /// The Warning event a failed pass publishes, or `None` to publish nothing. The default is
    /// [`default_failure_event`]: reason `ReconcileFailed` (or `CleanupFailed` while deleting)
    /// and the error's whole cause chain as the note. Override it to reword or suppress.
    fn failure_event(&self, error: &PassError<Self::Error>, phase: Phase) -> Option<Event> {
        Some(default_failure_event(error, phase))
    }

    /// How long to wait before retrying an object after a failed pass (an `Err`, a panic, a
    /// failed write) or a write that met a conflict ([`PassError::Conflict`]), its `attempt`-th
    /// consecutive retry (1-based, failures and conflicts counted together; reset by a
    /// successful pass; kept per object uid). Default: [`backoff_delay`], exponential with
    /// jitter from 0.5 s to 5 min. A panic in this hook falls back to [`backoff_delay`].
    fn error_backoff(&self, error: &PassError<Self::Error>, attempt: u32) -> Duration {
        let _ = error;
        backoff_delay(attempt)
    }
}
