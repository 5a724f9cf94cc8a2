//! OpenAPI v3 value validation of a custom resource against its structural schema, with the
//! messages of kube-openapi (`pkg/validation/validate`, `pkg/validation/errors/schema.go`)
//! converted to field errors as apiextensions-apiserver does
//! (`pkg/apiserver/validation/validation.go` `kubeOpenAPIResultToFieldErrors`).
//!
//! `metadata`, `apiVersion` and `kind` at the root (and of embedded resources) are left to the
//! object-meta validation.

use serde_json::Value;

use super::field::{self, FieldError};
use super::formats;
use super::ratcheting;
use super::structural::Structural;

/// Validates `value` at `path` against `schema`, appending what is wrong to `errors`; `old` is
/// the correlated stored value on an update, and a value equal to it is not validated again
/// ([`ratcheting`]).
pub(crate) fn validate(
    schema: &Structural,
    path: &str,
    value: &Value,
    old: Option<&Value>,
    errors: &mut Vec<FieldError>,
) {
    if ratcheting::unchanged(value, old) {
        return;
    }
    if value.is_null() {
        if !schema.nullable && !schema.type_.is_empty() {
            errors.push(type_error(schema, path, value));
        }
        return;
    }
    if !type_matches(schema, value) {
        errors.push(type_error(schema, path, value));
        return;
    }
    validate_any_of(schema, path, value, old, errors);
    if !schema.enum_.is_empty() && !schema.enum_.contains(value) {
        let supported: Vec<String> = schema
            .enum_
            .iter()
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        errors.push(FieldError::not_supported(path, value, &supported));
    }
    match value {
        Value::String(s) => validate_string(schema, path, value, s, errors),
        Value::Number(n) => validate_number(schema, path, value, n.as_f64().unwrap_or(0.0), errors),
        Value::Array(items) => validate_array(schema, path, items, old, errors),
        Value::Object(map) => validate_object(schema, path, map, old, errors),
        _ => {}
    }
}

/// `anyOf` as kube-openapi's schema-props validator checks it (after the type, before the other
/// checks of the node): when no branch holds, `"spec.x" must validate at least one schema
/// (anyOf)` (a composite error, reported without a field), then the errors of the branch that
/// failed least.
fn validate_any_of(
    schema: &Structural,
    path: &str,
    value: &Value,
    old: Option<&Value>,
    errors: &mut Vec<FieldError>,
) {
    if schema.any_of.is_empty() {
        return;
    }
    let mut best: Option<Vec<FieldError>> = None;
    for branch in &schema.any_of {
        let mut found = Vec::new();
        validate(branch, path, value, old, &mut found);
        if found.is_empty() {
            return;
        }
        if best.as_ref().is_none_or(|b| found.len() < b.len()) {
            best = Some(found);
        }
    }
    errors.push(FieldError::invalid_json(
        "<nil>",
        &Value::String(String::new()),
        &format!(
            "{} must validate at least one schema (anyOf)",
            field::quote(path)
        ),
    ));
    errors.extend(best.unwrap_or_default());
}

/// The JSON type of a decoded value as kube-openapi names it (`schemaInfoForType`).
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integral(value: &Value) -> bool {
    match value {
        Value::Number(n) => !n.is_f64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

fn type_matches(schema: &Structural, value: &Value) -> bool {
    if schema.int_or_string {
        return value.is_string() || is_integral(value);
    }
    match schema.type_.as_str() {
        "" => true,
        "integer" => is_integral(value),
        "number" => value.is_number(),
        other => json_type(value) == other,
    }
}

/// `errors.InvalidType` through `field.TypeInvalid`:
/// `Invalid value: "string": spec.replicas in body must be of type integer: "string"`.
fn type_error(schema: &Structural, path: &str, value: &Value) -> FieldError {
    let expected = if schema.int_or_string {
        "integer,string"
    } else {
        schema.type_.as_str()
    };
    let actual = Value::String(json_type(value).to_string());
    FieldError::type_invalid(
        path,
        &actual,
        &format!(
            "{path} in body must be of type {expected}: {}",
            field::render(&actual)
        ),
    )
}

fn validate_string(
    schema: &Structural,
    path: &str,
    value: &Value,
    s: &str,
    errors: &mut Vec<FieldError>,
) {
    let chars = s.chars().count() as u64;
    if let Some(max) = schema.max_length.filter(|m| chars > *m) {
        errors.push(FieldError::too_long(path, max as usize));
    }
    if let Some(min) = schema.min_length.filter(|m| chars < *m) {
        errors.push(FieldError::invalid_json(
            path,
            value,
            &format!("{path} in body should be at least {min} chars long"),
        ));
    }
    if let Some((source, re)) = &schema.pattern
        && !re.is_match(s)
    {
        errors.push(FieldError::invalid_json(
            path,
            value,
            &format!("{path} in body should match '{source}'"),
        ));
    }
    if let Some(format) = &schema.format
        && !formats::is_valid(format, s)
    {
        errors.push(FieldError::type_invalid(
            path,
            value,
            &format!(
                "{path} in body must be of type {format}: {}",
                field::quote(s)
            ),
        ));
    }
}

/// Go's `%v` of a float64 bound: integral bounds print without a fraction.
fn bound(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{}", f as i64)
    } else {
        f.to_string()
    }
}

fn validate_number(
    schema: &Structural,
    path: &str,
    value: &Value,
    n: f64,
    errors: &mut Vec<FieldError>,
) {
    if let Some(factor) = schema.multiple_of.filter(|f| *f > 0.0)
        && (n / factor).fract() != 0.0
    {
        errors.push(FieldError::invalid_json(
            path,
            value,
            &format!("{path} in body should be a multiple of {}", bound(factor)),
        ));
    }
    if let Some((max, exclusive)) = schema.maximum
        && (n > max || (exclusive && n == max))
    {
        let rel = if exclusive {
            "less than"
        } else {
            "less than or equal to"
        };
        errors.push(FieldError::invalid_json(
            path,
            value,
            &format!("{path} in body should be {rel} {}", bound(max)),
        ));
    }
    if let Some((min, exclusive)) = schema.minimum
        && (n < min || (exclusive && n == min))
    {
        let rel = if exclusive {
            "greater than"
        } else {
            "greater than or equal to"
        };
        errors.push(FieldError::invalid_json(
            path,
            value,
            &format!("{path} in body should be {rel} {}", bound(min)),
        ));
    }
}

/// `minItems`/`maxItems` or `minProperties`/`maxProperties`: too few is kube-openapi's
/// `TooFewItems`/`TooFewProperties` as `field.Invalid`, too many is `field.TooMany`.
fn validate_count(
    path: &str,
    (size, min, max): (u64, Option<u64>, Option<u64>),
    unit: &str,
    errors: &mut Vec<FieldError>,
) {
    if let Some(min) = min.filter(|m| size < *m) {
        errors.push(FieldError::invalid_rendered(
            path,
            &size.to_string(),
            &format!("{path} in body should have at least {min} {unit}"),
        ));
    }
    if let Some(max) = max.filter(|m| size > *m) {
        errors.push(FieldError::too_many(path, size, max));
    }
}

fn validate_array(
    schema: &Structural,
    path: &str,
    items: &[Value],
    old: Option<&Value>,
    errors: &mut Vec<FieldError>,
) {
    let counted = (items.len() as u64, schema.min_items, schema.max_items);
    validate_count(path, counted, "items", errors);
    if let Some(item_schema) = &schema.items {
        for (i, item) in items.iter().enumerate() {
            let old_item = ratcheting::item(schema, item, old);
            validate(item_schema, &field::index(path, i), item, old_item, errors);
        }
    }
}

fn validate_object(
    schema: &Structural,
    path: &str,
    map: &serde_json::Map<String, Value>,
    old: Option<&Value>,
    errors: &mut Vec<FieldError>,
) {
    let counted = (
        map.len() as u64,
        schema.min_properties,
        schema.max_properties,
    );
    validate_count(path, counted, "properties", errors);
    let skips_meta = path.is_empty() || schema.embedded_resource;
    // kube-openapi's objectValidator: the properties' own errors (in name order), then the
    // required ones that are missing.
    for (name, value) in map {
        if skips_meta && is_meta_field(name) {
            continue;
        }
        if let Some(child) = schema.child(name) {
            let old_value = ratcheting::child(old, name);
            validate(child, &field::child(path, name), value, old_value, errors);
        }
    }
    for name in &schema.required {
        let envelope = skips_meta && is_meta_field(name);
        if !map.contains_key(name) && !envelope {
            errors.push(FieldError::required(&field::child(path, name)));
        }
    }
}

/// Fields of an object's envelope that the object-meta validation owns.
pub(crate) fn is_meta_field(name: &str) -> bool {
    matches!(name, "apiVersion" | "kind" | "metadata")
}
