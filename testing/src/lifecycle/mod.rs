//! The controllers of kube-controller-manager that a client observes as part of the API: the
//! namespace controller ([`namespace`]) and the garbage collector ([`gc`]), with the registry
//! rules they rely on ([`propagation`]: the finalizers a DELETE's propagation policy sets).
//!
//! They run in one background task of the server ([`run`]) that wakes on the writes that concern
//! them (a namespace, an object in a terminating namespace, an object with owner references or a
//! garbage collector finalizer, the deletion of an owner) and works until nothing more changes.
//! Their writes go through the same registry code as clients' (finalizers, validation,
//! `managedFields` as `kube-controller-manager`), so watches see the events a cluster sends. Unlike
//! upstream, which requeues a namespace with remaining content after an estimate (15 s for
//! finalizers), the next pass follows the write that removed the content at once.

pub mod gc;
pub mod namespace;
pub mod propagation;

use std::collections::HashSet;
use std::sync::Weak;

use serde_json::Value;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use crate::api::{State, WriteOptions};
use crate::resources::ResourceInfo;
use crate::shared::Shared;
use crate::status::ApiError;
use crate::store::{Change, ChangeType};

/// The field manager of the controllers' writes (kube-controller-manager's user agent).
const MANAGER: &str = "kube-controller-manager";
/// Passes run after one wake-up at most: chains of owners settle in a few; the bound only keeps
/// a pathological cycle from holding the lock forever (the next write wakes the task again).
const MAX_PASSES: usize = 64;

/// A write by a controller: the registry's update path (strategy, validation, finalization).
fn controller_write(
    state: &mut State,
    info: &ResourceInfo,
    old: &Value,
    new: Value,
    subresource: Option<&str>,
) -> Result<Value, ApiError> {
    let opts = WriteOptions {
        manager: MANAGER.into(),
        ..WriteOptions::default()
    };
    state.commit_update(info, old, new, subresource, &opts, true)
}

/// What the controllers were left waiting on by their last pass: which writes wake them.
#[derive(Debug, Default)]
struct Triggers {
    /// Namespaces being deleted.
    terminating: HashSet<String>,
    /// Uids named by owner references.
    referenced: HashSet<String>,
}

impl Triggers {
    fn wants(&self, change: &Change) -> bool {
        let concerns = |obj: &Value| {
            let meta = &obj["metadata"];
            let refs = meta["ownerReferences"]
                .as_array()
                .is_some_and(|r| !r.is_empty());
            let gc_finalizer = meta["finalizers"].as_array().is_some_and(|f| {
                f.iter()
                    .any(|f| f == propagation::ORPHAN || f == propagation::FOREGROUND)
            });
            let in_terminating = meta["namespace"]
                .as_str()
                .is_some_and(|ns| self.terminating.contains(ns));
            refs || gc_finalizer || in_terminating
        };
        let owner_gone = change.kind == ChangeType::Deleted
            && change.object["metadata"]["uid"]
                .as_str()
                .is_some_and(|uid| self.referenced.contains(uid));
        (change.storage.group.is_empty() && change.storage.resource == "namespaces")
            || owner_gone
            || concerns(&change.object)
            || change.previous.as_ref().is_some_and(concerns)
    }
}

/// Runs the namespace controller and the garbage collector until a pass writes nothing.
fn reconcile(state: &mut State) -> Triggers {
    // A request's dry-run flag and warnings are not the controllers'.
    let dry_run = std::mem::replace(&mut state.dry_run, false);
    let warnings = std::mem::take(&mut state.warnings);
    let mut triggers = Triggers::default();
    for _ in 0..MAX_PASSES {
        let before = state.store.current_rv();
        triggers.terminating = namespace::sync(state).into_iter().collect();
        triggers.referenced = gc::collect(state);
        if state.store.current_rv() == before {
            break;
        }
    }
    state.dry_run = dry_run;
    state.warnings = warnings;
    triggers
}

/// The controllers' task: wakes on the store's changes that concern them and reconciles. Ends
/// when the server is dropped.
pub(crate) async fn run(shared: Weak<Shared>) {
    let (mut changes, mut triggers) = {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let mut state = shared.lock();
        let changes = state.store.subscribe();
        (changes, reconcile(&mut state))
    };
    loop {
        let mut due = match changes.recv().await {
            Ok(change) => triggers.wants(&change),
            Err(RecvError::Lagged(_)) => true,
            Err(RecvError::Closed) => return,
        };
        loop {
            match changes.try_recv() {
                Ok(change) => due |= triggers.wants(&change),
                Err(TryRecvError::Lagged(_)) => due = true,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Closed) => return,
            }
        }
        if !due {
            continue;
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        triggers = reconcile(&mut shared.lock());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::StorageKey;
    use serde_json::json;

    fn change(kind: ChangeType, resource: &str, object: Value) -> Change {
        Change {
            rv: 2,
            kind,
            storage: StorageKey {
                group: String::new(),
                resource: resource.into(),
            },
            object,
            previous: None,
        }
    }

    #[test]
    fn only_writes_that_concern_the_controllers_wake_them() {
        let triggers = Triggers {
            terminating: ["shop".to_string()].into(),
            referenced: ["owner-uid".to_string()].into(),
        };
        let plain = json!({"metadata": {"namespace": "default", "name": "a", "uid": "u"}});
        assert!(!triggers.wants(&change(ChangeType::Modified, "configmaps", plain.clone())));
        assert!(!triggers.wants(&change(ChangeType::Deleted, "configmaps", plain)));
        let owner = json!({"metadata": {"namespace": "default", "name": "o", "uid": "owner-uid"}});
        assert!(triggers.wants(&change(ChangeType::Deleted, "configmaps", owner)));
        let dependent = json!({"metadata": {"namespace": "default", "name": "d",
            "ownerReferences": [{"uid": "x"}]}});
        assert!(triggers.wants(&change(ChangeType::Added, "configmaps", dependent)));
        let terminating = json!({"metadata": {"namespace": "shop", "name": "a"}});
        assert!(triggers.wants(&change(ChangeType::Deleted, "configmaps", terminating)));
        let foreground = json!({"metadata": {"namespace": "default", "name": "a",
            "deletionTimestamp": "t", "finalizers": ["foregroundDeletion"]}});
        assert!(triggers.wants(&change(ChangeType::Modified, "configmaps", foreground)));
        let ns = json!({"metadata": {"name": "other"}});
        assert!(triggers.wants(&change(ChangeType::Modified, "namespaces", ns)));
    }
}
