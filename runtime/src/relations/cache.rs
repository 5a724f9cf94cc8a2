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
//! `InitDone`), and knows nothing of the controller's own writes.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::core::{DynamicObject, PartialObjectMeta, TypeMeta};
use kube::runtime::watcher::Event;
use tokio::sync::{Notify, watch};

/// How long an event of a child waits for the controller's write of that child, under way, to
/// answer before it is taken as news (a write that hangs never holds up the relation's watch
/// for longer). As long as a status write may go unanswered before it is in doubt
/// ([`DEFAULT_STATUS_WRITE_TIMEOUT`](crate::controller::DEFAULT_STATUS_WRITE_TIMEOUT)): 2 s
/// was too short on a loaded machine, where a slow answer made the controller's own write
/// start a second pass.
pub(crate) const WRITE_WAIT: Duration = Duration::from_secs(10);

/// A cached object: a watched object whole, an owned child's metadata (its `data` null).
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
/// controller is writing ([`writing`](Self::writing)) waits for the answer (at most
/// [`WRITE_WAIT`]) before it is judged ([`settled`](Self::settled)).
///
/// A relist of one namespace (a controller watching
/// [several](crate::controller::Controller::in_namespaces) runs one watch per namespace) diffs
/// only the objects of that namespace. The cache outlives watch terms: a child deleted while no
/// term watched is news at the next term's first list.
#[derive(Debug)]
pub(crate) struct RelationCache {
    inner: Mutex<Inner>,
    /// Signalled when a write of the controller's is answered.
    answered: Notify,
    /// Bumped whenever a scope's list completes, for [`wait_listed`](Self::wait_listed).
    listed: watch::Sender<u64>,
}

impl Default for RelationCache {
    fn default() -> Self {
        Self {
            inner: Mutex::default(),
            answered: Notify::new(),
            listed: watch::Sender::new(0),
        }
    }
}

/// A scope a relation's watch lists: a namespace, or `None` for the whole cluster.
pub(crate) type Scope = Option<String>;

#[derive(Debug, Default)]
struct Inner {
    /// By uid.
    objects: HashMap<Arc<str>, Entry>,
    /// The uid of the object of each `namespace/name`.
    names: HashMap<String, Arc<str>>,
    /// The uids of the objects whose controller ownerReference names each owner uid.
    children: HashMap<Arc<str>, HashSet<Arc<str>>>,
    /// The uids listed so far by each relist under way, by the scope listed.
    listing: HashMap<Scope, HashSet<Arc<str>>>,
    /// The scopes whose list completed in the current watch term.
    listed: HashSet<Scope>,
    /// The objects (by `namespace/name`) the controller is writing, with how many writes.
    writing: HashMap<String, usize>,
    /// The resourceVersion of the controller's last write of each object (by uid) that this
    /// cache keeps whole and so cannot take from the write's metadata (a kind both owned and
    /// watched): its watch event is not news.
    expected: HashMap<Arc<str>, String>,
}

/// One cached object.
#[derive(Debug)]
pub(crate) struct Entry {
    object: Cached,
    /// Deleted by the controller itself: its delete event is expected, and it is no longer
    /// read.
    deleted_by_controller: bool,
}

/// A write of the controller's under way; dropping it says it was answered.
pub(crate) struct Writing {
    cache: Arc<RelationCache>,
    key: String,
}

impl Drop for Writing {
    fn drop(&mut self) {
        let mut inner = self.cache.inner();
        if let Some(count) = inner.writing.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                inner.writing.remove(&self.key);
            }
        }
        drop(inner);
        self.cache.answered.notify_waiters();
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

/// The uid of the object `meta`'s controller ownerReference names, if any.
fn controller_uid(meta: &ObjectMeta) -> Option<&str> {
    controller_of(meta).map(|owner| owner.uid.as_str())
}

/// An owned child as the cache keeps it: its metadata, without managedFields.
pub(crate) fn metadata_only(types: Option<TypeMeta>, mut metadata: ObjectMeta) -> DynamicObject {
    metadata.managed_fields = None;
    DynamicObject {
        types,
        metadata,
        data: serde_json::Value::Null,
    }
}

/// An owned child's metadata, as a (shared) watch event carries it.
impl From<Arc<PartialObjectMeta<DynamicObject>>> for Entry {
    fn from(object: Arc<PartialObjectMeta<DynamicObject>>) -> Self {
        let object = Arc::unwrap_or_clone(object);
        Self::from(Arc::new(metadata_only(object.types, object.metadata)))
    }
}

/// A watched object, as a (shared) watch event carries it: the same `Arc`, not a copy.
impl From<Arc<DynamicObject>> for Entry {
    fn from(object: Arc<DynamicObject>) -> Self {
        Self {
            object,
            deleted_by_controller: false,
        }
    }
}

impl From<DynamicObject> for Entry {
    fn from(object: DynamicObject) -> Self {
        Self::from(Arc::new(object))
    }
}

impl Inner {
    /// Caches `entry` (replacing what was cached of its uid); the entry it replaced.
    fn insert(&mut self, entry: Entry) -> Option<Entry> {
        let meta = &entry.object.metadata;
        let uid: Arc<str> = meta.uid.as_deref().unwrap_or_default().into();
        let name = name_key(
            meta.namespace.as_deref(),
            meta.name.as_deref().unwrap_or_default(),
        );
        let owner = controller_uid(meta).map(Arc::<str>::from);
        let replaced = self.remove(&uid);
        self.names.insert(name, uid.clone());
        if let Some(owner) = owner {
            self.children.entry(owner).or_default().insert(uid.clone());
        }
        if !entry.deleted_by_controller {
            for listed in self.listing.values_mut() {
                listed.insert(uid.clone());
            }
        }
        self.objects.insert(uid, entry);
        replaced
    }

    /// Forgets the object `uid`; what was cached of it.
    fn remove(&mut self, uid: &str) -> Option<Entry> {
        let entry = self.objects.remove(uid)?;
        let meta = &entry.object.metadata;
        let name = name_key(
            meta.namespace.as_deref(),
            meta.name.as_deref().unwrap_or_default(),
        );
        if self.names.get(&name).is_some_and(|named| &**named == uid) {
            self.names.remove(&name);
        }
        if let Some(owner) = controller_uid(meta)
            && let Some(children) = self.children.get_mut(owner)
        {
            children.remove(uid);
            if children.is_empty() {
                self.children.remove(owner);
            }
        }
        Some(entry)
    }

    /// The live (not deleted by the controller) object of `uid`.
    fn live(&self, uid: &str) -> Option<&Cached> {
        self.objects
            .get(uid)
            .filter(|entry| !entry.deleted_by_controller)
            .map(|entry| &entry.object)
    }
}

impl RelationCache {
    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Follows one watch event of a watch of `scope`: what it shows changed, as news — nothing,
    /// the object of an add, change or delete, or at the end of a relist the last state of each
    /// object of the scope it no longer lists. An owned kind's events carry metadata only.
    pub(crate) fn observe<D: Into<Entry>>(
        &self,
        event: Event<D>,
        scope: Option<&str>,
    ) -> Vec<Cached> {
        let scope: Scope = scope.map(str::to_owned);
        let mut inner = self.inner();
        match event {
            Event::Init => {
                inner.listing.insert(scope, HashSet::new());
                Vec::new()
            }
            Event::InitDone => {
                let gone = match inner.listing.remove(&scope) {
                    Some(listed) => Self::unlisted(&mut inner, scope.as_deref(), &listed),
                    None => Vec::new(),
                };
                inner.listed.insert(scope);
                drop(inner);
                self.listed.send_modify(|listed| *listed += 1);
                gone
            }
            Event::Apply(object) | Event::InitApply(object) => {
                let entry: Entry = object.into();
                let object = entry.object.clone();
                let version = &object.metadata.resource_version;
                let uid = object.metadata.uid.as_deref().unwrap_or_default();
                let own = inner
                    .expected
                    .remove(uid)
                    .is_some_and(|own| Some(&own) == version.as_ref());
                let replaced = inner.insert(entry);
                let news = !own
                    && replaced.is_none_or(|replaced| {
                        replaced.deleted_by_controller
                            || replaced.object.metadata.resource_version != *version
                    });
                if news { vec![object] } else { Vec::new() }
            }
            Event::Delete(object) => {
                let entry: Entry = object.into();
                let uid = entry.object.metadata.uid.clone().unwrap_or_default();
                inner.expected.remove(uid.as_str());
                match inner.remove(&uid) {
                    Some(cached) if cached.deleted_by_controller => Vec::new(),
                    // The cache's copy: the last state seen (the event's may be metadata only).
                    Some(cached) => vec![cached.object],
                    None => vec![entry.object],
                }
            }
        }
    }

    /// Ends a relist of `scope` that listed `listed`: forgets the objects of the scope it did not
    /// list; those the controller had not deleted itself, as news.
    fn unlisted(inner: &mut Inner, scope: Option<&str>, listed: &HashSet<Arc<str>>) -> Vec<Cached> {
        let unlisted: Vec<Arc<str>> = inner
            .objects
            .iter()
            .filter(|(uid, entry)| {
                !listed.contains(*uid)
                    && scope.is_none_or(|ns| entry.object.metadata.namespace.as_deref() == Some(ns))
            })
            .map(|(uid, _)| uid.clone())
            .collect();
        unlisted
            .iter()
            .filter_map(|uid| {
                inner.expected.remove(uid);
                inner.remove(uid)
            })
            .filter(|entry| !entry.deleted_by_controller)
            .map(|entry| entry.object)
            .collect()
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

    /// Waits (at most [`WRITE_WAIT`]) until no write of the controller's to the object `name` in
    /// `namespace` is under way.
    pub(crate) async fn settled(&self, namespace: Option<&str>, name: &str) {
        let key = name_key(namespace, name);
        let wait = async {
            loop {
                let answered = self.answered.notified();
                let mut answered = std::pin::pin!(answered);
                answered.as_mut().enable();
                if !self.inner().writing.contains_key(&key) {
                    return;
                }
                answered.await;
            }
        };
        let _ = tokio::time::timeout(WRITE_WAIT, wait).await;
    }

    /// The controller wrote the child of `meta` (as the server answered it).
    pub(crate) fn wrote(&self, types: TypeMeta, meta: &ObjectMeta) {
        let entry = Entry::from(metadata_only(Some(types), meta.clone()));
        self.inner().insert(entry);
    }

    /// The controller wrote the object of `meta` (as the server answered it), an object this
    /// cache keeps whole: its body is taken from the watch event, which is not news.
    pub(crate) fn expect(&self, meta: &ObjectMeta) {
        if let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) {
            self.inner()
                .expected
                .insert(uid.as_str().into(), version.clone());
        }
    }

    /// The controller deleted the object `uid` named `name` in `namespace`.
    pub(crate) fn deleted(&self, namespace: Option<&str>, name: &str, uid: &str) {
        let mut inner = self.inner();
        let object = match inner.remove(uid) {
            Some(entry) => entry.object,
            None => Arc::new(metadata_only(
                None,
                ObjectMeta {
                    name: Some(name.to_owned()),
                    namespace: namespace.map(str::to_owned),
                    uid: Some(uid.to_owned()),
                    ..ObjectMeta::default()
                },
            )),
        };
        inner.insert(Entry {
            object,
            deleted_by_controller: true,
        });
    }

    /// The object `name` in `namespace`, or the cluster-scoped object `name` (as kube-runtime's
    /// store falls back to it), if cached.
    pub(crate) fn get(&self, namespace: Option<&str>, name: &str) -> Option<Cached> {
        let inner = self.inner();
        [namespace, None]
            .into_iter()
            .find_map(|namespace| inner.names.get(&name_key(namespace, name)))
            .and_then(|uid| inner.live(uid))
            .cloned()
    }

    /// The objects whose controller ownerReference names the owner `uid`.
    pub(crate) fn children_of(&self, owner: &str) -> Vec<Cached> {
        let inner = self.inner();
        inner
            .children
            .get(owner)
            .into_iter()
            .flatten()
            .filter_map(|uid| inner.live(uid).cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(namespace: &str, name: &str, uid: &str, version: &str) -> DynamicObject {
        metadata_only(
            None,
            ObjectMeta {
                name: Some(name.into()),
                namespace: Some(namespace.into()),
                uid: Some(uid.into()),
                resource_version: Some(version.into()),
                ..ObjectMeta::default()
            },
        )
    }

    /// The names of what `event` shows changed.
    fn news(
        cache: &RelationCache,
        event: Event<DynamicObject>,
        scope: Option<&str>,
    ) -> Vec<String> {
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

    #[tokio::test]
    async fn an_event_waits_for_the_answer_of_a_write_under_way() {
        let cache = Arc::new(RelationCache::default());
        let writing = cache.writing(Some("demo"), "child");
        let waiter = {
            let cache = cache.clone();
            tokio::spawn(async move {
                cache.settled(Some("demo"), "child").await;
                seen(&cache, "demo", "child", "5")
            })
        };
        tokio::task::yield_now().await;
        cache.wrote(
            TypeMeta::default(),
            &object("demo", "child", "demo-child", "5").metadata,
        );
        drop(writing);
        assert!(
            !waiter.await.unwrap(),
            "the event of the controller's own write, judged after its answer, is not news"
        );
        // Nothing under way: no wait.
        cache.settled(Some("demo"), "other").await;
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

        cache.wrote(
            TypeMeta::default(),
            &object("a", "c1", "a-c1", "12").metadata,
        );
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
            child.metadata.owner_references = Some(vec![OwnerReference {
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
}
