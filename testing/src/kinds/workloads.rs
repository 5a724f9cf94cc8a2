//! apps/v1 ReplicaSets, StatefulSets, DaemonSets (`pkg/registry/apps/{replicaset,statefulset,
//! daemonset}`) and ControllerRevisions (`pkg/registry/apps/controllerrevision`): their Go
//! types, defaulting, rules, generation (bumped by a change of the spec), status isolation both
//! ways (`PrepareForUpdate` of the main and the status strategy: the spec is the stored one),
//! a DaemonSet's template generation (the `deprecated.daemonset.template.generation`
//! annotation), the scale subresource's selector (ReplicaSets and StatefulSets) and the
//! printers' columns. What they share with Deployments is in [`super::deployment`] and
//! [`crate::validation::apps`].

use std::sync::LazyLock;

use serde_json::{Value, json};

use super::deployment::{containers, description};
use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::table::column::Column;
use crate::validation::names::NameRule;
use crate::validation::workloads::{
    self, TEMPLATE_GENERATION, Workload, controller_revision_rules, default_workload,
    workload_rules,
};
use crate::validation::{FieldError, apps, gotypes};

/// The strategy of one of the kinds.
pub(crate) enum Workloads {
    /// `replicasets`.
    ReplicaSets,
    /// `statefulsets`.
    StatefulSets,
    /// `daemonsets`.
    DaemonSets,
    /// `controllerrevisions`.
    ControllerRevisions,
}

/// The value structs of a workload with a pod template (see [`Strategy::value_structs`]), and
/// the kind's own ones (a StatefulSet's and a DaemonSet's `updateStrategy`).
macro_rules! template_value_structs {
    ($($extra:literal),*) => {
        &[
            "spec",
            $($extra,)*
            "spec.template",
            "spec.template.metadata",
            "spec.template.spec",
            "spec.template.spec.containers",
            "status",
        ]
    };
}

const REPLICA_SET_STRUCTS: &[&str] = template_value_structs!();
const STATEFUL_SET_STRUCTS: &[&str] = template_value_structs!("spec.updateStrategy");
const DAEMON_SET_STRUCTS: &[&str] = template_value_structs!("spec.updateStrategy");

static REPLICA_SET: Typed = typed!("io.k8s.api.apps.v1.ReplicaSet", REPLICA_SET_STRUCTS);
static STATEFUL_SET: Typed = typed!("io.k8s.api.apps.v1.StatefulSet", STATEFUL_SET_STRUCTS);
static DAEMON_SET: Typed = typed!("io.k8s.api.apps.v1.DaemonSet", DAEMON_SET_STRUCTS);
static CONTROLLER_REVISION: Typed = Typed {
    go_type: LazyLock::new(|| gotypes::from_definition("io.k8s.api.apps.v1.ControllerRevision")),
    // A `runtime.RawExtension` is one value to the field manager.
    apply: LazyLock::new(|| {
        ApplySchema::from_definitions("io.k8s.api.apps.v1.ControllerRevision", &[])
            .with_atomic("data")
    }),
};

/// The descriptions the printers take from extensions/v1beta1's `SwaggerDoc()`.
mod described {
    pub(super) const RS_REPLICAS: &str = "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
    pub(super) const RS_SELECTOR: &str = "Selector is a label query over pods that should match the replica count. If the selector is empty, it is defaulted to the labels present on the pod template. Label keys and values that must match in order to be controlled by this replica set. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
    pub(super) const RS_CURRENT: &str = "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset";
    pub(super) const RS_READY: &str =
        "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.";
    pub(super) const DS_SELECTOR: &str = "A label query over pods that are managed by the daemon set. Must match in order to be controlled. If empty, defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";
    pub(super) const DS_CURRENT: &str = "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod. More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
    pub(super) const DS_DESIRED: &str = "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod). More info: https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/";
    pub(super) const DS_READY: &str = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.";
    pub(super) const DS_UPDATED: &str =
        "The total number of nodes that are running updated daemon pod";
    pub(super) const DS_AVAILABLE: &str = "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)";
    pub(super) const CR_REVISION: &str =
        "revision indicates the revision of the state represented by Data.";
}

impl Workloads {
    fn typed(&self) -> &'static Typed {
        match self {
            Workloads::ReplicaSets => &REPLICA_SET,
            Workloads::StatefulSets => &STATEFUL_SET,
            Workloads::DaemonSets => &DAEMON_SET,
            Workloads::ControllerRevisions => &CONTROLLER_REVISION,
        }
    }

    /// The workload kind, for all but ControllerRevisions.
    fn workload(&self) -> Option<Workload> {
        match self {
            Workloads::ReplicaSets => Some(Workload::ReplicaSet),
            Workloads::StatefulSets => Some(Workload::StatefulSet),
            Workloads::DaemonSets => Some(Workload::DaemonSet),
            Workloads::ControllerRevisions => None,
        }
    }

    /// `obj` defaulted (a clone): what the spec compares as after decoding.
    fn defaulted(&self, obj: &Value) -> Value {
        let mut obj = obj.clone();
        if let Some(kind) = self.workload() {
            let _ = default_workload(kind, &mut obj);
        }
        obj
    }
}

/// A DaemonSet's template generation, as the v1 conversion reads it from the annotation.
fn template_generation(obj: &Value) -> i64 {
    obj["metadata"]["annotations"][TEMPLATE_GENERATION]
        .as_str()
        .and_then(|g| g.parse().ok())
        .unwrap_or(0)
}

fn set_template_generation(obj: &mut Value, generation: i64) {
    if !obj["metadata"]["annotations"].is_object() {
        obj["metadata"]["annotations"] = json!({});
    }
    obj["metadata"]["annotations"][TEMPLATE_GENERATION] = json!(generation.to_string());
}

/// A ControllerRevision's `revision`, 0 when absent.
fn zero_revision(obj: &mut Value) {
    if obj["revision"].is_null() {
        obj["revision"] = json!(0);
    }
}

/// An integer cell of `obj` at `path` (0 when absent).
fn count(obj: &Value, path: &[&str]) -> Value {
    let mut at = obj;
    for key in path {
        at = &at[*key];
    }
    json!(at.as_i64().unwrap_or(0))
}

/// An integer column `name` showing `path`.
fn count_column(name: &str, path: &'static [&'static str], described: &str) -> Column {
    Column::new(name, "integer", 0, Box::new(move |o, _| count(o, path))).described(described)
}

/// The wide columns of a template's containers and images.
fn container_columns() -> [Column; 2] {
    [
        Column::new(
            "Containers",
            "string",
            1,
            Box::new(|o, _| containers(o, "name")),
        )
        .described("Names of each container in the template."),
        Column::new(
            "Images",
            "string",
            1,
            Box::new(|o, _| containers(o, "image")),
        )
        .described("Images referenced by each container in the template."),
    ]
}

/// The wide Selector column.
fn selector_column(described: &str) -> Column {
    Column::new(
        "Selector",
        "string",
        1,
        Box::new(|o, _| {
            let selector = apps::selector_string(&o["spec"]["selector"]);
            json!(if selector.is_empty() {
                "<none>".to_owned()
            } else {
                selector
            })
        }),
    )
    .described(described)
}

/// `labels.FormatLabels`: `k=v` sorted by key, joined by commas; `<none>` when empty.
fn format_labels(labels: &Value) -> Value {
    let pairs: Vec<String> = labels
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    json!(if pairs.is_empty() {
        "<none>".to_owned()
    } else {
        pairs.join(",")
    })
}

/// `printControllerRevision`'s Controller cell: `<kind>.<group>/<name>` of the controller
/// reference, `<none>` without one.
fn controller_of(obj: &Value) -> Value {
    let reference = obj["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["controller"] == true);
    let Some(reference) = reference else {
        return json!("<none>");
    };
    let kind = reference["kind"].as_str().unwrap_or_default();
    let api_version = reference["apiVersion"].as_str().unwrap_or_default();
    let group = api_version
        .split_once('/')
        .map(|(g, _)| g)
        .unwrap_or_default();
    let name = reference["name"].as_str().unwrap_or_default();
    let qualified = if group.is_empty() {
        kind.to_lowercase()
    } else {
        format!("{}.{group}", kind.to_lowercase())
    };
    if qualified.is_empty() {
        json!(name)
    } else {
        json!(format!("{qualified}/{name}"))
    }
}

impl Strategy for Workloads {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*self.typed().go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        match self.workload() {
            Some(kind) => default_workload(kind, obj),
            None => Ok(()),
        }
    }

    fn name_rule(&self) -> NameRule {
        match self {
            Workloads::StatefulSets => NameRule::DnsLabel,
            _ => NameRule::DnsSubdomain,
        }
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        match self.workload() {
            Some(kind) => workload_rules(kind, new, old),
            None => controller_revision_rules(new, old),
        }
    }

    fn validate_create(
        &self,
        _info: &ResourceInfo,
        name: &str,
        obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        Ok(match self {
            Workloads::ReplicaSets => apps::name_warning(name).into_iter().collect(),
            Workloads::StatefulSets => workloads::stateful_set_warnings(obj),
            _ => Vec::new(),
        })
    }

    fn default_create(&self, obj: &mut Value, _name: &str) {
        // PrepareForCreate's `TemplateGeneration` of at least 1, which the field manager
        // finds written by the create (the v1 form carries it in an annotation).
        if matches!(self, Workloads::DaemonSets) {
            let generation = template_generation(obj).max(1);
            set_template_generation(obj, generation);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if matches!(self, Workloads::StatefulSets) {
            workloads::drop_disabled_fields(obj, None);
        }
    }

    fn validate_update(
        &self,
        _info: &ResourceInfo,
        _name: &str,
        new: &mut Value,
        _old: &Value,
        _subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        // An update decodes a missing `revision` as 0, which the field manager compares.
        if matches!(self, Workloads::ControllerRevisions) {
            zero_revision(new);
        }
        Ok(())
    }

    fn stored_form(&self, obj: &mut Value) {
        // The encoder writes a ControllerRevision's `revision` (not `omitempty`), which the
        // field manager finds unchanged from the zero value on a create.
        if matches!(self, Workloads::ControllerRevisions) {
            zero_revision(obj);
        }
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Value, subresource: Option<&str>) {
        if subresource.is_none() || subresource == Some("scale") {
            // Decoding defaults the spec before the strategy compares it.
            let _ = self.decode(new);
        }
        match self {
            Workloads::StatefulSets => workloads::drop_disabled_fields(new, Some(old)),
            Workloads::DaemonSets => {
                let mut generation = template_generation(old);
                if self.defaulted(new)["spec"]["template"]
                    != self.defaulted(old)["spec"]["template"]
                {
                    generation += 1;
                }
                set_template_generation(new, generation);
            }
            _ => {}
        }
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        // The status strategies' PrepareForUpdate: the spec is the stored one; the metadata and
        // the status are the write's. A DaemonSet's template generation is its spec's.
        crate::object::keep_stored(new, old, "spec");
        if matches!(self, Workloads::DaemonSets) {
            set_template_generation(new, template_generation(old));
        }
        if let Some(kind) = self.workload() {
            workloads::zero_status(kind, &mut new["status"]);
        }
    }

    fn bumps_generation(
        &self,
        old: &Value,
        new: &Value,
        subresource: Option<&str>,
    ) -> Option<bool> {
        super::spec_changed(|o| self.defaulted(o), old, new, subresource)
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&self.typed().apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        match self {
            Workloads::ReplicaSets => REPLICA_SET_STRUCTS,
            Workloads::StatefulSets => STATEFUL_SET_STRUCTS,
            Workloads::DaemonSets => DAEMON_SET_STRUCTS,
            // Its only value struct is its ObjectMeta: an empty `data` (`{}`) is a value the
            // field manager owns, not an empty struct.
            Workloads::ControllerRevisions => &["metadata"],
        }
    }

    fn scale_selector(&self, obj: &Value) -> Option<String> {
        Some(apps::selector_string(&obj["spec"]["selector"]))
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        use described::*;
        let mut columns = vec![Column::name()];
        match self {
            Workloads::ReplicaSets => {
                columns.extend([
                    count_column("Desired", &["spec", "replicas"], RS_REPLICAS),
                    count_column("Current", &["status", "replicas"], RS_CURRENT),
                    count_column("Ready", &["status", "readyReplicas"], RS_READY),
                    Column::age(),
                ]);
                columns.extend(container_columns());
                columns.push(selector_column(RS_SELECTOR));
            }
            Workloads::StatefulSets => {
                columns.push(super::deployment::ready_column());
                columns.push(Column::age());
                columns.extend(container_columns());
            }
            Workloads::DaemonSets => {
                columns.extend([
                    count_column("Desired", &["status", "desiredNumberScheduled"], DS_DESIRED),
                    count_column("Current", &["status", "currentNumberScheduled"], DS_CURRENT),
                    count_column("Ready", &["status", "numberReady"], DS_READY),
                    count_column(
                        "Up-to-date",
                        &["status", "updatedNumberScheduled"],
                        DS_UPDATED,
                    ),
                    count_column("Available", &["status", "numberAvailable"], DS_AVAILABLE),
                    Column::new(
                        "Node Selector",
                        "string",
                        0,
                        Box::new(|o, _| {
                            format_labels(&o["spec"]["template"]["spec"]["nodeSelector"])
                        }),
                    )
                    .described(&description("io.k8s.api.core.v1.PodSpec", "nodeSelector")),
                    Column::age(),
                ]);
                columns.extend(container_columns());
                columns.push(selector_column(DS_SELECTOR));
            }
            Workloads::ControllerRevisions => {
                columns.extend([
                    Column::new("Controller", "string", 0, Box::new(|o, _| controller_of(o)))
                        .described("Controller of the object"),
                    Column::new(
                        "Revision",
                        "string",
                        0,
                        Box::new(|o, _| json!(o["revision"].as_i64().unwrap_or(0))),
                    )
                    .described(CR_REVISION),
                    Column::age(),
                ]);
            }
        }
        columns
    }
}
