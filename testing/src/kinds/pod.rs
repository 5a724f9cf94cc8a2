//! core/v1 Pods (`pkg/registry/core/pod`): their Go type, defaulting (`SetObjectDefaults_Pod`),
//! rules (`ValidatePodCreate`, `ValidatePodUpdate`, `ValidatePodStatusUpdate`), what
//! `PrepareForCreate` sets (`status.phase: Pending`, the QoS class), the mutating admission every
//! cluster runs on a new pod's spec (`DefaultTolerationSeconds`, `Priority` without
//! PriorityClasses; `ServiceAccount` is the registry's, [`crate::registry`], as it reads the
//! store), status isolation both ways, generation bumped by spec changes only, graceful deletion
//! (`CheckGracefulDelete`), the field selectors of `ToSelectableFields` and the printer's columns.
//! The `binding` and `eviction` subresources are the registry's (`registry::pods`).

use http::Method;
use serde_json::{Value, json};

use super::{Strategy, Typed, typed};
use crate::apply::ApplySchema;
use crate::resources::ResourceInfo;
use crate::status::ApiError;
use crate::table::column::{Column, age_since};
use crate::validation::{FieldError, gotypes, pods};

/// The OpenAPI definition of the kind.
const DEFINITION: &str = "io.k8s.api.core.v1.Pod";

/// Pods' [`Strategy`].
pub(crate) struct Pods;

static TYPED: Typed = typed!(DEFINITION, VALUE_STRUCTS);

/// The fields of the Go type that are structs rather than pointers, or lists without
/// `omitempty`: present in the zero value the field manager compares a create with.
const VALUE_STRUCTS: &[&str] = &["spec", "spec.containers", "status"];

/// The field labels `ToSelectableFields` sets beyond the metadata's, and the conversion's
/// `spec.host` (read as `spec.nodeName`).
const FIELD_LABELS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
    "spec.host",
];

/// The value of the field label `field` of `pod` (in its served view), as `ToSelectableFields`
/// sets it.
pub(crate) fn field_value(pod: &Value, field: &str) -> Option<String> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    Some(match field {
        "spec.host" | "spec.nodeName" => text(&pod["spec"]["nodeName"]),
        "spec.hostNetwork" => (pod["spec"]["hostNetwork"] == true).to_string(),
        "status.podIP" => match pod["status"]["podIP"].as_str() {
            Some(ip) if !ip.is_empty() => ip.to_owned(),
            _ => text(&pod["status"]["podIPs"][0]["ip"]),
        },
        // Converted, but not in the selectable set: always empty.
        "status.podIPs" => String::new(),
        _ => return crate::registry::field_value(pod, field),
    })
}

/// `DefaultTolerationSeconds` and `Priority` (no PriorityClass is served: a pod without
/// `priorityClassName` gets priority 0 and `PreemptLowerPriority`; the two built-in classes
/// are known).
///
/// # Errors
/// `Priority`'s refusal (its message; the registry makes it the 403).
pub(crate) fn admit_create(pod: &mut Value) -> Result<(), String> {
    let spec = &mut pod["spec"];
    let tolerations: Vec<Value> = spec["tolerations"].as_array().cloned().unwrap_or_default();
    let mut added = tolerations.clone();
    for key in pods::DEFAULT_TOLERATED {
        let tolerated = tolerations.iter().any(|t| {
            let k = t["key"].as_str().unwrap_or_default();
            let e = t["effect"].as_str().unwrap_or_default();
            (k == key || k.is_empty()) && (e == "NoExecute" || e.is_empty())
        });
        if !tolerated {
            added.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": 300}),
            );
        }
    }
    spec["tolerations"] = json!(added);
    let class = spec["priorityClassName"].as_str().unwrap_or_default();
    let (priority, policy) = match class {
        "" => (0, "PreemptLowerPriority"),
        "system-cluster-critical" => (2_000_000_000, "PreemptLowerPriority"),
        "system-node-critical" => (2_000_001_000, "PreemptLowerPriority"),
        other => return Err(format!("no PriorityClass with name {other} was found")),
    };
    if let Some(given) = spec["priority"].as_i64()
        && given != priority
    {
        return Err(format!(
            "the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {priority} from the given PriorityClass name"
        ));
    }
    spec["priority"] = json!(priority);
    if spec["preemptionPolicy"].is_null() {
        spec["preemptionPolicy"] = json!(policy);
    }
    Ok(())
}

/// The description of `field` of the definition `name`, as the printers take it from
/// `SwaggerDoc()`.
fn description(name: &str, field: &str) -> String {
    crate::openapi::definitions::Definitions::builtin()
        .get(name)
        .and_then(|d| d["properties"][field]["description"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Whether `c` (a container of the spec) is a sidecar (`restartPolicy: Always`).
fn restartable(pod: &Value, name: &str) -> bool {
    pod["spec"]["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["name"] == name && c["restartPolicy"] == "Always")
}

/// The later of two RFC 3339 times (empty: none).
fn later(a: String, b: &Value) -> String {
    match b.as_str() {
        Some(b) if b > a.as_str() => b.to_owned(),
        _ => a,
    }
}

/// `printPod`'s Ready, Status and Restarts cells (restarts with the time of the last one).
fn summary(pod: &Value) -> (String, String, i64, String) {
    let status = &pod["status"];
    let mut reason = status["phase"].as_str().unwrap_or_default().to_owned();
    if let Some(r) = status["reason"].as_str().filter(|r| !r.is_empty()) {
        reason = r.to_owned();
    }
    let conditions = status["conditions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if conditions
        .iter()
        .any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated")
    {
        reason = "SchedulingGated".into();
    }
    let init_specs = pod["spec"]["initContainers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let total = pod["spec"]["containers"].as_array().map_or(0, Vec::len)
        + init_specs
            .iter()
            .filter(|c| c["restartPolicy"] == "Always")
            .count();
    let mut ready = 0;
    let (mut restarts, mut sidecar_restarts) = (0, 0);
    let (mut last, mut sidecar_last) = (String::new(), String::new());
    let mut initializing = false;
    for (i, c) in status["initContainerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let count = c["restartCount"].as_i64().unwrap_or(0);
        restarts += count;
        let finished = &c["lastState"]["terminated"]["finishedAt"];
        last = later(last, finished);
        let name = c["name"].as_str().unwrap_or_default();
        let sidecar = restartable(pod, name);
        if sidecar {
            sidecar_restarts += count;
            sidecar_last = later(sidecar_last, finished);
        }
        let terminated = &c["state"]["terminated"];
        let waiting = c["state"]["waiting"]["reason"].as_str().unwrap_or_default();
        if terminated.is_object() && terminated["exitCode"].as_i64().unwrap_or(0) == 0 {
            continue;
        }
        if sidecar && c["started"] == true {
            if c["ready"] == true {
                ready += 1;
            }
            continue;
        }
        if terminated.is_object() {
            reason = match terminated["reason"].as_str().filter(|r| !r.is_empty()) {
                Some(r) => format!("Init:{r}"),
                None => match terminated["signal"].as_i64().filter(|s| *s != 0) {
                    Some(s) => format!("Init:Signal:{s}"),
                    None => format!(
                        "Init:ExitCode:{}",
                        terminated["exitCode"].as_i64().unwrap_or(0)
                    ),
                },
            };
        } else if !waiting.is_empty() && waiting != "PodInitializing" {
            reason = format!("Init:{waiting}");
        } else {
            reason = format!("Init:{i}/{}", init_specs.len());
        }
        initializing = true;
        break;
    }
    let initialized = conditions
        .iter()
        .any(|c| c["type"] == "Initialized" && c["status"] == "True");
    if !initializing || initialized {
        restarts = sidecar_restarts;
        last = sidecar_last;
        let mut running = false;
        for c in status["containerStatuses"]
            .as_array()
            .into_iter()
            .flatten()
            .rev()
        {
            restarts += c["restartCount"].as_i64().unwrap_or(0);
            last = later(last, &c["lastState"]["terminated"]["finishedAt"]);
            let state = &c["state"];
            let waiting = state["waiting"]["reason"].as_str().unwrap_or_default();
            let terminated = &state["terminated"];
            let terminated_reason = terminated["reason"].as_str().unwrap_or_default();
            if !waiting.is_empty() {
                reason = waiting.to_owned();
            } else if terminated.is_object() && !terminated_reason.is_empty() {
                reason = terminated_reason.to_owned();
            } else if terminated.is_object() {
                reason = match terminated["signal"].as_i64().filter(|s| *s != 0) {
                    Some(s) => format!("Signal:{s}"),
                    None => format!("ExitCode:{}", terminated["exitCode"].as_i64().unwrap_or(0)),
                };
            } else if c["ready"] == true && state["running"].is_object() {
                running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && running {
            let pod_ready = conditions
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            reason = if pod_ready { "Running" } else { "NotReady" }.into();
        }
    }
    let deleting = !pod["metadata"]["deletionTimestamp"].is_null();
    let phase = status["phase"].as_str().unwrap_or_default();
    if deleting && status["reason"] == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".into();
    }
    (format!("{ready}/{total}"), reason, restarts, last)
}

impl Strategy for Pods {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(*TYPED.go_type)
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        pods::default_pod(obj)
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        match old {
            None => pods::create_rules(new),
            Some(old) => pods::update_rules(new, old),
        }
    }

    fn validate_create(
        &self,
        _info: &ResourceInfo,
        name: &str,
        _obj: &mut Value,
    ) -> Result<Vec<String>, ApiError> {
        // WarningsOnCreate: a name that is not a DNS label.
        let problems = crate::validation::names::is_dns1123_label(name);
        Ok(if problems.is_empty() {
            Vec::new()
        } else {
            vec![format!(
                "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [{}]",
                problems.join(" ")
            )]
        })
    }

    fn validate_update(
        &self,
        info: &ResourceInfo,
        _name: &str,
        new: &mut Value,
        old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), ApiError> {
        if subresource == Some("status") {
            crate::validation::invalid(info, new, pods::status_rules(new, old))?;
        }
        Ok(())
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        let qos = pods::qos_class(&obj["spec"]);
        // The `SchedulingGated` condition is the registry's (it needs the time).
        let status = json!({"phase": "Pending", "qosClass": qos});
        obj["status"] = status;
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Value, _subresource: Option<&str>) {
        // Decoding defaults the spec before the strategy compares it; the mutating admission
        // of an update follows.
        let _ = pods::default_pod(new);
        pods::admit_update(new, old);
    }

    fn prepare_for_status_update(&self, old: &Value, new: &mut Value) {
        // podStatusStrategy.PrepareForUpdate: the spec, the owner references and the deletion
        // timestamp are the stored ones; the QoS class and observed generations kept when the
        // write has none.
        let _ = pods::default_pod(new);
        crate::object::keep_stored(new, old, "spec");
        for key in ["ownerReferences", "deletionTimestamp"] {
            match old["metadata"].get(key) {
                Some(v) => new["metadata"][key] = v.clone(),
                None => {
                    if let Some(meta) = new["metadata"].as_object_mut() {
                        meta.remove(key);
                    }
                }
            }
        }
        if !new["status"].is_object() {
            new["status"] = json!({});
        }
        let status = &mut new["status"];
        if status["qosClass"].as_str().unwrap_or_default().is_empty()
            && let Some(q) = old["status"]["qosClass"].as_str()
        {
            status["qosClass"] = json!(q);
        }
        if status["observedGeneration"].as_i64().unwrap_or(0) == 0
            && let Some(g) = old["status"]["observedGeneration"]
                .as_i64()
                .filter(|g| *g != 0)
        {
            status["observedGeneration"] = json!(g);
        }
    }

    fn bumps_generation(
        &self,
        old: &Value,
        new: &Value,
        subresource: Option<&str>,
    ) -> Option<bool> {
        let defaulted = |v: &Value| {
            let mut v = v.clone();
            let _ = pods::default_pod(&mut v);
            v
        };
        super::spec_changed(defaulted, old, new, subresource)
    }

    fn apply_schema(&self) -> Option<&'static ApplySchema> {
        Some(&TYPED.apply)
    }

    fn value_structs(&self) -> &'static [&'static str] {
        VALUE_STRUCTS
    }

    fn field_labels(&self) -> &'static [&'static str] {
        FIELD_LABELS
    }

    fn unsupported_field_label(&self, field: &str) -> Option<String> {
        super::core_field_label_error(field)
    }

    fn field_values(&self) -> Option<fn(&Value, &str) -> Option<String>> {
        Some(field_value)
    }

    fn finalized(&self, obj: &Value) -> bool {
        // ShouldDeleteDuringUpdate: a pod waiting out its grace period stays.
        obj["metadata"]["deletionGracePeriodSeconds"]
            .as_i64()
            .is_none_or(|g| g == 0)
    }

    fn grace_period(&self, obj: &Value, requested: Option<i64>) -> Option<i64> {
        // CheckGracefulDelete.
        let mut period = requested.unwrap_or_else(|| {
            obj["spec"]["terminationGracePeriodSeconds"]
                .as_i64()
                .unwrap_or(0)
        });
        if obj["spec"]["nodeName"]
            .as_str()
            .unwrap_or_default()
            .is_empty()
        {
            period = 0;
        }
        if matches!(
            obj["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        ) {
            period = 0;
        }
        Some(if period < 0 { 1 } else { period })
    }

    /// The pod registry sets `ReturnDeletedObject`.
    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn serves(&self, subresource: &str, method: &Method) -> bool {
        matches!(subresource, "binding" | "eviction") && *method == Method::POST
    }

    fn discovery_subresources(&self) -> Vec<Value> {
        vec![
            json!({"name": "pods/binding", "singularName": "", "namespaced": true,
                "kind": "Binding", "verbs": ["create"]}),
            json!({"name": "pods/eviction", "singularName": "", "namespaced": true,
                "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]}),
        ]
    }

    fn columns(&self, _info: &ResourceInfo) -> Vec<Column> {
        let status = "io.k8s.api.core.v1.PodStatus";
        let spec = "io.k8s.api.core.v1.PodSpec";
        let none = |v: &Value| match v.as_str() {
            Some(s) if !s.is_empty() => json!(s),
            _ => json!("<none>"),
        };
        vec![
            Column::name(),
            Column::new("Ready", "string", 0, Box::new(|o, _| json!(summary(o).0)))
                .described("The aggregate readiness state of this pod for accepting traffic."),
            Column::new("Status", "string", 0, Box::new(|o, _| json!(summary(o).1)))
                .described("The aggregate status of the containers in this pod."),
            Column::new(
                "Restarts",
                "string",
                0,
                Box::new(|o, now| {
                    let (_, _, restarts, last) = summary(o);
                    if restarts != 0 && !last.is_empty() {
                        json!(format!(
                            "{restarts} ({} ago)",
                            age_since(Some(&last), now).as_str().unwrap_or_default()
                        ))
                    } else {
                        json!(restarts.to_string())
                    }
                }),
            )
            .described("The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
            Column::age(),
            Column::new(
                "IP",
                "string",
                1,
                Box::new(move |o, _| {
                    let ip = &o["status"]["podIP"];
                    if ip.as_str().is_some_and(|i| !i.is_empty()) {
                        ip.clone()
                    } else {
                        none(&o["status"]["podIPs"][0]["ip"])
                    }
                }),
            )
            .described(&description(status, "podIP")),
            Column::new("Node", "string", 1, Box::new(move |o, _| none(&o["spec"]["nodeName"])))
                .described(&description(spec, "nodeName")),
            Column::new(
                "Nominated Node",
                "string",
                1,
                Box::new(move |o, _| none(&o["status"]["nominatedNodeName"])),
            )
            .described(&description(status, "nominatedNodeName")),
            Column::new(
                "Readiness Gates",
                "string",
                1,
                Box::new(|o, _| {
                    let gates = o["spec"]["readinessGates"].as_array().map(Vec::as_slice).unwrap_or_default();
                    if gates.is_empty() {
                        return json!("<none>");
                    }
                    let conditions = o["status"]["conditions"].as_array().map(Vec::as_slice).unwrap_or_default();
                    let ready = gates
                        .iter()
                        .filter(|g| {
                            conditions
                                .iter()
                                .find(|c| c["type"] == g["conditionType"])
                                .is_some_and(|c| c["status"] == "True")
                        })
                        .count();
                    json!(format!("{ready}/{}", gates.len()))
                }),
            )
            .described(&description(spec, "readinessGates")),
        ]
    }
}
