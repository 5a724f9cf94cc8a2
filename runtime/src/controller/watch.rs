//! One watch term: the kube-runtime controller loop of one leadership term (or of the whole run
//! without leader election), its readiness and its cache, and the graceful end of its passes.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kube::Resource;
use kube::api::Api;
use kube::runtime::controller::Config as ControllerConfig;
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
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
        let controller = kube::runtime::Controller::new(api, self.watcher_config.clone())
            .with_config(ControllerConfig::default().concurrency(self.concurrency));
        let store = controller.store();
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
