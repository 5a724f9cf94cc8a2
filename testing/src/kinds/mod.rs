//! What a kind adds to the generic registry ([`crate::registry`]), one module a kind.

pub(crate) mod crd;
