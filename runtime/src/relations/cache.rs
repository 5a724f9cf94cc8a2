//! [`RelationCache`]: what one relation's watch last saw of each object — the object itself
//! (its metadata for an owned kind, its whole body for a watched one), found by uid, by name and
//! by controller owner — and what the controller itself wrote of its children. Passes read
//! children and related objects from it, and its relists are diffed against it.
//!
//! controller-runtime's counterparts: the informer cache a reconciler reads from, with the owner
//! index an `Owns` source keeps (`pkg/cache`, `pkg/handler/enqueue_owner.go`), and client-go's
//! `DeltaFIFO.Replace` (`tools/cache/delta_fifo.go`), which turns an object a relist no longer
//! lists into a delete (`DeletedFinalStateUnknown`).
//!
//! kube-runtime's reflector [`Store`](kube::runtime::reflector::Store) is not used: it keeps no
//! index but the name, cannot say which objects a relist dropped (it swaps its whole map at
//! `InitDone`), knows nothing of the controller's own writes, and keeps an owned child as a whole
//! `ObjectMeta` (about 1.4 KiB a child, against about 0.4 KiB here: see [`Entry`]).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hashbrown::HashTable;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use kube::core::{DynamicObject, PartialObjectMeta};
use kube::runtime::watcher::Event;
use tokio::sync::{Notify, watch};

/// A cached object as the cache hands it out: a watched object whole, an owned child's
/// metadata (its `data` null, its `types` unset, without `managedFields`).
pub(crate) type Cached = Arc<DynamicObject>;

/// What one relation's watch last saw of each object, and what the controller wrote of its
/// children. An event is *news* — it starts passes — only when it shows something the cache
/// does not already hold:
/// - a relist (after a watch expired, or in a new watch term) re-delivers every object; one
///   whose resourceVersion did not move is not news, and one the relist no longer lists is a
///   delete, news with its last cached state (its owner, or what the map function makes of it);
/// - a child the controller wrote ([`wrote`](Self::wrote): as its server-side apply answered)
///   or deleted ([`deleted`](Self::deleted)) is not news when its watch event arrives — the
///   pass that wrote it already knows. A change by anyone else has another resourceVersion.
///
/// The watch event of a write can arrive before the write's answer: an event of an object the
/// controller is writing ([`writing`](Self::writing)) is parked until the write is answered
/// (every child write is bounded by the controller's write timeout), then judged, its news
/// handed out by [`released`](Self::released). The events of other objects go on meanwhile: a
/// write in flight holds up only the events of its own object.
///
/// A relist of one namespace (a controller watching
/// [several](crate::controller::Controller::in_namespaces) runs one watch per namespace) diffs
/// only the objects of that namespace. The cache outlives watch terms: a child deleted while no
/// term watched is news at the next term's first list.
#[derive(Debug)]
pub(crate) struct RelationCache {
    inner: Mutex<Inner>,
    /// Signalled when news of parked events is [released](Self::released).
    released: Notify,
    /// Bumped whenever a scope's list completes, for [`wait_listed`](Self::wait_listed).
    listed: watch::Sender<u64>,
    /// Whether it keeps its objects whole (a watched kind, or one owned whole), not only their
    /// metadata.
    whole: bool,
}

/// A cache of metadata (an owned kind's).
impl Default for RelationCache {
    fn default() -> Self {
        Self {
            inner: Mutex::default(),
            released: Notify::new(),
            listed: watch::Sender::new(0),
            whole: false,
        }
    }
}

/// A scope a relation's watch lists: a namespace, or `None` for the whole cluster.
pub(crate) type Scope = Option<String>;

/// An object's uid as the cache keys it: a UUID (what API servers assign) in its 16 bytes,
/// anything else as its text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Uid {
    Uuid([u8; 16]),
    Text(Box<str>),
}

impl Uid {
    fn of(uid: &str) -> Self {
        let mut text = uuid::Uuid::encode_buffer();
        match uuid::Uuid::try_parse(uid) {
            // Only the canonical form: the text is given back exactly as it came.
            Ok(parsed) if parsed.hyphenated().encode_lower(&mut text) == uid => {
                Self::Uuid(parsed.into_bytes())
            }
            _ => Self::Text(uid.into()),
        }
    }

    fn text(&self) -> String {
        match self {
            Self::Uuid(bytes) => uuid::Uuid::from_bytes(*bytes).hyphenated().to_string(),
            Self::Text(text) => text.to_string(),
        }
    }
}

/// An object as a watch event (or a write's answer) shows it, before it is cached.
#[derive(Debug)]
pub(crate) enum Seen {
    /// An owned kind's object: its metadata.
    Meta(Box<ObjectMeta>),
    /// A watched kind's object, whole (the shared watch's `Arc`, not a copy).
    Whole(Arc<DynamicObject>),
}

impl Seen {
    fn meta(&self) -> &ObjectMeta {
        match self {
            Self::Meta(meta) => meta,
            Self::Whole(object) => &object.metadata,
        }
    }
}

/// An owned child's metadata, as a (shared) watch event carries it.
impl From<Arc<PartialObjectMeta<DynamicObject>>> for Seen {
    fn from(object: Arc<PartialObjectMeta<DynamicObject>>) -> Self {
        Self::Meta(Box::new(Arc::unwrap_or_clone(object).metadata))
    }
}

/// A watched object, as a (shared) watch event carries it.
impl From<Arc<DynamicObject>> for Seen {
    fn from(object: Arc<DynamicObject>) -> Self {
        Self::Whole(object)
    }
}

impl From<ObjectMeta> for Seen {
    fn from(meta: ObjectMeta) -> Self {
        Self::Meta(Box::new(meta))
    }
}

/// One cached object, indexed three ways (by uid, by namespace and name, under its controller
/// owner): what every read and every judgement of an event needs is in its own fields; an owned
/// object's other metadata waits as JSON until a pass reads it. A child of one owner among
/// three (a name, a resourceVersion, two labels) costs about 0.4 KiB with its share of the
/// indexes and of its owner's interned reference, where an `ObjectMeta` costs over 1 KiB (a
/// `BTreeMap` of labels alone allocates a node of 0.5 KiB).
#[derive(Debug)]
pub(crate) struct Entry {
    uid: Uid,
    /// Interned: the cache's objects share their namespaces' names.
    namespace: Option<Arc<str>>,
    name: Box<str>,
    resource_version: Option<Box<str>>,
    /// Held apart from the JSON (where it takes 40 bytes).
    creation_timestamp: Option<Time>,
    /// The controller ownerReference, shared with the other children of its owner when it is
    /// the same reference.
    controller: Option<Arc<OwnerReference>>,
    body: Body,
    /// Deleted by the controller itself: its delete event is expected, and it is no longer
    /// read.
    deleted_by_controller: bool,
}

/// The rest of a cached object.
#[derive(Debug, Clone)]
enum Body {
    /// A watched object, whole.
    Whole(Arc<DynamicObject>),
    /// An owned object's metadata other than the [`Entry`]'s fields, as JSON (`managedFields`
    /// dropped; interned: siblings with the same labels and annotations share one), and where
    /// its controller ownerReference was among its ownerReferences.
    Meta { rest: Arc<str>, controller_at: u32 },
}

impl Entry {
    fn is_live(&self) -> bool {
        !self.deleted_by_controller
    }

    /// The object as readers get it.
    fn cached(&self) -> Cached {
        match &self.body {
            Body::Whole(object) => object.clone(),
            Body::Meta { .. } => Arc::new(DynamicObject {
                types: None,
                metadata: self.metadata(),
                data: serde_json::Value::Null,
            }),
        }
    }

    /// The object's metadata (without `managedFields` for an owned object).
    fn metadata(&self) -> ObjectMeta {
        let (rest, controller_at) = match &self.body {
            Body::Whole(object) => return object.metadata.clone(),
            Body::Meta {
                rest,
                controller_at,
            } => (rest, *controller_at),
        };
        let mut meta: ObjectMeta =
            serde_json::from_str(rest).expect("the cache's own JSON of an ObjectMeta reads back");
        meta.name = Some(self.name.to_string());
        meta.namespace = self.namespace.as_deref().map(str::to_owned);
        meta.uid = Some(self.uid.text());
        meta.resource_version = self.resource_version.as_deref().map(str::to_owned);
        meta.creation_timestamp.clone_from(&self.creation_timestamp);
        if let Some(controller) = &self.controller {
            let references = meta.owner_references.get_or_insert_with(Vec::new);
            let at = (controller_at as usize).min(references.len());
            references.insert(at, OwnerReference::clone(controller));
        }
        meta
    }

    /// This entry, deleted by the controller.
    fn tombstone(&self) -> Self {
        Self {
            uid: self.uid.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            resource_version: self.resource_version.clone(),
            creation_timestamp: self.creation_timestamp.clone(),
            controller: self.controller.clone(),
            body: self.body.clone(),
            deleted_by_controller: true,
        }
    }
}

/// An owner of cached objects: its controller reference as they name it (interned) and its
/// children.
#[derive(Debug)]
struct Owner {
    reference: Arc<OwnerReference>,
    children: Vec<Arc<Entry>>,
}

#[derive(Debug, Default)]
struct Inner {
    hasher: RandomState,
    /// Every cached object, by uid.
    by_uid: HashTable<Arc<Entry>>,
    /// The object of each namespace and name (the latest seen, when a recreated object's
    /// predecessor is still cached).
    by_name: HashTable<Arc<Entry>>,
    /// The objects whose controller ownerReference names each owner uid.
    owners: HashMap<Uid, Owner>,
    /// The namespaces of the cached objects, interned.
    namespaces: HashSet<Arc<str>>,
    /// The metadata remainders ([`Body::Meta`]) of the cached objects, interned; one is
    /// forgotten with the last entry that holds it.
    rests: HashSet<Arc<str>>,
    /// The uids listed so far by each relist under way, by the scope listed.
    listing: HashMap<Scope, HashSet<Uid>>,
    /// The scopes whose list completed in the current watch term.
    listed: HashSet<Scope>,
    /// The objects (by `namespace/name`) the controller is writing, with how many writes.
    writing: HashMap<String, usize>,
    /// The watch events of objects under write (by `namespace/name`), in order, with the scope
    /// of their watch: judged once the last write of the object is answered.
    parked: HashMap<String, Vec<(Scope, Event<Seen>)>>,
    /// What parked events showed changed, not yet handed out.
    released: Vec<Cached>,
    /// The resourceVersion of the controller's last write of each object (by uid) that this
    /// cache keeps whole and so cannot take from the write's metadata (a kind both owned and
    /// watched): its watch event is not news.
    expected: HashMap<Uid, String>,
}

/// A write of the controller's under way; dropping it says it was answered.
pub(crate) struct Writing {
    cache: Arc<RelationCache>,
    key: String,
}

impl Drop for Writing {
    /// The write was answered (or given up): once no other write of the object is under way,
    /// the events parked behind it are judged, in order.
    fn drop(&mut self) {
        let mut inner = self.cache.inner();
        let Some(count) = inner.writing.get_mut(&self.key) else {
            return;
        };
        *count -= 1;
        if *count > 0 {
            return;
        }
        inner.writing.remove(&self.key);
        let mut news = Vec::new();
        let mut listed = false;
        for (scope, event) in inner.parked.remove(&self.key).unwrap_or_default() {
            let judged = inner.judge(event, scope);
            news.extend(judged.news);
            listed |= judged.listed;
        }
        let released = !news.is_empty();
        inner.released.extend(news);
        drop(inner);
        if listed {
            self.cache.listed.send_modify(|listed| *listed += 1);
        }
        if released {
            self.cache.released.notify_one();
        }
    }
}

/// What one event showed: its news, and whether it ended a scope's list.
struct Judged {
    news: Vec<Cached>,
    listed: bool,
}

impl From<Vec<Cached>> for Judged {
    fn from(news: Vec<Cached>) -> Self {
        Self {
            news,
            listed: false,
        }
    }
}

/// `event`, its object [`Seen`].
fn seen<D: Into<Seen>>(event: Event<D>) -> Event<Seen> {
    match event {
        Event::Apply(object) => Event::Apply(object.into()),
        Event::InitApply(object) => Event::InitApply(object.into()),
        Event::Delete(object) => Event::Delete(object.into()),
        Event::Init => Event::Init,
        Event::InitDone => Event::InitDone,
    }
}

/// The key of the object `name` in `namespace`.
fn name_key(namespace: Option<&str>, name: &str) -> String {
    format!("{}/{name}", namespace.unwrap_or_default())
}

/// The controller ownerReference of the object of `meta` (`controller: true`), if any.
pub(crate) fn controller_of(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true))
}

impl Inner {
    fn hash_uid(&self, uid: &Uid) -> u64 {
        self.hasher.hash_one(uid)
    }

    fn hash_name(&self, namespace: Option<&str>, name: &str) -> u64 {
        self.hasher.hash_one((namespace, name))
    }

    /// The namespace `namespace`, interned.
    fn namespace(&mut self, namespace: Option<&str>) -> Option<Arc<str>> {
        let namespace = namespace?;
        if let Some(interned) = self.namespaces.get(namespace) {
            return Some(interned.clone());
        }
        let interned: Arc<str> = namespace.into();
        self.namespaces.insert(interned.clone());
        Some(interned)
    }

    /// The metadata remainder `rest`, interned.
    fn rest(&mut self, rest: &str) -> Arc<str> {
        if let Some(interned) = self.rests.get(rest) {
            return interned.clone();
        }
        let interned: Arc<str> = rest.into();
        self.rests.insert(interned.clone());
        interned
    }

    /// Forgets the interned remainder of `entry`, just removed, when no other entry holds it
    /// (only the interning set and `entry` do). Sharing saves memory, nothing depends on it: a
    /// remainder held by a tombstone made of `entry` is interned again when seen again.
    fn release(&mut self, entry: &Entry) {
        if let Body::Meta { rest, .. } = &entry.body
            && Arc::strong_count(rest) == 2
            && self
                .rests
                .get(rest)
                .is_some_and(|interned| Arc::ptr_eq(interned, rest))
        {
            self.rests.remove(rest);
        }
    }

    /// The entry of `seen`: its controller reference the one its owner's other children share
    /// when it is the same.
    fn entry(&mut self, seen: Seen, deleted_by_controller: bool) -> Entry {
        let meta = seen.meta();
        let uid = Uid::of(meta.uid.as_deref().unwrap_or_default());
        let namespace = self.namespace(meta.namespace.as_deref());
        let name = meta.name.as_deref().unwrap_or_default().into();
        let resource_version = meta.resource_version.as_deref().map(Box::from);
        let creation_timestamp = meta.creation_timestamp.clone();
        let controller =
            controller_of(meta).map(
                |reference| match self.owners.get(&Uid::of(&reference.uid)) {
                    Some(owner) if *owner.reference == *reference => owner.reference.clone(),
                    _ => Arc::new(reference.clone()),
                },
            );
        let body = match seen {
            Seen::Whole(object) => Body::Whole(object),
            Seen::Meta(mut meta) => {
                let references = meta.owner_references.as_mut();
                let controller_at = references
                    .and_then(|references| {
                        let at = references.iter().position(|r| r.controller == Some(true))?;
                        references.remove(at);
                        Some(at)
                    })
                    .unwrap_or_default();
                if meta.owner_references.as_ref().is_some_and(Vec::is_empty) {
                    meta.owner_references = None;
                }
                meta.name = None;
                meta.namespace = None;
                meta.uid = None;
                meta.resource_version = None;
                meta.creation_timestamp = None;
                meta.managed_fields = None;
                let rest = serde_json::to_string(&meta).expect("an ObjectMeta serializes");
                Body::Meta {
                    rest: self.rest(&rest),
                    controller_at: u32::try_from(controller_at).unwrap_or(u32::MAX),
                }
            }
        };
        Entry {
            uid,
            namespace,
            name,
            resource_version,
            creation_timestamp,
            controller,
            body,
            deleted_by_controller,
        }
    }

    /// Caches `entry` (replacing what was cached of its uid); the entry cached and the one it
    /// replaced.
    fn insert(&mut self, entry: Entry) -> (Arc<Entry>, Option<Arc<Entry>>) {
        let entry = Arc::new(entry);
        let replaced = self.remove(&entry.uid);
        let hasher = self.hasher.clone();
        let by_name = self.hash_name(entry.namespace.as_deref(), &entry.name);
        match self.by_name.find_entry(by_name, |named| {
            named.namespace == entry.namespace && named.name == entry.name
        }) {
            Ok(mut named) => *named.get_mut() = entry.clone(),
            Err(_) => {
                self.by_name.insert_unique(by_name, entry.clone(), |named| {
                    hasher.hash_one((named.namespace.as_deref(), &*named.name))
                });
            }
        }
        let by_uid = self.hash_uid(&entry.uid);
        self.by_uid
            .insert_unique(by_uid, entry.clone(), |cached| hasher.hash_one(&cached.uid));
        if let Some(reference) = &entry.controller {
            self.owners
                .entry(Uid::of(&reference.uid))
                .or_insert_with(|| Owner {
                    reference: reference.clone(),
                    children: Vec::new(),
                })
                .children
                .push(entry.clone());
        }
        if entry.is_live() {
            for listed in self.listing.values_mut() {
                listed.insert(entry.uid.clone());
            }
        }
        (entry, replaced)
    }

    /// Forgets the object `uid`; what was cached of it.
    fn remove(&mut self, uid: &Uid) -> Option<Arc<Entry>> {
        let entry = self
            .by_uid
            .find_entry(self.hash_uid(uid), |cached| cached.uid == *uid)
            .ok()?
            .remove()
            .0;
        let by_name = self.hash_name(entry.namespace.as_deref(), &entry.name);
        if let Ok(named) = self
            .by_name
            .find_entry(by_name, |named| Arc::ptr_eq(named, &entry))
        {
            named.remove();
        }
        self.release(&entry);
        if let Some(reference) = &entry.controller {
            let owner_uid = Uid::of(&reference.uid);
            if let Some(owner) = self.owners.get_mut(&owner_uid) {
                owner.children.retain(|child| !Arc::ptr_eq(child, &entry));
                if owner.children.is_empty() {
                    self.owners.remove(&owner_uid);
                }
            }
        }
        Some(entry)
    }

    /// The live (not deleted by the controller) object `name` in `namespace`.
    fn named(&self, namespace: Option<&str>, name: &str) -> Option<&Arc<Entry>> {
        self.by_name
            .find(self.hash_name(namespace, name), |named| {
                named.namespace.as_deref() == namespace && &*named.name == name
            })
            .filter(|entry| entry.is_live())
    }

    /// Judges `event` of a watch of `scope` against the cache: see [`RelationCache::observe`].
    fn judge(&mut self, event: Event<Seen>, scope: Scope) -> Judged {
        match event {
            Event::Init => {
                self.listing.insert(scope, HashSet::new());
                Judged::from(Vec::new())
            }
            Event::InitDone => {
                let gone = match self.listing.remove(&scope) {
                    Some(listed) => self.unlisted(scope.as_deref(), &listed),
                    None => Vec::new(),
                };
                self.listed.insert(scope);
                Judged {
                    news: gone,
                    listed: true,
                }
            }
            Event::Apply(object) | Event::InitApply(object) => {
                let entry = self.entry(object, false);
                let own = self
                    .expected
                    .remove(&entry.uid)
                    .is_some_and(|own| Some(&*own) == entry.resource_version.as_deref());
                let (entry, replaced) = self.insert(entry);
                let news = !own
                    && replaced.is_none_or(|replaced| {
                        !replaced.is_live() || replaced.resource_version != entry.resource_version
                    });
                Judged::from(if news {
                    vec![entry.cached()]
                } else {
                    Vec::new()
                })
            }
            Event::Delete(object) => {
                let uid = Uid::of(object.meta().uid.as_deref().unwrap_or_default());
                self.expected.remove(&uid);
                Judged::from(match self.remove(&uid) {
                    Some(cached) if !cached.is_live() => Vec::new(),
                    // The cache's copy: the last state seen (the event's may be metadata only).
                    Some(cached) => vec![cached.cached()],
                    None => {
                        let entry = self.entry(object, false);
                        self.release(&entry);
                        vec![entry.cached()]
                    }
                })
            }
        }
    }

    /// Ends a relist of `scope` that listed `listed`: forgets the objects of the scope it did not
    /// list; those the controller had not deleted itself, as news.
    fn unlisted(&mut self, scope: Option<&str>, listed: &HashSet<Uid>) -> Vec<Cached> {
        let unlisted: Vec<Uid> = self
            .by_uid
            .iter()
            .filter(|entry| {
                !listed.contains(&entry.uid)
                    && scope.is_none_or(|ns| entry.namespace.as_deref() == Some(ns))
            })
            .map(|entry| entry.uid.clone())
            .collect();
        unlisted
            .iter()
            .filter_map(|uid| {
                self.expected.remove(uid);
                self.remove(uid)
            })
            .filter(|entry| entry.is_live())
            .map(|entry| entry.cached())
            .collect()
    }
}

impl RelationCache {
    /// A cache of whole objects.
    pub(crate) fn whole() -> Self {
        Self {
            whole: true,
            ..Self::default()
        }
    }

    /// Whether it keeps its objects whole.
    pub(crate) fn holds_bodies(&self) -> bool {
        self.whole
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Follows one watch event of a watch of `scope`: what it shows changed, as news — nothing,
    /// the object of an add, change or delete, or at the end of a relist the last state of each
    /// object of the scope it no longer lists. An owned kind's events carry metadata only. The
    /// event of an object under write is parked (see the [type](Self)): nothing yet.
    pub(crate) fn observe<D: Into<Seen>>(
        &self,
        event: Event<D>,
        scope: Option<&str>,
    ) -> Vec<Cached> {
        let scope: Scope = scope.map(str::to_owned);
        let mut inner = self.inner();
        let event = seen(event);
        if let Event::Apply(object) | Event::InitApply(object) | Event::Delete(object) = &event {
            let meta = object.meta();
            let key = name_key(
                meta.namespace.as_deref(),
                meta.name.as_deref().unwrap_or_default(),
            );
            if inner.writing.contains_key(&key) {
                // Listed, for the relist's end: it is judged later, not gone.
                if !matches!(event, Event::Delete(_)) {
                    let uid = Uid::of(meta.uid.as_deref().unwrap_or_default());
                    for listed in inner.listing.values_mut() {
                        listed.insert(uid.clone());
                    }
                }
                inner.parked.entry(key).or_default().push((scope, event));
                return Vec::new();
            }
        }
        let judged = inner.judge(event, scope);
        drop(inner);
        if judged.listed {
            self.listed.send_modify(|listed| *listed += 1);
        }
        judged.news
    }

    /// Waits for news of parked events (see [`observe`](Self::observe)) and hands it out.
    pub(crate) async fn released(&self) -> Vec<Cached> {
        loop {
            let released = self.released.notified();
            let mut released = std::pin::pin!(released);
            released.as_mut().enable();
            let news = std::mem::take(&mut self.inner().released);
            if !news.is_empty() {
                return news;
            }
            released.await;
        }
    }

    /// A new watch term starts: its scopes have not listed yet.
    pub(crate) fn begin_term(&self) {
        self.inner().listed.clear();
    }

    /// Waits until each of `scopes` has listed its objects in the current watch term.
    pub(crate) async fn wait_listed(&self, scopes: &[Scope]) {
        let mut changes = self.listed.subscribe();
        loop {
            if scopes
                .iter()
                .all(|scope| self.inner().listed.contains(scope))
            {
                return;
            }
            if changes.changed().await.is_err() {
                return futures::future::pending().await;
            }
        }
    }

    /// The controller starts writing the object `name` in `namespace`; record the result with
    /// [`wrote`](Self::wrote) or [`deleted`](Self::deleted) before dropping the guard.
    pub(crate) fn writing(self: &Arc<Self>, namespace: Option<&str>, name: &str) -> Writing {
        let key = name_key(namespace, name);
        *self.inner().writing.entry(key.clone()).or_default() += 1;
        Writing {
            cache: self.clone(),
            key,
        }
    }

    /// The controller wrote the child `written` (as the server answered it: its metadata, or
    /// whole for a cache of [whole](Self::whole) objects).
    pub(crate) fn wrote(&self, written: Seen) {
        let mut inner = self.inner();
        let entry = inner.entry(written, false);
        inner.insert(entry);
    }

    /// The controller wrote the object of `meta` (as the server answered it), an object this
    /// cache keeps whole: its body is taken from the watch event, which is not news.
    pub(crate) fn expect(&self, meta: &ObjectMeta) {
        if let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) {
            self.inner().expected.insert(Uid::of(uid), version.clone());
        }
    }

    /// The controller deleted the object `uid` named `name` in `namespace`.
    pub(crate) fn deleted(&self, namespace: Option<&str>, name: &str, uid: &str) {
        let mut inner = self.inner();
        let tombstone = match inner.remove(&Uid::of(uid)) {
            Some(entry) => entry.tombstone(),
            None => {
                let meta = ObjectMeta {
                    name: Some(name.to_owned()),
                    namespace: namespace.map(str::to_owned),
                    uid: Some(uid.to_owned()),
                    ..ObjectMeta::default()
                };
                inner.entry(meta.into(), true)
            }
        };
        inner.insert(tombstone);
    }

    /// The object `name` in `namespace`, or the cluster-scoped object `name` (as kube-runtime's
    /// store falls back to it), if cached.
    pub(crate) fn get(&self, namespace: Option<&str>, name: &str) -> Option<Cached> {
        let inner = self.inner();
        [namespace, None]
            .into_iter()
            .find_map(|namespace| inner.named(namespace, name))
            .map(|entry| entry.cached())
    }

    /// The objects whose controller ownerReference names the owner `uid`.
    pub(crate) fn children_of(&self, owner: &str) -> Vec<Cached> {
        let inner = self.inner();
        inner
            .owners
            .get(&Uid::of(owner))
            .into_iter()
            .flat_map(|owner| &owner.children)
            .filter(|child| child.is_live())
            .map(|child| child.cached())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn object(namespace: &str, name: &str, uid: &str, version: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            uid: Some(uid.into()),
            resource_version: Some(version.into()),
            ..ObjectMeta::default()
        }
    }

    /// The names of what `event` shows changed.
    fn news(cache: &RelationCache, event: Event<ObjectMeta>, scope: Option<&str>) -> Vec<String> {
        cache
            .observe(event, scope)
            .iter()
            .map(|o| o.metadata.name.clone().unwrap_or_default())
            .collect()
    }

    fn seen(cache: &RelationCache, namespace: &str, name: &str, version: &str) -> bool {
        let event = Event::Apply(object(
            namespace,
            name,
            &format!("{namespace}-{name}"),
            version,
        ));
        !news(cache, event, None).is_empty()
    }

    fn names(news: &[Cached]) -> Vec<String> {
        news.iter()
            .map(|o| o.metadata.name.clone().unwrap_or_default())
            .collect()
    }

    #[tokio::test]
    async fn an_event_of_an_object_under_write_is_parked_until_the_write_is_answered() {
        let cache = Arc::new(RelationCache::default());
        let writing = cache.writing(Some("demo"), "child");
        let event = |name: &str, version: &str| {
            Event::Apply(object("demo", name, &format!("demo-{name}"), version))
        };
        assert!(
            news(&cache, event("child", "5"), None).is_empty(),
            "the write's own event, ahead of its answer: parked"
        );
        assert!(
            news(&cache, event("child", "6"), None).is_empty(),
            "a later change of the same object: parked behind it"
        );
        assert_eq!(
            news(&cache, event("other", "1"), None),
            ["other"],
            "another object's event is not held up"
        );
        cache.wrote(object("demo", "child", "demo-child", "5").into());
        drop(writing);
        let released = cache.released().await;
        assert_eq!(names(&released), ["child"]);
        assert_eq!(
            released[0].metadata.resource_version.as_deref(),
            Some("6"),
            "judged in order once answered: 5 was the controller's own write, 6 is news"
        );
        assert!(
            !seen(&cache, "demo", "child", "6"),
            "nothing under way: judged at once"
        );
    }

    #[tokio::test]
    async fn a_relist_does_not_take_an_object_parked_behind_a_write_for_gone() {
        let cache = Arc::new(RelationCache::default());
        assert!(seen(&cache, "a", "c1", "1"));
        let writing = cache.writing(Some("a"), "c1");
        news(&cache, Event::Init, None);
        assert!(
            news(
                &cache,
                Event::InitApply(object("a", "c1", "a-c1", "2")),
                None
            )
            .is_empty()
        );
        assert!(
            news(&cache, Event::InitDone, None).is_empty(),
            "c1 was listed, its event parked"
        );
        drop(writing);
        assert_eq!(
            names(&cache.released().await),
            ["c1"],
            "someone else's change, judged once the write is answered"
        );
        assert!(cache.get(Some("a"), "c1").is_some());
    }

    #[test]
    fn only_news_starts_passes() {
        let cache = RelationCache::default();
        assert!(seen(&cache, "a", "c1", "10"), "a first sight is news");
        assert!(
            !seen(&cache, "a", "c1", "10"),
            "the same version again is not"
        );
        assert!(seen(&cache, "a", "c1", "11"), "a new version is");

        cache.wrote(object("a", "c1", "a-c1", "12").into());
        assert!(
            !seen(&cache, "a", "c1", "12"),
            "the controller's own write is not"
        );
        assert!(
            seen(&cache, "a", "c1", "13"),
            "someone else's later change is"
        );

        cache.deleted(Some("a"), "c1", "a-c1");
        assert_eq!(cache.get(Some("a"), "c1"), None, "deleted: no longer read");
        let delete = Event::Delete(object("a", "c1", "a-c1", "13"));
        assert!(
            news(&cache, delete, None).is_empty(),
            "the controller's own delete is not news"
        );
        let delete = Event::Delete(object("a", "c2", "a-c2", "1"));
        assert_eq!(
            news(&cache, delete, None),
            ["c2"],
            "a delete by anyone else is"
        );
    }

    #[test]
    fn a_relist_turns_what_it_does_not_list_into_deletes() {
        let cache = RelationCache::default();
        assert!(seen(&cache, "a", "c1", "1"));
        assert!(seen(&cache, "a", "c2", "1"));
        assert!(seen(&cache, "a", "c3", "1"));
        cache.deleted(Some("a"), "c3", "a-c3");
        assert!(news(&cache, Event::Init, None).is_empty());
        assert!(!seen(&cache, "a", "c1", "1"), "unchanged across the relist");
        assert_eq!(
            news(&cache, Event::InitDone, None),
            ["c2"],
            "c2 was deleted while the watch was down: news, as it was last seen; c3 was the controller's own delete"
        );
        assert_eq!(cache.get(Some("a"), "c2"), None);
        assert!(seen(&cache, "a", "c2", "1"), "seeing it again is news");
    }

    #[test]
    fn a_relist_of_one_namespace_diffs_only_objects_of_that_namespace() {
        let cache = RelationCache::default();
        assert!(seen(&cache, "a", "c1", "1"));
        assert!(seen(&cache, "a", "c2", "1"));
        assert!(seen(&cache, "b", "c3", "1"));
        // Both namespaces relist at once, their events interleaved.
        news(&cache, Event::Init, Some("a"));
        news(&cache, Event::Init, Some("b"));
        assert!(!seen(&cache, "a", "c1", "1"));
        assert_eq!(news(&cache, Event::InitDone, Some("a")), ["c2"]);
        assert!(cache.get(Some("b"), "c3").is_some(), "c3 (of b) stays");
        assert!(!seen(&cache, "b", "c3", "1"), "c3 was kept: not news");
        assert!(news(&cache, Event::InitDone, Some("b")).is_empty());
    }

    #[test]
    fn children_are_found_by_their_controller_owner_and_by_name() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
        let cache = RelationCache::default();
        let owned_by = |name: &str, owner: &str, controller: bool| {
            let mut child = object("a", name, &format!("uid-{name}"), "1");
            child.owner_references = Some(vec![OwnerReference {
                uid: owner.into(),
                controller: Some(controller),
                ..OwnerReference::default()
            }]);
            Event::Apply(child)
        };
        news(&cache, owned_by("x", "o1", true), None);
        news(&cache, owned_by("y", "o1", false), None);
        news(&cache, owned_by("z", "o2", true), None);
        let names = |owner: &str| {
            let mut names: Vec<_> = cache
                .children_of(owner)
                .iter()
                .map(|c| c.metadata.name.clone().unwrap())
                .collect();
            names.sort();
            names
        };
        assert_eq!(names("o1"), ["x"], "only the controller reference counts");
        // Taken over by another owner: the index follows.
        news(&cache, owned_by("x", "o2", true), None);
        assert!(names("o1").is_empty());
        assert_eq!(names("o2"), ["x", "z"]);
        assert_eq!(
            cache
                .get(Some("a"), "y")
                .and_then(|y| y.metadata.uid.clone())
                .as_deref(),
            Some("uid-y")
        );
        assert_eq!(cache.get(Some("b"), "y"), None, "another namespace");
    }

    #[tokio::test]
    async fn a_term_is_listed_once_each_of_its_scopes_has_listed() {
        let cache = Arc::new(RelationCache::default());
        let scopes = vec![Some("a".to_owned()), Some("b".to_owned())];
        let waiter = {
            let (cache, scopes) = (cache.clone(), scopes.clone());
            tokio::spawn(async move { cache.wait_listed(&scopes).await })
        };
        news(&cache, Event::Init, Some("a"));
        news(&cache, Event::InitDone, Some("a"));
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "b has not listed");
        news(&cache, Event::Init, Some("b"));
        news(&cache, Event::InitDone, Some("b"));
        waiter.await.unwrap();
        cache.begin_term();
        let again = tokio::time::timeout(Duration::from_millis(20), cache.wait_listed(&scopes));
        assert!(again.await.is_err(), "a new term waits for its own lists");
    }

    #[test]
    fn an_owned_objects_metadata_reads_back_whole_but_its_managed_fields() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
        let reference = |uid: &str, controller: Option<bool>| OwnerReference {
            api_version: "demo.kubeward.dev/v1".into(),
            kind: "Widget".into(),
            name: format!("owner-{uid}"),
            uid: uid.into(),
            controller,
            block_owner_deletion: Some(true),
        };
        let mut child = object("a", "c1", "0f2d1a8e-3c4b-4e5f-9a6b-7c8d9e0f1a2b", "41");
        child.labels = Some([("app".into(), "shop".into()), ("tier".into(), "web".into())].into());
        child.annotations = Some([("note".into(), "{\"json\": true}".into())].into());
        child.finalizers = Some(vec!["demo.kubeward.dev/keep".into()]);
        child.generation = Some(3);
        child.creation_timestamp = Some(Time("2026-12-07T04:00:00Z".parse().unwrap()));
        // The controller reference between two others: it comes back where it was.
        child.owner_references = Some(vec![
            reference("o1", None),
            reference("o2", Some(true)),
            reference("o3", Some(false)),
        ]);
        let mut with_managed_fields = child.clone();
        with_managed_fields.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some("kubectl".into()),
            ..ManagedFieldsEntry::default()
        }]);
        let cache = RelationCache::default();
        cache.observe(Event::Apply(with_managed_fields), None);
        let read = cache.get(Some("a"), "c1").unwrap();
        assert_eq!(read.metadata, child);
        assert_eq!(cache.children_of("o2")[0].metadata, child);
        assert!(
            cache.children_of("o1").is_empty(),
            "o1 is not its controller"
        );
        // A uid that is not a canonical UUID is kept as text.
        let odd = object("a", "c2", "0F2D1A8E-3C4B-4E5F-9A6B-7C8D9E0F1A2B", "1");
        cache.observe(Event::Apply(odd.clone()), None);
        assert_eq!(cache.get(Some("a"), "c2").unwrap().metadata, odd);
    }

    #[test]
    fn siblings_share_their_owner_reference_and_metadata_until_the_last_goes() {
        let cache = RelationCache::default();
        let child = |name: &str, label: &str| {
            let mut child = object("a", name, &format!("uid-{name}"), "1");
            child.labels = Some([("app".into(), label.into())].into());
            child.owner_references = Some(vec![OwnerReference {
                uid: "owner".into(),
                controller: Some(true),
                ..OwnerReference::default()
            }]);
            child
        };
        for (name, label) in [("x", "shop"), ("y", "shop"), ("z", "cart")] {
            cache.observe(Event::Apply(child(name, label)), None);
        }
        let inner = cache.inner();
        assert_eq!(inner.rests.len(), 2, "x and y share their remainder");
        let owner = &inner.owners[&Uid::of("owner")];
        assert!(
            owner
                .children
                .iter()
                .all(|c| Arc::ptr_eq(c.controller.as_ref().unwrap(), &owner.reference)),
            "one reference for the three"
        );
        drop(inner);
        cache.observe(Event::Delete(child("x", "shop")), None);
        assert_eq!(cache.inner().rests.len(), 2, "y still holds it");
        cache.observe(Event::Delete(child("y", "shop")), None);
        cache.observe(Event::Delete(child("gone", "never-seen")), None);
        assert_eq!(cache.inner().rests.len(), 1, "only z's is left");
        cache.observe(Event::Delete(child("z", "cart")), None);
        let inner = cache.inner();
        assert!(inner.rests.is_empty() && inner.owners.is_empty());
        assert_eq!((inner.by_uid.len(), inner.by_name.len()), (0, 0));
    }
}
