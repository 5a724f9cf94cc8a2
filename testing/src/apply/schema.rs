//! The schema stand-in: which lists are associative and which objects are maps, and the fields
//! the field manager never tracks.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::field_set::{FieldSet, Pe};

/// How a list is merged and owned (`x-kubernetes-list-type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListType {
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
pub(crate) struct ApplySchema {
    pub(super) lists: BTreeMap<String, ListType>,
    pub(super) maps: std::collections::BTreeSet<String>,
    /// Structs owned and replaced whole (`+structType=atomic`, `x-kubernetes-map-type: atomic`).
    pub(super) atomics: std::collections::BTreeSet<String>,
    /// Whether objects are unstructured (custom resources) rather than Go types (built-ins).
    /// In an unstructured object an Update that adds a struct owns the struct itself, as it
    /// owns an added map (there are no zero-valued structs, so every object an Update adds is
    /// new), and `null` is a value; a built-in's Go structs exist empty in the object the
    /// comparison starts from, and its `null` is a nil slice or pointer, no value.
    pub(super) unstructured: bool,
    /// Fields a built-in's zero value holds (value structs, lists without `omitempty`): an
    /// Update that finds them set does not own them as added (`.`).
    pub(super) zero_valued: std::collections::BTreeSet<String>,
    /// What [`ApplySchema::properties`] found, by schema key.
    pub(super) found: FoundCache,
}

/// What the schema says of one field: every lookup of the field manager at once.
#[derive(Debug, Clone)]
pub(super) struct Properties {
    list_type: ListType,
    atomic: bool,
    zero_valued: bool,
    map: bool,
}

/// A cache of [`Properties`] by schema key (`spec.containers[].ports`): the field manager asks for
/// every field of every write, and the lookups of the sorted keys allocate. Bounded (cleared when
/// full); a clone starts empty and caches compare equal, as they only remember the schema.
#[derive(Debug, Default)]
pub(super) struct FoundCache(std::sync::RwLock<std::collections::HashMap<String, Properties>>);

impl FoundCache {
    /// The most keys kept: far more than a kind's schema has, fewer than the map keys (labels,
    /// annotations, data) many objects would add.
    const LIMIT: usize = 4096;
}

impl Clone for FoundCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for FoundCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for FoundCache {}

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
    /// [`ApplySchema::default`], built once.
    pub(crate) fn builtin_default() -> &'static ApplySchema {
        static DEFAULT: std::sync::OnceLock<ApplySchema> = std::sync::OnceLock::new();
        DEFAULT.get_or_init(ApplySchema::default)
    }

    /// Only ObjectMeta's rules: `metadata.finalizers` a set, `metadata.ownerReferences` a map
    /// keyed by `uid`, `metadata.labels` and `metadata.annotations` maps; every other list
    /// atomic, every other object a struct.
    pub(crate) fn metadata_only() -> Self {
        ApplySchema {
            lists: BTreeMap::new(),
            maps: Default::default(),
            atomics: Default::default(),
            unstructured: false,
            zero_valued: Default::default(),
            found: FoundCache::default(),
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
    pub(crate) fn with_list(mut self, path: &str, list_type: ListType) -> Self {
        self.lists.insert(path.to_owned(), list_type);
        self
    }

    /// Declares the object at `path` atomic: owned as one field and replaced whole by an apply.
    pub(crate) fn with_atomic(mut self, path: &str) -> Self {
        self.atomics.insert(path.to_owned());
        self
    }

    /// Declares the object at `path` a map (`additionalProperties`) rather than a struct.
    pub(crate) fn with_map(mut self, path: &str) -> Self {
        self.maps.insert(path.to_owned());
        self
    }

    /// ObjectMeta's rules plus what a CRD version's `openAPIV3Schema` declares: arrays with
    /// `x-kubernetes-list-type: set` or `map` (keys from `x-kubernetes-list-map-keys`), objects
    /// with `additionalProperties` as maps, and `x-kubernetes-map-type: atomic` objects atomic.
    /// Everything else keeps the defaults: lists atomic, objects structs.
    pub(crate) fn from_openapi_v3(schema: &Value) -> Self {
        let mut s = ApplySchema::metadata_only();
        s.unstructured = true;
        s.visit(schema, &mut Vec::new());
        s
    }

    /// ObjectMeta's rules plus what the built-in OpenAPI v2 definition `root`
    /// (`io.k8s.api.apps.v1.Deployment`) declares of the Go type, read as structured-merge-diff
    /// reads the models the server was built with: `x-kubernetes-list-type` lists (keys from
    /// `x-kubernetes-list-map-keys`), `x-kubernetes-map-type: atomic` structs atomic, and every
    /// other object (struct or `additionalProperties` map) owned itself once an Update adds it
    /// (`.`). The object the comparison starts from holds the type's value structs, so those
    /// present before are not added: see `crate::kinds::Strategy::value_structs`.
    pub(crate) fn from_definitions(root: &str, value_structs: &[&str]) -> Self {
        let mut s = ApplySchema::metadata_only();
        let defs = crate::openapi::definitions::Definitions::builtin();
        let mut path = Vec::new();
        if let Some(def) = defs.get(root) {
            s.visit_definition(defs, def, &mut path, 0);
        }
        for value_struct in value_structs {
            s.maps.remove(*value_struct);
            s.zero_valued.insert((*value_struct).to_owned());
        }
        s
    }

    fn visit_definition(
        &mut self,
        defs: &crate::openapi::definitions::Definitions,
        schema: &Value,
        path: &mut Vec<String>,
        depth: usize,
    ) {
        // The workloads' types nest about 12 deep; recursive types (none there) stop here.
        const MAX_DEPTH: usize = 24;
        // A property may override its referenced type's map type (a PersistentVolume's
        // `claimRef`, an `ObjectReference`, is `granular` there).
        let granular =
            schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("granular");
        let schema = match schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix(crate::openapi::definitions::V2_REF_PREFIX))
        {
            Some(name) => match defs.get(name) {
                Some(def) => def,
                None => return,
            },
            None => schema,
        };
        if depth > MAX_DEPTH {
            return;
        }
        let key = path.join(".");
        if !path.is_empty()
            && !granular
            && schema.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic")
        {
            self.atomics.insert(key);
            return;
        }
        if let Some(props) = schema.get("properties").and_then(Value::as_object) {
            if !path.is_empty() {
                self.maps.insert(key.clone());
            }
            for (name, sub) in props {
                if path.is_empty() && name == "metadata" {
                    continue;
                }
                path.push(name.clone());
                self.visit_definition(defs, sub, path, depth + 1);
                path.pop();
            }
        }
        if let Some(add) = schema.get("additionalProperties").filter(|a| a.is_object()) {
            self.maps.insert(key.clone());
            path.push("*".to_owned());
            self.visit_definition(defs, add, path, depth + 1);
            path.pop();
        }
        if let Some(items) = schema.get("items") {
            if let Some(t) = Self::list_type_of(schema) {
                self.lists.insert(key, t);
            }
            if let Some(last) = path.last_mut() {
                last.push_str("[]");
                self.visit_definition(defs, items, path, depth + 1);
                if let Some(last) = path.last_mut() {
                    last.truncate(last.len() - 2);
                }
            }
        }
    }

    /// The list type an array's schema declares, if it is not atomic.
    fn list_type_of(schema: &Value) -> Option<ListType> {
        match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
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
        }
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
            if let Some(t) = Self::list_type_of(schema) {
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
    pub(super) fn segments(path: &[Pe]) -> Vec<String> {
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

    /// The first of the sorted `keys` that `path` matches, a segment also matching `*` (a map
    /// entry), found without visiting them all (it runs for every field of every write): the
    /// path itself, and the keys with a `*` segment under each of its prefixes.
    fn find<'k, K: SortedKeys>(keys: &'k K, path: &[Pe]) -> Option<&'k String> {
        let segs = Self::segments(path);
        let exact = keys.get_key(&segs.join("."));
        let wildcards = (0..segs.len()).filter_map(|depth| {
            let prefix = match depth {
                0 => "*".to_owned(),
                _ => format!("{}.*", segs[..depth].join(".")),
            };
            keys.from(&prefix)
                .take_while(|k| k.starts_with(&prefix))
                .find(|k| key_matches(k, &segs))
        });
        exact.into_iter().chain(wildcards).min()
    }

    /// Everything the schema says of the field at `path`, looked up once per schema key.
    fn properties(&self, path: &[Pe]) -> Properties {
        let mut key = String::new();
        for pe in path {
            match pe.strip_prefix("f:") {
                Some(name) => {
                    if !key.is_empty() {
                        key.push('.');
                    }
                    key.push_str(name);
                }
                None if !key.is_empty() => key.push_str("[]"),
                None => {}
            }
        }
        if let Some(found) = self.found.0.read().ok().and_then(|f| f.get(&key).cloned()) {
            return found;
        }
        let found = Properties {
            list_type: Self::find(&self.lists, path)
                .and_then(|k| self.lists.get(k).cloned())
                .unwrap_or(ListType::Atomic),
            atomic: Self::find(&self.atomics, path).is_some(),
            zero_valued: Self::find(&self.zero_valued, path).is_some(),
            map: Self::find(&self.maps, path).is_some(),
        };
        if let Ok(mut cache) = self.found.0.write() {
            if cache.len() >= FoundCache::LIMIT {
                cache.clear();
            }
            cache.insert(key, found.clone());
        }
        found
    }

    pub(super) fn list_type(&self, path: &[Pe]) -> ListType {
        self.properties(path).list_type
    }

    /// Atomic structs: owned, compared and merged as one value.
    pub(super) fn is_atomic(&self, path: &[Pe]) -> bool {
        !path.is_empty() && self.properties(path).atomic
    }

    /// Whether the field is in the Go type's zero value (see `zero_valued`).
    pub(super) fn is_zero_valued(&self, path: &[Pe]) -> bool {
        self.properties(path).zero_valued
    }

    /// Maps (as opposed to structs): an Update that adds one owns the map itself.
    pub(super) fn is_map(&self, path: &[Pe]) -> bool {
        self.properties(path).map
    }
}

/// Whether the schema key `key` (segments joined by `.`, `*` for any key of a map) names the
/// field of the segments `segs`.
fn key_matches(key: &str, segs: &[String]) -> bool {
    let mut parts = key.split('.');
    segs.iter().all(|s| {
        parts.next().is_some_and(|k| {
            k == s.as_str()
                || (k.starts_with('*')
                    && k[1..] == *s.strip_prefix(s.trim_end_matches("[]")).unwrap_or(""))
        })
    }) && parts.next().is_none()
}

/// Sorted string keys: a set's, or a map's.
trait SortedKeys {
    /// The key equal to `key`.
    fn get_key(&self, key: &str) -> Option<&String>;
    /// The keys from `start` on, in order.
    fn from<'k>(&'k self, start: &str) -> Box<dyn Iterator<Item = &'k String> + 'k>;
}

impl SortedKeys for std::collections::BTreeSet<String> {
    fn get_key(&self, key: &str) -> Option<&String> {
        self.get(key)
    }

    fn from<'k>(&'k self, start: &str) -> Box<dyn Iterator<Item = &'k String> + 'k> {
        Box::new(
            self.range::<str, _>((std::ops::Bound::Included(start), std::ops::Bound::Unbounded)),
        )
    }
}

impl<V> SortedKeys for BTreeMap<String, V> {
    fn get_key(&self, key: &str) -> Option<&String> {
        self.get_key_value(key).map(|(k, _)| k)
    }

    fn from<'k>(&'k self, start: &str) -> Box<dyn Iterator<Item = &'k String> + 'k> {
        Box::new(
            self.range::<str, _>((std::ops::Bound::Included(start), std::ops::Bound::Unbounded))
                .map(|(k, _)| k),
        )
    }
}

pub(super) fn field_pe(name: &str) -> Pe {
    format!("f:{name}")
}

/// The default of a port's `protocol` (`+default="TCP"`).
static PROTOCOL_DEFAULT: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| Value::String("TCP".to_owned()));

/// A scalar JSON value, or `None`.
trait Scalar {
    fn filter_scalar(&self) -> Option<&Value>;
}

impl Scalar for Value {
    fn filter_scalar(&self) -> Option<&Value> {
        (self.is_string() || self.is_number() || self.is_boolean()).then_some(self)
    }
}

/// The path elements of an associative list's items, or `None` when the list must be atomic
/// (a keyed item misses its key, or an item repeats).
pub(super) fn item_elements(kind: &ListType, items: &[Value]) -> Option<Vec<Pe>> {
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
                    let v = match obj.get(k) {
                        Some(v) => v.filter_scalar()?,
                        // The one key with a default in the built-ins' OpenAPI v3 schemas,
                        // which structured-merge-diff fills in: ports' `protocol`.
                        None if k == "protocol" => &*PROTOCOL_DEFAULT,
                        None => return None,
                    };
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
pub(super) fn stripped() -> &'static FieldSet {
    static STRIPPED: std::sync::LazyLock<FieldSet> = std::sync::LazyLock::new(stripped_fields);
    &STRIPPED
}

fn stripped_fields() -> FieldSet {
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
pub(super) fn ignored_set(
    obj_keys: &[&Value],
    subresource: Option<&str>,
    reset: &[&str],
) -> FieldSet {
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
