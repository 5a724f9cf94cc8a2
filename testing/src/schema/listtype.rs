//! `x-kubernetes-list-type` `set` and `map`: duplicates are rejected
//! (apiextensions-apiserver `pkg/apiserver/schema/listtype/validation.go`).

use serde_json::{Map, Value};

use super::field::{self, FieldError};
use super::structural::Structural;

/// Validates the set and map lists inside `value`, appending duplicates to `errors`.
pub(crate) fn validate(
    schema: &Structural,
    path: &str,
    value: &Value,
    errors: &mut Vec<FieldError>,
) {
    match value {
        Value::Array(items) => {
            match schema.list_type.as_deref() {
                Some("set") => {
                    for i in duplicate_indices(items) {
                        errors.push(FieldError::duplicate(&field::index(path, i), &items[i]));
                    }
                }
                Some("map") => validate_map_list(schema, path, items, errors),
                _ => {}
            }
            if let Some(item_schema) = &schema.items {
                for (i, item) in items.iter().enumerate() {
                    validate(item_schema, &field::index(path, i), item, errors);
                }
            }
        }
        Value::Object(map) => {
            for (name, v) in map {
                if let Some(child) = schema.child(name) {
                    validate(child, &field::child(path, name), v, errors);
                }
            }
        }
        _ => {}
    }
}

/// The indices of second occurrences (each duplicated value is reported once, at its first repeat).
fn duplicate_indices(items: &[Value]) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let earlier = items[..i].iter().filter(|x| *x == item).count();
        if earlier == 1 {
            out.push(i);
        }
    }
    out
}

fn validate_map_list(
    schema: &Structural,
    path: &str,
    items: &[Value],
    errors: &mut Vec<FieldError>,
) {
    for (i, item) in items.iter().enumerate() {
        if !item.is_object() && !item.is_null() {
            errors.push(FieldError::invalid_json(
                &field::index(path, i),
                item,
                "must be an object for an array of list-type map",
            ));
            return;
        }
    }
    let keys: Vec<Value> = items.iter().map(|item| map_key(schema, item)).collect();
    for i in duplicate_indices(&keys) {
        errors.push(FieldError::duplicate(&field::index(path, i), &keys[i]));
    }
}

/// The key fields of a map-list item, as an object of the keys it sets.
pub(crate) fn map_key(schema: &Structural, item: &Value) -> Value {
    let mut key = Map::new();
    for k in &schema.list_map_keys {
        if let Some(v) = item.get(k) {
            key.insert(k.clone(), v.clone());
        }
    }
    Value::Object(key)
}
