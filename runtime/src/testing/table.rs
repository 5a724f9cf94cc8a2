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

fn json_path(obj: &Value, path: &str) -> Value {
    let mut cur = obj;
    for part in path
        .trim_start_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
    {
        cur = &cur[part];
    }
    cur.clone()
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
    columns.push(json!({"name": "Age", "type": "date", "format": "",
        "description": "CreationTimestamp is a timestamp representing the server time when this object was created.",
        "priority": 0}));
    let include = query
        .get("includeObject")
        .map(String::as_str)
        .unwrap_or("Metadata");
    let rows: Vec<Value> = objects
        .iter()
        .map(|obj| {
            let mut cells = vec![obj["metadata"]["name"].clone()];
            for col in &info.printer_columns {
                cells.push(json_path(obj, col["jsonPath"].as_str().unwrap_or_default()));
            }
            let age = obj["metadata"]["creationTimestamp"]
                .as_str()
                .and_then(|t| t.parse::<Timestamp>().ok())
                .map(|t| human_age(now.as_second() - t.as_second()))
                .unwrap_or_else(|| "<unknown>".into());
            cells.push(json!(age));
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
    use super::human_age;

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
