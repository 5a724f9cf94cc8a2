//! [`Ledger`]: what one relation's watch last saw of each object, so that only real changes
//! start passes.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

/// How long an event of a child waits for the controller's write of that child, under way, to
/// answer before it is taken as news (a write that hangs never holds up the relation's watch
/// for longer).
pub(crate) const WRITE_WAIT: Duration = Duration::from_secs(2);

/// What a relation's watch last saw of each of its objects, by uid, and what the controller
/// itself last wrote of its children. An event starts passes only when it shows something the
/// ledger does not already know:
/// - a relist (after a watch expired, or in a new watch term) re-delivers every object; one
///   whose resourceVersion did not move starts nothing;
/// - a child the controller wrote ([`wrote`](Ledger::wrote): the resourceVersion its
///   server-side apply returned) or deleted ([`deleted`](Ledger::deleted)) starts nothing when
///   its watch event arrives — the pass that wrote it already knows. A change by anyone else has
///   another resourceVersion, and starts the owner's pass.
///
/// The watch event of a write can arrive before the write's answer: an event of an object the
/// controller is writing ([`writing`](Ledger::writing)) waits for the answer (at most
/// [`WRITE_WAIT`]) before it is judged.
///
/// Uids and resourceVersions are kept as 64-bit hashes: 16 bytes and the table's overhead per
/// object, never the object. Entries of objects a relist no longer lists are dropped at its end.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    inner: Mutex<Inner>,
    /// Signalled when a write of the controller's is answered.
    answered: Notify,
}

#[derive(Debug, Default)]
struct Inner {
    seen: HashMap<u64, Seen>,
    /// The objects listed so far by a relist under way.
    listing: Option<HashSet<u64>>,
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// At this resourceVersion (hashed).
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

    /// Whether a write of the controller's to the object `name` in `namespace` is under way.
    pub(crate) fn is_writing(&self, namespace: Option<&str>, name: &str) -> bool {
        self.inner()
            .writing
            .contains_key(&object_key(namespace, name))
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

    /// Records that the watch saw object `uid` at `resource_version`; whether that is news (its
    /// passes should run).
    pub(crate) fn observe(&self, uid: &str, resource_version: &str) -> bool {
        let (uid, version) = (hash(uid), Seen::At(hash(resource_version)));
        let mut inner = self.inner();
        if let Some(listing) = &mut inner.listing {
            listing.insert(uid);
        }
        inner.seen.insert(uid, version) != Some(version)
    }

    /// Records that the watch saw object `uid` deleted; whether that is news.
    pub(crate) fn observe_delete(&self, uid: &str) -> bool {
        self.inner().seen.remove(&hash(uid)) != Some(Seen::DeletedByController)
    }

    /// Follows a relist through `event`: its start (`Init`) and its end (`InitDone`, which
    /// forgets the objects it did not list). Whether `event` was one of those two.
    pub(crate) fn follow_relist<K>(&self, event: &kube::runtime::watcher::Event<K>) -> bool {
        match event {
            kube::runtime::watcher::Event::Init => self.relist_started(),
            kube::runtime::watcher::Event::InitDone => self.relist_done(),
            _ => return false,
        }
        true
    }

    /// A relist starts: objects it does not list are forgotten at its end.
    pub(crate) fn relist_started(&self) {
        self.inner().listing = Some(HashSet::new());
    }

    /// A relist is complete: forgets the objects it did not list.
    pub(crate) fn relist_done(&self) {
        let mut inner = self.inner();
        if let Some(listed) = inner.listing.take() {
            inner.seen.retain(|uid, _| listed.contains(uid));
        }
    }

    /// The controller wrote object `uid`, which is now at `resource_version`.
    pub(crate) fn wrote(&self, uid: &str, resource_version: &str) {
        self.inner()
            .seen
            .insert(hash(uid), Seen::At(hash(resource_version)));
    }

    /// The controller deleted object `uid`.
    pub(crate) fn deleted(&self, uid: &str) {
        self.inner()
            .seen
            .insert(hash(uid), Seen::DeletedByController);
    }

    /// How many objects the ledger remembers.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner().seen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Ledger;
    use std::sync::Arc;

    #[tokio::test]
    async fn an_event_waits_for_the_answer_of_a_write_under_way() {
        let ledger = Arc::new(Ledger::default());
        let writing = ledger.writing(Some("demo"), "child");
        let waiter = {
            let ledger = ledger.clone();
            tokio::spawn(async move {
                ledger.settled(Some("demo"), "child").await;
                ledger.observe("u1", "5")
            })
        };
        tokio::task::yield_now().await;
        ledger.wrote("u1", "5");
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
        assert!(ledger.observe("u1", "10"), "a first sight is news");
        assert!(!ledger.observe("u1", "10"), "the same version again is not");
        assert!(ledger.observe("u1", "11"), "a new version is");

        ledger.wrote("u1", "12");
        assert!(
            !ledger.observe("u1", "12"),
            "the controller's own write is not"
        );
        assert!(ledger.observe("u1", "13"), "someone else's later change is");

        ledger.deleted("u1");
        assert!(
            !ledger.observe_delete("u1"),
            "the controller's own delete is not"
        );
        assert!(ledger.observe_delete("u2"), "a delete by anyone else is");
    }

    #[test]
    fn a_relist_forgets_what_it_does_not_list() {
        let ledger = Ledger::default();
        assert!(ledger.observe("u1", "1"));
        assert!(ledger.observe("u2", "1"));
        ledger.relist_started();
        assert!(!ledger.observe("u1", "1"), "unchanged across the relist");
        ledger.relist_done();
        assert_eq!(ledger.len(), 1, "u2 was not listed: it is gone");
        assert!(ledger.observe("u2", "1"), "so seeing it again is news");
    }
}
