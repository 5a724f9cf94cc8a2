//! A Deployment's pod templates: the pod-template hash naming its ReplicaSets
//! (`controller.ComputeHash`, `generateReplicaSetName`) and the comparison that finds the
//! ReplicaSet of the current template (`EqualIgnoreHash`).
//!
//! The hash: upstream's `controller.ComputeHash` is FNV-32a over a `spew` dump of the Go
//! `PodTemplateSpec` (then the `collisionCount`, little-endian), printed in decimal and encoded
//! with `rand.SafeEncodeString`. A spew dump of a Go struct cannot be reproduced from JSON, so
//! here FNV-32a runs over the template's canonical JSON (keys sorted, no spaces): the names
//! have upstream's shape (`web-7d9c5b8f6` style, from the same alphabet) and are stable for a
//! template, but are not the bytes a real cluster computes.

use serde_json::Value;

use crate::workloads::history::{fnv1a_32, safe_encode};

/// `apps.DefaultDeploymentUniqueLabelKey`.
pub(crate) const HASH_LABEL: &str = "pod-template-hash";

/// `template` without the `pod-template-hash` label and without empty or null fields (the
/// `Semantic.DeepEqual` of `EqualIgnoreHash`, where an empty and a missing list are equal).
fn normalized_template(template: &Value) -> Value {
    let mut template = template.clone();
    if let Some(labels) = template["metadata"]["labels"].as_object_mut() {
        labels.remove(HASH_LABEL);
    }
    prune(&mut template);
    template
}

fn prune(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for v in map.values_mut() {
                prune(v);
            }
            map.retain(|_, v| !is_empty(v));
        }
        Value::Array(items) => items.iter_mut().for_each(prune),
        _ => {}
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// `EqualIgnoreHash`.
pub(crate) fn equal_ignore_hash(t1: &Value, t2: &Value) -> bool {
    normalized_template(t1) == normalized_template(t2)
}

/// The JSON of `value` with object keys sorted and no spaces.
fn canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical_json(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// `controller.ComputeHash`, over the template's canonical JSON (see the module doc).
pub(crate) fn compute_hash(template: &Value, collision_count: Option<i64>) -> String {
    let mut text = String::new();
    canonical_json(template, &mut text);
    let mut count_bytes = Vec::new();
    if let Some(count) = collision_count {
        // binary.LittleEndian.PutUint32 into 8 bytes: the uint32, then four zeros.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        count_bytes.extend((count as u32).to_le_bytes());
        count_bytes.extend([0; 4]);
    }
    safe_encode(&fnv1a_32(&[text.as_bytes(), &count_bytes]).to_string())
}

/// `generateReplicaSetName`: `<deployment>-<hash>`, the name cut to fit 253 characters.
pub(crate) fn replica_set_name(deployment: &str, hash: &str) -> String {
    let max = 253usize.saturating_sub(1 + hash.len());
    let base = if deployment.len() > max && max > 0 {
        &deployment[..max]
    } else {
        deployment
    };
    format!("{base}-{hash}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_hash_is_stable_safe_and_moved_by_the_collision_count() {
        let template = json!({"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "app", "image": "nginx"}]}});
        let reordered = json!({"spec": {"containers": [{"image": "nginx", "name": "app"}]},
                               "metadata": {"labels": {"app": "web"}}});
        let hash = compute_hash(&template, None);
        assert_eq!(hash, compute_hash(&reordered, None));
        assert!(
            hash.bytes()
                .all(|b| crate::object::NAME_SUFFIX_ALPHABET.contains(&b))
        );
        assert_ne!(hash, compute_hash(&template, Some(1)));
        assert_eq!(replica_set_name("web", "abc"), "web-abc");
        assert_eq!(replica_set_name(&"x".repeat(260), "abc").len(), 253);
    }

    #[test]
    fn templates_compare_without_the_hash_label_and_empty_fields() {
        let d = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "a"}]}});
        let rs = json!({"metadata": {"labels": {"app": "web", HASH_LABEL: "x"}, "annotations": {}},
                        "spec": {"containers": [{"name": "a", "env": []}]}});
        assert!(equal_ignore_hash(&d, &rs));
        let other = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "b"}]}});
        assert!(!equal_ignore_hash(&d, &other));
    }
}
