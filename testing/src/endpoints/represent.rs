//! A response object in its negotiated representation: the object, its
//! `PartialObjectMetadata`, or a `Table`, as `meta.k8s.io/v1` or `v1beta1`.

use serde_json::{Value, json};

use crate::kinds;
use crate::negotiation::Representation;
use crate::registry::ObjectList;
use crate::status::ApiError;
use crate::table;

/// A LIST's answer in the negotiated representation: the list itself, written from the stored
/// objects, or what the representation makes of it.
pub(super) enum RepresentedList {
    Objects(ObjectList),
    Other(Value),
}

/// A LIST's answer in the negotiated representation.
pub(super) fn represent_list(
    info: &crate::resources::ResourceInfo,
    mut list: ObjectList,
    representation: Representation,
    now: jiff::Timestamp,
) -> Result<RepresentedList, ApiError> {
    if let Representation::Object = representation {
        // kube-apiserver encodes a list of a built-in kind from its Go types, whose items carry
        // no apiVersion and kind; items of custom resources keep theirs.
        list.untyped_items = !info.custom;
        return Ok(RepresentedList::Objects(list));
    }
    let value = represent(info, list.into_value(), true, representation, now)?;
    Ok(RepresentedList::Other(value))
}

/// A response object (an object, or a `list` with `items`) in the negotiated representation,
/// taken by value: the object itself is answered as it is.
pub(super) fn represent(
    info: &crate::resources::ResourceInfo,
    value: Value,
    list: bool,
    representation: Representation,
    now: jiff::Timestamp,
) -> Result<Value, ApiError> {
    Ok(match (representation, list) {
        // kube-apiserver encodes a list of a built-in kind from its Go types, whose items carry
        // no apiVersion and kind; items of custom resources keep theirs.
        (Representation::Object, true) if !info.custom => {
            let mut list = value;
            for item in list["items"].as_array_mut().into_iter().flatten() {
                if let Some(item) = item.as_object_mut() {
                    item.remove("apiVersion");
                    item.remove("kind");
                }
            }
            list
        }
        (Representation::Object, _) => value,
        (Representation::PartialObjectMetadata { list: false }, false) => table::partial(&value),
        (Representation::PartialObjectMetadata { list: true }, true) => table::partial_list(&value),
        (Representation::PartialObjectMetadata { list: asked }, list) => {
            return Err(partial_mismatch(info, asked, list));
        }
        (Representation::Table(include), list) => {
            let (objects, list_meta) = if list {
                let items = value["items"].as_array().map(Vec::as_slice);
                (items.unwrap_or_default(), Some(&value["metadata"]))
            } else {
                (std::slice::from_ref(&value), None)
            };
            let columns = kinds::strategy(info).columns(info);
            table::table(&columns, objects, list_meta, include, true, now)
        }
    })
}

/// A Table or PartialObjectMetadata(List) asked for as `meta.k8s.io/v1beta1`: the same content
/// with that `apiVersion` (its items' too).
pub(super) fn as_meta_version(mut value: Value, v1beta1: bool) -> Value {
    if v1beta1 {
        let relabel = |v: &mut Value| {
            if v["apiVersion"] == "meta.k8s.io/v1" {
                v["apiVersion"] = json!("meta.k8s.io/v1beta1");
            }
        };
        relabel(&mut value);
        value
            .get_mut("items")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .for_each(relabel);
        // A Table's rows carry their objects as PartialObjectMetadata of the same version.
        value
            .get_mut("rows")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(|row| row.get_mut("object"))
            .for_each(relabel);
    }
    value
}

/// The 406 of a `PartialObjectMetadata` asked for a list or a `PartialObjectMetadataList` asked
/// for one object (the transformer names the internal Go type it got: `*core.ConfigMapList`).
pub(super) fn partial_mismatch(
    info: &crate::resources::ResourceInfo,
    asked_list: bool,
    is_list: bool,
) -> ApiError {
    let package = match info.group.as_str() {
        _ if info.custom => "unstructured",
        "" | "events.k8s.io" => "core",
        "coordination.k8s.io" => "coordination",
        "rbac.authorization.k8s.io" => "rbac",
        "apiextensions.k8s.io" => "apiextensions",
        other => other.split('.').next().unwrap_or(other),
    };
    let kind = if info.custom {
        "Unstructured"
    } else {
        &info.kind
    };
    let list = if is_list { "List" } else { "" };
    let (asked, what) = if asked_list {
        ("PartialObjectMetadataList", "is not a list")
    } else {
        ("PartialObjectMetadata", "is a list")
    };
    ApiError::not_acceptable(format!(
        "you requested {asked}, but the requested object {what} (*{package}.{kind}{list})"
    ))
}
