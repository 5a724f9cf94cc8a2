//! Which watch events of the resource start a pass.
//!
//! By default ([`Starts::RelevantChanges`],
//! [`Controller::with_relevant_changes`](super::Controller::with_relevant_changes)) an event
//! starts a pass only when it changes what a reconciler acts on: the spec (`metadata.generation`), the finalizers, the deletion timestamp,
//! or the labels and annotations the reconciler reads ([`Reconciler::READS`](super::Reconciler::READS):
//! all of them unless it declares which). A status write — the controller's own, or anyone
//! else's — and a change of managedFields or ownerReferences start none: that is
//! controller-runtime's `GenerationChangedPredicate` joined with its label and annotation
//! predicates, derived from the declaration. An object without a generation (most built-in
//! kinds: a ConfigMap has no spec) has nothing to tell its spec from the rest by: each change
//! of its resourceVersion starts a pass. With
//! [`Controller::with_every_change`](super::Controller::with_every_change)
//! ([`Starts::EveryChange`]) every change of an object starts one (not a relist's event of an
//! object that did not move).
//!
//! A reconciler that makes a transition and returns `Action::await_change()` still sees its next
//! stage: a pass that stores a transition and awaits a change is run once more at once, as its
//! own write's watch event would have run it (a condition that moves one reason per pass goes
//! on). A pass that only restates its status, or asks for its own requeue, gets no such pass.
//!
//! A relist (after a watch expired) starts no pass for an object that did not change that way
//! either; the first list of each watch term starts one for every object.
//! [`Controller::with_every_watch_event`](super::Controller::with_every_watch_event) gives
//! kube-runtime's behaviour (relists too).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::{Hash, Hasher};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::runtime::watcher;

/// The labels and annotations of its objects a reconciler reads: a change of one of them starts
/// a pass (`#[reconciler(reads(labels("team"), annotations("example.com/approved")))]`).
///
/// ```
/// use kubeward::controller::{Keys, Reads};
/// const READS: Reads = Reads {
///     labels: Keys::Only(&[]),
///     annotations: Keys::Only(&["demo.kubeward.dev/approved-generation"]),
/// };
/// assert_ne!(READS, Reads::ALL);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// The labels read.
    pub labels: Keys,
    /// The annotations read.
    pub annotations: Keys,
}

impl Reads {
    /// Every label and annotation: what a reconciler that declares nothing reads, so that no
    /// change it may act on is missed.
    pub const ALL: Reads = Reads {
        labels: Keys::All,
        annotations: Keys::All,
    };
}

/// Which keys of a label or annotation map are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keys {
    /// Every key.
    All,
    /// These keys alone.
    Only(&'static [&'static str]),
}

impl Keys {
    fn hash_selected(self, map: Option<&BTreeMap<String, String>>, hasher: &mut impl Hasher) {
        match self {
            Keys::All => map.hash(hasher),
            Keys::Only(keys) => {
                for key in keys {
                    map.and_then(|m| m.get(*key)).hash(hasher);
                }
            }
        }
    }
}

/// The version of an object that is its resourceVersion (hashed): every change moves it.
fn resource_version(meta: &ObjectMeta) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    meta.resource_version.hash(&mut hasher);
    hasher.finish()
}

/// What a watch last saw of each object (by uid), as a version: whether an event is news.
/// Objects a relist no longer lists are forgotten at its end (their deletion is the controller
/// loop's to see, through its cache).
#[derive(Debug, Default)]
struct Seen {
    versions: HashMap<String, u64>,
    /// The uids listed so far by the relist under way.
    listing: Option<HashSet<String>>,
}

impl Seen {
    /// Records `version` of the object of `meta`; whether it is news.
    fn observe(&mut self, meta: &ObjectMeta, version: u64) -> bool {
        let uid = meta.uid.clone().unwrap_or_default();
        if let Some(listing) = &mut self.listing {
            listing.insert(uid.clone());
        }
        self.versions.insert(uid, version) != Some(version)
    }

    fn forget(&mut self, meta: &ObjectMeta) {
        self.versions
            .remove(meta.uid.as_deref().unwrap_or_default());
    }

    /// Follows the start and end of a relist; whether `event` was one of them.
    fn follow_relist<K>(&mut self, event: &watcher::Event<K>) -> bool {
        match event {
            watcher::Event::Init => self.listing = Some(HashSet::new()),
            watcher::Event::InitDone => {
                if let Some(listed) = self.listing.take() {
                    self.versions.retain(|uid, _| listed.contains(uid));
                }
            }
            _ => return false,
        }
        true
    }
}

/// The version of an object as [`Starts::RelevantChanges`] sees it: what of it `reads` covers
/// (hashed), or its resourceVersion when it has no generation.
pub(crate) fn relevant_version(meta: &ObjectMeta, reads: &Reads) -> u64 {
    let Some(generation) = meta.generation else {
        return resource_version(meta);
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    generation.hash(&mut hasher);
    meta.deletion_timestamp.is_some().hash(&mut hasher);
    meta.finalizers.hash(&mut hasher);
    reads
        .labels
        .hash_selected(meta.labels.as_ref(), &mut hasher);
    reads
        .annotations
        .hash_selected(meta.annotations.as_ref(), &mut hasher);
    hasher.finish()
}

/// Which watch events of the resource start a pass; see the [module](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Starts {
    /// Every one, relists included ([`Controller::with_every_watch_event`](super::Controller::with_every_watch_event)).
    EveryEvent,
    /// Every change of resourceVersion ([`Controller::with_every_change`](super::Controller::with_every_change)).
    EveryChange,
    /// A change of what the reconciler reads (the default,
    /// [`Controller::with_relevant_changes`](super::Controller::with_relevant_changes)).
    RelevantChanges,
}

/// Judges the watch events of one watch term: whether each starts a pass.
pub(super) struct Judge {
    starts: Starts,
    reads: Reads,
    /// What the watch last saw of each object, as [`starts`](Self::starts) counts versions.
    seen: Seen,
    /// Whether the term's first list is under way (it starts every object's pass).
    first_list: bool,
}

impl Judge {
    /// For a term whose events start passes as `starts` says, with `reads` what the reconciler
    /// reads.
    pub(super) fn new(starts: Starts, reads: Reads) -> Self {
        Self {
            starts,
            reads,
            seen: Seen::default(),
            first_list: true,
        }
    }

    /// The object whose pass `event` starts, if it starts one. (A deletion starts none here:
    /// the controller loop sees it through its cache.)
    pub(super) fn starts<K: Resource>(&mut self, event: watcher::Event<K>) -> Option<K> {
        if self.starts == Starts::EveryEvent {
            return match event {
                watcher::Event::Apply(object) | watcher::Event::InitApply(object) => Some(object),
                _ => None,
            };
        }
        if self.seen.follow_relist(&event) {
            if matches!(event, watcher::Event::InitDone) {
                self.first_list = false;
            }
            return None;
        }
        match event {
            watcher::Event::Init | watcher::Event::InitDone => None,
            watcher::Event::InitApply(object) if self.first_list => {
                self.seen
                    .observe(object.meta(), self.version(object.meta()));
                Some(object)
            }
            watcher::Event::InitApply(object) | watcher::Event::Apply(object) => {
                let version = self.version(object.meta());
                self.seen.observe(object.meta(), version).then_some(object)
            }
            watcher::Event::Delete(object) => {
                self.seen.forget(object.meta());
                None
            }
        }
    }

    fn version(&self, meta: &ObjectMeta) -> u64 {
        match self.starts {
            Starts::EveryEvent | Starts::EveryChange => resource_version(meta),
            Starts::RelevantChanges => relevant_version(meta, &self.reads),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn object(generation: Option<i64>, version: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("web".into()),
                namespace: Some("demo".into()),
                uid: Some("u1".into()),
                generation,
                resource_version: Some(version.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn listed(judge: &mut Judge, objects: Vec<ConfigMap>) -> usize {
        assert!(judge.starts(watcher::Event::<ConfigMap>::Init).is_none());
        let started = objects
            .into_iter()
            .filter_map(|o| judge.starts(watcher::Event::InitApply(o)))
            .count();
        assert!(
            judge
                .starts(watcher::Event::<ConfigMap>::InitDone)
                .is_none()
        );
        started
    }

    #[test]
    fn only_a_change_of_what_the_reconciler_reads_starts_a_pass() {
        let reads = Reads {
            labels: Keys::Only(&["team"]),
            annotations: Keys::Only(&["approved"]),
        };
        let mut judge = Judge::new(Starts::RelevantChanges, reads);
        assert_eq!(
            listed(&mut judge, vec![object(Some(1), "1")]),
            1,
            "the first list starts every pass"
        );
        let mut changed = |edit: &dyn Fn(&mut ConfigMap), version: &str| {
            let mut o = object(Some(1), version);
            edit(&mut o);
            judge.starts(watcher::Event::Apply(o)).is_some()
        };
        assert!(!changed(&|_| {}, "2"), "a status write: same generation");
        assert!(
            !changed(
                &|o| {
                    o.metadata.labels = Some([("other".into(), "x".into())].into());
                },
                "3"
            ),
            "a label not read"
        );
        assert!(
            changed(
                &|o| {
                    o.metadata.labels = Some([("team".into(), "a".into())].into());
                },
                "4"
            ),
            "a label read"
        );
        assert!(
            changed(
                &|o| {
                    o.metadata.labels = Some([("team".into(), "a".into())].into());
                    o.metadata.annotations = Some([("approved".into(), "1".into())].into());
                },
                "5"
            ),
            "an annotation read"
        );
        assert!(
            changed(
                &|o| {
                    o.metadata.labels = Some([("team".into(), "a".into())].into());
                    o.metadata.annotations = Some([("approved".into(), "1".into())].into());
                    o.metadata.finalizers = Some(vec!["f".into()]);
                },
                "6"
            ),
            "the finalizers"
        );
        assert!(
            changed(
                &|o| {
                    o.metadata.generation = Some(2);
                    o.metadata.labels = Some([("team".into(), "a".into())].into());
                    o.metadata.annotations = Some([("approved".into(), "1".into())].into());
                    o.metadata.finalizers = Some(vec!["f".into()]);
                },
                "7"
            ),
            "the spec (generation)"
        );
    }

    #[test]
    fn every_label_and_annotation_counts_unless_declared() {
        let mut judge = Judge::new(Starts::RelevantChanges, Reads::ALL);
        listed(&mut judge, vec![object(Some(1), "1")]);
        let mut labelled = object(Some(1), "2");
        labelled.metadata.annotations = Some([("any".into(), "x".into())].into());
        assert!(judge.starts(watcher::Event::Apply(labelled)).is_some());
    }

    #[test]
    fn an_object_without_generation_starts_a_pass_on_every_change() {
        let mut judge = Judge::new(Starts::RelevantChanges, Reads::ALL);
        listed(&mut judge, vec![object(None, "1")]);
        assert!(
            judge
                .starts(watcher::Event::Apply(object(None, "2")))
                .is_some()
        );
        assert!(
            judge
                .starts(watcher::Event::Apply(object(None, "2")))
                .is_none()
        );
    }

    #[test]
    fn a_relist_starts_no_pass_for_what_did_not_change_unless_every_event_is_asked_for() {
        for (starts, on_relist) in [
            (Starts::RelevantChanges, 0),
            (Starts::EveryChange, 1),
            (Starts::EveryEvent, 2),
        ] {
            let mut judge = Judge::new(starts, Reads::ALL);
            assert_eq!(listed(&mut judge, vec![object(Some(1), "1")]), 1);
            // Relisted: once unchanged but for a status write (a new resourceVersion), once
            // exactly as before.
            let relisted = listed(&mut judge, vec![object(Some(1), "2")])
                + listed(&mut judge, vec![object(Some(1), "2")]);
            assert_eq!(relisted, on_relist, "{starts:?}");
        }
    }
}
