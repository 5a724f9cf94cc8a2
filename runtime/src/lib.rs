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
//! - [`metrics`] (feature `prometheus`): those reports as a Prometheus collector;
//! - [`names`] and [`limits`]: the API server's rules for names and sizes, enforced before a
//!   request is sent;
//! - [`clock`]: injectable wall-clock time, so time-dependent rules are tested without sleeping.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod clock;
pub mod events;
pub mod limits;
pub mod names;
pub mod observe;
#[cfg(feature = "testing")]
pub mod testing;
