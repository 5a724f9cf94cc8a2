//! apps/v1 ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions: their
//! `SetDefaults_*` (`pkg/apis/apps/v1/defaults.go`, with the pod template's from [`super::pod`]
//! and a StatefulSet's claim templates' `SetDefaults_PersistentVolumeClaim[Spec]`) and their
//! rules (`pkg/apis/apps/validation/validation.go`: `ValidateReplicaSet[Update]`,
//! `ValidateStatefulSet[Update]`, `ValidateDaemonSet[Update]`, `ValidateControllerRevision*`,
//! and their status updates), upstream's messages. What Deployments share with them is in
//! [`super::apps`].

use serde_json::{Value, json};

use super::FieldError;
use super::apps::{
    always_restart_rules, int_or_percent_rules, int_or_percent_value, non_negative, percent,
    render_selector, replica_set_template_rules, required_selector_rules, selector_converts,
    selector_immutable, selector_rules, template_match_rule,
};
use super::names::is_dns1123_label;
use super::pod;

/// The annotation apps/v1 keeps a DaemonSet's internal `templateGeneration` in.
pub(crate) const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// The apps/v1 kinds of this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // The kinds' names.
pub(crate) enum Workload {
    /// `ReplicaSet`.
    ReplicaSet,
    /// `StatefulSet`.
    StatefulSet,
    /// `DaemonSet`.
    DaemonSet,
}

// Defaulting.

/// Sets `obj[key]` to `value` when it is missing, null or `""`.
fn default_to(obj: &mut Value, key: &str, value: Value) {
    if obj.get(key).is_none_or(|v| v.is_null() || v == "") {
        obj[key] = value;
    }
}

/// `obj[key]`, made an object if it is not one.
fn object_at<'a>(obj: &'a mut Value, key: &str) -> &'a mut Value {
    if !obj[key].is_object() {
        obj[key] = json!({});
    }
    &mut obj[key]
}

/// `SetObjectDefaults_<kind>`: the kind's defaults, its template's, and the value structs the
/// encoder always writes (`status: {}`).
///
/// # Errors
/// The decoder's message for a quantity that does not parse.
pub(crate) fn default_workload(kind: Workload, obj: &mut Value) -> Result<(), String> {
    let spec = object_at(obj, "spec");
    match kind {
        Workload::ReplicaSet => default_to(spec, "replicas", json!(1)),
        Workload::StatefulSet => default_stateful_set(spec)?,
        Workload::DaemonSet => {
            let strategy = object_at(spec, "updateStrategy");
            default_to(strategy, "type", json!("RollingUpdate"));
            if strategy["type"] == "RollingUpdate" {
                let rolling = object_at(strategy, "rollingUpdate");
                default_to(rolling, "maxUnavailable", json!(1));
                default_to(rolling, "maxSurge", json!(0));
            }
            default_to(spec, "revisionHistoryLimit", json!(10));
        }
    }
    pod::default_template(object_at(spec, "template"))?;
    zero_status(kind, object_at(obj, "status"));
    Ok(())
}

/// The status's counts its Go type encodes when zero (not `omitempty`).
pub(crate) fn zero_status(kind: Workload, status: &mut Value) {
    let counts: &[&str] = match kind {
        Workload::ReplicaSet => &["replicas"],
        Workload::StatefulSet => &["replicas", "availableReplicas"],
        Workload::DaemonSet => &[
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
        ],
    };
    if !status.is_object() {
        *status = json!({});
    }
    for key in counts {
        if status[*key].is_null() {
            status[*key] = json!(0);
        }
    }
}

/// `SetDefaults_StatefulSet` and its claim templates' defaults.
fn default_stateful_set(spec: &mut Value) -> Result<(), String> {
    default_to(spec, "podManagementPolicy", json!("OrderedReady"));
    let strategy = object_at(spec, "updateStrategy");
    if strategy["type"].as_str().unwrap_or_default().is_empty() {
        strategy["type"] = json!("RollingUpdate");
        object_at(strategy, "rollingUpdate");
    }
    if strategy["type"] == "RollingUpdate" && strategy["rollingUpdate"].is_object() {
        default_to(&mut strategy["rollingUpdate"], "partition", json!(0));
    }
    let retention = object_at(spec, "persistentVolumeClaimRetentionPolicy");
    default_to(retention, "whenDeleted", json!("Retain"));
    default_to(retention, "whenScaled", json!("Retain"));
    default_to(spec, "replicas", json!(1));
    default_to(spec, "revisionHistoryLimit", json!(10));
    let claims = spec
        .get_mut("volumeClaimTemplates")
        .and_then(Value::as_array_mut);
    for claim in claims.into_iter().flatten() {
        // The v1 conversion writes each template's type (as reflective conversion did).
        claim["apiVersion"] = json!("v1");
        claim["kind"] = json!("PersistentVolumeClaim");
        default_to(object_at(claim, "status"), "phase", json!("Pending"));
        default_to(object_at(claim, "spec"), "volumeMode", json!("Filesystem"));
        for at in [
            "/spec/resources/limits",
            "/spec/resources/requests",
            "/status/capacity",
            "/status/allocatedResources",
        ] {
            if let Some(map) = claim.pointer_mut(at).and_then(Value::as_object_mut) {
                pod::default_resource_list(map)?;
            }
        }
    }
    Ok(())
}

/// `PrepareForCreate`/`PrepareForUpdate`'s `dropStatefulSetDisabledFields`: without the
/// `MaxUnavailableStatefulSet` gate (alpha, off in v1.34) a rolling update's `maxUnavailable`
/// is dropped unless the stored object already uses it.
pub(crate) fn drop_disabled_fields(new: &mut Value, old: Option<&Value>) {
    let in_use = old
        .is_some_and(|o| !o["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"].is_null());
    if !in_use
        && let Some(rolling) = new
            .pointer_mut("/spec/updateStrategy/rollingUpdate")
            .and_then(Value::as_object_mut)
    {
        rolling.remove("maxUnavailable");
    }
}

// Validation.

/// The kind's spec rules on `new` (and on an update, against `old`), then its status's.
pub(crate) fn workload_rules(kind: Workload, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &new["spec"];
    let mut errs = Vec::new();
    match kind {
        Workload::ReplicaSet => {
            non_negative(&mut errs, "spec.replicas", &spec["replicas"]);
            non_negative(&mut errs, "spec.minReadySeconds", &spec["minReadySeconds"]);
            errs.extend(replica_set_template_rules(spec));
            if let Some(old) = old
                && spec["selector"] != old["spec"]["selector"]
            {
                errs.push(selector_immutable(&spec["selector"]));
            }
        }
        Workload::StatefulSet => errs.extend(stateful_set_update_rules(new, old)),
        Workload::DaemonSet => {
            if let Some(old) = old
                && spec["selector"] != old["spec"]["selector"]
            {
                errs.push(selector_immutable(&spec["selector"]));
            }
            errs.extend(daemon_set_spec_rules(spec));
        }
    }
    let old_status = old.map(|o| &o["status"]);
    errs.extend(status_rules(kind, &new["status"], old_status));
    errs
}

/// The warnings a StatefulSet's create or update earns (`WarningsOnCreate`/`OnUpdate`, the
/// ported part).
pub(crate) fn stateful_set_warnings(obj: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    if obj["spec"]["revisionHistoryLimit"]
        .as_i64()
        .is_some_and(|l| l < 0)
    {
        warnings.push("spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended".to_owned());
    }
    warnings
}

/// Which parts of `ValidateStatefulSetSpec` an update skips (`StatefulSetValidationOptions`).
#[derive(Default, Clone, Copy)]
struct SetOptions {
    /// `AllowInvalidServiceName` and `SkipValidateVolumeClaimTemplates` (updates).
    update: bool,
    /// `SkipValidatePodTemplateSpec`: the stored spec is itself invalid.
    skip_template: bool,
}

/// `ValidateStatefulSet` or `ValidateStatefulSetUpdate`'s spec part.
fn stateful_set_update_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let Some(old) = old else {
        return stateful_set_spec_rules(&new["spec"], SetOptions::default());
    };
    let mut opts = SetOptions {
        update: true,
        skip_template: false,
    };
    opts.skip_template = !stateful_set_spec_rules(&old["spec"], opts).is_empty();
    let mut errs = stateful_set_spec_rules(&new["spec"], opts);
    let mutable = [
        "replicas",
        "template",
        "updateStrategy",
        "minReadySeconds",
        "ordinals",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
    ];
    let rest = |spec: &Value| {
        let mut spec = spec.clone();
        if let Some(map) = spec.as_object_mut() {
            map.retain(|k, _| !mutable.contains(&k.as_str()));
        }
        spec
    };
    if rest(&new["spec"]) != rest(&old["spec"]) {
        errs.push(FieldError::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    errs
}

/// The internal `RollingUpdateStatefulSetStrategy` as `field.Error` renders it (no JSON tags).
fn render_stateful_rolling(rolling: &Value) -> String {
    if !rolling.is_object() {
        return "null".to_owned();
    }
    format!(
        "{{\"Partition\":{},\"MaxUnavailable\":{}}}",
        rolling["partition"].as_i64().unwrap_or(0),
        rolling["maxUnavailable"]
    )
}

/// `ValidateStatefulSetSpec`.
fn stateful_set_spec_rules(spec: &Value, opts: SetOptions) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match spec["podManagementPolicy"].as_str().unwrap_or_default() {
        "" => errs.push(FieldError::required("spec.podManagementPolicy")),
        "OrderedReady" | "Parallel" => {}
        other => errs.push(FieldError::invalid(
            "spec.podManagementPolicy",
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    let strategy = &spec["updateStrategy"];
    let rolling = &strategy["rollingUpdate"];
    match strategy["type"].as_str().unwrap_or_default() {
        "" => errs.push(FieldError::required("spec.updateStrategy")),
        "OnDelete" => {
            if !rolling.is_null() {
                errs.push(FieldError::invalid_rendered(
                    "spec.updateStrategy.rollingUpdate",
                    &render_stateful_rolling(rolling),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if !rolling.is_null() {
                errs.extend(stateful_rolling_rules(rolling));
            }
        }
        other => errs.push(FieldError::invalid_rendered(
            "spec.updateStrategy",
            &format!(
                "{{\"Type\":{},\"RollingUpdate\":{}}}",
                Value::String(other.to_owned()),
                render_stateful_rolling(rolling)
            ),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    let retention = &spec["persistentVolumeClaimRetentionPolicy"];
    if retention.is_object() {
        for key in ["whenDeleted", "whenScaled"] {
            let value = retention[key].as_str().unwrap_or_default();
            if !matches!(value, "Retain" | "Delete") {
                errs.push(pod::unsupported(
                    &format!("spec.persistentVolumeClaimRetentionPolicy.{key}"),
                    value,
                    &["Retain", "Delete"],
                ));
            }
        }
    }
    if !opts.update {
        for (i, claim) in items(&spec["volumeClaimTemplates"]).iter().enumerate() {
            errs.extend(claim_spec_rules(
                &claim["spec"],
                &format!("spec.volumeClaimTemplates[{i}].spec"),
            ));
        }
    }
    non_negative(&mut errs, "spec.replicas", &spec["replicas"]);
    non_negative(&mut errs, "spec.minReadySeconds", &spec["minReadySeconds"]);
    if spec["ordinals"].is_object() {
        let start = spec["ordinals"]["start"].as_i64().unwrap_or(0);
        non_negative(&mut errs, "spec.ordinals.start", &json!(start));
    }
    let service = spec["serviceName"].as_str().unwrap_or_default();
    if !opts.update && !service.is_empty() {
        for m in is_dns1123_label(service) {
            errs.push(FieldError::invalid("spec.serviceName", service, &m));
        }
    }
    let selector = &spec["selector"];
    errs.extend(required_selector_rules(selector, "statefulset"));
    if !selector_converts(selector) {
        errs.push(FieldError::invalid_rendered(
            "spec.selector",
            &render_selector(selector),
            "",
        ));
    } else {
        let template = template_to_validate(spec);
        errs.extend(template_match_rule(selector, &template));
        if !opts.skip_template {
            errs.extend(pod::template_rules(&template, "spec.template"));
        }
        errs.extend(pod::label_rules(
            &template["metadata"]["labels"],
            "spec.template.labels",
        ));
    }
    errs.extend(always_restart_rules(&spec["template"], "StatefulSet"));
    errs
}

/// The template `ValidateStatefulSetSpec` validates: without `subdomain` and `hostname` (the
/// controller sets them), with a volume for each claim template in place of any of that name.
fn template_to_validate(spec: &Value) -> Value {
    let mut template = spec["template"].clone();
    if let Some(pod_spec) = template["spec"].as_object_mut() {
        pod_spec.remove("subdomain");
        pod_spec.remove("hostname");
    }
    let claims: Vec<&str> = items(&spec["volumeClaimTemplates"])
        .iter()
        .filter_map(|c| c["metadata"]["name"].as_str())
        .collect();
    if !claims.is_empty() && template["spec"].is_object() {
        let mut volumes: Vec<Value> = Vec::new();
        for name in &claims {
            if !volumes.iter().any(|v| v["name"] == *name) {
                volumes.push(json!({"name": name, "persistentVolumeClaim": {"claimName": name}}));
            }
        }
        for v in items(&template["spec"]["volumes"]) {
            if !claims.contains(&v["name"].as_str().unwrap_or_default()) {
                volumes.push(v.clone());
            }
        }
        template["spec"]["volumes"] = Value::Array(volumes);
    }
    template
}

/// `validateRollingUpdateStatefulSet`.
fn stateful_rolling_rules(rolling: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = "spec.updateStrategy.rollingUpdate";
    non_negative(
        &mut errs,
        &format!("{path}.partition"),
        &json!(rolling["partition"].as_i64().unwrap_or(0)),
    );
    let max = &rolling["maxUnavailable"];
    if !max.is_null() {
        let at = format!("{path}.maxUnavailable");
        errs.extend(int_or_percent_rules(max, &at));
        if int_or_percent_value(max) == 0 {
            errs.push(FieldError::invalid_value(&at, max, "cannot be 0"));
        }
        errs.extend(not_over_100_percent(max, &at));
    }
    errs
}

/// `IsNotMoreThan100Percent`.
fn not_over_100_percent(value: &Value, path: &str) -> Option<FieldError> {
    percent(value)
        .is_some_and(|p| p > 100)
        .then(|| FieldError::invalid_value(path, value, "must not be greater than 100%"))
}

/// The items of a JSON list (none if it is not one).
fn items(list: &Value) -> &[Value] {
    list.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `ValidatePersistentVolumeClaimSpec` of a claim template (the ported part: access modes,
/// selector, the storage request, the volume mode).
pub(super) fn claim_spec_rules(spec: &Value, path: &str) -> Vec<FieldError> {
    const MODES: &[&str] = &[
        "ReadOnlyMany",
        "ReadWriteMany",
        "ReadWriteOnce",
        "ReadWriteOncePod",
    ];
    let mut errs = Vec::new();
    let modes = items(&spec["accessModes"]);
    if modes.is_empty() {
        errs.push(FieldError::required_because(
            &format!("{path}.accessModes"),
            "at least 1 access mode is required",
        ));
    }
    if spec["selector"].is_object() {
        errs.extend(selector_rules(
            &spec["selector"],
            &format!("{path}.selector"),
        ));
    }
    let (mut once_pod, mut other) = (false, false);
    for mode in modes {
        let mode = mode.as_str().unwrap_or_default();
        if !MODES.contains(&mode) {
            errs.push(pod::unsupported(
                &format!("{path}.accessModes"),
                mode,
                MODES,
            ));
        } else if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        errs.push(FieldError::forbidden(
            &format!("{path}.accessModes"),
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let storage_path = format!("{path}.resources[storage]");
    match spec["resources"]["requests"].get("storage") {
        None => errs.push(FieldError::required(&storage_path)),
        Some(value) => {
            if let Some(q) = super::quantity::Quantity::of_json(value) {
                let zero = super::quantity::Quantity::parse("0").unwrap_or(q);
                if q <= zero {
                    errs.push(FieldError::invalid(
                        &storage_path,
                        &q.canonical(),
                        "must be greater than zero",
                    ));
                }
            }
        }
    }
    if let Some(mode) = spec["volumeMode"].as_str()
        && !matches!(mode, "Block" | "Filesystem")
    {
        errs.push(pod::unsupported(
            &format!("{path}.volumeMode"),
            mode,
            &["Block", "Filesystem"],
        ));
    }
    errs
}

/// The internal `RollingUpdateDaemonSet` as `field.Error` renders it (no JSON tags).
fn render_daemon_rolling(rolling: &Value) -> String {
    if !rolling.is_object() {
        return "null".to_owned();
    }
    let int_or_string = |v: &Value| if v.is_null() { json!(0) } else { v.clone() };
    format!(
        "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
        int_or_string(&rolling["maxUnavailable"]),
        int_or_string(&rolling["maxSurge"])
    )
}

/// `ValidateDaemonSetSpec`.
fn daemon_set_spec_rules(spec: &Value) -> Vec<FieldError> {
    let selector = &spec["selector"];
    let template = &spec["template"];
    let mut errs = Vec::new();
    if selector.is_object() {
        errs.extend(selector_rules(selector, "spec.selector"));
    }
    if selector_converts(selector) {
        // A missing selector converts to `labels.Nothing()`, which matches no labels.
        errs.extend(template_match_rule(selector, template));
    }
    if selector.is_object()
        && items(&selector["matchExpressions"]).is_empty()
        && selector["matchLabels"]
            .as_object()
            .is_none_or(serde_json::Map::is_empty)
    {
        errs.push(FieldError::invalid_rendered(
            "spec.selector",
            &render_selector(selector),
            "empty selector is invalid for daemonset",
        ));
    }
    errs.extend(pod::template_rules(template, "spec.template"));
    errs.extend(always_restart_rules(template, "DaemonSet"));
    non_negative(&mut errs, "spec.minReadySeconds", &spec["minReadySeconds"]);
    let strategy = &spec["updateStrategy"];
    let rolling = &strategy["rollingUpdate"];
    match strategy["type"].as_str().unwrap_or_default() {
        "OnDelete" => {}
        "RollingUpdate" => {
            if rolling.is_null() {
                errs.push(FieldError::required("spec.updateStrategy.rollingUpdate"));
            } else {
                errs.extend(daemon_rolling_rules(rolling));
            }
        }
        other => errs.push(FieldError::not_supported_rendered(
            "spec.updateStrategy",
            &format!(
                "{{\"Type\":{},\"RollingUpdate\":{}}}",
                Value::String(other.to_owned()),
                render_daemon_rolling(rolling)
            ),
            "\"RollingUpdate\", \"OnDelete\"",
        )),
    }
    non_negative(
        &mut errs,
        "spec.revisionHistoryLimit",
        &spec["revisionHistoryLimit"],
    );
    errs
}

/// `ValidateRollingUpdateDaemonSet`.
fn daemon_rolling_rules(rolling: &Value) -> Vec<FieldError> {
    let path = "spec.updateStrategy.rollingUpdate";
    let unavailable_path = format!("{path}.maxUnavailable");
    let surge_path = format!("{path}.maxSurge");
    let unavailable = &rolling["maxUnavailable"];
    let surge = &rolling["maxSurge"];
    let mut errs = int_or_percent_rules(unavailable, &unavailable_path);
    errs.extend(int_or_percent_rules(surge, &surge_path));
    errs.extend(not_over_100_percent(unavailable, &unavailable_path));
    errs.extend(not_over_100_percent(surge, &surge_path));
    let has_unavailable = int_or_percent_value(unavailable) != 0;
    let has_surge = int_or_percent_value(surge) != 0;
    if has_unavailable && has_surge {
        errs.push(FieldError::invalid_value(
            &surge_path,
            surge,
            "may not be set when maxUnavailable is non-zero",
        ));
    } else if !has_unavailable && !has_surge {
        errs.push(FieldError::required_because(
            &unavailable_path,
            "cannot be 0 when maxSurge is 0",
        ));
    }
    errs
}

/// The status's rules of each kind (`ValidateReplicaSetStatus`, `ValidateStatefulSetStatus`,
/// `validateDaemonSetStatus`) and, on an update, `collisionCount` never decremented.
fn status_rules(kind: Workload, status: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let (counts, bounded, ready_message): (&[&str], &[&str], &str) = match kind {
        Workload::ReplicaSet => (
            &[
                "replicas",
                "fullyLabeledReplicas",
                "readyReplicas",
                "availableReplicas",
                "observedGeneration",
                "terminatingReplicas",
            ],
            &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
            "cannot be greater than readyReplicas",
        ),
        Workload::StatefulSet => (
            &[
                "replicas",
                "readyReplicas",
                "currentReplicas",
                "updatedReplicas",
                "availableReplicas",
                "observedGeneration",
                "collisionCount",
            ],
            &[
                "readyReplicas",
                "currentReplicas",
                "updatedReplicas",
                "availableReplicas",
            ],
            "cannot be greater than status.readyReplicas",
        ),
        Workload::DaemonSet => (
            &[
                "currentNumberScheduled",
                "numberMisscheduled",
                "desiredNumberScheduled",
                "numberReady",
                "observedGeneration",
                "updatedNumberScheduled",
                "numberAvailable",
                "numberUnavailable",
                "collisionCount",
            ],
            &[],
            "",
        ),
    };
    let mut errs = Vec::new();
    let count = |key: &str| status[key].as_i64().unwrap_or(0);
    for key in counts {
        non_negative(&mut errs, &format!("status.{key}"), &status[key]);
    }
    for key in bounded {
        if count(key) > count("replicas") {
            errs.push(FieldError::invalid_value(
                &format!("status.{key}"),
                &json!(count(key)),
                "cannot be greater than status.replicas",
            ));
        }
    }
    if !bounded.is_empty() && count("availableReplicas") > count("readyReplicas") {
        errs.push(FieldError::invalid_value(
            "status.availableReplicas",
            &json!(count("availableReplicas")),
            ready_message,
        ));
    }
    if kind != Workload::ReplicaSet {
        errs.extend(super::apps::collision_count_rule(status, old));
    }
    errs
}

/// `ValidateControllerRevisionCreate` (`old` none) or `ValidateControllerRevisionUpdate`.
pub(crate) fn controller_revision_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    non_negative(&mut errs, "revision", &new["revision"]);
    match old {
        None => match new.get("data") {
            None | Some(Value::Null) => {
                errs.push(FieldError::required_because("data", "data is mandatory"));
            }
            Some(Value::Object(_)) => {}
            Some(_) => errs.push(FieldError::required_because(
                "data",
                "data must be a valid JSON object",
            )),
        },
        Some(old) => {
            if new.get("data") != old.get("data") {
                let data = new.get("data").cloned().unwrap_or(Value::Null);
                errs.push(FieldError::invalid_value(
                    "data",
                    &data,
                    "field is immutable",
                ));
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stateful_set() -> Value {
        json!({"metadata": {"name": "web"}, "spec": {"serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                {"name": "web", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/d"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}})
    }

    #[test]
    fn a_defaulted_stateful_set_is_valid_and_its_service_name_immutable() {
        let mut s = stateful_set();
        default_workload(Workload::StatefulSet, &mut s).unwrap();
        assert_eq!(
            s["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        assert_eq!(
            s["spec"]["volumeClaimTemplates"][0]["spec"]["volumeMode"],
            "Filesystem"
        );
        assert_eq!(workload_rules(Workload::StatefulSet, &s, None), Vec::new());
        let mut moved = s.clone();
        moved["spec"]["serviceName"] = json!("other");
        moved["spec"]["replicas"] = json!(3);
        let errs = workload_rules(Workload::StatefulSet, &moved, Some(&s));
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0]
                .to_string()
                .starts_with("spec: Forbidden: updates to statefulset spec")
        );
    }

    #[test]
    fn a_daemon_set_rolls_one_at_a_time_and_refuses_both_surge_and_unavailable() {
        let mut d = json!({"spec": {"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}},
                         "spec": {"containers": [{"name": "c", "image": "i"}]}}}});
        default_workload(Workload::DaemonSet, &mut d).unwrap();
        assert_eq!(
            d["spec"]["updateStrategy"]["rollingUpdate"],
            json!({"maxUnavailable": 1, "maxSurge": 0})
        );
        assert!(workload_rules(Workload::DaemonSet, &d, None).is_empty());
        d["spec"]["updateStrategy"]["rollingUpdate"]["maxSurge"] = json!(1);
        let errs = workload_rules(Workload::DaemonSet, &d, None);
        assert_eq!(
            errs[0].to_string(),
            "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"
        );
    }

    #[test]
    fn a_revisions_data_is_required_and_immutable() {
        let errs = controller_revision_rules(&json!({"revision": 1}), None);
        assert_eq!(
            errs[0].to_string(),
            "data: Required value: data is mandatory"
        );
        let old = json!({"revision": 1, "data": {"a": 1}});
        let errs = controller_revision_rules(&json!({"revision": 1, "data": {"a": 2}}), Some(&old));
        assert_eq!(
            errs[0].to_string(),
            "data: Invalid value: {\"a\":2}: field is immutable"
        );
    }
}
