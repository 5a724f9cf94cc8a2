//! [`Context`]: the state every pass of one controller shares.

use std::sync::Arc;

use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Resource, ResourceExt};
use tokio::sync::watch;

use super::Reconciler;
use super::effects::Effects;
use super::in_doubt::Writer;
use super::memory::{ObjectMemory, Whereabouts};
use crate::clock::SharedClock;
use crate::events::EventRecorder;
use crate::observe::Observers;
use crate::relations::RelationCaches;

/// What a controller's passes share.
pub(super) struct Context<R: Reconciler> {
    pub(super) reconciler: R,
    pub(super) client: kube::Client,
    pub(super) name: Arc<str>,
    pub(super) observers: Observers,
    pub(super) recorder: Option<EventRecorder>,
    pub(super) clock: SharedClock,
    /// The bound of each request of a status write or finalizer patch (and of its read-back).
    pub(super) status_timeout: std::time::Duration,
    /// How long the reconciler may take in one pass before the pass is abandoned.
    pub(super) reconcile_timeout: std::time::Duration,
    /// Per-object retries (the backoff) and finalized objects, by uid.
    pub(super) memory: ObjectMemory,
    /// The passes' effect units still running (awaited by shutdown before the final flush).
    pub(super) effects: Effects,
    /// The cache of the current watch term, if one runs.
    pub(super) cache: watch::Receiver<Option<Store<R::Resource>>>,
    /// With leader election: writes are sent only while it is open.
    pub(super) fence: Option<crate::leader::Fence>,
    /// The kinds watched beside the resource.
    pub(super) relations: crate::relations::Relations<R::Resource>,
    /// What passes write children with (all but the owner reference, which is each pass's).
    pub(super) children: Arc<ChildContext>,
    /// The objects whose change was seen and whose pass has not started.
    pub(super) queue: Arc<super::queue::Queue>,
    /// Whether a pass that stores a transition and awaits a change is run again at once
    /// (see [`Reads`](super::Reads)): when the controller's own status writes start no pass.
    pub(super) follow_up_transitions: bool,
    /// Whether the resource's status type was found to drop `observedGeneration` (said once).
    pub(super) observed_generation_dropped: std::sync::atomic::AtomicBool,
}

/// What every pass of a controller writes children with.
#[derive(Debug)]
pub(super) struct ChildContext {
    /// The field manager of server-side applies: the controller's name.
    pub(super) field_manager: Arc<str>,
    /// The controller's name as the value of [`CONTROLLER_LABEL`](crate::children::CONTROLLER_LABEL).
    pub(super) label_value: Arc<str>,
    /// The relations' caches, read by passes and told of their child writes.
    pub(super) caches: Arc<RelationCaches>,
}

impl ChildContext {
    /// For the controller named `name` with `relations`.
    pub(super) fn new<K: kube::Resource<DynamicType = ()> + Clone + 'static>(
        name: &Arc<str>,
        relations: &crate::relations::Relations<K>,
    ) -> Self {
        Self {
            field_manager: name.clone(),
            label_value: crate::children::controller_label_value(name).into(),
            caches: Arc::new(RelationCaches::of(relations)),
        }
    }
}

impl<R: Reconciler> Context<R> {
    /// The writer of the children of `object`, for its pass.
    pub(super) fn child_writer(
        &self,
        object: &R::Resource,
    ) -> Option<crate::children::ChildWriter> {
        let mut owner = object.controller_owner_ref(&())?;
        owner.block_owner_deletion = Some(true);
        Some(crate::children::ChildWriter {
            client: self.client.clone(),
            field_manager: self.children.field_manager.clone(),
            label_value: self.children.label_value.clone(),
            caches: self.children.caches.clone(),
            owner,
            namespace: object.namespace(),
            observers: self.observers.clone(),
            timeout: self.status_timeout,
        })
    }

    /// Whether the object at `whereabouts` is still in the cache (as the same object: same uid).
    /// Without a cache (between watch terms), every object counts as present.
    pub(super) fn cached(&self, whereabouts: Whereabouts<'_>) -> bool {
        let Some(store) = self.cache.borrow().clone() else {
            return true;
        };
        let mut reference = ObjectRef::new(whereabouts.name);
        if let Some(namespace) = whereabouts.namespace {
            reference = reference.within(namespace);
        }
        store
            .get(&reference)
            .is_some_and(|object| object.uid().as_deref() == Some(whereabouts.uid))
    }

    /// The [`Writer`] of this controller's writes about an object, `observed_gone` telling
    /// whether its watch observed that object deleted ([`Self::observed_gone`]).
    pub(super) fn writer<'a>(
        &'a self,
        observed_gone: &'a (dyn Fn() -> bool + Send + Sync),
    ) -> Writer<'a> {
        Writer {
            client: &self.client,
            timeout: self.status_timeout,
            observed_gone,
            fence: self.fence.as_ref(),
        }
    }

    /// Whether the watch observed `object` deleted: the cache of the current watch term, once
    /// it has listed the objects, no longer holds it (as the same object). `false` between watch
    /// terms, while the cache is still listing (it does not hold every object yet), and for an
    /// object without a uid.
    pub(super) fn observed_gone(&self, object: &R::Resource) -> bool {
        use futures::FutureExt;
        let Some(uid) = object.uid() else {
            return false;
        };
        let listed = self
            .cache
            .borrow()
            .as_ref()
            .is_some_and(|store| store.wait_until_ready().now_or_never().is_some());
        if !listed {
            return false;
        }
        let name = object.name_any();
        let namespace = object.namespace();
        !self.cached(Whereabouts {
            namespace: namespace.as_deref(),
            name: &name,
            uid: &uid,
        })
    }
}
