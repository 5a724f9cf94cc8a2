//! Field sets (structured-merge-diff `fieldpath.Set`) and their FieldsV1 encoding.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::go::fmt::go_quote;

/// A path element in its FieldsV1 spelling: `f:name`, `k:{"type":"Ready"}`, `v:"x"`, `i:0`.
pub(super) type Pe = String;
pub(super) type Path = Vec<Pe>;

/// A set of field paths: a path is in the set when its node is a `member`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct FieldSet {
    pub(super) member: bool,
    pub(super) children: BTreeMap<Pe, FieldSet>,
}

impl FieldSet {
    pub(super) fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    pub(super) fn insert(&mut self, path: &[Pe]) {
        match path.split_first() {
            None => self.member = true,
            // The element is copied only for a node not there yet.
            Some((first, rest)) => match self.children.get_mut(first) {
                Some(child) => child.insert(rest),
                None => self.children.entry(first.clone()).or_default().insert(rest),
            },
        }
    }

    pub(super) fn node(&self, path: &[Pe]) -> Option<&FieldSet> {
        match path.split_first() {
            None => Some(self),
            Some((first, rest)) => self.children.get(first)?.node(rest),
        }
    }

    pub(super) fn has(&self, path: &[Pe]) -> bool {
        self.node(path).is_some_and(|n| n.member)
    }

    /// True when some member lies strictly below `path`.
    pub(super) fn has_descendant(&self, path: &[Pe]) -> bool {
        self.node(path)
            .is_some_and(|n| n.children.values().any(|c| !c.is_empty()))
    }

    /// Drops the nodes that hold no member; true when there were some.
    pub(super) fn compact(&mut self) -> bool {
        let before = self.children.len();
        let mut changed = false;
        self.children.retain(|_, c| {
            changed |= c.compact();
            !c.is_empty()
        });
        changed || self.children.len() != before
    }

    pub(super) fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.member |= other.member;
        for (k, v) in &other.children {
            let merged = match out.children.get(k) {
                Some(mine) => mine.union(v),
                None => v.clone(),
            };
            out.children.insert(k.clone(), merged);
        }
        out
    }

    /// Adds the members of `other` (`union`, in place); true when that changed the set.
    pub(super) fn absorb(&mut self, other: &FieldSet) -> bool {
        let mut changed = other.member && !self.member;
        self.member |= other.member;
        for (k, v) in &other.children {
            match self.children.get_mut(k) {
                Some(mine) => changed |= mine.absorb(v),
                None => {
                    self.children.insert(k.clone(), v.clone());
                    changed = true;
                }
            }
        }
        changed
    }

    /// Removes the members of `other` (`difference`, in place); true when that changed the set.
    pub(super) fn remove(&mut self, other: &FieldSet) -> bool {
        let mut changed = self.member && other.member;
        self.member &= !other.member;
        for (k, o) in &other.children {
            if let Some(mine) = self.children.get_mut(k) {
                changed |= mine.remove(o);
                if mine.is_empty() {
                    self.children.remove(k);
                    changed = true;
                }
            }
        }
        changed
    }

    /// Removes every path that is a member of `other` or lies below one (`RecursiveDifference`,
    /// in place).
    pub(super) fn remove_recursive(&mut self, other: &FieldSet) {
        if other.member {
            *self = FieldSet::default();
            return;
        }
        for (k, o) in &other.children {
            if let Some(mine) = self.children.get_mut(k) {
                mine.remove_recursive(o);
                if mine.is_empty() {
                    self.children.remove(k);
                }
            }
        }
    }

    /// Members of `self` that are not members of `other` (not recursive, like `Set.Difference`).
    pub(super) fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && !other.member,
            children: BTreeMap::new(),
        };
        for (k, v) in &self.children {
            let child = match other.children.get(k) {
                Some(o) => v.difference(o),
                None => v.clone(),
            };
            if !child.is_empty() {
                out.children.insert(k.clone(), child);
            }
        }
        out
    }

    pub(super) fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet {
            member: self.member && other.member,
            children: BTreeMap::new(),
        };
        for (k, v) in &self.children {
            if let Some(o) = other.children.get(k) {
                let child = v.intersection(o);
                if !child.is_empty() {
                    out.children.insert(k.clone(), child);
                }
            }
        }
        out
    }

    /// Every member path, parents before children, children in order.
    pub(super) fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    pub(super) fn collect(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        if self.member && !prefix.is_empty() {
            out.push(prefix.clone());
        }
        for (k, v) in &self.children {
            prefix.push(k.clone());
            v.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The FieldsV1 JSON (`{"f:spec":{"f:replicas":{}}}`, `.` for a member with children).
    pub(super) fn to_fields_v1(&self) -> Value {
        let mut out = Map::new();
        if self.member && !self.children.is_empty() {
            out.insert(".".into(), json!({}));
        }
        for (k, v) in &self.children {
            if !v.is_empty() {
                out.insert(k.clone(), v.to_fields_v1());
            }
        }
        Value::Object(out)
    }

    pub(super) fn from_fields_v1(v: &Value) -> FieldSet {
        let mut set = FieldSet::default();
        if let Value::Object(map) = v {
            for (k, child) in map {
                if k == "." {
                    continue;
                }
                let mut c = FieldSet::from_fields_v1(child);
                let has_children = child
                    .as_object()
                    .is_some_and(|m| m.keys().any(|k| k != "."));
                if !has_children || child.get(".").is_some() {
                    c.member = true;
                }
                set.children.insert(k.clone(), c);
            }
        }
        set
    }
}

/// `value.ToString` for a JSON scalar (strings quoted Go-style).
pub(super) fn value_to_string(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    }
}

/// `fieldpath.Path.String()`: `.spec.replicas`, `.status.conditions[type="Ready"].status`,
/// `.metadata.finalizers[="x"]`.
pub(super) fn path_string(path: &[Pe]) -> String {
    let mut out = String::new();
    for pe in path {
        if let Some(name) = pe.strip_prefix("f:") {
            out.push('.');
            out.push_str(name);
        } else if let Some(key) = pe.strip_prefix("k:") {
            let parts: Vec<String> = match serde_json::from_str::<Map<String, Value>>(key) {
                Ok(map) => map
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value_to_string(v)))
                    .collect(),
                Err(_) => vec![key.to_owned()],
            };
            out.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(v) = pe.strip_prefix("v:") {
            let shown = serde_json::from_str::<Value>(v)
                .map(|v| value_to_string(&v))
                .unwrap_or_else(|_| v.to_owned());
            out.push_str(&format!("[={shown}]"));
        } else if let Some(i) = pe.strip_prefix("i:") {
            out.push_str(&format!("[{i}]"));
        } else {
            out.push_str(pe);
        }
    }
    out
}
