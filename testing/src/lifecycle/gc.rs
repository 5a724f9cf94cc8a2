//! The garbage collector (`pkg/controller/garbagecollector/garbagecollector.go`). A [`Graph`] of
//! who references whom, kept from the store's changes (upstream's `GraphBuilder`), says which
//! objects a change concerns ([`Work`]); each is then looked at as the collector's workers do:
//!
//! - an owner deleting with the `orphan` finalizer: its dependents lose their owner references
//!   to it, then the finalizer goes (`attemptToOrphanWorker`);
//! - an owner deleting with `foregroundDeletion`: the finalizer goes once no dependent with
//!   `blockOwnerDeletion: true` is left (`processDeletingDependentsItem`);
//! - a dependent (not itself deleting) whose owner references are classified
//!   (`classifyReferences`) as *dangling* (no object of that kind and name, or one with another
//!   uid), *waiting* (the owner deletes its dependents in the foreground) or *solid*: with a solid
//!   owner it stays and loses the others' references; otherwise it is deleted — in the foreground
//!   when an owner waits and it has dependents of its own, else as its own finalizers say
//!   (`orphan`, `foregroundDeletion`, or background) (`attemptToDeleteItem`).
//!
//! References whose kind is not served, or a cluster-scoped object naming a namespaced owner,
//! leave the dependent alone, as upstream's lookups fail for them.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use serde_json::{Value, json};

use super::propagation::{FOREGROUND, ORPHAN, Propagation};
use crate::object::finalizers;
use crate::registry::State;
use crate::resources::ResourceInfo;
use crate::store::StorageKey;
use crate::store::{Change, ChangeType};

/// Where an object is stored: its store, namespace and name.
pub(crate) type ObjectAt = (StorageKey, String, String);

fn object_at(storage: &StorageKey, obj: &Value) -> ObjectAt {
    let meta = &obj["metadata"];
    let text = |f: &str| meta[f].as_str().unwrap_or_default().to_string();
    (storage.clone(), text("namespace"), text("name"))
}

/// Which objects reference which owner uids.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    /// Owner uid -> the objects whose owner references name it.
    dependents: HashMap<String, BTreeSet<ObjectAt>>,
    /// Object -> the owner uids it references (to undo when it changes).
    owners: HashMap<ObjectAt, Vec<String>>,
}

impl Graph {
    /// The graph of everything stored, and the objects the collector must look at once: every
    /// object with owner references or a garbage collector finalizer.
    pub(crate) fn build(state: &State) -> (Self, Work) {
        let mut graph = Self::default();
        let mut work = Work::default();
        for info in state.registry.per_storage() {
            for obj in state.store.list(&info.storage, None) {
                graph.observe(&info.storage, obj, false);
                if concerns(obj) {
                    work.objects.insert(object_at(&info.storage, obj));
                }
            }
        }
        (graph, work)
    }

    /// Records a change: the object's references replace those it had.
    fn observe(&mut self, storage: &StorageKey, obj: &Value, deleted: bool) {
        let at = object_at(storage, obj);
        for uid in self.owners.remove(&at).unwrap_or_default() {
            if let Some(set) = self.dependents.get_mut(&uid) {
                set.remove(&at);
                if set.is_empty() {
                    self.dependents.remove(&uid);
                }
            }
        }
        if deleted {
            return;
        }
        let uids: Vec<String> = owner_refs(obj)
            .iter()
            .map(|r| ref_uid(r).to_string())
            .collect();
        if uids.is_empty() {
            return;
        }
        for uid in &uids {
            self.dependents
                .entry(uid.clone())
                .or_default()
                .insert(at.clone());
        }
        self.owners.insert(at, uids);
    }

    /// Updates the graph with `change` and adds what it concerns to `work`: the object itself
    /// (as a dependent, or as an owner deleting with a collector finalizer), its dependents when
    /// it goes or is deleting, and the owners it names or named (a foreground owner may be
    /// waiting for it).
    ///
    /// As upstream's graph builder (`processGraphChanges`), a change that neither adds the
    /// object, changes its references, deletes it nor finds it deleting concerns nobody: a
    /// pod's status write does not make the collector look at the pod or its ReplicaSet again.
    pub(crate) fn record(&mut self, change: &Change, work: &mut Work) {
        let obj = &change.object;
        let deleted = change.kind == ChangeType::Deleted;
        let deleting = !obj["metadata"]["deletionTimestamp"].is_null();
        let refs_changed = change.previous.as_deref().is_none_or(|previous| {
            previous["metadata"]["ownerReferences"] != obj["metadata"]["ownerReferences"]
        });
        if !deleted && (refs_changed || deleting) && concerns(obj) {
            work.objects.insert(object_at(&change.storage, obj));
        }
        if deleted || deleting {
            let uid = obj["metadata"]["uid"].as_str().unwrap_or_default();
            if let Some(deps) = self.dependents.get(uid) {
                work.objects.extend(deps.iter().cloned());
            }
        }
        // An owner waiting for its dependents (foreground deletion) is looked at again when
        // one goes or stops naming it.
        if deleted || refs_changed {
            let namespace = obj["metadata"]["namespace"].as_str().unwrap_or_default();
            for r in owner_refs(obj)
                .into_iter()
                .chain(change.previous.as_deref().into_iter().flat_map(owner_refs))
            {
                work.owners.push((namespace.to_string(), r));
            }
        }
        if refs_changed || deleted {
            self.observe(&change.storage, obj, deleted);
        }
    }

    /// The stored dependents of `uid` (those whose references still name it).
    fn dependents_of(&self, state: &State, uid: &str) -> Vec<Node> {
        let Some(keys) = self.dependents.get(uid) else {
            return Vec::new();
        };
        keys.iter()
            .filter_map(|at| Node::at(state, at))
            .filter(|n| n.refs.iter().any(|r| ref_uid(r) == uid))
            .collect()
    }
}

/// What the collector has to look at.
#[derive(Debug, Default)]
pub(crate) struct Work {
    /// Objects, as dependents or as owners.
    objects: BTreeSet<ObjectAt>,
    /// Owner references (with the namespace of the object naming them), resolved when looked at.
    owners: Vec<(String, Value)>,
}

impl Work {
    /// Whether there is nothing to do.
    pub(crate) fn is_empty(&self) -> bool {
        self.objects.is_empty() && self.owners.is_empty()
    }
}

/// Whether the collector looks at `obj` for itself: it has owner references, or it is an owner
/// deleting with a collector finalizer.
fn concerns(obj: &Value) -> bool {
    let meta = &obj["metadata"];
    meta["ownerReferences"]
        .as_array()
        .is_some_and(|r| !r.is_empty())
        || (!meta["deletionTimestamp"].is_null()
            && finalizers(obj)
                .iter()
                .any(|f| f == ORPHAN || f == FOREGROUND))
}

/// An object the collector has business with: one with owner references, or an owner deleting
/// with a garbage collector finalizer.
struct Node {
    info: Arc<ResourceInfo>,
    namespace: String,
    name: String,
    uid: String,
    refs: Vec<Value>,
    deleting: bool,
    finalizers: Vec<String>,
}

impl Node {
    fn read(info: &Arc<ResourceInfo>, obj: &Value) -> Self {
        let meta = &obj["metadata"];
        let text = |f: &str| meta[f].as_str().unwrap_or_default().to_string();
        Self {
            info: info.clone(),
            namespace: text("namespace"),
            name: text("name"),
            uid: text("uid"),
            refs: owner_refs(obj),
            deleting: !meta["deletionTimestamp"].is_null(),
            finalizers: finalizers(obj),
        }
    }

    /// The object stored at `at`, if its resource is still served.
    fn at(state: &State, at: &ObjectAt) -> Option<Self> {
        let info = state.registry.of_storage(&at.0)?;
        let obj = state.store.get(&at.0, &at.1, &at.2)?;
        Some(Self::read(&info, obj))
    }

    fn has(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| f == finalizer)
    }

    /// The stored object, if it is still this one (same uid).
    fn latest(&self, state: &State) -> Option<Value> {
        state
            .store
            .get(&self.info.storage, &self.namespace, &self.name)
            .filter(|o| o["metadata"]["uid"] == self.uid.as_str())
            .cloned()
    }

    fn namespace_param(&self) -> Option<&str> {
        self.info.namespaced.then_some(self.namespace.as_str())
    }
}

fn owner_refs(obj: &Value) -> Vec<Value> {
    obj["metadata"]["ownerReferences"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn ref_uid(r: &Value) -> &str {
    r["uid"].as_str().unwrap_or_default()
}

/// Looks at everything in `work`.
pub(crate) fn process(state: &mut State, graph: &Graph, work: Work) {
    let mut objects = work.objects;
    for (namespace, reference) in &work.owners {
        if let Some(at) = owner_at(state, namespace, reference) {
            objects.insert(at);
        }
    }
    for at in objects {
        let Some(node) = Node::at(state, &at) else {
            continue;
        };
        if node.deleting {
            if node.has(ORPHAN) {
                orphan_dependents(state, graph, &node);
            } else if node.has(FOREGROUND) {
                delete_dependents_first(state, graph, &node);
            }
        } else if !node.refs.is_empty() {
            let deps = graph.dependents_of(state, &node.uid);
            attempt_to_delete(state, &node, &deps);
        }
    }
}

/// `attemptToOrphanWorker`: the dependents lose their references to `owner`, then its `orphan`
/// finalizer goes.
fn orphan_dependents(state: &mut State, graph: &Graph, owner: &Node) {
    for dep in graph.dependents_of(state, &owner.uid) {
        rewrite_refs(state, &dep, |refs| refs.retain(|r| ref_uid(r) != owner.uid));
    }
    remove_finalizer(state, owner, ORPHAN);
}

/// `processDeletingDependentsItem`: the `foregroundDeletion` finalizer goes once no dependent
/// blocks the owner's deletion.
fn delete_dependents_first(state: &mut State, graph: &Graph, owner: &Node) {
    let blocking = graph.dependents_of(state, &owner.uid).iter().any(|dep| {
        dep.refs
            .iter()
            .any(|r| ref_uid(r) == owner.uid && r["blockOwnerDeletion"] == true)
    });
    if !blocking {
        remove_finalizer(state, owner, FOREGROUND);
    }
}

/// Where the owner a reference of an object in `namespace` names would be stored; `None` when
/// its kind is not served or a cluster-scoped object names a namespaced owner.
fn owner_at(state: &State, namespace: &str, reference: &Value) -> Option<ObjectAt> {
    let info = state.registry.by_kind(
        reference["apiVersion"].as_str().unwrap_or_default(),
        reference["kind"].as_str().unwrap_or_default(),
    )?;
    if info.namespaced && namespace.is_empty() {
        return None;
    }
    let namespace = if info.namespaced { namespace } else { "" };
    let name = reference["name"].as_str().unwrap_or_default();
    Some((
        info.storage.clone(),
        namespace.to_string(),
        name.to_string(),
    ))
}

/// How an owner reference stands (`classifyReferences`).
#[derive(Debug, PartialEq, Eq)]
enum Owner {
    /// The owner exists and is not deleting its dependents in the foreground.
    Solid,
    /// No such owner (or one with another uid).
    Dangling,
    /// The owner is deleting in the foreground.
    Waiting,
}

/// Classifies a reference of `item`; `None` when it cannot be looked up.
fn classify(state: &State, item: &Node, reference: &Value) -> Option<Owner> {
    let at = owner_at(state, &item.namespace, reference)?;
    let owner = state
        .store
        .get(&at.0, &at.1, &at.2)
        .filter(|o| o["metadata"]["uid"] == ref_uid(reference));
    Some(match owner {
        None => Owner::Dangling,
        Some(o)
            if !o["metadata"]["deletionTimestamp"].is_null()
                && finalizers(o).iter().any(|f| f == FOREGROUND) =>
        {
            Owner::Waiting
        }
        Some(_) => Owner::Solid,
    })
}

fn attempt_to_delete(state: &mut State, item: &Node, dependents: &[Node]) {
    let Some(latest) = item.latest(state) else {
        return;
    };
    let refs = owner_refs(&latest);
    let mut solid = false;
    let mut dangling = Vec::new();
    let mut waiting = Vec::new();
    for r in &refs {
        match classify(state, item, r) {
            None => return,
            Some(Owner::Solid) => solid = true,
            Some(Owner::Dangling) => dangling.push(ref_uid(r)),
            Some(Owner::Waiting) => waiting.push(ref_uid(r)),
        }
    }
    if refs.is_empty() {
        return;
    }
    if solid {
        let gone: Vec<&str> = dangling.into_iter().chain(waiting).collect();
        if !gone.is_empty() {
            rewrite_refs(state, item, |refs| {
                refs.retain(|r| !gone.contains(&ref_uid(r)));
            });
        }
        return;
    }
    let policy = if !waiting.is_empty() && !dependents.is_empty() {
        // An owner waits for this item, which has dependents of its own: it is deleted in the
        // foreground too. If one of its dependents deletes in the foreground as well, the chain
        // may be a cycle: this item's references stop blocking first.
        if dependents.iter().any(|d| d.deleting && d.has(FOREGROUND)) {
            rewrite_refs(state, item, |refs| {
                for r in refs.iter_mut().filter(|r| r["blockOwnerDeletion"] == true) {
                    r["blockOwnerDeletion"] = json!(false);
                }
            });
        }
        Propagation::Foreground
    } else if item.has(ORPHAN) {
        Propagation::Orphan
    } else if item.has(FOREGROUND) {
        Propagation::Foreground
    } else {
        Propagation::Background
    };
    let options = json!({
        "propagationPolicy": policy.as_str(),
        "preconditions": {"uid": item.uid},
    });
    // A failure (the object changed or went meanwhile) is retried by the next pass.
    let _ = state.delete(&item.info, item.namespace_param(), &item.name, &options);
}

/// Rewrites `item`'s owner references with `edit` (the garbage collector's patches).
fn rewrite_refs(state: &mut State, item: &Node, edit: impl FnOnce(&mut Vec<Value>)) {
    let Some(old) = item.latest(state) else {
        return;
    };
    let mut kept = owner_refs(&old);
    edit(&mut kept);
    let mut new = old.clone();
    if let Some(meta) = new["metadata"].as_object_mut() {
        if kept.is_empty() {
            meta.remove("ownerReferences");
        } else {
            meta.insert("ownerReferences".into(), Value::Array(kept));
        }
    }
    let _ = super::controller_write(state, &item.info, &old, new, None);
}

/// Removes a garbage collector finalizer from a deleting owner (which goes if it was the last).
fn remove_finalizer(state: &mut State, owner: &Node, finalizer: &str) {
    let Some(old) = owner.latest(state) else {
        return;
    };
    let kept: Vec<String> = finalizers(&old)
        .into_iter()
        .filter(|f| f != finalizer)
        .collect();
    let mut new = old.clone();
    if let Some(meta) = new["metadata"].as_object_mut() {
        if kept.is_empty() {
            meta.remove("finalizers");
        } else {
            meta.insert("finalizers".into(), json!(kept));
        }
    }
    let _ = super::controller_write(state, &owner.info, &old, new, None);
}
