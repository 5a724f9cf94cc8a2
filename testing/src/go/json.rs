//! `encoding/json`'s words and bytes: the JSON type its decoder's `UnmarshalTypeError` names,
//! that error's text for a struct field, and `Marshal`'s escaping of strings.

use serde_json::Value;

/// The JSON type of `value` as `UnmarshalTypeError` names it (`string`, `number`, `bool`,
/// `array`, `object`, `null`).
pub(crate) fn unmarshal_type(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

/// The decoder's error for a value `found` (a JSON type, or `number 1.5` for a number that
/// does not fit) in the field `go_field` (`Struct.json.path`) of Go type `go_type`.
pub(crate) fn unmarshal_field_error(found: &str, go_field: &str, go_type: &str) -> String {
    format!("json: cannot unmarshal {found} into Go struct field {go_field} of type {go_type}")
}

/// `json.Marshal` of `value`: serde's encoding with the HTML-sensitive characters escaped as
/// Go escapes them (`<`, `>`, `&` as `\u003c`, `\u003e`, `\u0026`; they can only occur inside
/// strings).
pub(crate) fn marshal(value: &Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn marshal_escapes_html_characters_in_strings() {
        assert_eq!(
            marshal(&json!({"a": "x < y && z > 0"})),
            r#"{"a":"x \u003c y \u0026\u0026 z \u003e 0"}"#
        );
        assert_eq!(marshal(&json!(1.5)), "1.5");
    }

    #[test]
    fn type_errors_read_as_the_decoder_writes_them() {
        assert_eq!(
            unmarshal_field_error(unmarshal_type(&json!("1")), "Event.count", "int32"),
            "json: cannot unmarshal string into Go struct field Event.count of type int32"
        );
    }
}
