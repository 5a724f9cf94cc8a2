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
//! A child another object controls (its controller ownerReference names another owner) is
//! refused, as controller-runtime's `SetControllerReference` refuses it
//! ([`ChildError::AlreadyOwned`]); [`Pass::delete_child`](crate::Pass::delete_child) and
//! [`Pass::prune_children`](crate::Pass::prune_children) delete only the object's own children,
//! each delete preconditioned on the child's uid. Children are found through the relation's
//! cache (what its watch saw, and what the controller wrote): in the owner's namespace, or for a
//! cluster-scoped owner in the namespace its child is in.
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
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::core::{DynamicObject, ObjectMeta, PartialObjectMeta, TypeMeta};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::observe::{ChildOperation, ChildWriteRecord, Observers, ReconcileObserver};
use crate::relations::{
    Cached, KindName, RelationCache, RelationCaches, Role, Seen, controller_of,
};

/// The label every child written through [`Pass::apply_child`](crate::Pass::apply_child)
/// carries (declared where owned kinds' watches select by it).
pub use crate::relations::CONTROLLER_LABEL;

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
    /// The child is controlled by another object: applying it would take it from its owner
    /// (controller-runtime's `AlreadyOwnedError`).
    #[error(
        "Object {namespace}/{name} is already owned by another {owner_kind} controller {owner_name}"
    )]
    AlreadyOwned {
        /// The child's namespace (empty when cluster-scoped).
        namespace: String,
        /// The child's name.
        name: String,
        /// The kind of the object that controls it.
        owner_kind: String,
        /// The name of the object that controls it.
        owner_name: String,
    },
    /// The object to delete is not a child of the pass's object (another object, or no one,
    /// controls it): it is left alone.
    #[error(
        "{kind} {namespace}/{name} is not a child of this object, so it is not deleted: {controller}"
    )]
    NotAChild {
        /// The object's kind.
        kind: String,
        /// Its namespace (empty when cluster-scoped).
        namespace: String,
        /// Its name.
        name: String,
        /// Who controls it instead.
        controller: String,
    },
    /// The related kind is not declared watched, so no cache holds it.
    #[error(
        "{kind} is not declared as watched by this controller, so no cache holds it: declare it with `#[reconciler(watches({kind}, map = ..))]` or `Relations::watches::<{kind}, _>(..)`"
    )]
    NotWatched {
        /// The related kind.
        kind: String,
    },
    /// A cached related object does not deserialize as its kind.
    #[error("the cached {kind} {name} does not deserialize")]
    Undecodable {
        /// The related kind.
        kind: String,
        /// The object's name.
        name: String,
        /// Why.
        #[source]
        source: kube::core::dynamic::ParseDynamicObjectError,
    },
    /// The API server did not answer a child's write or read in time (the controller's
    /// [status write timeout](crate::controller::Controller::with_status_write_timeout)): a
    /// write may have been stored or not; the pass fails and is retried, and the child's watch
    /// shows what was stored.
    #[error("the API server did not answer within {after:?}")]
    TimedOut {
        /// The timeout.
        after: std::time::Duration,
    },
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
    let prefix = value[..54].trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    format!("{prefix}-{:08x}", fnv1a_32(controller.as_bytes()))
}

/// The 32-bit FNV-1a hash of `bytes`: fixed by its definition, so a label value computed from
/// it is the same in every build (std's `DefaultHasher` may change between Rust releases, and
/// children labelled by an older build would then escape pruning).
fn fnv1a_32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, byte| {
        (hash ^ u32::from(*byte)).wrapping_mul(0x0100_0193)
    })
}

/// What a pass writes its object's children with.
#[derive(Clone)]
pub(crate) struct ChildWriter {
    pub(crate) client: kube::Client,
    pub(crate) field_manager: Arc<str>,
    pub(crate) label_value: Arc<str>,
    pub(crate) caches: Arc<RelationCaches>,
    /// The controller ownerReference to the pass's object.
    pub(crate) owner: OwnerReference,
    /// The pass's object's namespace.
    pub(crate) namespace: Option<String>,
    /// Told of every write ([`ChildWriteRecord`]).
    pub(crate) observers: Observers,
    /// How long a request may go unanswered: a hung child write neither holds the pass until
    /// its deadline nor the events of that child (parked until the write's answer) for longer.
    pub(crate) timeout: std::time::Duration,
}

impl ChildWriter {
    /// Sends `request`, bounded by the [timeout](Self::timeout).
    async fn send<T: DeserializeOwned>(
        &self,
        request: http::Request<Vec<u8>>,
    ) -> Result<T, ChildError> {
        match tokio::time::timeout(self.timeout, self.client.request::<T>(request)).await {
            Ok(answer) => Ok(answer?),
            Err(_) => Err(ChildError::TimedOut {
                after: self.timeout,
            }),
        }
    }

    /// Tells the observers of a write of a child of kind `C`.
    fn record<C: Resource<DynamicType = ()>>(&self, operation: ChildOperation, succeeded: bool) {
        self.observers.child_written(&ChildWriteRecord {
            controller: self.field_manager.clone(),
            kind: C::kind(&()).into(),
            operation,
            succeeded,
        });
    }

    /// The cache of the owned kind `C`.
    fn owned<C: Resource<DynamicType = ()>>(&self) -> Result<&Arc<RelationCache>, ChildError> {
        let kind = KindName::of::<C>();
        self.caches
            .find(&kind, Role::Owned)
            .ok_or(ChildError::Undeclared { kind: kind.kind })
    }

    /// The cached child of kind `C` named `name` whose controller is the pass's object: in the
    /// object's namespace, or for a cluster-scoped object wherever it is.
    fn own_child(&self, cache: &RelationCache, name: &str) -> Option<Cached> {
        cache
            .children_of(&self.owner.uid)
            .into_iter()
            .find(|child| {
                child.metadata.name.as_deref() == Some(name)
                    && (self.namespace.is_none() || child.metadata.namespace == self.namespace)
            })
    }

    /// Where the child `name` is: the object's namespace, or for a cluster-scoped object the
    /// namespace its cached child is in (`None`: cluster-scoped, or not cached).
    fn child_namespace(&self, cache: &RelationCache, name: &str) -> Option<String> {
        self.namespace.clone().or_else(|| {
            self.own_child(cache, name)
                .and_then(|child| child.metadata.namespace.clone())
        })
    }

    /// Applies `child`; see the [module](self).
    pub(crate) async fn apply<C>(&self, child: &C) -> Result<C, ChildError>
    where
        C: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Clone + Debug,
    {
        let cache = self.owned::<C>()?;
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
        if let Some(live) = cache.get(meta.namespace.as_deref(), &name) {
            self.refuse_another_owner(&live.metadata)?;
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
        let kind = KindName::of::<C>();
        let _writing: Vec<_> = self
            .caches
            .of_kind(&kind)
            .map(|(_, cache)| cache.writing(namespace.as_deref(), &name))
            .collect();
        let stored = self
            .send::<C>(request.patch(&name, &params, &Patch::Apply(&child))?)
            .await;
        self.record::<C>(ChildOperation::Apply, stored.is_ok());
        let stored = stored?;
        // Every cache of the kind learns of the write: a kind both owned and watched starts no
        // pass of the map function's for the controller's own write either.
        for (role, cache) in self.caches.of_kind(&kind) {
            match role {
                Role::Owned if cache.holds_bodies() => cache.wrote(Seen::Whole(whole(&stored)?)),
                Role::Owned => cache.wrote(stored.meta().clone().into()),
                Role::Watched => cache.expect(stored.meta()),
            }
        }
        Ok(stored)
    }

    /// Fails with [`ChildError::AlreadyOwned`] when `live`'s controller is another object.
    fn refuse_another_owner(&self, live: &ObjectMeta) -> Result<(), ChildError> {
        match controller_of(live) {
            Some(owner) if owner.uid != self.owner.uid => Err(ChildError::AlreadyOwned {
                namespace: live.namespace.clone().unwrap_or_default(),
                name: live.name.clone().unwrap_or_default(),
                owner_kind: owner.kind.clone(),
                owner_name: owner.name.clone(),
            }),
            _ => Ok(()),
        }
    }

    /// The child of kind `C` named `name` (see [`child_namespace`](Self::child_namespace)), if
    /// there is one: from the relation's cache for a kind owned whole, else read from the API
    /// server.
    pub(crate) async fn get<C>(&self, name: &str) -> Result<Option<C>, ChildError>
    where
        C: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        let cache = self.owned::<C>()?;
        let namespace = self.child_namespace(cache, name);
        if cache.holds_bodies() {
            return cache
                .get(namespace.as_deref(), name)
                .map(|child| parse::<C>(&child))
                .transpose();
        }
        let request = kube::core::Request::new(C::url_path(&(), namespace.as_deref()));
        match self
            .send::<C>(request.get(name, &kube::api::GetParams::default())?)
            .await
        {
            Ok(child) => Ok(Some(child)),
            Err(ChildError::Api(kube::Error::Api(status))) if status.code == 404 => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The cached metadata of the object's children of kind `C`.
    pub(crate) fn children<C>(&self) -> Result<Vec<PartialObjectMeta<C>>, ChildError>
    where
        C: Resource<DynamicType = ()>,
    {
        let cache = self.owned::<C>()?;
        Ok(cache
            .children_of(&self.owner.uid)
            .into_iter()
            .map(|child| PartialObjectMeta {
                types: Some(type_meta::<C>()),
                metadata: child.metadata.clone(),
                _phantom: std::marker::PhantomData,
            })
            .collect())
    }

    /// Deletes the object's child of kind `C` named `name`; whether it was there. An object of
    /// that name that is not the object's child is refused ([`ChildError::NotAChild`]).
    pub(crate) async fn delete<C>(&self, name: &str) -> Result<bool, ChildError>
    where
        C: Resource<DynamicType = ()> + DeserializeOwned + Clone + Debug,
    {
        let cache = self.owned::<C>()?;
        let namespace = self.child_namespace(cache, name);
        let live = match cache.get(namespace.as_deref(), name) {
            Some(live) => live.metadata.clone(),
            // Not seen by the watch (yet): as the API server has it.
            None => match self.get::<C>(name).await? {
                Some(live) => live.meta().clone(),
                None => return Ok(false),
            },
        };
        let controller = controller_of(&live);
        if controller.is_none_or(|c| c.uid != self.owner.uid) {
            return Err(ChildError::NotAChild {
                kind: C::kind(&()).into_owned(),
                namespace: namespace.unwrap_or_default(),
                name: name.to_owned(),
                controller: controller.map_or_else(
                    || "it has no controller".to_owned(),
                    |c| format!("its controller is {} {}", c.kind, c.name),
                ),
            });
        }
        self.delete_exactly::<C>(&live, ChildOperation::Delete)
            .await
    }

    /// Deletes the child `live` (by its uid, so that a child recreated meanwhile is left alone);
    /// whether it was still there.
    async fn delete_exactly<C>(
        &self,
        live: &ObjectMeta,
        operation: ChildOperation,
    ) -> Result<bool, ChildError>
    where
        C: Resource<DynamicType = ()>,
    {
        let (Some(name), Some(uid)) = (live.name.as_deref(), live.uid.as_deref()) else {
            return Ok(false);
        };
        let namespace = live.namespace.as_deref();
        let request = kube::core::Request::new(C::url_path(&(), namespace));
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(uid.to_owned()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        let kind = KindName::of::<C>();
        let _writing: Vec<_> = self
            .caches
            .of_kind(&kind)
            .map(|(_, cache)| cache.writing(namespace, name))
            .collect();
        // The deleted object, or a Status naming it (some kinds answer that way).
        let answer = self
            .send::<serde_json::Value>(request.delete(name, &params)?)
            .await;
        match answer {
            Ok(_) => {
                self.record::<C>(operation, true);
                for (_, cache) in self.caches.of_kind(&kind) {
                    cache.deleted(namespace, name, uid);
                }
                Ok(true)
            }
            // Gone already, or replaced by a new child of that name: not this one to delete.
            Err(ChildError::Api(kube::Error::Api(status)))
                if status.code == 404 || status.code == 409 =>
            {
                self.record::<C>(operation, true);
                Ok(false)
            }
            Err(error) => {
                self.record::<C>(operation, false);
                Err(error)
            }
        }
    }

    /// Deletes the children of kind `C` this controller applied for the object (they carry
    /// [`CONTROLLER_LABEL`] with its value and the object's controller ownerReference) whose names
    /// are not in `wanted`, as the relation's cache holds them; how many it deleted.
    pub(crate) async fn prune<C>(&self, wanted: &[&str]) -> Result<usize, ChildError>
    where
        C: Resource<DynamicType = ()>,
    {
        let cache = self.owned::<C>()?;
        let unwanted: Vec<Cached> = cache
            .children_of(&self.owner.uid)
            .into_iter()
            .filter(|child| {
                let meta = &child.metadata;
                let labelled = meta
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(CONTROLLER_LABEL))
                    .map(String::as_str)
                    == Some(&*self.label_value);
                labelled && !wanted.contains(&meta.name.as_deref().unwrap_or_default())
            })
            .collect();
        let mut deleted = 0;
        for child in unwanted {
            if self
                .delete_exactly::<C>(&child.metadata, ChildOperation::Prune)
                .await?
            {
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    /// The related object of kind `O` named `name` in `namespace` (or the cluster-scoped one),
    /// as the relation's cache holds it.
    pub(crate) fn related<O>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<O>, ChildError>
    where
        O: Resource<DynamicType = ()> + DeserializeOwned,
    {
        let kind = KindName::of::<O>();
        let cache = self
            .caches
            .find(&kind, Role::Watched)
            .ok_or(ChildError::NotWatched {
                kind: kind.kind.clone(),
            })?;
        cache
            .get(namespace, name)
            .map(|object| parse::<O>(&object))
            .transpose()
    }
}

/// The cached object `object` as its kind `K`.
fn parse<K>(object: &Cached) -> Result<K, ChildError>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    DynamicObject::clone(object)
        .try_parse::<K>()
        .map_err(|source| ChildError::Undecodable {
            kind: K::kind(&()).into_owned(),
            name: object.metadata.name.clone().unwrap_or_default(),
            source,
        })
}

/// The child `stored` (a write's answer) as a cache of whole objects keeps it: without
/// managedFields.
fn whole<C: Serialize>(stored: &C) -> Result<Arc<DynamicObject>, ChildError> {
    let mut object: DynamicObject = serde_json::to_value(stored)
        .and_then(serde_json::from_value)
        .map_err(kube::Error::SerdeError)?;
    object.metadata.managed_fields = None;
    Ok(Arc::new(object))
}

/// The apiVersion and kind of `C`.
fn type_meta<C: Resource<DynamicType = ()>>() -> TypeMeta {
    TypeMeta {
        api_version: C::api_version(&()).into_owned(),
        kind: C::kind(&()).into_owned(),
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
        // Pinned: the FNV-1a hash of the name is the same in every build, so children labelled
        // by an older build are still found by prune's selector.
        assert_eq!(value, format!("{}-02e18442", "a".repeat(54)));
        assert_ne!(
            value,
            controller_label_value(&format!("{}/y", "a".repeat(80)))
        );
    }
}
