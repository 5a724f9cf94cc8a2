//! Wiring the rollout operator: the generated controller (events on, reporting as the declared
//! name), its options, and one registry with every metric for `/metrics`.

use std::collections::BTreeMap;
use std::time::Duration;

use kubeward::controller::Controller;
use kubeward::leader::LeaderElection;

use super::reconciler::{DEFAULT_STAGE_DELAY, Rollouts};

/// How the operator is configured.
#[derive(Debug, Clone)]
pub struct OperatorOptions {
    /// Delay between the stages of a rollout.
    pub stage_delay: Duration,
    /// How often repeated events are written as series counts.
    pub event_flush_interval: Duration,
    /// The reporting instance in events (the pod name in a cluster).
    pub instance: Option<String>,
    /// Reconcile only while holding the Lease [`LEASE_NAME`] in this namespace.
    pub leader_election: Option<LeaseOptions>,
    /// Watch and reconcile the Rollouts (and their children and pods) of these namespaces alone, with a
    /// Role in each ([`rbac::namespaced`](super::rbac::namespaced)); none for the whole cluster.
    pub namespaces: Vec<String>,
}

/// The name of the operator's Lease.
pub const LEASE_NAME: &str = "kubeward-rollouts";

/// Where the Lease of leader election lives, and its timings.
#[derive(Debug, Clone)]
pub struct LeaseOptions {
    /// The namespace of the Lease.
    pub namespace: String,
    /// Lease duration, renew deadline and retry period (client-go's defaults: 15 s, 10 s, 2 s).
    pub timings: (Duration, Duration, Duration),
}

impl LeaseOptions {
    /// A Lease in `namespace` with client-go's timings.
    pub fn new(namespace: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            timings: (
                kubeward::leader::DEFAULT_LEASE_DURATION,
                kubeward::leader::DEFAULT_RENEW_DEADLINE,
                kubeward::leader::DEFAULT_RETRY_PERIOD,
            ),
        }
    }
}

impl Default for OperatorOptions {
    fn default() -> Self {
        Self {
            stage_delay: DEFAULT_STAGE_DELAY,
            event_flush_interval: kubeward::events::DEFAULT_FLUSH_INTERVAL,
            instance: None,
            leader_election: None,
            namespaces: Vec::new(),
        }
    }
}

/// Why the operator could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A metric could not be created or registered.
    #[error("cannot set up metrics")]
    Metrics(#[from] prometheus::Error),
}

/// The ready-to-run controller and the registry that holds all its metrics.
pub struct Operator {
    /// The controller; configure it further (shutdown, leader election) and `run()` it.
    pub controller: Controller<Rollouts>,
    /// Pass, step and event-publish metrics, and per-object state (`kubeward_object_*`).
    pub registry: prometheus::Registry,
}

impl Operator {
    /// The operator against the cluster `client` talks to.
    ///
    /// # Errors
    /// See [`SetupError`].
    pub fn new(client: kube::Client, options: &OperatorOptions) -> Result<Self, SetupError> {
        let registry = prometheus::Registry::new();
        let mut controller = Rollouts::new(client.clone())
            .with_stage_delay(options.stage_delay)
            .controller(client.clone())
            .with_event_flush_interval(options.event_flush_interval)
            .register_metrics(&registry)?;
        if let Some(instance) = &options.instance {
            controller = controller.with_reporting_instance(instance.clone());
        }
        if !options.namespaces.is_empty() {
            controller = controller.in_namespaces(options.namespaces.iter().cloned());
        }
        if let Some(lease) = &options.leader_election {
            let identity = options
                .instance
                .clone()
                .unwrap_or_else(kubeward::leader::default_identity);
            let (duration, deadline, retry) = lease.timings;
            controller = controller.with_leader_election(
                LeaderElection::new(client, &lease.namespace, LEASE_NAME, identity)
                    .with_timings(duration, deadline, retry),
            );
        }
        Ok(Self {
            controller,
            registry,
        })
    }
}

/// The Rollout CustomResourceDefinition, with the CEL rules that make the API server enforce the
/// `UpToDate` vocabulary on every writer (see [`kubeward::crd`]).
pub fn crd()
-> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    kubeward::crd::for_reconciler::<Rollouts>()
        .expect("the Rollout schema keeps its conditions in status.conditions")
}

/// The Prometheus alert rules of the operator and their promtool tests, generated from its
/// declaration (`examples/alerts` holds them as files, checked by `examples/tests/alerts.rs`).
///
/// # Errors
/// Never for this operator: it declares its `UpToDate` condition.
pub fn alert_rules() -> Result<kubeward::alerts::AlertRules, kubeward::alerts::AlertsError> {
    kubeward::alerts::AlertRules::for_reconciler::<Rollouts>()
}

/// The samples of the metric `name` in a registry, as (labels, value); a histogram's
/// `_count` is its number of observations.
pub fn samples(
    registry: &prometheus::Registry,
    name: &str,
) -> Vec<(BTreeMap<String, String>, f64)> {
    let text = prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap_or_default();
    parse_samples(&text, name)
}

/// The samples of the metric `name` in Prometheus text exposition `text`.
pub fn parse_samples(text: &str, name: &str) -> Vec<(BTreeMap<String, String>, f64)> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (metric, labels) = match series.split_once('{') {
                Some((metric, rest)) => (metric, rest.strip_suffix('}')?),
                None => (series, ""),
            };
            if metric != name {
                return None;
            }
            let mut map = BTreeMap::new();
            for pair in labels.split("\",").filter(|p| !p.is_empty()) {
                let (key, value) = pair.split_once("=\"")?;
                map.insert(key.to_owned(), value.trim_end_matches('"').to_owned());
            }
            Some((map, value.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_parsed_with_their_labels() {
        let text =
            "# HELP x y\nkubeward_x{a=\"1\",b=\"two\"} 3\nkubeward_x_count 4\nkubeward_x 5\n";
        let samples = parse_samples(text, "kubeward_x");
        assert_eq!(samples.len(), 2);
        assert_eq!(samples[0].0["b"], "two");
        assert_eq!(samples[0].1, 3.0);
        assert_eq!(samples[1].1, 5.0);
    }
}
