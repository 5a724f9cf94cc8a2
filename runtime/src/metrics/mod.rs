//! Prometheus metrics of reconcile passes, steps and event publishes (feature `prometheus`).
//!
//! [`Metrics`] is a [`ReconcileObserver`] that is also a [`prometheus::core::Collector`], so it
//! works with a plain [`prometheus::Registry`] or any registry that takes collectors:
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `kubeward_reconcile_passes_total` | counter | controller, phase, outcome |
//! | `kubeward_reconcile_errors_total` | counter | controller, phase, reason: why the failed passes failed ([`FailureReason`]: `error`, `terminal`, `timeout`, `panic`, `write`) |
//! | `kubeward_reconcile_passes_in_flight` | gauge | controller: passes running now (controller-runtime's `active_workers`) |
//! | `kubeward_reconcile_pass_duration_seconds` | histogram | controller, phase, outcome |
//! | `kubeward_reconcile_step_duration_seconds` | histogram | controller, step, outcome |
//! | `kubeward_event_publishes_total` | counter | controller, type, result |
//! | `kubeward_reconcile_queue_wait_seconds` | histogram | controller: from a change seen to its pass's start (controller-runtime's `workqueue_queue_duration_seconds`) |
//! | `kubeward_child_writes_total` | counter | controller, kind, operation (`apply`, `delete`, `prune`), result (`ok`, `failed`): the children passes wrote ([`relations`](crate::relations)) |
//!
//! When a controller registers, every label combination it can produce is initialised to zero,
//! so `rate()` and absence-based alerts work from the first scrape.
//!
//! [`ControllerMetrics`] adds whether this replica leads (`kubeward_controller_leading`) and the
//! controller's concurrency (`kubeward_controller_max_concurrency`).
//!
//! [`ObjectMetrics`] adds per-object state (generation, conditions, suspended) read from the
//! controller's cache at scrape time: enough to alert on "rollout started", "rollout completed"
//! and "rollout stuck" without kube-state-metrics.
//!
//! ```
//! use std::sync::Arc;
//! use kubeward::metrics::Metrics;
//! use kubeward::observe::{ControllerInfo, ReconcileObserver, StepName};
//!
//! let metrics = Metrics::builder().build()?;
//! let registry = prometheus::Registry::new();
//! // Clones share their samples: register one, hand another to the controller as its observer.
//! registry.register(Box::new(metrics.clone()))?;
//! let observer: Arc<dyn ReconcileObserver> = Arc::new(metrics.clone());
//! metrics.controller_registered(&ControllerInfo {
//!     name: "demo.kubeward.dev/rollouts".into(),
//!     steps: vec![StepName::from_static("render")],
//!     owns: vec!["ConfigMap".into()],
//! });
//! let text = prometheus::TextEncoder::new().encode_to_string(&registry.gather())?;
//! assert!(text.contains(
//!     r#"kubeward_reconcile_passes_total{controller="demo.kubeward.dev/rollouts",outcome="completed",phase="apply"} 0"#
//! ));
//! # Ok::<(), prometheus::Error>(())
//! ```

mod exposition;
mod objects;
mod status;
mod text;

pub use exposition::{Format, encode};
pub use objects::{ObjectMetrics, ObjectState};
use std::sync::{Arc, RwLock};

use prometheus::core::{Collector, Desc};
use prometheus::proto::MetricFamily;
use prometheus::{HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts};
pub use status::ControllerMetrics;

use crate::observe::{
    ChildOperation, ChildWriteRecord, ControllerInfo, FailureReason, Outcome, PassRecord,
    PassStarted, Phase, PublishRecord, PublishResult, QueueRecord, ReconcileObserver, StepRecord,
};

/// Default histogram buckets, in seconds: from 10 ms to 30 s.
pub const DEFAULT_BUCKETS: [f64; 6] = [0.01, 0.05, 0.25, 1.0, 5.0, 30.0];

/// Default metric-name prefix.
pub const DEFAULT_PREFIX: &str = "kubeward";

const EVENT_TYPES: [&str; 2] = ["Normal", "Warning"];

/// Builds [`Metrics`] with a custom prefix or buckets.
#[derive(Debug, Clone)]
pub struct MetricsBuilder {
    prefix: String,
    buckets: Vec<f64>,
}

impl MetricsBuilder {
    /// Uses `prefix` instead of `kubeward` before every metric name (`<prefix>_reconcile_...`).
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Uses `buckets` (seconds, increasing) for both duration histograms.
    #[must_use]
    pub fn buckets(mut self, buckets: impl Into<Vec<f64>>) -> Self {
        self.buckets = buckets.into();
        self
    }

    /// The metrics.
    ///
    /// # Errors
    /// When the prefix is not a valid metric-name prefix or the buckets are not increasing.
    pub fn build(self) -> Result<Metrics, prometheus::Error> {
        // prometheus checks buckets only when a label combination is first used, by panicking:
        // check them here, where a bad value can still be reported.
        if self.buckets.is_empty()
            || self.buckets.windows(2).any(|w| w[0] >= w[1])
            || self.buckets.iter().any(|b| !b.is_finite())
        {
            return Err(prometheus::Error::Msg(format!(
                "histogram buckets must be finite and strictly increasing, got {:?}",
                self.buckets
            )));
        }
        let name = |suffix: &str| format!("{}_{suffix}", self.prefix);
        let histogram = |suffix: &str, help: &str, labels: &[&str]| {
            HistogramVec::new(
                HistogramOpts::new(name(suffix), help).buckets(self.buckets.clone()),
                labels,
            )
        };
        Ok(Metrics {
            resolved: Arc::default(),
            passes: IntCounterVec::new(
                Opts::new(
                    name("reconcile_passes_total"),
                    "Reconcile passes by phase and outcome.",
                ),
                &["controller", "phase", "outcome"],
            )?,
            errors: IntCounterVec::new(
                Opts::new(
                    name("reconcile_errors_total"),
                    "Failed reconcile passes by phase and why they failed: error (retried), \
                     terminal (not retried until the object changes), timeout, panic, write.",
                ),
                &["controller", "phase", "reason"],
            )?,
            in_flight: IntGaugeVec::new(
                Opts::new(
                    name("reconcile_passes_in_flight"),
                    "Reconcile passes running now.",
                ),
                &["controller"],
            )?,
            pass_duration: histogram(
                "reconcile_pass_duration_seconds",
                "Duration of reconcile passes by phase and outcome.",
                &["controller", "phase", "outcome"],
            )?,
            step_duration: histogram(
                "reconcile_step_duration_seconds",
                "Duration of reconcile steps by step and outcome.",
                &["controller", "step", "outcome"],
            )?,
            publishes: IntCounterVec::new(
                Opts::new(
                    name("event_publishes_total"),
                    "Kubernetes event publishes by type and result.",
                ),
                &["controller", "type", "result"],
            )?,
            queue_wait: histogram(
                "reconcile_queue_wait_seconds",
                "Time from a change seen to the start of its pass.",
                &["controller"],
            )?,
            child_writes: IntCounterVec::new(
                Opts::new(
                    name("child_writes_total"),
                    "Writes of owned children by kind, operation (apply, delete, prune) and result.",
                ),
                &["controller", "kind", "operation", "result"],
            )?,
        })
    }
}

/// Prometheus metrics of reconcile passes, steps and event publishes; see the
/// [module documentation](self). Clones share their samples.
#[derive(Debug, Clone)]
pub struct Metrics {
    /// The pass series of each registered controller, resolved once: a pass updates them
    /// without hashing its labels (four `with_label_values` per pass otherwise).
    resolved: Arc<RwLock<Vec<Arc<PassSeries>>>>,
    passes: IntCounterVec,
    errors: IntCounterVec,
    in_flight: IntGaugeVec,
    pass_duration: HistogramVec,
    step_duration: HistogramVec,
    publishes: IntCounterVec,
    queue_wait: HistogramVec,
    child_writes: IntCounterVec,
}

impl Metrics {
    /// A builder with the default prefix (`kubeward`) and [`DEFAULT_BUCKETS`].
    pub fn builder() -> MetricsBuilder {
        MetricsBuilder {
            prefix: DEFAULT_PREFIX.to_owned(),
            buckets: DEFAULT_BUCKETS.to_vec(),
        }
    }
}

/// One controller's pass series: in flight, and per phase and outcome (in the order of
/// [`Phase::ALL`] and [`Outcome::ALL`]) the count and the duration.
struct PassSeries {
    controller: Arc<str>,
    in_flight: prometheus::IntGauge,
    passes: Vec<prometheus::IntCounter>,
    durations: Vec<prometheus::Histogram>,
}

impl std::fmt::Debug for PassSeries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassSeries")
            .field("controller", &self.controller)
            .finish_non_exhaustive()
    }
}

impl PassSeries {
    /// The index of `phase` and `outcome` in `passes` and `durations`.
    fn index(phase: Phase, outcome: Outcome) -> usize {
        let phase = match phase {
            Phase::Init => 0,
            Phase::Apply => 1,
            Phase::Cleanup => 2,
            Phase::Delete => 3,
        };
        let outcome = match outcome {
            Outcome::Completed => 0,
            Outcome::Waiting => 1,
            Outcome::Skipped => 2,
            Outcome::Failed => 3,
            Outcome::Abandoned => 4,
        };
        phase * Outcome::ALL.len() + outcome
    }
}

impl Metrics {
    /// The resolved pass series of `controller`, when it was registered.
    fn series_of(&self, controller: &str) -> Option<Arc<PassSeries>> {
        let resolved = self
            .resolved
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        resolved
            .iter()
            .find(|series| &*series.controller == controller)
            .cloned()
    }
}

impl ReconcileObserver for Metrics {
    fn controller_registered(&self, controller: &ControllerInfo) {
        let name = &*controller.name;
        let mut series = PassSeries {
            controller: Arc::from(name),
            in_flight: self.in_flight.with_label_values(&[name]),
            passes: Vec::new(),
            durations: Vec::new(),
        };
        for phase in Phase::ALL {
            for outcome in Outcome::ALL {
                let labels = [name, phase.as_str(), outcome.as_str()];
                series.passes.push(self.passes.with_label_values(&labels));
                series
                    .durations
                    .push(self.pass_duration.with_label_values(&labels));
            }
        }
        {
            let mut resolved = self
                .resolved
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            resolved.retain(|known| &*known.controller != name);
            resolved.push(Arc::new(series));
        }
        for phase in Phase::ALL {
            for outcome in Outcome::ALL {
                let labels = [name, phase.as_str(), outcome.as_str()];
                self.passes.with_label_values(&labels);
                self.pass_duration.with_label_values(&labels);
            }
            for reason in FailureReason::ALL {
                self.errors
                    .with_label_values(&[name, phase.as_str(), reason.as_str()]);
            }
        }
        self.in_flight.with_label_values(&[name]);
        self.queue_wait.with_label_values(&[name]);
        for step in &controller.steps {
            for outcome in Outcome::STEP {
                self.step_duration
                    .with_label_values(&[name, step.as_str(), outcome.as_str()]);
            }
        }
        for event_type in EVENT_TYPES {
            for result in PublishResult::ALL {
                self.publishes
                    .with_label_values(&[name, event_type, result.as_str()]);
            }
        }
        for kind in &controller.owns {
            for operation in ChildOperation::ALL {
                for result in CHILD_WRITE_RESULTS {
                    self.child_writes
                        .with_label_values(&[name, kind, operation.as_str(), result]);
                }
            }
        }
    }

    fn pass_started(&self, pass: &PassStarted) {
        match self.series_of(&pass.controller) {
            Some(series) => series.in_flight.inc(),
            None => self.in_flight.with_label_values(&[&*pass.controller]).inc(),
        }
    }

    fn pass_finished(&self, record: &PassRecord) {
        if let Some(reason) = record.failure {
            self.errors
                .with_label_values(&[&*record.controller, record.phase.as_str(), reason.as_str()])
                .inc();
        }
        let duration = record.duration.as_secs_f64();
        match self.series_of(&record.controller) {
            Some(series) => {
                let index = PassSeries::index(record.phase, record.outcome);
                series.in_flight.dec();
                series.passes[index].inc();
                series.durations[index].observe(duration);
            }
            None => {
                let controller = &*record.controller;
                let labels = [controller, record.phase.as_str(), record.outcome.as_str()];
                self.in_flight.with_label_values(&[controller]).dec();
                self.passes.with_label_values(&labels).inc();
                self.pass_duration
                    .with_label_values(&labels)
                    .observe(duration);
            }
        }
    }

    fn step_finished(&self, record: &StepRecord) {
        self.step_duration
            .with_label_values(&[
                &*record.controller,
                record.step.as_str(),
                record.outcome.as_str(),
            ])
            .observe(record.duration.as_secs_f64());
    }

    fn event_published(&self, record: &PublishRecord) {
        let event_type = match record.event_type {
            kube::runtime::events::EventType::Normal => EVENT_TYPES[0],
            kube::runtime::events::EventType::Warning => EVENT_TYPES[1],
        };
        self.publishes
            .with_label_values(&[&*record.controller, event_type, record.result.as_str()])
            .inc();
    }

    fn pass_dequeued(&self, record: &QueueRecord) {
        self.queue_wait
            .with_label_values(&[&*record.controller])
            .observe(record.waited.as_secs_f64());
    }

    fn child_written(&self, record: &ChildWriteRecord) {
        let result = CHILD_WRITE_RESULTS[usize::from(!record.succeeded)];
        self.child_writes
            .with_label_values(&[
                &*record.controller,
                &*record.kind,
                record.operation.as_str(),
                result,
            ])
            .inc();
    }
}

/// The `result` label values of `child_writes_total`: succeeded, failed.
const CHILD_WRITE_RESULTS: [&str; 2] = ["ok", "failed"];

impl Collector for Metrics {
    fn desc(&self) -> Vec<&Desc> {
        [
            self.passes.desc(),
            self.errors.desc(),
            self.in_flight.desc(),
            self.pass_duration.desc(),
            self.step_duration.desc(),
            self.publishes.desc(),
            self.queue_wait.desc(),
            self.child_writes.desc(),
        ]
        .concat()
    }

    fn collect(&self) -> Vec<MetricFamily> {
        [
            self.passes.collect(),
            self.errors.collect(),
            self.in_flight.collect(),
            self.pass_duration.collect(),
            self.step_duration.collect(),
            self.publishes.collect(),
            self.queue_wait.collect(),
            self.child_writes.collect(),
        ]
        .concat()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use kube::runtime::events::EventType;

    use super::*;
    use crate::observe::{ObjectRef, StepName};

    const CONTROLLER: &str = "demo.kubeward.dev/rollouts";

    fn object() -> Arc<ObjectRef> {
        Arc::new(ObjectRef {
            api_version: "demo.kubeward.dev/v1".into(),
            kind: "Rollout".into(),
            namespace: Some("demo".into()),
            name: "web".into(),
            uid: None,
        })
    }

    fn pass(phase: Phase, outcome: Outcome, millis: u64) -> PassRecord {
        PassRecord {
            controller: CONTROLLER.into(),
            object: object(),
            phase,
            outcome,
            failure: (outcome == Outcome::Failed).then_some(FailureReason::Error),
            duration: Duration::from_millis(millis),
            reconcile_id: crate::observe::ReconcileId::random(),
        }
    }

    fn registry_with(metrics: Metrics) -> (Arc<Metrics>, prometheus::Registry) {
        let registry = prometheus::Registry::new();
        registry.register(Box::new(metrics.clone())).unwrap();
        (Arc::new(metrics), registry)
    }

    fn exposition(registry: &prometheus::Registry) -> String {
        prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap()
    }

    fn sample<'a>(text: &'a str, series: &str) -> &'a str {
        text.lines()
            .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no sample {series} in:\n{text}"))
    }

    #[test]
    fn a_pass_series_index_follows_the_order_series_are_resolved_in() {
        let mut expected = 0;
        for phase in Phase::ALL {
            for outcome in Outcome::ALL {
                assert_eq!(
                    PassSeries::index(phase, outcome),
                    expected,
                    "{phase} {outcome}"
                );
                expected += 1;
            }
        }
    }

    #[test]
    fn passes_are_counted_and_timed_by_controller_phase_and_outcome() {
        for registered in [false, true] {
            let (metrics, registry) = registry_with(Metrics::builder().build().unwrap());
            if registered {
                // Registered, a pass updates the series resolved at registration.
                metrics.controller_registered(&ControllerInfo {
                    name: "demo.kubeward.dev/rollouts".into(),
                    steps: vec![],
                    owns: vec![],
                });
            }
            metrics.pass_finished(&pass(Phase::Apply, Outcome::Completed, 30));
            metrics.pass_finished(&pass(Phase::Apply, Outcome::Completed, 2_000));
            metrics.pass_finished(&pass(Phase::Cleanup, Outcome::Failed, 5));
            let text = exposition(&registry);
            let labels =
                r#"controller="demo.kubeward.dev/rollouts",outcome="completed",phase="apply""#;
            assert_eq!(
                sample(
                    &text,
                    &format!("kubeward_reconcile_passes_total{{{labels}}}")
                ),
                "2"
            );
            assert_eq!(
                sample(
                    &text,
                    &format!("kubeward_reconcile_pass_duration_seconds_count{{{labels}}}")
                ),
                "2"
            );
            assert_eq!(
                sample(
                    &text,
                    &format!("kubeward_reconcile_pass_duration_seconds_sum{{{labels}}}")
                ),
                "2.03"
            );
            // 30 ms falls in the 0.05 bucket; 2 s in the 5 s bucket.
            let bucket = |le: &str| {
                format!(
                    r#"kubeward_reconcile_pass_duration_seconds_bucket{{controller="demo.kubeward.dev/rollouts",outcome="completed",phase="apply",le="{le}"}}"#
                )
            };
            assert_eq!(sample(&text, &bucket("0.01")), "0");
            assert_eq!(sample(&text, &bucket("0.05")), "1");
            assert_eq!(sample(&text, &bucket("1")), "1");
            assert_eq!(sample(&text, &bucket("5")), "2");
            assert_eq!(sample(&text, &bucket("+Inf")), "2");
            assert_eq!(
                sample(
                    &text,
                    r#"kubeward_reconcile_passes_total{controller="demo.kubeward.dev/rollouts",outcome="failed",phase="cleanup"}"#
                ),
                "1"
            );
        }
    }

    #[test]
    fn steps_are_timed_by_controller_step_and_outcome() {
        let (metrics, registry) = registry_with(Metrics::builder().build().unwrap());
        metrics.step_finished(&StepRecord {
            controller: CONTROLLER.into(),
            object: object(),
            phase: Phase::Apply,
            step: StepName::from_static("deploy"),
            outcome: Outcome::Failed,
            duration: Duration::from_millis(300),
        });
        let text = exposition(&registry);
        assert_eq!(
            sample(
                &text,
                r#"kubeward_reconcile_step_duration_seconds_bucket{controller="demo.kubeward.dev/rollouts",outcome="failed",step="deploy",le="0.25"}"#
            ),
            "0"
        );
        assert_eq!(
            sample(
                &text,
                r#"kubeward_reconcile_step_duration_seconds_bucket{controller="demo.kubeward.dev/rollouts",outcome="failed",step="deploy",le="1"}"#
            ),
            "1"
        );
    }

    #[test]
    fn event_publishes_are_counted_by_type_and_result() {
        let (metrics, registry) = registry_with(Metrics::builder().build().unwrap());
        for result in [
            PublishResult::Created,
            PublishResult::Aggregated,
            PublishResult::Aggregated,
        ] {
            metrics.event_published(&PublishRecord {
                controller: CONTROLLER.into(),
                event_type: EventType::Warning,
                result,
            });
        }
        let text = exposition(&registry);
        assert_eq!(
            sample(
                &text,
                r#"kubeward_event_publishes_total{controller="demo.kubeward.dev/rollouts",result="aggregated",type="Warning"}"#
            ),
            "2"
        );
    }

    #[test]
    fn registered_controller_label_combinations_start_at_zero() {
        let (metrics, registry) = registry_with(Metrics::builder().build().unwrap());
        metrics.controller_registered(&ControllerInfo {
            name: CONTROLLER.into(),
            steps: vec![
                StepName::from_static("render"),
                StepName::from_static("deploy"),
            ],
            owns: vec!["ConfigMap".into()],
        });
        let text = exposition(&registry);
        let count = |prefix: &str| text.lines().filter(|l| l.starts_with(prefix)).count();
        assert_eq!(
            count("kubeward_reconcile_passes_total{"),
            Phase::ALL.len() * Outcome::ALL.len()
        );
        assert_eq!(count("kubeward_reconcile_pass_duration_seconds_count{"), 20);
        assert_eq!(
            count("kubeward_reconcile_step_duration_seconds_count{"),
            2 * Outcome::STEP.len()
        );
        assert_eq!(
            count("kubeward_event_publishes_total{"),
            2 * PublishResult::ALL.len()
        );
        assert_eq!(
            count(
                r#"kubeward_child_writes_total{controller="demo.kubeward.dev/rollouts",kind="ConfigMap","#
            ),
            ChildOperation::ALL.len() * 2
        );
        assert!(
            text.lines()
                .filter(|l| l.starts_with("kubeward_reconcile_passes_total{"))
                .all(|l| l.ends_with(" 0"))
        );
        assert_eq!(
            sample(
                &text,
                r#"kubeward_reconcile_step_duration_seconds_count{controller="demo.kubeward.dev/rollouts",outcome="abandoned",step="render"}"#
            ),
            "0"
        );
    }

    #[test]
    fn child_writes_are_counted_by_kind_operation_and_result() {
        let (metrics, registry) = registry_with(Metrics::builder().build().unwrap());
        for (operation, succeeded) in [
            (ChildOperation::Apply, true),
            (ChildOperation::Apply, true),
            (ChildOperation::Prune, true),
            (ChildOperation::Delete, false),
        ] {
            metrics.child_written(&ChildWriteRecord {
                controller: CONTROLLER.into(),
                kind: "ConfigMap".into(),
                operation,
                succeeded,
            });
        }
        let text = exposition(&registry);
        let written = |operation: &str, result: &str| {
            sample(
                &text,
                &format!(
                    r#"kubeward_child_writes_total{{controller="demo.kubeward.dev/rollouts",kind="ConfigMap",operation="{operation}",result="{result}"}}"#
                ),
            )
        };
        assert_eq!(written("apply", "ok"), "2");
        assert_eq!(written("prune", "ok"), "1");
        assert_eq!(written("delete", "failed"), "1");
    }

    #[test]
    fn prefix_and_buckets_are_overridable() {
        let metrics = Metrics::builder()
            .prefix("mz_orchestratord")
            .buckets([0.5, 2.0])
            .build()
            .unwrap();
        let (metrics, registry) = registry_with(metrics);
        metrics.pass_finished(&pass(Phase::Init, Outcome::Completed, 1_000));
        let text = exposition(&registry);
        let bucket = |le: &str| {
            format!(
                r#"mz_orchestratord_reconcile_pass_duration_seconds_bucket{{controller="demo.kubeward.dev/rollouts",outcome="completed",phase="init",le="{le}"}}"#
            )
        };
        assert_eq!(sample(&text, &bucket("0.5")), "0");
        assert_eq!(sample(&text, &bucket("2")), "1");
        assert!(!text.contains("le=\"0.01\""));
        assert!(!text.contains("kubeward_reconcile"));
    }

    #[test]
    fn invalid_prefix_is_an_error() {
        assert!(Metrics::builder().prefix("my-operator").build().is_err());
        assert!(Metrics::builder().buckets([2.0, 1.0]).build().is_err());
    }

    #[test]
    fn passes_in_flight_and_failures_by_reason_are_counted() {
        use crate::observe::{Observers, PassGuard};
        let (metrics, registry) = registry_with(Metrics::builder().build().unwrap());
        let in_flight =
            r#"kubeward_reconcile_passes_in_flight{controller="demo.kubeward.dev/rollouts"}"#;
        let errors = |reason: &str| {
            format!(
                r#"kubeward_reconcile_errors_total{{controller="demo.kubeward.dev/rollouts",phase="apply",reason="{reason}"}}"#
            )
        };
        metrics.controller_registered(&ControllerInfo {
            name: CONTROLLER.into(),
            steps: vec![],
            owns: vec![],
        });
        let text = exposition(&registry);
        assert_eq!(sample(&text, in_flight), "0");
        for reason in FailureReason::ALL {
            assert_eq!(sample(&text, &errors(reason.as_str())), "0");
        }
        let start = || {
            PassGuard::start(
                CONTROLLER.into(),
                object(),
                Phase::Apply,
                Observers::new(vec![metrics.clone()]),
            )
        };
        let (first, second, third) = (start(), start(), start());
        assert_ne!(first.reconcile_id(), second.reconcile_id());
        assert_eq!(sample(&exposition(&registry), in_flight), "3");
        first.fail(FailureReason::Terminal);
        second.finish(Outcome::Failed);
        drop(third);
        let text = exposition(&registry);
        assert_eq!(sample(&text, in_flight), "0", "abandoned passes leave too");
        assert_eq!(sample(&text, &errors("terminal")), "1");
        assert_eq!(sample(&text, &errors("error")), "1");
        let failed = r#"kubeward_reconcile_passes_total{controller="demo.kubeward.dev/rollouts",outcome="failed",phase="apply"}"#;
        assert_eq!(
            sample(&text, failed),
            "2",
            "both failures are failed passes"
        );
    }

    #[tokio::test]
    async fn passes_driven_through_the_observer_api_reach_the_registry() {
        use crate::observe::{Observers, PassGuard, step};
        let (metrics, registry) = registry_with(Metrics::builder().build().unwrap());
        let guard = PassGuard::start(
            CONTROLLER.into(),
            object(),
            Phase::Apply,
            Observers::new(vec![metrics.clone()]),
        );
        guard
            .run(step(StepName::from_static("render"), async {}))
            .await;
        drop(guard); // abandoned
        let text = exposition(&registry);
        assert_eq!(
            sample(
                &text,
                r#"kubeward_reconcile_passes_total{controller="demo.kubeward.dev/rollouts",outcome="abandoned",phase="apply"}"#
            ),
            "1"
        );
        assert_eq!(
            sample(
                &text,
                r#"kubeward_reconcile_step_duration_seconds_count{controller="demo.kubeward.dev/rollouts",outcome="completed",step="render"}"#
            ),
            "1"
        );
    }
}
