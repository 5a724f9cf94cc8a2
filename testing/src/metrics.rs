//! Reading metric samples from a `prometheus::Registry` by name and labels, as a test asserts
//! on what `/metrics` would show.

use std::collections::BTreeMap;

use prometheus::Registry;
use prometheus::proto::{MetricFamily, MetricType};

/// One sample: its labels and value.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The sample's labels.
    pub labels: BTreeMap<String, String>,
    /// Its value.
    pub value: f64,
}

/// Every sample of the metric `name` in `registry`, as the text exposition names them: a
/// counter or gauge by its family name, a histogram's observations by `<family>_count` and
/// their total by `<family>_sum`.
pub fn metric_samples(registry: &Registry, name: &str) -> Vec<Sample> {
    registry
        .gather()
        .iter()
        .flat_map(|family| samples_of(family, name))
        .collect()
}

/// The sum of the samples of `name` whose labels include every pair of `labels`, or `None`
/// when no sample matches (a series never created reads differently from a zero).
///
/// ```
/// use kubeward_testing::metric_value;
/// let registry = prometheus::Registry::new();
/// let passes = prometheus::IntCounterVec::new(
///     prometheus::Opts::new("passes_total", "passes"),
///     &["phase", "outcome"],
/// )
/// .unwrap();
/// registry.register(Box::new(passes.clone())).unwrap();
/// passes.with_label_values(&["apply", "completed"]).inc_by(3);
/// passes.with_label_values(&["apply", "failed"]).inc();
/// assert_eq!(metric_value(&registry, "passes_total", &[("outcome", "completed")]), Some(3.0));
/// assert_eq!(metric_value(&registry, "passes_total", &[("phase", "apply")]), Some(4.0));
/// assert_eq!(metric_value(&registry, "passes_total", &[("phase", "delete")]), None);
/// ```
pub fn metric_value(registry: &Registry, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let matching: Vec<f64> = metric_samples(registry, name)
        .into_iter()
        .filter(|sample| {
            labels
                .iter()
                .all(|(k, v)| sample.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|sample| sample.value)
        .collect();
    (!matching.is_empty()).then(|| matching.iter().sum())
}

fn samples_of(family: &MetricFamily, name: &str) -> Vec<Sample> {
    let family_name = family.name();
    let kind = family.get_field_type();
    let pick: Option<fn(&prometheus::proto::Metric) -> f64> = match kind {
        MetricType::COUNTER if name == family_name => Some(|m| m.get_counter().get_value()),
        MetricType::GAUGE if name == family_name => Some(|m| m.get_gauge().get_value()),
        MetricType::HISTOGRAM if name == format!("{family_name}_count") => {
            Some(|m| m.get_histogram().get_sample_count() as f64)
        }
        MetricType::HISTOGRAM if name == format!("{family_name}_sum") => {
            Some(|m| m.get_histogram().get_sample_sum())
        }
        _ => None,
    };
    let Some(pick) = pick else {
        return Vec::new();
    };
    family
        .get_metric()
        .iter()
        .map(|metric| Sample {
            labels: metric
                .get_label()
                .iter()
                .map(|l| (l.name().to_owned(), l.value().to_owned()))
                .collect(),
            value: pick(metric),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_are_read_by_count_and_sum() {
        let registry = Registry::new();
        let steps = prometheus::HistogramVec::new(
            prometheus::HistogramOpts::new("step_seconds", "steps"),
            &["step"],
        )
        .unwrap();
        registry.register(Box::new(steps.clone())).unwrap();
        steps.with_label_values(&["render"]).observe(0.5);
        steps.with_label_values(&["render"]).observe(1.5);
        assert_eq!(
            metric_value(&registry, "step_seconds_count", &[("step", "render")]),
            Some(2.0)
        );
        assert_eq!(
            metric_value(&registry, "step_seconds_sum", &[("step", "render")]),
            Some(2.0)
        );
        assert_eq!(metric_value(&registry, "step_seconds", &[]), None);
    }
}
