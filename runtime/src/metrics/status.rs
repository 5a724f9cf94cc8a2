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
/// | `kubeward_controller_queue_depth` | controller | objects whose change was seen and whose pass has not started (controller-runtime's `workqueue_depth`), with [`with_queue_depth`](ControllerMetrics::with_queue_depth) |
///
/// Get one from [`Controller::controller_metrics`](crate::controller::Controller::controller_metrics)
/// (registered by `register_metrics`).
pub struct ControllerMetrics {
    controller: Arc<str>,
    leading: Arc<dyn Fn() -> bool + Send + Sync>,
    leading_desc: Desc,
    queue_depth: Option<(Arc<dyn Fn() -> usize + Send + Sync>, Desc)>,
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
            queue_depth: None,
        })
    }

    /// Adds `<prefix>_controller_queue_depth`: how many objects whose change was seen wait for
    /// their pass, as `depth` reads it at each scrape (controller-runtime's `workqueue_depth`).
    ///
    /// # Errors
    /// When the prefix given to [`new`](Self::new) is not a valid metric-name prefix.
    pub fn with_queue_depth(
        mut self,
        depth: Arc<dyn Fn() -> usize + Send + Sync>,
    ) -> Result<Self, prometheus::Error> {
        let prefix = self
            .leading_desc
            .fq_name
            .strip_suffix("_controller_leading")
            .unwrap_or_default()
            .to_owned();
        let desc = Desc::new(
            format!("{prefix}_controller_queue_depth"),
            "Objects whose change was seen and whose pass has not started.".to_owned(),
            Vec::new(),
            HashMap::from([("controller".to_owned(), self.controller.to_string())]),
        )?;
        self.queue_depth = Some((depth, desc));
        Ok(self)
    }

    /// The gauge family of `desc` with one sample, `value`, labelled with the controller.
    fn gauge(&self, desc: &Desc, value: f64) -> MetricFamily {
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
        family
    }
}

impl Collector for ControllerMetrics {
    /// The leading family alone: one description per collector keeps collectors of several
    /// controllers apart in the registry (see `ObjectMetrics`' `registered`); the queue-depth
    /// family is collected all the same.
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.leading_desc]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let leading = f64::from(u8::from((self.leading)()));
        let mut families = vec![self.gauge(&self.leading_desc, leading)];
        if let Some((depth, desc)) = &self.queue_depth {
            // Precision: a queue of more than 2^53 objects is not a concern.
            #[allow(clippy::cast_precision_loss)]
            families.push(self.gauge(desc, depth() as f64));
        }
        families
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::ControllerMetrics;
    use crate::metrics::{ObjectMetrics, ObjectState};

    /// Controllers named `…/c-0` and `…/c-1` register both their collectors on one registry (the
    /// registry's collector ids, sums of FNV-1a description ids, collided for them when each
    /// collector described both its families), and each family holds both controllers' series.
    #[test]
    fn controllers_whose_names_differ_in_one_character_register_on_one_registry() {
        let registry = prometheus::Registry::new();
        for controller in ["test.kubeward.dev/c-0", "test.kubeward.dev/c-1"] {
            let objects = ObjectMetrics::new(
                "kubeward",
                controller,
                Arc::new(|| {
                    vec![ObjectState {
                        namespace: "default".into(),
                        name: "web".into(),
                        generation: Some(1),
                        conditions: vec![],
                        suspended: false,
                        terminal: false,
                        info: vec![],
                    }]
                }),
            )
            .expect("valid");
            registry
                .register(Box::new(objects))
                .expect("objects register");
            let own = ControllerMetrics::new("kubeward", controller, Arc::new(|| true))
                .expect("valid")
                .with_queue_depth(Arc::new(|| 3))
                .expect("valid");
            registry
                .register(Box::new(own))
                .expect("controller metrics register");
        }
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .expect("encodes");
        for controller in ["test.kubeward.dev/c-0", "test.kubeward.dev/c-1"] {
            for series in [
                format!(r#"kubeward_controller_leading{{controller="{controller}"}} 1"#),
                format!(r#"kubeward_controller_queue_depth{{controller="{controller}"}} 3"#),
                format!(
                    r#"kubeward_object_generation{{controller="{controller}",name="web",namespace="default"}} 1"#
                ),
                format!(
                    r#"kubeward_object_suspended{{controller="{controller}",name="web",namespace="default"}} 0"#
                ),
            ] {
                assert!(text.contains(&series), "{series} in:\n{text}");
            }
        }
        assert_eq!(
            text.matches("# TYPE kubeward_controller_queue_depth gauge")
                .count(),
            1
        );
    }
}
