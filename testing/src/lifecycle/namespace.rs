//! Namespaces' lifecycle, as kube-apiserver and the namespace controller run it:
//!
//! - the strategy (`pkg/registry/core/namespace/strategy.go`): a new namespace is `Active` with
//!   the `kubernetes` spec finalizer, which only `/finalize` writes change;
//! - DELETE (`pkg/registry/core/namespace/storage/storage.go`): the first one sets
//!   `deletionTimestamp` and `status.phase: Terminating` and answers the Namespace; the namespace
//!   is removed only once its spec finalizers (and metadata finalizers) are gone;
//! - the `NamespaceLifecycle` admission plugin: `default`, `kube-system` and `kube-public` may
//!   not be deleted, and nothing may be created in a terminating namespace (403 Forbidden);
//! - the namespace controller (`pkg/controller/namespace/deletion`): deletes every object in a
//!   terminating namespace with background propagation (objects with finalizers get their
//!   `deletionTimestamp` and wait for them), reports progress in the namespace's deletion
//!   conditions with upstream's reasons and messages, and removes the `kubernetes` finalizer
//!   when nothing is left, which removes the namespace.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use super::propagation::{Propagation, deletion_finalizers};
use crate::registry::{State, finalizers, meta_mut, namespaces_key, rfc3339, string_list};
use crate::resources::ResourceInfo;
use crate::status::{ApiError, Qualified};

/// The spec finalizer of the namespace controller (`core.FinalizerKubernetes`).
pub(crate) const KUBERNETES_FINALIZER: &str = "kubernetes";
/// Namespaces the `NamespaceLifecycle` admission plugin refuses to delete.
const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];
/// `status.phase` of a namespace being deleted.
const TERMINATING: &str = "Terminating";

/// The deletion conditions the controller maintains, in upstream's order, with the reason and
/// message of their "nothing wrong" variant (`status_condition_utils.go`).
const CONDITIONS: [(&str, &str, &str); 5] = [
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        "NamespaceContentRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        "NamespaceFinalizersRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
];

/// Whether `info` is the namespaces resource.
pub(crate) fn is_namespaces(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "namespaces"
}

fn spec_finalizers(ns: &Value) -> Vec<String> {
    string_list(&ns["spec"]["finalizers"])
}

fn is_deleting(obj: &Value) -> bool {
    !obj["metadata"]["deletionTimestamp"].is_null()
}

/// `PrepareForCreate`: a new namespace is `Active` and carries the `kubernetes` spec finalizer
/// (added to those given).
pub(crate) fn prepare_for_create(obj: &mut Value) {
    obj["status"] = json!({"phase": "Active"});
    let mut wanted = spec_finalizers(obj);
    if !wanted.iter().any(|f| f == KUBERNETES_FINALIZER) {
        wanted.push(KUBERNETES_FINALIZER.into());
    }
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    obj["spec"]["finalizers"] = json!(wanted);
}

/// `PrepareForUpdate` of the main resource (and of `/status`, which keeps the whole spec):
/// spec finalizers change only through `/finalize`.
pub(crate) fn prepare_for_update(
    info: &ResourceInfo,
    old: &Value,
    new: &mut Value,
    sub: Option<&str>,
) {
    if !is_namespaces(info) || sub == Some("finalize") {
        return;
    }
    match old["spec"].get("finalizers") {
        Some(f) => {
            if !new["spec"].is_object() {
                new["spec"] = json!({});
            }
            new["spec"]["finalizers"] = f.clone();
        }
        None => {
            if let Some(spec) = new["spec"].as_object_mut() {
                spec.remove("finalizers");
            }
        }
    }
}

/// Whether nothing but metadata finalizers keeps `obj` when it is deleting: true for every
/// kind but a namespace with spec finalizers (`ShouldDeleteNamespaceDuringUpdate`).
pub(crate) fn spec_finalized(info: &ResourceInfo, obj: &Value) -> bool {
    !is_namespaces(info) || spec_finalizers(obj).is_empty()
}

/// The `NamespaceLifecycle` admission of a create into `namespace`: 403 while it terminates,
/// naming the object as admission does before names are generated.
pub(crate) fn admit_create(
    state: &State,
    info: &ResourceInfo,
    namespace: &str,
    obj: &Value,
) -> Result<(), ApiError> {
    if namespace.is_empty() || !info.namespaced {
        return Ok(());
    }
    let Some(ns) = state.store.get(&namespaces_key(), "", namespace) else {
        return Ok(());
    };
    if ns["status"]["phase"] != TERMINATING {
        return Ok(());
    }
    // admission.extractResourceName: the name, else generateName, else "Unknown".
    let name = [&obj["metadata"]["name"], &obj["metadata"]["generateName"]]
        .into_iter()
        .filter_map(Value::as_str)
        .find(|n| !n.is_empty())
        .unwrap_or("Unknown");
    let mut err = ApiError::forbidden_object(
        info.qualified_resource(),
        name,
        &format!(
            "unable to create new content in namespace {namespace} because it is being terminated"
        ),
    );
    if let Some(details) = err.details.as_mut() {
        details["causes"] = json!([{
            "reason": "NamespaceTerminating",
            "message": format!("namespace {namespace} is being terminated"),
            "field": "metadata.namespace",
        }]);
    }
    Err(err)
}

/// The namespace part of DELETE. `Some(answer)` ends the request: an immortal namespace is 403;
/// the first DELETE marks the namespace `Terminating` and answers it; later ones answer it
/// unchanged while spec finalizers remain. `None`: the generic deletion runs (metadata
/// finalizers, then removal, answering the deleted Namespace). A `dry_run` stores nothing.
pub(crate) fn before_delete(
    state: &mut State,
    info: &ResourceInfo,
    old: &Value,
    policy: Option<Propagation>,
    dry_run: bool,
) -> Result<Option<Value>, ApiError> {
    let name = old["metadata"]["name"].as_str().unwrap_or_default();
    if IMMORTAL.contains(&name) {
        return Err(ApiError::forbidden_object(
            Qualified {
                group: "",
                name: "namespaces",
            },
            name,
            "this namespace may not be deleted",
        ));
    }
    if !is_deleting(old) {
        let mut new = old.clone();
        let now = rfc3339(state.clock.now());
        let meta = meta_mut(&mut new);
        meta.insert("deletionTimestamp".into(), json!(now));
        if let Some(next) = deletion_finalizers(&finalizers(old), policy) {
            meta.insert("finalizers".into(), json!(next));
        }
        new["status"]["phase"] = json!(TERMINATING);
        if dry_run {
            return Ok(Some(State::to_view(info, &new)));
        }
        let stored = state.store.put(&info.storage, new);
        return Ok(Some(State::to_view(info, &stored)));
    }
    if !spec_finalizers(old).is_empty() {
        return Ok(Some(State::to_view(info, old)));
    }
    Ok(None)
}

/// What deleting a namespace's content left behind.
#[derive(Debug, Default)]
struct Content {
    /// Deletions that failed, as messages.
    errors: Vec<String>,
    /// `resource.group` -> objects remaining.
    remaining: BTreeMap<String, usize>,
    /// Finalizer -> objects it keeps.
    finalizers: BTreeMap<String, usize>,
}

impl Content {
    fn is_empty(&self) -> bool {
        self.errors.is_empty() && self.remaining.is_empty()
    }

    /// The failing conditions (`namespaceConditionUpdater`): type -> (reason, message).
    fn failures(&self) -> BTreeMap<&'static str, (&'static str, String)> {
        let mut out = BTreeMap::new();
        if !self.errors.is_empty() {
            let mut msgs = self.errors.clone();
            msgs.sort();
            out.insert(
                "NamespaceDeletionContentFailure",
                (
                    "ContentDeletionFailed",
                    format!(
                        "Failed to delete all resource types, {} remaining: {}",
                        msgs.len(),
                        msgs.join(", ")
                    ),
                ),
            );
        }
        let listing = |counts: &BTreeMap<String, usize>, entry: fn(&str, usize) -> String| {
            let parts: Vec<String> = counts.iter().map(|(k, n)| entry(k, *n)).collect();
            parts.join(", ")
        };
        if !self.remaining.is_empty() {
            let parts = listing(&self.remaining, |gr, n| {
                format!("{gr} has {n} resource instances")
            });
            out.insert(
                "NamespaceContentRemaining",
                (
                    "SomeResourcesRemain",
                    format!("Some resources are remaining: {parts}"),
                ),
            );
        }
        if !self.finalizers.is_empty() {
            let parts = listing(&self.finalizers, |f, n| {
                format!("{f} in {n} resource instances")
            });
            out.insert(
                "NamespaceFinalizersRemaining",
                (
                    "SomeFinalizersRemain",
                    format!("Some content in the namespace has finalizers remaining: {parts}"),
                ),
            );
        }
        out
    }
}

/// Every namespaced resource, one per store.
fn namespaced_resources(state: &State) -> Vec<Arc<ResourceInfo>> {
    state
        .registry
        .per_storage()
        .into_iter()
        .filter(|i| i.namespaced)
        .collect()
}

/// `deleteAllContent`: deletes every object of `namespace` (background propagation) and reports
/// what is left.
fn delete_all_content(state: &mut State, namespace: &str) -> Content {
    let mut content = Content::default();
    let background = json!({"propagationPolicy": Propagation::Background.as_str()});
    for info in namespaced_resources(state) {
        let names: Vec<String> = state
            .store
            .list(&info.storage, Some(namespace))
            .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        for name in names {
            match state.delete(&info, Some(namespace), &name, &background) {
                Err(e) if e.code != 404 => content.errors.push(e.message),
                _ => {}
            }
        }
        let left: Vec<&Value> = state.store.list(&info.storage, Some(namespace)).collect();
        if left.is_empty() {
            continue;
        }
        let mut any_finalizer = false;
        for obj in &left {
            for f in finalizers(obj) {
                any_finalizer = true;
                *content.finalizers.entry(f).or_default() += 1;
            }
        }
        if !any_finalizer {
            content.errors.push(format!(
                "unexpected items still remain in namespace: {namespace} for gvr: {}/{}, Resource={}",
                info.group, info.version, info.plural
            ));
        }
        content
            .remaining
            .insert(format!("{}.{}", info.plural, info.group), left.len());
    }
    content
}

/// `updateConditions`: every controller condition present, failing ones with their message,
/// the rest in their "nothing wrong" variant; `lastTransitionTime` moves when the status does.
/// Returns whether anything changed.
fn update_conditions(ns: &mut Value, content: &Content, now: &str) -> bool {
    let failures = content.failures();
    if !ns["status"]["conditions"].is_array() {
        ns["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = ns["status"]["conditions"].as_array_mut() else {
        return false;
    };
    let mut changed = false;
    for (type_, ok_reason, ok_message) in CONDITIONS {
        let (status, reason, message) = match failures.get(type_) {
            Some((reason, message)) => ("True", *reason, message.clone()),
            None => ("False", ok_reason, ok_message.to_string()),
        };
        match conditions.iter_mut().find(|c| c["type"] == type_) {
            None => {
                conditions.push(json!({
                    "type": type_, "status": status, "lastTransitionTime": now,
                    "reason": reason, "message": message,
                }));
                changed = true;
            }
            Some(c)
                if c["status"] != status || c["reason"] != reason || c["message"] != message =>
            {
                if c["status"] != status {
                    c["lastTransitionTime"] = json!(now);
                }
                c["status"] = json!(status);
                c["reason"] = json!(reason);
                c["message"] = json!(message);
                changed = true;
            }
            Some(_) => {}
        }
    }
    changed
}

/// The namespaces being deleted (where the controller has work).
pub(crate) fn terminating(state: &State) -> Vec<String> {
    state
        .store
        .list(&namespaces_key(), None)
        .filter(|ns| is_deleting(ns))
        .filter_map(|ns| ns["metadata"]["name"].as_str().map(str::to_string))
        .collect()
}

/// One pass of the namespace controller over the namespaces `names` (those not being deleted
/// are left alone).
pub(crate) fn sync<'a>(state: &mut State, names: impl IntoIterator<Item = &'a String>) {
    let Some(info) = state.resource("", "v1", "namespaces") else {
        return;
    };
    for name in names {
        sync_namespace(state, &info, name);
    }
}

fn sync_namespace(state: &mut State, info: &ResourceInfo, name: &str) {
    let current = |state: &State| state.store.get(&info.storage, "", name).cloned();
    let Some(ns) = current(state) else { return };
    if !is_deleting(&ns) || spec_finalizers(&ns).is_empty() {
        return;
    }
    if ns["status"]["phase"] != TERMINATING {
        let mut new = ns.clone();
        new["status"]["phase"] = json!(TERMINATING);
        if super::controller_write(state, info, &ns, new, Some("status")).is_err() {
            return;
        }
    }
    let content = delete_all_content(state, name);
    let Some(ns) = current(state) else { return };
    let mut new = ns.clone();
    let now = rfc3339(state.clock.now());
    if update_conditions(&mut new, &content, &now)
        && super::controller_write(state, info, &ns, new, Some("status")).is_err()
    {
        return;
    }
    if !content.is_empty() {
        return;
    }
    // finalizeNamespace: the spec finalizers without ours, as a sorted set.
    let Some(ns) = current(state) else { return };
    let mut rest: Vec<String> = spec_finalizers(&ns)
        .into_iter()
        .filter(|f| f != KUBERNETES_FINALIZER)
        .collect();
    rest.sort();
    rest.dedup();
    let mut new = ns.clone();
    new["spec"]["finalizers"] = json!(rest);
    let _ = super::controller_write(state, info, &ns, new, Some("finalize"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_report_what_remains_and_move_their_transition_time_only_on_status_changes() {
        let mut ns = json!({"status": {"phase": "Terminating"}});
        let mut content = Content::default();
        content.remaining.insert("configmaps.".into(), 2);
        content.finalizers.insert("example.com/cleanup".into(), 2);
        assert!(update_conditions(&mut ns, &content, "t1"));
        let conditions = ns["status"]["conditions"].as_array().unwrap().clone();
        assert_eq!(conditions.len(), 5);
        assert_eq!(
            conditions[3],
            json!({"type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": "t1",
                   "reason": "SomeResourcesRemain",
                   "message": "Some resources are remaining: configmaps. has 2 resource instances"})
        );
        assert_eq!(
            conditions[4]["message"],
            "Some content in the namespace has finalizers remaining: example.com/cleanup in 2 resource instances"
        );
        assert_eq!(conditions[0]["reason"], "ResourcesDiscovered");
        assert!(!update_conditions(&mut ns, &content, "t2"));
        assert!(update_conditions(&mut ns, &Content::default(), "t3"));
        assert_eq!(ns["status"]["conditions"][3]["status"], "False");
        assert_eq!(ns["status"]["conditions"][3]["lastTransitionTime"], "t3");
        assert_eq!(ns["status"]["conditions"][0]["lastTransitionTime"], "t1");
    }

    #[test]
    fn new_namespaces_get_the_kubernetes_finalizer_after_their_own() {
        let mut ns = json!({"spec": {"finalizers": ["example.com/x"]}});
        prepare_for_create(&mut ns);
        assert_eq!(
            ns["spec"]["finalizers"],
            json!(["example.com/x", KUBERNETES_FINALIZER])
        );
        assert_eq!(ns["status"]["phase"], "Active");
    }
}
