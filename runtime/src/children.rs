//! Writing a controller's children: [`Pass::apply_child`](crate::Pass::apply_child) and
//! [`Pass::delete_child`](crate::Pass::delete_child).
//!
//! A child is written by server-side apply under the controller's field manager (its
//! [name](crate::controller::Controller::name)), forced: the controller owns the fields it sets,
//! and a field someone else changed is set back. Before the apply the runtime sets what makes the
//! object a child of the pass's object — a reconciler writes the desired child and nothing else:
//! - the **controller ownerReference** to the object (`controller: true`,
//!   `blockOwnerDeletion: true`, as controller-runtime's `SetControllerReference`), replacing any
//!   other controller reference; other references are kept;
//! - the object's **namespace** when the child names none;
//! - the label [`CONTROLLER_LABEL`] naming the controller, so its children can be selected;
//! - no `resourceVersion`, `uid` or `managedFields`: a child read back, changed and applied again
//!   is applied, not refused as a stale update.
//!
//! The kind must be declared owned (`#[reconciler(owns(Kind))]`, or
//! [`Relations::owns`](crate::relations::Relations::owns)): its changes then start the owner's
//! passes and the generated RBAC allows the writes. Writing an undeclared kind fails with
//! [`ChildError::Undeclared`] instead of leaving its deletion unnoticed.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;
use kube::api::{DeleteParams, Patch, PatchParams};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::observe::{ChildOperation, ChildWriteRecord, Observers, ReconcileObserver};
use crate::relations::{KindName, Ledger, Relations};

/// The label every child written through [`Pass::apply_child`](crate::Pass::apply_child)
/// carries; its value is the controller's name as a label value ([`controller_label_value`]).
pub const CONTROLLER_LABEL: &str = "kubeward.dev/controller";

/// Why a child could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The child's kind is not declared owned, so its changes would go unnoticed.
    #[error(
        "{kind} is not declared as owned by this controller, so a change to the child would go unnoticed: declare it with `#[reconciler(owns({kind}))]` or `Relations::owns::<{kind}>()`"
    )]
    Undeclared {
        /// The child's kind.
        kind: String,
    },
    /// The child has no `metadata.name`.
    #[error("the {kind} to apply has no metadata.name")]
    Unnamed {
        /// The child's kind.
        kind: String,
    },
    /// The child names a namespace other than its owner's: an ownerReference only reaches an
    /// owner in the dependent's namespace (or a cluster-scoped one).
    #[error(
        "the {kind} {name} is in namespace {namespace:?}, its owner in {owner_namespace:?}: a child must be in its owner's namespace"
    )]
    OtherNamespace {
        /// The child's kind.
        kind: String,
        /// The child's name.
        name: String,
        /// The child's namespace.
        namespace: String,
        /// The owner's namespace.
        owner_namespace: String,
    },
    /// The pass was not started by a controller (a [`Pass::new`](crate::Pass::new) in a unit
    /// test): there is no client to write with.
    #[error("this pass was not started by a controller: it has no client to write children with")]
    NoController,
    /// The request could not be built.
    #[error("could not build the request")]
    Request(#[from] kube::core::request::Error),
    /// The API server refused the request, or it failed.
    #[error("API request failed")]
    Api(#[from] kube::Error),
}

/// `controller` as a label value: `/` becomes `.`; a name longer than 63 characters keeps its
/// first 54 and a hash of the whole (`-` and 8 hex digits).
pub fn controller_label_value(controller: &str) -> String {
    let value: String = controller
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '.'
            }
        })
        .collect();
    if value.len() <= 63 {
        return value;
    }
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    controller.hash(&mut hasher);
    let prefix = value[..54].trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    format!("{prefix}-{:08x}", hasher.finish() as u32)
}

/// The owned kinds of a controller with their ledgers (what the controller wrote of each child).
#[derive(Debug, Default)]
pub(crate) struct OwnedKinds {
    kinds: Vec<(KindName, Arc<Ledger>)>,
}

impl OwnedKinds {
    /// The owned kinds of `relations`.
    pub(crate) fn of<K: Resource<DynamicType = ()> + Clone + 'static>(
        relations: &Relations<K>,
    ) -> Self {
        let kinds = relations
            .iter()
            .filter(|r| r.role() == crate::relations::Role::Owned)
            .map(|r| (r.kind().clone(), r.ledger().clone()))
            .collect();
        Self { kinds }
    }

    fn ledger(&self, kind: &KindName) -> Option<&Arc<Ledger>> {
        self.kinds
            .iter()
            .find(|(k, _)| k.group == kind.group && k.kind == kind.kind)
            .map(|(_, ledger)| ledger)
    }
}

/// What a pass writes its object's children with.
#[derive(Clone)]
pub(crate) struct ChildWriter {
    pub(crate) client: kube::Client,
    pub(crate) field_manager: Arc<str>,
    pub(crate) label_value: Arc<str>,
    pub(crate) owned: Arc<OwnedKinds>,
    /// The controller ownerReference to the pass's object.
    pub(crate) owner: OwnerReference,
    /// The pass's object's namespace.
    pub(crate) namespace: Option<String>,
    /// Told of every write ([`ChildWriteRecord`]).
    pub(crate) observers: Observers,
}

impl ChildWriter {
    /// Tells the observers of a write of a child of kind `C`.
    fn record<C: Resource<DynamicType = ()>>(&self, operation: ChildOperation, succeeded: bool) {
        self.observers.child_written(&ChildWriteRecord {
            controller: self.field_manager.clone(),
            kind: C::kind(&()).into(),
            operation,
            succeeded,
        });
    }

    fn ledger<C: Resource<DynamicType = ()>>(&self) -> Result<&Arc<Ledger>, ChildError> {
        let kind = KindName::of::<C>();
        self.owned
            .ledger(&kind)
            .ok_or(ChildError::Undeclared { kind: kind.kind })
    }

    /// Applies `child`; see the [module](self).
    pub(crate) async fn apply<C>(&self, child: &C) -> Result<C, ChildError>
    where
        C: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Debug,
    {
        let ledger = self.ledger::<C>()?;
        let kind = || C::kind(&()).into_owned();
        let mut child = child.clone();
        let meta = child.meta_mut();
        let name = meta
            .name
            .clone()
            .ok_or_else(|| ChildError::Unnamed { kind: kind() })?;
        match (&meta.namespace, &self.namespace) {
            (Some(namespace), Some(owner_namespace)) if namespace != owner_namespace => {
                return Err(ChildError::OtherNamespace {
                    kind: kind(),
                    name,
                    namespace: namespace.clone(),
                    owner_namespace: owner_namespace.clone(),
                });
            }
            (None, owner_namespace) => meta.namespace.clone_from(owner_namespace),
            _ => {}
        }
        meta.resource_version = None;
        meta.uid = None;
        meta.managed_fields = None;
        let references = meta.owner_references.get_or_insert_with(Vec::new);
        references.retain(|r| r.controller != Some(true) && r.uid != self.owner.uid);
        references.push(self.owner.clone());
        meta.labels
            .get_or_insert_with(BTreeMap::new)
            .insert(CONTROLLER_LABEL.to_owned(), self.label_value.to_string());
        let namespace = meta.namespace.clone();
        let request = kube::core::Request::new(C::url_path(&(), namespace.as_deref()));
        let params = PatchParams::apply(&self.field_manager).force();
        let _writing = ledger.writing(namespace.as_deref(), &name);
        let stored = self
            .client
            .request::<C>(request.patch(&name, &params, &Patch::Apply(&child))?)
            .await;
        self.record::<C>(ChildOperation::Apply, stored.is_ok());
        let stored = stored?;
        ledger.wrote(stored.meta());
        Ok(stored)
    }

    /// The child of kind `C` named `name` in the object's namespace, if there is one.
    pub(crate) async fn get<C>(&self, name: &str) -> Result<Option<C>, ChildError>
    where
        C: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        self.ledger::<C>()?;
        let request = kube::core::Request::new(C::url_path(&(), self.namespace.as_deref()));
        match self
            .client
            .request::<C>(request.get(name, &kube::api::GetParams::default())?)
            .await
        {
            Ok(child) => Ok(Some(child)),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(error) => Err(error.into()),
        }
    }

    /// Deletes the child of kind `C` named `name` in the object's namespace; whether it was
    /// there.
    pub(crate) async fn delete<C>(&self, name: &str) -> Result<bool, ChildError>
    where
        C: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        let ledger = self.ledger::<C>()?;
        let request = kube::core::Request::new(C::url_path(&(), self.namespace.as_deref()));
        let _writing = ledger.writing(self.namespace.as_deref(), name);
        // The deleted object, or a Status naming it (some kinds answer that way).
        let answer = self
            .client
            .request::<serde_json::Value>(request.delete(name, &DeleteParams::default())?)
            .await;
        let gone = matches!(&answer, Err(kube::Error::Api(status)) if status.code == 404);
        self.record::<C>(ChildOperation::Delete, answer.is_ok() || gone);
        let answer = match answer {
            Ok(answer) => answer,
            Err(_) if gone => return Ok(false),
            Err(error) => return Err(error.into()),
        };
        let uid = ["/metadata/uid", "/details/uid"]
            .iter()
            .find_map(|pointer| answer.pointer(pointer)?.as_str());
        if let Some(uid) = uid.filter(|uid| !uid.is_empty()) {
            ledger.deleted(self.namespace.as_deref(), uid);
        }
        Ok(true)
    }
}

impl ChildWriter {
    /// Deletes the children of kind `C` this controller applied for the object (they carry
    /// [`CONTROLLER_LABEL`] with its value and the object's controller ownerReference) whose names
    /// are not in `wanted`; how many it deleted. Each delete carries the child's uid as a
    /// precondition, so a child recreated meanwhile is left alone.
    pub(crate) async fn prune<C>(&self, wanted: &[&str]) -> Result<usize, ChildError>
    where
        C: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        use kube::api::{ListParams, Preconditions};
        use kube::core::{ApiResource, DynamicObject, PartialObjectMeta};

        let ledger = self.ledger::<C>()?;
        let resource = ApiResource::erase::<C>(&());
        let api: kube::Api<PartialObjectMeta<DynamicObject>> = match &self.namespace {
            Some(namespace) => {
                kube::Api::namespaced_with(self.client.clone(), namespace, &resource)
            }
            None => kube::Api::all_with(self.client.clone(), &resource),
        };
        let selector = format!("{CONTROLLER_LABEL}={}", self.label_value);
        let listed = api
            .list_metadata(&ListParams::default().labels(&selector))
            .await?;
        let mut deleted = 0;
        for child in listed.items {
            let owned = child
                .metadata
                .owner_references
                .iter()
                .flatten()
                .any(|r| r.controller == Some(true) && r.uid == self.owner.uid);
            let name = child.metadata.name.clone().unwrap_or_default();
            if !owned || wanted.contains(&name.as_str()) {
                continue;
            }
            let Some(uid) = child.metadata.uid.clone() else {
                continue;
            };
            let _writing = ledger.writing(child.metadata.namespace.as_deref(), &name);
            let params = DeleteParams {
                preconditions: Some(Preconditions {
                    uid: Some(uid.clone()),
                    resource_version: None,
                }),
                ..DeleteParams::default()
            };
            match api.delete(&name, &params).await {
                Ok(_) => {
                    self.record::<C>(ChildOperation::Prune, true);
                    ledger.deleted(child.metadata.namespace.as_deref(), &uid);
                    deleted += 1;
                }
                // Gone already, or replaced by a new child of that name: not this one to delete.
                Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
                Err(error) => {
                    self.record::<C>(ChildOperation::Prune, false);
                    return Err(error.into());
                }
            }
        }
        Ok(deleted)
    }
}

#[cfg(test)]
mod tests {
    use super::controller_label_value;

    #[test]
    fn controller_names_become_label_values() {
        assert_eq!(
            controller_label_value("demo.kubeward.dev/rollouts"),
            "demo.kubeward.dev.rollouts"
        );
        let long = format!("{}/x", "a".repeat(80));
        let value = controller_label_value(&long);
        assert_eq!(value.len(), 63);
        assert!(value.starts_with(&"a".repeat(54)));
        assert_ne!(
            value,
            controller_label_value(&format!("{}/y", "a".repeat(80)))
        );
    }
}
