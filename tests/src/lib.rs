//! Shared helpers for kubeward's integration tests.
