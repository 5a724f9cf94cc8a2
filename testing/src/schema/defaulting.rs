//! `default`s of a structural schema applied to an object, and `null`s the schema cannot hold
//! dropped (apiextensions-apiserver `pkg/apiserver/schema/defaulting/algorithm.go` and
//! `prunenulls.go`): a property that is missing, or `null` where the schema is not nullable,
//! takes its default; defaults apply inside defaults, to list items and to map values; a `null`
//! of a non-nullable field without a default is removed rather than rejected.

use serde_json::Value;

use super::structural::Structural;

/// Applies the defaults of `schema` inside `value`, then drops the nulls left without one.
pub(crate) fn apply(schema: &Structural, value: &mut Value) {
    default(schema, value);
    prune_nulls(schema, value);
}

fn non_nullable_null(value: &Value, schema: &Structural) -> bool {
    value.is_null() && !schema.nullable
}

fn default(schema: &Structural, value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (name, prop) in &schema.properties {
                let Some(default) = &prop.default else {
                    continue;
                };
                if map.get(name).is_none_or(|v| non_nullable_null(v, prop)) {
                    map.insert(name.clone(), default.clone());
                }
            }
            for (name, v) in map.iter_mut() {
                let Some(child) = schema.child(name) else {
                    continue;
                };
                if let Some(d) = &child.default
                    && non_nullable_null(v, child)
                {
                    *v = d.clone();
                }
                default(child, v);
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = &schema.items else {
                return;
            };
            for item in items {
                if let Some(d) = &item_schema.default
                    && non_nullable_null(item, item_schema)
                {
                    *item = d.clone();
                }
                default(item_schema, item);
            }
        }
        _ => {}
    }
}

fn prune_nulls(schema: &Structural, value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|name, v| match schema.child(name) {
                Some(child) => !(non_nullable_null(v, child) && child.default.is_none()),
                None => true,
            });
            for (name, v) in map.iter_mut() {
                if let Some(child) = schema.child(name) {
                    prune_nulls(child, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for item in items {
                    prune_nulls(item_schema, item);
                }
            }
        }
        _ => {}
    }
}
