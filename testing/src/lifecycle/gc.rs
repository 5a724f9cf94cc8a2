//! The garbage collector (`pkg/controller/garbagecollector/garbagecollector.go`), one pass over
//! the stored objects at a time:
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

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Value, json};

use super::propagation::{FOREGROUND, ORPHAN, Propagation};
use crate::api::{State, finalizers};
use crate::resources::ResourceInfo;

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

/// Every object with owner references or a garbage collector finalizer.
fn scan(state: &State) -> Vec<Node> {
    let mut nodes = Vec::new();
    for info in state.registry.per_storage() {
        for obj in state.store.list(&info.storage, None) {
            let meta = &obj["metadata"];
            let has_refs = meta["ownerReferences"]
                .as_array()
                .is_some_and(|r| !r.is_empty());
            let gc_owner = !meta["deletionTimestamp"].is_null()
                && finalizers(obj)
                    .iter()
                    .any(|f| f == ORPHAN || f == FOREGROUND);
            if has_refs || gc_owner {
                nodes.push(Node::read(&info, obj));
            }
        }
    }
    nodes
}

/// One pass of the collector. Returns the uids that owner references name (a deletion of one of
/// them is work for the next pass).
pub fn collect(state: &mut State) -> HashSet<String> {
    let nodes = scan(state);
    let mut dependents: HashMap<&str, Vec<&Node>> = HashMap::new();
    for node in &nodes {
        for r in &node.refs {
            dependents.entry(ref_uid(r)).or_default().push(node);
        }
    }
    for owner in nodes.iter().filter(|n| n.deleting) {
        let deps = dependents
            .get(owner.uid.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        if owner.has(ORPHAN) {
            for dep in deps {
                rewrite_refs(state, dep, |refs| refs.retain(|r| ref_uid(r) != owner.uid));
            }
            remove_finalizer(state, owner, ORPHAN);
        } else if owner.has(FOREGROUND) {
            let blocking = deps.iter().any(|dep| {
                dep.refs
                    .iter()
                    .any(|r| ref_uid(r) == owner.uid && r["blockOwnerDeletion"] == true)
            });
            if !blocking {
                remove_finalizer(state, owner, FOREGROUND);
            }
        }
    }
    for item in nodes.iter().filter(|n| !n.deleting && !n.refs.is_empty()) {
        let deps = dependents
            .get(item.uid.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        attempt_to_delete(state, item, deps);
    }
    dependents.into_keys().map(str::to_string).collect()
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
    let info = state.registry.by_kind(
        reference["apiVersion"].as_str().unwrap_or_default(),
        reference["kind"].as_str().unwrap_or_default(),
    )?;
    if info.namespaced && item.namespace.is_empty() {
        return None;
    }
    let namespace = if info.namespaced {
        item.namespace.as_str()
    } else {
        ""
    };
    let name = reference["name"].as_str().unwrap_or_default();
    let owner = state
        .store
        .get(&info.storage, namespace, name)
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

fn attempt_to_delete(state: &mut State, item: &Node, dependents: &[&Node]) {
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
