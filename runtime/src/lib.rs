//! # kubeward
//!
//! The runtime of kubeward: Kubernetes controllers in Rust as a declaration plus plain async
//! functions. It gives a controller what every operator author otherwise writes by hand:
//!
//! - [`conditions`]: `status.conditions` maintained exactly like apimachinery's
//!   `meta.SetStatusCondition` (a `lastTransitionTime` that moves only when the status does);
//! - [`events`]: an events.k8s.io/v1 recorder that aggregates repeats into exact series counts,
//!   never pins a stale note and never hangs a controller;
//! - [`observe`]: every reconcile pass and step reported with its phase, outcome and duration;
//! - [`metrics`] (feature `prometheus`): those reports as a Prometheus collector, per-object state
//!   read at scrape time, and [`alerts`]: the alert rules and their promtool tests, generated from
//!   the declaration;
//! - [`names`] and [`limits`]: the API server's rules for names and sizes, enforced before a
//!   request is sent;
//! - [`controller`]: a [`Reconciler`] run on kube-runtime with phases, finalizers, status writes,
//!   transition and failure events, graceful shutdown and [`leader`] election; [`ops`] serves
//!   `/metrics`, `/healthz` and `/readyz`;
//! - [`relations`] and [`children`]: the children a controller owns and the objects it watches,
//!   declared once, their changes starting the right passes, children written by server-side apply;
//! - [`rbac`]: the ClusterRole rules a controller needs, derived from its declaration;
//! - [`vocabulary`]: condition reasons, their event types and allowed transitions as data;
//! - [`clock`]: injectable wall-clock time, so time-dependent rules are tested without sleeping.
#![deny(missing_docs)]
#![warn(unreachable_pub)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "prometheus")]
pub mod alerts;
pub mod children;
pub use kubeward_names::clock;
pub mod conditions;
pub mod controller;
pub mod crd;
pub mod events;
pub mod info;
pub mod kstatus;
pub mod leader;
pub mod manifest;
pub use kubeward_names::limits;
#[cfg(feature = "prometheus")]
pub mod metrics;
pub mod names {
    //! Validation of the strings the Kubernetes API server would reject, with apimachinery's
    //! rules and messages, so that a bad name fails with a typed error before a request is sent.
    //! The macros apply the same rules (crate `kubeward-names`) at compile time.
    //!
    //! ```
    //! use kubeward::names::NameKind;
    //! assert!(NameKind::ConditionReason.validate("WaitingForApproval").is_ok());
    //! let err = NameKind::ConditionReason.validate("waiting for approval").unwrap_err();
    //! assert!(err.to_string().starts_with("invalid condition reason \"waiting for approval\""));
    //! ```
    pub use kubeward_names::{InvalidName, NameKind};
}
pub mod observe;
#[cfg(feature = "prometheus")]
pub mod operator;
pub mod ops;
mod panics;
mod rate_limit;
pub mod rbac;
pub mod relations;
mod shared_watch;
pub mod shutdown;
mod trigger;
pub mod vocabulary;

pub use kube::runtime::controller::Action;

pub use crate::controller::{Pass, Reconciler, Terminal};
pub use kubeward_macros::{Terminal, condition, reconciler, step};

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
