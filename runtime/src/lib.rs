//! # kubeward
//!
//! The runtime of kubeward: Kubernetes controllers in Rust as a declaration plus plain async
//! functions. It gives a controller what every operator author otherwise writes by hand:
//!
//! - [`conditions`]: `status.conditions` maintained exactly like apimachinery's
//!   `meta.SetStatusCondition` (a `lastTransitionTime` that moves only when the status does);
//! - [`observe`]: every reconcile pass and step reported with its phase, outcome and duration;
//! - [`metrics`] (feature `prometheus`): those reports as a Prometheus collector;
//! - [`names`] and [`limits`]: the API server's rules for names and sizes, enforced before a
//!   request is sent;
//! - [`clock`]: injectable wall-clock time, so time-dependent rules are tested without sleeping.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod clock;
pub mod conditions;
pub mod controller;
pub mod limits;
#[cfg(feature = "prometheus")]
pub mod metrics;
pub mod names;
pub mod observe;
pub mod vocabulary;

pub use kube::runtime::controller::Action;

pub use crate::controller::{Pass, Reconciler};
pub use kubeward_macros::condition;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
