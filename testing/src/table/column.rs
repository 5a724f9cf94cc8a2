//! A table's columns: what each shows and how a cell is read from an object. The kinds give
//! theirs ([`crate::kinds::Strategy::columns`]); [`printer_columns`] are the generic ones.

use jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::resources::ResourceInfo;

/// A human age like kubectl's (apimachinery `duration.HumanDuration`, shortened).
fn human_age(seconds: i64) -> String {
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

/// How a cell is read from an object (in the served view), at `now`.
pub(crate) type Cell = Box<dyn Fn(&Value, Timestamp) -> Value + Send + Sync>;

/// One column of a table: its definition and how its cells are read.
pub(crate) struct Column {
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
    /// A column `name` of OpenAPI type `kind` (`string`, `integer`, ...) shown at `priority`
    /// (0: always; 1: with `-o wide`), without a description.
    pub(crate) fn new(name: &str, kind: &'static str, priority: i64, cell: Cell) -> Self {
        Self {
            name: name.into(),
            kind,
            format: if name == "Name" { "name" } else { "" },
            priority,
            description: String::new(),
            cell,
        }
    }

    /// The column with `description`.
    pub(crate) fn described(mut self, description: &str) -> Self {
        self.description = description.into();
        self
    }

    /// The Name column every table starts with.
    pub(crate) fn name() -> Self {
        Self::new(
            "Name",
            "string",
            0,
            Box::new(|o, _| o["metadata"]["name"].clone()),
        )
        .described(NAME_DESCRIPTION)
    }

    /// The Age column: the time since the object's creation.
    pub(crate) fn age() -> Self {
        Self::new(
            "Age",
            "string",
            0,
            Box::new(|o, now| age_since(o["metadata"]["creationTimestamp"].as_str(), now)),
        )
        .described(AGE_DESCRIPTION)
    }

    /// The `TableColumnDefinition`.
    pub(crate) fn definition(&self) -> Value {
        json!({"name": self.name, "type": self.kind, "format": self.format,
            "description": self.description, "priority": self.priority})
    }

    /// The cell of `obj` at `now`.
    pub(crate) fn cell(&self, obj: &Value, now: Timestamp) -> Value {
        (self.cell)(obj, now)
    }
}

/// The age at `now` of the time `at` (RFC 3339), as kubectl shows it; `<unknown>` without one.
pub(crate) fn age_since(at: Option<&str>, now: Timestamp) -> Value {
    let age = at
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map(|t| human_age(now.as_second() - t.as_second()))
        .unwrap_or_else(|| "<unknown>".into());
    json!(age)
}

/// The number of entries of a map field (0 when absent).
pub(crate) fn entries(v: &Value) -> usize {
    v.as_object().map(Map::len).unwrap_or(0)
}

/// The columns of a kind without printers of its own: Name, then a CRD's
/// `additionalPrinterColumns` (which list Age themselves when they want it), or Age when there
/// are none, as kube-apiserver's default table convertor gives.
pub(crate) fn printer_columns(info: &ResourceInfo) -> Vec<Column> {
    let mut cols = vec![Column::name()];
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
            kind,
            col["priority"].as_i64().unwrap_or(0),
            cell,
        );
        c.description = col["description"].as_str().unwrap_or_default().into();
        cols.push(c);
    }
    if info.printer_columns.is_empty() {
        cols.push(Column::age());
    }
    cols
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
