//! Pruning of fields a structural schema does not declare
//! (apiextensions-apiserver `pkg/apiserver/schema/pruning/algorithm.go`): unknown fields are
//! dropped, except under `x-kubernetes-preserve-unknown-fields`; the envelope of the object
//! (`apiVersion`, `kind`, `metadata`) and of embedded resources is kept, but for fields
//! `metadata` does not have (ObjectMeta is decoded into its Go type, for every kind).

use serde_json::Value;

use super::field;
use super::structural::Structural;
use super::validation::is_meta_field;
use crate::object::OBJECT_META_FIELDS;

/// Prunes `value` (the object at the root when `path` is empty), returning the paths of the
/// fields removed (`spec.foo`, `spec.items[0].bar`), sorted as upstream sorts them.
pub(crate) fn prune(schema: &Structural, path: &str, value: &mut Value) -> Vec<String> {
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
                    if name == "metadata" {
                        pruned.extend(prune_object_meta(&field::child(path, name), v));
                    }
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

/// Drops the fields of an object's `metadata` (at `path`) that ObjectMeta does not have,
/// returning their paths (`metadata.colour`).
pub(crate) fn prune_object_meta(path: &str, metadata: &mut Value) -> Vec<String> {
    let Value::Object(map) = metadata else {
        return Vec::new();
    };
    let unknown: Vec<String> = map
        .keys()
        .filter(|k| !OBJECT_META_FIELDS.contains(&k.as_str()))
        .cloned()
        .collect();
    for name in &unknown {
        map.remove(name);
    }
    unknown.iter().map(|n| field::child(path, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metadata_keeps_only_object_meta_fields_in_every_envelope() {
        let schema = Structural::from_json(
            &json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "r": {"type": "object", "x-kubernetes-embedded-resource": true,
                      "x-kubernetes-preserve-unknown-fields": true}}}}}),
        );
        let mut obj = json!({"apiVersion": "v1", "kind": "X",
            "metadata": {"name": "x", "labels": {"a": "b"}, "colour": "red"},
            "spec": {"r": {"kind": "ConfigMap", "metadata": {"name": "y", "junk": 1}, "data": {"k": "v"}}}});
        assert_eq!(
            prune(&schema, "", &mut obj),
            ["metadata.colour", "spec.r.metadata.junk"]
        );
        assert_eq!(obj["metadata"], json!({"name": "x", "labels": {"a": "b"}}));
        assert_eq!(obj["spec"]["r"]["metadata"], json!({"name": "y"}));
        assert_eq!(obj["spec"]["r"]["data"], json!({"k": "v"}));
    }
}
