//! The field errors schema validation reports beyond the ones object-meta validation needs
//! (apimachinery `field.TypeInvalid`, `NotSupported`, `TooMany`, `Duplicate`), on the shared
//! [`FieldError`], and field paths as `field.Path` prints them.

use serde_json::Value;

use crate::go::fmt::go_quote;
pub(crate) use crate::validation::FieldError;

/// Go's rendering of a decoded JSON value in `ErrorBody`: strings quoted (`%q`), numbers and
/// booleans bare, everything else as JSON.
pub(crate) fn render(value: &Value) -> String {
    match value {
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    }
}

/// Go's `%q` of a string.
pub(crate) fn quote(s: &str) -> String {
    go_quote(s)
}

impl FieldError {
    /// `field.Invalid(path, value, detail)` of any decoded value.
    pub fn invalid_json(field: &str, value: &Value, detail: &str) -> Self {
        Self::invalid_rendered(field, &render(value), detail)
    }

    /// `field.Invalid(path, field.OmitValueType{}, detail)`: `Invalid value: detail`.
    pub fn invalid_omitted(field: &str, detail: &str) -> Self {
        FieldError {
            field: field.to_owned(),
            reason: "FieldValueInvalid",
            message: format!("Invalid value: {detail}"),
        }
    }

    /// `field.TypeInvalid(path, value, detail)`.
    pub fn type_invalid(field: &str, value: &Value, detail: &str) -> Self {
        FieldError {
            reason: "FieldValueTypeInvalid",
            ..Self::invalid_json(field, value, detail)
        }
    }

    /// `field.NotSupported`: `Unsupported value: "x": supported values: "a", "b"`.
    pub fn not_supported(field: &str, value: &Value, supported: &[String]) -> Self {
        let list = supported
            .iter()
            .map(|s| go_quote(s))
            .collect::<Vec<_>>()
            .join(", ");
        FieldError {
            field: field.to_owned(),
            reason: "FieldValueNotSupported",
            message: format!(
                "Unsupported value: {}: supported values: {list}",
                render(value)
            ),
        }
    }

    /// `field.TooMany(path, actual, max)`: `Too many: 4: must have at most 3 items`.
    pub fn too_many(field: &str, actual: u64, max: u64) -> Self {
        let unit = if max == 1 { "item" } else { "items" };
        FieldError {
            field: field.to_owned(),
            reason: "FieldValueTooMany",
            message: format!("Too many: {actual}: must have at most {max} {unit}"),
        }
    }

    /// `field.Duplicate(path, value)`: `Duplicate value: "a"`.
    pub fn duplicate(field: &str, value: &Value) -> Self {
        FieldError {
            field: field.to_owned(),
            reason: "FieldValueDuplicate",
            message: format!("Duplicate value: {}", render(value)),
        }
    }
}

/// `field.Path.Child`: `a.b`, or `b` at the root.
pub(crate) fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// `field.Path.Index`: `a[3]`.
pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}
