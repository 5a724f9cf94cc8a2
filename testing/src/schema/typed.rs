//! The field manager's conversion of an applied custom resource to its typed form
//! (structured-merge-diff's `validateScalar` against the schema the CRD's structural schema
//! becomes): a value of another kind where the schema wants a number cannot be typed, and the
//! apply fails with 500 before any validation runs (`failed to create typed patch object (…):
//! .spec.size: expected numeric (int or float), got string`).
//!
//! Only the numeric check is ported: its message names the value's Go type, which the
//! JSON model gives exactly; the string and boolean checks print Go's internal value
//! representation, which is not reproduced (those values reach schema validation instead).

use serde_json::Value;

use super::structural::Structural;
use crate::go::fmt::type_name;

/// The conversion error of `object` against `schema`, if a number is given as something else:
/// the path (`.spec.size`, `.spec.ports[0]`) and the Go type of what was given.
pub(crate) fn conversion_error(schema: &Structural, object: &Value) -> Option<String> {
    let mut errors = Vec::new();
    walk(schema, object, &mut String::new(), &mut errors);
    // One error is printed alone; several are a list, whose form is not ported.
    match errors.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

fn walk(schema: &Structural, value: &Value, path: &mut String, errors: &mut Vec<String>) {
    if schema.preserve_unknown_fields || schema.int_or_string || value.is_null() {
        return;
    }
    match (schema.type_.as_str(), value) {
        ("integer" | "number", Value::Number(_)) => {}
        ("integer" | "number", other) => errors.push(format!(
            "{path}: expected numeric (int or float), got {}",
            type_name(other)
        )),
        ("object", Value::Object(map)) => {
            for (key, item) in map {
                let field = schema
                    .properties
                    .get(key)
                    .or(schema.additional_properties.as_deref());
                if let Some(field) = field {
                    let len = path.len();
                    path.push('.');
                    path.push_str(key);
                    walk(field, item, path, errors);
                    path.truncate(len);
                }
            }
        }
        ("array", Value::Array(items)) => {
            if let Some(item_schema) = schema.items.as_deref() {
                for (index, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{index}]"));
                    walk(item_schema, item, path, errors);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::conversion_error;
    use crate::schema::structural::Structural;
    use serde_json::json;

    fn schema() -> Structural {
        Structural::from_json(&json!({
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "size": {"type": "integer"},
                "ports": {"type": "array", "items": {"type": "number"}},
                "name": {"type": "string"},
            }}},
        }))
    }

    #[test]
    fn a_number_given_as_something_else_cannot_be_typed() {
        assert_eq!(
            conversion_error(&schema(), &json!({"spec": {"size": "big"}})).as_deref(),
            Some(".spec.size: expected numeric (int or float), got string")
        );
        assert_eq!(
            conversion_error(&schema(), &json!({"spec": {"ports": [1, true]}})).as_deref(),
            Some(".spec.ports[1]: expected numeric (int or float), got bool")
        );
        // Numbers, other fields and nulls convert.
        assert_eq!(
            conversion_error(
                &schema(),
                &json!({"spec": {"size": 1, "name": 2, "ports": null}})
            ),
            None
        );
    }
}
