//! Pruning of fields a structural schema does not declare
//! (apiextensions-apiserver `pkg/apiserver/schema/pruning/algorithm.go`): unknown fields are
//! dropped, except under `x-kubernetes-preserve-unknown-fields`; the envelope of the object
//! (`apiVersion`, `kind`, `metadata`) and of embedded resources is kept.

use serde_json::Value;

use super::field;
use super::structural::Structural;
use super::validation::is_meta_field;

/// Prunes `value` (the object at the root when `path` is empty), returning the paths of the
/// fields removed (`spec.foo`, `spec.items[0].bar`), sorted as upstream sorts them.
pub fn prune(schema: &Structural, path: &str, value: &mut Value) -> Vec<String> {
    let mut pruned = Vec::new();
    walk(schema, path, value, path.is_empty(), &mut pruned);
    pruned.sort();
    pruned
}

fn walk(
    schema: &Structural,
    path: &str,
    value: &mut Value,
    envelope: bool,
    pruned: &mut Vec<String>,
) {
    match value {
        Value::Object(map) => {
            let keeps_envelope = envelope || schema.embedded_resource;
            let mut unknown = Vec::new();
            for (name, v) in map.iter_mut() {
                if keeps_envelope && is_meta_field(name) {
                    continue;
                }
                match schema.child(name) {
                    Some(child) => walk(child, &field::child(path, name), v, false, pruned),
                    None if schema.preserve_unknown_fields => {}
                    None => unknown.push(name.clone()),
                }
            }
            for name in unknown {
                map.remove(&name);
                pruned.push(field::child(path, &name));
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(item_schema, &field::index(path, i), item, false, pruned);
                }
            }
        }
        _ => {}
    }
}
