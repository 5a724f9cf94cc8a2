//! [`Next`]: how a pass that did not fail ended — what the dispatch hands kube-runtime, and what
//! the derived status reads.

use kube::runtime::controller::Action;

/// How a pass that did not fail ended, for what comes next.
pub(super) enum Next {
    /// The pass succeeded: hand `action` to kube-runtime.
    Done {
        action: Action,
        /// The reconciler returned `Ok(Action::await_change())`: for cleanup, it is finished.
        finished: bool,
        /// The resourceVersion of the pass's status write, if it made one.
        resource_version: Option<String>,
    },
    /// A write met a conflict (409): nothing was stored; retry with the object's backoff.
    Conflict {
        /// `status` or `finalizer`.
        write: &'static str,
    },
}
