//! [`SharedWatches`]: one watch, and one cache, for every controller of an operator that watches
//! the same thing — controller-runtime's shared informers, kube-runtime's shared reflector. The
//! `Operator` (feature `prometheus`) gives each controller it runs its set; a controller run on
//! its own watches alone.
//!
//! A watch is *the same* when its kind, the form it is served in (a typed resource, a dynamic
//! object, or metadata only), its namespace (or the whole cluster) and its
//! [`watcher::Config`] (selectors included) are: two controllers reconciling ConfigMaps, or both
//! owning Secrets (watched metadata-only), share one list-and-watch and one cache. A controller's
//! typed watch of ConfigMaps and another's metadata-only watch of owned ConfigMaps stay apart, as
//! controller-runtime keeps its typed and metadata informers apart.
//!
//! Only a watch declared by two controllers or more is shared; one declared once runs as the
//! controller's own (no cache is kept for a relation's watch that nobody shares). A shared
//! watch starts with its first subscriber and stops once the last is gone (a cold standby
//! watches nothing); a subscriber that comes while it runs gets what it missed as a relist —
//! `Init`, every cached object, `InitDone` — then the live events, so each controller sees the
//! protocol of a watch of its own. A subscriber that keeps up gets every event; one that falls
//! behind gets each object's latest event and every relist still in order, from a queue bounded
//! by the objects (see [Queues](#queues)); none holds up the watch for the others. The watch's
//! list and watch failures are reported to each of them.
//!
//! Only controllers on the operator's own client share watches (the `Operator` keeps one set for
//! them): a controller with a client of its own, of another cluster or identity, watches alone,
//! so that no controller sees another cluster's objects or lists with another's grant.

//! Why not kube-runtime's shared reflector (`reflector::store_shared`, `Writer::subscribe`):
//! it is behind the `unstable-runtime-subscribe` feature, a subscriber gets only applied and
//! deleted objects (`ReflectHandle`, no `Init`/`InitDone`), and a late subscriber is fast-
//! forwarded to the latest event with no replay. The relation caches diff each relist against
//! what they hold ([`RelationCache`](crate::relations::RelationCache)) and so need the relist's
//! boundaries, and a warm standby or a new term subscribes late. Like it, the hub hands every
//! subscriber the same `Arc` of an object (a replay too: no object is copied for a subscriber);
//! unlike it, a slow subscriber never holds up the others: kube's subscribers read one bounded
//! broadcast buffer, and a full one stops the reflector (and so every subscriber) until the
//! slowest reads.
//!
//! # Queues
//!
//! Each subscriber has a queue of its own, which the watch pushes to without ever waiting, and
//! which coalesces per object as client-go's work queue does (its `DeltaFIFO` keeps every delta;
//! the work queue behind it keeps a key once): an object's event replaces the one of it still
//! pending, in the place of the first, so a subscriber that falls behind then takes each object's
//! latest state rather than its history. That is all a level-triggered consumer needs — the
//! controller reconciles from the cache, which is the watch's and always current, and a relation
//! compares versions — and it bounds the queue by the objects rather than by their changes,
//! where a bounded channel would have to block the watch (for every subscriber) or drop events
//! (and so states) when full, and an unbounded one grows with a stuck subscriber's backlog.
//!
//! The relists' markers keep their order with the objects' events, since consumers (the relation
//! caches, the predicates' versions) take `InitDone` as "what this list did not list since `Init`
//! is gone" (see [`Pending`] for how each event coalesces):
//! - an `Init` ends whatever is pending: the list it starts says all of it again (what the
//!   subscriber sees is then what its own watch shows when it relists, or restarts a failed
//!   list);
//! - an object listed by a pending list stays listed before its `InitDone`: a later change of it
//!   updates the listed object in place, a later delete queues after the `InitDone` (the list
//!   ends with the object there, then it goes), so the end of the list diffs as it would have;
//! - a delete is never folded into a create of another object of the same name: the key of an
//!   object is its namespace, name *and uid*.
//!
//! The bound: at most one pending event per object (a deleted one's delete included, until it is
//! taken), two for an object both listed by a pending list and deleted since, and two markers
//! (an `Init`, and an `InitDone`).

// Only the operator (feature `prometheus`) declares shared watches.
#![cfg_attr(not(feature = "prometheus"), allow(dead_code))]

use std::any::{Any, TypeId};
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use kube::Resource;
use kube::core::ApiResource;
use kube::runtime::reflector::{Store, store::Writer};
use kube::runtime::watcher::{self, Event};
use tokio::sync::{Notify, mpsc};

/// The watches the controllers of one operator share; cheap to clone (clones are one set).
/// Every controller declares its watches before any runs
/// ([`Controller::with_shared_watches`](crate::controller::Controller::with_shared_watches)).
#[derive(Clone, Default)]
pub(crate) struct SharedWatches {
    entries: Arc<Mutex<Vec<Entry>>>,
}

impl std::fmt::Debug for SharedWatches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = lock(&self.entries);
        f.debug_list()
            .entries(entries.iter().map(|e| (&e.key, e.uses)))
            .finish()
    }
}

/// One watch declared by controllers: how many declared it, and its hub once one subscribed.
struct Entry {
    key: WatchKey,
    uses: usize,
    /// An `Arc<Hub<D>>` for the `D` of the key.
    hub: Option<Arc<dyn Any + Send + Sync>>,
}

/// What makes two watches the same one.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct WatchKey {
    /// The type the objects are served as (typed, dynamic, or metadata only).
    served_as: TypeId,
    group: String,
    version: String,
    plural: String,
    /// `None`: the whole cluster.
    namespace: Option<String>,
    config: watcher::Config,
}

impl WatchKey {
    /// The watch of `resource` served as `D`, in `namespace` (`None`: the whole cluster), with
    /// `config`.
    pub(crate) fn new<D: 'static>(
        resource: &ApiResource,
        namespace: Option<&str>,
        config: &watcher::Config,
    ) -> Self {
        Self {
            served_as: TypeId::of::<D>(),
            group: resource.group.clone(),
            version: resource.version.clone(),
            plural: resource.plural.clone(),
            namespace: namespace.map(str::to_owned),
            config: config.clone(),
        }
    }

    /// The same watch in `namespace` (`None`: the whole cluster).
    pub(crate) fn in_namespace(mut self, namespace: Option<&str>) -> Self {
        self.namespace = namespace.map(str::to_owned);
        self
    }

    /// The same watch with `config`.
    pub(crate) fn with_config(mut self, config: watcher::Config) -> Self {
        self.config = config;
        self
    }

    /// How the watch lists and watches.
    pub(crate) fn config(&self) -> &watcher::Config {
        &self.config
    }
}

/// Where a shared watch reports its list and watch failures, for each subscriber.
pub(crate) type ErrorSink = Arc<dyn Fn(&watcher::Error) + Send + Sync>;

/// A watch's events, each applied to the watch's cache first.
pub(crate) type WatchEvents<D> = BoxStream<'static, Result<Event<D>, watcher::Error>>;

/// Starts the watch of a hub (each time it starts): retried with backoff, transformed as the
/// objects should be cached.
type MakeWatch<D> = Box<dyn Fn() -> WatchEvents<D> + Send + Sync>;

impl SharedWatches {
    /// Declares one more use of the watch `key` (a controller that will watch it).
    pub(crate) fn declare(&self, key: WatchKey) {
        let mut entries = lock(&self.entries);
        match entries.iter_mut().find(|e| e.key == key) {
            Some(entry) => entry.uses += 1,
            None => entries.push(Entry {
                key,
                uses: 1,
                hub: None,
            }),
        }
    }

    /// The hub of the watch `key` when two uses of it or more were declared, created with
    /// `make_watch` and `dynamic_type` by the first to ask; `None` for a watch not shared.
    pub(crate) fn hub<D>(
        &self,
        key: &WatchKey,
        dynamic_type: D::DynamicType,
        make_watch: impl Fn() -> WatchEvents<D> + Send + Sync + 'static,
    ) -> Option<Arc<Hub<D>>>
    where
        D: Resource + Clone + Send + Sync + 'static,
        D::DynamicType: Eq + Hash + Clone + Send + Sync,
    {
        let mut entries = lock(&self.entries);
        let entry = entries.iter_mut().find(|e| e.key == *key)?;
        if entry.uses < 2 {
            return None;
        }
        let hub = entry.hub.get_or_insert_with(|| {
            Arc::new(Arc::new(Hub {
                dynamic_type,
                make_watch: Box::new(make_watch),
                running: Mutex::new(None),
            }))
        });
        hub.downcast_ref::<Arc<Hub<D>>>().cloned()
    }
}

/// One shared watch and its cache; see the [module](self).
pub(crate) struct Hub<D: Resource + 'static>
where
    D::DynamicType: Eq + Hash,
{
    dynamic_type: D::DynamicType,
    make_watch: MakeWatch<D>,
    /// The watch while it runs.
    running: Mutex<Option<Running<D>>>,
}

/// A running shared watch: its cache, and where new subscribers are sent.
struct Running<D: Resource + 'static>
where
    D::DynamicType: Eq + Hash,
{
    store: Store<D>,
    requests: mpsc::UnboundedSender<Subscriber<D>>,
}

/// One subscriber of a shared watch: every subscriber is sent the same `Arc` of an object.
struct Subscriber<D> {
    events: QueueIn<D>,
    on_error: ErrorSink,
}

/// `event` with its object behind an `Arc`, to share.
pub(crate) fn shared<D>(event: Event<D>) -> Event<Arc<D>> {
    match event {
        Event::Apply(object) => Event::Apply(Arc::new(object)),
        Event::Delete(object) => Event::Delete(Arc::new(object)),
        Event::InitApply(object) => Event::InitApply(Arc::new(object)),
        Event::Init => Event::Init,
        Event::InitDone => Event::InitDone,
    }
}

/// `event` with its object out of its `Arc`: moved when this was the last holder, else copied.
pub(crate) fn unshared<D: Clone>(event: Event<Arc<D>>) -> Event<D> {
    match event {
        Event::Apply(object) => Event::Apply(Arc::unwrap_or_clone(object)),
        Event::Delete(object) => Event::Delete(Arc::unwrap_or_clone(object)),
        Event::InitApply(object) => Event::InitApply(Arc::unwrap_or_clone(object)),
        Event::Init => Event::Init,
        Event::InitDone => Event::InitDone,
    }
}

/// How often the watch looks for subscribers that are gone (to stop once all are).
const PRUNE_INTERVAL: Duration = Duration::from_secs(1);

impl<D> Hub<D>
where
    D: Resource + Clone + Send + Sync + 'static,
    D::DynamicType: Eq + Hash + Clone + Send + Sync,
{
    /// The watch's cache and its events from now on — the objects already cached first, as a
    /// relist — until the stream is dropped; failures go to `on_error`. Starts the watch if it
    /// does not run.
    pub(crate) fn subscribe(self: &Arc<Self>, on_error: ErrorSink) -> (Store<D>, Received<D>) {
        let (events, received) = queue();
        let subscriber = Subscriber { events, on_error };
        let mut running = lock(&self.running);
        let not_taken = match running.as_ref() {
            Some(watch) => watch.requests.send(subscriber).err().map(|e| e.0),
            None => Some(subscriber),
        };
        if let Some(first) = not_taken {
            *running = Some(self.start(first));
        }
        let store = running
            .as_ref()
            .map(|watch| watch.store.clone())
            .expect("the watch runs: it was just started if it did not");
        (store, received)
    }

    /// Starts the watch with its first subscriber, into a new cache.
    fn start(self: &Arc<Self>, first: Subscriber<D>) -> Running<D> {
        let writer = Writer::new(self.dynamic_type.clone());
        let store = writer.as_reader();
        let (requests, received) = mpsc::unbounded_channel();
        tokio::spawn(self.clone().serve(writer, received, first));
        Running { store, requests }
    }

    /// Runs the watch: applies each event to the cache, then sends it to every live subscriber;
    /// takes in new subscribers; stops once none is left.
    async fn serve(
        self: Arc<Self>,
        mut writer: Writer<D>,
        mut requests: mpsc::UnboundedReceiver<Subscriber<D>>,
        first: Subscriber<D>,
    ) {
        let mut fanout = Fanout {
            live: vec![first],
            waiting: Vec::new(),
            started: false,
            listing: false,
        };
        let mut watch = (self.make_watch)();
        let mut prune = tokio::time::interval(PRUNE_INTERVAL);
        loop {
            tokio::select! {
                Some(subscriber) = requests.recv() => fanout.admit(subscriber, &writer),
                event = watch.next() => match event {
                    Some(Ok(event)) => {
                        writer.apply_watcher_event(&event);
                        fanout.send(shared(event), &writer);
                    }
                    Some(Err(error)) => fanout.failed(&error),
                    None => {
                        tracing::error!("a shared watch ended on its own; restarting it");
                        watch = (self.make_watch)();
                    }
                },
                _ = prune.tick() => fanout.prune(),
            }
            if fanout.is_empty() {
                // Under the lock a new subscriber is sent with: it is either here now, or finds
                // the watch stopped and starts another.
                let mut running = lock(&self.running);
                match requests.try_recv() {
                    Ok(subscriber) => fanout.admit(subscriber, &writer),
                    Err(_) => {
                        *running = None;
                        return;
                    }
                }
            }
        }
    }
}

/// The subscribers of a running watch, and where the watch is in its list.
struct Fanout<D> {
    /// Subscribers that get every event.
    live: Vec<Subscriber<D>>,
    /// Subscribers that came during a list: they get the cache once it is listed.
    waiting: Vec<Subscriber<D>>,
    /// Whether the watch has begun its first list.
    started: bool,
    /// Whether a list is under way (the cache holds the previous one until it ends).
    listing: bool,
}

impl<D> Fanout<D>
where
    D: Resource + Clone,
    D::DynamicType: Eq + Hash + Clone,
{
    /// Takes in `subscriber`: live at once before the first list began; after a list, with a
    /// replay of the cache; during a list, once it ends.
    fn admit(&mut self, subscriber: Subscriber<D>, writer: &Writer<D>) {
        if !self.started {
            self.live.push(subscriber);
        } else if self.listing {
            self.waiting.push(subscriber);
        } else if replay(&subscriber, writer) {
            self.live.push(subscriber);
        }
    }

    /// Sends `event` (applied to the cache) to every live subscriber; admits the waiting ones
    /// when it ends a list.
    fn send(&mut self, event: Event<Arc<D>>, writer: &Writer<D>) {
        match &event {
            Event::Init => (self.started, self.listing) = (true, true),
            Event::InitDone => self.listing = false,
            Event::InitApply(_) | Event::Apply(_) | Event::Delete(_) => {}
        }
        self.live
            .retain(|subscriber| subscriber.events.send(event.clone()));
        if !self.listing {
            for subscriber in std::mem::take(&mut self.waiting) {
                if replay(&subscriber, writer) {
                    self.live.push(subscriber);
                }
            }
        }
    }

    /// Reports `error` to every subscriber.
    fn failed(&self, error: &watcher::Error) {
        for subscriber in self.live.iter().chain(&self.waiting) {
            (subscriber.on_error)(error);
        }
    }

    /// Drops the subscribers that are gone.
    fn prune(&mut self) {
        self.live.retain(|s| !s.events.is_closed());
        self.waiting.retain(|s| !s.events.is_closed());
    }

    fn is_empty(&self) -> bool {
        self.live.is_empty() && self.waiting.is_empty()
    }
}

/// Sends `subscriber` the cache as a relist; false when it is gone.
fn replay<D>(subscriber: &Subscriber<D>, writer: &Writer<D>) -> bool
where
    D: Resource + Clone,
    D::DynamicType: Eq + Hash + Clone,
{
    let cached = writer.as_reader().state();
    std::iter::once(Event::Init)
        .chain(cached.into_iter().map(Event::InitApply))
        .chain(std::iter::once(Event::InitDone))
        .all(|event| subscriber.events.send(event))
}

/// An object as the key of its pending event: its namespace, name and uid (the object's own
/// `Arc` carries them, so keying allocates nothing). A re-created object (same name, another uid)
/// is another one, so that the delete of the first is never folded into the create of the
/// second.
struct Identity<D>(Arc<D>);

impl<D: Resource> Identity<D> {
    fn fields(&self) -> (Option<&str>, Option<&str>, Option<&str>) {
        let meta = self.0.meta();
        (
            meta.namespace.as_deref(),
            meta.name.as_deref(),
            meta.uid.as_deref(),
        )
    }
}

impl<D: Resource> PartialEq for Identity<D> {
    fn eq(&self, other: &Self) -> bool {
        self.fields() == other.fields()
    }
}

impl<D: Resource> Eq for Identity<D> {}

impl<D: Resource> Hash for Identity<D> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.fields().hash(state);
    }
}

/// The events a subscriber has not taken yet, coalesced per object (see
/// [Queues](self#queues)):
/// - `Init` drops everything pending (the list it starts says it all again), then queues;
/// - `InitDone` queues;
/// - an object's event replaces the event of that object still pending in the same stretch
///   (since the last pending marker), in its place;
/// - an `Apply` of an object whose `InitApply` is pending before an `InitDone` updates the listed
///   object in place (still an `InitApply`: the list lists it as it is now);
/// - any other event of an object (a `Delete` of a listed one) queues at the end.
///
/// So at most one event per object is pending, two for an object listed by a pending list and
/// deleted since, and at most an `Init` and an `InitDone` besides.
struct Pending<D> {
    /// In order; the first is number `first` (each event queued is numbered, one up).
    events: VecDeque<Event<Arc<D>>>,
    first: u64,
    /// The number of the latest pending event of each object, keyed by that event's object (not
    /// an older one, which the key would keep alive).
    latest: HashMap<Identity<D>, u64>,
    /// The number of the marker (`Init` or `InitDone`) queued last, while it is pending: the
    /// events before it are in another stretch.
    marker: Option<u64>,
    /// The hub is done with the subscriber: nothing comes after what is pending.
    closed: bool,
    /// The subscriber dropped its events: nothing is queued any more.
    gone: bool,
}

impl<D: Resource> Pending<D> {
    fn new() -> Self {
        Self {
            events: VecDeque::new(),
            first: 0,
            latest: HashMap::new(),
            marker: None,
            closed: false,
            gone: false,
        }
    }

    /// The number the next event queued gets.
    fn next(&self) -> u64 {
        self.first + self.events.len() as u64
    }

    /// Queues `event`, coalesced with what is pending.
    fn push(&mut self, event: Event<Arc<D>>) {
        let key = match &event {
            Event::Init | Event::InitDone => {
                if matches!(event, Event::Init) {
                    self.first = self.next();
                    self.events.clear();
                    self.latest.clear();
                }
                self.marker = Some(self.next());
                self.events.push_back(event);
                return;
            }
            Event::InitApply(object) | Event::Apply(object) | Event::Delete(object) => {
                Identity(object.clone())
            }
        };
        // Out, to come back keyed by the newest object.
        if let Some(at) = self.latest.remove(&key) {
            let same_stretch = self.marker.is_none_or(|marker| at > marker);
            let index = usize::try_from(at - self.first).expect("a pending event");
            let pending = &mut self.events[index];
            let relisted = matches!(pending, Event::InitApply(_))
                && matches!(event, Event::Apply(_) | Event::InitApply(_));
            let replaced = same_stretch && matches!(pending, Event::Apply(_) | Event::Delete(_));
            if relisted || replaced {
                *pending = match event {
                    Event::Apply(object) if relisted => Event::InitApply(object),
                    event => event,
                };
                self.latest.insert(key, at);
                return;
            }
        }
        self.latest.insert(key, self.next());
        self.events.push_back(event);
    }

    /// The first pending event, taken.
    fn pop(&mut self) -> Option<Event<Arc<D>>> {
        let event = self.events.pop_front()?;
        let at = self.first;
        self.first += 1;
        match &event {
            Event::InitApply(object) | Event::Apply(object) | Event::Delete(object) => {
                let key = Identity(object.clone());
                if self.latest.get(&key) == Some(&at) {
                    self.latest.remove(&key);
                }
            }
            Event::Init | Event::InitDone => {
                if self.marker == Some(at) {
                    self.marker = None;
                }
            }
        }
        Some(event)
    }
}

/// A subscriber's queue, shared by the hub's end ([`QueueIn`]) and the subscriber's
/// ([`Received`]).
struct Queue<D> {
    pending: Mutex<Pending<D>>,
    /// Woken when an event is queued or the hub is done.
    ready: Notify,
}

/// A new queue: the hub's end and the subscriber's.
fn queue<D>() -> (QueueIn<D>, Received<D>)
where
    D: Resource + Send + Sync + 'static,
{
    let queue = Arc::new(Queue {
        pending: Mutex::new(Pending::new()),
        ready: Notify::new(),
    });
    let taking = Taking(queue.clone());
    let stream = futures::stream::unfold(taking, |taking| async move {
        taking.next().await.map(|event| (event, taking))
    });
    let received = Received {
        #[cfg(test)]
        queue: queue.clone(),
        stream: stream.boxed(),
    };
    (QueueIn(queue), received)
}

/// The hub's end of a subscriber's queue: it never waits.
struct QueueIn<D>(Arc<Queue<D>>);

impl<D: Resource> QueueIn<D> {
    /// Queues `event`; false when the subscriber is gone.
    fn send(&self, event: Event<Arc<D>>) -> bool {
        let mut pending = lock(&self.0.pending);
        if pending.gone {
            return false;
        }
        pending.push(event);
        drop(pending);
        self.0.ready.notify_one();
        true
    }

    /// Whether the subscriber is gone.
    fn is_closed(&self) -> bool {
        lock(&self.0.pending).gone
    }
}

impl<D> Drop for QueueIn<D> {
    fn drop(&mut self) {
        lock(&self.0.pending).closed = true;
        self.0.ready.notify_one();
    }
}

/// The subscriber's end of its queue while it takes events; marks the subscriber gone (and drops
/// what is pending) when dropped.
struct Taking<D>(Arc<Queue<D>>);

impl<D: Resource> Taking<D> {
    /// The next event; `None` once the hub is done and nothing is pending.
    async fn next(&self) -> Option<Event<Arc<D>>> {
        loop {
            {
                let mut pending = lock(&self.0.pending);
                if let Some(event) = pending.pop() {
                    return Some(event);
                }
                if pending.closed {
                    return None;
                }
            }
            // A permit is kept for an event queued since the look above.
            self.0.ready.notified().await;
        }
    }
}

impl<D> Drop for Taking<D> {
    fn drop(&mut self) {
        let mut pending = lock(&self.0.pending);
        pending.gone = true;
        pending.events.clear();
        pending.latest.clear();
    }
}

/// A subscriber's events (see [`Hub::subscribe`]): each object's latest while it is behind.
pub(crate) struct Received<D> {
    /// The queue, to look into.
    #[cfg(test)]
    queue: Arc<Queue<D>>,
    stream: BoxStream<'static, Event<Arc<D>>>,
}

impl<D> Received<D> {
    /// How many events are pending.
    #[cfg(test)]
    fn pending(&self) -> usize {
        lock(&self.queue.pending).events.len()
    }
}

impl<D> Stream for Received<D> {
    type Item = Event<Arc<D>>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.stream.poll_next_unpin(cx)
    }
}

/// `event` with its objects' managedFields dropped: nothing reads them from a cache, and they are
/// often half an object.
pub(crate) fn without_managed_fields<K: Resource>(event: Event<K>) -> Event<K> {
    event.modify(|object| object.meta_mut().managed_fields = None)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::FutureExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::ResourceExt;
    use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
    use kube::runtime::WatchStreamExt;
    use kube::runtime::watcher::watcher;
    use kubeward_testing::{ApiServer, Fault, FaultAction};

    use super::*;

    fn key() -> WatchKey {
        WatchKey::new::<ConfigMap>(
            &ApiResource::erase::<ConfigMap>(&()),
            None,
            &watcher::Config::default(),
        )
    }

    /// A set where the ConfigMaps' watch is declared `uses` times, and its hub if shared.
    fn hub(client: &kube::Client, uses: usize) -> Option<Arc<Hub<ConfigMap>>> {
        let watches = SharedWatches::default();
        for _ in 0..uses {
            watches.declare(key());
        }
        let api = Api::<ConfigMap>::all(client.clone());
        watches.hub(&key(), (), move || {
            watcher(api.clone(), watcher::Config::default())
                .default_backoff()
                .boxed()
        })
    }

    fn ignore_errors() -> ErrorSink {
        Arc::new(|_| {})
    }

    async fn create(client: &kube::Client, name: &str) {
        let config = ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        Api::<ConfigMap>::namespaced(client.clone(), "default")
            .create(&PostParams::default(), &config)
            .await
            .expect("create");
    }

    /// An event as `kind` and the names of its objects.
    fn seen(event: &Event<Arc<ConfigMap>>) -> String {
        match event {
            Event::Init => "Init".into(),
            Event::InitApply(o) => format!("InitApply {}", o.name_any()),
            Event::InitDone => "InitDone".into(),
            Event::Apply(o) => format!("Apply {}", o.name_any()),
            Event::Delete(o) => format!("Delete {}", o.name_any()),
        }
    }

    async fn next_event(
        events: &mut (impl Stream<Item = Event<Arc<ConfigMap>>> + Unpin),
    ) -> Event<Arc<ConfigMap>> {
        tokio::time::timeout(Duration::from_secs(30), events.next())
            .await
            .expect("an event in time")
            .expect("the stream goes on")
    }

    async fn next_events(
        events: &mut (impl Stream<Item = Event<Arc<ConfigMap>>> + Unpin),
        n: usize,
    ) -> Vec<String> {
        let mut seen_events = Vec::new();
        for _ in 0..n {
            seen_events.push(seen(&next_event(events).await));
        }
        seen_events
    }

    /// The lists of ConfigMaps the server answered (watches excluded).
    fn lists(server: &ApiServer) -> usize {
        server
            .requests()
            .iter()
            .filter(|r| r.path == "/api/v1/configmaps" && !r.is_watch())
            .count()
    }

    #[tokio::test]
    async fn a_watch_declared_once_is_not_shared() {
        let server = ApiServer::start().await.expect("server");
        let client = server.client().expect("client");
        assert!(hub(&client, 1).is_none());
        assert!(hub(&client, 2).is_some());
        // Another form of the same kind is another watch.
        let watches = SharedWatches::default();
        watches.declare(key());
        watches.declare(WatchKey::new::<
            kube::core::PartialObjectMeta<kube::core::DynamicObject>,
        >(
            &ApiResource::erase::<ConfigMap>(&()),
            None,
            &watcher::Config::default(),
        ));
        assert!(
            watches
                .hub::<ConfigMap>(&key(), (), || futures::stream::empty().boxed())
                .is_none()
        );
    }

    #[tokio::test]
    async fn a_late_subscriber_gets_the_cache_as_a_relist_then_both_get_each_event_from_one_watch()
    {
        let server = ApiServer::start().await.expect("server");
        let client = server.client().expect("client");
        create(&client, "first").await;
        let hub = hub(&client, 2).expect("declared twice: shared");
        let (store, early) = hub.subscribe(ignore_errors());
        let mut early = Box::pin(early);
        assert_eq!(
            next_events(&mut early, 3).await,
            ["Init", "InitApply first", "InitDone"]
        );
        create(&client, "second").await;
        assert_eq!(next_events(&mut early, 1).await, ["Apply second"]);

        // The second subscriber gets what the cache holds, as a relist, from the same cache.
        let (late_store, late) = hub.subscribe(ignore_errors());
        let mut late = Box::pin(late);
        let mut replayed = next_events(&mut late, 4).await;
        replayed[1..3].sort();
        assert_eq!(
            replayed,
            ["Init", "InitApply first", "InitApply second", "InitDone"]
        );
        let cached = |store: &Store<ConfigMap>| {
            store
                .get(&kube::runtime::reflector::ObjectRef::new("first").within("default"))
                .expect("cached")
        };
        assert!(Arc::ptr_eq(&cached(&store), &cached(&late_store)));

        create(&client, "third").await;
        let (to_early, to_late) = (next_event(&mut early).await, next_event(&mut late).await);
        assert_eq!(
            (seen(&to_early), seen(&to_late)),
            ("Apply third".into(), "Apply third".into())
        );
        let (Event::Apply(to_early), Event::Apply(to_late)) = (to_early, to_late) else {
            unreachable!("both are applies");
        };
        assert!(
            Arc::ptr_eq(&to_early, &to_late),
            "each subscriber is sent the same object, not a copy"
        );
        // One list and one watch served both.
        assert_eq!(lists(&server), 1);
        let watches = server
            .requests()
            .iter()
            .filter(|r| r.path == "/api/v1/configmaps" && r.is_watch())
            .count();
        assert_eq!(watches, 1);
    }

    #[tokio::test]
    async fn the_watch_stops_with_its_last_subscriber_and_starts_again_with_a_new_one() {
        let server = ApiServer::start().await.expect("server");
        let client = server.client().expect("client");
        let hub = hub(&client, 2).expect("shared");
        let (_, events) = hub.subscribe(ignore_errors());
        let mut events = Box::pin(events);
        assert_eq!(next_events(&mut events, 2).await, ["Init", "InitDone"]);
        drop(events);
        // Stopped once it noticed: the next subscriber starts a new watch, which lists again.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while lock(&hub.running).is_some() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the watch never stopped"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        create(&client, "later").await;
        let (store, events) = hub.subscribe(ignore_errors());
        let mut events = Box::pin(events);
        assert_eq!(
            next_events(&mut events, 3).await,
            ["Init", "InitApply later", "InitDone"]
        );
        assert_eq!(lists(&server), 2);
        assert_eq!(store.state().len(), 1);
    }

    /// A ConfigMap `name` (uid `uid`) at version `version` (in its data).
    fn config_map(name: &str, uid: &str, version: usize) -> Arc<ConfigMap> {
        Arc::new(ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                uid: Some(uid.into()),
                ..ObjectMeta::default()
            },
            data: Some([("v".to_owned(), version.to_string())].into()),
            ..ConfigMap::default()
        })
    }

    /// An event as its kind, its object's name and version.
    fn state(event: &Event<Arc<ConfigMap>>) -> String {
        shown(event, false)
    }

    /// An event as its kind, its object's name, uid (`with_uid`, when not the name) and version.
    fn shown(event: &Event<Arc<ConfigMap>>, with_uid: bool) -> String {
        let of = |o: &ConfigMap| {
            let uid = o.uid().filter(|uid| with_uid && *uid != o.name_any());
            let v = o.data.as_ref().and_then(|d| d.get("v")).cloned();
            format!(
                "{}{} v{}",
                o.name_any(),
                uid.map(|uid| format!(" ({uid})")).unwrap_or_default(),
                v.unwrap_or_default()
            )
        };
        match event {
            Event::Init => "Init".into(),
            Event::InitApply(o) => format!("InitApply {}", of(o)),
            Event::InitDone => "InitDone".into(),
            Event::Apply(o) => format!("Apply {}", of(o)),
            Event::Delete(o) => format!("Delete {}", of(o)),
        }
    }

    /// Panics unless `events` keep the watch protocol: an `InitApply` only in a list (after an
    /// `Init`, before its `InitDone`; an `Init` may restart a list), an `InitDone` only ending
    /// one, an `Apply` or `Delete` only outside one.
    fn assert_valid(events: &[String]) {
        let mut listing = false;
        for (at, event) in events.iter().enumerate() {
            let kind = event.split(' ').next().unwrap_or_default();
            let valid = match kind {
                "Init" => {
                    listing = true;
                    true
                }
                "InitApply" => listing,
                "InitDone" => std::mem::replace(&mut listing, false),
                _ => !listing,
            };
            assert!(valid, "{event} (at {at}) breaks the protocol: {events:?}");
        }
    }

    /// The next `n` events of `received` (or all that are pending), which are there at once, as
    /// [`shown`] (`with_uid`).
    fn take(received: &mut Received<ConfigMap>, n: Option<usize>, with_uid: bool) -> Vec<String> {
        let n = n.unwrap_or(received.pending());
        (0..n)
            .map(|_| {
                let event = received
                    .next()
                    .now_or_never()
                    .expect("a pending event is there at once")
                    .expect("the stream goes on");
                shown(&event, with_uid)
            })
            .collect()
    }

    #[test]
    fn a_subscriber_that_is_behind_keeps_one_event_per_object_and_every_list_whole() {
        let (hub, mut received) = queue::<ConfigMap>();
        let bound = |objects: usize| objects + 2;
        // The first list, then many changes of the same three objects.
        hub.send(Event::Init);
        for name in ["a", "b", "c"] {
            hub.send(Event::InitApply(config_map(name, name, 0)));
        }
        hub.send(Event::InitDone);
        let first_change = config_map("a", "a", 1);
        for version in 1..=500 {
            for name in ["a", "b"] {
                let object = match (name, version) {
                    ("a", 1) => first_change.clone(),
                    _ => config_map(name, name, version),
                };
                hub.send(Event::Apply(object));
                assert!(received.pending() <= bound(3), "one event per object");
            }
        }
        assert_eq!(received.pending(), 5);
        assert_eq!(
            Arc::strong_count(&first_change),
            1,
            "nothing pending keeps an older version of an object"
        );
        // A listed object deleted since: its delete queues after the list's end; a re-created
        // one (same name, another uid) is another object, its delete is not folded into it.
        hub.send(Event::Delete(config_map("c", "c", 0)));
        hub.send(Event::Apply(config_map("d", "d", 1)));
        hub.send(Event::Apply(config_map("c", "c2", 1)));
        hub.send(Event::Apply(config_map("d", "d", 2)));
        assert_eq!(received.pending(), 8);
        let taken = take(&mut received, None, true);
        assert_eq!(
            taken,
            [
                "Init",
                "InitApply a v500",
                "InitApply b v500",
                "InitApply c v0",
                "InitDone",
                "Delete c v0",
                "Apply d v2",
                "Apply c (c2) v1",
            ]
        );
        assert_valid(&taken);

        // Changes, then a relist (the watch's, or a restart of a failed one) while the subscriber
        // is behind: the list says everything again, so what was pending before it goes.
        for version in 3..=100 {
            hub.send(Event::Apply(config_map("d", "d", version)));
            hub.send(Event::Delete(config_map("a", "a", 500)));
        }
        hub.send(Event::Init);
        hub.send(Event::InitApply(config_map("b", "b", 600)));
        hub.send(Event::Init);
        assert_eq!(take(&mut received, Some(1), true), ["Init"]);
        // The subscriber is in the list when it restarts: it sees the restart, as from a watch
        // of its own.
        hub.send(Event::InitApply(config_map("b", "b", 600)));
        hub.send(Event::InitApply(config_map("c", "c2", 1)));
        assert_eq!(take(&mut received, Some(1), true), ["InitApply b v600"]);
        hub.send(Event::Init);
        for name in ["b", "d"] {
            hub.send(Event::InitApply(config_map(name, name, 700)));
        }
        hub.send(Event::InitApply(config_map("c", "c2", 700)));
        hub.send(Event::InitDone);
        // After the list: a listed object's changes update it in place, still listed before the
        // end; its delete comes after the end; a new object comes after the end.
        for version in 701..=900 {
            hub.send(Event::Apply(config_map("b", "b", version)));
            hub.send(Event::Apply(config_map("c", "c2", version)));
            assert!(received.pending() <= bound(3));
        }
        hub.send(Event::Delete(config_map("d", "d", 700)));
        hub.send(Event::Apply(config_map("e", "e", 1)));
        hub.send(Event::Delete(config_map("c", "c2", 900)));
        assert!(
            received.pending() <= bound(4) + 2,
            "d and c listed and deleted"
        );
        let mut taken = take(&mut received, None, true);
        assert_eq!(
            taken,
            [
                "Init",
                "InitApply b v900",
                "InitApply d v700",
                "InitApply c (c2) v900",
                "InitDone",
                "Delete d v700",
                "Apply e v1",
                "Delete c (c2) v900",
            ]
        );
        taken.splice(0..0, ["Init".to_owned(), "InitApply b v600".to_owned()]);
        assert_valid(&taken);

        // The hub done, what is pending still comes, then the end.
        hub.send(Event::Apply(config_map("e", "e", 2)));
        drop(hub);
        assert_eq!(take(&mut received, None, true), ["Apply e v2"]);
        assert!(received.next().now_or_never().expect("at once").is_none());
    }

    #[tokio::test]
    async fn a_stalled_subscriber_holds_up_no_other_and_keeps_each_objects_latest_event() {
        let server = ApiServer::start().await.expect("server");
        let client = server.client().expect("client");
        for name in ["a", "b", "c"] {
            create(&client, name).await;
        }
        let api = Api::<ConfigMap>::namespaced(client.clone(), "default");
        let set = |name: &'static str, version: usize| {
            let api = api.clone();
            async move {
                let data = serde_json::json!({ "data": { "v": version.to_string() } });
                api.patch(name, &PatchParams::default(), &Patch::Merge(&data))
                    .await
                    .expect("patch");
            }
        };
        let hub = hub(&client, 2).expect("shared");
        // The stalled subscriber comes first: the hub queues each event to it before the other.
        let (_, mut stalled) = hub.subscribe(ignore_errors());
        let (_, fast) = hub.subscribe(ignore_errors());
        let mut fast = Box::pin(fast);
        let mut listed = next_events(&mut fast, 5).await;
        listed[1..4].sort();
        assert_eq!(
            listed,
            [
                "Init",
                "InitApply a",
                "InitApply b",
                "InitApply c",
                "InitDone"
            ]
        );

        // Many changes of two objects: the fast subscriber sees them as they come.
        let fast_until = async |fast: &mut std::pin::Pin<Box<Received<ConfigMap>>>,
                                wanted: &[&str]| {
            let mut seen_events = Vec::new();
            while !wanted.iter().all(|w| seen_events.iter().any(|s| s == w)) {
                seen_events.push(state(&next_event(fast).await));
            }
            seen_events
        };
        for version in 1..=30 {
            set("a", version).await;
            set("b", version).await;
        }
        let changes = fast_until(&mut fast, &["Apply a v30", "Apply b v30"]).await;
        assert!(
            changes.iter().all(|c| c.starts_with("Apply")),
            "{changes:?}"
        );
        // The stalled one holds the list, with each listed object as it is now.
        assert_eq!(
            stalled.pending(),
            5,
            "one event per object, and the markers"
        );

        // A relist (the history compacted), then a delete, a create and changes: the fast one
        // sees each.
        server.compact();
        let relist = fast_until(&mut fast, &["InitDone"]).await;
        assert_eq!(relist.first().map(String::as_str), Some("Init"));
        Api::<ConfigMap>::namespaced(client.clone(), "default")
            .delete("c", &kube::api::DeleteParams::default())
            .await
            .expect("delete");
        create(&client, "d").await;
        for version in 31..=60 {
            set("a", version).await;
        }
        fast_until(&mut fast, &["Delete c v", "Apply d v", "Apply a v60"]).await;

        // The stalled one, never polled until now, keeps the relist whole (with a's latest
        // state), c's delete after the list's end, then d.
        assert_eq!(stalled.pending(), 7);
        let mut taken = take(&mut stalled, None, false);
        taken[1..4].sort();
        assert_eq!(
            taken,
            [
                "Init",
                "InitApply a v60",
                "InitApply b v30",
                "InitApply c v",
                "InitDone",
                "Delete c v",
                "Apply d v",
            ]
        );
        assert_valid(&taken);
        // Both see what comes next.
        set("b", 61).await;
        assert_eq!(state(&next_event(&mut fast).await), "Apply b v61");
        assert_eq!(state(&next_event(&mut stalled).await), "Apply b v61");
    }

    #[tokio::test]
    async fn every_subscriber_hears_of_the_watchs_failures() {
        let server = ApiServer::start().await.expect("server");
        let client = server.client().expect("client");
        server.faults().add(
            Fault::new(FaultAction::Status(500))
                .resource("", "configmaps")
                .times(3),
        );
        let hub = hub(&client, 2).expect("shared");
        let counted = || {
            let count = Arc::new(AtomicUsize::new(0));
            let sink: ErrorSink = {
                let count = count.clone();
                Arc::new(move |_| {
                    count.fetch_add(1, Ordering::SeqCst);
                })
            };
            (count, sink)
        };
        let (first_count, first_sink) = counted();
        let (second_count, second_sink) = counted();
        let (_, first) = hub.subscribe(first_sink);
        let (_, second) = hub.subscribe(second_sink);
        let (mut first, mut second) = (Box::pin(first), Box::pin(second));
        // Both have the list once the failures are over (each failed list began with `Init`).
        for events in [&mut first, &mut second] {
            let mut seen_events = next_events(events, 1).await;
            while seen_events.last().is_some_and(|e| e == "Init") {
                seen_events.extend(next_events(events, 1).await);
            }
            assert_eq!(seen_events.last().map(String::as_str), Some("InitDone"));
        }
        assert!(second_count.load(Ordering::SeqCst) >= 1);
        assert_eq!(first_count.load(Ordering::SeqCst), 3);
    }
}
