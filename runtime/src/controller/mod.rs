//! The controller runtime: a [`Reconciler`] run on `kube::runtime::Controller` with phases,
//! finalizers, status writes, transition and failure events, metrics and graceful shutdown.

mod backoff;
mod builder;
mod context;
mod deprecated;
mod derived_status;
mod dispatch;
mod effects;
mod failure;
mod finalizer;
mod health;
mod hooks;
mod in_doubt;
mod memory;
#[cfg(feature = "prometheus")]
mod metrics;
mod namespaces;
mod next;
mod pass;
mod predicate;
mod publish;
mod queue;
mod reconciler;
mod run;
mod scope;
mod status;
mod status_field;
pub(crate) mod terminal;
mod watch;
mod watch_failures;

pub use self::backoff::{BACKOFF_BASE, BACKOFF_MAX, backoff_delay};
pub use self::builder::{
    Controller, ControllerError, DEFAULT_CONCURRENCY, DEFAULT_RECONCILE_TIMEOUT,
    DEFAULT_SHUTDOWN_GRACE, DEFAULT_STATUS_WRITE_TIMEOUT,
};
pub use self::failure::{ErrorChain, PassError, default_failure_event, default_failure_reason};
pub use self::health::{ControllerState, DEFAULT_SYNC_TIMEOUT};
pub use self::pass::Pass;
pub use self::predicate::{Keys, Reads};
pub use self::reconciler::{Reconciler, default_name};
#[cfg(feature = "prometheus")]
pub(crate) use self::run::termination_signal;
pub use self::status::NoStatusSubresource;
pub use self::terminal::Terminal;
pub(crate) use crate::shared_watch::SharedWatches;
pub use crate::trigger::{Related, Trigger};
