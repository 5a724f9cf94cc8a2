//! apimachinery `util/validation/field`: one validation error, rendered as `field.Error` renders
//! itself (`ErrorBody`), and the Status cause built from it.

use std::fmt;

use serde_json::Value;

use crate::go::fmt::go_quote;
use crate::status::Cause;

/// One validation error, as apimachinery's `field.Error` and the Status cause built from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field path (`metadata.name`, `data[key]`, `series.count`).
    pub field: String,
    /// The Status cause type: `FieldValueRequired`, `FieldValueInvalid`, `FieldValueTooLong`,
    /// `FieldValueNotSupported` or `FieldValueForbidden`.
    pub reason: &'static str,
    /// `field.Error.ErrorBody()`, the Status cause message (`Required value`,
    /// `Invalid value: "": can have at most 128 characters`). The ErrorList item text is
    /// `field + ": " + message` (this type's `Display`).
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// `ErrorBody`'s `: detail` suffix, absent for an empty detail.
fn with_detail(body: &str, detail: &str) -> String {
    if detail.is_empty() {
        body.to_owned()
    } else {
        format!("{body}: {detail}")
    }
}

impl FieldError {
    /// `field.Required(path, "")`.
    pub fn required(field: &str) -> Self {
        Self::required_because(field, "")
    }

    /// `field.Required(path, detail)`: `Required value: detail`.
    pub fn required_because(field: &str, detail: &str) -> Self {
        FieldError {
            field: field.to_owned(),
            reason: "FieldValueRequired",
            message: with_detail("Required value", detail),
        }
    }

    /// `field.Invalid(path, value, detail)` with a value already rendered as Go's ErrorBody does.
    pub fn invalid_rendered(field: &str, rendered: &str, detail: &str) -> Self {
        FieldError {
            field: field.to_owned(),
            reason: "FieldValueInvalid",
            message: with_detail(&format!("Invalid value: {rendered}"), detail),
        }
    }

    /// `field.Invalid(path, value, detail)` of a string value (`%q`).
    pub fn invalid(field: &str, value: &str, detail: &str) -> Self {
        Self::invalid_rendered(field, &go_quote(value), detail)
    }

    /// `field.Invalid(path, value, detail)` of a number, list or struct, which `ErrorBody`
    /// renders as JSON (numbers bare).
    pub fn invalid_value(field: &str, value: &Value, detail: &str) -> Self {
        Self::invalid_rendered(field, &value.to_string(), detail)
    }

    /// `field.Forbidden(path, detail)`: `Forbidden: detail`.
    pub fn forbidden(field: &str, detail: &str) -> Self {
        FieldError {
            field: field.to_owned(),
            reason: "FieldValueForbidden",
            message: with_detail("Forbidden", detail),
        }
    }

    /// `field.NotFound(path, value)` of a string: `Not found: "nope"`.
    pub fn not_found(field: &str, value: &str) -> Self {
        FieldError {
            field: field.to_owned(),
            reason: "FieldValueNotFound",
            message: format!("Not found: {}", go_quote(value)),
        }
    }

    /// `field.NotSupported` of a value already rendered as `ErrorBody` does.
    pub fn not_supported_rendered(field: &str, rendered: &str, supported: &str) -> Self {
        FieldError {
            field: field.to_owned(),
            reason: "FieldValueNotSupported",
            message: format!("Unsupported value: {rendered}: supported values: {supported}"),
        }
    }

    /// `field.TooLong(path, _, max)`: `Too long: may not be more than <max> bytes` (`1 byte`;
    /// the value is omitted).
    pub fn too_long(field: &str, max_bytes: usize) -> Self {
        FieldError {
            field: field.to_owned(),
            reason: "FieldValueTooLong",
            message: format!("Too long: {}", too_long_message(max_bytes)),
        }
    }
}

/// apimachinery's `field.TooLong` text: `may not be more than <max> bytes` (`1 byte`).
pub(crate) fn too_long_message(max_bytes: usize) -> String {
    let unit = if max_bytes == 1 { "byte" } else { "bytes" };
    format!("may not be more than {max_bytes} {unit}")
}

impl From<FieldError> for Cause {
    fn from(e: FieldError) -> Self {
        Cause {
            reason: e.reason.to_owned(),
            message: e.message,
            field: e.field,
        }
    }
}

/// `path.Key(key)`: `data[key]`.
pub(crate) fn key(path: &str, key: &str) -> String {
    format!("{path}[{key}]")
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    impl FieldError {
        /// The Status cause built from this error (`errors.NewInvalid`):
        /// `{"reason": "FieldValueRequired", "message": "Required value", "field": "eventTime"}`.
        pub(crate) fn status_cause(&self) -> Value {
            json!({"reason": self.reason, "message": self.message, "field": self.field})
        }
    }

    #[test]
    fn bodies_render_like_field_error_body() {
        assert_eq!(
            FieldError::required("metadata.name").to_string(),
            "metadata.name: Required value"
        );
        assert_eq!(
            FieldError::required_because("metadata.name", "name or generateName is required")
                .message,
            "Required value: name or generateName is required"
        );
        assert_eq!(
            FieldError::invalid("metadata.name", "A\"b", "bad").message,
            "Invalid value: \"A\\\"b\": bad"
        );
        assert_eq!(
            FieldError::invalid_value("spec.leaseDurationSeconds", &json!(0), "must be > 0")
                .message,
            "Invalid value: 0: must be > 0"
        );
        assert_eq!(
            FieldError::too_long("metadata.annotations", 262144).message,
            "Too long: may not be more than 262144 bytes"
        );
        assert_eq!(
            FieldError::forbidden("immutable", "x").to_string(),
            "immutable: Forbidden: x"
        );
    }
}
