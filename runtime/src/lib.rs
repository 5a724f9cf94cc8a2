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
//! - [`vocabulary`]: condition reasons, their event types and allowed transitions as data;
//! - [`clock`]: injectable wall-clock time, so time-dependent rules are tested without sleeping.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "prometheus")]
pub mod alerts;
pub mod clock;
pub mod conditions;
pub mod controller;
pub mod events;
pub mod info;
pub mod leader;
pub mod limits;
#[cfg(feature = "prometheus")]
pub mod metrics;
pub mod names;
pub mod observe;
pub mod ops;
pub mod vocabulary;

pub use kube::runtime::controller::Action;

pub use crate::controller::{Pass, Reconciler};
pub use kubeward_macros::{condition, reconciler, step};

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
