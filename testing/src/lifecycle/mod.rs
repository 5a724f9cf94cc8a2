//! The controllers of kube-controller-manager that a client observes as part of the API: the
//! namespace controller ([`namespace`]) and the garbage collector ([`gc`]), with the registry
//! rules they rely on ([`propagation`]: the finalizers a DELETE's propagation policy sets).
//!
//! They run in one background task of the server ([`run`]) that follows the store's changes and
//! wakes for those that concern them (a namespace, an object in a terminating namespace, an
//! object with owner references or a garbage collector finalizer, the deletion of an owner): the
//! work of a change is proportional to what it touches, not to what is stored. Their writes go
//! through the same registry code as clients' (finalizers, validation,
//! `managedFields` as `kube-controller-manager`), so watches see the events a cluster sends. Unlike
//! upstream, which requeues a namespace with remaining content after an estimate (15 s for
//! finalizers), the next pass follows the write that removed the content at once.

pub(crate) mod gc;
pub(crate) mod namespace;
pub(crate) mod propagation;

use std::collections::{BTreeSet, HashSet};
use std::sync::{Arc, Weak};

use serde_json::Value;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::registry::{State, WriteOptions, namespaces_key};
use crate::resources::ResourceInfo;
use crate::shared::Shared;
use crate::status::ApiError;
use crate::store::{Change, ChangeType};

/// The field manager of the controllers' writes (kube-controller-manager's user agent).
const MANAGER: &str = "kube-controller-manager";

/// A write by a controller: the registry's update path (strategy, validation, finalization).
fn controller_write(
    state: &mut State,
    info: &ResourceInfo,
    old: &Value,
    new: Value,
    subresource: Option<&str>,
) -> Result<Arc<Value>, ApiError> {
    let opts = WriteOptions {
        manager: MANAGER.into(),
        ..WriteOptions::default()
    };
    state.commit_update(info, old, new, subresource, &opts, true)
}

/// What the controllers keep between wake-ups: the garbage collector's graph and the
/// namespaces being deleted.
#[derive(Debug, Default)]
struct Controllers {
    graph: gc::Graph,
    terminating: HashSet<String>,
}

/// What a batch of changes gave the controllers to do.
#[derive(Debug, Default)]
struct Work {
    namespaces: BTreeSet<String>,
    gc: gc::Work,
}

impl Work {
    fn is_empty(&self) -> bool {
        self.namespaces.is_empty() && self.gc.is_empty()
    }
}

impl Controllers {
    /// Everything from the stored state: at start, and after missing changes (a lagging
    /// receiver).
    fn build(state: &State) -> (Self, Work) {
        let (graph, gc) = gc::Graph::build(state);
        let terminating: HashSet<String> = namespace::terminating(state).into_iter().collect();
        let work = Work {
            namespaces: terminating.iter().cloned().collect(),
            gc,
        };
        (Self { graph, terminating }, work)
    }

    /// Records a change and adds what it concerns to `work`: a namespace's own changes and
    /// every change inside a terminating namespace wake the namespace controller; the
    /// collector's graph decides for the rest.
    fn record(&mut self, change: &Change, work: &mut Work) {
        let meta = &change.object["metadata"];
        if change.storage == namespaces_key() {
            let name = meta["name"].as_str().unwrap_or_default().to_string();
            if change.kind != ChangeType::Deleted && !meta["deletionTimestamp"].is_null() {
                self.terminating.insert(name.clone());
                work.namespaces.insert(name);
            } else {
                self.terminating.remove(&name);
            }
        } else if let Some(ns) = meta["namespace"].as_str()
            && self.terminating.contains(ns)
        {
            work.namespaces.insert(ns.to_string());
        }
        self.graph.record(change, &mut work.gc);
    }

    /// Does `work` under the server's lock.
    fn reconcile(&self, state: &mut State, work: Work) {
        namespace::sync(state, &work.namespaces);
        gc::process(state, &self.graph, work.gc);
    }
}

/// The controllers' task: records the store's changes, and does the work they bring under the
/// server's lock; their own writes come back as changes and bring the next steps. Ends when the
/// server is dropped.
pub(crate) async fn run(shared: Weak<Shared>) {
    let (mut changes, mut controllers) = {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let mut state = shared.lock();
        let changes = state.store.subscribe();
        let (controllers, work) = Controllers::build(&state);
        controllers.reconcile(&mut state, work);
        (changes, controllers)
    };
    loop {
        let mut work = Work::default();
        let mut lagged = false;
        match changes.recv().await {
            Ok(change) => controllers.record(&change, &mut work),
            Err(RecvError::Lagged(_)) => lagged = true,
            Err(RecvError::Closed) => return,
        }
        loop {
            match changes.try_recv() {
                Ok(change) => controllers.record(&change, &mut work),
                Err(TryRecvError::Lagged(_)) => lagged = true,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Closed) => return,
            }
        }
        if !lagged && work.is_empty() {
            continue;
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let mut state = shared.lock();
        if lagged {
            let (rebuilt, all) = Controllers::build(&state);
            controllers = rebuilt;
            work = all;
        }
        controllers.reconcile(&mut state, work);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StorageKey;
    use serde_json::json;

    fn change(kind: ChangeType, resource: &str, object: Value) -> Change {
        Change {
            rv: 2,
            kind,
            storage: StorageKey {
                group: String::new(),
                resource: resource.into(),
            },
            object: std::sync::Arc::new(object),
            previous: None,
        }
    }

    #[test]
    fn only_changes_that_concern_the_controllers_give_them_work() {
        let mut controllers = Controllers::default();
        controllers.terminating.insert("shop".into());
        let mut wants = |kind, resource: &str, object: Value| {
            let mut work = Work::default();
            controllers.record(&change(kind, resource, object), &mut work);
            !work.is_empty()
        };
        let plain = json!({"metadata": {"namespace": "default", "name": "a", "uid": "u"}});
        assert!(!wants(ChangeType::Modified, "configmaps", plain.clone()));
        assert!(!wants(ChangeType::Deleted, "configmaps", plain));
        let dependent = json!({"metadata": {"namespace": "default", "name": "d", "uid": "d",
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o",
                                 "uid": "owner-uid"}]}});
        assert!(wants(ChangeType::Added, "configmaps", dependent));
        let owner = json!({"metadata": {"namespace": "default", "name": "o", "uid": "owner-uid"}});
        assert!(!wants(ChangeType::Modified, "configmaps", owner.clone()));
        assert!(wants(ChangeType::Deleted, "configmaps", owner));
        let terminating = json!({"metadata": {"namespace": "shop", "name": "a"}});
        assert!(wants(ChangeType::Deleted, "configmaps", terminating));
        let foreground = json!({"metadata": {"namespace": "default", "name": "f",
            "deletionTimestamp": "t", "finalizers": ["foregroundDeletion"]}});
        assert!(wants(ChangeType::Modified, "configmaps", foreground));
        let active = json!({"metadata": {"name": "other"}});
        assert!(!wants(ChangeType::Modified, "namespaces", active));
        let deleting = json!({"metadata": {"name": "other", "deletionTimestamp": "t"}});
        assert!(wants(ChangeType::Modified, "namespaces", deleting));
    }
}
