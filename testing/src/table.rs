//! The alternative representations clients negotiate with `Accept: ...;as=<Kind>;g=meta.k8s.io;v=v1`:
//! `Table` (`kubectl get`) and `PartialObjectMetadata` (kube's metadata watches and lists).

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use super::negotiation::IncludeObject;
use super::resources::ResourceInfo;

/// A human age like kubectl's (apimachinery `duration.HumanDuration`, shortened).
pub(crate) fn human_age(seconds: i64) -> String {
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
pub(crate) fn partial(object: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": object["metadata"]})
}

/// A list as `PartialObjectMetadataList`.
pub(crate) fn partial_list(list: &Value) -> Value {
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
    /// The column's description: the API documentation of the field it shows, as the printers
    /// take it from `SwaggerDoc()` (empty where not reproduced here: the events' columns).
    description: String,
    cell: Cell,
}

/// `metav1.ObjectMeta{}.SwaggerDoc()["name"]`, the Name column's description.
const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
/// `metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]`, the Age column's description.
const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

impl Column {
    fn new(name: &str, kind: &'static str, priority: i64, cell: Cell) -> Self {
        Self {
            name: name.into(),
            kind,
            format: if name == "Name" { "name" } else { "" },
            priority,
            description: String::new(),
            cell,
        }
    }

    fn described(mut self, description: &str) -> Self {
        self.description = description.into();
        self
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
    .described(NAME_DESCRIPTION)
}

fn age_column() -> Column {
    Column::new(
        "Age",
        "string",
        0,
        Box::new(|o, now| age_since(o["metadata"]["creationTimestamp"].as_str(), now)),
    )
    .described(AGE_DESCRIPTION)
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
            // The printers declare the count a string column.
            Column::new(
                "Data",
                "string",
                0,
                Box::new(|o, _| json!(count(&o["data"]) + count(&o["binaryData"]))),
            )
            .described("Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process."),
            age_column(),
        ],
        ("", "secrets") => vec![
            name_column(),
            Column::new("Type", "string", 0, Box::new(|o, _| o["type"].clone()))
                .described("Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types"),
            Column::new(
                "Data",
                "string",
                0,
                Box::new(|o, _| json!(count(&o["data"]))),
            )
            .described("Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4"),
            age_column(),
        ],
        ("", "namespaces") => vec![
            name_column(),
            Column::new(
                "Status",
                "string",
                0,
                Box::new(|o, _| o["status"]["phase"].clone()),
            )
            .described("The status of the namespace"),
            age_column(),
        ],
        _ => {
            let mut cols = vec![name_column()];
            for col in &info.printer_columns {
                let path = col["jsonPath"].as_str().unwrap_or_default().to_string();
                let kind = match col["type"].as_str() {
                    Some("integer") => "integer",
                    Some("number") => "number",
                    Some("boolean") => "boolean",
                    Some("date") => "date",
                    _ => "string",
                };
                // Date columns are shown as ages, as the apiserver's table convertor does.
                let cell: Cell = if kind == "date" {
                    Box::new(move |o, now| match json_path(o, &path) {
                        Value::String(at) => age_since(Some(&at), now),
                        other => other,
                    })
                } else {
                    Box::new(move |o, _| json_path(o, &path))
                };
                let mut c = Column::new(
                    col["name"].as_str().unwrap_or_default(),
                    "string",
                    col["priority"].as_i64().unwrap_or(0),
                    cell,
                );
                c.kind = kind;
                c.description = col["description"].as_str().unwrap_or_default().into();
                cols.push(c);
            }
            // A CRD with printer columns lists Age itself when it wants it; one without gets
            // Name and Age, as kube-apiserver's default table convertor gives.
            if info.printer_columns.is_empty() {
                cols.push(age_column());
            }
            cols
        }
    }
}

/// The table of `objects` (already in the served view), as the table convertors build it: the
/// list's metadata, or for one object its resourceVersion; the column definitions unless
/// `headers` is off (`TableOptions.noHeaders`, which the watch encoder sets after its first
/// event: they are then `null`); each row's `object` as `include` says.
pub(crate) fn table(
    info: &ResourceInfo,
    objects: &[Value],
    list_meta: Option<&Value>,
    include: IncludeObject,
    headers: bool,
    now: Timestamp,
) -> Value {
    let columns = columns(info);
    let definitions: Option<Vec<Value>> = headers.then(|| {
        columns
            .iter()
            .map(|c| {
                json!({"name": c.name, "type": c.kind, "format": c.format, "description": c.description,
                    "priority": c.priority})
            })
            .collect()
    });
    let rows: Vec<Value> = objects
        .iter()
        .map(|obj| {
            let cells: Vec<Value> = columns.iter().map(|c| (c.cell)(obj, now)).collect();
            let mut row = json!({"cells": cells});
            match include {
                // `TableRow.object` is a RawExtension: written as null when empty.
                IncludeObject::None => row["object"] = Value::Null,
                IncludeObject::Object => row["object"] = obj.clone(),
                IncludeObject::Metadata => row["object"] = partial(obj),
            }
            row
        })
        .collect();
    let metadata = match (list_meta, objects) {
        (Some(meta), _) => meta.clone(),
        (None, [one]) => match &one["metadata"]["resourceVersion"] {
            Value::String(rv) => json!({"resourceVersion": rv}),
            _ => json!({}),
        },
        (None, _) => json!({}),
    };
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": metadata,
        "columnDefinitions": definitions,
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
