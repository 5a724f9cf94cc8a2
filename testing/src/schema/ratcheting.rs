//! Validation ratcheting (`CRDValidationRatcheting`, on by default since Kubernetes 1.30): on an
//! update, a schema node whose value equals its correlated old value is not validated again, so
//! an object stored before its CRD tightened a rule can still be updated elsewhere
//! (apiextensions-apiserver `pkg/apiserver/validation/ratcheting.go`).
//!
//! Correlation follows the schema: object properties and map values by name, items of
//! `x-kubernetes-list-type: map` lists by their keys and of `set` lists by value; items of
//! atomic lists have no old value.

use serde_json::Value;

use super::listtype::map_key;
use super::structural::Structural;

/// The old value of property or map key `name`.
pub(crate) fn child<'a>(old: Option<&'a Value>, name: &str) -> Option<&'a Value> {
    old?.get(name)
}

/// The old item of a map list with the same keys as `item` (the only correlation CEL's
/// `oldSelf` follows through lists).
pub(crate) fn map_item<'a>(
    schema: &Structural,
    item: &Value,
    old: Option<&'a Value>,
) -> Option<&'a Value> {
    if schema.list_type.as_deref() != Some("map") {
        return None;
    }
    let key = map_key(schema, item);
    old?.as_array()?.iter().find(|o| map_key(schema, o) == key)
}

/// The old item correlated with `item`: by keys in a map list, by value in a set.
pub(crate) fn item<'a>(
    schema: &Structural,
    item: &Value,
    old: Option<&'a Value>,
) -> Option<&'a Value> {
    match schema.list_type.as_deref() {
        Some("set") => old?.as_array()?.iter().find(|o| *o == item),
        _ => map_item(schema, item, old),
    }
}

/// Whether `value` is unchanged from its correlated old value, so its errors are ratcheted.
pub(crate) fn unchanged(value: &Value, old: Option<&Value>) -> bool {
    old == Some(value)
}
