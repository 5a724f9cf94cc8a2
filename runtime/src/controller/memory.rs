//! What a controller remembers about each object between passes, keyed by the object's uid (never
//! by its name: a new object of a deleted one's name is a stranger and inherits nothing):
//!
//! - how many passes in a row had to be retried — failed or met a conflict — which is the attempt
//!   number of its backoff (client-go's per-item rate limiter), reset by a pass that succeeds;
//! - whether its cleanup finished (returned `await_change`), so that a pass retrying a finalizer
//!   removal that failed (or met a conflict) removes the finalizer without running cleanup again;
//! - whether this controller removed its finalizer, so that a stale cache entry of the deleted
//!   object (the watch event of the removal has not arrived yet) never runs cleanup a second time;
//! - the resourceVersion its last stored status write replaced, until a pass sees a newer version:
//!   a pass that would start from the replaced version (the watch has not delivered the write yet)
//!   first waits for the cache to catch up, and if it does not, knows its own status write is
//!   stale — so a transition the earlier write stored is never taken for stored again (its
//!   conflicting write would read back as "stored" and publish the event twice);
//! - what its last status write sent and what the server stored of it, when the two differ (the
//!   schema pruned a field, the object's type does not model one, a `null` deleted one): a pass
//!   that would send the same status to the same stored status sends nothing, since the server
//!   would only make it into what it holds already — steady state is 0 writes whatever the
//!   server normalises. Only objects whose writes the server normalises have this entry.
//! - a status write whose answer was lost and whose read-back failed too ([`Unresolved`]): it may
//!   have committed, so the next pass reads it back again before its own write, and publishes
//!   its transition events if it did (a pass that finds the transition already stored has no
//!   transition of its own to publish);
//! - whether its last pass failed with a [terminal](super::Terminal) error, and what the object
//!   looked like then (a [fingerprint](terminal_fingerprint) of its generation, labels, annotations
//!   and deletion): while the object still looks so, no pass runs — not on its own status write,
//!   not on a resync — and it is exported as `kubeward_object_terminal 1`. A change to any of
//!   them runs the next pass at once; a pass that succeeds forgets the failure.
//!
//! A success drops an object's entry unless it was cleaned up or finalized, or awaits its written
//! version. The
//! entry of a deleted object is dropped when the controller observes it gone: on its watch's
//! delete event ([`ObjectMemory::forget`]; the mark of a finalizer this controller removed stays
//! until the next sweep, for a pass started on the version before the removal), on a relist that no longer holds it
//! ([`ObjectMemory::sweep`], as a delete that happened while the watch was down has no event),
//! and when a pass's result would remember an object the cache no longer holds (its delete event
//! arrived while the pass ran). A sweep against the controller's cache (is an object of that uid
//! still there?) also runs each time the table has doubled since the last sweep, so it holds at
//! most about twice the entries of the objects in the cache (and never fewer than 64 before a
//! sweep) whatever events are missed.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use kube::{Resource, ResourceExt};

/// The fewest entries at which the table is swept.
const MIN_SWEEP: usize = 64;

/// The memory of one controller; see the module documentation. Clones share the memory (the
/// controller's per-object metrics read the terminal failures from it).
#[derive(Debug, Clone)]
pub(super) struct ObjectMemory {
    table: Arc<Mutex<Table>>,
}

#[derive(Debug)]
struct Table {
    entries: HashMap<String, Entry>,
    /// The size at which the next insertion sweeps.
    sweep_at: usize,
}

/// What is remembered of one object.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    namespace: Option<String>,
    name: String,
    /// Consecutive retried passes.
    retries: u32,
    /// Its cleanup finished: only the finalizer removal may be left to do.
    cleaned_up: bool,
    /// This controller removed its finalizer.
    finalized: bool,
    /// The resourceVersion the last stored status write replaced, until a pass saw a newer one.
    superseded: Option<String>,
    /// When that write was stored.
    superseded_at: Option<tokio::time::Instant>,
    /// The [fingerprints](super::status::fingerprint) of the last status write that the server
    /// stored as something else, and of what it stored.
    normalised: Option<Normalised>,
    /// The [`terminal_fingerprint`] of the object when its last pass failed terminally.
    terminal: Option<u64>,
    /// Its last status write, not known to have been stored or not.
    unresolved: Option<Unresolved>,
}

/// A status write whose answer was lost and that could not be read back: what it sent, and the
/// transition events to publish if it turns out stored.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Unresolved {
    /// The status sent.
    pub(super) status: serde_json::Map<String, serde_json::Value>,
    /// The events of the transitions it wrote.
    pub(super) events: Vec<crate::events::Event>,
}

/// What a terminal failure waits to change: the object's generation (its spec), labels,
/// annotations and whether it is being deleted — not its status, resourceVersion or finalizers.
pub(super) fn terminal_fingerprint<K: Resource>(object: &K) -> u64 {
    use std::hash::{Hash, Hasher};
    let meta = object.meta();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    meta.generation.hash(&mut hasher);
    meta.labels.hash(&mut hasher);
    meta.annotations.hash(&mut hasher);
    meta.deletion_timestamp.is_some().hash(&mut hasher);
    hasher.finish()
}

/// The objects held after a terminal failure at one moment: their uids and fingerprints.
#[cfg(feature = "prometheus")]
pub(super) struct TerminalFailures(HashMap<String, u64>);

#[cfg(feature = "prometheus")]
impl TerminalFailures {
    /// Whether `object` is held ([`ObjectMemory::is_held_terminal`] as of this snapshot).
    pub(super) fn holds<K: Resource>(&self, object: &K) -> bool {
        !self.0.is_empty()
            && self.0.get(key(object).as_ref()).copied() == Some(terminal_fingerprint(object))
    }
}

/// A status write the server stored as something other than what was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Normalised {
    /// The fingerprint of the status sent.
    pub(super) sent: u64,
    /// The fingerprint of the status stored, read through the object's type.
    pub(super) stored: u64,
}

impl Entry {
    /// Whether the entry holds more than a retry count: kept when the object's passes succeed.
    fn keeps(&self) -> bool {
        self.cleaned_up
            || self.finalized
            || self.superseded.is_some()
            || self.normalised.is_some()
            || self.terminal.is_some()
            || self.unresolved.is_some()
    }
}

/// Where an object is, to ask the cache whether it still exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Whereabouts<'a> {
    pub(super) namespace: Option<&'a str>,
    pub(super) name: &'a str,
    pub(super) uid: &'a str,
}

impl Default for ObjectMemory {
    fn default() -> Self {
        Self {
            table: Arc::new(Mutex::new(Table {
                entries: HashMap::new(),
                sweep_at: MIN_SWEEP,
            })),
        }
    }
}

/// The key of `object`: its uid (its namespace and name before the server assigned one).
fn key<K: Resource>(object: &K) -> Cow<'_, str> {
    let meta = object.meta();
    match &meta.uid {
        // Borrowed: a pass looks its object up several times and inserts rarely.
        Some(uid) => Cow::Borrowed(uid),
        None => Cow::Owned(format!(
            "{}/{}",
            meta.namespace.as_deref().unwrap_or_default(),
            object.name_any()
        )),
    }
}

impl ObjectMemory {
    /// Records one more retried pass of `object` and returns the attempt number (1-based) its
    /// backoff should use. `exists` tells a sweep whether an object is still in the cache.
    pub(super) fn retry<K: Resource>(
        &self,
        object: &K,
        exists: impl Fn(Whereabouts<'_>) -> bool,
    ) -> u32 {
        let mut table = self.lock();
        let entry = table.entry(object, &exists);
        entry.retries = entry.retries.saturating_add(1);
        let attempt = entry.retries;
        table.drop_if_gone(object, &exists);
        attempt
    }

    /// The consecutive retried passes of `object` so far (0 when its last pass succeeded).
    pub(super) fn retries<K: Resource>(&self, object: &K) -> u32 {
        self.lock()
            .entries
            .get(key(object).as_ref())
            .map_or(0, |entry| entry.retries)
    }

    /// `object`'s pass failed with a terminal error: no pass runs while it looks as it does now
    /// ([`ObjectMemory::is_held_terminal`]). Its retry count is reset: the change that ends the
    /// hold is a new start.
    pub(super) fn failed_terminally<K: Resource>(
        &self,
        object: &K,
        exists: impl Fn(Whereabouts<'_>) -> bool,
    ) {
        let mut table = self.lock();
        let entry = table.entry(object, &exists);
        entry.terminal = Some(terminal_fingerprint(object));
        entry.retries = 0;
        table.drop_if_gone(object, &exists);
    }

    /// Whether `object`'s last pass failed terminally and the object has not changed since in
    /// anything a [`terminal_fingerprint`] covers.
    pub(super) fn is_held_terminal<K: Resource>(&self, object: &K) -> bool {
        let held = self
            .lock()
            .entries
            .get(key(object).as_ref())
            .and_then(|entry| entry.terminal);
        held.is_some_and(|held| held == terminal_fingerprint(object))
    }

    /// Something `object` depends on changed (a related object, a child): a hold after its
    /// terminal failure ends, and its next pass runs.
    pub(super) fn release_terminal_hold<K: Resource>(&self, object: &K) {
        if let Some(entry) = self.lock().entries.get_mut(key(object).as_ref()) {
            entry.terminal = None;
        }
    }

    /// The objects held after a terminal failure, read under one lock (for a whole scrape).
    #[cfg(feature = "prometheus")]
    pub(super) fn terminal_failures(&self) -> TerminalFailures {
        TerminalFailures(
            self.lock()
                .entries
                .iter()
                .filter_map(|(uid, entry)| Some((uid.clone(), entry.terminal?)))
                .collect(),
        )
    }

    /// `object`'s pass succeeded: its next retry is a first attempt again, and a terminal failure
    /// is over.
    pub(super) fn succeeded<K: Resource>(&self, object: &K) {
        let mut table = self.lock();
        let key = key(object);
        if let Some(entry) = table.entries.get_mut(key.as_ref()) {
            entry.terminal = None;
        }
        match table.entries.get_mut(key.as_ref()) {
            Some(entry) if entry.keeps() => entry.retries = 0,
            Some(_) => {
                table.entries.remove(key.as_ref());
            }
            None => {}
        }
    }

    /// `object`'s cleanup finished: a retry of its finalizer removal does not run it again.
    pub(super) fn cleaned_up<K: Resource>(
        &self,
        object: &K,
        exists: impl Fn(Whereabouts<'_>) -> bool,
    ) {
        let mut table = self.lock();
        table.entry(object, &exists).cleaned_up = true;
        table.drop_if_gone(object, &exists);
    }

    /// Whether `object`'s cleanup already finished.
    pub(super) fn is_cleaned_up<K: Resource>(&self, object: &K) -> bool {
        self.lock()
            .entries
            .get(key(object).as_ref())
            .is_some_and(|entry| entry.cleaned_up)
    }

    /// This controller removed its finalizer from `object`: cleanup is done for good.
    pub(super) fn finalized<K: Resource>(
        &self,
        object: &K,
        exists: impl Fn(Whereabouts<'_>) -> bool,
    ) {
        let mut table = self.lock();
        let entry = table.entry(object, &exists);
        entry.finalized = true;
        entry.retries = 0;
        table.drop_if_gone(object, &exists);
    }

    /// Whether this controller already removed its finalizer from `object`.
    pub(super) fn is_finalized<K: Resource>(&self, object: &K) -> bool {
        self.lock()
            .entries
            .get(key(object).as_ref())
            .is_some_and(|entry| entry.finalized)
    }

    /// Records that a status write stored a new version over `read`, the version the pass read.
    pub(super) fn wrote<K: Resource>(&self, read: &K, exists: impl Fn(Whereabouts<'_>) -> bool) {
        let mut table = self.lock();
        let entry = table.entry(read, &exists);
        entry.superseded = read.resource_version();
        entry.superseded_at = Some(tokio::time::Instant::now());
        table.drop_if_gone(read, &exists);
    }

    /// Records what `object`'s last stored status write became: `Some` when the server stored
    /// something other than what was sent, `None` (forgetting an earlier record) when it stored
    /// what was sent.
    pub(super) fn normalised<K: Resource>(
        &self,
        object: &K,
        normalised: Option<Normalised>,
        exists: impl Fn(Whereabouts<'_>) -> bool,
    ) {
        let mut table = self.lock();
        match normalised {
            Some(normalised) => table.entry(object, &exists).normalised = Some(normalised),
            None => match table.entries.get_mut(key(object).as_ref()) {
                Some(entry) => entry.normalised = None,
                None => return,
            },
        }
        table.drop_if_gone(object, &exists);
    }

    /// Whether sending the status of fingerprint `sent` to `object`, whose stored status has the
    /// fingerprint `stored()`, is a write the server already made into what it holds.
    pub(super) fn is_normalised_repeat<K: Resource>(
        &self,
        object: &K,
        sent: u64,
        stored: impl FnOnce() -> u64,
    ) -> bool {
        let last = self
            .lock()
            .entries
            .get(key(object).as_ref())
            .and_then(|entry| entry.normalised);
        last.is_some_and(|last| last.sent == sent && last.stored == stored())
    }

    /// Records that `object`'s status write `unresolved` may have been stored or not (its answer
    /// and its read-back were lost): the next pass resolves it ([`ObjectMemory::take_unresolved`]).
    pub(super) fn unresolved<K: Resource>(
        &self,
        object: &K,
        unresolved: Unresolved,
        exists: impl Fn(Whereabouts<'_>) -> bool,
    ) {
        let mut table = self.lock();
        table.entry(object, &exists).unresolved = Some(unresolved);
        table.drop_if_gone(object, &exists);
    }

    /// Whether a status write of `object` is not known to have been stored.
    pub(super) fn has_unresolved<K: Resource>(&self, object: &K) -> bool {
        self.lock()
            .entries
            .get(key(object).as_ref())
            .is_some_and(|entry| entry.unresolved.is_some())
    }

    /// The status write of `object` not known to have been stored, if any: taken, for the pass
    /// to read it back (and to record it again if that fails too).
    pub(super) fn take_unresolved<K: Resource>(&self, object: &K) -> Option<Unresolved> {
        self.lock()
            .entries
            .get_mut(key(object).as_ref())
            .and_then(|entry| entry.unresolved.take())
    }

    /// The controller observed `object` deleted (its watch's delete event): forgets it, except
    /// that this controller removed its finalizer. That mark outlives the delete event until the
    /// next sweep: kube-runtime may have started a pass on the cached version from before the
    /// removal just before the delete reached the cache, and that pass must still find the mark
    /// (or it would run cleanup again on an object that is gone).
    pub(super) fn forget<K: Resource>(&self, object: &K) {
        let mut table = self.lock();
        let key = key(object);
        match table.entries.get_mut(key.as_ref()) {
            Some(entry) if entry.finalized => {
                entry.retries = 0;
                entry.cleaned_up = false;
                entry.superseded = None;
                entry.normalised = None;
                entry.terminal = None;
                entry.unresolved = None;
            }
            _ => {
                table.entries.remove(key.as_ref());
            }
        }
    }

    /// Forgets every object that `exists` no longer finds: after a relist, which has no delete
    /// events for the objects deleted while the watch was down.
    pub(super) fn sweep(&self, exists: impl Fn(Whereabouts<'_>) -> bool) {
        self.lock().sweep(&exists);
    }

    /// How long ago the status write that replaced `object` was stored, if `object` is the
    /// version it replaced (the cache is behind).
    pub(super) fn superseded_for<K: Resource>(&self, object: &K) -> Option<std::time::Duration> {
        let version = object.resource_version()?;
        self.lock()
            .entries
            .get(key(object).as_ref())
            .filter(|entry| entry.superseded.as_deref() == Some(&*version))
            .and_then(|entry| entry.superseded_at)
            .map(|at| at.elapsed())
    }

    /// Whether `object` is the version a stored status write replaced: the cache is behind.
    pub(super) fn is_superseded<K: Resource>(&self, object: &K) -> bool {
        let Some(version) = object.resource_version() else {
            return false;
        };
        self.lock()
            .entries
            .get(key(object).as_ref())
            .is_some_and(|entry| entry.superseded.as_deref() == Some(&*version))
    }

    /// A pass starts from `object`, newer than any replaced version: forgets that version (and
    /// the entry, if nothing else is remembered).
    pub(super) fn caught_up<K: Resource>(&self, object: &K) {
        let mut table = self.lock();
        let key = key(object);
        if let Some(entry) = table.entries.get_mut(key.as_ref()) {
            entry.superseded = None;
            if entry.retries == 0 && !entry.keeps() {
                table.entries.remove(key.as_ref());
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Table {
    /// Drops the entries of objects `exists` does not find.
    fn sweep(&mut self, exists: &impl Fn(Whereabouts<'_>) -> bool) {
        self.entries.retain(|uid, entry| {
            exists(Whereabouts {
                namespace: entry.namespace.as_deref(),
                name: &entry.name,
                uid,
            })
        });
        self.sweep_at = MIN_SWEEP.max(self.entries.len() * 2);
    }

    /// Drops the entry of `object` if `exists` does not find it: its delete event came already,
    /// so nothing would ever drop it but a sweep.
    fn drop_if_gone<K: Resource>(&mut self, object: &K, exists: &impl Fn(Whereabouts<'_>) -> bool) {
        let key = key(object);
        let gone = !exists(Whereabouts {
            namespace: object.meta().namespace.as_deref(),
            name: object.meta().name.as_deref().unwrap_or_default(),
            uid: &key,
        });
        if gone {
            self.entries.remove(key.as_ref());
        }
    }

    /// The entry of `object`, created (after a sweep, if the table has doubled) if absent.
    fn entry<K: Resource>(
        &mut self,
        object: &K,
        exists: &impl Fn(Whereabouts<'_>) -> bool,
    ) -> &mut Entry {
        let key = key(object);
        if !self.entries.contains_key(key.as_ref()) && self.entries.len() >= self.sweep_at {
            self.sweep(exists);
        }
        self.entries
            .entry(key.into_owned())
            .or_insert_with(|| Entry {
                namespace: object.namespace(),
                name: object.name_any(),
                retries: 0,
                cleaned_up: false,
                finalized: false,
                superseded: None,
                superseded_at: None,
                normalised: None,
                terminal: None,
                unresolved: None,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    impl ObjectMemory {
        /// How many objects are remembered.
        pub(crate) fn len(&self) -> usize {
            self.lock().entries.len()
        }
    }

    fn object(name: &str, uid: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("demo".into()),
                uid: Some(uid.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn everything_exists(_: Whereabouts<'_>) -> bool {
        true
    }

    #[test]
    fn retries_count_per_uid_and_reset_on_success() {
        let memory = ObjectMemory::default();
        let old = object("web", "uid-1");
        assert_eq!(memory.retry(&old, everything_exists), 1);
        assert_eq!(memory.retry(&old, everything_exists), 2);
        // A new object of the same name is a stranger.
        let new = object("web", "uid-2");
        assert_eq!(memory.retry(&new, everything_exists), 1);
        memory.succeeded(&old);
        assert_eq!(memory.retry(&old, everything_exists), 1);
        assert_eq!(memory.len(), 2);
    }

    fn at_version(mut object: ConfigMap, version: &str) -> ConfigMap {
        object.metadata.resource_version = Some(version.into());
        object
    }

    #[test]
    fn a_replaced_version_is_superseded_until_a_pass_sees_a_newer_one() {
        let memory = ObjectMemory::default();
        let read = at_version(object("web", "uid-1"), "10");
        memory.wrote(&read, everything_exists);
        // The pass that wrote succeeds: the replaced version is still remembered.
        memory.succeeded(&read);
        assert!(memory.is_superseded(&read));
        assert!(!memory.is_superseded(&at_version(object("web", "uid-1"), "11")));
        // Another object of the same name is a stranger.
        assert!(!memory.is_superseded(&at_version(object("web", "uid-2"), "10")));
        memory.caught_up(&at_version(object("web", "uid-1"), "11"));
        assert!(!memory.is_superseded(&read));
        assert_eq!(memory.len(), 0, "nothing else was remembered");
    }

    #[test]
    fn a_finished_cleanup_is_remembered_through_retries_and_catching_up_until_deletion() {
        let memory = ObjectMemory::default();
        let deleting = at_version(object("web", "uid-1"), "10");
        memory.cleaned_up(&deleting, everything_exists);
        // The finalizer removal failed: retried, then the cache catches up with a newer version.
        assert_eq!(memory.retry(&deleting, everything_exists), 1);
        memory.caught_up(&at_version(object("web", "uid-1"), "11"));
        memory.succeeded(&deleting);
        assert!(memory.is_cleaned_up(&deleting));
        assert!(!memory.is_cleaned_up(&object("web", "uid-2")), "a stranger");
        memory.forget(&deleting);
        assert!(!memory.is_cleaned_up(&deleting));
        assert_eq!(memory.len(), 0);
    }

    #[test]
    fn a_finalized_object_is_remembered_until_it_leaves_the_cache() {
        let memory = ObjectMemory::default();
        let gone = object("web", "uid-1");
        assert!(!memory.is_finalized(&gone));
        memory.finalized(&gone, everything_exists);
        memory.succeeded(&gone);
        assert!(memory.is_finalized(&gone), "a success does not forget it");
        memory.forget(&gone);
        assert!(
            memory.is_finalized(&gone),
            "nor its delete event: a pass on the version before the removal may be under way"
        );
        for i in 1..MIN_SWEEP {
            memory.retry(
                &object(&format!("o{i}"), &format!("uid-o{i}")),
                everything_exists,
            );
        }
        // All of them left the cache (their delete events missed): the next entry sweeps.
        let nothing_exists = |_: Whereabouts<'_>| false;
        memory.retry(&object("next", "uid-next"), nothing_exists);
        assert!(!memory.is_finalized(&gone), "swept with the others");
        assert_eq!(memory.len(), 0);
    }

    #[test]
    fn entries_of_objects_no_longer_cached_are_swept_when_the_table_doubles() {
        let memory = ObjectMemory::default();
        for i in 0..MIN_SWEEP {
            let uid = if i < 10 {
                format!("live-{i}")
            } else {
                format!("deleted-{i}")
            };
            memory.retry(&object(&format!("o{i}"), &uid), everything_exists);
        }
        assert_eq!(memory.len(), MIN_SWEEP, "no sweep below the threshold");
        // Then all but 10 are deleted, their events missed: the next new entry sweeps, and only
        // the 10 live objects stay, plus the new one.
        let live = |w: Whereabouts<'_>| w.uid.starts_with("live");
        memory.retry(&object("next", "live-next"), live);
        assert_eq!(memory.len(), 11);
    }

    #[test]
    fn an_object_observed_deleted_is_forgotten_at_once_but_for_a_finalizer_it_removed() {
        let memory = ObjectMemory::default();
        let web = at_version(object("web", "uid-1"), "10");
        memory.retry(&web, everything_exists);
        memory.wrote(&web, everything_exists);
        let db = object("db", "uid-2");
        memory.retry(&db, everything_exists);
        memory.finalized(&db, everything_exists);
        memory.retry(&object("api", "uid-3"), everything_exists);
        memory.forget(&web);
        assert!(!memory.is_superseded(&web));
        assert_eq!(
            memory.retry(&web, everything_exists),
            1,
            "its backoff is gone"
        );
        memory.forget(&web);
        memory.forget(&db);
        assert!(
            memory.is_finalized(&db),
            "kept for a pass started before the delete"
        );
        assert_eq!(
            memory.retry(&db, everything_exists),
            1,
            "but nothing else of it"
        );
        memory.sweep(|w| w.uid == "uid-3");
        assert!(!memory.is_finalized(&db), "the next sweep drops it");
        assert_eq!(memory.len(), 1, "only the live object");
    }

    #[test]
    fn a_relist_forgets_the_objects_deleted_while_the_watch_was_down() {
        let memory = ObjectMemory::default();
        memory.retry(&object("web", "uid-1"), everything_exists);
        memory.finalized(&object("db", "uid-2"), everything_exists);
        memory.sweep(|w| w.uid == "uid-1");
        assert_eq!(memory.len(), 1);
        assert_eq!(memory.retry(&object("web", "uid-1"), everything_exists), 2);
    }

    #[test]
    fn a_pass_ending_after_its_objects_delete_event_leaves_nothing_behind() {
        let memory = ObjectMemory::default();
        let nothing_exists = |_: Whereabouts<'_>| false;
        let gone = at_version(object("web", "uid-1"), "10");
        assert_eq!(memory.retry(&gone, nothing_exists), 1);
        memory.finalized(&gone, nothing_exists);
        memory.wrote(&gone, nothing_exists);
        assert_eq!(memory.len(), 0);
    }
}
