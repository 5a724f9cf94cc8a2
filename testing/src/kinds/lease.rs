//! Leases (`pkg/registry/coordination/lease`): their typed decoding and rules.

use serde_json::Value;

use super::Strategy;
use crate::validation::{FieldError, builtins, gotypes};

/// Leases' [`Strategy`].
pub(crate) struct Leases;

impl Strategy for Leases {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(&gotypes::LEASE)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        builtins::decode_lease(obj);
        Ok(())
    }

    fn field_rules(&self, new: &Value, _old: Option<&Value>) -> Vec<FieldError> {
        builtins::lease_rules(new)
    }

    /// `leaseStrategy.AllowUnconditionalUpdate` is false: a PUT must carry the
    /// resourceVersion it replaces.
    fn allows_unconditional_update(&self) -> bool {
        false
    }
}
