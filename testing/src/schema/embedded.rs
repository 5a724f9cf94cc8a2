//! `x-kubernetes-embedded-resource` objects carry their own envelope: `apiVersion` and `kind`
//! are required non-empty strings (apiextensions-apiserver `pkg/apiserver/schema/objectmeta/validation.go`
//! `validateEmbeddedResource`; the embedded `metadata` is not checked here).

use serde_json::Value;

use super::field::{self, FieldError};
use super::structural::Structural;

/// Validates the embedded resources inside `value` (the root object itself is not one).
pub(crate) fn validate(
    schema: &Structural,
    path: &str,
    value: &Value,
    errors: &mut Vec<FieldError>,
) {
    match value {
        Value::Object(map) => {
            if schema.embedded_resource && !path.is_empty() {
                for name in ["apiVersion", "kind"] {
                    let at = field::child(path, name);
                    match map.get(name) {
                        None => errors.push(FieldError::required(&at)),
                        Some(Value::String(s)) if s.is_empty() => {
                            errors.push(FieldError::invalid(&at, "", "must not be empty"))
                        }
                        Some(Value::String(_)) => {}
                        Some(other) => {
                            errors.push(FieldError::invalid_json(&at, other, "must be a string"))
                        }
                    }
                }
            }
            for (name, v) in map {
                if let Some(child) = schema.child(name) {
                    validate(child, &field::child(path, name), v, errors);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for (i, item) in items.iter().enumerate() {
                    validate(item_schema, &field::index(path, i), item, errors);
                }
            }
        }
        _ => {}
    }
}
