//! [`Ledger`]: what one relation's watch last saw of each object, so that only real changes
//! start passes.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use tokio::sync::Notify;

/// How long an event of a child waits for the controller's write of that child, under way, to
/// answer before it is taken as news (a write that hangs never holds up the relation's watch
/// for longer). As long as a status write may go unanswered before it is in doubt
/// ([`DEFAULT_STATUS_WRITE_TIMEOUT`](crate::controller::DEFAULT_STATUS_WRITE_TIMEOUT)): 2 s
/// was too short on a loaded machine, where a slow answer made the controller's own write
/// start a second pass.
pub(crate) const WRITE_WAIT: Duration = Duration::from_secs(10);

/// What a relation's watch last saw of each object, by uid, and what the controller
/// itself last wrote of its children. An event starts passes only when it shows something the
/// ledger does not already know:
/// - a relist (after a watch expired, or in a new watch term) re-delivers every object; one
///   whose version did not move starts nothing;
/// - a child the controller wrote ([`wrote`](Ledger::wrote): the resourceVersion its
///   server-side apply returned) or deleted ([`deleted`](Ledger::deleted)) starts nothing when
///   its watch event arrives — the pass that wrote it already knows. A change by anyone else has
///   another resourceVersion, and starts the owner's pass.
///
/// What counts as an object's version is the caller's: its resourceVersion
/// ([`resource_version`]), or a fingerprint of what a reconciler reads of it
/// ([`Reads`](crate::controller::Reads)).
///
/// The watch event of a write can arrive before the write's answer: an event of an object the
/// controller is writing ([`writing`](Ledger::writing)) waits for the answer (at most
/// [`WRITE_WAIT`]) before it is judged.
///
/// Uids, namespaces and versions are kept as 64-bit hashes: 24 bytes and the table's overhead
/// per object, never the object. Entries of objects a relist no longer lists are dropped at its
/// end; a relist of one namespace (a controller watching [several](crate::controller::Controller::in_namespaces)
/// runs one watch per namespace) drops only entries of that namespace.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    inner: Mutex<Inner>,
    /// Signalled when a write of the controller's is answered.
    answered: Notify,
}

#[derive(Debug, Default)]
struct Inner {
    seen: HashMap<u64, Entry>,
    /// The objects listed so far by the relists under way, by the namespace listed (hashed;
    /// `None` for a list of the whole cluster).
    listing: HashMap<Option<u64>, HashSet<u64>>,
    /// The objects (by namespace and name) the controller is writing, with how many writes.
    writing: HashMap<u64, usize>,
}

/// A write of the controller's under way; dropping it says it was answered.
pub(crate) struct Writing {
    ledger: Arc<Ledger>,
    key: u64,
}

impl Drop for Writing {
    fn drop(&mut self) {
        let mut inner = self.ledger.inner();
        if let Some(count) = inner.writing.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                inner.writing.remove(&self.key);
            }
        }
        drop(inner);
        self.ledger.answered.notify_waiters();
    }
}

/// The key of the object `name` in `namespace`.
fn object_key(namespace: Option<&str>, name: &str) -> u64 {
    hash(&format!("{}/{name}", namespace.unwrap_or_default()))
}

/// What the ledger knows of one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    /// The object's namespace (hashed; that of `""` when cluster-scoped).
    namespace: u64,
    seen: Seen,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// At this version (hashed).
    At(u64),
    /// Deleted by the controller itself; its delete event is expected.
    DeletedByController,
}

fn hash(text: &str) -> u64 {
    // A fixed-key hasher: hashes are compared with those of later events, never exposed.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The version of an object that is its resourceVersion: every change moves it.
pub(crate) fn resource_version(meta: &ObjectMeta) -> u64 {
    hash(meta.resource_version.as_deref().unwrap_or_default())
}

fn uid(meta: &ObjectMeta) -> u64 {
    hash(meta.uid.as_deref().unwrap_or_default())
}

fn namespace(meta: &ObjectMeta) -> u64 {
    hash(meta.namespace.as_deref().unwrap_or_default())
}

impl Ledger {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The controller starts writing the object `name` in `namespace`; record the result with
    /// [`wrote`](Self::wrote) or [`deleted`](Self::deleted) before dropping the guard.
    pub(crate) fn writing(self: &Arc<Self>, namespace: Option<&str>, name: &str) -> Writing {
        let key = object_key(namespace, name);
        *self.inner().writing.entry(key).or_default() += 1;
        Writing {
            ledger: self.clone(),
            key,
        }
    }

    /// Waits (at most [`WRITE_WAIT`]) until no write of the controller's to the object `name` in
    /// `namespace` is under way.
    pub(crate) async fn settled(&self, namespace: Option<&str>, name: &str) {
        let key = object_key(namespace, name);
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

    /// Records that the watch saw the object of `meta` at `version`; whether that is news (its
    /// passes should run).
    pub(crate) fn observe(&self, meta: &ObjectMeta, version: u64) -> bool {
        let entry = Entry {
            namespace: namespace(meta),
            seen: Seen::At(version),
        };
        let uid = uid(meta);
        let mut inner = self.inner();
        for listed in inner.listing.values_mut() {
            listed.insert(uid);
        }
        inner.seen.insert(uid, entry) != Some(entry)
    }

    /// Records that the watch saw the object of `meta` deleted; whether that is news.
    pub(crate) fn observe_delete(&self, meta: &ObjectMeta) -> bool {
        self.inner().seen.remove(&uid(meta)).map(|e| e.seen) != Some(Seen::DeletedByController)
    }

    /// Follows a relist through `event` of a watch of `scope` (a namespace, or `None` for the
    /// whole cluster): its start (`Init`) and its end (`InitDone`, which forgets the objects of
    /// the scope it did not list). Whether `event` was one of those two.
    pub(crate) fn follow_relist<K>(
        &self,
        event: &kube::runtime::watcher::Event<K>,
        scope: Option<&str>,
    ) -> bool {
        let scope = scope.map(hash);
        let mut inner = self.inner();
        match event {
            kube::runtime::watcher::Event::Init => {
                inner.listing.insert(scope, HashSet::new());
            }
            kube::runtime::watcher::Event::InitDone => {
                if let Some(listed) = inner.listing.remove(&scope) {
                    inner.seen.retain(|uid, entry| {
                        scope.is_some_and(|ns| ns != entry.namespace) || listed.contains(uid)
                    });
                }
            }
            _ => return false,
        }
        true
    }

    /// The controller wrote the object of `meta` (as the server answered it).
    pub(crate) fn wrote(&self, meta: &ObjectMeta) {
        let entry = Entry {
            namespace: namespace(meta),
            seen: Seen::At(resource_version(meta)),
        };
        self.inner().seen.insert(uid(meta), entry);
    }

    /// The controller deleted the object `uid` in `namespace`.
    pub(crate) fn deleted(&self, namespace: Option<&str>, uid: &str) {
        let entry = Entry {
            namespace: hash(namespace.unwrap_or_default()),
            seen: Seen::DeletedByController,
        };
        self.inner().seen.insert(hash(uid), entry);
    }
}

#[cfg(test)]
mod tests {
    use super::{Ledger, ObjectMeta, hash};
    use kube::runtime::watcher::Event;
    use std::sync::Arc;

    impl Ledger {
        /// How many objects the ledger remembers.
        pub(crate) fn len(&self) -> usize {
            self.inner().seen.len()
        }
    }

    fn meta(namespace: &str, uid: &str, version: &str) -> ObjectMeta {
        ObjectMeta {
            namespace: Some(namespace.into()),
            uid: Some(uid.into()),
            resource_version: Some(version.into()),
            ..ObjectMeta::default()
        }
    }

    fn seen(ledger: &Ledger, namespace: &str, uid: &str, version: &str) -> bool {
        ledger.observe(&meta(namespace, uid, version), hash(version))
    }

    #[tokio::test]
    async fn an_event_waits_for_the_answer_of_a_write_under_way() {
        let ledger = Arc::new(Ledger::default());
        let writing = ledger.writing(Some("demo"), "child");
        let waiter = {
            let ledger = ledger.clone();
            tokio::spawn(async move {
                ledger.settled(Some("demo"), "child").await;
                seen(&ledger, "demo", "u1", "5")
            })
        };
        tokio::task::yield_now().await;
        ledger.wrote(&meta("demo", "u1", "5"));
        drop(writing);
        assert!(
            !waiter.await.unwrap(),
            "the event of the controller's own write, judged after its answer, is not news"
        );
        // Nothing under way: no wait.
        ledger.settled(Some("demo"), "other").await;
    }

    #[test]
    fn only_news_starts_passes() {
        let ledger = Ledger::default();
        assert!(seen(&ledger, "a", "u1", "10"), "a first sight is news");
        assert!(
            !seen(&ledger, "a", "u1", "10"),
            "the same version again is not"
        );
        assert!(seen(&ledger, "a", "u1", "11"), "a new version is");

        ledger.wrote(&meta("a", "u1", "12"));
        assert!(
            !seen(&ledger, "a", "u1", "12"),
            "the controller's own write is not"
        );
        assert!(
            seen(&ledger, "a", "u1", "13"),
            "someone else's later change is"
        );

        ledger.deleted(Some("a"), "u1");
        assert!(
            !ledger.observe_delete(&meta("a", "u1", "13")),
            "the controller's own delete is not"
        );
        assert!(
            ledger.observe_delete(&meta("a", "u2", "1")),
            "a delete by anyone else is"
        );
    }

    #[test]
    fn a_relist_forgets_what_it_does_not_list() {
        let ledger = Ledger::default();
        assert!(seen(&ledger, "a", "u1", "1"));
        assert!(seen(&ledger, "a", "u2", "1"));
        ledger.follow_relist(&Event::<()>::Init, None);
        assert!(
            !seen(&ledger, "a", "u1", "1"),
            "unchanged across the relist"
        );
        ledger.follow_relist(&Event::<()>::InitDone, None);
        assert_eq!(ledger.len(), 1, "u2 was not listed: it is gone");
        assert!(seen(&ledger, "a", "u2", "1"), "so seeing it again is news");
    }

    #[test]
    fn a_relist_of_one_namespace_forgets_only_objects_of_that_namespace() {
        let ledger = Ledger::default();
        assert!(seen(&ledger, "a", "u1", "1"));
        assert!(seen(&ledger, "a", "u2", "1"));
        assert!(seen(&ledger, "b", "u3", "1"));
        // Both namespaces relist at once, their events interleaved.
        ledger.follow_relist(&Event::<()>::Init, Some("a"));
        ledger.follow_relist(&Event::<()>::Init, Some("b"));
        assert!(!seen(&ledger, "a", "u1", "1"));
        ledger.follow_relist(&Event::<()>::InitDone, Some("a"));
        assert_eq!(ledger.len(), 2, "u2 (of a) was not listed; u3 (of b) stays");
        assert!(!seen(&ledger, "b", "u3", "1"), "u3 was kept: not news");
        ledger.follow_relist(&Event::<()>::InitDone, Some("b"));
        assert_eq!(ledger.len(), 2);
        assert!(
            seen(&ledger, "a", "u2", "1"),
            "u2 was forgotten: news again"
        );
    }
}
