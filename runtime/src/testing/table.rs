//! The alternative representations clients negotiate with `Accept: ...;as=<Kind>;g=meta.k8s.io;v=v1`:
//! `Table` (`kubectl get`) and `PartialObjectMetadata` (kube's metadata watches and lists).

use std::collections::HashMap;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::resources::ResourceInfo;

/// A human age like kubectl's (apimachinery `duration.HumanDuration`, shortened).
pub fn human_age(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        s if s < 120 => format!("{s}s"),
        s if s < 600 => {
            let (m, r) = (s / 60, s % 60);
            if r == 0 {
                format!("{m}m")
            } else {
                format!("{m}m{r}s")
            }
        }
        s if s < 3 * 3600 => format!("{}m", s / 60),
        s if s < 8 * 3600 => {
            let (h, m) = (s / 3600, (s % 3600) / 60);
            if m == 0 {
                format!("{h}h")
            } else {
                format!("{h}h{m}m")
            }
        }
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// The first value a printer column's JSONPath selects in `obj` (`Null` if none), as
/// kube-apiserver's table convertor does: fields (`.spec.image`), indices (`[0]`), wildcards
/// (`[*]`) and equality filters (`[?(@.type=="Ready")]`).
fn json_path(obj: &Value, path: &str) -> Value {
    select(obj, path)
        .into_iter()
        .next()
        .cloned()
        .unwrap_or(Value::Null)
}

fn select<'v>(obj: &'v Value, path: &str) -> Vec<&'v Value> {
    let mut current = vec![obj];
    let mut rest = path.trim().trim_start_matches('{').trim_end_matches('}');
    loop {
        rest = rest.trim_start_matches('.');
        if rest.is_empty() {
            return current;
        }
        if let Some(bracket) = rest.strip_prefix('[') {
            // A filter may contain ']' and '.' inside its quotes: it ends at ")]".
            let (inner, after) = match bracket.strip_prefix("?(") {
                Some(filter) => match filter.find(")]") {
                    Some(end) => (&bracket[..end + 3], &filter[end + 2..]),
                    None => return Vec::new(),
                },
                None => match bracket.find(']') {
                    Some(end) => (&bracket[..end], &bracket[end + 1..]),
                    None => return Vec::new(),
                },
            };
            current =
                if let Some(filter) = inner.strip_prefix("?(").and_then(|f| f.strip_suffix(')')) {
                    let Some((field, wanted)) = filter.split_once("==") else {
                        return Vec::new();
                    };
                    let field = field.trim().trim_start_matches('@');
                    let wanted = wanted.trim();
                    let wanted = wanted
                        .strip_prefix('"')
                        .and_then(|w| w.strip_suffix('"'))
                        .or_else(|| wanted.strip_prefix('\'').and_then(|w| w.strip_suffix('\'')))
                        .map_or_else(
                            || serde_json::from_str(wanted).unwrap_or(Value::Null),
                            |w| Value::String(w.to_owned()),
                        );
                    current
                        .into_iter()
                        .filter_map(Value::as_array)
                        .flatten()
                        .filter(|item| select(item, field).first() == Some(&&wanted))
                        .collect()
                } else if inner == "*" {
                    current
                        .into_iter()
                        .flat_map(|v| match v {
                            Value::Array(items) => items.iter().collect::<Vec<_>>(),
                            Value::Object(map) => map.values().collect(),
                            _ => Vec::new(),
                        })
                        .collect()
                } else if let Ok(index) = inner.parse::<usize>() {
                    current.into_iter().filter_map(|v| v.get(index)).collect()
                } else {
                    return Vec::new();
                };
            rest = after;
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            let key = &rest[..end];
            current = current.into_iter().filter_map(|v| v.get(key)).collect();
            rest = &rest[end..];
        }
    }
}

/// An object as `PartialObjectMetadata`: its metadata only.
pub fn partial(object: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": object["metadata"]})
}

/// A list as `PartialObjectMetadataList`.
pub fn partial_list(list: &Value) -> Value {
    let items: Vec<Value> = list["items"]
        .as_array()
        .map(|items| items.iter().map(partial).collect())
        .unwrap_or_default();
    json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
        "metadata": list["metadata"], "items": items})
}

/// The table of `objects` (already in the served view).
pub fn table(
    info: &ResourceInfo,
    objects: &[Value],
    list_meta: Option<&Value>,
    query: &HashMap<String, String>,
    now: Timestamp,
) -> Value {
    let mut columns = vec![json!({"name": "Name", "type": "string", "format": "name",
        "description": "Name must be unique within a namespace.", "priority": 0})];
    for col in &info.printer_columns {
        columns.push(json!({
            "name": col["name"], "type": col["type"], "format": col["format"].as_str().unwrap_or(""),
            "description": col["description"].as_str().unwrap_or(""),
            "priority": col["priority"].as_i64().unwrap_or(0),
        }));
    }
    // As kube-apiserver: a resource without printer columns shows Name and Age; one with them
    // shows Name and its columns (a CRD lists Age itself when it wants it).
    let default_age = info.printer_columns.is_empty();
    if default_age {
        columns.push(json!({"name": "Age", "type": "date", "format": "",
            "description": "CreationTimestamp is a timestamp representing the server time when this object was created.",
            "priority": 0}));
    }
    let include = query
        .get("includeObject")
        .map(String::as_str)
        .unwrap_or("Metadata");
    let rows: Vec<Value> = objects
        .iter()
        .map(|obj| {
            let mut cells = vec![obj["metadata"]["name"].clone()];
            let age_of = |value: &Value| {
                value
                    .as_str()
                    .and_then(|t| t.parse::<Timestamp>().ok())
                    .map(|t| human_age(now.as_second() - t.as_second()))
            };
            for col in &info.printer_columns {
                let cell = json_path(obj, col["jsonPath"].as_str().unwrap_or_default());
                // Date columns are shown as ages, as the apiserver's table convertor does.
                let cell = match col["type"].as_str() {
                    Some("date") => age_of(&cell).map_or(cell, Value::String),
                    _ => cell,
                };
                cells.push(cell);
            }
            if default_age {
                let age = age_of(&obj["metadata"]["creationTimestamp"])
                    .unwrap_or_else(|| "<unknown>".into());
                cells.push(json!(age));
            }
            let mut row = json!({"cells": cells});
            match include {
                "None" => {}
                "Object" => row["object"] = obj.clone(),
                _ => {
                    row["object"] = json!({"kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]});
                }
            }
            row
        })
        .collect();
    let mut meta = json!({});
    if let Some(m) = list_meta {
        meta = m.clone();
    }
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": meta,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

#[cfg(test)]
mod tests {
    use super::{human_age, json_path};
    use serde_json::json;

    #[test]
    fn printer_column_paths_select_fields_indices_and_filtered_items() {
        let obj = json!({"spec": {"image": "web:1"}, "status": {"conditions": [
            {"type": "Ready", "reason": "Up", "status": "True"},
            {"type": "UpToDate", "reason": "Applied", "status": "True"},
        ]}});
        assert_eq!(json_path(&obj, ".spec.image"), json!("web:1"));
        assert_eq!(
            json_path(&obj, ".status.conditions[1].reason"),
            json!("Applied")
        );
        assert_eq!(
            json_path(&obj, ".status.conditions[?(@.type==\"UpToDate\")].reason"),
            json!("Applied")
        );
        assert_eq!(
            json_path(&obj, ".status.conditions[?(@.type=='Ready')].reason"),
            json!("Up")
        );
        assert_eq!(
            json_path(&obj, ".status.conditions[*].type"),
            json!("Ready")
        );
        assert_eq!(
            json_path(&obj, ".status.conditions[?(@.type==\"Gone\")].reason"),
            json!(null)
        );
        assert_eq!(json_path(&obj, ".spec.missing"), json!(null));
    }

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_age(5), "5s");
        assert_eq!(human_age(150), "2m30s");
        assert_eq!(human_age(3600), "60m");
        assert_eq!(human_age(4 * 3600 + 60), "4h1m");
        assert_eq!(human_age(30 * 3600), "30h");
        assert_eq!(human_age(3 * 86400), "3d");
    }
}
