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
//! protocol of a watch of its own. Every subscriber gets every event (none is dropped for a
//! slow one), and the watch's list and watch failures are reported to each of them.
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
//! unlike it, a subscriber's queue is unbounded (a slow one never holds up the others' watch).

// Only the operator (feature `prometheus`) declares shared watches.
#![cfg_attr(not(feature = "prometheus"), allow(dead_code))]

use std::any::{Any, TypeId};
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use kube::Resource;
use kube::core::ApiResource;
use kube::runtime::reflector::{Store, store::Writer};
use kube::runtime::watcher::{self, Event};
use tokio::sync::mpsc;

/// The watches the controllers of one operator share; cheap to clone (clones are one set).
/// Every controller declares its watches before any runs
/// ([`Controller::with_shared_watches`](super::Controller::with_shared_watches)).
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
    events: mpsc::UnboundedSender<Event<Arc<D>>>,
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
    pub(crate) fn subscribe(
        self: &Arc<Self>,
        on_error: ErrorSink,
    ) -> (Store<D>, impl Stream<Item = Event<Arc<D>>> + Send + 'static) {
        let (events, received) = mpsc::unbounded_channel();
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
        let events = futures::stream::unfold(received, |mut received| async {
            received.recv().await.map(|event| (event, received))
        });
        (store, events)
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
            .retain(|subscriber| subscriber.events.send(event.clone()).is_ok());
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
        .all(|event| subscriber.events.send(event).is_ok())
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

    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::ResourceExt;
    use kube::api::{Api, ObjectMeta, PostParams};
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
