//! Field errors as apimachinery's `field.Error` renders them (`pkg/util/validation/field/errors.go`):
//! the cause reason is the error type, the message its `ErrorBody()`.

use serde_json::Value;

use crate::status::Cause;

/// How a bad value is shown in an error body.
pub enum Shown<'a> {
    /// The value, rendered like Go's `%v`/`%q`/JSON.
    Value(&'a Value),
    /// A Go string (`%q`), e.g. the schema type of an object.
    Str(&'a str),
    /// An integer (`%v`).
    Int(u64),
    /// No value (`field.OmitValueType`).
    Omitted,
}

/// Go's rendering of a decoded JSON value in `ErrorBody`: strings quoted, numbers and booleans
/// bare, everything else as JSON.
pub fn render(value: &Value) -> String {
    match value {
        Value::String(s) => quote(s),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// Go's `%q` of a string (JSON escaping agrees with it for what objects carry).
pub fn quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn body(kind: &str, shown: Shown<'_>, detail: &str) -> String {
    let mut s = match shown {
        Shown::Value(v) => format!("{kind}: {}", render(v)),
        Shown::Str(v) => format!("{kind}: {}", quote(v)),
        Shown::Int(n) => format!("{kind}: {n}"),
        Shown::Omitted => kind.to_string(),
    };
    if !detail.is_empty() {
        s.push_str(": ");
        s.push_str(detail);
    }
    s
}

fn cause(reason: &str, field: &str, message: String) -> Cause {
    Cause {
        reason: reason.into(),
        message,
        field: field.into(),
    }
}

/// `field.Required`.
pub fn required(field: &str) -> Cause {
    cause("FieldValueRequired", field, "Required value".into())
}

/// `field.Invalid`.
pub fn invalid(field: &str, shown: Shown<'_>, detail: &str) -> Cause {
    cause(
        "FieldValueInvalid",
        field,
        body("Invalid value", shown, detail),
    )
}

/// `field.TypeInvalid`.
pub fn type_invalid(field: &str, value: &Value, detail: &str) -> Cause {
    cause(
        "FieldValueTypeInvalid",
        field,
        body("Invalid value", Shown::Value(value), detail),
    )
}

/// `field.NotSupported`: `Unsupported value: "x": supported values: "a", "b"`.
pub fn not_supported(field: &str, value: &Value, supported: &[String]) -> Cause {
    let list = supported
        .iter()
        .map(|s| quote(s))
        .collect::<Vec<_>>()
        .join(", ");
    cause(
        "FieldValueNotSupported",
        field,
        body(
            "Unsupported value",
            Shown::Value(value),
            &format!("supported values: {list}"),
        ),
    )
}

/// `field.TooLong` (bytes, as the schema validator reports maxLength).
pub fn too_long(field: &str, max: u64) -> Cause {
    let unit = if max == 1 { "byte" } else { "bytes" };
    cause(
        "FieldValueTooLong",
        field,
        format!("Too long: may not be more than {max} {unit}"),
    )
}

/// `field.TooMany`.
pub fn too_many(field: &str, actual: u64, max: u64) -> Cause {
    let unit = if max == 1 { "item" } else { "items" };
    cause(
        "FieldValueTooMany",
        field,
        body(
            "Too many",
            Shown::Int(actual),
            &format!("must have at most {max} {unit}"),
        ),
    )
}

/// `field.Duplicate`.
pub fn duplicate(field: &str, value: &Value) -> Cause {
    cause(
        "FieldValueDuplicate",
        field,
        body("Duplicate value", Shown::Value(value), ""),
    )
}

/// `field.Forbidden`.
pub fn forbidden(field: &str, detail: &str) -> Cause {
    cause(
        "FieldValueForbidden",
        field,
        body("Forbidden", Shown::Omitted, detail),
    )
}

/// `field.Path.Child`: `a.b`, or `b` at the root.
pub fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// `field.Path.Index`: `a[3]`.
pub fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}
