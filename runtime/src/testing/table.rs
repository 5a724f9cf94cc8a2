//! The alternative representations clients negotiate with `Accept: ...;as=<Kind>;g=meta.k8s.io;v=v1`:
//! `Table` (`kubectl get`) and `PartialObjectMetadata` (kube's metadata watches and lists).

use std::collections::HashMap;

use jiff::Timestamp;
use serde_json::{Map, Value, json};

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

type Cell = Box<dyn Fn(&Value, Timestamp) -> Value>;

struct Column {
    name: String,
    kind: &'static str,
    format: &'static str,
    priority: i64,
    cell: Cell,
}

impl Column {
    fn new(name: &str, kind: &'static str, priority: i64, cell: Cell) -> Self {
        Self {
            name: name.into(),
            kind,
            format: if name == "Name" { "name" } else { "" },
            priority,
            cell,
        }
    }
}

fn age_since(at: Option<&str>, now: Timestamp) -> Value {
    let age = at
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map(|t| human_age(now.as_second() - t.as_second()))
        .unwrap_or_else(|| "<unknown>".into());
    json!(age)
}

fn name_column() -> Column {
    Column::new(
        "Name",
        "string",
        0,
        Box::new(|o, _| o["metadata"]["name"].clone()),
    )
}

fn age_column() -> Column {
    Column::new(
        "Age",
        "string",
        0,
        Box::new(|o, now| age_since(o["metadata"]["creationTimestamp"].as_str(), now)),
    )
}

fn count(v: &Value) -> usize {
    v.as_object().map(Map::len).unwrap_or(0)
}

/// The columns kube-apiserver's printers (or a CRD's additionalPrinterColumns) give a resource.
fn columns(info: &ResourceInfo) -> Vec<Column> {
    match (info.group.as_str(), info.plural.as_str()) {
        // pkg/printers/internalversion printEvent.
        ("", "events") | ("events.k8s.io", "events") => {
            let core = info.group.is_empty();
            vec![
                Column::new(
                    "Last Seen",
                    "string",
                    0,
                    Box::new(move |o, now| {
                        let seen = if core {
                            o["series"]["lastObservedTime"]
                                .as_str()
                                .or(o["lastTimestamp"].as_str())
                                .or(o["eventTime"].as_str())
                        } else {
                            o["series"]["lastObservedTime"]
                                .as_str()
                                .or(o["eventTime"].as_str())
                        };
                        age_since(seen, now)
                    }),
                ),
                Column::new("Type", "string", 0, Box::new(|o, _| o["type"].clone())),
                Column::new("Reason", "string", 0, Box::new(|o, _| o["reason"].clone())),
                Column::new(
                    "Object",
                    "string",
                    0,
                    Box::new(move |o, _| {
                        let r = if core {
                            &o["involvedObject"]
                        } else {
                            &o["regarding"]
                        };
                        json!(format!(
                            "{}/{}",
                            r["kind"].as_str().unwrap_or_default().to_lowercase(),
                            r["name"].as_str().unwrap_or_default()
                        ))
                    }),
                ),
                Column::new(
                    "Message",
                    "string",
                    0,
                    Box::new(move |o, _| {
                        if core {
                            o["message"].clone()
                        } else {
                            o["note"].clone()
                        }
                    }),
                ),
                Column::new(
                    "Name",
                    "string",
                    1,
                    Box::new(|o, _| o["metadata"]["name"].clone()),
                ),
            ]
        }
        ("", "configmaps") => vec![
            name_column(),
            Column::new(
                "Data",
                "integer",
                0,
                Box::new(|o, _| json!(count(&o["data"]) + count(&o["binaryData"]))),
            ),
            age_column(),
        ],
        ("", "secrets") => vec![
            name_column(),
            Column::new("Type", "string", 0, Box::new(|o, _| o["type"].clone())),
            Column::new(
                "Data",
                "integer",
                0,
                Box::new(|o, _| json!(count(&o["data"]))),
            ),
            age_column(),
        ],
        ("", "namespaces") => vec![
            name_column(),
            Column::new(
                "Status",
                "string",
                0,
                Box::new(|o, _| o["status"]["phase"].clone()),
            ),
            age_column(),
        ],
        _ => {
            let mut cols = vec![name_column()];
            for col in &info.printer_columns {
                let path = col["jsonPath"].as_str().unwrap_or_default().to_string();
                let mut c = Column::new(
                    col["name"].as_str().unwrap_or_default(),
                    "string",
                    col["priority"].as_i64().unwrap_or(0),
                    Box::new(move |o, _| json_path(o, &path)),
                );
                c.kind = match col["type"].as_str() {
                    Some("integer") => "integer",
                    Some("number") => "number",
                    Some("boolean") => "boolean",
                    Some("date") => "date",
                    _ => "string",
                };
                cols.push(c);
            }
            cols.push(age_column());
            cols
        }
    }
}

/// The table of `objects` (already in the served view).
pub fn table(
    info: &ResourceInfo,
    objects: &[Value],
    list_meta: Option<&Value>,
    query: &HashMap<String, String>,
    now: Timestamp,
) -> Value {
    let columns = columns(info);
    let definitions: Vec<Value> = columns
        .iter()
        .map(|c| {
            json!({"name": c.name, "type": c.kind, "format": c.format, "description": "",
                "priority": c.priority})
        })
        .collect();
    let include = query
        .get("includeObject")
        .map(String::as_str)
        .unwrap_or("Metadata");
    let rows: Vec<Value> = objects
        .iter()
        .map(|obj| {
            let cells: Vec<Value> = columns.iter().map(|c| (c.cell)(obj, now)).collect();
            let mut row = json!({"cells": cells});
            match include {
                "None" => {}
                "Object" => row["object"] = obj.clone(),
                _ => row["object"] = partial(obj),
            }
            row
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta.cloned().unwrap_or_else(|| json!({})),
        "columnDefinitions": definitions,
        "rows": rows,
    })
}
