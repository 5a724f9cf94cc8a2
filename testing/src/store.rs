//! Object storage with one cluster-wide resourceVersion and a bounded history of changes that
//! watches replay from (etcd plus the apiserver's watch cache, reduced to what clients observe).

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;

/// Where objects of a resource are stored: several resources may share one store (core/v1 and
/// events.k8s.io/v1 events).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct StorageKey {
    /// API group of the stored form.
    pub group: String,
    /// Resource plural.
    pub resource: String,
}

/// The type of a watch event caused by a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeType {
    /// The object was created.
    Added,
    /// The object was changed.
    Modified,
    /// The object was removed.
    Deleted,
}

impl ChangeType {
    /// The watch event type string.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One committed write.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    /// The resourceVersion of the write.
    pub rv: u64,
    /// What happened.
    pub kind: ChangeType,
    /// Which store.
    pub storage: StorageKey,
    /// The object after the write (for a deletion: the last state, stamped with `rv`): the
    /// stored object itself, shared with the store (and with the next change's `previous`).
    pub object: Arc<Value>,
    /// The object before the write, if any (for selector transitions in watches).
    pub previous: Option<Arc<Value>>,
}

/// The changes a watch replays, and the receiver of those after them.
pub(crate) type Replay = (Vec<Arc<Change>>, broadcast::Receiver<Arc<Change>>);

/// Namespace and name of an object.
pub(crate) type ObjectKey = (String, String);

/// The store. An object is held once: the map, its change in the history and the next
/// change's `previous` share one `Arc`.
#[derive(Debug)]
pub(crate) struct Store {
    objects: BTreeMap<StorageKey, BTreeMap<ObjectKey, Arc<Value>>>,
    rv: u64,
    history: VecDeque<Arc<Change>>,
    history_limit: usize,
    /// Every change with `rv > floor` is in `history`.
    floor: u64,
    tx: broadcast::Sender<Arc<Change>>,
    /// The resourceVersion of the last explicit compaction (0: none).
    compacted: u64,
    /// The objects with a controller owner reference, by the controller's uid (the index the
    /// workload controllers' informers keep).
    controlled: HashMap<String, BTreeSet<(StorageKey, ObjectKey)>>,
    /// The objects without one, by store (the orphans a controller may adopt).
    uncontrolled: HashMap<StorageKey, BTreeSet<ObjectKey>>,
}

/// A watch can no longer be served from history: the oldest resourceVersion still available.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TooOld {
    /// The oldest resourceVersion a watch may start from.
    pub oldest: u64,
}

impl Store {
    /// An empty store keeping `history_limit` changes for watches to resume from.
    pub(crate) fn new(history_limit: usize) -> Self {
        let (tx, _) = broadcast::channel(history_limit.clamp(1024, 1 << 16));
        Self {
            objects: BTreeMap::new(),
            rv: 1,
            history: VecDeque::new(),
            history_limit: history_limit.max(1),
            floor: 1,
            tx,
            compacted: 0,
            controlled: HashMap::new(),
            uncontrolled: HashMap::new(),
        }
    }

    /// The current (latest) resourceVersion.
    pub(crate) fn current_rv(&self) -> u64 {
        self.rv
    }

    /// An object.
    pub(crate) fn get(&self, key: &StorageKey, namespace: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(key)?
            .get(&(namespace.to_string(), name.to_string()))
            .map(Arc::as_ref)
    }

    /// An object, shared (no copy).
    pub(crate) fn get_shared(
        &self,
        key: &StorageKey,
        namespace: &str,
        name: &str,
    ) -> Option<Arc<Value>> {
        self.objects
            .get(key)?
            .get(&(namespace.to_string(), name.to_string()))
            .cloned()
    }

    /// Objects of a store, in one namespace or all, ordered by namespace then name.
    pub(crate) fn list<'a>(
        &'a self,
        key: &StorageKey,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects
            .get(key)
            .into_iter()
            .flat_map(|m| m.iter())
            .filter(move |((ns, _), _)| namespace.is_none_or(|n| n == ns))
            .map(|(_, v)| v.as_ref())
    }

    /// Like [`Store::list`], starting after `after` (exclusive), with each object's key.
    pub(crate) fn list_after<'a>(
        &'a self,
        key: &StorageKey,
        namespace: Option<&'a str>,
        after: Option<&ObjectKey>,
    ) -> impl Iterator<Item = (&'a ObjectKey, &'a Arc<Value>)> + 'a {
        use std::ops::Bound;
        let lower = match after {
            Some(k) => Bound::Excluded(k.clone()),
            None => Bound::Unbounded,
        };
        self.objects
            .get(key)
            .into_iter()
            .flat_map(move |m| m.range((lower.clone(), Bound::Unbounded)))
            .filter(move |((ns, _), _)| namespace.is_none_or(|n| n == ns))
    }

    /// The objects of a store (in one namespace or all, after `after`, in key order) as they
    /// were at resourceVersion `rv`: the live ones with every later change undone. `None` when
    /// nothing of the store changed after `rv` (the live objects are that state), or when the
    /// history no longer reaches back to `rv` (then only the live state is known).
    pub(crate) fn list_at(
        &self,
        key: &StorageKey,
        namespace: Option<&str>,
        after: Option<&ObjectKey>,
        rv: u64,
    ) -> Option<Vec<(ObjectKey, Arc<Value>)>> {
        if rv < self.floor || rv >= self.rv {
            return None;
        }
        // The state at `rv` of each object changed since: before its earliest later change.
        let mut then: BTreeMap<ObjectKey, Option<&Arc<Value>>> = BTreeMap::new();
        for change in self.history.iter().rev() {
            if change.rv <= rv {
                break;
            }
            if change.storage == *key {
                then.insert(object_key(&change.object), change.previous.as_ref());
            }
        }
        if then.is_empty() {
            return None;
        }
        let mut objects: BTreeMap<ObjectKey, &Arc<Value>> = self
            .list_after(key, namespace, after)
            .map(|(k, v)| (k.clone(), v))
            .collect();
        for (id, state) in then {
            let in_range = namespace.is_none_or(|n| n == id.0) && after.is_none_or(|a| id > *a);
            if !in_range {
                continue;
            }
            match state {
                Some(object) => objects.insert(id, object),
                None => objects.remove(&id),
            };
        }
        Some(objects.into_iter().map(|(k, v)| (k, v.clone())).collect())
    }

    /// Stores `object` (whose metadata names it) with a new resourceVersion and records the
    /// change; returns the stored object.
    pub(crate) fn put(&mut self, key: &StorageKey, mut object: Value) -> Arc<Value> {
        self.rv += 1;
        object["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        let id = object_key(&object);
        let stored = Arc::new(object);
        let previous = self
            .objects
            .entry(key.clone())
            .or_default()
            .insert(id.clone(), stored.clone());
        let before = previous.as_deref().map(controller_uid);
        let after = controller_uid(&stored);
        if before != Some(after) {
            if let Some(before) = before {
                self.unindex(before, key, &id);
            }
            self.index(after, key, id);
        }
        let kind = if previous.is_some() {
            ChangeType::Modified
        } else {
            ChangeType::Added
        };
        self.record(key, kind, stored.clone(), previous);
        stored
    }

    /// Removes an object, recording a deletion stamped with a new resourceVersion.
    pub(crate) fn remove(
        &mut self,
        key: &StorageKey,
        namespace: &str,
        name: &str,
    ) -> Option<Value> {
        let previous = self
            .objects
            .get_mut(key)?
            .remove(&(namespace.to_string(), name.to_string()))?;
        self.unindex(
            controller_uid(&previous),
            key,
            &(namespace.to_string(), name.to_string()),
        );
        self.rv += 1;
        let mut object = Value::clone(&previous);
        object["metadata"]["resourceVersion"] = Value::String(self.rv.to_string());
        self.record(
            key,
            ChangeType::Deleted,
            Arc::new(object.clone()),
            Some(previous),
        );
        Some(object)
    }

    /// Records `id` of `key` under its controller's uid, or among the uncontrolled.
    fn index(&mut self, controller: Option<&str>, key: &StorageKey, id: ObjectKey) {
        match controller {
            Some(uid) => {
                self.controlled
                    .entry(uid.to_string())
                    .or_default()
                    .insert((key.clone(), id));
            }
            None => {
                self.uncontrolled.entry(key.clone()).or_default().insert(id);
            }
        }
    }

    /// Forgets what [`Store::index`] recorded.
    fn unindex(&mut self, controller: Option<&str>, key: &StorageKey, id: &ObjectKey) {
        match controller {
            Some(uid) => {
                if let Some(set) = self.controlled.get_mut(uid) {
                    set.remove(&(key.clone(), id.clone()));
                    if set.is_empty() {
                        self.controlled.remove(uid);
                    }
                }
            }
            None => {
                if let Some(set) = self.uncontrolled.get_mut(key) {
                    set.remove(id);
                }
            }
        }
    }

    /// The objects of `key` in `namespace` without a controller owner reference, in key
    /// order.
    pub(crate) fn uncontrolled<'a>(
        &'a self,
        key: &'a StorageKey,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Arc<Value>> + 'a {
        use std::ops::Bound;
        let from = (namespace.to_string(), String::new());
        self.uncontrolled
            .get(key)
            .into_iter()
            .flat_map(move |set| set.range((Bound::Included(from.clone()), Bound::Unbounded)))
            .take_while(move |(ns, _)| ns == namespace)
            .filter_map(move |object| self.objects.get(key)?.get(object))
    }

    /// The objects of `key` whose controller owner reference names `uid`, in key order.
    pub(crate) fn controlled_by<'a>(
        &'a self,
        key: &'a StorageKey,
        uid: &str,
    ) -> impl Iterator<Item = &'a Arc<Value>> + 'a {
        self.controlled
            .get(uid)
            .into_iter()
            .flatten()
            .filter(move |(k, _)| k == key)
            .filter_map(move |(k, object)| self.objects.get(k)?.get(object))
    }

    fn record(
        &mut self,
        key: &StorageKey,
        kind: ChangeType,
        object: Arc<Value>,
        previous: Option<Arc<Value>>,
    ) {
        let change = Arc::new(Change {
            rv: self.rv,
            kind,
            storage: key.clone(),
            object,
            previous,
        });
        self.history.push_back(change.clone());
        while self.history.len() > self.history_limit {
            if let Some(dropped) = self.history.pop_front() {
                self.floor = dropped.rv;
            }
        }
        // No receivers is fine: nobody watches.
        let _ = self.tx.send(change);
    }

    /// The retained changes after `rv` plus a receiver of later ones, taken atomically.
    pub(crate) fn watch_from(&self, rv: u64) -> Result<Replay, TooOld> {
        if rv < self.floor {
            return Err(TooOld {
                oldest: self.floor + 1,
            });
        }
        let replay = self.history.iter().filter(|c| c.rv > rv).cloned().collect();
        Ok((replay, self.tx.subscribe()))
    }

    /// A receiver of future changes only.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.tx.subscribe()
    }

    /// Starts the watch history here, as a watch cache starts at the resourceVersion it
    /// first lists: watches from an earlier one get `410 Expired` (consistent reads are kept).
    pub(crate) fn start_history(&mut self) {
        self.history.clear();
        self.floor = self.rv;
    }

    /// Drops the whole history: watches from any earlier resourceVersion get `410 Expired`.
    pub(crate) fn compact(&mut self) {
        self.history.clear();
        self.floor = self.rv;
        self.compacted = self.rv;
    }

    /// Whether a consistent read at `rv` was compacted away by [`Store::compact`].
    pub(crate) fn is_compacted(&self, rv: u64) -> bool {
        rv < self.compacted
    }
}

/// The uid of an object's controller owner reference.
pub(crate) fn controller_uid(object: &Value) -> Option<&str> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)?["uid"]
        .as_str()
}

/// The (namespace, name) of an object.
pub(crate) fn object_key(object: &Value) -> ObjectKey {
    let meta = &object["metadata"];
    (
        meta["namespace"].as_str().unwrap_or_default().to_string(),
        meta["name"].as_str().unwrap_or_default().to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> StorageKey {
        StorageKey {
            group: String::new(),
            resource: "configmaps".into(),
        }
    }

    fn object(name: &str, data: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "d"}, "data": {"v": data}})
    }

    fn names_and_data(objects: &[(ObjectKey, Arc<Value>)]) -> Vec<(String, String)> {
        objects
            .iter()
            .map(|((_, n), v)| {
                (
                    n.clone(),
                    v["data"]["v"].as_str().unwrap_or_default().into(),
                )
            })
            .collect()
    }

    #[test]
    fn objects_are_indexed_by_their_controller_while_it_controls_them() {
        let mut store = Store::new(100);
        let owned = |name: &str, uid: &str| {
            let mut o = object(name, "1");
            o["metadata"]["ownerReferences"] =
                json!([{"uid": "other", "controller": false}, {"uid": uid, "controller": true}]);
            o
        };
        let names = |store: &Store, uid: &str| -> Vec<String> {
            let key = key();
            store
                .controlled_by(&key, uid)
                .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
                .collect()
        };
        store.put(&key(), owned("a", "rs-1"));
        store.put(&key(), owned("b", "rs-1"));
        store.put(&key(), owned("c", "rs-2"));
        store.put(&key(), object("d", "1"));
        assert_eq!(names(&store, "rs-1"), ["a", "b"]);
        assert!(names(&store, "other").is_empty(), "only controllers index");
        // Released (no controller) and adopted by another.
        store.put(&key(), object("a", "2"));
        store.put(&key(), owned("b", "rs-2"));
        assert!(names(&store, "rs-1").is_empty());
        assert_eq!(names(&store, "rs-2"), ["b", "c"]);
        store.remove(&key(), "d", "c");
        assert_eq!(names(&store, "rs-2"), ["b"]);
        let other = StorageKey {
            group: "apps".into(),
            resource: "replicasets".into(),
        };
        assert_eq!(store.controlled_by(&other, "rs-2").count(), 0, "per store");
        let configmaps = key();
        let uncontrolled: Vec<&str> = store
            .uncontrolled(&configmaps, "d")
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(uncontrolled, ["a", "d"], "released a and never-owned d");
        assert_eq!(store.uncontrolled(&configmaps, "other").count(), 0);
    }

    /// The state at a resourceVersion is the live one with every later write undone: created
    /// objects gone, changed ones as they were, deleted ones back.
    #[test]
    fn a_list_at_an_earlier_version_undoes_the_later_writes() {
        let mut store = Store::new(100);
        store.put(&key(), object("a", "1"));
        store.put(&key(), object("b", "1"));
        let then = store.current_rv();
        assert!(
            store.list_at(&key(), None, None, then).is_none(),
            "nothing changed since"
        );
        store.put(&key(), object("a", "2"));
        store.remove(&key(), "d", "b");
        store.put(&key(), object("c", "1"));
        let at_then = store
            .list_at(&key(), Some("d"), None, then)
            .expect("changed since");
        assert_eq!(
            names_and_data(&at_then),
            [("a".into(), "1".into()), ("b".into(), "1".into())]
        );
        // After a key, in key order.
        let after = ("d".to_owned(), "a".to_owned());
        let rest = store
            .list_at(&key(), None, Some(&after), then)
            .expect("changed since");
        assert_eq!(names_and_data(&rest), [("b".into(), "1".into())]);
        // Beyond the history, only the live state is known.
        store.compact();
        assert!(store.list_at(&key(), None, None, then).is_none());
    }
}
