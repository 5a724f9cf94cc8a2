//! The namespace controller (namespaces' strategy is [`crate::kinds::namespace`]): the namespace controller (`pkg/controller/namespace/deletion`) deletes every object in a
//! terminating namespace with background propagation (objects with finalizers get their
//! `deletionTimestamp` and wait for them), reports progress in the namespace's deletion
//! conditions with upstream's reasons and messages, and removes the `kubernetes` finalizer when
//! nothing is left, which removes the namespace.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::kinds::namespace::{KUBERNETES_FINALIZER, TERMINATING, is_deleting, spec_finalizers};
use crate::lifecycle::propagation::Propagation;
use crate::object::{finalizers, rfc3339};
use crate::registry::{State, namespaces_key};
use crate::resources::ResourceInfo;

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
}
