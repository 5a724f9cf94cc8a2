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
use kube::api::Api;
use kube::runtime::controller::Config as ControllerConfig;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::sync::watch;

use super::Reconciler;
use super::context::Context;
use super::dispatch::{error_policy, reconcile};

/// The watch-and-reconcile loop of one controller.
pub(super) struct Watching<R: Reconciler> {
    pub(super) client: kube::Client,
    pub(super) context: Arc<Context<R>>,
    pub(super) watcher_config: watcher::Config,
    pub(super) concurrency: u16,
    pub(super) grace: Duration,
    pub(super) ready: watch::Sender<bool>,
    pub(super) cache: watch::Sender<Option<Store<R::Resource>>>,
    /// Whether the process is ready between watch terms: with leader election it then waits for
    /// the lease, which is ready; without, it has stopped.
    pub(super) ready_between_terms: bool,
}

impl<R: Reconciler> Watching<R> {
    /// Reconciles until `stop` completes, then lets in-flight passes finish within the grace
    /// period and drops (abandons) the rest.
    pub(super) async fn run(&self, stop: impl Future<Output = ()> + Send) {
        let api = Api::<R::Resource>::all_with(self.client.clone(), &());
        let (graceful_tx, graceful_rx) = tokio::sync::oneshot::channel::<()>();
        let (store, writer) = reflector::store();
        let context = self.context.clone();
        let objects = reflector::reflector(writer, watcher(api, self.watcher_config.clone()))
            .inspect_ok(move |event| forget_the_gone(&context, event))
            .applied_objects();
        let controller = kube::runtime::Controller::for_stream(objects, store.clone())
            .with_config(ControllerConfig::default().concurrency(self.concurrency));
        self.cache.send_replace(Some(store.clone()));
        // Not ready until this term's cache has listed the objects.
        self.ready.send_replace(false);
        let ready = self.ready.clone();
        let readiness = async move {
            if store.wait_until_ready().await.is_ok() {
                ready.send_replace(true);
            }
            futures::future::pending::<()>().await;
        };
        let passes = controller
            .graceful_shutdown_on(async move {
                let _ = graceful_rx.await;
            })
            .run(reconcile::<R>, error_policy::<R>, self.context.clone())
            .for_each(|result| {
                if let Err(error) = result {
                    tracing::debug!(error = %crate::controller::ErrorChain(&error), "reconcile error");
                }
                futures::future::ready(())
            });
        let _term = TermGuard {
            ready: &self.ready,
            ready_after: self.ready_between_terms,
            cache: &self.cache,
        };
        let mut passes = std::pin::pin!(passes);
        tokio::select! {
            () = &mut passes => {}
            () = readiness => {}
            () = stop => {
                let _ = graceful_tx.send(());
                if tokio::time::timeout(self.grace, &mut passes).await.is_err() {
                    tracing::warn!(grace = ?self.grace, "in-flight passes did not finish in time; abandoning them");
                }
            }
        }
    }
}

/// Tells the controller's memory which objects `event` shows gone: a deleted object, or — at the
/// end of a relist, once the cache holds the listed objects — every object no longer listed.
fn forget_the_gone<R: Reconciler>(context: &Context<R>, event: &watcher::Event<R::Resource>) {
    match event {
        watcher::Event::Delete(object) => context.memory.forget(object),
        watcher::Event::InitDone => context.memory.sweep(|w| context.cached(w)),
        watcher::Event::Apply(_) | watcher::Event::Init | watcher::Event::InitApply(_) => {}
    }
}

/// Marks the controller's cache gone when a watch term ends — also when its future is dropped on
/// lost leadership — so a replica that does not lead exports no stale state; and sets its
/// readiness to what it is between terms (ready while a standby waits for the lease).
struct TermGuard<'a, K: Resource<DynamicType = ()> + Clone + 'static> {
    ready: &'a watch::Sender<bool>,
    ready_after: bool,
    cache: &'a watch::Sender<Option<Store<K>>>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Drop for TermGuard<'_, K> {
    fn drop(&mut self) {
        self.ready.send_replace(self.ready_after);
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
    use kube::api::{DeleteParams, ObjectMeta, PostParams};
    use kube::runtime::controller::Action;

    #[derive(Debug, thiserror::Error)]
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
            memory: super::super::memory::ObjectMemory::default(),
            effects: super::super::effects::Effects::default(),
            cache: cached,
            fence: None,
        });
        let watching = Watching {
            client: client.clone(),
            context: context.clone(),
            watcher_config: watcher::Config::default(),
            concurrency: 4,
            grace: Duration::ZERO,
            ready: watch::Sender::new(false),
            cache,
            ready_between_terms: false,
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let term = tokio::spawn(async move {
            watching
                .run(async {
                    let _ = stopped.await;
                })
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
