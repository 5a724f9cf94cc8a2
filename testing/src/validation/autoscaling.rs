//! autoscaling HorizontalPodAutoscalers: the v2 defaulting (`pkg/apis/autoscaling/v2/
//! defaults.go`), the rules (`pkg/apis/autoscaling/validation/validation.go`, with the options of
//! `pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go`) and the conversion between
//! the stored v2 form and autoscaling/v1 (`pkg/apis/autoscaling/v1/conversion.go`, with
//! `SetDefaults_HorizontalPodAutoscaler` of v1), which keeps what v1 cannot say in the
//! `autoscaling.alpha.kubernetes.io/*` annotations, encoded as Go's `json.Marshal` writes them.

use serde_json::{Map, Value, json};

use super::FieldError;
use super::names::{is_dns1123_label, is_valid_path_segment_name};
use super::pod::unsupported;
use super::quantity::Quantity;
use crate::go::json::marshal;

/// `autoscaling.MetricSpecsAnnotation`.
const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// `autoscaling.MetricStatusesAnnotation`.
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// `autoscaling.HorizontalPodAutoscalerConditionsAnnotation`.
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// `autoscaling.BehaviorSpecsAnnotation`.
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// The annotations `DropRoundTripHorizontalPodAutoscalerAnnotations` removes.
const ROUND_TRIP: &[&str] = &[
    METRICS,
    BEHAVIOR,
    "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
    "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
    CURRENT_METRICS,
    CONDITIONS,
];
/// `autoscaling.DefaultCPUUtilization`.
const DEFAULT_CPU_UTILIZATION: i64 = 80;
/// `MaxPeriodSeconds`.
const MAX_PERIOD_SECONDS: i64 = 1800;
/// `MaxStabilizationWindowSeconds`.
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;
const METRIC_SOURCE_TYPES: &[&str] = &[
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

fn items(list: &Value) -> &[Value] {
    list.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

fn is_set(v: &Value) -> bool {
    !v.is_null()
}

/// The v2 metric source field of a metric type (`Resource` → `resource`).
fn source_field(metric_type: &str) -> &'static str {
    match metric_type {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "ContainerResource" => "containerResource",
        "External" => "external",
        _ => "",
    }
}

// Defaulting (v2).

/// The default CPU metric: 80 % average utilization.
fn default_cpu_metric(utilization: Value) -> Value {
    json!({"type": "Resource", "resource": {"name": "cpu",
        "target": {"type": "Utilization", "averageUtilization": utilization}}})
}

/// `SetDefaults_HorizontalPodAutoscaler` of v2 (minReplicas 1, the CPU metric, the behavior's
/// rules), and the canonical form of the quantities.
pub(crate) fn default_v2(obj: &mut Value) {
    let spec = &mut obj["spec"];
    if !spec.is_object() {
        *spec = json!({});
    }
    if spec["minReplicas"].is_null() {
        spec["minReplicas"] = json!(1);
    }
    if items(&spec["metrics"]).is_empty() {
        spec["metrics"] = json!([default_cpu_metric(json!(DEFAULT_CPU_UTILIZATION))]);
    }
    if let Some(behavior) = spec.get_mut("behavior").filter(|b| b.is_object()) {
        let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        let down = json!({"selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        for (rules, defaults) in [("scaleUp", up), ("scaleDown", down)] {
            let mut merged = defaults;
            if let Some(given) = behavior[rules].as_object() {
                for field in [
                    "selectPolicy",
                    "stabilizationWindowSeconds",
                    "policies",
                    "tolerance",
                ] {
                    if let Some(v) = given.get(field).filter(|v| is_set(v)) {
                        merged[field] = v.clone();
                    }
                }
            }
            behavior[rules] = merged;
        }
    }
    canonical_quantities(obj);
}

/// Every quantity of the spec and status in the encoder's canonical form.
fn canonical_quantities(obj: &mut Value) {
    let canonical = |v: &mut Value| {
        if let Some(q) = Quantity::of_json(v) {
            *v = json!(q.canonical());
        }
    };
    for metric in obj["spec"]["metrics"].as_array_mut().into_iter().flatten() {
        let field = source_field(str_of(metric, "type"));
        if let Some(target) = metric.get_mut(field).and_then(|s| s.get_mut("target")) {
            for q in ["value", "averageValue"] {
                if let Some(v) = target.get_mut(q) {
                    canonical(v);
                }
            }
        }
    }
    let current = obj
        .get_mut("status")
        .and_then(|s| s.get_mut("currentMetrics"));
    for metric in current.and_then(Value::as_array_mut).into_iter().flatten() {
        let field = source_field(str_of(metric, "type"));
        if let Some(current) = metric.get_mut(field).and_then(|s| s.get_mut("current")) {
            for q in ["value", "averageValue"] {
                if let Some(v) = current.get_mut(q) {
                    canonical(v);
                }
            }
        }
    }
}

/// `dropDisabledFields`: the behavior's `tolerance` (HPAConfigurableTolerance is off) unless the
/// stored object already uses one.
pub(crate) fn drop_disabled_fields(new: &mut Value, old: Option<&Value>) {
    let in_use = |hpa: &Value| {
        ["scaleUp", "scaleDown"]
            .iter()
            .any(|r| is_set(&hpa["spec"]["behavior"][*r]["tolerance"]))
    };
    if old.is_some_and(in_use) {
        return;
    }
    let behavior = new.get_mut("spec").and_then(|s| s.get_mut("behavior"));
    for (_, rules) in behavior
        .and_then(Value::as_object_mut)
        .into_iter()
        .flatten()
    {
        if let Some(r) = rules.as_object_mut() {
            r.remove("tolerance");
        }
    }
}

// Validation.

/// `ValidateHorizontalPodAutoscaler` / `...Update` (without the metadata rules), with the
/// strategy's options.
pub(crate) fn hpa_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &new["spec"];
    let old_spec = old.map(|o| &o["spec"]);
    let min_bound = if old_spec.is_some_and(|o| o["minReplicas"] == json!(0)) {
        0
    } else {
        1
    };
    let target = &spec["scaleTargetRef"];
    let mut target_opts = RefOptions {
        allow_empty_group: false,
        allow_invalid: false,
    };
    if old_spec.is_some_and(|o| {
        o["scaleTargetRef"]["apiVersion"] == target["apiVersion"]
            && o["scaleTargetRef"]["kind"] == target["kind"]
    }) {
        target_opts.allow_invalid = true;
    } else if str_of(target, "kind") == "ReplicationController" {
        target_opts.allow_empty_group = true;
    }
    let mut object_opts = RefOptions {
        allow_empty_group: true,
        allow_invalid: false,
    };
    if let Some(o) = old_spec {
        object_opts.allow_invalid = items(&o["metrics"]).iter().any(|m| {
            str_of(m, "type") == "Object"
                && m["object"].is_object()
                && api_version_problem(&m["object"]["describedObject"], object_opts).is_some()
        });
    }
    let mut errs = Vec::new();
    let min = spec["minReplicas"].as_i64();
    if let Some(min) = min
        && min < min_bound
    {
        errs.push(FieldError::invalid_value(
            "spec.minReplicas",
            &json!(min),
            &format!("must be greater than or equal to {min_bound}"),
        ));
    }
    let max = spec["maxReplicas"].as_i64().unwrap_or(0);
    if max < 1 {
        errs.push(FieldError::invalid_value(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than 0",
        ));
    }
    if let Some(min) = min
        && max < min
    {
        errs.push(FieldError::invalid_value(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    errs.extend(reference_rules(target, "spec.scaleTargetRef", target_opts));
    let metrics = items(&spec["metrics"]);
    for (i, metric) in metrics.iter().enumerate() {
        errs.extend(metric_rules(
            metric,
            &format!("spec.metrics[{i}]"),
            object_opts,
        ));
    }
    if min == Some(0)
        && !metrics
            .iter()
            .any(|m| matches!(str_of(m, "type"), "Object" | "External"))
    {
        errs.push(FieldError::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    let behavior = &spec["behavior"];
    if behavior.is_object() {
        for rules in ["scaleUp", "scaleDown"] {
            if behavior[rules].is_object() {
                errs.extend(scaling_rules(
                    &behavior[rules],
                    &format!("spec.behavior.{rules}"),
                ));
            }
        }
    }
    errs
}

/// `ValidateHorizontalPodAutoscalerStatusUpdate`'s replica counts.
pub(crate) fn hpa_status_rules(new: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["currentReplicas", "desiredReplicas"] {
        let value = new["status"][field].as_i64().unwrap_or(0);
        if value < 0 {
            errs.push(FieldError::invalid_value(
                &format!("status.{field}"),
                &json!(value),
                "must be greater than or equal to 0",
            ));
        }
    }
    errs
}

/// `CrossVersionObjectReferenceValidationOptions`.
#[derive(Clone, Copy)]
struct RefOptions {
    allow_empty_group: bool,
    allow_invalid: bool,
}

/// `ValidateAPIVersion`: `schema.ParseGroupVersion`'s error, or the missing group.
fn api_version_problem(reference: &Value, opts: RefOptions) -> Option<String> {
    if opts.allow_invalid {
        return None;
    }
    let api_version = str_of(reference, "apiVersion");
    if api_version.is_empty() || api_version == "/" {
        return (!opts.allow_empty_group).then(|| "apiVersion must specify API group".to_owned());
    }
    let group = match api_version.matches('/').count() {
        0 => "",
        1 => api_version
            .split_once('/')
            .map(|(g, _)| g)
            .unwrap_or_default(),
        _ => return Some(format!("unexpected GroupVersion string: {api_version}")),
    };
    (group.is_empty() && !opts.allow_empty_group)
        .then(|| "apiVersion must specify API group".to_owned())
}

/// `ValidateCrossVersionObjectReference`.
fn reference_rules(reference: &Value, at: &str, opts: RefOptions) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for field in ["kind", "name"] {
        let value = str_of(reference, field);
        if value.is_empty() {
            errs.push(FieldError::required(&format!("{at}.{field}")));
        } else {
            for m in is_valid_path_segment_name(value) {
                errs.push(FieldError::invalid(&format!("{at}.{field}"), value, &m));
            }
        }
    }
    if let Some(problem) = api_version_problem(reference, opts) {
        errs.push(FieldError::invalid(
            &format!("{at}.apiVersion"),
            str_of(reference, "apiVersion"),
            &problem,
        ));
    }
    errs
}

/// `validateScalingRules` and `validateScalingPolicy`.
fn scaling_rules(rules: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(window) = rules["stabilizationWindowSeconds"].as_i64() {
        let path = format!("{at}.stabilizationWindowSeconds");
        if window < 0 {
            errs.push(FieldError::invalid_value(
                &path,
                &json!(window),
                "must be greater than or equal to zero",
            ));
        }
        if window > MAX_STABILIZATION_WINDOW_SECONDS {
            errs.push(FieldError::invalid_value(
                &path,
                &json!(window),
                &format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(select) = rules["selectPolicy"].as_str()
        && !matches!(select, "Max" | "Min" | "Disabled")
    {
        errs.push(unsupported(
            &format!("{at}.selectPolicy"),
            select,
            &["Disabled", "Max", "Min"],
        ));
    }
    let policies = items(&rules["policies"]);
    if policies.is_empty() {
        errs.push(FieldError::required_because(
            &format!("{at}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in policies.iter().enumerate() {
        let path = format!("{at}.policies[{i}]");
        let policy_type = str_of(policy, "type");
        if !matches!(policy_type, "Pods" | "Percent") {
            errs.push(unsupported(
                &format!("{path}.type"),
                policy_type,
                &["Percent", "Pods"],
            ));
        }
        let value = policy["value"].as_i64().unwrap_or(0);
        if value <= 0 {
            errs.push(FieldError::invalid_value(
                &format!("{path}.value"),
                &json!(value),
                "must be greater than zero",
            ));
        }
        let period = policy["periodSeconds"].as_i64().unwrap_or(0);
        if period <= 0 {
            errs.push(FieldError::invalid_value(
                &format!("{path}.periodSeconds"),
                &json!(period),
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            errs.push(FieldError::invalid_value(
                &format!("{path}.periodSeconds"),
                &json!(period),
                &format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
    errs
}

/// `validateMetricSpec`: its type, exactly that source, and the source's rules.
fn metric_rules(metric: &Value, at: &str, opts: RefOptions) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let metric_type = str_of(metric, "type");
    if metric_type.is_empty() {
        errs.push(FieldError::required_because(
            &format!("{at}.type"),
            "must specify a metric source type",
        ));
    }
    if !METRIC_SOURCE_TYPES.contains(&metric_type) {
        errs.push(unsupported(
            &format!("{at}.type"),
            metric_type,
            METRIC_SOURCE_TYPES,
        ));
    }
    let mut present = Vec::new();
    for field in [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ] {
        let source = &metric[field];
        if !source.is_object() {
            continue;
        }
        present.push(field);
        if present.len() > 1 {
            continue;
        }
        let path = format!("{at}.{field}");
        errs.extend(match field {
            "object" => object_source_rules(source, &path, opts),
            "external" => external_source_rules(source, &path),
            "pods" => pods_source_rules(source, &path),
            "resource" => resource_source_rules(source, &path, false),
            _ => resource_source_rules(source, &path, true),
        });
    }
    let expected = source_field(metric_type);
    if expected.is_empty() {
        errs.push(unsupported(
            &format!("{at}.type"),
            metric_type,
            METRIC_SOURCE_TYPES,
        ));
    } else if !metric[expected].is_object() {
        errs.push(FieldError::required_because(
            &format!("{at}.{expected}"),
            "must populate information for the given metric source",
        ));
    }
    if present.len() != 1 {
        // Go ranges over a set (a map): the order of several is random; they are listed in
        // name order here.
        let mut others: Vec<&str> = present.into_iter().filter(|f| *f != expected).collect();
        others.sort_unstable();
        for field in others {
            errs.push(FieldError::forbidden(
                &format!("{at}.{field}"),
                "must populate the given metric source only",
            ));
        }
    }
    errs
}

fn object_source_rules(source: &Value, at: &str, opts: RefOptions) -> Vec<FieldError> {
    let mut errs = reference_rules(
        &source["describedObject"],
        &format!("{at}.describedObject"),
        opts,
    );
    errs.extend(identifier_rules(&source["metric"], &format!("{at}.metric")));
    let target = &source["target"];
    errs.extend(target_rules(target, &format!("{at}.target")));
    if target["value"].is_null() && target["averageValue"].is_null() {
        errs.push(FieldError::required_because(
            &format!("{at}.target.averageValue"),
            "must set either a target value or averageValue",
        ));
    }
    errs
}

fn external_source_rules(source: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = identifier_rules(&source["metric"], &format!("{at}.metric"));
    let target = &source["target"];
    errs.extend(target_rules(target, &format!("{at}.target")));
    match (target["value"].is_null(), target["averageValue"].is_null()) {
        (true, true) => errs.push(FieldError::required_because(
            &format!("{at}.target.averageValue"),
            "must set either a target value for metric or a per-pod target",
        )),
        (false, false) => errs.push(FieldError::forbidden(
            &format!("{at}.target.value"),
            "may not set both a target value for metric and a per-pod target",
        )),
        _ => {}
    }
    errs
}

fn pods_source_rules(source: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = identifier_rules(&source["metric"], &format!("{at}.metric"));
    let target = &source["target"];
    errs.extend(target_rules(target, &format!("{at}.target")));
    if target["averageValue"].is_null() {
        errs.push(FieldError::required_because(
            &format!("{at}.target.averageValue"),
            "must specify a positive target averageValue",
        ));
    }
    errs
}

/// `validateResourceSource` and `validateContainerResourceSource`.
fn resource_source_rules(source: &Value, at: &str, container: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_of(source, "name");
    if name.is_empty() {
        errs.push(FieldError::required_because(
            &format!("{at}.name"),
            "must specify a resource name",
        ));
    } else if container
        && !matches!(name, "cpu" | "memory" | "ephemeral-storage" | "storage")
        && !name.contains('/')
    {
        // `ValidateContainerResourceName`: a standard container resource or a qualified one.
        errs.push(unsupported(
            &format!("{at}.name"),
            name,
            &["cpu", "ephemeral-storage", "memory"],
        ));
    }
    if container {
        let container_name = str_of(source, "container");
        if container_name.is_empty() {
            errs.push(FieldError::required_because(
                &format!("{at}.container"),
                "must specify a container",
            ));
        } else {
            for m in is_dns1123_label(container_name) {
                errs.push(FieldError::invalid(
                    &format!("{at}.container"),
                    container_name,
                    &m,
                ));
            }
        }
    }
    let target = &source["target"];
    errs.extend(target_rules(target, &format!("{at}.target")));
    match (
        target["averageUtilization"].is_null(),
        target["averageValue"].is_null(),
    ) {
        (true, true) => errs.push(FieldError::required_because(
            &format!("{at}.target.averageUtilization"),
            "must set either a target raw value or a target utilization",
        )),
        (false, false) => errs.push(FieldError::forbidden(
            &format!("{at}.target.averageValue"),
            "may not set both a target raw value and a target utilization",
        )),
        _ => {}
    }
    errs
}

/// `validateMetricTarget`.
fn target_rules(target: &Value, at: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let target_type = str_of(target, "type");
    if target_type.is_empty() {
        errs.push(FieldError::required_because(
            &format!("{at}.type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(target_type, "Utilization" | "Value" | "AverageValue") {
        errs.push(FieldError::invalid(
            &format!("{at}.type"),
            target_type,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for field in ["value", "averageValue"] {
        if let Some(q) = Quantity::of_json(&target[field])
            && (q.is_negative() || q.canonical() == "0")
        {
            errs.push(FieldError::invalid_value(
                &format!("{at}.{field}"),
                &json!(q.canonical()),
                "must be positive",
            ));
        }
    }
    if let Some(utilization) = target["averageUtilization"].as_i64()
        && utilization < 1
    {
        errs.push(FieldError::invalid_value(
            &format!("{at}.averageUtilization"),
            &json!(utilization),
            "must be greater than 0",
        ));
    }
    errs
}

/// `validateMetricIdentifier`.
fn identifier_rules(identifier: &Value, at: &str) -> Vec<FieldError> {
    let name = str_of(identifier, "name");
    if name.is_empty() {
        return vec![FieldError::required_because(
            &format!("{at}.name"),
            "must specify a metric name",
        )];
    }
    is_valid_path_segment_name(name)
        .iter()
        .map(|m| FieldError::invalid(&format!("{at}.name"), name, m))
        .collect()
}

// Conversion: Go's `json.Marshal` of the v1 (and internal) structs, fields in declaration order.

/// A JSON object of already encoded values, in the order given, absent ones left out.
fn object(fields: &[(&str, Option<String>)]) -> String {
    let body: Vec<String> = fields
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{}:{v}", marshal(&json!(k)))))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// An encoded value, `None` when absent (`omitempty` of a pointer).
fn opt(v: &Value) -> Option<String> {
    (!v.is_null()).then(|| marshal(v))
}

/// A value always written: `null` when absent.
fn always(v: &Value) -> Option<String> {
    Some(marshal(v))
}

/// A `resource.Quantity` (not a pointer): `"0"` when absent.
fn quantity(v: &Value) -> Option<String> {
    Some(match v {
        Value::Null => "\"0\"".to_owned(),
        v => marshal(v),
    })
}

/// A string without `omitempty`.
fn string(v: &Value) -> Option<String> {
    Some(marshal(&json!(v.as_str().unwrap_or_default())))
}

/// A string with `omitempty`.
fn opt_string(v: &Value) -> Option<String> {
    v.as_str()
        .filter(|s| !s.is_empty())
        .map(|s| marshal(&json!(s)))
}

/// `metav1.LabelSelector`.
fn selector(v: &Value) -> Option<String> {
    if !v.is_object() {
        return None;
    }
    let expressions = v["matchExpressions"].as_array().map(|list| {
        let each: Vec<String> = list
            .iter()
            .map(|e| {
                let values = e["values"]
                    .as_array()
                    .filter(|a| !a.is_empty())
                    .map(|_| marshal(&e["values"]));
                object(&[
                    ("key", string(&e["key"])),
                    ("operator", string(&e["operator"])),
                    ("values", values),
                ])
            })
            .collect();
        format!("[{}]", each.join(","))
    });
    let labels = v["matchLabels"]
        .as_object()
        .filter(|m| !m.is_empty())
        .map(|_| marshal(&v["matchLabels"]));
    Some(object(&[
        ("matchLabels", labels),
        ("matchExpressions", expressions),
    ]))
}

/// v1's `CrossVersionObjectReference`.
fn reference(v: &Value) -> Option<String> {
    Some(object(&[
        ("kind", string(&v["kind"])),
        ("name", string(&v["name"])),
        ("apiVersion", opt_string(&v["apiVersion"])),
    ]))
}

/// A v2 metric spec as v1's `MetricSpec`.
fn v1_metric_spec(m: &Value) -> String {
    let metric_type = str_of(m, "type");
    let source = |field: &str| -> Option<String> {
        let s = &m[field];
        if !s.is_object() {
            return None;
        }
        let target = &s["target"];
        Some(match field {
            "object" => object(&[
                ("target", reference(&s["describedObject"])),
                ("metricName", string(&s["metric"]["name"])),
                ("targetValue", quantity(&target["value"])),
                ("selector", selector(&s["metric"]["selector"])),
                ("averageValue", opt(&target["averageValue"])),
            ]),
            "pods" => object(&[
                ("metricName", string(&s["metric"]["name"])),
                ("targetAverageValue", quantity(&target["averageValue"])),
                ("selector", selector(&s["metric"]["selector"])),
            ]),
            "resource" => object(&[
                ("name", string(&s["name"])),
                (
                    "targetAverageUtilization",
                    opt(&target["averageUtilization"]),
                ),
                ("targetAverageValue", opt(&target["averageValue"])),
            ]),
            "containerResource" => object(&[
                ("name", string(&s["name"])),
                (
                    "targetAverageUtilization",
                    opt(&target["averageUtilization"]),
                ),
                ("targetAverageValue", opt(&target["averageValue"])),
                ("container", string(&s["container"])),
            ]),
            _ => object(&[
                ("metricName", string(&s["metric"]["name"])),
                ("metricSelector", selector(&s["metric"]["selector"])),
                ("targetValue", opt(&target["value"])),
                ("targetAverageValue", opt(&target["averageValue"])),
            ]),
        })
    };
    object(&[
        ("type", string(&json!(metric_type))),
        ("object", source("object")),
        ("pods", source("pods")),
        ("resource", source("resource")),
        ("containerResource", source("containerResource")),
        ("external", source("external")),
    ])
}

/// A v2 metric status as v1's `MetricStatus`.
fn v1_metric_status(m: &Value) -> String {
    let source = |field: &str| -> Option<String> {
        let s = &m[field];
        if !s.is_object() {
            return None;
        }
        let current = &s["current"];
        Some(match field {
            "object" => object(&[
                ("target", reference(&s["describedObject"])),
                ("metricName", string(&s["metric"]["name"])),
                ("currentValue", quantity(&current["value"])),
                ("selector", selector(&s["metric"]["selector"])),
                ("averageValue", opt(&current["averageValue"])),
            ]),
            "pods" => object(&[
                ("metricName", string(&s["metric"]["name"])),
                ("currentAverageValue", quantity(&current["averageValue"])),
                ("selector", selector(&s["metric"]["selector"])),
            ]),
            "resource" => object(&[
                ("name", string(&s["name"])),
                (
                    "currentAverageUtilization",
                    opt(&current["averageUtilization"]),
                ),
                ("currentAverageValue", quantity(&current["averageValue"])),
            ]),
            "containerResource" => object(&[
                ("name", string(&s["name"])),
                (
                    "currentAverageUtilization",
                    opt(&current["averageUtilization"]),
                ),
                ("currentAverageValue", quantity(&current["averageValue"])),
                ("container", string(&s["container"])),
            ]),
            _ => object(&[
                ("metricName", string(&s["metric"]["name"])),
                ("metricSelector", selector(&s["metric"]["selector"])),
                ("currentValue", quantity(&current["value"])),
                ("currentAverageValue", opt(&current["averageValue"])),
            ]),
        })
    };
    object(&[
        ("type", string(&m["type"])),
        ("object", source("object")),
        ("pods", source("pods")),
        ("resource", source("resource")),
        ("containerResource", source("containerResource")),
        ("external", source("external")),
    ])
}

/// The internal `HorizontalPodAutoscalerBehavior` (no json tags: Go's field names).
fn internal_behavior(b: &Value) -> String {
    let rules = |r: &Value| -> Option<String> {
        if !r.is_object() {
            return Some("null".into());
        }
        let policies = r["policies"].as_array().map(|list| {
            let each: Vec<String> = list
                .iter()
                .map(|p| {
                    object(&[
                        ("Type", string(&p["type"])),
                        ("Value", Some(p["value"].as_i64().unwrap_or(0).to_string())),
                        (
                            "PeriodSeconds",
                            Some(p["periodSeconds"].as_i64().unwrap_or(0).to_string()),
                        ),
                    ])
                })
                .collect();
            format!("[{}]", each.join(","))
        });
        Some(object(&[
            (
                "StabilizationWindowSeconds",
                always(&r["stabilizationWindowSeconds"]),
            ),
            ("SelectPolicy", always(&r["selectPolicy"])),
            ("Policies", Some(policies.unwrap_or_else(|| "null".into()))),
            ("Tolerance", always(&r["tolerance"])),
        ]))
    };
    object(&[
        ("ScaleUp", rules(&b["scaleUp"])),
        ("ScaleDown", rules(&b["scaleDown"])),
    ])
}

/// A v2 condition as v1's `HorizontalPodAutoscalerCondition`.
fn v1_condition(c: &Value) -> String {
    object(&[
        ("type", string(&c["type"])),
        ("status", string(&c["status"])),
        ("lastTransitionTime", always(&c["lastTransitionTime"])),
        ("reason", opt_string(&c["reason"])),
        ("message", opt_string(&c["message"])),
    ])
}

/// Whether a v2 metric is the one v1's `targetCPUUtilizationPercentage` says.
fn is_cpu_utilization(m: &Value) -> bool {
    str_of(m, "type") == "Resource"
        && str_of(&m["resource"], "name") == "cpu"
        && is_set(&m["resource"]["target"]["averageUtilization"])
}

/// The annotations without those the conversion round-trips.
fn without_round_trip(annotations: &Value) -> Map<String, Value> {
    let mut out = annotations.as_object().cloned().unwrap_or_default();
    for key in ROUND_TRIP {
        out.remove(*key);
    }
    out
}

/// The stored (v2) object as autoscaling/v1 serves it.
pub(crate) fn to_v1(stored: &Value) -> Value {
    let mut out = stored.clone();
    out["apiVersion"] = json!("autoscaling/v1");
    let spec = &stored["spec"];
    let status = &stored["status"];
    let mut annotations = without_round_trip(&stored["metadata"]["annotations"]);
    let others: Vec<String> = items(&spec["metrics"])
        .iter()
        .filter(|m| !is_cpu_utilization(m))
        .map(v1_metric_spec)
        .collect();
    if !others.is_empty() {
        annotations.insert(METRICS.into(), json!(format!("[{}]", others.join(","))));
    }
    let current = items(&status["currentMetrics"]);
    if !current.is_empty() {
        let each: Vec<String> = current.iter().map(v1_metric_status).collect();
        annotations.insert(
            CURRENT_METRICS.into(),
            json!(format!("[{}]", each.join(","))),
        );
    }
    if spec["behavior"].is_object() {
        annotations.insert(BEHAVIOR.into(), json!(internal_behavior(&spec["behavior"])));
    }
    let conditions = items(&status["conditions"]);
    if !conditions.is_empty() {
        let each: Vec<String> = conditions.iter().map(v1_condition).collect();
        annotations.insert(CONDITIONS.into(), json!(format!("[{}]", each.join(","))));
    }
    if let Some(meta) = out["metadata"].as_object_mut() {
        if annotations.is_empty() {
            meta.remove("annotations");
        } else {
            meta.insert("annotations".into(), Value::Object(annotations));
        }
    }
    let mut v1_spec = json!({"scaleTargetRef": spec["scaleTargetRef"], "maxReplicas": spec["maxReplicas"].as_i64().unwrap_or(0)});
    if is_set(&spec["minReplicas"]) {
        v1_spec["minReplicas"] = spec["minReplicas"].clone();
    }
    if let Some(cpu) = items(&spec["metrics"])
        .iter()
        .find(|m| is_cpu_utilization(m))
    {
        v1_spec["targetCPUUtilizationPercentage"] =
            cpu["resource"]["target"]["averageUtilization"].clone();
    }
    out["spec"] = v1_spec;
    let mut v1_status = json!({
        "currentReplicas": status["currentReplicas"].as_i64().unwrap_or(0),
        "desiredReplicas": status["desiredReplicas"].as_i64().unwrap_or(0),
    });
    for field in ["observedGeneration", "lastScaleTime"] {
        if is_set(&status[field]) {
            v1_status[field] = status[field].clone();
        }
    }
    for m in current {
        if str_of(m, "type") == "Resource" && str_of(&m["resource"], "name") == "cpu" {
            let utilization = &m["resource"]["current"]["averageUtilization"];
            if is_set(utilization) {
                v1_status["currentCPUUtilizationPercentage"] = utilization.clone();
            }
        }
    }
    out["status"] = v1_status;
    out
}

/// A v1 `MetricSpec` (from the annotation) in v2's form.
fn v2_metric_spec(m: &Value) -> Value {
    let metric_type = str_of(m, "type");
    let mut out = json!({"type": metric_type});
    let identifier = |name: &Value, sel: &Value| {
        let mut id = json!({"name": name.as_str().unwrap_or_default()});
        if sel.is_object() {
            id["selector"] = sel.clone();
        }
        id
    };
    let put = |target: &mut Value, field: &str, v: &Value| {
        if is_set(v) {
            target[field] = v.clone();
        }
    };
    if let Some(s) = m["object"].as_object().map(|_| &m["object"]) {
        let mut target =
            json!({"type": if s["averageValue"].is_null() { "Value" } else { "AverageValue" }});
        target["value"] = if s["targetValue"].is_null() {
            json!("0")
        } else {
            s["targetValue"].clone()
        };
        put(&mut target, "averageValue", &s["averageValue"]);
        out["object"] = json!({"describedObject": s["target"], "metric": identifier(&s["metricName"], &s["selector"]), "target": target});
    }
    if let Some(s) = m["pods"].as_object().map(|_| &m["pods"]) {
        let average = if s["targetAverageValue"].is_null() {
            json!("0")
        } else {
            s["targetAverageValue"].clone()
        };
        out["pods"] = json!({"metric": identifier(&s["metricName"], &s["selector"]),
            "target": {"type": "AverageValue", "averageValue": average}});
    }
    for field in ["resource", "containerResource"] {
        if let Some(s) = m[field].as_object().map(|_| &m[field]) {
            let utilization = &s["targetAverageUtilization"];
            let mut target =
                json!({"type": if utilization.is_null() { "AverageValue" } else { "Utilization" }});
            put(&mut target, "averageValue", &s["targetAverageValue"]);
            put(&mut target, "averageUtilization", utilization);
            let mut source = json!({"name": s["name"], "target": target});
            if field == "containerResource" {
                source["container"] = json!(str_of(s, "container"));
            }
            out[field] = source;
        }
    }
    if let Some(s) = m["external"].as_object().map(|_| &m["external"]) {
        let mut target =
            json!({"type": if s["targetValue"].is_null() { "AverageValue" } else { "Value" }});
        put(&mut target, "value", &s["targetValue"]);
        put(&mut target, "averageValue", &s["targetAverageValue"]);
        out["external"] =
            json!({"metric": identifier(&s["metricName"], &s["metricSelector"]), "target": target});
    }
    out
}

/// A v1 `MetricStatus` (from the annotation) in v2's form.
fn v2_metric_status(m: &Value) -> Value {
    let mut out = json!({"type": str_of(m, "type")});
    let identifier = |name: &Value, sel: &Value| {
        let mut id = json!({"name": name.as_str().unwrap_or_default()});
        if sel.is_object() {
            id["selector"] = sel.clone();
        }
        id
    };
    let zero_or = |v: &Value| if v.is_null() { json!("0") } else { v.clone() };
    if let Some(s) = m["object"].as_object().map(|_| &m["object"]) {
        let mut current = json!({"value": zero_or(&s["currentValue"])});
        if is_set(&s["averageValue"]) {
            current["averageValue"] = s["averageValue"].clone();
        }
        out["object"] = json!({"describedObject": s["target"], "metric": identifier(&s["metricName"], &s["selector"]), "current": current});
    }
    if let Some(s) = m["pods"].as_object().map(|_| &m["pods"]) {
        out["pods"] = json!({"metric": identifier(&s["metricName"], &s["selector"]),
            "current": {"averageValue": zero_or(&s["currentAverageValue"])}});
    }
    for field in ["resource", "containerResource"] {
        if let Some(s) = m[field].as_object().map(|_| &m[field]) {
            let mut current = json!({"averageValue": zero_or(&s["currentAverageValue"])});
            if is_set(&s["currentAverageUtilization"]) {
                current["averageUtilization"] = s["currentAverageUtilization"].clone();
            }
            let mut source = json!({"name": s["name"], "current": current});
            if field == "containerResource" {
                source["container"] = json!(str_of(s, "container"));
            }
            out[field] = source;
        }
    }
    if let Some(s) = m["external"].as_object().map(|_| &m["external"]) {
        let mut current = json!({"value": zero_or(&s["currentValue"])});
        if is_set(&s["currentAverageValue"]) {
            current["averageValue"] = s["currentAverageValue"].clone();
        }
        out["external"] = json!({"metric": identifier(&s["metricName"], &s["metricSelector"]), "current": current});
    }
    out
}

/// The internal behavior's JSON (Go field names) in v2's form; `None` when it is empty.
fn v2_behavior(b: &Value) -> Option<Value> {
    let rules = |r: &Value| -> Value {
        if !r.is_object() {
            return Value::Null;
        }
        let mut out = json!({});
        for (from, to) in [
            ("StabilizationWindowSeconds", "stabilizationWindowSeconds"),
            ("SelectPolicy", "selectPolicy"),
            ("Tolerance", "tolerance"),
        ] {
            if is_set(&r[from]) {
                out[to] = r[from].clone();
            }
        }
        if let Some(list) = r["Policies"].as_array() {
            out["policies"] = Value::Array(
                list.iter()
                    .map(|p| json!({"type": p["Type"], "value": p["Value"], "periodSeconds": p["PeriodSeconds"]}))
                    .collect(),
            );
        }
        out
    };
    let up = rules(&b["ScaleUp"]);
    let down = rules(&b["ScaleDown"]);
    if up.is_null() && down.is_null() {
        return None;
    }
    let mut out = json!({});
    if !up.is_null() {
        out["scaleUp"] = up;
    }
    if !down.is_null() {
        out["scaleDown"] = down;
    }
    Some(out)
}

/// A JSON annotation's value parsed, `None` when absent or not what it should be (which the
/// conversion ignores).
fn annotation(annotations: &Value, key: &str) -> Option<Value> {
    annotations[key]
        .as_str()
        .and_then(|text| serde_json::from_str(text).ok())
}

/// An object written through autoscaling/v1, in the stored v2 form: v1's defaulting
/// (`minReplicas` 1), then the conversion (the CPU target, the annotations read back and
/// dropped, the 80 % CPU metric when it says none).
pub(crate) fn from_v1(served: Value) -> Value {
    let mut out = served.clone();
    out["apiVersion"] = json!("autoscaling/v2");
    let spec = &served["spec"];
    let status = &served["status"];
    let annotations = &served["metadata"]["annotations"];
    let mut v2_spec =
        json!({"scaleTargetRef": spec["scaleTargetRef"], "maxReplicas": spec["maxReplicas"]});
    if !spec.is_object() {
        v2_spec = json!({});
    }
    v2_spec["minReplicas"] = if spec["minReplicas"].is_null() {
        json!(1)
    } else {
        spec["minReplicas"].clone()
    };
    let mut metrics: Vec<Value> = Vec::new();
    let cpu = &spec["targetCPUUtilizationPercentage"];
    if let Some(Value::Array(others)) = annotation(annotations, METRICS) {
        metrics.extend(others.iter().map(v2_metric_spec));
    }
    if is_set(cpu) {
        metrics.push(default_cpu_metric(cpu.clone()));
    }
    if metrics.is_empty() {
        metrics.push(default_cpu_metric(json!(DEFAULT_CPU_UTILIZATION)));
    }
    v2_spec["metrics"] = Value::Array(metrics);
    if let Some(behavior) = annotation(annotations, BEHAVIOR)
        .as_ref()
        .and_then(v2_behavior)
    {
        v2_spec["behavior"] = behavior;
    }
    out["spec"] = v2_spec;
    let mut v2_status = json!({});
    if status.is_object() {
        for field in [
            "observedGeneration",
            "lastScaleTime",
            "currentReplicas",
            "desiredReplicas",
        ] {
            if is_set(&status[field]) {
                v2_status[field] = status[field].clone();
            }
        }
        if is_set(&status["currentCPUUtilizationPercentage"]) {
            v2_status["currentMetrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": status["currentCPUUtilizationPercentage"]}}}]);
        }
    }
    if let Some(Value::Array(current)) = annotation(annotations, CURRENT_METRICS) {
        v2_status["currentMetrics"] = Value::Array(current.iter().map(v2_metric_status).collect());
    }
    if let Some(Value::Array(conditions)) = annotation(annotations, CONDITIONS) {
        v2_status["conditions"] = Value::Array(conditions);
    }
    if status.is_object() || v2_status.as_object().is_some_and(|s| !s.is_empty()) {
        out["status"] = v2_status;
    } else if let Some(o) = out.as_object_mut() {
        o.remove("status");
    }
    let kept = without_round_trip(annotations);
    if let Some(meta) = out["metadata"].as_object_mut()
        && meta.contains_key("annotations")
    {
        if kept.is_empty() && annotations.as_object().is_some_and(|a| !a.is_empty()) {
            meta.remove("annotations");
        } else {
            meta.insert("annotations".into(), Value::Object(kept));
        }
    }
    out
}

/// `formatHPAMetrics`: the Targets cell of the stored (v2) object.
pub(crate) fn format_metrics(obj: &Value) -> String {
    let specs = items(&obj["spec"]["metrics"]);
    if specs.is_empty() {
        return "<none>".into();
    }
    let statuses = items(&obj["status"]["currentMetrics"]);
    let q = |v: &Value| {
        Quantity::of_json(v)
            .map(|q| q.canonical())
            .unwrap_or_else(|| "0".into())
    };
    let mut list = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let status = statuses.get(i).unwrap_or(&Value::Null);
        let metric_type = str_of(spec, "type");
        let field = source_field(metric_type);
        let target = &spec[field]["target"];
        let current = &status[field];
        let entry = match metric_type {
            "External" | "Object" => {
                if is_set(&target["averageValue"]) {
                    let now = if current.is_object() && is_set(&current["current"]["averageValue"])
                    {
                        q(&current["current"]["averageValue"])
                    } else {
                        "<unknown>".into()
                    };
                    format!("{now}/{} (avg)", q(&target["averageValue"]))
                } else {
                    let now = if current.is_object() {
                        q(&current["current"]["value"])
                    } else {
                        "<unknown>".into()
                    };
                    format!("{now}/{}", q(&target["value"]))
                }
            }
            "Pods" => {
                let now = if current.is_object() {
                    q(&current["current"]["averageValue"])
                } else {
                    "<unknown>".into()
                };
                format!("{now}/{}", q(&target["averageValue"]))
            }
            "Resource" | "ContainerResource" => {
                let name = str_of(&spec[field], "name");
                if is_set(&target["averageValue"]) {
                    let now = if current.is_object() {
                        q(&current["current"]["averageValue"])
                    } else {
                        "<unknown>".into()
                    };
                    format!("{name}: {now}/{}", q(&target["averageValue"]))
                } else {
                    let now = current["current"]["averageUtilization"]
                        .as_i64()
                        .filter(|_| current.is_object())
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<unknown>".into());
                    let wanted = target["averageUtilization"]
                        .as_i64()
                        .map(|u| format!("{u}%"))
                        .unwrap_or_else(|| "<auto>".into());
                    format!("{name}: {now}/{wanted}")
                }
            }
            _ => "<unknown type>".into(),
        };
        list.push(entry);
    }
    let count = list.len();
    if count > 2 {
        list.truncate(2);
        return format!("{} + {} more...", list.join(", "), count - 2);
    }
    list.join(", ")
}
