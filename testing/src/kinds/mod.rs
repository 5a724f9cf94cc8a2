//! What a kind adds to the generic registry ([`crate::registry`]), one module a kind. The
//! registry calls them and they never call back: each is given the objects it decides on and
//! answers what the registry is to do.
//!
//! - [`crd`]: the resources a CustomResourceDefinition serves, and the warnings its schemas earn;
//! - [`events`]: Events' validation and the events.k8s.io/v1 ↔ core/v1 mapping;
//! - [`namespace`]: namespaces' strategy and `NamespaceLifecycle` admission.

pub(crate) mod crd;
pub(crate) mod events;
pub(crate) mod namespace;
