//! [`Reconciler`]: a controller's reconcile logic and its declaration, and the rules derived
//! from the declaration alone ([`default_name`]).

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use kube::Resource;
use kube::runtime::controller::Action;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Pass, PassError, Reads, Terminal, backoff_delay, default_failure_event};
use crate::events::Event;
use crate::observe::{Phase, StepName};
use crate::vocabulary::Vocabulary;

/// A controller's reconcile logic and its declaration.
///
/// `#[kubeward::reconciler]` implements this trait from a declaration, forwarding every hook the
/// impl block writes (a hook added to this trait is added to the macro's table of hooks,
/// `kubeward-macros/src/reconciler/hooks.rs`); it is as pleasant to implement by hand. `apply`
/// converges an object that exists; `cleanup` releases what an object
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
    /// `None` for the controller's
    /// ([`Controller::with_reconcile_timeout`](crate::controller::Controller::with_reconcile_timeout),
    /// by default [`DEFAULT_RECONCILE_TIMEOUT`](super::DEFAULT_RECONCILE_TIMEOUT)).
    const RECONCILE_TIMEOUT: Option<Duration> = None;
    /// How the runtime reports kstatus-compatible status (`Ready`, `Reconciling`, `Stalled` and
    /// `status.observedGeneration`, derived from each `apply` pass; see [`kstatus`](crate::kstatus)),
    /// or `None` for none. `#[kubeward::reconciler]` sets [`Kstatus::DEFAULT`](crate::kstatus::Kstatus::DEFAULT)
    /// unless told otherwise (`kstatus(..)`, `kstatus = false`); a hand-written implementation
    /// states it here, as it states everything else the runtime manages for it.
    const KSTATUS: Option<crate::kstatus::Kstatus> = None;
    /// The labels and annotations of its objects this controller reads (`#[reconciler(reads(..))]`).
    /// A change of one of them starts a pass, as a change of the spec, the finalizers or the
    /// deletion timestamp does, and a change of anything else (a status write, another label)
    /// starts none (unless
    /// [`Controller::with_every_change`](crate::controller::Controller::with_every_change)).
    /// Default: [`Reads::ALL`], every label and annotation.
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

/// The name of a controller of `R` unless it is given another
/// ([`Controller::with_name`](crate::controller::Controller::with_name)): [`Reconciler::NAME`],
/// else the finalizer, else the resource kind.
/// The events' `reportingController`, the `controller` metric label and the alert rules use it.
///
/// ```
/// # use kubeward::{Action, Pass, Reconciler};
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// struct Cleaner;
/// impl Reconciler for Cleaner {
///     type Resource = ConfigMap;
///     type Error = std::convert::Infallible;
///     const FINALIZER: Option<&'static str> = Some("demo.kubeward.dev/cleanup");
///     async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, Self::Error> {
///         Ok(Action::await_change())
///     }
/// }
/// assert_eq!(kubeward::controller::default_name::<Cleaner>(), "demo.kubeward.dev/cleanup");
/// ```
pub fn default_name<R: Reconciler>() -> String {
    R::NAME
        .or(R::FINALIZER)
        .map_or_else(|| R::Resource::kind(&()).into_owned(), str::to_owned)
}
