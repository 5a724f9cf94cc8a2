//! Procedural macros for kubeward.
//!
//! The `#[reconciler]`, `#[step]` and condition-vocabulary attributes live here; they expand onto the
//! public items of the `kubeward` runtime crate and its hidden `__private` module.
