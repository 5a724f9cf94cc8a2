//! Server-side apply and `metadata.managedFields`, as kube-apiserver's field manager
//! (`k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager`, structured-merge-diff `merge.Updater`)
//! computes them, on JSON objects without an OpenAPI schema.
//!
//! # What is modelled
//!
//! - **Ownership.** Each `managedFields` entry (`manager`, `operation` `Apply`|`Update`,
//!   `apiVersion`, `time`, `fieldsType: FieldsV1`, `fieldsV1`, `subresource`) owns a set of
//!   field paths. Entries are identified as `BuildManagerIdentifier` does: an Apply entry by
//!   (manager, subresource), an Update entry by (manager, apiVersion, subresource).
//! - **Apply** ([`server_side_apply`], `Updater.Apply`): the applied configuration is merged into
//!   the live object; the applier's set becomes exactly the fields it applied (`ToFieldSet`);
//!   fields it applied last time and omits now are removed unless another entry owns them
//!   (`Updater.prune`); a field owned by another entry that the apply *changes* is a conflict
//!   (409, `Apply failed with 1 conflict: conflict with "other": .spec.replicas`) unless `force`,
//!   which moves ownership; applying the value a field already has shares ownership. Other
//!   entries lose fields that the apply removed.
//! - **Update** ([`record_update`], `Updater.Update` via `managedFieldsUpdater`): a create, PUT
//!   or non-apply PATCH takes the fields it added or changed from everyone, everyone loses the
//!   fields it removed, and its entry's time moves when it took something.
//! - **Not tracked** (`stripMetaManager`): `apiVersion`, `kind`, `metadata.name`,
//!   `metadata.namespace`, `metadata.uid`, `metadata.resourceVersion`, `metadata.generation`,
//!   `metadata.creationTimestamp`, `metadata.selfLink`, `metadata.managedFields`.
//! - **Subresources**: a write through `status` owns and changes only `status` (the status
//!   strategy resets the rest); through the main resource everything is tracked — a server whose
//!   resource has a status subresource passes `["status"]` as reset fields to the `_with_reset`
//!   variants so status is neither changed nor owned there (`GetResetFields`).
//!
//! # Schema
//!
//! Merging and ownership depend on the resource's schema, which JSON objects lack. An
//! [`ApplySchema`] says which lists are associative and which objects are maps; pass one in an
//! [`Endpoint`] to [`apply_at`]/[`update_at`] — [`ApplySchema::from_openapi_v3`] reads a CRD's
//! `x-kubernetes-list-type`/`-list-map-keys` and `additionalProperties`, so a custom resource
//! merges as on a real server (where an undeclared list is atomic). The short forms
//! ([`server_side_apply`], [`record_update`]) use [`ApplySchema::default`]:
//!
//! every JSON object is treated as a struct and every list as **atomic**
//! (replaced whole, owned as one field), except:
//! `metadata.finalizers` (a set: items are owned one by one, `v:"x"`),
//! `metadata.ownerReferences` (a map keyed by `uid`) and
//! `status.conditions` (a map keyed by `type`, `k:{"type":"Ready"}`) when every item is an
//! object with that key. `metadata.labels` and `metadata.annotations` are maps (an Update that
//! adds one owns the map itself, `.`). Built-in types' other associative lists (containers by
//! `name`, …) are atomic here. The Update-manager cap (`capManagersManager`, at most 10 Update
//! entries) is not modelled. Applying `null` removes the field (and owns it).

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt;

use super::validation::names::go_quote;

/// Why an apply was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyError {
    /// Fields the apply would change are owned by other managers (HTTP 409, reason Conflict).
    Conflict {
        /// `(manager, field path)` in the server's words: the manager as `printManager` renders
        /// it (`"other"`, `"kubectl-edit" using v1`, `"ctrl" with subresource "status" using
        /// demo/v1`) and the path as `fieldpath.Path.String()` (`.spec.replicas`,
        /// `.status.conditions[type="Ready"].status`). A Status cause is
        /// `{reason: FieldManagerConflict, message: "conflict with " + manager, field: path}`.
        conflicts: Vec<(String, String)>,
    },
    /// The apply request itself is invalid (HTTP 400 BadRequest with this message).
    Invalid(String),
}

impl ApplyError {
    /// The Status message the real server returns (`getConflictMessage` for conflicts).
    pub fn message(&self) -> String {
        match self {
            ApplyError::Invalid(m) => m.clone(),
            ApplyError::Conflict { conflicts } => {
                if let [(manager, path)] = conflicts.as_slice() {
                    return format!(
                        "Apply failed with 1 conflict: conflict with {manager}: {path}"
                    );
                }
                let mut by_manager: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
                for (m, p) in conflicts {
                    by_manager.entry(m).or_default().push(p);
                }
                let mut lines = Vec::new();
                for (m, paths) in by_manager {
                    lines.push(format!("conflicts with {m}:"));
                    lines.extend(paths.iter().map(|p| format!("- {p}")));
                }
                format!(
                    "Apply failed with {} conflicts: {}",
                    conflicts.len(),
                    lines.join("\n")
                )
            }
        }
    }

    /// The `details.causes` of the Status (`NewConflictError`): one
    /// `{"reason": "FieldManagerConflict", "message": "conflict with …", "field": path}` per
    /// conflict (`metav1.StatusCause` serialises its type as `reason`).
    pub fn status_causes(&self) -> Vec<Value> {
        match self {
            ApplyError::Invalid(_) => Vec::new(),
            ApplyError::Conflict { conflicts } => conflicts
                .iter()
                .map(|(m, p)| {
                    json!({"reason": "FieldManagerConflict", "message": format!("conflict with {m}"), "field": p})
                })
                .collect(),
        }
    }
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for ApplyError {}

// ---------------------------------------------------------------------------------------------
// Field sets (structured-merge-diff fieldpath.Set) and their FieldsV1 encoding
// ---------------------------------------------------------------------------------------------

/// A path element in its FieldsV1 spelling: `f:name`, `k:{"type":"Ready"}`, `v:"x"`, `i:0`.
type Pe = String;
type Path = Vec<Pe>;

/// A set of field paths: a path is in the set when its node is a `member`.
#[derive(Debug, Clone, Default, PartialEq)]
struct FieldSet {
    member: bool,
    children: BTreeMap<Pe, FieldSet>,
}

impl FieldSet {
    fn is_empty(&self) -> bool {
        !self.member && self.children.values().all(FieldSet::is_empty)
    }

    fn insert(&mut self, path: &[Pe]) {
        match path.split_first() {
            None => self.member = true,
            Some((first, rest)) => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    fn node(&self, path: &[Pe]) -> Option<&FieldSet> {
        match path.split_first() {
            None => Some(self),
            Some((first, rest)) => self.children.get(first)?.node(rest),
        }
    }

    fn has(&self, path: &[Pe]) -> bool {
        self.node(path).is_some_and(|n| n.member)
    }

    /// True when some member lies strictly below `path`.
    fn has_descendant(&self, path: &[Pe]) -> bool {
        self.node(path)
            .is_some_and(|n| n.children.values().any(|c| !c.is_empty()))
    }

    fn compact(&mut self) {
        self.children.retain(|_, c| {
            c.compact();
            !c.is_empty()
        });
    }

    fn union(&self, other: &FieldSet) -> FieldSet {
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

    /// Members of `self` that are not members of `other` (not recursive, like `Set.Difference`).
    fn difference(&self, other: &FieldSet) -> FieldSet {
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

    fn intersection(&self, other: &FieldSet) -> FieldSet {
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

    /// Removes every path that is a member of `other` or lies below one (`RecursiveDifference`).
    fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        if other.member {
            return FieldSet::default();
        }
        let mut out = FieldSet {
            member: self.member,
            children: BTreeMap::new(),
        };
        for (k, v) in &self.children {
            let child = match other.children.get(k) {
                Some(o) => v.recursive_difference(o),
                None => v.clone(),
            };
            if !child.is_empty() {
                out.children.insert(k.clone(), child);
            }
        }
        out
    }

    /// Every member path, parents before children, children in order.
    fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Path, out: &mut Vec<Path>) {
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
    fn to_fields_v1(&self) -> Value {
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

    fn from_fields_v1(v: &Value) -> FieldSet {
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
fn value_to_string(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    }
}

/// `fieldpath.Path.String()`: `.spec.replicas`, `.status.conditions[type="Ready"].status`,
/// `.metadata.finalizers[="x"]`.
fn path_string(path: &[Pe]) -> String {
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

// ---------------------------------------------------------------------------------------------
// The schema stand-in
// ---------------------------------------------------------------------------------------------

/// How a list is merged and owned (`x-kubernetes-list-type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType {
    /// Replaced whole and owned as one field (the default for lists).
    Atomic,
    /// A set of scalars, owned item by item (`v:"x"`).
    Set,
    /// A list of objects identified by these key fields (`x-kubernetes-list-map-keys`), owned
    /// item by item (`k:{"type":"Ready"}`) and merged by key.
    Map(Vec<String>),
}

/// What the field manager needs of a resource's schema: which lists are associative and which
/// objects are maps rather than structs. Paths are field names joined by `.`, with `[]` after a
/// list for "every item" (`spec.containers[].ports`) and `*` for "every key" of a map.
///
/// [`ApplySchema::default`] is the scope described in the module docs (finalizers,
/// ownerReferences, `status.conditions` keyed by `type`, labels and annotations);
/// [`ApplySchema::from_openapi_v3`] reads a CRD version's `openAPIV3Schema` so that a custom
/// resource merges exactly as its CRD declares (an undeclared list is atomic there, as on a
/// real server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplySchema {
    lists: BTreeMap<String, ListType>,
    maps: std::collections::BTreeSet<String>,
    /// Structs owned and replaced whole (`+structType=atomic`, `x-kubernetes-map-type: atomic`).
    atomics: std::collections::BTreeSet<String>,
    /// Whether objects are unstructured (custom resources) rather than Go types (built-ins).
    /// In an unstructured object an Update that adds a struct owns the struct itself, as it
    /// owns an added map (there are no zero-valued structs, so every object an Update adds is
    /// new), and `null` is a value; a built-in's Go structs exist empty in the object the
    /// comparison starts from, and its `null` is a nil slice or pointer, no value.
    unstructured: bool,
}

impl Default for ApplySchema {
    fn default() -> Self {
        // The built-in kinds served here: ConfigMap `data`/`binaryData`, Secret
        // `data`/`stringData` are Go maps (no served kind has a struct by those names).
        ApplySchema::metadata_only()
            .with_list("status.conditions", ListType::Map(vec!["type".to_owned()]))
            .with_map("data")
            .with_map("binaryData")
            .with_map("stringData")
            // A CRD's `spec.conversion` is a pointer to a struct: absent until set, so an
            // Update that adds it owns it, as it owns an added map.
            .with_map("spec.conversion")
            // Likewise an event's `series` and a ClusterRole's `aggregationRule`.
            .with_map("series")
            .with_map("aggregationRule")
            // An access review's attributes are pointers to structs too.
            .with_map("spec.resourceAttributes")
            .with_map("spec.nonResourceAttributes")
            // `+structType=atomic` structs of the served kinds: a binding's RoleRef, an
            // event's ObjectReferences.
            .with_atomic("roleRef")
            .with_atomic("involvedObject")
            .with_atomic("regarding")
            .with_atomic("related")
    }
}

impl ApplySchema {
    /// Only ObjectMeta's rules: `metadata.finalizers` a set, `metadata.ownerReferences` a map
    /// keyed by `uid`, `metadata.labels` and `metadata.annotations` maps; every other list
    /// atomic, every other object a struct.
    pub fn metadata_only() -> Self {
        ApplySchema {
            lists: BTreeMap::new(),
            maps: Default::default(),
            atomics: Default::default(),
            unstructured: false,
        }
        .with_list("metadata.finalizers", ListType::Set)
        .with_list(
            "metadata.ownerReferences",
            ListType::Map(vec!["uid".to_owned()]),
        )
        // OwnerReference is `+structType=atomic`: each `k:{uid}` item is one leaf.
        .with_atomic("metadata.ownerReferences[]")
        .with_map("metadata.labels")
        .with_map("metadata.annotations")
    }

    /// Declares the list at `path` (see the type docs for the path syntax).
    pub fn with_list(mut self, path: &str, list_type: ListType) -> Self {
        self.lists.insert(path.to_owned(), list_type);
        self
    }

    /// Declares the object at `path` atomic: owned as one field and replaced whole by an apply.
    pub fn with_atomic(mut self, path: &str) -> Self {
        self.atomics.insert(path.to_owned());
        self
    }

    /// Declares the object at `path` a map (`additionalProperties`) rather than a struct.
    pub fn with_map(mut self, path: &str) -> Self {
        self.maps.insert(path.to_owned());
        self
    }

    /// ObjectMeta's rules plus what a CRD version's `openAPIV3Schema` declares: arrays with
    /// `x-kubernetes-list-type: set` or `map` (keys from `x-kubernetes-list-map-keys`), objects
    /// with `additionalProperties` as maps, and `x-kubernetes-map-type: atomic` objects atomic.
    /// Everything else keeps the defaults: lists atomic, objects structs.
    pub fn from_openapi_v3(schema: &Value) -> Self {
        let mut s = ApplySchema::metadata_only();
        s.unstructured = true;
        s.visit(schema, &mut Vec::new());
        s
    }

    fn visit(&mut self, schema: &Value, path: &mut Vec<String>) {
        if !path.is_empty()
            && schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic")
        {
            self.atomics.insert(path.join("."));
            return;
        }
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            for (name, sub) in props {
                if path.is_empty() && name == "metadata" {
                    continue;
                }
                path.push(name.clone());
                self.visit(sub, path);
                path.pop();
            }
        }
        if let Some(add) = schema.get("additionalProperties").filter(|a| a.is_object()) {
            self.maps.insert(path.join("."));
            path.push("*".to_owned());
            self.visit(add, path);
            path.pop();
        }
        if let Some(items) = schema.get("items") {
            let list_type = match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("set") => Some(ListType::Set),
                Some("map") => Some(ListType::Map(
                    schema
                        .get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|k| {
                            k.iter()
                                .filter_map(|k| k.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default(),
                )),
                _ => None,
            };
            if let Some(t) = list_type {
                self.lists.insert(path.join("."), t);
            }
            if let Some(last) = path.last_mut() {
                last.push_str("[]");
                self.visit(items, path);
                if let Some(last) = path.last_mut() {
                    last.truncate(last.len() - 2);
                }
            }
        }
    }

    /// The schema key segments of a field path: field names, with `[]` appended after a list
    /// item element.
    fn segments(path: &[Pe]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for pe in path {
            match pe.strip_prefix("f:") {
                Some(name) => out.push(name.to_owned()),
                None => {
                    if let Some(last) = out.last_mut() {
                        last.push_str("[]");
                    }
                }
            }
        }
        out
    }

    /// Looks `path` up in `keys`, a segment also matching `*` (a map entry).
    fn matches(keys: impl Iterator<Item = impl AsRef<str>>, path: &[Pe]) -> Option<String> {
        let segs = Self::segments(path);
        keys.map(|k| k.as_ref().to_owned()).find(|k| {
            let ks: Vec<&str> = k.split('.').collect();
            ks.len() == segs.len()
                && ks.iter().zip(&segs).all(|(k, s)| {
                    *k == s.as_str()
                        || (k.starts_with('*')
                            && k[1..] == *s.strip_prefix(s.trim_end_matches("[]")).unwrap_or(""))
                })
        })
    }

    fn list_type(&self, path: &[Pe]) -> ListType {
        Self::matches(self.lists.keys(), path)
            .and_then(|k| self.lists.get(&k).cloned())
            .unwrap_or(ListType::Atomic)
    }

    /// Atomic structs: owned, compared and merged as one value.
    fn is_atomic(&self, path: &[Pe]) -> bool {
        !path.is_empty() && Self::matches(self.atomics.iter(), path).is_some()
    }

    /// Maps (as opposed to structs): an Update that adds one owns the map itself.
    fn is_map(&self, path: &[Pe]) -> bool {
        Self::matches(self.maps.iter(), path).is_some()
    }
}

fn field_pe(name: &str) -> Pe {
    format!("f:{name}")
}

/// The path elements of an associative list's items, or `None` when the list must be atomic
/// (a keyed item misses its key, or an item repeats).
fn item_elements(kind: &ListType, items: &[Value]) -> Option<Vec<Pe>> {
    let mut out: Vec<Pe> = Vec::with_capacity(items.len());
    for item in items {
        let pe = match kind {
            ListType::Atomic => return None,
            ListType::Set => {
                if item.is_object() || item.is_array() {
                    return None;
                }
                format!("v:{item}")
            }
            ListType::Map(keys) => {
                let obj = item.as_object()?;
                let mut key = Map::new();
                for k in keys {
                    let v = obj
                        .get(k)
                        .filter(|v| v.is_string() || v.is_number() || v.is_boolean())?;
                    key.insert(k.clone(), v.clone());
                }
                format!("k:{}", Value::Object(key))
            }
        };
        if out.contains(&pe) {
            // duplicates: structured-merge-diff keeps the first; treat the list atomically
            return None;
        }
        out.push(pe);
    }
    Some(out)
}

/// The paths the server never tracks (`stripMetaManager`), as a set.
fn stripped() -> FieldSet {
    let mut s = FieldSet::default();
    for p in [
        &["f:apiVersion"][..],
        &["f:kind"],
        &["f:metadata"],
        &["f:metadata", "f:name"],
        &["f:metadata", "f:namespace"],
        &["f:metadata", "f:creationTimestamp"],
        &["f:metadata", "f:selfLink"],
        &["f:metadata", "f:uid"],
        &["f:metadata", "f:clusterName"],
        &["f:metadata", "f:generation"],
        &["f:metadata", "f:managedFields"],
        &["f:metadata", "f:resourceVersion"],
    ] {
        s.insert(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    }
    s
}

/// Top-level fields a write through `subresource` (or with `reset`) neither changes nor owns.
fn ignored_set(obj_keys: &[&Value], subresource: Option<&str>, reset: &[&str]) -> FieldSet {
    let mut s = FieldSet::default();
    for r in reset {
        s.insert(&[field_pe(r)]);
    }
    if subresource == Some("status") {
        // The status strategy resets every top-level field but status and metadata: a status
        // write's labels are tracked, though the strategy then drops them.
        for obj in obj_keys {
            if let Value::Object(map) = obj {
                for k in map.keys() {
                    if k != "status" && k != "metadata" {
                        s.insert(&[field_pe(k)]);
                    }
                }
            }
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Walks: ToFieldSet, Compare, Merge, removal
// ---------------------------------------------------------------------------------------------

/// `TypedValue.ToFieldSet`: the fields an applied configuration sets.
fn to_field_set(sc: &ApplySchema, v: &Value) -> FieldSet {
    let mut set = FieldSet::default();
    if let Value::Object(map) = v {
        walk_object_set(sc, map, &mut Vec::new(), &mut set);
    }
    set
}

fn walk_object_set(
    sc: &ApplySchema,
    map: &Map<String, Value>,
    path: &mut Path,
    set: &mut FieldSet,
) {
    for (k, v) in map {
        path.push(field_pe(k));
        walk_value_set(sc, v, path, set);
        path.pop();
    }
}

fn walk_value_set(sc: &ApplySchema, v: &Value, path: &mut Path, set: &mut FieldSet) {
    match v {
        Value::Object(m) if m.is_empty() || sc.is_atomic(path) => set.insert(path),
        Value::Object(m) => walk_object_set(sc, m, path, set),
        Value::Array(items) => {
            let kind = sc.list_type(path);
            match item_elements(&kind, items) {
                Some(pes) => {
                    for (pe, item) in pes.into_iter().zip(items) {
                        path.push(pe);
                        set.insert(path);
                        if let Value::Object(m) = item
                            && !sc.is_atomic(path)
                        {
                            walk_object_set(sc, m, path, set);
                        }
                        path.pop();
                    }
                }
                None => set.insert(path),
            }
        }
        _ => set.insert(path),
    }
}

#[derive(Default)]
struct Comparison {
    added: FieldSet,
    modified: FieldSet,
    removed: FieldSet,
}

/// `TypedValue.Compare`: what changed from `lhs` to `rhs`.
fn compare(sc: &ApplySchema, lhs: &Value, rhs: &Value) -> Comparison {
    let mut c = Comparison::default();
    compare_at(sc, Some(lhs), Some(rhs), &mut Vec::new(), &mut c);
    c
}

fn is_empty_container(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => false,
    }
}

/// Compares one leaf. In a built-in's object `null` is no value (a Go nil slice or pointer
/// encodes as `null`, and is not a field an Update sets); in a custom resource's it is one.
fn compare_leaf(
    sc: &ApplySchema,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &Path,
    c: &mut Comparison,
) {
    let (lhs, rhs) = if sc.unstructured {
        (lhs, rhs)
    } else {
        (lhs.filter(|v| !v.is_null()), rhs.filter(|v| !v.is_null()))
    };
    match (lhs, rhs) {
        (None, None) => {}
        (None, Some(_)) => c.added.insert(path),
        (Some(_), None) => c.removed.insert(path),
        (Some(a), Some(b)) if a != b => c.modified.insert(path),
        _ => {}
    }
}

fn compare_at(
    sc: &ApplySchema,
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    path: &mut Path,
    c: &mut Comparison,
) {
    let is_obj = |v: Option<&Value>| v.is_none_or(Value::is_object);
    let is_arr = |v: Option<&Value>| v.is_none_or(Value::is_array);
    if is_obj(lhs) && is_obj(rhs) && (lhs.is_some() || rhs.is_some()) {
        if (is_empty_container(lhs) && is_empty_container(rhs)) || sc.is_atomic(path) {
            return compare_leaf(sc, lhs, rhs, path, c);
        }
        let empty = Map::new();
        let l = lhs.and_then(Value::as_object).unwrap_or(&empty);
        let r = rhs.and_then(Value::as_object).unwrap_or(&empty);
        let mut keys: Vec<&String> = l.keys().chain(r.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            path.push(field_pe(k));
            compare_at(sc, l.get(k), r.get(k), path, c);
            path.pop();
        }
        if !path.is_empty() && (sc.unstructured || sc.is_map(path)) {
            match (lhs, rhs) {
                (None, Some(_)) => c.added.insert(path),
                (Some(_), None) => c.removed.insert(path),
                _ => {}
            }
        }
        return;
    }
    if is_arr(lhs) && is_arr(rhs) && (lhs.is_some() || rhs.is_some()) {
        let empty = Vec::new();
        let l = lhs.and_then(Value::as_array).unwrap_or(&empty);
        let r = rhs.and_then(Value::as_array).unwrap_or(&empty);
        let kind = sc.list_type(path);
        let (Some(lpes), Some(rpes)) = (item_elements(&kind, l), item_elements(&kind, r)) else {
            return compare_leaf(sc, lhs, rhs, path, c);
        };
        if l.is_empty() && r.is_empty() {
            return compare_leaf(sc, lhs, rhs, path, c);
        }
        // An associative list an Update adds (or removes) is owned itself, like a map.
        match (lhs, rhs) {
            (None, Some(_)) => c.added.insert(path),
            (Some(_), None) => c.removed.insert(path),
            _ => {}
        }
        let mut seen: Vec<&Pe> = Vec::new();
        for pe in lpes.iter().chain(rpes.iter()) {
            if seen.contains(&pe) {
                continue;
            }
            seen.push(pe);
            let li = lpes.iter().position(|p| p == pe).map(|i| &l[i]);
            let ri = rpes.iter().position(|p| p == pe).map(|i| &r[i]);
            path.push(pe.clone());
            match (li, ri) {
                (Some(a), Some(b)) if a.is_object() && b.is_object() => {
                    compare_at(sc, Some(a), Some(b), path, c)
                }
                (Some(a), Some(b)) => compare_leaf(sc, Some(a), Some(b), path, c),
                (a, b) => {
                    if a.is_some_and(Value::is_object) || b.is_some_and(Value::is_object) {
                        compare_at(sc, a, b, path, c);
                    }
                    compare_leaf(sc, a, b, path, c);
                }
            }
            path.pop();
        }
        return;
    }
    compare_leaf(sc, lhs, rhs, path, c)
}

/// `TypedValue.Merge`: `config` merged into `live` (config wins; associative lists merge by key
/// in structured-merge-diff's order; `null` in config removes the field).
fn merge(sc: &ApplySchema, live: Option<&Value>, config: &Value, path: &mut Path) -> Option<Value> {
    match (live, config) {
        (_, Value::Null) => None,
        (_, Value::Object(_)) if sc.is_atomic(path) => Some(config.clone()),
        (Some(Value::Object(l)), Value::Object(r)) => {
            let mut out = l.clone();
            for (k, v) in r {
                path.push(field_pe(k));
                match merge(sc, l.get(k), v, path) {
                    Some(m) => {
                        out.insert(k.clone(), m);
                    }
                    None => {
                        out.remove(k);
                    }
                }
                path.pop();
            }
            Some(Value::Object(out))
        }
        (Some(Value::Array(l)), Value::Array(r)) => {
            let kind = sc.list_type(path);
            match (item_elements(&kind, l), item_elements(&kind, r)) {
                (Some(lpes), Some(rpes)) => {
                    Some(Value::Array(merge_list(sc, l, &lpes, r, &rpes, path)))
                }
                _ => Some(config.clone()),
            }
        }
        (_, Value::Object(r)) => {
            // no live object to merge into: the config, without its nulls
            let mut out = Map::new();
            for (k, v) in r {
                path.push(field_pe(k));
                if let Some(m) = merge(sc, None, v, path) {
                    out.insert(k.clone(), m);
                }
                path.pop();
            }
            Some(Value::Object(out))
        }
        _ => Some(config.clone()),
    }
}

/// structured-merge-diff `mergingWalker.visitListItems`: items only in the live list keep their
/// place, config items come in config order, shared items are merged.
fn merge_list(
    sc: &ApplySchema,
    l: &[Value],
    lpes: &[Pe],
    r: &[Value],
    rpes: &[Pe],
    path: &mut Path,
) -> Vec<Value> {
    let in_r = |pe: &Pe| rpes.iter().position(|p| p == pe);
    let in_l = |pe: &Pe| lpes.iter().position(|p| p == pe);
    let mut shared_order: std::collections::VecDeque<&Pe> =
        rpes.iter().filter(|pe| in_l(pe).is_some()).collect();
    let mut next_shared = shared_order.pop_front();
    let mut merged_rhs: Vec<&Pe> = Vec::new();
    let mut out = Vec::new();
    let merge_item = |li: Option<usize>, ri: Option<usize>, pe: &Pe, path: &mut Path| {
        path.push(pe.clone());
        let v = match ri {
            Some(ri) => merge(sc, li.map(|i| &l[i]), &r[ri], path),
            None => li.map(|i| l[i].clone()),
        };
        path.pop();
        v
    };
    let (mut li, mut ri) = (0, 0);
    while li < lpes.len() || ri < rpes.len() {
        if li < lpes.len() && ri < rpes.len() {
            let pe = &lpes[li];
            if *pe == rpes[ri] {
                merged_rhs.push(pe);
                if let Some(v) = merge_item(Some(li), Some(ri), pe, path) {
                    out.push(v);
                }
                li += 1;
                ri += 1;
                next_shared = shared_order.pop_front();
                continue;
            }
            if in_r(pe).is_some() && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < lpes.len() {
            let pe = &lpes[li];
            if in_r(pe).is_none() {
                if let Some(v) = merge_item(Some(li), None, pe, path) {
                    out.push(v);
                }
                li += 1;
                continue;
            } else if merged_rhs.contains(&pe) {
                li += 1;
                continue;
            }
        }
        if ri < rpes.len() {
            let pe = &rpes[ri];
            merged_rhs.push(pe);
            if let Some(v) = merge_item(in_l(pe), Some(ri), pe, path) {
                out.push(v);
            }
            ri += 1;
            if next_shared.is_some_and(|n| n == pe) {
                next_shared = shared_order.pop_front();
            }
        }
    }
    out
}

/// Removes the value at `path` (if present).
fn remove_path(sc: &ApplySchema, v: &mut Value, path: &[Pe]) {
    remove_in(sc, v, path, &[]);
}

/// Removes the value at `path` below `prefix` (lists are classified by their full path).
fn remove_in(sc: &ApplySchema, v: &mut Value, path: &[Pe], prefix: &[Pe]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    match v {
        Value::Object(map) => {
            let Some(name) = first.strip_prefix("f:") else {
                return;
            };
            if rest.is_empty() {
                map.remove(name);
            } else if let Some(child) = map.get_mut(name) {
                let mut p = prefix.to_vec();
                p.push(first.clone());
                remove_in(sc, child, rest, &p);
            }
        }
        Value::Array(items) => {
            let kind = sc.list_type(prefix);
            let Some(pes) = item_elements(&kind, items) else {
                return;
            };
            if let Some(i) = pes.iter().position(|p| p == first) {
                if rest.is_empty() {
                    items.remove(i);
                } else {
                    let mut p = prefix.to_vec();
                    p.push(first.clone());
                    remove_in(sc, &mut items[i], rest, &p);
                }
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// managedFields entries
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    subresource: String,
    time: Option<String>,
    set: FieldSet,
}

impl Entry {
    /// `BuildManagerIdentifier`: Apply entries ignore the apiVersion.
    fn same_identity(&self, manager: &str, operation: &str, api_version: &str, sub: &str) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource == sub
            && (operation == "Apply" || self.api_version == api_version)
    }

    /// `printManager`.
    fn printed(&self) -> String {
        let mut s = go_quote(&self.manager);
        if !self.subresource.is_empty() {
            s = format!("{s} with subresource {}", go_quote(&self.subresource));
        }
        if self.operation == "Update" {
            s = format!("{s} using {}", self.api_version);
        }
        s
    }

    fn encode(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager".into(), json!(self.manager));
        m.insert("operation".into(), json!(self.operation));
        m.insert("apiVersion".into(), json!(self.api_version));
        if let Some(t) = &self.time {
            m.insert("time".into(), json!(t));
        }
        m.insert("fieldsType".into(), json!("FieldsV1"));
        m.insert("fieldsV1".into(), self.set.to_fields_v1());
        if !self.subresource.is_empty() {
            m.insert("subresource".into(), json!(self.subresource));
        }
        Value::Object(m)
    }
}

fn decode_entries(obj: Option<&Value>) -> Vec<Entry> {
    let Some(list) = obj
        .and_then(|o| o.pointer("/metadata/managedFields"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let manager = s("manager");
            let operation = s("operation");
            if operation != "Apply" && operation != "Update" {
                return None;
            }
            Some(Entry {
                manager,
                operation,
                api_version: s("apiVersion"),
                subresource: s("subresource"),
                time: e.get("time").and_then(Value::as_str).map(str::to_owned),
                set: FieldSet::from_fields_v1(e.get("fieldsV1").unwrap_or(&Value::Null)),
            })
        })
        .collect()
}

fn seconds(t: &Option<String>) -> i64 {
    t.as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_second())
        .unwrap_or(0)
}

/// Writes `entries` into `obj.metadata.managedFields` in `sortEncodedManagedFields` order
/// (operation, time, manager, apiVersion, subresource); no entries removes the field.
fn encode_entries(obj: &mut Value, mut entries: Vec<Entry>) {
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
            Value::Array(entries.iter().map(Entry::encode).collect()),
        );
    }
}

fn without_managed_fields(obj: &Value) -> Value {
    let mut obj = obj.clone();
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    obj
}

/// `Comparison.FilterFields` plus the stripped fields.
fn filtered(c: Comparison, ignored: &FieldSet) -> Comparison {
    let strip = stripped();
    let f = |s: FieldSet| s.recursive_difference(ignored).difference(&strip);
    Comparison {
        added: f(c.added),
        modified: f(c.modified),
        removed: f(c.removed),
    }
}

/// `Updater.update`: other entries lose the fields the change took (conflicts unless `force`)
/// and the fields it removed. `skip` is the index of the acting entry, if it has one.
fn take_from_others(
    entries: &mut [Entry],
    skip: Option<usize>,
    c: &Comparison,
    force: bool,
) -> Result<(), ApplyError> {
    let changed = c.modified.union(&c.added);
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
    if !force && !conflicts.is_empty() {
        conflicts.sort();
        return Err(ApplyError::Conflict { conflicts });
    }
    for (i, e) in entries.iter_mut().enumerate() {
        if Some(i) == skip {
            continue;
        }
        e.set = e.set.difference(&changed).difference(&c.removed);
        e.set.compact();
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Request-level helpers
// ---------------------------------------------------------------------------------------------

/// `FieldManagerMaxLength`.
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// The manager of a write without `?fieldManager=` (`managerOrUserAgent`): the User-Agent up to
/// its first `/`, without unprintable characters, at most 128 bytes (`kubectl/v1.34.0 (…)` ->
/// `kubectl`).
pub fn manager_or_user_agent(field_manager: Option<&str>, user_agent: &str) -> String {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return m.to_owned();
    }
    let prefix = user_agent.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in prefix.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

/// `ValidatePatchOptions` for the common mistakes, with the 422 message the server returns
/// (`PatchOptions.meta.k8s.io "" is invalid: …`): an apply patch needs a field manager, and
/// `force` is only for apply patches.
#[cfg(test)]
pub fn validate_patch_options(apply: bool, field_manager: &str, force: bool) -> Result<(), String> {
    let mut errs = Vec::new();
    if !apply && force {
        errs.push("force: Forbidden: may not be specified for non-apply patch");
    }
    if apply && field_manager.is_empty() {
        errs.push("fieldManager: Required value: is required for apply patch");
    }
    match errs.as_slice() {
        [] => Ok(()),
        [one] => Err(format!("PatchOptions.meta.k8s.io \"\" is invalid: {one}")),
        many => Err(format!(
            "PatchOptions.meta.k8s.io \"\" is invalid: [{}]",
            many.join(", ")
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// The operations
// ---------------------------------------------------------------------------------------------

/// Server-side apply of `applied` (the request body) onto `live` (`None` creates) by `manager`,
/// returning the object to store with its `managedFields`. See the module docs for the rules.
///
/// `api_version` is the version the request is served at (the applied object's `apiVersion`
/// must equal it), `subresource` the subresource the request addresses, `now` the RFC 3339
/// time written into the applier's entry when the apply changes something.
#[cfg(test)]
pub fn server_side_apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    api_version: &str,
    subresource: Option<&str>,
    now: &str,
) -> Result<Value, ApplyError> {
    server_side_apply_with_reset(
        live,
        applied,
        manager,
        force,
        api_version,
        subresource,
        now,
        &[],
    )
}

/// [`server_side_apply`] with top-level fields the resource's strategy resets on this endpoint
/// (`GetResetFields`): pass `["status"]` for the main resource of a kind with a status
/// subresource. Reset fields keep their live value and are owned by no one through this call.
#[allow(clippy::too_many_arguments)]
#[cfg(test)]
pub fn server_side_apply_with_reset(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    api_version: &str,
    subresource: Option<&str>,
    now: &str,
    reset: &[&str],
) -> Result<Value, ApplyError> {
    let at = Endpoint {
        api_version,
        subresource,
        reset_fields: reset,
        schema: default_schema(),
    };
    apply_at(live, applied, manager, force, &at, now)
}

/// Where a write lands and how its resource is shaped: what the server knows beyond the request.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint<'a> {
    /// The group/version the request is served at (`v1`, `demo.kubeward.dev/v1`).
    pub api_version: &'a str,
    /// The subresource the request addresses (`Some("status")`).
    pub subresource: Option<&'a str>,
    /// Top-level fields the strategy resets on this endpoint (`GetResetFields`): `["status"]`
    /// for the main resource of a kind with a status subresource.
    pub reset_fields: &'a [&'a str],
    /// Which lists are associative and which objects are maps.
    pub schema: &'a ApplySchema,
}

fn default_schema() -> &'static ApplySchema {
    static DEFAULT: std::sync::OnceLock<ApplySchema> = std::sync::OnceLock::new();
    DEFAULT.get_or_init(ApplySchema::default)
}

/// Server-side apply at an [`Endpoint`]: the general form of [`server_side_apply`].
pub fn apply_at(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    at: &Endpoint<'_>,
    now: &str,
) -> Result<Value, ApplyError> {
    let (api_version, subresource, reset, sc) =
        (at.api_version, at.subresource, at.reset_fields, at.schema);
    let Value::Object(applied_map) = applied else {
        return Err(ApplyError::Invalid(
            "error decoding YAML: the apply patch must be an object".to_owned(),
        ));
    };
    let patch_version = applied_map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    if patch_version != api_version {
        return Err(ApplyError::Invalid(format!(
            "Incorrect version specified in apply patch. Specified patch version: {patch_version}, expected: {api_version}"
        )));
    }
    if applied
        .pointer("/metadata/managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApplyError::Invalid(
            "metadata.managedFields must be nil".to_owned(),
        ));
    }
    let sub = subresource.unwrap_or("");
    let mut entries = decode_entries(live);
    let live_clean = live
        .map(without_managed_fields)
        .unwrap_or_else(|| json!({}));
    let ignored = ignored_set(&[&live_clean, applied], subresource, reset);

    // skipNonAppliedManager: an existing object without managedFields is first attributed to
    // "before-first-apply", so that the apply conflicts with what is already there.
    if live.is_some() && entries.is_empty() {
        let c = filtered(compare(sc, &json!({}), &live_clean), &ignored);
        let set = c.added.union(&c.modified);
        if !set.is_empty() {
            entries.push(Entry {
                manager: "before-first-apply".into(),
                operation: "Update".into(),
                api_version: api_version.to_owned(),
                subresource: sub.to_owned(),
                time: Some(now.to_owned()),
                set,
            });
        }
    }

    // The configuration as this endpoint takes it: ignored fields keep their live values.
    let mut config = Value::Object(applied_map.clone());
    if let Some(cfg) = config.as_object_mut() {
        cfg.retain(|k, _| !ignored.has(&[field_pe(k)]));
    }

    let mut merged = merge(sc, Some(&live_clean), &config, &mut Vec::new()).unwrap_or(json!({}));

    let new_set = to_field_set(sc, &config)
        .recursive_difference(&ignored)
        .difference(&stripped());
    let me = entries
        .iter()
        .position(|e| e.same_identity(manager, "Apply", api_version, sub));
    let last_set = me.map(|i| entries[i].set.clone()).unwrap_or_default();
    let me = match me {
        Some(i) => {
            entries[i].set = new_set.clone();
            entries[i].api_version = api_version.to_owned();
            i
        }
        None => {
            entries.push(Entry {
                manager: manager.to_owned(),
                operation: "Apply".into(),
                api_version: api_version.to_owned(),
                subresource: sub.to_owned(),
                time: None,
                set: new_set.clone(),
            });
            entries.len() - 1
        }
    };

    // Updater.prune: what the applier applied last time and no one owns now goes away.
    if !last_set.is_empty() {
        let owned = entries
            .iter()
            .fold(FieldSet::default(), |acc, e| acc.union(&e.set));
        // Shallowest first: removing a container takes its unowned descendants with it (and
        // removing a keyed item's key field first would make the item unaddressable).
        let mut to_remove = last_set.difference(&owned).paths();
        to_remove.sort_by_key(Vec::len);
        for p in to_remove {
            if !owned.has_descendant(&p) {
                remove_path(sc, &mut merged, &p);
            }
        }
    }

    let c = filtered(compare(sc, &live_clean, &merged), &ignored);
    take_from_others(&mut entries, Some(me), &c, force)?;

    let changed = merged != live_clean;
    // managedFieldsUpdater.Apply: the applier's time is stamped only when the object changed
    // (an apply that only takes or shares ownership leaves it as it was, or unset).
    if changed {
        entries[me].time = Some(now.to_owned());
    }
    if !changed
        && live.is_some_and(|l| {
            let mut same = l.clone();
            encode_entries(&mut same, entries.clone());
            same == *l
        })
    {
        // A no-op apply returns the live object untouched.
        return Ok(live.cloned().unwrap_or_default());
    }
    encode_entries(&mut merged, entries);
    Ok(merged)
}

/// Records a create (`old` = `None`), PUT or non-apply PATCH by `manager` in `new`'s
/// `managedFields` (operation `Update`), as the real server does for every write that is not an
/// apply: `manager` takes the fields it added or changed from everyone, everyone loses the fields
/// it removed. A `new` object that carries its own non-empty `managedFields` has them honoured
/// (clients may rewrite ownership); `managedFields: [{}]` clears them.
pub fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    subresource: Option<&str>,
    now: &str,
) {
    record_update_with_reset(old, new, manager, api_version, subresource, now, &[]);
}

/// [`record_update`] with top-level fields the strategy resets on this endpoint (see
/// [`server_side_apply_with_reset`]): changes to them are attributed to no one.
pub fn record_update_with_reset(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    subresource: Option<&str>,
    now: &str,
    reset: &[&str],
) {
    let at = Endpoint {
        api_version,
        subresource,
        reset_fields: reset,
        schema: default_schema(),
    };
    update_at(old, new, manager, &at, now);
}

/// Records an Update at an [`Endpoint`]: the general form of [`record_update`].
pub fn update_at(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    at: &Endpoint<'_>,
    now: &str,
) {
    let (api_version, subresource, reset, sc) =
        (at.api_version, at.subresource, at.reset_fields, at.schema);
    let sub = subresource.unwrap_or("");
    // isResetManagedFields: `[{}]` empties managedFields.
    if let Some(list) = new
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        && list.len() == 1
        && list[0].as_object().is_some_and(Map::is_empty)
    {
        encode_entries(new, Vec::new());
        return;
    }
    let mut entries = decode_entries(Some(new));
    if entries.is_empty() {
        entries = decode_entries(old);
        if old.is_some() && entries.is_empty() {
            // skipNonAppliedManager: an update of an object whose fields nobody manages starts
            // no tracking (only a create, or an apply, does).
            encode_entries(new, Vec::new());
            return;
        }
    }
    let old_clean = old.map(without_managed_fields).unwrap_or_else(|| json!({}));
    let new_clean = without_managed_fields(new);
    let ignored = ignored_set(&[&old_clean, &new_clean], subresource, reset);
    let c = filtered(compare(sc, &old_clean, &new_clean), &ignored);
    // current-operation is a fresh manager: it takes from everyone (force), then merges into
    // the manager's previous entry.
    let _ = take_from_others(&mut entries, None, &c, true);
    let took = c.added.union(&c.modified);
    // An update through `/scale` is recorded without a time: the scale handler converts the
    // managed fields to and from the Scale's, which drops it.
    let time = (sub != "scale").then(|| now.to_owned());
    if !took.is_empty() {
        match entries
            .iter_mut()
            .find(|e| e.same_identity(manager, "Update", api_version, sub))
        {
            Some(e) => {
                e.set = e.set.union(&took);
                e.time = time;
            }
            None => entries.push(Entry {
                manager: manager.to_owned(),
                operation: "Update".into(),
                api_version: api_version.to_owned(),
                subresource: sub.to_owned(),
                time,
                set: took,
            }),
        }
    }
    encode_entries(new, entries);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const T0: &str = "2026-01-01T00:00:00Z";
    const T1: &str = "2026-01-01T00:01:00Z";
    const T2: &str = "2026-01-01T00:02:00Z";
    const V: &str = "demo.kubeward.dev/v1";

    fn rollout(spec: Value) -> Value {
        json!({"apiVersion": V, "kind": "Rollout", "metadata": {"name": "web", "namespace": "demo"}, "spec": spec})
    }

    fn entries(obj: &Value) -> Vec<Value> {
        obj.pointer("/metadata/managedFields")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    fn entry<'a>(obj: &'a Value, manager: &str) -> Option<&'a Value> {
        obj.pointer("/metadata/managedFields")?
            .as_array()?
            .iter()
            .find(|e| e["manager"] == manager)
    }

    fn apply(
        live: Option<&Value>,
        applied: &Value,
        manager: &str,
        force: bool,
    ) -> Result<Value, ApplyError> {
        server_side_apply(live, applied, manager, force, V, None, T1)
    }

    #[test]
    fn apply_creates_and_records_an_apply_entry_in_the_real_format() {
        let obj = server_side_apply(
            None,
            &rollout(json!({"replicas": 3, "image": "web:1"})),
            "ctrl",
            false,
            V,
            None,
            T0,
        )
        .unwrap();
        assert_eq!(obj["spec"], json!({"replicas": 3, "image": "web:1"}));
        assert_eq!(
            entries(&obj),
            [json!({
                "manager": "ctrl",
                "operation": "Apply",
                "apiVersion": V,
                "time": T0,
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:image": {}, "f:replicas": {}}},
            })]
        );
    }

    #[test]
    fn name_namespace_and_type_meta_are_not_owned() {
        let mut applied = rollout(json!({"replicas": 1}));
        applied["metadata"]["labels"] = json!({"app": "web"});
        let obj = apply(None, &applied, "ctrl", false).unwrap();
        assert_eq!(
            entry(&obj, "ctrl").unwrap()["fieldsV1"],
            json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:replicas": {}}})
        );
    }

    #[test]
    fn changing_a_field_owned_by_another_manager_conflicts() {
        let live = apply(None, &rollout(json!({"replicas": 3})), "other", false).unwrap();
        let err = apply(Some(&live), &rollout(json!({"replicas": 5})), "ctrl", false).unwrap_err();
        assert_eq!(
            err,
            ApplyError::Conflict {
                conflicts: vec![("\"other\"".into(), ".spec.replicas".into())]
            }
        );
        assert_eq!(
            err.message(),
            "Apply failed with 1 conflict: conflict with \"other\": .spec.replicas"
        );
        assert_eq!(
            err.status_causes(),
            [
                json!({"reason": "FieldManagerConflict", "message": "conflict with \"other\"", "field": ".spec.replicas"})
            ]
        );
    }

    #[test]
    fn conflicts_with_update_managers_name_their_api_version() {
        let mut live = rollout(json!({"replicas": 3, "paused": false}));
        record_update(None, &mut live, "kubectl-create", V, None, T0);
        let err = apply(
            Some(&live),
            &rollout(json!({"replicas": 5, "paused": true})),
            "ctrl",
            false,
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "Apply failed with 2 conflicts: conflicts with \"kubectl-create\" using demo.kubeward.dev/v1:\n- .spec.paused\n- .spec.replicas"
        );
    }

    #[test]
    fn force_moves_ownership() {
        let live = apply(
            None,
            &rollout(json!({"replicas": 3, "image": "a"})),
            "other",
            false,
        )
        .unwrap();
        let obj = apply(Some(&live), &rollout(json!({"replicas": 5})), "ctrl", true).unwrap();
        assert_eq!(obj["spec"], json!({"replicas": 5, "image": "a"}));
        assert_eq!(
            entry(&obj, "other").unwrap()["fieldsV1"],
            json!({"f:spec": {"f:image": {}}})
        );
        assert_eq!(
            entry(&obj, "ctrl").unwrap()["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}}})
        );
        // now "other" conflicts when it re-applies its old value
        let err = apply(
            Some(&obj),
            &rollout(json!({"replicas": 3, "image": "a"})),
            "other",
            false,
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "Apply failed with 1 conflict: conflict with \"ctrl\": .spec.replicas"
        );
    }

    #[test]
    fn same_value_is_shared_ownership_without_conflict() {
        let live = apply(None, &rollout(json!({"replicas": 3})), "other", false).unwrap();
        let obj = apply(Some(&live), &rollout(json!({"replicas": 3})), "ctrl", false).unwrap();
        assert_eq!(
            entry(&obj, "other").unwrap()["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}}})
        );
        assert_eq!(
            entry(&obj, "ctrl").unwrap()["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}}})
        );
        // either one dropping the field keeps it: the other still owns it
        let mut nothing = rollout(json!({}));
        nothing.as_object_mut().unwrap().remove("spec");
        let dropped = apply(Some(&obj), &nothing, "ctrl", false).unwrap();
        assert_eq!(dropped["spec"]["replicas"], 3);
        assert!(
            entry(&dropped, "ctrl").is_none(),
            "an applier that owns nothing has no entry"
        );
    }

    #[test]
    fn omitted_fields_are_removed_when_no_one_else_owns_them() {
        let live = apply(
            None,
            &rollout(json!({"replicas": 3, "image": "a"})),
            "ctrl",
            false,
        )
        .unwrap();
        let obj = apply(Some(&live), &rollout(json!({"image": "b"})), "ctrl", false).unwrap();
        assert_eq!(obj["spec"], json!({"image": "b"}));
        // a field someone else wrote (Update) stays, though the applier stops applying it
        let mut live = apply(None, &rollout(json!({"replicas": 3})), "ctrl", false).unwrap();
        let old = live.clone();
        live["spec"]["paused"] = json!(true);
        record_update(Some(&old), &mut live, "kubectl-edit", V, None, T1);
        let obj = apply(
            Some(&live),
            &rollout(json!({"paused": true})),
            "ctrl",
            false,
        )
        .unwrap();
        assert_eq!(obj["spec"], json!({"paused": true}));
        // fields never applied by the applier are never removed by it
        let mut unowned = rollout(json!({"replicas": 3, "extra": 1}));
        record_update(None, &mut unowned, "creator", V, None, T0);
        let obj = apply(
            Some(&unowned),
            &rollout(json!({"replicas": 3})),
            "ctrl",
            false,
        )
        .unwrap();
        let obj = apply(Some(&obj), &rollout(json!({})), "ctrl", false).unwrap();
        assert_eq!(obj["spec"], json!({"replicas": 3, "extra": 1}));
    }

    #[test]
    fn update_takes_changed_fields_from_appliers() {
        let live = apply(
            None,
            &rollout(json!({"replicas": 3, "image": "a"})),
            "ctrl",
            false,
        )
        .unwrap();
        let mut new = live.clone();
        new["spec"]["replicas"] = json!(7);
        record_update(Some(&live), &mut new, "kubectl-edit", V, None, T2);
        assert_eq!(
            entry(&new, "ctrl").unwrap()["fieldsV1"],
            json!({"f:spec": {"f:image": {}}})
        );
        let edit = entry(&new, "kubectl-edit").unwrap();
        assert_eq!(edit["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
        assert_eq!(edit["operation"], "Update");
        assert_eq!(edit["time"], T2);
        // entries are sorted: Apply before Update
        assert_eq!(entries(&new)[0]["operation"], "Apply");
        // the applier now conflicts with the editor
        let err = apply(
            Some(&new),
            &rollout(json!({"replicas": 3, "image": "a"})),
            "ctrl",
            false,
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using demo.kubeward.dev/v1: .spec.replicas"
        );
    }

    #[test]
    fn an_update_creating_a_custom_resource_owns_the_structs_and_sets_it_adds() {
        let schema = ApplySchema::from_openapi_v3(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "o": {"type": "object", "properties": {"a": {"type": "string"}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}}}}}}));
        let mut obj = json!({"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout",
            "metadata": {"name": "r", "namespace": "d"},
            "spec": {"o": {"a": "x"}, "tags": ["t"], "args": ["x"]}});
        let at = Endpoint {
            api_version: "demo.kubeward.dev/v1",
            subresource: None,
            reset_fields: &[],
            schema: &schema,
        };
        update_at(None, &mut obj, "creator", &at, T0);
        // As kube-apiserver records it: an unstructured object has no empty structs to start
        // from, so every object (and associative list) the update adds is owned itself; an
        // atomic list is one leaf.
        assert_eq!(
            entries(&obj)[0]["fieldsV1"],
            json!({"f:spec": {".": {}, "f:args": {}, "f:o": {".": {}, "f:a": {}},
                              "f:tags": {".": {}, "v:\"t\"": {}}}})
        );
    }

    #[test]
    fn update_on_create_owns_everything_but_meta_and_maps_get_a_dot() {
        let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "d", "uid": "u", "resourceVersion": "1", "labels": {"a": "1"}},
            "data": {"k": "v"}});
        record_update(None, &mut obj, "kubectl-create", "v1", None, T0);
        assert_eq!(
            entries(&obj),
            [json!({
                "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": T0,
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}},
            })]
        );
    }

    #[test]
    fn removed_fields_leave_every_set_and_an_update_that_only_removes_keeps_its_time() {
        let mut live = rollout(json!({"replicas": 3, "image": "a"}));
        record_update(None, &mut live, "creator", V, None, T0);
        let mut new = live.clone();
        new["spec"].as_object_mut().unwrap().remove("image");
        record_update(Some(&live), &mut new, "editor", V, None, T1);
        assert_eq!(
            entry(&new, "creator").unwrap()["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}}})
        );
        assert!(entry(&new, "editor").is_none());
        assert_eq!(entry(&new, "creator").unwrap()["time"], T0);
    }

    #[test]
    fn finalizers_are_a_set_owned_item_by_item() {
        let mut applied = rollout(json!({}));
        applied["metadata"]["finalizers"] = json!(["demo.kubeward.dev/cleanup"]);
        let obj = apply(None, &applied, "ctrl", false).unwrap();
        assert_eq!(
            entry(&obj, "ctrl").unwrap()["fieldsV1"]["f:metadata"],
            json!({"f:finalizers": {"v:\"demo.kubeward.dev/cleanup\"": {}}})
        );
        // another manager adds its own finalizer through a JSON patch (Update): both coexist
        let mut new = obj.clone();
        new["metadata"]["finalizers"] = json!(["demo.kubeward.dev/cleanup", "other/x"]);
        record_update(Some(&obj), &mut new, "other", V, None, T1);
        assert_eq!(
            entry(&new, "other").unwrap()["fieldsV1"],
            json!({"f:metadata": {"f:finalizers": {"v:\"other/x\"": {}}}})
        );
        // the applier drops its finalizer: only its own item goes
        let mut applied = rollout(json!({}));
        applied["metadata"]["finalizers"] = json!([]);
        let out = apply(Some(&new), &applied, "ctrl", false).unwrap();
        assert_eq!(out["metadata"]["finalizers"], json!(["other/x"]));
    }

    #[test]
    fn conditions_are_a_map_keyed_by_type() {
        let status = |conds: Value| json!({"apiVersion": V, "kind": "Rollout", "metadata": {"name": "web", "namespace": "demo"}, "status": {"conditions": conds}});
        let created = apply(None, &rollout(json!({"replicas": 1})), "ctrl", false).unwrap();
        let live = server_side_apply(
            Some(&created),
            &status(json!([{"type": "Ready", "status": "True"}])),
            "a",
            false,
            V,
            Some("status"),
            T0,
        )
        .unwrap();
        assert_eq!(live["spec"], json!({"replicas": 1}));
        assert_eq!(live["metadata"]["name"], "web");
        assert_eq!(
            entry(&live, "a").unwrap(),
            &json!({"manager": "a", "operation": "Apply", "apiVersion": V, "time": T0, "fieldsType": "FieldsV1", "subresource": "status",
                "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}, "f:type": {}}}}}})
        );
        // a second manager owns another condition type without conflict
        let both = server_side_apply(
            Some(&live),
            &status(json!([{"type": "Synced", "status": "False"}])),
            "b",
            false,
            V,
            Some("status"),
            T1,
        )
        .unwrap();
        assert_eq!(
            both["status"]["conditions"],
            json!([{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}])
        );
        // changing a's condition conflicts, with the key in the path and the subresource named
        let err = server_side_apply(
            Some(&both),
            &status(json!([{"type": "Ready", "status": "False"}])),
            "b",
            false,
            V,
            Some("status"),
            T1,
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "Apply failed with 1 conflict: conflict with \"a\" with subresource \"status\": .status.conditions[type=\"Ready\"].status"
        );
        // a drops its condition: it goes, b's stays
        let dropped = server_side_apply(
            Some(&both),
            &status(json!([])),
            "a",
            false,
            V,
            Some("status"),
            T2,
        )
        .unwrap();
        assert_eq!(
            dropped["status"]["conditions"],
            json!([{"type": "Synced", "status": "False"}])
        );
    }

    #[test]
    fn status_subresource_applies_only_status() {
        let live = apply(None, &rollout(json!({"replicas": 1})), "ctrl", false).unwrap();
        let mut applied = rollout(json!({"replicas": 9}));
        applied["status"] = json!({"phase": "Ready"});
        let obj =
            server_side_apply(Some(&live), &applied, "ctrl", false, V, Some("status"), T1).unwrap();
        assert_eq!(obj["spec"], json!({"replicas": 1}));
        assert_eq!(obj["status"], json!({"phase": "Ready"}));
        let status_entry = obj["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["subresource"] == "status")
            .unwrap();
        assert_eq!(
            status_entry["fieldsV1"],
            json!({"f:status": {"f:phase": {}}})
        );
        // the main-resource Apply entry of the same manager is a different entry
        assert_eq!(entries(&obj).len(), 2);
    }

    #[test]
    fn reset_fields_are_neither_changed_nor_owned() {
        let mut applied = rollout(json!({"replicas": 1}));
        applied["status"] = json!({"phase": "Bogus"});
        let obj =
            server_side_apply_with_reset(None, &applied, "ctrl", false, V, None, T0, &["status"])
                .unwrap();
        assert!(obj.get("status").is_none());
        assert_eq!(
            entry(&obj, "ctrl").unwrap()["fieldsV1"],
            json!({"f:spec": {"f:replicas": {}}})
        );
    }

    #[test]
    fn invalid_apply_requests() {
        let err = apply(
            None,
            &json!({"apiVersion": "v1", "kind": "Rollout", "metadata": {"name": "x"}}),
            "ctrl",
            false,
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "Incorrect version specified in apply patch. Specified patch version: v1, expected: demo.kubeward.dev/v1"
        );
        let mut applied = rollout(json!({}));
        applied["metadata"]["managedFields"] = json!([]);
        assert_eq!(
            apply(None, &applied, "ctrl", false).unwrap_err(),
            ApplyError::Invalid("metadata.managedFields must be nil".into())
        );
    }

    #[test]
    fn no_op_apply_returns_the_live_object_unchanged() {
        let live = apply(None, &rollout(json!({"replicas": 3})), "ctrl", false).unwrap();
        let again = server_side_apply(
            Some(&live),
            &rollout(json!({"replicas": 3})),
            "ctrl",
            false,
            V,
            None,
            T2,
        )
        .unwrap();
        assert_eq!(again, live);
    }

    #[test]
    fn objects_without_managed_fields_are_owned_by_before_first_apply() {
        let live = rollout(json!({"replicas": 3}));
        let err = apply(Some(&live), &rollout(json!({"replicas": 4})), "ctrl", false).unwrap_err();
        assert_eq!(
            err.message(),
            "Apply failed with 1 conflict: conflict with \"before-first-apply\" using demo.kubeward.dev/v1: .spec.replicas"
        );
    }

    #[test]
    fn client_supplied_managed_fields_are_honoured_and_can_be_reset() {
        let live = apply(None, &rollout(json!({"replicas": 3})), "ctrl", false).unwrap();
        let mut cleared = live.clone();
        cleared["metadata"]["managedFields"] = json!([{}]);
        record_update(Some(&live), &mut cleared, "x", V, None, T1);
        assert!(cleared["metadata"].get("managedFields").is_none());
    }

    #[test]
    fn request_helpers_match_the_apiserver() {
        assert_eq!(
            manager_or_user_agent(None, "kubectl/v1.34.0 (linux/amd64) kubernetes/abc"),
            "kubectl"
        );
        assert_eq!(manager_or_user_agent(Some("ctrl"), "kube-rs/5"), "ctrl");
        assert_eq!(manager_or_user_agent(Some(""), "kube-rs/5"), "kube-rs");
        assert_eq!(manager_or_user_agent(None, &"x".repeat(200)).len(), 128);
        assert_eq!(
            validate_patch_options(true, "", false).unwrap_err(),
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
        );
        assert_eq!(
            validate_patch_options(false, "", true).unwrap_err(),
            "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
        );
        assert!(validate_patch_options(true, "ctrl", true).is_ok());
        assert!(validate_patch_options(false, "", false).is_ok());
    }

    #[test]
    fn a_crd_schema_decides_list_merging() {
        let status = |conds: Value| json!({"apiVersion": V, "kind": "Rollout", "metadata": {"name": "web", "namespace": "demo"}, "status": {"conditions": conds}});
        // a CRD that does not declare x-kubernetes-list-type: conditions are atomic
        let atomic = ApplySchema::from_openapi_v3(&json!({"type": "object", "properties": {
            "status": {"type": "object", "properties": {"conditions": {"type": "array", "items": {"type": "object"}}}}}}));
        let at = Endpoint {
            api_version: V,
            subresource: None,
            reset_fields: &[],
            schema: &atomic,
        };
        let live = apply_at(
            None,
            &status(json!([{"type": "Ready", "status": "True"}])),
            "a",
            false,
            &at,
            T0,
        )
        .unwrap();
        assert_eq!(
            entry(&live, "a").unwrap()["fieldsV1"],
            json!({"f:status": {"f:conditions": {}}})
        );
        let err = apply_at(
            Some(&live),
            &status(json!([{"type": "Synced", "status": "True"}])),
            "b",
            false,
            &at,
            T1,
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "Apply failed with 1 conflict: conflict with \"a\": .status.conditions"
        );
        // the same with the list declared a map: no conflict, both conditions kept
        let keyed = ApplySchema::from_openapi_v3(&json!({"type": "object", "properties": {
            "status": {"type": "object", "properties": {"conditions": {"type": "array",
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"], "items": {"type": "object"}}}}}}));
        let at = Endpoint {
            schema: &keyed,
            ..at
        };
        let live = apply_at(
            None,
            &status(json!([{"type": "Ready", "status": "True"}])),
            "a",
            false,
            &at,
            T0,
        )
        .unwrap();
        let both = apply_at(
            Some(&live),
            &status(json!([{"type": "Synced", "status": "True"}])),
            "b",
            false,
            &at,
            T1,
        )
        .unwrap();
        assert_eq!(both["status"]["conditions"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn nested_lists_and_map_entries_follow_the_schema() {
        let schema = ApplySchema::metadata_only()
            .with_list("spec.containers", ListType::Map(vec!["name".into()]))
            .with_list(
                "spec.containers[].ports",
                ListType::Map(vec!["containerPort".into()]),
            )
            .with_list("spec.tags", ListType::Set)
            .with_map("spec.selectors")
            .with_list("spec.selectors.*", ListType::Set);
        let at = Endpoint {
            api_version: V,
            subresource: None,
            reset_fields: &[],
            schema: &schema,
        };
        let first = rollout(json!({
            "containers": [{"name": "app", "image": "a:1", "ports": [{"containerPort": 80}]}],
            "tags": ["x"],
            "selectors": {"zone": ["a"]},
        }));
        let live = apply_at(None, &first, "a", false, &at, T0).unwrap();
        assert_eq!(
            entry(&live, "a").unwrap()["fieldsV1"]["f:spec"],
            json!({
                "f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {},
                    "f:ports": {"k:{\"containerPort\":80}": {".": {}, "f:containerPort": {}}}}},
                "f:selectors": {"f:zone": {"v:\"a\"": {}}},
                "f:tags": {"v:\"x\"": {}},
            })
        );
        // b adds a port to the same container, a tag and a selector value: merged, no conflict
        let second = rollout(json!({
            "containers": [{"name": "app", "ports": [{"containerPort": 443}]}],
            "tags": ["y"],
            "selectors": {"zone": ["b"]},
        }));
        let merged = apply_at(Some(&live), &second, "b", false, &at, T1).unwrap();
        assert_eq!(
            merged["spec"],
            json!({
                "containers": [{"name": "app", "image": "a:1", "ports": [{"containerPort": 80}, {"containerPort": 443}]}],
                "tags": ["x", "y"],
                "selectors": {"zone": ["a", "b"]},
            })
        );
        // a changing the image b does not own is fine; b changing a's image conflicts
        let err = apply_at(
            Some(&merged),
            &rollout(json!({"containers": [{"name": "app", "image": "a:2"}]})),
            "b",
            false,
            &at,
            T2,
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "Apply failed with 1 conflict: conflict with \"a\": .spec.containers[name=\"app\"].image"
        );
    }

    #[test]
    fn field_sets_round_trip_through_fields_v1() {
        let v = json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}}}}});
        assert_eq!(FieldSet::from_fields_v1(&v).to_fields_v1(), v);
    }

    fn arb_spec() -> impl Strategy<Value = Value> {
        proptest::collection::btree_map(
            "[abc]",
            prop_oneof![
                (0i64..3).prop_map(|n| json!(n)),
                "[xy]".prop_map(Value::String)
            ],
            0..4,
        )
        .prop_map(|m| Value::Object(m.into_iter().collect()))
    }

    proptest! {
        #[test]
        fn applying_twice_is_a_no_op(spec in arb_spec()) {
            let once = apply(None, &rollout(spec.clone()), "ctrl", false).unwrap();
            let twice = server_side_apply(Some(&once), &rollout(spec), "ctrl", false, V, None, T2).unwrap();
            prop_assert_eq!(once, twice);
        }

        #[test]
        fn an_applier_owns_exactly_what_it_applied_and_its_fields_hold_its_values(
            first in arb_spec(), second in arb_spec(),
        ) {
            let live = apply(None, &rollout(first), "a", false).unwrap();
            let obj = apply(Some(&live), &rollout(second.clone()), "b", true).unwrap();
            for (k, v) in second.as_object().unwrap() {
                prop_assert_eq!(&obj["spec"][k], v);
            }
            let owned = entry(&obj, "b").map(|e| e["fieldsV1"]["f:spec"].clone()).unwrap_or(json!({}));
            let keys: Vec<String> = second.as_object().unwrap().keys().map(|k| format!("f:{k}")).collect();
            let owned_keys: Vec<String> = owned.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
            prop_assert_eq!(owned_keys, keys);
            // no field is owned by both a and b with different views: a lost what b forced
            if let Some(a) = entry(&obj, "a") {
                for k in a["fieldsV1"]["f:spec"].as_object().unwrap().keys() {
                    let name = &k[2..];
                    let a_value = &live["spec"][name];
                    prop_assert_eq!(&obj["spec"][name], a_value);
                }
            }
        }

        #[test]
        fn update_owner_sets_partition_changed_fields(before in arb_spec(), after in arb_spec()) {
            let mut live = rollout(before);
            record_update(None, &mut live, "one", V, None, T0);
            let mut new = rollout(after.clone());
            record_update(Some(&live), &mut new, "two", V, None, T1);
            // every spec field is owned by exactly one of the two managers
            let owners = |k: &str| ["one", "two"].iter().filter(|m| entry(&new, m).is_some_and(|e| e["fieldsV1"]["f:spec"].get(format!("f:{k}")).is_some())).count();
            for k in after.as_object().unwrap().keys() {
                prop_assert_eq!(owners(k), 1, "field {}", k);
            }
        }
    }
}

/// The usage examples of this module's items (the module is private to the crate).
#[cfg(test)]
mod examples {
    #[test]
    fn from_openapi_v3() {
        use crate::apply::ApplySchema;
        let crd_schema = serde_json::json!({"type": "object", "properties": {
            "status": {"type": "object", "properties": {"conditions": {
                "type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["type"],
                "items": {"type": "object"}}}}}});
        let schema = ApplySchema::from_openapi_v3(&crd_schema);
        assert_eq!(
            schema.list_type(&["f:status".to_owned(), "f:conditions".to_owned()]),
            crate::apply::ListType::Map(vec!["type".to_owned()])
        );
    }

    #[test]
    fn server_side_apply() {
        use crate::apply::{record_update, server_side_apply};
        use serde_json::json;
        let now = "2026-01-01T00:00:00Z";
        let mut live = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web", "namespace": "demo"}, "data": {"replicas": "1"}});
        record_update(None, &mut live, "kubectl-create", "v1", None, now);
        let applied = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web", "namespace": "demo"}, "data": {"replicas": "2"}});
        let err =
            server_side_apply(Some(&live), &applied, "ctrl", false, "v1", None, now).unwrap_err();
        assert_eq!(
            err.message(),
            r#"Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.replicas"#
        );
        let forced =
            server_side_apply(Some(&live), &applied, "ctrl", true, "v1", None, now).unwrap();
        assert_eq!(forced["data"]["replicas"], "2");
    }
}
