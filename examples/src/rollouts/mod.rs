//! The rollout operator: a `Rollout` (group `demo.kubeward.dev`, version `v1`) names an image
//! and a replica count; the operator runs it as a Deployment behind a Service. It stages each new
//! generation in the paused Deployment, optionally waits for a human to approve it, then promotes
//! it by resuming the Deployment, and verifies it on the Deployment's status and its pods.
//!
//! - [`resource`]: the `Rollout` custom resource and how approval is given;
//! - [`condition`]: the `UpToDate` condition vocabulary (reasons, statuses, event types,
//!   transitions);
//! - [`reconciler`]: the reconciler, written with `#[kubeward::reconciler]` and `#[step]`;
//! - [`children`]: rendering and applying the child Deployment and Service;
//! - [`health`]: what the Deployment and its pods say about a generation (staged, verified,
//!   failing);
//! - [`rbac`]: the ClusterRole the operator needs, derived from the declaration;
//! - [`describe`]: events formatted as `kubectl describe` shows them;
//! - [`operator`]: the controller wired with its event recorder and metrics;
//! - [`scenario`]: the scripted scenario the binary runs on the embedded API server;

pub mod children;
pub mod condition;
pub mod describe;
pub mod health;
pub mod operator;
pub mod rbac;
pub mod reconciler;
pub mod resource;
pub mod scenario;

pub use condition::UpToDate;
pub use reconciler::{CONTROLLER, Error, FINALIZER, Rollouts};
pub use resource::{APPROVED_GENERATION, Rollout, RolloutSpec, RolloutStatus, Strategy};
