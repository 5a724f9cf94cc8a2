//! The kinds a controller watches beside its resource, declared once: the children it **owns**
//! (`#[reconciler(owns(ConfigMap))]`) and the related objects it **watches** with a map function
//! (`watches(Secret, map = secret_users)`). A hand-written [`Reconciler`](crate::Reconciler)
//! declares the same in [`Reconciler::relations`](crate::Reconciler::relations).
//!
//! From the declaration the controller
//! - watches each owned kind **metadata-only** (no bodies are fetched) into a cache of the
//!   children's metadata (or whole, declared `owns(whole(Deployment))`), found by controller
//!   owner, and runs the pass of an object's
//!   controller owner when a child is created, changed or deleted — the owner named by the
//!   child's ownerReference with `controller: true`, namespaced or cluster-scoped;
//! - watches each related kind into a cache of its objects, and runs the passes its map function
//!   returns;
//! - lets passes read those caches, with no request and no verb beyond the watch's:
//!   [`Pass::children`](crate::Pass::children) (an object's children's metadata),
//!   [`Pass::get_child`](crate::Pass::get_child) of a kind owned whole,
//!   [`Pass::related`](crate::Pass::related) (a related object), and
//!   [`Pass::prune_children`](crate::Pass::prune_children) finds what to delete there;
//! - derives the RBAC rules of both (`rbac::rules`, which reads this declaration): `list` and
//!   `watch` on every kind, and on owned kinds `get`, `create` and `patch` (server-side apply that
//!   creates needs both) and `delete`;
//! - writes children through [`Pass::apply_child`](crate::Pass::apply_child): server-side apply
//!   under the controller's field manager with the controller ownerReference set, so a reconciler
//!   writes the desired child and nothing else;
//! - is ready only once every relation's watch has listed its objects (each namespace watched),
//!   and names the one it waits for when the sync timeout passes.
//!
//! A relist (after a watch expired, an API server restart, or in a new leadership term) starts
//! no pass for an object whose resourceVersion did not move, and one it no longer lists counts
//! as deleted: its owner's pass (or the map function's) runs, so a child deleted while the watch
//! was down is restored. A child's change written by the controller itself (`apply_child`,
//! `delete_child`, `prune_children`) starts no pass: a deleted child starts exactly one owner
//! pass, which restores it. A pass held after a terminal failure runs again when a relation
//! names its object: what it depends on changed.
//!
//! ```
//! use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//! use kube::runtime::reflector::{ObjectRef, Store};
//! use kubeward::relations::Relations;
//!
//! /// The ConfigMaps (the reconciled resource here) that name `secret` in their `secret` key.
//! fn users(secret: &Secret, configs: &Store<ConfigMap>) -> Vec<ObjectRef<ConfigMap>> {
//!     let name = secret.metadata.name.as_deref();
//!     configs
//!         .state()
//!         .iter()
//!         .filter(|c| c.data.as_ref().and_then(|d| d.get("secret")).map(String::as_str) == name)
//!         .map(|c| ObjectRef::from_obj(&**c))
//!         .collect()
//! }
//!
//! let relations = Relations::<ConfigMap>::new()
//!     .owns::<k8s_openapi::api::core::v1::Pod>()
//!     .watches::<Secret, _>(users);
//! let kinds: Vec<_> = relations.kinds().map(|k| k.plural.as_str()).collect();
//! assert_eq!(kinds, ["pods", "secrets"]);
//! ```

mod cache;
mod trigger;

use std::fmt::Debug;
use std::sync::Arc;

use futures::stream::BoxStream;
use kube::Resource;
use kube::core::{ApiResource, DynamicObject};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use serde::de::DeserializeOwned;

pub(crate) use self::cache::{Cached, RelationCache, Scope, Seen, controller_of};
use crate::shared_watch::{ErrorSink, SharedWatches, WatchKey};
use crate::trigger::Trigger;

/// The label every child written through [`Pass::apply_child`](crate::Pass::apply_child)
/// carries; its value is the controller's name as a label value
/// ([`controller_label_value`](crate::children::controller_label_value)). An owned kind's watch
/// selects by it.
pub const CONTROLLER_LABEL: &str = "kubeward.dev/controller";

/// How the controller relates to a kind it watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Its objects are the controller's children: it creates, changes and deletes them, and each
    /// names its owner in a controller ownerReference.
    Owned,
    /// Its objects are read, not written: a map function names the objects they concern.
    Watched,
}

/// A kind, as RBAC rules and ownerReferences name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindName {
    /// The API group (`""` for the core group).
    pub group: String,
    /// The version watched.
    pub version: String,
    /// The kind (`ConfigMap`).
    pub kind: String,
    /// The resource (`configmaps`).
    pub plural: String,
}

impl KindName {
    /// The kind of `K`.
    pub fn of<K: Resource<DynamicType = ()>>() -> Self {
        Self {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
        }
    }
}

/// The triggers of one relation: the objects of `K` to reconcile for each batch of the relation's
/// watch events, each with why, or the watch's failures (retried with backoff by the watcher).
pub(crate) type Triggers<K> =
    BoxStream<'static, Result<Vec<(ObjectRef<K>, Trigger)>, watcher::Error>>;

/// What a relation's trigger stream is built from, once per watch term.
pub(crate) struct TriggerInputs<K: Resource<DynamicType = ()> + Clone + 'static> {
    pub(crate) client: kube::Client,
    /// The cache of the controller's own objects, to find the owner of a child and for map
    /// functions.
    pub(crate) store: Store<K>,
    /// The namespaces the controller watches (one watch each), or none for the whole cluster.
    pub(crate) namespaces: Vec<String>,
    /// The watches shared with the other controllers of an operator, and where a shared
    /// watch's failures go.
    pub(crate) shared: Option<(SharedWatches, ErrorSink)>,
}

type MakeTriggers<K> =
    Arc<dyn Fn(TriggerInputs<K>, watcher::Config, Arc<RelationCache>) -> Triggers<K> + Send + Sync>;

/// One kind watched beside the controller's resource `K`.
pub struct Relation<K: Resource<DynamicType = ()> + Clone + 'static> {
    role: Role,
    kind: KindName,
    /// The watch of the related kind (of the whole cluster), as declared.
    watch: WatchKey,
    /// Whether the watch is narrowed to the objects that carry the controller's
    /// [`CONTROLLER_LABEL`] (an owned kind's default).
    labelled: bool,
    cache: Arc<RelationCache>,
    triggers: MakeTriggers<K>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Relation<K> {
    /// Whether the kind is owned or watched.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The kind.
    pub fn kind(&self) -> &KindName {
        &self.kind
    }

    /// The verbs the controller needs on the kind: `list` and `watch`; for owned kinds also
    /// `get` ([`Pass::get_child`](crate::Pass::get_child)), `create` and `patch`
    /// ([`Pass::apply_child`](crate::Pass::apply_child) is a server-side apply, and one that
    /// creates is authorised for both) and `delete` ([`Pass::delete_child`](crate::Pass::delete_child)).
    pub fn verbs(&self) -> &'static [&'static str] {
        match self.role {
            Role::Owned => &["get", "list", "watch", "create", "patch", "delete"],
            Role::Watched => &["list", "watch"],
        }
    }

    /// How the relation's watch lists and watches for the controller whose
    /// [label value](crate::children::controller_label_value) is `label`.
    pub(crate) fn watch_config(&self, label: &str) -> watcher::Config {
        let config = self.watch.config().clone();
        if self.labelled {
            config.labels(&format!("{CONTROLLER_LABEL}={label}"))
        } else {
            config
        }
    }

    /// The relation's trigger stream for the controller whose label value is `label`.
    pub(crate) fn triggers(&self, inputs: TriggerInputs<K>, label: &str) -> Triggers<K> {
        (self.triggers)(inputs, self.watch_config(label), self.cache.clone())
    }

    /// What the relation's watch last saw, and the controller wrote.
    pub(crate) fn cache(&self) -> &Arc<RelationCache> {
        &self.cache
    }

    /// The watch of the related kind in `namespace` (`None`: the whole cluster) for the
    /// controller whose label value is `label`, to share.
    #[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
    pub(crate) fn watch_key(&self, namespace: Option<&str>, label: &str) -> WatchKey {
        self.watch
            .clone()
            .with_config(self.watch_config(label))
            .in_namespace(namespace)
    }
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Debug for Relation<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relation")
            .field("role", &self.role)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// The kinds a controller of `K` watches beside `K` itself; see the [module](self).
pub struct Relations<K: Resource<DynamicType = ()> + Clone + 'static> {
    relations: Vec<Relation<K>>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Default for Relations<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Debug for Relations<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.relations).finish()
    }
}

impl<K> Relations<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    /// Owns children of kind `C`: watched metadata-only where the controller watches (the
    /// cluster, or its [namespace](crate::controller::Controller::in_namespace)), narrowed to
    /// the objects that carry the controller's [`CONTROLLER_LABEL`] (every child
    /// [`Pass::apply_child`](crate::Pass::apply_child) writes does), into a cache of their
    /// metadata; a child's create, change or delete — or its label taken away — runs its
    /// controller owner's pass. Other objects of the kind are neither listed nor cached.
    /// [`Pass::get_child`](crate::Pass::get_child) reads a child's body from the API server:
    /// [`owns_whole`](Self::owns_whole) caches the bodies instead.
    #[must_use]
    pub fn owns<C>(self) -> Self
    where
        C: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.owned::<C, trigger::Metadata>(
            watcher::Config::default(),
            true,
            RelationCache::default(),
        )
    }

    /// [`owns`](Self::owns) with the children's watch configured by `config` alone, not
    /// narrowed to the controller's label (`watcher::Config::default()` watches every object
    /// of the kind, as controller-runtime's `Owns` does: a child someone else creates with the
    /// object as its controller but without the label then runs its pass too).
    #[must_use]
    pub fn owns_with<C>(self, config: watcher::Config) -> Self
    where
        C: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.owned::<C, trigger::Metadata>(config, false, RelationCache::default())
    }

    /// [`owns`](Self::owns), the children watched and cached whole (managedFields dropped):
    /// [`Pass::get_child`](crate::Pass::get_child) reads them from the cache, with no request,
    /// for the memory of their bodies (`#[reconciler(owns(whole(Deployment)))]`).
    #[must_use]
    pub fn owns_whole<C>(self) -> Self
    where
        C: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.owned::<C, DynamicObject>(watcher::Config::default(), true, RelationCache::whole())
    }

    /// [`owns_whole`](Self::owns_whole) with the children's watch configured by `config` alone
    /// (see [`owns_with`](Self::owns_with)).
    #[must_use]
    pub fn owns_whole_with<C>(self, config: watcher::Config) -> Self
    where
        C: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.owned::<C, DynamicObject>(config, false, RelationCache::whole())
    }

    /// Owns children of kind `C`, watched as `D` (their metadata, or whole) with `config`
    /// (`labelled`: narrowed to the controller's label) into `cache`.
    fn owned<C, D>(self, config: watcher::Config, labelled: bool, cache: RelationCache) -> Self
    where
        C: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        D: trigger::Served,
        Arc<D>: Into<Seen>,
    {
        self.with(
            Role::Owned,
            KindName::of::<C>(),
            WatchKey::new::<D>(&ApiResource::erase::<C>(&()), None, &config),
            cache,
            Arc::new(trigger::owners::<K, C, D>),
        )
        .labelled(labelled)
    }

    /// Watches objects of kind `O` (in full) where the controller watches; each
    /// one's create, change or delete runs the passes of the objects `map` returns for it. `map`
    /// gets the controller's cache of its own objects to look them up (`store.state()`,
    /// `store.find(..)`); it must not block.
    #[must_use]
    pub fn watches<O, I>(self, map: fn(&O, &Store<K>) -> I) -> Self
    where
        O: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        I: IntoIterator<Item = ObjectRef<K>> + 'static,
    {
        self.watches_with::<O, I>(watcher::Config::default(), map)
    }

    /// [`watches`](Self::watches) with the watch configured by `config` (a label or field
    /// selector).
    #[must_use]
    pub fn watches_with<O, I>(self, config: watcher::Config, map: fn(&O, &Store<K>) -> I) -> Self
    where
        O: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        I: IntoIterator<Item = ObjectRef<K>> + 'static,
    {
        self.with(
            Role::Watched,
            KindName::of::<O>(),
            WatchKey::new::<DynamicObject>(&ApiResource::erase::<O>(&()), None, &config),
            RelationCache::whole(),
            Arc::new(move |inputs, config, cache| {
                trigger::mapped::<K, O, I>(inputs, config, cache, map)
            }),
        )
    }

    fn with(
        mut self,
        role: Role,
        kind: KindName,
        watch: WatchKey,
        cache: RelationCache,
        triggers: MakeTriggers<K>,
    ) -> Self {
        self.relations.push(Relation {
            role,
            kind,
            watch,
            labelled: false,
            cache: Arc::new(cache),
            triggers,
        });
        self
    }
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Relations<K> {
    /// None: the controller watches only its own resource.
    pub fn new() -> Self {
        Self {
            relations: Vec::new(),
        }
    }

    /// Each relation, in the order declared.
    pub fn iter(&self) -> impl Iterator<Item = &Relation<K>> {
        self.relations.iter()
    }

    /// The kinds watched, in the order declared.
    pub fn kinds(&self) -> impl Iterator<Item = &KindName> {
        self.relations.iter().map(|r| &r.kind)
    }

    /// Whether no kind is watched beside the resource.
    pub fn is_empty(&self) -> bool {
        self.relations.is_empty()
    }

    /// The relation declared last, its watch narrowed to the controller's label or not.
    fn labelled(mut self, labelled: bool) -> Self {
        if let Some(last) = self.relations.last_mut() {
            last.labelled = labelled;
        }
        self
    }
}

/// The caches of a controller's relations, by kind and role: what its passes read children and
/// related objects from, and record their child writes in.
#[derive(Debug, Default)]
pub(crate) struct RelationCaches {
    kinds: Vec<(KindName, Role, Arc<RelationCache>)>,
}

impl RelationCaches {
    /// The caches of `relations`.
    pub(crate) fn of<K: Resource<DynamicType = ()> + Clone + 'static>(
        relations: &Relations<K>,
    ) -> Self {
        let kinds = relations
            .iter()
            .map(|r| (r.kind.clone(), r.role, r.cache.clone()))
            .collect();
        Self { kinds }
    }

    /// The caches of every relation to `kind` (any version): owned, watched, or both.
    pub(crate) fn of_kind<'a>(
        &'a self,
        kind: &'a KindName,
    ) -> impl Iterator<Item = (Role, &'a Arc<RelationCache>)> + 'a {
        self.kinds
            .iter()
            .filter(|(k, _, _)| k.group == kind.group && k.kind == kind.kind)
            .map(|(_, role, cache)| (*role, cache))
    }

    /// The cache of the relation to `kind` (any version) in `role`, if declared.
    pub(crate) fn find(&self, kind: &KindName, role: Role) -> Option<&Arc<RelationCache>> {
        self.kinds
            .iter()
            .find(|(k, r, _)| *r == role && k.group == kind.group && k.kind == kind.kind)
            .map(|(_, _, cache)| cache)
    }
}
