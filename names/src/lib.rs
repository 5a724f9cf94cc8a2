//! # kubeward-names
//!
//! The Kubernetes API server's rules for the strings and sizes a controller writes, with
//! apimachinery's messages: [`NameKind::validate`] for names (condition types and reasons, event
//! reasons and actions, controller names, finalizers, step names) and [`limits`] for sizes and the
//! char-boundary truncation of messages and notes.
//!
//! It is its own crate so that `kubeward` (at run time) and `kubeward-macros` (at compile time,
//! on names written as literals) apply the same rules from one source. Use it through
//! `kubeward::names` and `kubeward::limits`.
//!
//! With the `clock` feature it also holds [`clock`], the injectable wall-clock time that the
//! runtime (`kubeward::clock`) and the in-process API server (`kubeward-testing`) share, so
//! that the server does not depend on the runtime for it.
#![deny(missing_docs)]

#[cfg(feature = "clock")]
pub mod clock;
pub mod limits;
mod names;

pub use names::{InvalidName, NameKind};
