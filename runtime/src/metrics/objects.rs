//! Per-object state as Prometheus gauges, read from the controller's cache at scrape time, so a
//! deleted object leaves no stale series and alerts need no kube-state-metrics.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use prometheus::core::{Collector, Desc};
use prometheus::proto::{Gauge, LabelPair, Metric, MetricFamily, MetricType};

use super::text::{self, Buffer};
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

/// A collector of per-object state: three series per object, 5 per condition type (one per status,
/// its observed generation and transition time), one per reason of a declared vocabulary and one
/// info series when info labels are declared.
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
/// | `kubeward_object_metrics_omitted` | controller | with [`with_max_objects`](ObjectMetrics::with_max_objects): the objects left out of this scrape |
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
/// registering it is what switches these metrics on. Served by the ops server, or by
/// [`encode`](super::encode), its series are written straight as text (see
/// [`exposition`](super::encode)); gathered by any other registry consumer, they are built as
/// any collector's.
pub struct ObjectMetrics {
    source: ObjectSource,
}

/// The shared part of an [`ObjectMetrics`], which a scrape takes to write its series.
pub(super) type ObjectSource = Arc<Source>;

pub(super) struct Source {
    prefix: String,
    controller: Arc<str>,
    snapshot: Snapshot,
    vocabularies: &'static [&'static Vocabulary],
    /// At most this many objects per scrape ([`ObjectMetrics::with_max_objects`]).
    max_objects: Option<usize>,
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

/// The families, in the order a scrape writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Generation,
    Suspended,
    Terminal,
    Condition,
    Reason,
    ObservedGeneration,
    LastTransition,
    Info,
    Omitted,
}

impl Kind {
    const ALL: [Self; 9] = [
        Self::Generation,
        Self::Suspended,
        Self::Terminal,
        Self::Condition,
        Self::Reason,
        Self::ObservedGeneration,
        Self::LastTransition,
        Self::Info,
        Self::Omitted,
    ];
}

/// The descriptions of the families. Their samples are built at each scrape straight from the
/// snapshot and dropped with it: between scrapes nothing per object is held (a `GaugeVec` would
/// keep every series of the last scrape, several KiB per object).
struct Families {
    generation: Family,
    suspended: Family,
    terminal: Family,
    condition: Family,
    reason: Family,
    observed_generation: Family,
    last_transition: Family,
    info: Option<Family>,
    omitted: Family,
}

impl Families {
    fn get(&self, kind: Kind) -> Option<&Family> {
        match kind {
            Kind::Generation => Some(&self.generation),
            Kind::Suspended => Some(&self.suspended),
            Kind::Terminal => Some(&self.terminal),
            Kind::Condition => Some(&self.condition),
            Kind::Reason => Some(&self.reason),
            Kind::ObservedGeneration => Some(&self.observed_generation),
            Kind::LastTransition => Some(&self.last_transition),
            Kind::Info => self.info.as_ref(),
            Kind::Omitted => Some(&self.omitted),
        }
    }
}

/// A gauge family: its description, and the order of its labels by name (as the prometheus
/// crate writes a sample's labels).
struct Family {
    desc: Desc,
    by_name: Vec<usize>,
    /// The text before each label's value, in `by_name` order: `name{first="`, then
    /// `",second="`, …
    text_before: Vec<Vec<u8>>,
}

impl Family {
    fn new(name: String, help: &str, labels: &[&str]) -> Result<Self, prometheus::Error> {
        let desc = Desc::new(
            name,
            help.to_owned(),
            labels.iter().map(|l| (*l).to_owned()).collect(),
            HashMap::new(),
        )?;
        let mut by_name: Vec<usize> = (0..labels.len()).collect();
        by_name.sort_by_key(|&i| labels[i]);
        let text_before = by_name
            .iter()
            .enumerate()
            .map(|(position, &label)| {
                let before = if position == 0 {
                    format!("{}{{", desc.fq_name)
                } else {
                    "\",".to_owned()
                };
                format!("{before}{}=\"", labels[label]).into_bytes()
            })
            .collect();
        Ok(Self {
            desc,
            by_name,
            text_before,
        })
    }

    /// Appends the sample of `values` (one per label, in the family's order) as a line of text.
    fn write(&self, text: &mut Vec<u8>, values: &[&str], value: f64) {
        for (before, &label) in self.text_before.iter().zip(&self.by_name) {
            text.extend_from_slice(before);
            text::label_value(text, values[label]);
        }
        text.extend_from_slice(b"\"} ");
        text::sample_value(text, value);
        text.push(b'\n');
    }
}

/// A gauge family being filled by one scrape.
struct Samples<'a> {
    family: &'a Family,
    metrics: Vec<Metric>,
}

impl<'a> Samples<'a> {
    fn new(family: &'a Family) -> Self {
        Self {
            family,
            metrics: Vec::new(),
        }
    }

    /// Adds the sample of `values` (one per label of the family, in its order).
    fn push(&mut self, values: &[&str], value: f64) {
        let desc = &self.family.desc;
        debug_assert_eq!(values.len(), desc.variable_labels.len());
        let pairs: Vec<LabelPair> = self
            .family
            .by_name
            .iter()
            .map(|&label| {
                let mut pair = LabelPair::default();
                pair.set_name(desc.variable_labels[label].clone());
                pair.set_value(values[label].to_owned());
                pair
            })
            .collect();
        let mut gauge = Gauge::default();
        gauge.set_value(value);
        let mut metric = Metric::from_label(pairs);
        metric.set_gauge(gauge);
        self.metrics.push(metric);
    }

    fn family(self) -> MetricFamily {
        let mut family = MetricFamily::default();
        family.set_name(self.family.desc.fq_name.clone());
        family.set_help(self.family.desc.help.clone());
        family.set_field_type(MetricType::GAUGE);
        family.set_metric(self.metrics);
        family
    }
}

impl std::fmt::Debug for ObjectMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectMetrics")
            .field("controller", &self.source.controller)
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
        let family = |suffix: &str, help: &str, labels: &[&str]| {
            Family::new(format!("{prefix}_object_{suffix}"), help, labels)
        };
        let families = Families {
            generation: family("generation", "metadata.generation of the object.", &object)?,
            suspended: family(
                "suspended",
                "Whether the object is suspended (1) or not (0).",
                &object,
            )?,
            terminal: family(
                "terminal",
                "Whether the object's last pass failed with a terminal error and the object has \
                 not changed since (1): no pass runs until it does; else 0.",
                &object,
            )?,
            condition: family(
                "condition",
                "1 for the condition's current status, 0 for the others.",
                &["controller", "namespace", "name", "type", "status"],
            )?,
            reason: family(
                "condition_reason",
                "1 for the condition's current reason, 0 for the other reasons of its vocabulary; \
                 class: progressing, waiting (on a human), failed or done.",
                &["controller", "namespace", "name", "type", "reason", "class"],
            )?,
            observed_generation: family(
                "condition_observed_generation",
                "The generation the condition was computed from.",
                &condition,
            )?,
            last_transition: family(
                "condition_last_transition_time_seconds",
                "When the condition's status last changed, in Unix seconds.",
                &condition,
            )?,
            info: None,
            omitted: family(
                "metrics_omitted",
                "Objects left out of this scrape's per-object series (more than the cap).",
                &["controller"],
            )?,
        };
        let controller: Arc<str> = controller.into();
        let registered = registration_desc(&families.generation.desc, &controller)?;
        Ok(Self {
            source: Arc::new(Source {
                prefix: prefix.to_owned(),
                controller,
                snapshot,
                vocabularies: &[],
                max_objects: None,
                families,
                registered,
            }),
        })
    }

    /// The source to configure: only a metrics object not yet registered is configured, so it
    /// is never shared.
    fn configure(&mut self) -> &mut Source {
        Arc::get_mut(&mut self.source).expect("an unregistered ObjectMetrics is not shared")
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
        self.configure().vocabularies = vocabularies;
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
        let source = self.configure();
        source.families.info = Some(Family::new(
            format!("{}_object_info", source.prefix),
            "1, labelled with the object's declared info fields.",
            &labels,
        )?);
        Ok(self)
    }

    /// Writes the series of at most `max` objects per scrape: the first `max` by namespace and
    /// name (the same ones at each scrape while the set is unchanged), and
    /// `<prefix>_object_metrics_omitted` the number of the others. A bound on a scrape's series
    /// and text (about 1.6 KiB per object with one condition type), which Prometheus stores and
    /// the scraper reads; the snapshot is still taken of every object (about 1.75 µs each).
    #[must_use]
    pub fn with_max_objects(mut self, max: usize) -> Self {
        self.configure().max_objects = Some(max);
        self
    }

    /// Writes the per-object families of `sources` (handed over by the collectors of one
    /// gathering) as text: each family once, with the samples of every source of its name.
    pub(super) fn write_sources(
        sources: &[ObjectSource],
        buffer: &mut Buffer<'_>,
    ) -> io::Result<()> {
        let snapshots: Vec<(&Source, Vec<ObjectState>, usize)> = sources
            .iter()
            .map(|source| {
                let (objects, omitted) = source.objects();
                (&**source, objects, omitted)
            })
            .collect();
        // Sources of one prefix share their families' names: each family is written once.
        let mut prefixes: Vec<&str> = sources.iter().map(|s| s.prefix.as_str()).collect();
        prefixes.sort_unstable();
        prefixes.dedup();
        for prefix in prefixes {
            let group: Vec<_> = snapshots.iter().filter(|s| s.0.prefix == prefix).collect();
            for kind in Kind::ALL {
                let mut headed = false;
                for (source, objects, omitted) in &group {
                    let Some(family) = source.families.get(kind) else {
                        continue;
                    };
                    let mut failed = Ok(());
                    source.visit(objects, *omitted, Some(kind), &mut |_, values, value| {
                        if failed.is_err() {
                            return;
                        }
                        if !headed {
                            let desc = &family.desc;
                            // Its help texts hold no `"`: the same header in both formats.
                            text::header(
                                &mut buffer.text,
                                &desc.fq_name,
                                &desc.help,
                                "gauge",
                                false,
                            );
                            headed = true;
                        }
                        family.write(&mut buffer.text, values, value);
                        failed = buffer.spill();
                    });
                    failed?;
                }
            }
        }
        Ok(())
    }
}

impl Source {
    /// The objects of this scrape, at most [`max_objects`](Self::max_objects), and how many
    /// were left out.
    fn objects(&self) -> (Vec<ObjectState>, usize) {
        let mut objects = (self.snapshot)();
        let Some(max) = self.max_objects.filter(|max| objects.len() > *max) else {
            return (objects, 0);
        };
        let omitted = objects.len() - max;
        objects.select_nth_unstable_by(max, |a, b| {
            (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name))
        });
        objects.truncate(max);
        (objects, omitted)
    }

    /// Calls `sample` with each sample of `objects` (of the family `only`, or of all): its
    /// family, its label values (in the family's order) and its value.
    fn visit(
        &self,
        objects: &[ObjectState],
        omitted: usize,
        only: Option<Kind>,
        sample: &mut dyn FnMut(Kind, &[&str], f64),
    ) {
        let mut sample = |kind: Kind, values: &[&str], value: f64| {
            if only.is_none_or(|only| only == kind) {
                sample(kind, values, value);
            }
        };
        let wants = |kind: Kind| only.is_none_or(|only| only == kind);
        let per_condition = [
            Kind::Condition,
            Kind::Reason,
            Kind::ObservedGeneration,
            Kind::LastTransition,
        ]
        .into_iter()
        .any(wants);
        let controller = &*self.controller;
        let info_labels = self
            .families
            .info
            .as_ref()
            .map(|info| info.desc.variable_labels.len());
        let mut info_values: Vec<&str> = Vec::new();
        for object in objects {
            let labels = [controller, object.namespace.as_str(), object.name.as_str()];
            if let Some(value) = object.generation {
                sample(Kind::Generation, &labels, value as f64);
            }
            sample(
                Kind::Suspended,
                &labels,
                f64::from(u8::from(object.suspended)),
            );
            sample(
                Kind::Terminal,
                &labels,
                f64::from(u8::from(object.terminal)),
            );
            // A snapshot listing fewer or more values than labels is a bug of its author: leave
            // the object's info series out rather than fail the whole scrape.
            if wants(Kind::Info) && info_labels == Some(object.info.len() + labels.len()) {
                info_values.clear();
                info_values.extend(labels);
                info_values.extend(object.info.iter().map(String::as_str));
                sample(Kind::Info, &info_values, 1.0);
            }
            if !per_condition {
                continue;
            }
            for condition in &object.conditions {
                let [c, ns, n] = labels;
                let t = condition.type_.as_str();
                for status in ConditionStatus::ALL {
                    let value = f64::from(u8::from(condition.status == status.as_str()));
                    sample(Kind::Condition, &[c, ns, n, t, status.as_str()], value);
                }
                if let Some(vocabulary) = self.vocabularies.iter().find(|v| v.type_ == t) {
                    for declared in vocabulary.reasons {
                        let value = f64::from(u8::from(condition.reason == declared.name));
                        let class = declared.class().as_str();
                        sample(Kind::Reason, &[c, ns, n, t, declared.name, class], value);
                    }
                }
                if let Some(observed) = condition.observed_generation {
                    sample(Kind::ObservedGeneration, &[c, ns, n, t], observed as f64);
                }
                let transition = condition.last_transition_time.0.as_second() as f64;
                sample(Kind::LastTransition, &[c, ns, n, t], transition);
            }
        }
        if self.max_objects.is_some() {
            sample(Kind::Omitted, &[controller], omitted as f64);
        }
    }
}

thread_local! {
    /// Set while [`gather_handing_over`] gathers a registry on this thread: the [`ObjectMetrics`] collected
    /// meanwhile, to be written as text.
    static HANDED_OVER: RefCell<Option<Vec<ObjectSource>>> = const { RefCell::new(None) };
}

/// Whether `source` was taken by a [`gather_handing_over`] on this thread (then its collector
/// returns no families).
fn hand_over(source: &ObjectSource) -> bool {
    HANDED_OVER.with(|handed| match &mut *handed.borrow_mut() {
        Some(sources) => {
            sources.push(source.clone());
            true
        }
        None => false,
    })
}

/// Gathers `registry` with every [`ObjectMetrics`] on it handing its source over instead of
/// returning families: the registry's other families, and the sources to write as text
/// ([`ObjectMetrics::write_sources`]).
pub(super) fn gather_handing_over(
    registry: &prometheus::Registry,
) -> (Vec<MetricFamily>, Vec<ObjectSource>) {
    /// Puts back the mark found (none, or an enclosing gathering's: a collector may encode
    /// another registry) however the gathering ends: a collector that panics must not leave it
    /// set, or a later gathering on this (pooled) thread would lose the per-object series.
    struct Marked(Option<Vec<ObjectSource>>);
    impl Drop for Marked {
        fn drop(&mut self) {
            let previous = self.0.take();
            HANDED_OVER.with(|handed| *handed.borrow_mut() = previous);
        }
    }
    let marked = Marked(HANDED_OVER.with(|handed| handed.borrow_mut().replace(Vec::new())));
    let mut families = registry.gather();
    let sources = HANDED_OVER
        .with(|handed| handed.borrow_mut().take())
        .unwrap_or_default();
    drop(marked);
    let Some(marker) = families
        .iter()
        .position(|family| family.name().ends_with(HANDED_OVER_MARKER))
    else {
        return (families, sources);
    };
    // A registry made with `Registry::new_custom` prefixes the names and adds its labels to
    // what it gathers: the handed-over series would lack both. Its marker shows it; such a
    // registry is gathered again, the collectors returning their families.
    let plain = families[marker].name() == HANDED_OVER_MARKER
        && families[marker]
            .get_metric()
            .iter()
            .all(|metric| metric.get_label().is_empty());
    families.remove(marker);
    if plain {
        (families, sources)
    } else {
        (registry.gather(), Vec::new())
    }
}

/// The family a handed-over collector returns in place of its own: what the registry did to it
/// (a prefix, common labels) tells [`gather_handing_over`] whether the series can be written
/// as they are. Never written out.
const HANDED_OVER_MARKER: &str = "kubeward_object_metrics_handed_over";

fn handed_over_marker() -> MetricFamily {
    let mut gauge = Gauge::default();
    gauge.set_value(1.0);
    let mut metric = Metric::default();
    metric.set_gauge(gauge);
    let mut family = MetricFamily::default();
    family.set_name(HANDED_OVER_MARKER.to_owned());
    family.set_help("Marks a gathering's handed-over per-object series.".to_owned());
    family.set_field_type(MetricType::GAUGE);
    family.set_metric(vec![metric]);
    family
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
        vec![&self.source.registered]
    }

    fn collect(&self) -> Vec<MetricFamily> {
        if hand_over(&self.source) {
            return vec![handed_over_marker()];
        }
        let source = &*self.source;
        let mut samples: Vec<(Kind, Samples<'_>)> = Kind::ALL
            .into_iter()
            .filter_map(|kind| Some((kind, Samples::new(source.families.get(kind)?))))
            .collect();
        let (objects, omitted) = source.objects();
        source.visit(&objects, omitted, None, &mut |kind, values, value| {
            if let Some((_, family)) = samples.iter_mut().find(|(k, _)| *k == kind) {
                family.push(values, value);
            }
        });
        // Families without samples are left out by the registry.
        samples
            .into_iter()
            .map(|(_, family)| family.family())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::events::EventType;

    use super::*;
    use crate::conditions::ConditionStatus::{False, True, Unknown};
    use crate::metrics::exposition;
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

    /// The lines of `encode`'s text of `registry`, sorted.
    fn encoded_lines(registry: &prometheus::Registry, format: exposition::Format) -> Vec<String> {
        let mut text = Vec::new();
        exposition::encode(registry, format, &mut text).unwrap();
        let mut lines: Vec<String> = String::from_utf8(text)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    }

    fn objects(n: usize) -> Vec<ObjectState> {
        (0..n)
            .map(|i| ObjectState {
                name: format!("web-{i:02}"),
                ..object(if i % 2 == 0 { "Held" } else { "Running" })
            })
            .collect()
    }

    #[test]
    fn written_as_text_the_series_are_those_the_collector_gathers() {
        static INFO: [InfoField; 1] = [InfoField::new("revision", "status.revision")];
        let registry = prometheus::Registry::new();
        for controller in ["demo.kubeward.dev/a", "demo.kubeward.dev/b\\\"quoted\\\""] {
            let metrics = ObjectMetrics::new("kubeward", controller, Arc::new(|| objects(3)))
                .unwrap()
                .with_vocabularies(&VOCABULARIES)
                .unwrap()
                .with_info(&INFO)
                .unwrap();
            registry.register(Box::new(metrics)).unwrap();
        }
        let gathered = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap();
        let mut gathered: Vec<String> = gathered.lines().map(str::to_owned).collect();
        gathered.sort();
        // 2 controllers x 3 objects x (3 + 3 statuses + 3 reasons + 2 + info); 8 families, a
        // HELP and a TYPE line each.
        assert_eq!(gathered.len(), 2 * 3 * 12 + 2 * 8, "{gathered:#?}");
        assert_eq!(encoded_lines(&registry, exposition::Format::Text), gathered);
        // Each family in one block: its samples right after its header, of both controllers.
        let mut text = Vec::new();
        exposition::encode(&registry, exposition::Format::Text, &mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        let mut families = Vec::new();
        for line in text.lines() {
            if let Some(family) = line.strip_prefix("# TYPE ") {
                families.push(family.split(' ').next().unwrap().to_owned());
            } else if !line.starts_with('#') {
                let name = line.split('{').next().unwrap();
                assert_eq!(Some(name), families.last().map(String::as_str), "{text}");
            }
        }
        let distinct: std::collections::BTreeSet<&String> = families.iter().collect();
        assert_eq!(
            distinct.len(),
            families.len(),
            "a family written twice: {text}"
        );
        let mut open_metrics = gathered.clone();
        open_metrics.push("# EOF".to_owned());
        open_metrics.sort();
        assert_eq!(
            encoded_lines(&registry, exposition::Format::OpenMetrics),
            open_metrics
        );
    }

    #[test]
    fn a_cap_keeps_the_first_objects_by_name_and_counts_the_others() {
        let metrics = ObjectMetrics::new(
            "kubeward",
            "c",
            Arc::new(|| {
                let mut all = objects(5);
                all.reverse();
                all
            }),
        )
        .unwrap()
        .with_max_objects(2);
        let registry = prometheus::Registry::new();
        registry.register(Box::new(metrics)).unwrap();
        for lines in [
            encoded_lines(&registry, exposition::Format::Text),
            scrape_lines(&registry),
        ] {
            let suspended: Vec<&String> = lines
                .iter()
                .filter(|l| l.starts_with("kubeward_object_suspended{"))
                .collect();
            assert_eq!(
                suspended,
                [
                    r#"kubeward_object_suspended{controller="c",name="web-00",namespace="demo"} 0"#,
                    r#"kubeward_object_suspended{controller="c",name="web-01",namespace="demo"} 0"#,
                ],
                "{lines:#?}"
            );
            assert!(
                lines.contains(&r#"kubeward_object_metrics_omitted{controller="c"} 3"#.to_owned()),
                "{lines:#?}"
            );
        }
    }

    /// A collector that panics while `encode` gathers leaves no mark behind: the next plain
    /// gathering on the thread still gets the per-object families.
    #[test]
    fn a_panicking_gathering_leaves_no_mark() {
        struct Panics(Desc);
        impl Collector for Panics {
            fn desc(&self) -> Vec<&Desc> {
                vec![&self.0]
            }
            fn collect(&self) -> Vec<MetricFamily> {
                panic!("a collector that panics")
            }
        }
        let registry = prometheus::Registry::new();
        let metrics = ObjectMetrics::new("kubeward", "c", Arc::new(|| objects(1))).unwrap();
        registry.register(Box::new(metrics)).unwrap();
        let desc = Desc::new("zz_panics".into(), "Panics.".into(), vec![], HashMap::new());
        registry.register(Box::new(Panics(desc.unwrap()))).unwrap();
        let encoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            exposition::encode(&registry, exposition::Format::Text, &mut Vec::new())
        }));
        assert!(encoded.is_err(), "the collector panicked");
        let families: Vec<String> = ObjectMetrics::new("kubeward", "c", Arc::new(|| objects(1)))
            .unwrap()
            .collect()
            .iter()
            .map(|f| f.name().to_owned())
            .collect();
        assert!(
            families.contains(&"kubeward_object_suspended".to_owned()),
            "{families:?}"
        );
    }

    /// A registry's own prefix and labels (`Registry::new_custom`) are on the per-object series
    /// `encode` writes, as on those `TextEncoder` writes.
    #[test]
    fn a_custom_registry_s_prefix_and_labels_hold_for_the_written_series() {
        let labels = HashMap::from([("cluster".to_owned(), "eu-1".to_owned())]);
        let registry = prometheus::Registry::new_custom(Some("team".into()), Some(labels)).unwrap();
        let metrics = ObjectMetrics::new("kubeward", "c", Arc::new(|| objects(2))).unwrap();
        registry.register(Box::new(metrics)).unwrap();
        let encoded = encoded_lines(&registry, exposition::Format::Text);
        assert_eq!(encoded, scrape_lines(&registry));
        assert!(
            encoded.contains(
                &r#"team_kubeward_object_suspended{controller="c",name="web-00",namespace="demo",cluster="eu-1"} 0"#
                    .to_owned()
            ),
            "{encoded:#?}"
        );
        assert!(
            !encoded.iter().any(|l| l.contains("handed_over")),
            "{encoded:#?}"
        );
    }

    #[test]
    fn without_a_cap_there_is_no_omitted_series() {
        let metrics = ObjectMetrics::new("kubeward", "c", Arc::new(|| objects(2))).unwrap();
        let text = scrape(metrics);
        assert!(!text.contains("kubeward_object_metrics_omitted"), "{text}");
    }

    fn scrape_lines(registry: &prometheus::Registry) -> Vec<String> {
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        lines.sort();
        lines
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
