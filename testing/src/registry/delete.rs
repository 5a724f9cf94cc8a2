//! Delete (`store.go` `Delete`, `DeleteCollection`): finalizers and propagation, and the TTL expiry
//! of events.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use serde_json::{Value, json};

use super::list::ListParams;
use super::{State, events_key};
use crate::kinds::{self, Deletion};
use crate::lifecycle::propagation::{Propagation, deletion_finalizers};
use crate::object::{finalizers, meta_mut, meta_str, rfc3339};
use crate::resources::ResourceInfo;
use crate::status::{ApiError, delete_success};
use crate::store::ObjectKey;

/// Expiry times of events, indexed both ways so that a sweep costs only what is due.
#[derive(Debug, Default)]
pub(crate) struct Expiries {
    at: BTreeMap<ObjectKey, Timestamp>,
    queue: BTreeSet<(Timestamp, ObjectKey)>,
}

impl Expiries {
    pub(super) fn arm(&mut self, key: ObjectKey, at: Timestamp) {
        self.disarm(&key);
        self.queue.insert((at, key.clone()));
        self.at.insert(key, at);
    }

    pub(super) fn disarm(&mut self, key: &ObjectKey) {
        if let Some(at) = self.at.remove(key) {
            self.queue.remove(&(at, key.clone()));
        }
    }

    /// Removes and returns every key due at `now`.
    pub(super) fn due(&mut self, now: Timestamp) -> Vec<ObjectKey> {
        let mut out = Vec::new();
        while let Some((at, _)) = self.queue.first()
            && *at <= now
        {
            if let Some((_, key)) = self.queue.pop_first() {
                self.at.remove(&key);
                out.push(key);
            }
        }
        out
    }
}

impl State {
    /// Removes events whose TTL ran out, as etcd leases would.
    pub(crate) fn expire_events(&mut self) {
        let now = self.now();
        for key in self.expiries.due(now) {
            self.store.remove(&events_key(), &key.0, &key.1);
        }
    }

    /// DELETE of one object. Returns the object (CRDs, namespaces and service accounts, or while
    /// finalizers remain) or a success `Status`, exactly as the generic registry does. The
    /// propagation policy adds or removes the garbage collector's finalizers first.
    pub(crate) fn delete(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        options: &Value,
    ) -> Result<Value, ApiError> {
        let policy = Propagation::from_options(options)?;
        let dry_run = is_dry_run(options);
        let ns = Self::check_scope(info, namespace)?;
        let old = self
            .store
            .get(&info.storage, &ns, name)
            .cloned()
            .ok_or_else(|| ApiError::not_found(info.qualified_resource(), name))?;
        // apiserver's rest.BeforeDelete checks the preconditions first, naming the kind (not
        // the resource) in its conflict.
        let pre = &options["preconditions"];
        if let Some(uid) = pre["uid"].as_str() {
            let actual = meta_str(&old, "uid").unwrap_or_default();
            if uid != actual {
                return Err(ApiError::conflict(
                    info.qualified_kind(),
                    name,
                    &format!(
                        "the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
                    ),
                ));
            }
        }
        if let Some(rv) = pre["resourceVersion"].as_str() {
            let actual = meta_str(&old, "resourceVersion").unwrap_or_default();
            if rv != actual {
                return Err(ApiError::conflict(
                    info.qualified_kind(),
                    name,
                    &format!(
                        "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                    ),
                ));
            }
        }
        let strategy = kinds::strategy(info);
        match strategy.before_delete(&old, policy, &rfc3339(self.now()))? {
            Deletion::Replace(replaced) if dry_run => return Ok(Self::to_view(info, &replaced)),
            Deletion::Replace(replaced) => {
                let stored = self.store.put(&info.storage, replaced);
                return Ok(Self::to_view(info, &stored));
            }
            Deletion::Unchanged => return Ok(Self::to_view(info, &old)),
            Deletion::Generic => {}
        }
        // A kind that deletes gracefully (pods): marked deleting for its grace period.
        if let Some(answer) = self.graceful_delete(info, &old, options, policy)? {
            return Ok(answer);
        }
        let current = finalizers(&old);
        let pending = deletion_finalizers(&current, policy).unwrap_or(current);
        if !pending.is_empty() {
            // updateForGracefulDeletionAndFinalizers + markAsDeleting: a no-op when the object
            // is already deleting with these finalizers.
            let mut new = old.clone();
            let deleting = !old["metadata"]["deletionTimestamp"].is_null();
            let now = rfc3339(self.now());
            let meta = meta_mut(&mut new);
            meta.insert("finalizers".into(), json!(pending));
            if !deleting {
                meta.insert("deletionTimestamp".into(), json!(now));
                if let Some(g) = meta
                    .get("generation")
                    .and_then(Value::as_i64)
                    .filter(|g| *g > 0)
                {
                    meta.insert("generation".into(), json!(g + 1));
                }
            }
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            if new == old {
                return Ok(Self::to_view(info, &old));
            }
            if dry_run {
                return Ok(Self::to_view(info, &new));
            }
            let stored = self.store.put(&info.storage, new);
            self.after_write(&stored, info);
            return Ok(Self::to_view(info, &stored));
        }
        let gone = if dry_run {
            old
        } else {
            let gone = self
                .store
                .remove(&info.storage, &ns, name)
                .ok_or_else(|| ApiError::internal("object vanished during deletion"))?;
            self.after_delete(&gone, info);
            gone
        };
        // The registries that set `ReturnDeletedObject`: CRDs, namespaces and service accounts
        // answer the object; the others, custom resources among them, a Status (dry runs
        // alike).
        let returns_object = strategy.returns_deleted_object();
        if returns_object {
            Ok(Self::to_view(info, &gone))
        } else {
            Ok(delete_success(
                info.qualified_resource(),
                name,
                meta_str(&gone, "uid").unwrap_or_default(),
            ))
        }
    }

    /// DELETE of a collection (the registry's `DeleteCollection`): the page the list options
    /// select (`limit` and `continue` included) is deleted object by object as by
    /// [`State::delete`], with the same options; the answer is that page as it was listed
    /// before the deletions.
    pub(crate) fn delete_collection(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        params: &ListParams<'_>,
        options: &Value,
    ) -> Result<Value, ApiError> {
        // ValidateDeleteOptions runs before anything is listed.
        Propagation::from_options(options)?;
        let mut list = self.list(info, namespace, params)?;
        list.untyped_items = true;
        let list = list.into_value();
        for item in list["items"].as_array().cloned().unwrap_or_default() {
            let ns = meta_str(&item, "namespace").map(str::to_string);
            let name = meta_str(&item, "name").unwrap_or_default().to_string();
            match self.delete(info, ns.as_deref(), &name, options) {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(list)
    }
}

/// Whether `options` (`DeleteOptions`, the request's `dryRun` query folded in) ask for a dry run:
/// `dryRun: ["All"]`.
pub(crate) fn is_dry_run(options: &Value) -> bool {
    options["dryRun"]
        .as_array()
        .is_some_and(|d| d.iter().any(|v| v == "All"))
}
