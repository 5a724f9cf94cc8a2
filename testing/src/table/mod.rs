//! The alternative representations clients negotiate with `Accept: ...;as=<Kind>;g=meta.k8s.io;v=v1`:
//! `Table` (`kubectl get`) and `PartialObjectMetadata` (kube's metadata watches and lists).
//! A table's columns are its kind's ([`crate::kinds::Strategy::columns`], made of [`column`]s);
//! the caller looks them up, so tables know nothing of kinds.

pub(crate) mod column;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::negotiation::IncludeObject;

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

/// The table of `objects` (already in the served view) in `columns`, as the table convertors build
/// it: the list's metadata, or for one object its resourceVersion; the column definitions unless
/// `headers` is off (`TableOptions.noHeaders`, which the watch encoder sets after its first event:
/// they are then `null`); each row's `object` as `include` says.
pub(crate) fn table(
    columns: &[column::Column],
    objects: &[Value],
    list_meta: Option<&Value>,
    include: IncludeObject,
    headers: bool,
    now: Timestamp,
) -> Value {
    let definitions: Option<Vec<Value>> =
        headers.then(|| columns.iter().map(column::Column::definition).collect());
    let rows: Vec<Value> = objects
        .iter()
        .map(|obj| {
            let cells: Vec<Value> = columns.iter().map(|c| c.cell(obj, now)).collect();
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
