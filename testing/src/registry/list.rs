//! Reads: GET of one object, and LIST with label and field selectors, pages and
//! `resourceVersionMatch=Exact`.

use std::sync::Arc;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value, json};

use super::State;
use crate::continue_token;
use crate::kinds;
use crate::resources::{ResourceInfo, View};
use crate::selector::{FieldSelector, LabelSelector, labels_of};
use crate::status::ApiError;
use crate::store::ObjectKey;

/// The field labels a field selector may use on `info`'s objects.
fn selectable_fields(info: &ResourceInfo) -> Vec<&'static str> {
    let mut fields = vec!["metadata.name"];
    if info.namespaced {
        fields.push("metadata.namespace");
    }
    fields.extend(kinds::strategy(info).field_labels());
    fields
}

/// The 400 message for a field selector naming `field`, which `info`'s kind does not support:
/// its own field-label conversion's words, or apimachinery's
/// `DefaultMetaV1FieldSelectorConversion`'s.
fn unsupported_field_label(info: &ResourceInfo, field: &str) -> String {
    kinds::strategy(info)
        .unsupported_field_label(field)
        .unwrap_or_else(|| {
            format!(
                "{field:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            )
        })
}

/// Parsed list/watch filters.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    labels: Option<LabelSelector>,
    fields: Option<FieldSelector>,
    /// The kind's reading of field labels ([`kinds::Strategy::field_values`]).
    values: Option<fn(&Value, &str) -> Option<String>>,
}

impl Filter {
    /// Parses `labelSelector` and `fieldSelector`, checking the fields against what `info` supports.
    pub(crate) fn parse(
        info: &ResourceInfo,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<Self, ApiError> {
        let labels = match label_selector.filter(|s| !s.is_empty()) {
            Some(s) => Some(LabelSelector::parse(s).map_err(|e| ApiError::bad_request(e.message))?),
            None => None,
        };
        let fields = match field_selector.filter(|s| !s.is_empty()) {
            Some(s) => {
                let sel = FieldSelector::parse(s).map_err(|e| ApiError::bad_request(e.message))?;
                let allowed = selectable_fields(info);
                if let Some(bad) = sel.fields().into_iter().find(|f| !allowed.contains(f)) {
                    return Err(ApiError::bad_request(unsupported_field_label(info, bad)));
                }
                Some(sel)
            }
            None => None,
        };
        Ok(Self {
            labels,
            fields,
            values: kinds::strategy(info).field_values(),
        })
    }

    /// Whether the filter lets everything through.
    pub(crate) fn is_empty(&self) -> bool {
        self.labels.is_none() && self.fields.is_none()
    }

    /// Whether an object (in the served view) passes the filter.
    pub(crate) fn matches(&self, view: &Value) -> bool {
        if let Some(l) = &self.labels
            && !l.matches(&labels_of(view))
        {
            return false;
        }
        if let Some(f) = &self.fields {
            let read = self.values.unwrap_or(field_value);
            return f.matches(|field| read(view, field));
        }
        true
    }
}

pub(crate) fn field_value(view: &Value, field: &str) -> Option<String> {
    if field == "source" {
        return view["source"]["component"].as_str().map(str::to_string);
    }
    let mut cur = view;
    for part in field.split('.') {
        cur = cur.get(part)?;
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// List parameters.
#[derive(Debug, Default)]
pub(crate) struct ListParams<'a> {
    /// `labelSelector`.
    pub label_selector: Option<&'a str>,
    /// `fieldSelector`.
    pub field_selector: Option<&'a str>,
    /// `limit` (0 = none).
    pub limit: usize,
    /// `continue`.
    pub continue_token: Option<&'a str>,
    /// `resourceVersion` with `resourceVersionMatch=Exact`: the state to list.
    pub exact: Option<u64>,
}

impl State {
    /// GET of one object.
    pub(crate) fn get(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let ns = Self::check_scope(info, namespace)?;
        self.store
            .get(&info.storage, &ns, name)
            .map(|o| Self::to_view(info, o))
            .ok_or_else(|| ApiError::not_found(info.qualified_resource(), name))
    }

    /// [`State::get`], shared with the store when the object is served as stored.
    pub(crate) fn get_shared(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Arc<Value>, ApiError> {
        let ns = Self::check_scope(info, namespace)?;
        self.store
            .get_shared(&info.storage, &ns, name)
            .map(|o| Self::served(info, &o))
            .ok_or_else(|| ApiError::not_found(info.qualified_resource(), name))
    }

    /// LIST: the objects, each the stored one itself where it is served as stored.
    pub(crate) fn list(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        params: &ListParams<'_>,
    ) -> Result<ObjectList, ApiError> {
        if namespace.is_some() && !info.namespaced {
            return Err(ApiError::no_route());
        }
        let filter = Filter::parse(info, params.label_selector, params.field_selector)?;
        let (list_rv, after) = match params.continue_token.filter(|t| !t.is_empty()) {
            Some(token) => {
                let (rv, key) =
                    continue_token::decode(token, namespace).map_err(ApiError::bad_request)?;
                if self.store.is_compacted(rv) {
                    return Err(ApiError::expired(
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue value from the response to start a new list with a continue parameter.",
                    ));
                }
                (rv, Some(key))
            }
            None => (params.exact.unwrap_or(self.store.current_rv()), None),
        };
        // A list continued, or asked at an exact resourceVersion, shows the state at it.
        let snapshot = self
            .store
            .list_at(&info.storage, namespace, after.as_ref(), list_rv);
        let objects: Box<dyn Iterator<Item = (&ObjectKey, &Arc<Value>)>> = match &snapshot {
            Some(objects) => Box::new(objects.iter().map(|(k, v)| (k, v))),
            None => Box::new(
                self.store
                    .list_after(&info.storage, namespace, after.as_ref()),
            ),
        };
        let mut items = Vec::new();
        let mut next = None;
        let mut remaining = 0usize;
        // Only the core/v1 view of events differs from the stored form in selectable fields;
        // others are matched without building the view.
        let needs_view = info.view != View::Native;
        let selective = !filter.is_empty();
        for (key, stored) in objects {
            if params.limit > 0 && items.len() == params.limit {
                // The apiserver counts the rest only for lists without selectors.
                if selective {
                    remaining = 1;
                    break;
                }
                remaining += 1;
                continue;
            }
            let view = if needs_view {
                let view = Self::served(info, stored);
                if !filter.matches(&view) {
                    continue;
                }
                view
            } else {
                if !filter.matches(stored) {
                    continue;
                }
                Self::served(info, stored)
            };
            if params.limit > 0 && items.len() + 1 == params.limit {
                next = Some(key.clone());
            }
            items.push(view);
        }
        let mut metadata = json!({"resourceVersion": list_rv.to_string()});
        if info.custom {
            // An unstructured list keeps its empty `continue` (`UnstructuredList` metadata is a
            // map, not ListMeta with `omitempty`).
            metadata["continue"] = json!("");
        }
        if remaining > 0
            && let Some(key) = next
        {
            metadata["continue"] = Value::String(continue_token::encode(list_rv, &key, namespace));
            if !selective {
                metadata["remainingItemCount"] = json!(remaining);
            }
        }
        let mut head = Map::new();
        head.insert("kind".into(), json!(format!("{}List", info.kind)));
        head.insert("apiVersion".into(), json!(info.api_version()));
        head.insert("metadata".into(), metadata);
        Ok(ObjectList {
            head,
            items,
            untyped_items: false,
        })
    }
}

/// A LIST's answer: the list's own fields and its items, shared with the store where they are
/// served as stored, so that a list is written straight from the stored objects.
#[derive(Debug)]
pub(crate) struct ObjectList {
    /// `kind`, `apiVersion` and `metadata`.
    pub(crate) head: Map<String, Value>,
    /// The objects.
    pub(crate) items: Vec<Arc<Value>>,
    /// Whether the items are written without their `apiVersion` and `kind` (kube-apiserver
    /// encodes a built-in kind's list from its Go types, whose items carry neither).
    pub(crate) untyped_items: bool,
}

impl ObjectList {
    /// The list as one JSON value (its items copied).
    pub(crate) fn into_value(self) -> Value {
        let untyped = self.untyped_items;
        let items = self
            .items
            .into_iter()
            .map(|item| {
                let mut item = Arc::unwrap_or_clone(item);
                if untyped && let Some(fields) = item.as_object_mut() {
                    fields.remove("apiVersion");
                    fields.remove("kind");
                }
                item
            })
            .collect();
        let mut list = self.head;
        list.insert("items".into(), Value::Array(items));
        Value::Object(list)
    }
}

/// Written as [`ObjectList::into_value`]'s value would be (keys in order), without the copy.
impl Serialize for ObjectList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Items<'a>(&'a [Arc<Value>], bool);
        impl Serialize for Items<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
                for item in self.0 {
                    match item.as_object() {
                        Some(fields) if self.1 => seq.serialize_element(&Untyped(fields))?,
                        _ => seq.serialize_element(item.as_ref())?,
                    }
                }
                seq.end()
            }
        }
        struct Untyped<'a>(&'a Map<String, Value>);
        impl Serialize for Untyped<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.collect_map(
                    self.0
                        .iter()
                        .filter(|(k, _)| *k != "apiVersion" && *k != "kind"),
                )
            }
        }
        let mut map = serializer.serialize_map(Some(self.head.len() + 1))?;
        let items = Items(&self.items, self.untyped_items);
        let mut written = false;
        for (key, value) in &self.head {
            if !written && key.as_str() > "items" {
                map.serialize_entry("items", &items)?;
                written = true;
            }
            map.serialize_entry(key, value)?;
        }
        if !written {
            map.serialize_entry("items", &items)?;
        }
        map.end()
    }
}
