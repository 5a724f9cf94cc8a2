//! Runnable kubeward operators.
//!
//! [`rollouts`] is a rollout operator written with kubeward's DSL: a `Rollout` custom resource
//! whose `UpToDate` condition walks a staged, optionally approved rollout of its Deployment.
//! Its binary, `rollouts`, runs a scripted scenario on the embedded in-process API server by
//! default, and runs as a long-lived controller against a real cluster with `rollouts run`.
#![deny(missing_docs)]

pub mod rollouts;
