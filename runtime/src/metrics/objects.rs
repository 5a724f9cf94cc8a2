//! Per-object state as Prometheus gauges, read from the controller's cache at scrape time, so a
//! deleted object leaves no stale series and alerts need no kube-state-metrics.

use std::sync::{Arc, Mutex};

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{GaugeVec, IntGaugeVec, Opts};

use crate::conditions::{Condition, ConditionStatus};

/// The state of one object as the metrics show it.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectState {
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// The object's conditions of the types the controller manages.
    pub conditions: Vec<Condition>,
    /// Whether the object is suspended (the reconciler skips it on purpose).
    pub suspended: bool,
}

type Snapshot = Arc<dyn Fn() -> Vec<ObjectState> + Send + Sync>;

/// A collector of per-object state: at most 6 series per object and condition type.
///
/// | metric | labels | value |
/// |---|---|---|
/// | `kubeward_object_generation` | controller, namespace, name | `metadata.generation` |
/// | `kubeward_object_suspended` | controller, namespace, name | 1 if suspended, else 0 |
/// | `kubeward_object_condition` | controller, namespace, name, type, status | 1 for the current status, 0 for the other two |
/// | `kubeward_object_condition_observed_generation` | controller, namespace, name, type | the condition's observedGeneration |
/// | `kubeward_object_condition_last_transition_time_seconds` | controller, namespace, name, type | its lastTransitionTime, Unix seconds |
///
/// Get one from [`Controller::object_metrics`](crate::controller::Controller::object_metrics);
/// registering it is what switches these metrics on.
pub struct ObjectMetrics {
    controller: Arc<str>,
    snapshot: Snapshot,
    gauges: Mutex<Gauges>,
    descs: Vec<Desc>,
}

struct Gauges {
    generation: IntGaugeVec,
    suspended: IntGaugeVec,
    condition: IntGaugeVec,
    observed_generation: IntGaugeVec,
    last_transition: GaugeVec,
}

impl std::fmt::Debug for ObjectMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectMetrics")
            .field("controller", &self.controller)
            .finish_non_exhaustive()
    }
}

impl ObjectMetrics {
    /// Metrics named `<prefix>_object_*` for `controller`, whose objects `snapshot` lists at each
    /// scrape.
    ///
    /// # Errors
    /// When `prefix` is not a valid metric-name prefix.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kubeward::metrics::{ObjectMetrics, ObjectState};
    /// let metrics = ObjectMetrics::new("kubeward", "demo.kubeward.dev/rollouts", Arc::new(|| vec![ObjectState {
    ///     namespace: "demo".into(), name: "web".into(), generation: Some(4), conditions: vec![], suspended: true,
    /// }]))?;
    /// let registry = prometheus::Registry::new();
    /// registry.register(Box::new(metrics))?;
    /// let text = prometheus::TextEncoder::new().encode_to_string(&registry.gather())?;
    /// assert!(text.contains(r#"kubeward_object_suspended{controller="demo.kubeward.dev/rollouts",name="web",namespace="demo"} 1"#));
    /// # Ok::<(), prometheus::Error>(())
    /// ```
    pub fn new(
        prefix: &str,
        controller: impl Into<Arc<str>>,
        snapshot: Arc<dyn Fn() -> Vec<ObjectState> + Send + Sync>,
    ) -> Result<Self, prometheus::Error> {
        let object = ["controller", "namespace", "name"];
        let condition = ["controller", "namespace", "name", "type"];
        let opts = |suffix: &str, help: &str| Opts::new(format!("{prefix}_object_{suffix}"), help);
        let gauges = Gauges {
            generation: IntGaugeVec::new(
                opts("generation", "metadata.generation of the object."),
                &object,
            )?,
            suspended: IntGaugeVec::new(
                opts(
                    "suspended",
                    "Whether the object is suspended (1) or not (0).",
                ),
                &object,
            )?,
            condition: IntGaugeVec::new(
                opts(
                    "condition",
                    "1 for the condition's current status, 0 for the others.",
                ),
                &["controller", "namespace", "name", "type", "status"],
            )?,
            observed_generation: IntGaugeVec::new(
                opts(
                    "condition_observed_generation",
                    "The generation the condition was computed from.",
                ),
                &condition,
            )?,
            last_transition: GaugeVec::new(
                opts(
                    "condition_last_transition_time_seconds",
                    "When the condition's status last changed, in Unix seconds.",
                ),
                &condition,
            )?,
        };
        let descs = [
            gauges.generation.desc(),
            gauges.suspended.desc(),
            gauges.condition.desc(),
            gauges.observed_generation.desc(),
            gauges.last_transition.desc(),
        ]
        .concat()
        .into_iter()
        .cloned()
        .collect();
        Ok(Self {
            controller: controller.into(),
            snapshot,
            gauges: Mutex::new(gauges),
            descs,
        })
    }
}

impl Collector for ObjectMetrics {
    fn desc(&self) -> Vec<&Desc> {
        self.descs.iter().collect()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let gauges = self.gauges.lock().unwrap_or_else(|p| p.into_inner());
        gauges.generation.reset();
        gauges.suspended.reset();
        gauges.condition.reset();
        gauges.observed_generation.reset();
        gauges.last_transition.reset();
        let controller = &*self.controller;
        for object in (self.snapshot)() {
            let labels = [controller, object.namespace.as_str(), object.name.as_str()];
            if let Some(generation) = object.generation {
                gauges.generation.with_label_values(&labels).set(generation);
            }
            gauges
                .suspended
                .with_label_values(&labels)
                .set(i64::from(object.suspended));
            for condition in &object.conditions {
                let labels = [
                    controller,
                    &object.namespace,
                    &object.name,
                    &condition.type_,
                ];
                for status in ConditionStatus::ALL {
                    let value = i64::from(condition.status == status.as_str());
                    let [c, ns, n, t] = labels;
                    gauges
                        .condition
                        .with_label_values(&[c, ns, n, t, status.as_str()])
                        .set(value);
                }
                if let Some(observed) = condition.observed_generation {
                    gauges
                        .observed_generation
                        .with_label_values(&labels)
                        .set(observed);
                }
                gauges
                    .last_transition
                    .with_label_values(&labels)
                    .set(condition.last_transition_time.0.as_second() as f64);
            }
        }
        [
            gauges.generation.collect(),
            gauges.suspended.collect(),
            gauges.condition.collect(),
            gauges.observed_generation.collect(),
            gauges.last_transition.collect(),
        ]
        .concat()
    }
}
