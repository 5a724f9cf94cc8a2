//! Per-object state as Prometheus gauges, read from the controller's cache at scrape time, so a
//! deleted object leaves no stale series and alerts need no kube-state-metrics.

use std::collections::HashMap;
use std::sync::Arc;

use prometheus::core::{Collector, Desc};
use prometheus::proto::{Gauge, LabelPair, Metric, MetricFamily, MetricType};

use crate::conditions::{Condition, ConditionStatus};
use crate::info::{InfoField, RESERVED_LABELS};
use crate::vocabulary::Vocabulary;

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
    /// Whether its last pass failed with a [terminal](crate::Terminal) error and it has not
    /// changed since: no pass runs until it does.
    pub terminal: bool,
    /// The values of the info labels ([`ObjectMetrics::with_info`]), in their order; empty when
    /// there are none.
    pub info: Vec<String>,
}

type Snapshot = Arc<dyn Fn() -> Vec<ObjectState> + Send + Sync>;

/// A collector of per-object state: three series per object, 6 per condition type, one per reason
/// of a declared vocabulary and one info series when info labels are declared.
///
/// | metric | labels | value |
/// |---|---|---|
/// | `kubeward_object_generation` | controller, namespace, name | `metadata.generation` |
/// | `kubeward_object_suspended` | controller, namespace, name | 1 if suspended, else 0 |
/// | `kubeward_object_terminal` | controller, namespace, name | 1 if its last pass failed with a [terminal](crate::Terminal) error and it has not changed since, else 0 |
/// | `kubeward_object_condition` | controller, namespace, name, type, status | 1 for the current status, 0 for the other two |
/// | `kubeward_object_condition_reason` | controller, namespace, name, type, reason, class | 1 for the current reason, 0 for the vocabulary's others |
/// | `kubeward_object_condition_observed_generation` | controller, namespace, name, type | the condition's observedGeneration |
/// | `kubeward_object_condition_last_transition_time_seconds` | controller, namespace, name, type | its lastTransitionTime, Unix seconds |
/// | `kubeward_object_info` | controller, namespace, name, and each info label | 1 |
///
/// `kubeward_object_condition_reason` exists for the condition types whose [`Vocabulary`] is
/// given ([`ObjectMetrics::with_vocabularies`]): one series per declared reason, so the number
/// of series is fixed by the declaration and never depends on what an object's status holds (a
/// reason outside the vocabulary, written by an older controller, sets them all to 0). Keeping
/// the series set fixed is also what lets rules read it with `last_over_time` across scrape
/// gaps: a series per *current* reason would keep the previous reason visible for the whole
/// window. `class` is the reason's [`ReasonClass`](crate::vocabulary::ReasonClass): alert rules
/// read `class="waiting"` to leave a human gate alone.
///
/// Get one from [`Controller::object_metrics`](crate::controller::Controller::object_metrics);
/// registering it is what switches these metrics on.
pub struct ObjectMetrics {
    prefix: String,
    controller: Arc<str>,
    snapshot: Snapshot,
    vocabularies: &'static [&'static Vocabulary],
    families: Families,
    /// What [`Collector::desc`] tells the registry: one family, `<prefix>_object_generation`,
    /// with `controller` a constant label, so that the collectors of several controllers
    /// register on one registry (the registry merges their samples by family name at each
    /// scrape). One, not every family: the registry identifies a collector by the wrapping sum
    /// of its descriptions' FNV-1a ids, and for two controllers whose names differ in one
    /// character (`…/c-0`, `…/c-1`) sums over several families collide (`AlreadyReg`, seen with
    /// [`ControllerMetrics`](super::ControllerMetrics)' two); one description's id is unique per
    /// family and controller.
    registered: Desc,
}

/// The descriptions of the families. Their samples are built at each scrape straight from the
/// snapshot and dropped with it: between scrapes nothing per object is held (a `GaugeVec` would
/// keep every series of the last scrape, several KiB per object).
struct Families {
    generation: Desc,
    suspended: Desc,
    terminal: Desc,
    condition: Desc,
    reason: Desc,
    observed_generation: Desc,
    last_transition: Desc,
    info: Option<Desc>,
}

/// A gauge family being filled by one scrape.
struct Samples<'a> {
    desc: &'a Desc,
    metrics: Vec<Metric>,
}

impl<'a> Samples<'a> {
    fn new(desc: &'a Desc) -> Self {
        Self {
            desc,
            metrics: Vec::new(),
        }
    }

    /// Adds the sample of `values` (one per label of the family, in its order).
    fn push(&mut self, values: &[&str], value: f64) {
        debug_assert_eq!(values.len(), self.desc.variable_labels.len());
        let mut pairs: Vec<LabelPair> = self
            .desc
            .variable_labels
            .iter()
            .zip(values)
            .map(|(name, value)| {
                let mut pair = LabelPair::default();
                pair.set_name(name.clone());
                pair.set_value((*value).to_owned());
                pair
            })
            .collect();
        // As the prometheus crate orders a sample's labels: by name.
        pairs.sort();
        let mut gauge = Gauge::default();
        gauge.set_value(value);
        let mut metric = Metric::from_label(pairs);
        metric.set_gauge(gauge);
        self.metrics.push(metric);
    }

    fn family(self) -> MetricFamily {
        let mut family = MetricFamily::default();
        family.set_name(self.desc.fq_name.clone());
        family.set_help(self.desc.help.clone());
        family.set_field_type(MetricType::GAUGE);
        family.set_metric(self.metrics);
        family
    }
}

fn gauge_desc(name: String, help: &str, labels: &[&str]) -> Result<Desc, prometheus::Error> {
    Desc::new(
        name,
        help.to_owned(),
        labels.iter().map(|l| (*l).to_owned()).collect(),
        HashMap::new(),
    )
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
    ///     terminal: false, info: vec![],
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
        let desc = |suffix: &str, help: &str, labels: &[&str]| {
            gauge_desc(format!("{prefix}_object_{suffix}"), help, labels)
        };
        let families = Families {
            generation: desc("generation", "metadata.generation of the object.", &object)?,
            suspended: desc(
                "suspended",
                "Whether the object is suspended (1) or not (0).",
                &object,
            )?,
            terminal: desc(
                "terminal",
                "Whether the object's last pass failed with a terminal error and the object has \
                 not changed since (1): no pass runs until it does; else 0.",
                &object,
            )?,
            condition: desc(
                "condition",
                "1 for the condition's current status, 0 for the others.",
                &["controller", "namespace", "name", "type", "status"],
            )?,
            reason: desc(
                "condition_reason",
                "1 for the condition's current reason, 0 for the other reasons of its vocabulary; \
                 class: progressing, waiting (on a human), failed or done.",
                &["controller", "namespace", "name", "type", "reason", "class"],
            )?,
            observed_generation: desc(
                "condition_observed_generation",
                "The generation the condition was computed from.",
                &condition,
            )?,
            last_transition: desc(
                "condition_last_transition_time_seconds",
                "When the condition's status last changed, in Unix seconds.",
                &condition,
            )?,
            info: None,
        };
        let controller: Arc<str> = controller.into();
        let registered = registration_desc(&families.generation, &controller)?;
        Ok(Self {
            prefix: prefix.to_owned(),
            controller,
            snapshot,
            vocabularies: &[],
            families,
            registered,
        })
    }

    /// Exports `kubeward_object_condition_reason` for the condition types of `vocabularies`.
    ///
    /// # Errors
    /// When two of `vocabularies` declare the same condition type (the second one's reasons
    /// would have no series); the message is [`DuplicateConditionType`](crate::vocabulary::DuplicateConditionType)'s.
    pub fn with_vocabularies(
        mut self,
        vocabularies: &'static [&'static Vocabulary],
    ) -> Result<Self, prometheus::Error> {
        Vocabulary::check_distinct(vocabularies)
            .map_err(|duplicate| prometheus::Error::Msg(duplicate.to_string()))?;
        self.vocabularies = vocabularies;
        Ok(self)
    }

    /// Exports `<prefix>_object_info`, one series per object labelled with `fields`' values
    /// (each [`ObjectState::info`] lists them in this order). No fields: no info series.
    ///
    /// # Errors
    /// When a label is not a valid Prometheus label name, is one of
    /// [`RESERVED_LABELS`](crate::info::RESERVED_LABELS) or is given twice.
    pub fn with_info(mut self, fields: &[InfoField]) -> Result<Self, prometheus::Error> {
        if fields.is_empty() {
            return Ok(self);
        }
        let mut labels = RESERVED_LABELS.to_vec();
        for field in fields {
            if labels.contains(&field.label) {
                return Err(prometheus::Error::Msg(format!(
                    "info label `{}` is given twice or is one of {RESERVED_LABELS:?}",
                    field.label
                )));
            }
            labels.push(field.label);
        }
        self.families.info = Some(gauge_desc(
            format!("{}_object_info", self.prefix),
            "1, labelled with the object's declared info fields.",
            &labels,
        )?);
        Ok(self)
    }
}

/// `desc` as one controller's collector registers it: `controller` a constant label of value
/// `controller`.
fn registration_desc(desc: &Desc, controller: &str) -> Result<Desc, prometheus::Error> {
    let variable = desc
        .variable_labels
        .iter()
        .filter(|label| *label != "controller")
        .cloned()
        .collect();
    Desc::new(
        desc.fq_name.clone(),
        desc.help.clone(),
        variable,
        HashMap::from([("controller".to_owned(), controller.to_owned())]),
    )
}

impl Collector for ObjectMetrics {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.registered]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        let families = &self.families;
        let mut generation = Samples::new(&families.generation);
        let mut suspended = Samples::new(&families.suspended);
        let mut terminal = Samples::new(&families.terminal);
        let mut condition_status = Samples::new(&families.condition);
        let mut reason = Samples::new(&families.reason);
        let mut observed_generation = Samples::new(&families.observed_generation);
        let mut last_transition = Samples::new(&families.last_transition);
        let mut info = families.info.as_ref().map(Samples::new);
        let controller = &*self.controller;
        for object in (self.snapshot)() {
            let labels = [controller, object.namespace.as_str(), object.name.as_str()];
            if let Some(value) = object.generation {
                generation.push(&labels, value as f64);
            }
            suspended.push(&labels, f64::from(u8::from(object.suspended)));
            terminal.push(&labels, f64::from(u8::from(object.terminal)));
            // A snapshot listing fewer or more values than labels is a bug of its author: leave
            // the object's info series out rather than fail the whole scrape.
            if let Some(info) = &mut info
                && object.info.len() + labels.len() == info.desc.variable_labels.len()
            {
                let mut values: Vec<&str> = labels.to_vec();
                values.extend(object.info.iter().map(String::as_str));
                info.push(&values, 1.0);
            }
            for condition in &object.conditions {
                let [c, ns, n] = labels;
                let t = condition.type_.as_str();
                for status in ConditionStatus::ALL {
                    let value = f64::from(u8::from(condition.status == status.as_str()));
                    condition_status.push(&[c, ns, n, t, status.as_str()], value);
                }
                if let Some(vocabulary) = self.vocabularies.iter().find(|v| v.type_ == t) {
                    for declared in vocabulary.reasons {
                        let value = f64::from(u8::from(condition.reason == declared.name));
                        let class = declared.class().as_str();
                        reason.push(&[c, ns, n, t, declared.name, class], value);
                    }
                }
                if let Some(observed) = condition.observed_generation {
                    observed_generation.push(&[c, ns, n, t], observed as f64);
                }
                last_transition.push(
                    &[c, ns, n, t],
                    condition.last_transition_time.0.as_second() as f64,
                );
            }
        }
        let mut collected = vec![
            generation.family(),
            suspended.family(),
            terminal.family(),
            condition_status.family(),
            reason.family(),
            observed_generation.family(),
            last_transition.family(),
        ];
        collected.extend(info.map(Samples::family));
        collected
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::events::EventType;

    use super::*;
    use crate::conditions::ConditionStatus::{False, True, Unknown};
    use crate::vocabulary::Reason;

    static READY: Vocabulary = Vocabulary {
        type_: "Ready",
        reasons: &[
            Reason::new("Starting", Unknown).initial(),
            Reason::new("Held", False).gate(),
            Reason::new("Running", True),
        ],
    };
    static VOCABULARIES: [&Vocabulary; 1] = [&READY];

    fn object(reason: &str) -> ObjectState {
        ObjectState {
            namespace: "demo".into(),
            name: "web".into(),
            generation: Some(1),
            conditions: vec![Condition {
                type_: "Ready".into(),
                status: "False".into(),
                reason: reason.into(),
                message: String::new(),
                observed_generation: Some(1),
                last_transition_time: k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                    jiff::Timestamp::UNIX_EPOCH,
                ),
            }],
            suspended: false,
            terminal: false,
            info: vec!["r7".into()],
        }
    }

    fn scrape(metrics: ObjectMetrics) -> String {
        let registry = prometheus::Registry::new();
        registry.register(Box::new(metrics)).unwrap();
        prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap()
    }

    #[test]
    fn the_collectors_of_several_controllers_share_one_registry_and_its_families() {
        static REVISION: [InfoField; 1] = [InfoField::new("revision", "status.revision")];
        static IMAGE: [InfoField; 1] = [InfoField::new("image", "spec.image")];
        let registry = prometheus::Registry::new();
        for (controller, info) in [
            ("demo.kubeward.dev/a", &REVISION),
            ("demo.kubeward.dev/b", &IMAGE),
        ] {
            let metrics = ObjectMetrics::new(
                "kubeward",
                controller,
                Arc::new(|| vec![object("Starting")]),
            )
            .unwrap()
            .with_vocabularies(&VOCABULARIES)
            .unwrap()
            .with_info(info)
            .unwrap();
            registry.register(Box::new(metrics)).unwrap();
            let leading =
                crate::metrics::ControllerMetrics::new("kubeward", controller, Arc::new(|| true));
            registry.register(Box::new(leading.unwrap())).unwrap();
        }
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap();
        for family in [
            "kubeward_object_generation",
            "kubeward_object_terminal",
            "kubeward_object_condition_reason",
            "kubeward_object_info",
            "kubeward_controller_leading",
        ] {
            let headers = text
                .lines()
                .filter(|l| *l == format!("# TYPE {family} gauge"))
                .count();
            assert_eq!(headers, 1, "{family} once in:\n{text}");
        }
        for controller in ["demo.kubeward.dev/a", "demo.kubeward.dev/b"] {
            assert!(text.contains(&format!(
                r#"kubeward_object_generation{{controller="{controller}",name="web",namespace="demo"}} 1"#
            )), "{text}");
            assert!(
                text.contains(&format!(
                    r#"kubeward_controller_leading{{controller="{controller}"}} 1"#
                )),
                "{text}"
            );
        }
        assert!(text.contains(r#"kubeward_object_info{controller="demo.kubeward.dev/a",name="web",namespace="demo",revision="r7"} 1"#), "{text}");
        assert!(text.contains(r#"kubeward_object_info{controller="demo.kubeward.dev/b",image="r7",name="web",namespace="demo"} 1"#), "{text}");
        // The same controller twice is still refused.
        let again =
            ObjectMetrics::new("kubeward", "demo.kubeward.dev/a", Arc::new(Vec::new)).unwrap();
        assert!(registry.register(Box::new(again)).is_err());
    }

    fn reason_samples(text: &str) -> Vec<&str> {
        text.lines()
            .filter(|l| l.starts_with("kubeward_object_condition_reason{"))
            .collect()
    }

    #[test]
    fn a_reason_outside_the_vocabulary_sets_every_declared_reason_to_zero() {
        let metrics = ObjectMetrics::new("kubeward", "c", Arc::new(|| vec![object("Legacy")]))
            .unwrap()
            .with_vocabularies(&VOCABULARIES)
            .unwrap();
        let text = scrape(metrics);
        let samples = reason_samples(&text);
        assert_eq!(samples.len(), 3, "{text}");
        assert!(samples.iter().all(|s| s.ends_with(" 0")), "{text}");
    }

    #[test]
    fn without_vocabularies_or_info_there_are_no_reason_or_info_series() {
        let metrics =
            ObjectMetrics::new("kubeward", "c", Arc::new(|| vec![object("Held")])).unwrap();
        let text = scrape(metrics);
        assert!(reason_samples(&text).is_empty(), "{text}");
        assert!(!text.contains("kubeward_object_info"), "{text}");
    }

    #[test]
    fn the_held_reason_is_classed_waiting_and_info_is_one_series() {
        static INFO: [InfoField; 1] = [InfoField::new("revision", "status.revision")];
        let metrics = ObjectMetrics::new("kubeward", "c", Arc::new(|| vec![object("Held")]))
            .unwrap()
            .with_vocabularies(&VOCABULARIES)
            .unwrap()
            .with_info(&INFO)
            .unwrap();
        let text = scrape(metrics);
        assert!(text.contains(
            r#"kubeward_object_condition_reason{class="waiting",controller="c",name="web",namespace="demo",reason="Held",type="Ready"} 1"#
        ), "{text}");
        assert!(text.contains(
            r#"kubeward_object_info{controller="c",name="web",namespace="demo",revision="r7"} 1"#
        ), "{text}");
    }

    #[test]
    fn the_healthy_false_of_a_stalled_condition_is_done_not_waiting() {
        static STALLED: Vocabulary = Vocabulary {
            type_: "Ready",
            reasons: &[
                Reason::new("NotStalled", False).event(EventType::Normal),
                Reason::new("RetriesExhausted", True).event(EventType::Warning),
            ],
        };
        static ONLY_STALLED: [&Vocabulary; 1] = [&STALLED];
        let metrics = ObjectMetrics::new("kubeward", "c", Arc::new(|| vec![object("NotStalled")]))
            .unwrap()
            .with_vocabularies(&ONLY_STALLED)
            .unwrap();
        let text = scrape(metrics);
        assert!(text.contains(
            r#"kubeward_object_condition_reason{class="done",controller="c",name="web",namespace="demo",reason="NotStalled",type="Ready"} 1"#
        ), "{text}");
        assert!(!text.contains(r#"class="waiting""#), "{text}");
    }

    #[test]
    fn two_vocabularies_of_one_condition_type_are_refused() {
        static ALSO_READY: Vocabulary = Vocabulary {
            type_: "Ready",
            reasons: &[Reason::new("Serving", True)],
        };
        static BOTH: [&Vocabulary; 2] = [&READY, &ALSO_READY];
        let error = ObjectMetrics::new("kubeward", "c", Arc::new(Vec::new))
            .unwrap()
            .with_vocabularies(&BOTH)
            .map(|_| ())
            .expect_err("refused");
        assert_eq!(
            error.to_string(),
            "Error: two vocabularies declare the condition type `Ready` (one with the reasons Starting, \
             Held, Running, the other with Serving); a condition type has one vocabulary: merge \
             them or rename one"
        );
    }

    #[test]
    fn info_labels_may_not_shadow_object_labels_or_repeat() {
        let new = || ObjectMetrics::new("kubeward", "c", Arc::new(Vec::new)).unwrap();
        let error = new()
            .with_info(&[InfoField::new("name", "spec.name")])
            .unwrap_err();
        assert!(error.to_string().contains("info label `name`"), "{error}");
        let twice = [
            InfoField::new("rev", "spec.a"),
            InfoField::new("rev", "spec.b"),
        ];
        assert!(new().with_info(&twice).is_err());
        assert!(
            new()
                .with_info(&[InfoField::new("bad-label", "spec.a")])
                .is_err()
        );
    }
}
