//! Runnable kubeward operators.
//!
//! [`rollouts`] is a rollout operator written with kubeward's DSL: a `Rollout` custom resource
//! whose `UpToDate` condition walks a staged, optionally approved rollout of its Deployment.
//! Its binary, `rollouts`, runs a scripted scenario on the embedded in-process API server by
//! default, and runs as a long-lived controller against a real cluster with `rollouts run`.
#![deny(missing_docs)]

pub mod rollouts;

/// The README's and the guide's code blocks (`docs/`), compiled as doctests (and run, unless
/// marked `no_run` because they need a cluster): a block cannot go stale.
#[cfg(doctest)]
pub mod guide {
    #[doc = include_str!("../../README.md")]
    pub struct Readme;
    #[doc = include_str!("../../docs/README.md")]
    pub struct Index;
    #[doc = include_str!("../../docs/example.md")]
    pub struct Example;
    #[doc = include_str!("../../docs/conditions-and-transitions.md")]
    pub struct ConditionsAndTransitions;
    #[doc = include_str!("../../docs/reconciler.md")]
    pub struct Reconciler;
    #[doc = include_str!("../../docs/children-and-watches.md")]
    pub struct ChildrenAndWatches;
    #[doc = include_str!("../../docs/kstatus.md")]
    pub struct Kstatus;
    #[doc = include_str!("../../docs/alerts.md")]
    pub struct Alerts;
    #[doc = include_str!("../../docs/operator.md")]
    pub struct Operator;
    #[doc = include_str!("../../docs/runtime-by-hand.md")]
    pub struct RuntimeByHand;
    #[doc = include_str!("../../docs/testing.md")]
    pub struct Testing;
    #[doc = include_str!("../../docs/performance.md")]
    pub struct Performance;
    #[doc = include_str!("../../docs/reliability.md")]
    pub struct Reliability;
}
