//! Manifests as YAML, for `kubectl apply -f`: a small writer for JSON values (an operator prints
//! its CRD and its RBAC with it: [`Operator::rbac_yaml`](crate::operator::Operator::rbac_yaml)).
//! Strings are written double-quoted in JSON syntax, which YAML reads as the same string, so no
//! value is ever misread (`"on"`, `"1.0"`, `"null"` stay strings).

use serde_json::Value;

/// `value` as a YAML document (block style; empty maps and lists inline).
///
/// ```
/// let yaml = kubeward::manifest::to_yaml(&serde_json::json!({
///     "kind": "ClusterRole", "rules": [{"verbs": ["get", "list"]}], "labels": {},
/// }));
/// assert_eq!(yaml, "kind: \"ClusterRole\"\nlabels: {}\nrules:\n- verbs:\n  - \"get\"\n  - \"list\"\n");
/// ```
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    write_document(&mut out, value);
    out
}

/// `values` as one YAML stream: each a document, separated by `---` lines.
///
/// ```
/// let yaml = kubeward::manifest::to_yaml_documents(&[
///     serde_json::json!({"kind": "ServiceAccount"}),
///     serde_json::json!({"kind": "ClusterRole"}),
/// ]);
/// assert_eq!(yaml, "kind: \"ServiceAccount\"\n---\nkind: \"ClusterRole\"\n");
/// ```
pub fn to_yaml_documents(values: &[Value]) -> String {
    let mut out = String::new();
    for (index, value) in values.iter().enumerate() {
        if index > 0 {
            out.push_str("---\n");
        }
        write_document(&mut out, value);
    }
    out
}

fn write_document(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) if !map.is_empty() => write_map(out, map, 0),
        Value::Array(items) if !items.is_empty() => write_list(out, items, 0),
        scalar => {
            out.push_str(&inline(scalar));
            out.push('\n');
        }
    }
}

fn write_map(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    for (i, (key, value)) in map.iter().enumerate() {
        // The first key of a list item shares the "- " line.
        if i > 0 || indent == 0 || !out.ends_with("- ") {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(&key_text(key));
        out.push(':');
        write_value(out, value, indent);
    }
}

fn write_list(out: &mut String, items: &[Value], indent: usize) {
    for item in items {
        out.push_str(&" ".repeat(indent));
        out.push_str("- ");
        match item {
            Value::Object(map) if !map.is_empty() => write_map(out, map, indent + 2),
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                write_list(out, inner, indent + 2);
            }
            scalar => {
                out.push_str(&inline(scalar));
                out.push('\n');
            }
        }
    }
}

/// After `key:` — a nested block on the next lines, or an inline scalar.
fn write_value(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            write_map(out, map, indent + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            write_list(out, items, indent);
        }
        scalar => {
            out.push(' ');
            out.push_str(&inline(scalar));
            out.push('\n');
        }
    }
}

fn inline(value: &Value) -> String {
    match value {
        Value::Object(_) => "{}".to_owned(),
        Value::Array(_) => "[]".to_owned(),
        // JSON scalars are YAML flow scalars with the same meaning.
        other => other.to_string(),
    }
}

fn key_text(key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && key.starts_with(|c: char| c.is_ascii_alphabetic());
    if plain {
        key.to_owned()
    } else {
        Value::String(key.to_owned()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nested_maps_and_lists_are_indented_and_strings_stay_strings() {
        let value = json!({
            "a": {"b": {"c": "on"}, "list": [{"x": 1, "y": [true, null]}, "1.0"]},
            "x-kubernetes-preserve-unknown-fields": true,
            "$ref": "r",
        });
        assert_eq!(
            to_yaml(&value),
            "\"$ref\": \"r\"\na:\n  b:\n    c: \"on\"\n  list:\n  - x: 1\n    y:\n    - true\n    - null\n  - \"1.0\"\nx-kubernetes-preserve-unknown-fields: true\n"
        );
    }
}
