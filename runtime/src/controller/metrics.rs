//! A controller's metrics snapshot: the Prometheus collectors that read the state of every object
//! it watches and of the controller itself from its cache and queue at scrape time, and the one
//! call that registers them with the pass, step and event metrics. Reading only: the builder
//! ([`Controller`]) configures, and what is read here is what a running controller keeps up to
//! date.

use std::sync::Arc;

use kube::Resource;

use super::Reconciler;
use super::builder::Controller;

impl<R: Reconciler> Controller<R> {
    /// A Prometheus collector of the state of every object this controller watches (generation,
    /// conditions of the declared types with their reasons' classes, suspended, the declared
    /// [`INFO`](Reconciler::INFO) fields), read from its cache at scrape time; see
    /// [`ObjectMetrics`](crate::metrics::ObjectMetrics). Register it to switch these metrics on.
    ///
    /// # Errors
    /// When `prefix` is not a valid metric-name prefix.
    pub fn object_metrics(
        &self,
        prefix: &str,
    ) -> Result<crate::metrics::ObjectMetrics, prometheus::Error> {
        use kube::ResourceExt;
        let cache = self.cache.subscribe();
        let memory = self.memory.clone();
        let snapshot = move || {
            let Some(store) = cache.borrow().clone() else {
                return Vec::new();
            };
            let terminal = memory.terminal_failures();
            store
                .state()
                .iter()
                .map(|object| {
                    let mut conditions = super::status::status_of(&**object).conditions;
                    if !R::CONDITIONS.is_empty() {
                        conditions.retain(|c| R::CONDITIONS.iter().any(|v| v.type_ == c.type_));
                    }
                    // Info fields are read from the object as the API server serves it; only
                    // when declared, as it costs a serialization per object and scrape.
                    let info = if R::INFO.is_empty() {
                        Vec::new()
                    } else {
                        serde_json::to_value(&**object)
                            .map(|json| crate::info::values(R::INFO, &json))
                            .unwrap_or_else(|_| vec![String::new(); R::INFO.len()])
                    };
                    crate::metrics::ObjectState {
                        namespace: object.namespace().unwrap_or_default(),
                        name: object.name_any(),
                        generation: object.meta().generation,
                        conditions,
                        suspended: super::hooks::is_suspended::<R>(object),
                        terminal: terminal.holds(&**object),
                        info,
                    }
                })
                .collect()
        };
        let metrics = crate::metrics::ObjectMetrics::new(prefix, self.name(), Arc::new(snapshot))?
            .with_vocabularies(R::CONDITIONS)?
            .with_info(R::INFO)?;
        Ok(match self.object_metrics_cap {
            Some(max) => metrics.with_max_objects(max),
            None => metrics,
        })
    }

    /// Bounds the per-object metrics ([`object_metrics`](Controller::object_metrics), also as
    /// [`Operator`](crate::operator::Operator) and [`register_metrics`](Controller::register_metrics)
    /// register them) to the series of `max_objects` objects per scrape, the first by namespace
    /// and name; `kubeward_object_metrics_omitted` counts the others at each scrape. It bounds
    /// the series and the text (about 1.6 KiB per object with one condition type) a scraper
    /// reads and Prometheus stores; the snapshot still reads every cached object.
    #[must_use]
    pub fn with_object_metrics_cap(mut self, max_objects: usize) -> Self {
        self.object_metrics_cap = Some(max_objects);
        self
    }

    /// A Prometheus collector of this controller's own state: whether this replica reconciles
    /// (holds the lease, or runs without leader election) and how many objects wait for a pass; see
    /// [`ControllerMetrics`](crate::metrics::ControllerMetrics).
    ///
    /// # Errors
    /// When `prefix` is not a valid metric-name prefix.
    pub fn controller_metrics(
        &self,
        prefix: &str,
    ) -> Result<crate::metrics::ControllerMetrics, prometheus::Error> {
        // A watch term runs exactly while the controller reconciles: its cache is there.
        let cache = self.cache.subscribe();
        let leading = move || cache.borrow().is_some();
        let queue = self.queue.clone();
        crate::metrics::ControllerMetrics::new(prefix, self.name(), Arc::new(leading))?
            .with_queue_depth(Arc::new(move || queue.depth()))
    }

    /// Registers every metric of this controller on `registry`: passes, steps and event
    /// publishes ([`Metrics`](crate::metrics::Metrics), wired as an observer of the controller
    /// and of its own event recorder), per-object state
    /// ([`object_metrics`](Controller::object_metrics)) and the controller's own
    /// ([`controller_metrics`](Controller::controller_metrics)), all prefixed `kubeward_`. For a custom
    /// prefix or buckets, or one `Metrics` shared by several controllers, use
    /// [`with_observer`](Controller::with_observer) and `object_metrics` instead.
    ///
    /// # Errors
    /// When `registry` already holds these metrics (another controller registered them there).
    pub fn register_metrics(
        self,
        registry: &prometheus::Registry,
    ) -> Result<Self, prometheus::Error> {
        let metrics = crate::metrics::Metrics::builder().build()?;
        registry.register(Box::new(metrics.clone()))?;
        registry.register(Box::new(
            self.object_metrics(crate::metrics::DEFAULT_PREFIX)?,
        ))?;
        registry.register(Box::new(
            self.controller_metrics(crate::metrics::DEFAULT_PREFIX)?,
        ))?;
        Ok(self.with_observer(Arc::new(metrics)))
    }
}
