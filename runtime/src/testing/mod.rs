//! The in-process Kubernetes API server (feature `testing`) and the pure rules it applies.
pub mod apply;
pub mod events_api;
pub mod patch;
pub mod rbac;
pub mod selector;
