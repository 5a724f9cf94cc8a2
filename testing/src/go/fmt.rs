//! How Go prints the values kube-apiserver quotes in some errors:
//!
//! - [`merge_patched`]: `encoding/json`'s bytes of a JSON-merge-patched document as
//!   evanphx/json-patch builds them — every object the patch touched re-encoded with its keys
//!   sorted, every value it did not touch kept as the server encoded it (a struct's fields in
//!   their declaration order: `metadata` as `ObjectMeta` declares them);
//! - [`fmt_plus_v`]: `fmt`'s `%+v` of a value decoded into `interface{}`
//!   (`map[extra:1 labels:map[a:b]]`);
//! - [`fmt_v`], [`fmt_s`], [`type_of`], [`type_name`]: `fmt`'s `%v` and `%s` of such a value,
//!   and its type as `reflect` and `%T` print it (`map[a:1 b:[x y]]`, `[]interface {}`);
//! - [`go_quote`]: `%q` of a string.
//!
//! Strings are escaped as `encoding/json` escapes them, HTML characters included.

use serde_json::{Map, Value};

use crate::object::OBJECT_META_FIELDS as OBJECT_META;

/// `OwnerReference`'s fields in declaration order.
const OWNER_REFERENCE: &[&str] = &[
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];

/// `ManagedFieldsEntry`'s fields in declaration order.
const MANAGED_FIELDS_ENTRY: &[&str] = &[
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];

/// Go's `%q` of a string, for error texts (names, durations, resource versions, field values):
/// close enough to `strconv.Quote` there, escaping `"`, `\` and control characters.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The bytes of `merged`, the result of merge-patching `original` with `patch`, as the JSON
/// merge patch library encodes it (see the [module](self)); `original` is a stored object.
pub(crate) fn merge_patched(original: &Value, patch: &Value, merged: &Value) -> String {
    let mut out = String::new();
    lazy(Some(original), patch, merged, &mut out);
    out
}

/// Encodes `merged`: an object the patch touched (both objects) has its keys sorted and its
/// children encoded the same way; anything else is encoded as stored (untouched) or as the
/// patch gave it.
fn lazy(original: Option<&Value>, patch: &Value, merged: &Value, out: &mut String) {
    match (original, patch, merged) {
        (Some(Value::Object(old)), Value::Object(patch), Value::Object(merged)) => {
            out.push('{');
            for (i, (key, value)) in merged.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(key, out);
                out.push(':');
                match patch.get(key) {
                    Some(patched) => lazy(old.get(key), patched, value, out),
                    None => stored(key, value, out),
                }
            }
            out.push('}');
        }
        _ => sorted(merged, out),
    }
}

/// An untouched value as the server encoded it: `metadata` (and its owner references and
/// managed fields) in field order, maps with sorted keys.
fn stored(key: &str, value: &Value, out: &mut String) {
    match (key, value) {
        ("metadata", Value::Object(map)) => ordered(map, &OBJECT_META, out),
        _ => sorted(value, out),
    }
}

/// An object of a struct type whose fields are `order`.
fn ordered(map: &Map<String, Value>, order: &[&str], out: &mut String) {
    out.push('{');
    let mut first = true;
    for field in order {
        let Some(value) = map.get(*field) else {
            continue;
        };
        if !first {
            out.push(',');
        }
        first = false;
        string(field, out);
        out.push(':');
        match (*field, value) {
            ("ownerReferences", Value::Array(items)) => list(items, OWNER_REFERENCE, out),
            ("managedFields", Value::Array(items)) => list(items, MANAGED_FIELDS_ENTRY, out),
            _ => sorted(value, out),
        }
    }
    out.push('}');
}

fn list(items: &[Value], order: &[&str], out: &mut String) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match item {
            Value::Object(map) => ordered(map, order, out),
            other => sorted(other, out),
        }
    }
    out.push(']');
}

/// `value` as `encoding/json` encodes a decoded value: map keys sorted.
fn sorted(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(key, out);
                out.push(':');
                sorted(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                sorted(item, out);
            }
            out.push(']');
        }
        Value::String(s) => string(s, out),
        other => out.push_str(&other.to_string()),
    }
}

/// A JSON string as `encoding/json` writes it.
fn string(s: &str, out: &mut String) {
    out.push_str(&super::json::marshal(&Value::String(s.to_owned())));
}

/// `fmt.Sprintf("%+v", v)` of a value decoded into `interface{}`: maps as
/// `map[k:v k2:v2]` (keys sorted), slices as `[a b]`, strings bare, `null` as `<nil>`.
pub(crate) fn fmt_plus_v(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}:{}", fmt_plus_v(v)))
                .collect();
            format!("map[{}]", items.join(" "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(fmt_plus_v).collect();
            format!("[{}]", items.join(" "))
        }
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".into(),
        Value::Number(n) => match n.as_f64() {
            // A float64 prints as `%v` does: integral values without a fraction.
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
            _ => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
    }
}

/// `fmt.Sprintf("%v", v)` of a value `encoding/json` decoded into an `interface{}`.
pub(crate) fn fmt_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(fmt_v).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k}:{}", fmt_v(v)))
                .collect();
            format!("map[{}]", entries.join(" "))
        }
    }
}

/// `fmt.Sprintf("%s", v)`: strings as they are, anything else as Go's `%!s(type=value)`.
pub(crate) fn fmt_s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "%!s(<nil>)".into(),
        other => format!("%!s({}={})", type_of(Some(other)), fmt_v(other)),
    }
}

/// `reflect.TypeOf(v).String()` (`%s` of a nil `reflect.Type` for a missing value), with
/// integers decoded as `int64` and other numbers as `float64`, as the apiserver decodes
/// patches (`UnmarshalCaseSensitivePreserveInts`).
pub(crate) fn type_of(v: Option<&Value>) -> &'static str {
    match v {
        None | Some(Value::Null) => "%!s(<nil>)",
        Some(Value::Bool(_)) => "bool",
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => "int64",
        Some(Value::Number(_)) => "float64",
        Some(Value::String(_)) => "string",
        Some(Value::Array(_)) => "[]interface {}",
        Some(Value::Object(_)) => "map[string]interface {}",
    }
}

/// `fmt.Sprintf("%T", v)` of a value decoded into an `interface{}`: [`type_of`], but `<nil>`
/// for `null`.
pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        other => type_of(Some(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_merge_patched_document_keeps_what_the_patch_did_not_touch() {
        let original = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "d", "uid": "u", "resourceVersion": "7",
                "creationTimestamp": "t"}});
        let patch = json!({"extra": 1, "data": {"k": "v<"}});
        let mut merged = original.clone();
        crate::patch::apply_merge_patch(&mut merged, &patch);
        assert_eq!(
            merge_patched(&original, &patch, &merged),
            r#"{"apiVersion":"v1","data":{"k":"v\u003c"},"extra":1,"kind":"ConfigMap","metadata":{"name":"a","namespace":"d","uid":"u","resourceVersion":"7","creationTimestamp":"t"}}"#
        );
    }

    #[test]
    fn plus_v_prints_maps_with_sorted_keys() {
        assert_eq!(
            fmt_plus_v(&json!({"extra": 1, "a": {"b": [true, "x"]}, "n": null})),
            "map[a:map[b:[true x]] extra:1 n:<nil>]"
        );
    }

    #[test]
    fn values_print_as_go_prints_them() {
        assert_eq!(
            fmt_v(&json!({"name": "b", "$patch": "delete", "n": [1, 2.5, null, true]})),
            "map[$patch:delete n:[1 2.5 <nil> true] name:b]"
        );
        assert_eq!(fmt_s(&json!("merge")), "merge");
        assert_eq!(fmt_s(&json!(1)), "%!s(int64=1)");
        assert_eq!(type_of(Some(&json!(["a"]))), "[]interface {}");
        assert_eq!(type_of(Some(&json!(1.5))), "float64");
        assert_eq!(type_name(&json!(null)), "<nil>");
        assert_eq!(type_name(&json!(2)), "int64");
    }
}
