//! Generic helpers on JSON objects as stored: metadata fields, timestamps, generated names, and
//! the generation-relevant part of an object.

use jiff::Timestamp;
use rand::Rng;
use serde_json::{Map, Value, json};

/// The JSON fields of `metav1.ObjectMeta`, in declaration order.
pub(crate) const OBJECT_META_FIELDS: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// Characters of generated name suffixes (apimachinery `util/rand`: no vowels, no confusables).
pub(crate) const NAME_SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Length of the random suffix appended to `generateName` (apiserver `names.SimpleNameGenerator`).
pub(crate) const NAME_SUFFIX_LEN: usize = 5;

/// The longest prefix of `generateName` kept (63 - 5; `maxGeneratedNameLength`).
pub(crate) const MAX_GENERATE_NAME_PREFIX: usize = 58;

/// RFC 3339 with whole seconds, the wire form of `metav1.Time`.
pub(crate) fn rfc3339(ts: Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj["metadata"][field].as_str()
}

/// The strings of a JSON list (none if it is not one).
pub(crate) fn string_list(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The `metadata.finalizers` of an object.
pub(crate) fn finalizers(obj: &Value) -> Vec<String> {
    string_list(&obj["metadata"]["finalizers"])
}

/// `metadata` as a map, made one if it is not.
pub(crate) fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata was just made an object")
}

/// What `metadata.generation` is computed over: everything but metadata (and status when the
/// status subresource owns it).
pub(crate) fn generation_relevant(obj: &Value, status_subresource: bool) -> Value {
    let mut c = obj.clone();
    if let Some(m) = c.as_object_mut() {
        m.remove("metadata");
        m.remove("apiVersion");
        m.remove("kind");
        if status_subresource {
            m.remove("status");
        }
    }
    c
}

/// Sets `new[key]` to `old[key]` (`null` when `old` has none), as a strategy keeps a stored
/// field; copied only when the two differ (a status write's spec is mostly the stored one).
pub(crate) fn keep_stored(new: &mut Value, old: &Value, key: &str) {
    if new.get(key) != Some(&old[key]) {
        new[key] = old[key].clone();
    }
}

/// `value` without the nulls, empty strings and empty objects a Go type's zero values encode
/// to (metadata kept whole).
pub(crate) fn without_zero_values(mut value: Value) -> Value {
    pub(super) fn prune(value: &mut Value) {
        if let Value::Object(map) = value {
            map.values_mut().for_each(prune);
            map.retain(|_, v| match v {
                Value::Null => false,
                Value::String(s) => !s.is_empty(),
                Value::Object(m) => !m.is_empty(),
                _ => true,
            });
        }
    }
    if let Value::Object(map) = &mut value {
        for (key, v) in map.iter_mut() {
            if key != "metadata" {
                prune(v);
            }
        }
        map.retain(|key, v| key == "metadata" || !(v.is_null() || v == "" || v == &json!({})));
    }
    value
}

/// `prefix` (cut to 58 bytes) plus 5 random characters, like `names.SimpleNameGenerator`.
pub(super) fn generate_name(prefix: &str) -> String {
    let mut cut = prefix.len().min(MAX_GENERATE_NAME_PREFIX);
    while !prefix.is_char_boundary(cut) {
        cut -= 1;
    }
    let mut rng = rand::rng();
    let suffix: String = (0..NAME_SUFFIX_LEN)
        .map(|_| NAME_SUFFIX_ALPHABET[rng.random_range(0..NAME_SUFFIX_ALPHABET.len())] as char)
        .collect();
    format!("{}{suffix}", &prefix[..cut])
}
