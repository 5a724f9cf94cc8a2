//! One watch term: the kube-runtime controller loop of one leadership term (or of the whole run
//! without leader election), its readiness and its cache, and the graceful end of its passes.
//!
//! The term runs its own watch stream (the one `kube::runtime::Controller::new` would build) so
//! that it sees what the controller loop does not: an object's delete event, and the end of a
//! relist. Either tells the controller's [memory](super::memory) that an object is gone.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use kube::Resource;
use kube::runtime::controller::Config as ControllerConfig;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::watch;

use super::Reconciler;
use super::context::Context;
use super::dispatch::{error_policy, reconcile};
use super::health::ControllerState;
use super::predicate::{Judge, Starts};
use super::queue;
use super::watch_failures::WatchFailures;
use crate::relations::TriggerInputs;
use crate::shared_watch::{
    ErrorSink, Hub, SharedWatches, WatchEvents, unshared, without_managed_fields,
};

/// The watch-and-reconcile loop of one controller.
pub(super) struct Watching<R: Reconciler> {
    pub(super) client: kube::Client,
    pub(super) context: Arc<Context<R>>,
    pub(super) watcher_config: watcher::Config,
    /// Where it watches.
    pub(super) scope: super::scope::Scope<R::Resource>,
    /// Which watch events start a pass.
    pub(super) starts: Starts,
    /// How often every cached object is reconciled besides, if at all.
    pub(super) resync: Option<Duration>,
    pub(super) concurrency: u16,
    pub(super) grace: Duration,
    /// The shutdown budget the grace is cut to.
    pub(super) budget: crate::shutdown::Budget,
    /// How long a term may take to list its objects before readiness says why it has not.
    pub(super) sync_timeout: Duration,
    pub(super) state: watch::Sender<ControllerState>,
    pub(super) cache: watch::Sender<Option<Store<R::Resource>>>,
    /// The controller's state between watch terms: with leader election it then waits for the
    /// lease ([`ControllerState::Standby`], ready); without, it has stopped.
    pub(super) state_between_terms: ControllerState,
    /// The watch and list failures, logged and kept for readiness.
    pub(super) failures: Arc<WatchFailures>,
    /// The watches shared with the other controllers of an operator.
    pub(super) shared: Option<SharedWatches>,
}

/// How one watch term ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum TermEnd {
    /// Stopped as asked.
    Stopped,
    /// The controller loop ended on its own, which it never does while its watch runs.
    LoopEnded,
}

impl<R: Reconciler> Watching<R> {
    /// The watch of the resource where the controller watches, and its cache: the watch the
    /// controller shares with others of its operator, or one of its own. Each event is in the
    /// cache when it comes.
    fn watched(&self) -> (Store<R::Resource>, WatchEvents<R::Resource>) {
        let failures = self.failures.clone();
        if let Some(hub) = self.shared_hub() {
            let on_error: ErrorSink = Arc::new(move |error| failures.record(error));
            let (store, events) = hub.subscribe(on_error);
            return (store, events.map(|event| Ok(unshared(event))).boxed());
        }
        let (store, writer) = reflector::store();
        let mut apis = self.scope.apis(&self.client);
        let watch = if apis.len() == 1 {
            let (_, api) = apis.remove(0);
            own_watch(api, &self.watcher_config)
        } else {
            let watches = apis
                .into_iter()
                .map(|(namespace, api)| {
                    let watch = watcher(api, self.watcher_config.clone()).default_backoff();
                    (namespace.unwrap_or_default(), watch.boxed())
                })
                .collect();
            super::namespaces::merged(watches, store.clone())
                .map_ok(without_managed_fields)
                .boxed()
        };
        let events = reflector::reflector(
            writer,
            watch.inspect_err(move |error| failures.record(error)),
        );
        (store, events.boxed())
    }

    /// The hub of the watch of the resource, when the controller shares it.
    fn shared_hub(&self) -> Option<Arc<Hub<R::Resource>>> {
        let shared = self.shared.as_ref()?;
        let key = self.scope.watch_key(&self.watcher_config)?;
        let (api, config) = match self.scope.apis(&self.client).as_slice() {
            [(_, api)] => (api.clone(), self.watcher_config.clone()),
            _ => return None,
        };
        shared.hub(&key, (), move || own_watch(api.clone(), &config))
    }

    /// The watch of the resource and its cache (see [`watched`](Self::watched)), and of its
    /// events the objects whose events start a pass, as the controller's predicates judge them
    /// (see [`Judge`]); what the events show gone is forgotten on the way.
    fn judged(
        &self,
    ) -> (
        Store<R::Resource>,
        impl futures::Stream<Item = Result<R::Resource, watcher::Error>> + Send + 'static,
    ) {
        let context = self.context.clone();
        let (store, events) = self.watched();
        let mut judge = Judge::new(self.starts, R::READS);
        let judged = events
            .inspect_ok(move |event| forget_the_gone(&context, event))
            .try_filter_map(move |event| futures::future::ready(Ok(judge.starts(event))));
        (store, judged)
    }

    /// Starts this controller's warm cache: its watch runs, and its cache stays in sync, from
    /// now on, whether it leads or not; each leadership term then reconciles from it (see
    /// [`Warm`]).
    pub(super) fn warm(&self) -> Warm<R::Resource> {
        let term: Arc<std::sync::Mutex<Option<Term<R::Resource>>>> = Arc::default();
        let (store, judged) = self.judged();
        let forward = {
            let term = term.clone();
            let context = self.context.clone();
            judged.for_each(move |object| {
                if let Ok(object) = object {
                    let mut term = term
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    if let Some(sender) = term.as_ref() {
                        enqueue(&context, &object);
                        if sender.send(object).is_err() {
                            *term = None;
                        }
                    }
                }
                futures::future::ready(())
            })
        };
        Warm {
            store,
            term,
            task: tokio::spawn(forward),
        }
    }

    /// Reconciles until `stop` completes, then lets in-flight passes finish within the grace
    /// period and drops (abandons) the rest. With `warm`, from the warm cache (every object once,
    /// as soon as the cache has listed them, then what its watch judges news); else from a watch
    /// and cache of this term's own.
    pub(super) async fn run(
        &self,
        stop: impl Future<Output = ()> + Send,
        warm: Option<&Warm<R::Resource>>,
    ) -> TermEnd {
        let (graceful_tx, graceful_rx) = tokio::sync::oneshot::channel::<()>();
        let (store, objects) = match warm {
            Some(warm) => (
                warm.store.clone(),
                warm.subscribe().map(Ok::<_, watcher::Error>).boxed(),
            ),
            None => {
                let queued = self.context.clone();
                let (store, judged) = self.judged();
                let objects = judged
                    .inspect_ok(move |object| enqueue(&queued, object))
                    .boxed();
                (store, objects)
            }
        };
        let mut controller = kube::runtime::Controller::for_stream(objects, store.clone())
            .with_config(ControllerConfig::default().concurrency(self.concurrency));
        if warm.is_some() {
            // A new leader's first pass of every object, as a first list gives it: at once when
            // the warm cache has listed them, else as soon as it has.
            let listed = store.clone();
            controller = controller.reconcile_all_on(futures::stream::once(async move {
                let _ = listed.wait_until_ready().await;
            }));
        }
        if let Some(interval) = self.resync {
            let start = tokio::time::Instant::now() + interval;
            let ticks = tokio::time::interval_at(start, interval);
            controller =
                controller.reconcile_all_on(futures::stream::unfold(ticks, |mut ticks| async {
                    ticks.tick().await;
                    Some(((), ticks))
                }));
        }
        for relation in self.context.relations.iter() {
            relation.cache().begin_term();
            let shared = self.shared.clone().map(|shared| {
                let failures = self.failures.clone();
                let on_error: ErrorSink = Arc::new(move |error| failures.record(error));
                (shared, on_error)
            });
            let failures = self.failures.clone();
            let (context, cached) = (self.context.clone(), store.clone());
            let triggers = relation
                .triggers(
                    TriggerInputs {
                        client: self.client.clone(),
                        store: store.clone(),
                        namespaces: self.scope.namespace_names().to_vec(),
                        shared,
                    },
                    &self.context.children.label_value,
                )
                .inspect_err(move |error| failures.record(error))
                .filter_map(|batch| futures::future::ready(batch.ok()))
                .flat_map(futures::stream::iter)
                .filter_map(move |(object, trigger)| {
                    let triggered = relation_triggered(&context, &cached, &object, trigger);
                    futures::future::ready(triggered.then_some(object))
                });
            controller = controller.reconcile_on(triggers);
        }
        self.cache.send_replace(Some(store.clone()));
        // Not ready until this term's cache has listed the objects.
        self.state.send_replace(ControllerState::Syncing);
        let readiness = self.track_sync(store);
        let passes = controller
            .graceful_shutdown_on(async move {
                let _ = graceful_rx.await;
            })
            // Boxed: the pass is a large future, moved (copied) less as a box.
            .run(
                |object, context| Box::pin(reconcile::<R>(object, context)),
                error_policy::<R>,
                self.context.clone(),
            )
            .for_each(|result| {
                match result {
                    // Logged (rate-limited, at warn) where the watch stream yields them.
                    Err(kube::runtime::controller::Error::QueueError(_)) => {}
                    // A failed pass is logged at warn by the pass itself.
                    Err(error) => {
                        tracing::debug!(error = %crate::controller::ErrorChain(&error), "reconcile error");
                    }
                    Ok(_) => {}
                }
                futures::future::ready(())
            });
        let _term = TermGuard {
            state: &self.state,
            state_after: self.state_between_terms.clone(),
            cache: &self.cache,
        };
        let mut passes = std::pin::pin!(passes);
        // The state is tracked for the whole term; it never ends the term.
        let tracking = async move {
            readiness.await;
            futures::future::pending::<TermEnd>().await
        };
        tokio::select! {
            () = &mut passes => TermEnd::LoopEnded,
            end = tracking => end,
            () = stop => {
                let _ = graceful_tx.send(());
                let grace = self.budget.bound(crate::shutdown::Step::Passes, self.grace);
                if tokio::time::timeout(grace, &mut passes).await.is_err() {
                    tracing::warn!(?grace, "in-flight passes did not finish in time; abandoning them");
                }
                TermEnd::Stopped
            }
        }
    }

    /// Sets the controller's state as this term's watches sync: [`ControllerState::Synced`] once
    /// the cache of the resource and every relation's cache (each scope) have listed their
    /// objects; [`ControllerState::SyncTimedOut`], naming the watch waited for, with the last
    /// watch failure (and a warn log) if that takes longer than the sync timeout, until it
    /// succeeds. Runs for the term (the future completes only when the cache's writer is gone).
    fn track_sync(&self, store: Store<R::Resource>) -> impl Future<Output = ()> + Send + 'static {
        let state = self.state.clone();
        let failures = self.failures.clone();
        let timeout = self.sync_timeout;
        let controller = self.context.name.to_string();
        let context = self.context.clone();
        let scopes: Vec<crate::relations::Scope> = match self.scope.namespace_names() {
            [] => vec![None],
            names => names.iter().cloned().map(Some).collect(),
        };
        let several = scopes.len() > 1;
        async move {
            // The watch waited for, as readiness names it.
            let waiting_for = std::sync::Mutex::new("its watch".to_owned());
            let synced = async {
                store.wait_until_ready().await.map_err(drop)?;
                for relation in context.relations.iter() {
                    for scope in &scopes {
                        let role = match relation.role() {
                            crate::relations::Role::Owned => "owned",
                            crate::relations::Role::Watched => "watched",
                        };
                        let mut watch = format!("the watch of {} ({role})", relation.kind().plural);
                        if let Some(namespace) = scope.as_deref().filter(|_| several) {
                            watch = format!("{watch} in namespace {namespace}");
                        }
                        *waiting_for
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner) = watch;
                        relation
                            .cache()
                            .wait_listed(std::slice::from_ref(scope))
                            .await;
                    }
                }
                Ok::<(), ()>(())
            };
            let mut synced = std::pin::pin!(synced);
            let synced = match tokio::time::timeout(timeout, &mut synced).await {
                Ok(synced) => synced,
                Err(_) => {
                    let reason = failures.last().unwrap_or_else(|| {
                        "no list or watch failure was reported: the list is slow or unanswered"
                            .to_owned()
                    });
                    let watch = waiting_for
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .clone();
                    tracing::warn!(
                        %controller,
                        %watch,
                        %reason,
                        ?timeout,
                        "a watch has not synced in time: the controller is not ready"
                    );
                    state.send_replace(ControllerState::SyncTimedOut {
                        controller: controller.clone(),
                        watch,
                        after: timeout,
                        reason,
                    });
                    let synced = synced.await;
                    if synced.is_ok() {
                        tracing::info!(%controller, "the watches have synced after all");
                    }
                    synced
                }
            };
            if synced.is_ok() {
                state.send_replace(ControllerState::Synced);
            }
        }
    }
}

/// A relation's watch names `object` for a pass, for `trigger`: queued with it, if the object
/// is cached; an object not in the cache gets no pass (kube-runtime would drop it), so it is
/// not counted either, and whether it is passed on.
fn relation_triggered<R: Reconciler>(
    context: &Context<R>,
    store: &Store<R::Resource>,
    object: &reflector::ObjectRef<R::Resource>,
    trigger: super::Trigger,
) -> bool {
    if store.get(object).is_none() {
        return false;
    }
    let key = queue::key(object.namespace.as_deref(), &object.name);
    context.queue.triggered(key, trigger);
    true
}

/// The watch of `api` with `config` a controller caches its resource from: retried with backoff,
/// the objects without their managedFields (nothing reads them from the cache; they are often
/// half an object).
fn own_watch<K>(api: kube::Api<K>, config: &watcher::Config) -> WatchEvents<K>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
{
    watcher(api, config.clone())
        .default_backoff()
        .map_ok(without_managed_fields)
        .boxed()
}

/// Counts `object`, whose change starts a pass, as waiting for it.
fn enqueue<R: Reconciler>(context: &Context<R>, object: &R::Resource) {
    let meta = object.meta();
    let name = meta.name.as_deref().unwrap_or_default();
    context.queue.triggered(
        queue::key(meta.namespace.as_deref(), name),
        super::Trigger::Changed,
    );
}

/// A controller's cache kept in sync whether it leads or not (a warm standby, as
/// controller-runtime's warm replicas): its watch runs from the controller's start, so a new
/// leader reconciles at once instead of listing first. The leading term gets the objects whose
/// events start a pass through [`subscribe`](Warm::subscribe); a standby's are judged (so that a
/// later term knows what is news) and dropped. Dropping it stops the watch.
pub(super) struct Warm<K: kube::Resource<DynamicType = ()> + Clone + 'static> {
    store: Store<K>,
    term: Arc<std::sync::Mutex<Option<Term<K>>>>,
    task: tokio::task::JoinHandle<()>,
}

/// Where the objects whose events start a pass go during a leadership term.
type Term<K> = tokio::sync::mpsc::UnboundedSender<K>;

impl<K: kube::Resource<DynamicType = ()> + Clone + 'static> Warm<K> {
    /// The objects whose events start a pass from now on (until the next term subscribes).
    fn subscribe(&self) -> impl futures::Stream<Item = K> + Send + 'static
    where
        K: Send,
    {
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
        *self
            .term
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(sender);
        futures::stream::unfold(receiver, |mut receiver| async {
            receiver.recv().await.map(|object| (object, receiver))
        })
    }
}

impl<K: kube::Resource<DynamicType = ()> + Clone + 'static> Drop for Warm<K> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Tells the controller's memory which objects `event` shows gone: a deleted object, or — at the
/// end of a relist, once the cache holds the listed objects — every object no longer listed.
fn forget_the_gone<R: Reconciler>(context: &Context<R>, event: &watcher::Event<R::Resource>) {
    match event {
        watcher::Event::Delete(object) => {
            context.memory.forget(object);
            let meta = object.meta();
            let name = meta.name.as_deref().unwrap_or_default();
            context
                .queue
                .forget(&queue::key(meta.namespace.as_deref(), name));
        }
        watcher::Event::InitDone => context.memory.sweep(|w| context.cached(w)),
        watcher::Event::Apply(_) | watcher::Event::Init | watcher::Event::InitApply(_) => {}
    }
}

/// Marks the controller's cache gone when a watch term ends — also when its future is dropped on
/// lost leadership — so a replica that does not lead exports no stale state; and sets its
/// state to what it is between terms (ready while a standby waits for the lease).
struct TermGuard<'a, K: Resource<DynamicType = ()> + Clone + 'static> {
    state: &'a watch::Sender<ControllerState>,
    state_after: ControllerState,
    cache: &'a watch::Sender<Option<Store<K>>>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Drop for TermGuard<'_, K> {
    fn drop(&mut self) {
        self.state.send_replace(self.state_after.clone());
        self.cache.send_replace(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Pass;
    use crate::clock::SystemClock;
    use crate::observe::Observers;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
    use kube::runtime::controller::Action;

    #[derive(Debug, thiserror::Error, crate::Terminal)]
    #[terminal(crate = "crate")]
    #[error("always fails")]
    struct AlwaysFails;

    /// Fails every pass: its objects are always in backoff.
    struct Failing;

    impl Reconciler for Failing {
        type Resource = ConfigMap;
        type Error = AlwaysFails;
        const NAME: Option<&'static str> = Some("test.kubeward.dev/failing");

        async fn apply(
            &self,
            _: &ConfigMap,
            _: &mut Pass<ConfigMap>,
        ) -> Result<Action, AlwaysFails> {
            Err(AlwaysFails)
        }
    }

    async fn wait_for(what: &str, condition: impl Fn() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while !condition() {
            assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The backoff state of an object is dropped on its delete event, not left to a sweep that
    /// only runs once the table has doubled.
    #[tokio::test]
    async fn an_object_in_backoff_is_forgotten_on_its_delete_event() {
        let server = kubeward_testing::ApiServer::start().await.unwrap();
        let client = server.client().unwrap();
        let (cache, cached) = watch::channel(None);
        let context = Arc::new(Context {
            reconciler: Failing,
            client: client.clone(),
            name: "test.kubeward.dev/failing".into(),
            observers: Observers::default(),
            recorder: None,
            clock: Arc::new(SystemClock),
            status_timeout: Duration::from_secs(10),
            reconcile_timeout: super::super::DEFAULT_RECONCILE_TIMEOUT,
            memory: super::super::memory::ObjectMemory::default(),
            effects: super::super::effects::Effects::default(),
            cache: cached,
            fence: None,
            relations: crate::relations::Relations::new(),
            children: Arc::new(super::super::context::ChildContext::new(
                &"test.kubeward.dev/failing".into(),
                &crate::relations::Relations::<ConfigMap>::new(),
            )),
            queue: Arc::default(),
            follow_up_transitions: true,
            observed_generation_dropped: Default::default(),
        });
        let watching = Watching {
            client: client.clone(),
            context: context.clone(),
            watcher_config: watcher::Config::default(),
            scope: super::super::scope::Scope::cluster(),
            starts: Starts::RelevantChanges,
            resync: None,
            concurrency: 4,
            grace: Duration::ZERO,
            budget: crate::shutdown::Budget::default(),
            sync_timeout: super::super::health::DEFAULT_SYNC_TIMEOUT,
            state: watch::Sender::new(ControllerState::Syncing),
            cache,
            state_between_terms: ControllerState::Stopped,
            failures: Arc::new(WatchFailures::new("test.kubeward.dev/failing")),
            shared: None,
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let term = tokio::spawn(async move {
            watching
                .run(
                    async {
                        let _ = stopped.await;
                    },
                    None,
                )
                .await;
        });
        let configmaps = Api::<ConfigMap>::namespaced(client, "default");
        let web = ConfigMap {
            metadata: ObjectMeta {
                name: Some("web".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        configmaps
            .create(&PostParams::default(), &web)
            .await
            .unwrap();
        wait_for("the object in backoff", || context.memory.len() == 1).await;
        configmaps
            .delete("web", &DeleteParams::default())
            .await
            .unwrap();
        wait_for("the object forgotten", || context.memory.len() == 0).await;
        let _ = stop.send(());
        term.await.unwrap();
    }
}
