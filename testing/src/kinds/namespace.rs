//! Namespaces' strategy, as kube-apiserver applies it:
//!
//! - `PrepareForCreate`/`PrepareForUpdate` (`pkg/registry/core/namespace/strategy.go`): a new
//!   namespace is `Active` with the `kubernetes` spec finalizer, which only `/finalize` writes
//!   change;
//! - DELETE (`pkg/registry/core/namespace/storage/storage.go`): the first one sets
//!   `deletionTimestamp` and `status.phase: Terminating` and answers the Namespace; the namespace
//!   is removed only once its spec finalizers (and metadata finalizers) are gone;
//! - the `NamespaceLifecycle` admission plugin: `default`, `kube-system` and `kube-public` may
//!   not be deleted, and nothing may be created in a terminating namespace (403 Forbidden).
//!
//! The namespace controller that empties a terminating namespace is
//! [`crate::lifecycle::namespace`].

use http::Method;
use serde_json::{Value, json};

use super::{Deletion, Strategy};
use crate::lifecycle::propagation::{Propagation, deletion_finalizers};
use crate::object::{finalizers, meta_mut, string_list};
use crate::resources::ResourceInfo;
use crate::status::{ApiError, Qualified};
use crate::table::column::Column;
use crate::validation::names::NameRule;

/// The spec finalizer of the namespace controller (`core.FinalizerKubernetes`).
pub(crate) const KUBERNETES_FINALIZER: &str = "kubernetes";

/// Namespaces the `NamespaceLifecycle` admission plugin refuses to delete.
const IMMORTAL: [&str; 3] = ["default", "kube-system", "kube-public"];

/// `status.phase` of a namespace being deleted.
pub(crate) const TERMINATING: &str = "Terminating";

pub(crate) fn spec_finalizers(ns: &Value) -> Vec<String> {
    string_list(&ns["spec"]["finalizers"])
}

pub(crate) fn is_deleting(obj: &Value) -> bool {
    !obj["metadata"]["deletionTimestamp"].is_null()
}

/// `PrepareForCreate`: a new namespace is `Active` and carries the `kubernetes` spec finalizer
/// (added to those given).
fn prepare_for_create(obj: &mut Value) {
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
fn prepare_for_update(old: &Value, new: &mut Value, sub: Option<&str>) {
    if sub == Some("finalize") {
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

/// The `NamespaceLifecycle` admission of a create into `namespace` (`stored`, when it exists):
/// 403 while it terminates, naming the object as admission does before names are generated.
pub(crate) fn admit_create(
    info: &ResourceInfo,
    namespace: &str,
    stored: Option<&Value>,
    obj: &Value,
) -> Result<(), ApiError> {
    if namespace.is_empty() || !info.namespaced {
        return Ok(());
    }
    let Some(ns) = stored else {
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

/// The namespace part of DELETE of `old` with `policy`, at `now`: an immortal namespace is 403;
/// the first DELETE marks the namespace `Terminating` (with its deletion finalizers) and answers
/// it; later ones answer it unchanged while spec finalizers remain; then the generic deletion
/// runs (metadata finalizers, then removal, answering the deleted Namespace).
fn before_delete(
    old: &Value,
    policy: Option<Propagation>,
    now: &str,
) -> Result<Deletion, ApiError> {
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
        let meta = meta_mut(&mut new);
        meta.insert("deletionTimestamp".into(), json!(now));
        if let Some(next) = deletion_finalizers(&finalizers(old), policy) {
            meta.insert("finalizers".into(), json!(next));
        }
        new["status"]["phase"] = json!(TERMINATING);
        return Ok(Deletion::Replace(new));
    }
    if !spec_finalizers(old).is_empty() {
        return Ok(Deletion::Unchanged);
    }
    Ok(Deletion::Generic)
}

/// Namespaces' [`Strategy`].
pub(crate) struct Namespaces;

impl Strategy for Namespaces {
    /// `SetDefaults_Namespace` at decoding: the `kubernetes.io/metadata.name` label, validated as
    /// any label (a name too long for a label value is refused twice).
    fn default_create(&self, obj: &mut Value, name: &str) {
        let labels = meta_mut(obj).entry("labels").or_insert_with(|| json!({}));
        labels["kubernetes.io/metadata.name"] = json!(name);
    }

    fn name_rule(&self) -> NameRule {
        NameRule::DnsLabel
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        prepare_for_create(obj);
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Value, subresource: Option<&str>) {
        prepare_for_update(old, new, subresource);
    }

    fn field_labels(&self) -> &'static [&'static str] {
        &["status.phase"]
    }

    fn unsupported_field_label(&self, field: &str) -> Option<String> {
        super::core_field_label_error(field)
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        vec![
            Column::name(),
            Column::new(
                "Status",
                "string",
                0,
                Box::new(|o, _| o["status"]["phase"].clone()),
            )
            .described("The status of the namespace"),
            Column::age(),
        ]
    }

    /// The namespace storage (upstream `pkg/registry/core/namespace/storage`) has no
    /// `DeleteCollection`.
    fn deletes_collections(&self) -> bool {
        false
    }

    /// `ShouldDeleteNamespaceDuringUpdate`: not while spec finalizers remain.
    fn finalized(&self, obj: &Value) -> bool {
        spec_finalizers(obj).is_empty()
    }

    fn before_delete(
        &self,
        old: &Value,
        policy: Option<Propagation>,
        now: &str,
    ) -> Result<Deletion, ApiError> {
        before_delete(old, policy, now)
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    /// Spec finalizers are written through `/finalize`, by PUT only.
    fn serves(&self, subresource: &str, method: &Method) -> bool {
        subresource == "finalize" && *method == Method::PUT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
