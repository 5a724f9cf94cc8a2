//! `managedFields` entries: decoded from and encoded into an object, and fields taken from other
//! managers.

use serde_json::{Map, Value, json};

use super::ApplyError;
use super::field_set::{FieldSet, path_string};
use super::merge::Comparison;
use super::schema::stripped;
use crate::go::fmt::go_quote;

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) manager: String,
    pub(super) operation: String,
    pub(super) api_version: String,
    pub(super) subresource: String,
    pub(super) time: Option<String>,
    pub(super) set: FieldSet,
    /// The entry's `fieldsV1` as the stored object holds it (which this server encoded), taken
    /// out of the written object while `set` is unchanged: encoding it again is a copy.
    pub(super) fields_v1: Option<Value>,
}

impl Entry {
    /// `BuildManagerIdentifier`: Apply entries ignore the apiVersion.
    pub(super) fn same_identity(
        &self,
        manager: &str,
        operation: &str,
        api_version: &str,
        sub: &str,
    ) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource == sub
            && (operation == "Apply" || self.api_version == api_version)
    }

    /// `printManager`.
    pub(super) fn printed(&self) -> String {
        let mut s = go_quote(&self.manager);
        if !self.subresource.is_empty() {
            s = format!("{s} with subresource {}", go_quote(&self.subresource));
        }
        if self.operation == "Update" {
            s = format!("{s} using {}", self.api_version);
        }
        s
    }

    /// Removes `fields` from the entry's set.
    pub(super) fn lose(&mut self, fields: &FieldSet) {
        if self.set.remove(fields) {
            self.fields_v1 = None;
        }
    }

    /// Adds `fields` to the entry's set.
    pub(super) fn gain(&mut self, fields: &FieldSet) {
        if self.set.absorb(fields) {
            self.fields_v1 = None;
        }
    }

    /// Drops the set's nodes that hold no member.
    pub(super) fn compact(&mut self) {
        if self.set.compact() {
            self.fields_v1 = None;
        }
    }

    pub(super) fn encode(self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert("operation".into(), json!(self.operation));
        m.insert("apiVersion".into(), json!(self.api_version));
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        m.insert("fieldsType".into(), json!("FieldsV1"));
        let fields_v1 = self.fields_v1.unwrap_or_else(|| self.set.to_fields_v1());
        m.insert("fieldsV1".into(), fields_v1);
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m)
    }
}

pub(super) fn decode_entries(obj: Option<&Value>) -> Vec<Entry> {
    let Some(list) = obj
        .and_then(|o| o.pointer("/metadata/managedFields"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter().filter_map(decode_entry).collect()
}

/// The entries of `obj`, an object about to be written whose `managedFields` are the stored
/// object's (so this server encoded them): each keeps its `fieldsV1`, taken out of `obj`,
/// which the write then encodes anew ([`encode_entries`]).
pub(super) fn take_stored_entries(obj: &mut Value) -> Vec<Entry> {
    let Some(list) = obj
        .pointer_mut("/metadata/managedFields")
        .and_then(Value::as_array_mut)
    else {
        return Vec::new();
    };
    list.iter_mut()
        .filter_map(|e| {
            let mut entry = decode_entry(e)?;
            entry.fields_v1 = e.get_mut("fieldsV1").map(Value::take);
            Some(entry)
        })
        .collect()
}

fn decode_entry(e: &Value) -> Option<Entry> {
    let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let operation = s("operation");
    if operation != "Apply" && operation != "Update" {
        return None;
    }
    Some(Entry {
        manager: s("manager"),
        operation,
        api_version: s("apiVersion"),
        subresource: s("subresource"),
        time: e.get("time").and_then(Value::as_str).map(str::to_owned),
        set: FieldSet::from_fields_v1(e.get("fieldsV1").unwrap_or(&Value::Null)),
        fields_v1: None,
    })
}

pub(super) fn seconds(t: &Option<String>) -> i64 {
    t.as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_second())
        .unwrap_or(0)
}

/// Writes `entries` into `obj.metadata.managedFields` in `sortEncodedManagedFields` order
/// (operation, time, manager, apiVersion, subresource); no entries removes the field.
pub(super) fn encode_entries(obj: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    entries.sort_by(|p, q| {
        p.operation
            .cmp(&q.operation)
            .then(seconds(&p.time).cmp(&seconds(&q.time)))
            .then(p.manager.cmp(&q.manager))
            .then(p.api_version.cmp(&q.api_version))
            .then(p.subresource.cmp(&q.subresource))
    });
    let Some(obj) = obj.as_object_mut() else {
        return;
    };
    let meta = obj.entry("metadata").or_insert_with(|| json!({}));
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    if entries.is_empty() {
        meta.remove("managedFields");
    } else {
        meta.insert(
            "managedFields".into(),
            Value::Array(entries.into_iter().map(Entry::encode).collect()),
        );
    }
}

pub(super) fn without_managed_fields(obj: &Value) -> Value {
    let mut obj = obj.clone();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    obj
}

/// `Comparison.FilterFields` plus the stripped fields.
pub(super) fn filtered(mut c: Comparison, ignored: &FieldSet) -> Comparison {
    for set in [&mut c.added, &mut c.modified, &mut c.removed] {
        set.remove_recursive(ignored);
        set.remove(stripped());
    }
    c
}

/// `Updater.update`: other entries lose the fields the change took (conflicts unless `force`)
/// and the fields it removed. `skip` is the index of the acting entry, if it has one.
pub(super) fn take_from_others(
    entries: &mut [Entry],
    skip: Option<usize>,
    c: &Comparison,
    force: bool,
) -> Result<(), ApplyError> {
    if entries.iter().enumerate().all(|(i, _)| Some(i) == skip) {
        return Ok(());
    }
    let changed = c.modified.union(&c.added);
    if !force {
        let mut conflicts = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if Some(i) == skip {
                continue;
            }
            let conflict = e.set.intersection(&changed);
            for p in conflict.paths() {
                conflicts.push((e.printed(), path_string(&p)));
            }
        }
        if !conflicts.is_empty() {
            conflicts.sort();
            return Err(ApplyError::Conflict { conflicts });
        }
    }
    for (i, e) in entries.iter_mut().enumerate() {
        if Some(i) == skip {
            continue;
        }
        e.lose(&changed);
        e.lose(&c.removed);
        e.compact();
    }
    Ok(())
}
