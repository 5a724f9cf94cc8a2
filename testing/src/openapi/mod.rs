//! OpenAPI: the built-in kinds' definitions ([`definitions`]), which strategic merge patch also
//! reads, and the documents published from them.

pub mod definitions;
mod v3;

pub use v3::{group_version, root};
