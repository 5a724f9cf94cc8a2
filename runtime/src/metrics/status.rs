//! [`ControllerMetrics`]: the state of a controller itself, read at scrape time: whether this
//! replica reconciles (leads).

use std::collections::HashMap;
use std::sync::Arc;

use prometheus::core::{Collector, Desc};
use prometheus::proto::{Gauge, LabelPair, Metric, MetricFamily, MetricType};

/// A collector of one gauge per controller:
///
/// | metric | labels | value |
/// |---|---|---|
/// | `kubeward_controller_leading` | controller | 1 while this replica reconciles (it holds the lease, or runs without leader election), 0 while it is a standby or stopped (controller-runtime's `leader_election_master_status`) |
///
/// Get one from [`Controller::controller_metrics`](crate::controller::Controller::controller_metrics)
/// (registered by `register_metrics`).
pub struct ControllerMetrics {
    controller: Arc<str>,
    leading: Arc<dyn Fn() -> bool + Send + Sync>,
    leading_desc: Desc,
}

impl std::fmt::Debug for ControllerMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerMetrics")
            .field("controller", &self.controller)
            .finish_non_exhaustive()
    }
}

impl ControllerMetrics {
    /// The metrics named `<prefix>_controller_*` of `controller`, whose leadership `leading`
    /// reads at each scrape.
    ///
    /// # Errors
    /// When `prefix` is not a valid metric-name prefix.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kubeward::metrics::ControllerMetrics;
    /// let metrics = ControllerMetrics::new("kubeward", "demo.kubeward.dev/rollouts", Arc::new(|| true))?;
    /// let registry = prometheus::Registry::new();
    /// registry.register(Box::new(metrics))?;
    /// let text = prometheus::TextEncoder::new().encode_to_string(&registry.gather())?;
    /// assert!(text.contains(r#"kubeward_controller_leading{controller="demo.kubeward.dev/rollouts"} 1"#));
    /// # Ok::<(), prometheus::Error>(())
    /// ```
    pub fn new(
        prefix: &str,
        controller: impl Into<Arc<str>>,
        leading: Arc<dyn Fn() -> bool + Send + Sync>,
    ) -> Result<Self, prometheus::Error> {
        let controller: Arc<str> = controller.into();
        Ok(Self {
            controller: controller.clone(),
            leading,
            leading_desc: Desc::new(
                format!("{prefix}_controller_leading"),
                "1 while this replica reconciles (it holds the lease, or runs without leader \
                 election), 0 while it is a standby or stopped."
                    .to_owned(),
                // A constant label: the collectors of several controllers register on one
                // registry (the registry merges their samples by family name).
                Vec::new(),
                HashMap::from([("controller".to_owned(), controller.to_string())]),
            )?,
        })
    }
}

impl Collector for ControllerMetrics {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.leading_desc]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let desc = &self.leading_desc;
        let value = f64::from(u8::from((self.leading)()));
        let mut label = LabelPair::default();
        label.set_name("controller".to_owned());
        label.set_value(self.controller.to_string());
        let mut gauge = Gauge::default();
        gauge.set_value(value);
        let mut metric = Metric::from_label(vec![label]);
        metric.set_gauge(gauge);
        let mut family = MetricFamily::default();
        family.set_name(desc.fq_name.clone());
        family.set_help(desc.help.clone());
        family.set_field_type(MetricType::GAUGE);
        family.set_metric(vec![metric]);
        vec![family]
    }
}
