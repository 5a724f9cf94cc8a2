//! core/v1 ResourceQuotas' and LimitRanges' defaulting and rules, ported from
//! `pkg/apis/core/v1/defaults.go` (`SetDefaults_LimitRangeItem`, the generated
//! `SetObjectDefaults_ResourceQuota`/`_LimitRange`), `pkg/apis/core/validation/validation.go`
//! (`ValidateResourceQuota`, `ValidateResourceQuotaUpdate`, `ValidateResourceQuotaStatusUpdate`,
//! `ValidateLimitRange`) and the resource-name helpers of `pkg/apis/core/helper/helpers.go`.
//!
//! Map entries are checked in key order (Go's map order is random, so any order is faithful).

use serde_json::{Map, Value, json};

use super::FieldError;
use super::field::key;
use super::names::is_qualified_name;
use super::pod::default_resource_list;
use super::quantity::Quantity;

/// `apimachineryvalidation.IsNegativeErrorMsg`.
const NEGATIVE: &str = "must be greater than or equal to 0";
/// `isInvalidQuotaResource`.
const INVALID_QUOTA_RESOURCE: &str = "must be a standard resource for quota";
/// `fieldImmutableErrorMsg`.
const IMMUTABLE: &str = "field is immutable";

/// `core.ResourceHugePagesPrefix` and the quota's `requests.hugepages-` prefix.
const HUGE_PAGES: &str = "hugepages-";
const REQUESTS_HUGE_PAGES: &str = "requests.hugepages-";

/// `standardQuotaResources`.
const STANDARD_QUOTA_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

/// `standardResources`.
const STANDARD_RESOURCES: &[&str] = &[
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// `integerResources`.
const INTEGER_RESOURCES: &[&str] = &[
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// `standardResourceQuotaScopes` and `CrossNamespacePodAffinity`.
const SCOPES: &[&str] = &[
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "VolumeAttributesClass",
    "CrossNamespacePodAffinity",
];

/// `podComputeQuotaResources`.
const POD_COMPUTE: &[&str] = &[
    "cpu",
    "memory",
    "limits.cpu",
    "limits.memory",
    "requests.cpu",
    "requests.memory",
];

/// The scope pairs that may not be used together.
const CONFLICTING_SCOPES: [[&str; 2]; 2] = [
    ["BestEffort", "NotBestEffort"],
    ["Terminating", "NotTerminating"],
];

/// `IsQuotaHugePageResourceName`.
fn is_quota_huge_pages(name: &str) -> bool {
    name.starts_with(HUGE_PAGES) || name.starts_with(REQUESTS_HUGE_PAGES)
}

/// `IsStandardQuotaResourceName`.
fn is_standard_quota_resource(name: &str) -> bool {
    STANDARD_QUOTA_RESOURCES.contains(&name) || is_quota_huge_pages(name)
}

/// `IsNativeResource`: unqualified, or in the `kubernetes.io/` namespace.
fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `IsExtendedResourceName`.
fn is_extended(name: &str) -> bool {
    !is_native(name)
        && !name.starts_with("requests.")
        && is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// `IsIntegerResourceName`.
fn is_integer_resource(name: &str) -> bool {
    INTEGER_RESOURCES.contains(&name) || is_extended(name)
}

/// `IsResourceQuotaScopeValidForResource`.
fn scope_valid_for(scope: &str, resource: &str) -> bool {
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => resource == "pods" || POD_COMPUTE.contains(&resource),
        "BestEffort" => resource == "pods",
        "VolumeAttributesClass" => {
            resource == "persistentvolumeclaims" || resource == "requests.storage"
        }
        _ => true,
    }
}

/// `validateResourceName`: a qualified name, and a standard one unless it has a prefix.
fn resource_name_rules(name: &str, path: &str) -> Vec<FieldError> {
    let errs: Vec<FieldError> = is_qualified_name(name)
        .iter()
        .map(|m| FieldError::invalid(path, name, m))
        .collect();
    if !errs.is_empty() {
        return errs;
    }
    let standard = STANDARD_RESOURCES.contains(&name) || is_quota_huge_pages(name);
    if !name.contains('/') && !standard {
        return vec![FieldError::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified",
        )];
    }
    Vec::new()
}

/// `ValidateResourceQuotaResourceName`.
fn quota_resource_name_rules(name: &str, path: &str) -> Vec<FieldError> {
    let mut errs = resource_name_rules(name, path);
    if !name.contains('/') && !is_standard_quota_resource(name) {
        errs.push(FieldError::invalid(path, name, INVALID_QUOTA_RESOURCE));
    }
    errs
}

/// `ValidateResourceQuantityValue`: not negative; whole for integer resources (a value that is
/// not a quantity never gets here: decoding refused it).
fn quantity_value_rules(name: &str, value: &Value, path: &str) -> Vec<FieldError> {
    let Some(q) = Quantity::of_json(value) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    if q.is_negative() {
        errs.push(FieldError::invalid(path, &q.canonical(), NEGATIVE));
    }
    if is_integer_resource(name) && q.milli_value() % 1000 != 0 {
        errs.push(FieldError::invalid(
            path,
            &q.canonical(),
            "must be an integer",
        ));
    }
    errs
}

/// The names' and quantities' rules of the quota resource list `list` at `path`.
fn quota_list_rules(list: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (name, value) in list.as_object().into_iter().flatten() {
        let at = key(path, name);
        errs.extend(quota_resource_name_rules(name, &at));
        errs.extend(quantity_value_rules(name, value, &at));
    }
    errs
}

fn strings(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// The hard resources' names, sorted (`sets.List(hardLimits)`).
fn hard_names(spec: &Value) -> Vec<&str> {
    spec["hard"]
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// Whether `scopes` holds both scopes of a conflicting pair.
fn conflicting(scopes: &[&str]) -> usize {
    CONFLICTING_SCOPES
        .iter()
        .filter(|pair| pair.iter().all(|s| scopes.contains(s)))
        .count()
}

/// `validateResourceQuotaScopes`.
fn scopes_rules(spec: &Value) -> Vec<FieldError> {
    let scopes = strings(&spec["scopes"]);
    if scopes.is_empty() {
        return Vec::new();
    }
    let rendered = spec["scopes"].clone();
    let mut errs = Vec::new();
    for scope in &scopes {
        if !SCOPES.contains(scope) {
            errs.push(FieldError::invalid_value(
                "spec.scopes",
                &rendered,
                "unsupported scope",
            ));
        }
        for resource in hard_names(spec) {
            if is_standard_quota_resource(resource) && !scope_valid_for(scope, resource) {
                errs.push(FieldError::invalid_value(
                    "spec.scopes",
                    &rendered,
                    "unsupported scope applied to resource",
                ));
            }
        }
    }
    for _ in 0..conflicting(&scopes) {
        errs.push(FieldError::invalid_value(
            "spec.scopes",
            &rendered,
            "conflicting scopes",
        ));
    }
    errs
}

/// The internal `core.ScopeSelector` as `field.Error` renders it: JSON with the Go field names
/// (the internal type has no JSON tags).
fn render_scope_selector(selector: &Value) -> String {
    let exprs: Vec<String> = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let values = match e["values"].as_array() {
                Some(values) => Value::Array(values.clone()).to_string(),
                None => "null".to_owned(),
            };
            format!(
                "{{\"ScopeName\":{},\"Operator\":{},\"Values\":{values}}}",
                json!(e["scopeName"].as_str().unwrap_or_default()),
                json!(e["operator"].as_str().unwrap_or_default())
            )
        })
        .collect();
    let list = if selector["matchExpressions"].is_array() {
        format!("[{}]", exprs.join(","))
    } else {
        "null".to_owned()
    };
    format!("{{\"MatchExpressions\":{list}}}")
}

/// `validateScopeSelector` and `validateScopedResourceSelectorRequirement`.
fn scope_selector_rules(spec: &Value) -> Vec<FieldError> {
    let selector = &spec["scopeSelector"];
    if !selector.is_object() {
        return Vec::new();
    }
    let path = "spec.scopeSelector.matchExpressions";
    let mut errs = Vec::new();
    let mut names = Vec::new();
    for req in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let scope = req["scopeName"].as_str().unwrap_or_default();
        let operator = req["operator"].as_str().unwrap_or_default();
        let values = req["values"].as_array().map(Vec::len).unwrap_or(0);
        if !SCOPES.contains(&scope) {
            errs.push(FieldError::invalid(
                &format!("{path}.scopeName"),
                scope,
                "unsupported scope",
            ));
        }
        for resource in hard_names(spec) {
            if is_standard_quota_resource(resource) && !scope_valid_for(scope, resource) {
                errs.push(FieldError::invalid_rendered(
                    path,
                    &render_scope_selector(selector),
                    "unsupported scope applied to resource",
                ));
            }
        }
        if matches!(
            scope,
            "BestEffort"
                | "NotBestEffort"
                | "Terminating"
                | "NotTerminating"
                | "CrossNamespacePodAffinity"
        ) && operator != "Exists"
        {
            errs.push(FieldError::invalid(
                &format!("{path}.operator"),
                operator,
                "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ));
        }
        match operator {
            "In" | "NotIn" if values == 0 => errs.push(FieldError::required_because(
                &format!("{path}.values"),
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            )),
            "In" | "NotIn" => {}
            "Exists" | "DoesNotExist" if values != 0 => errs.push(FieldError::invalid_value(
                &format!("{path}.values"),
                &req["values"],
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            )),
            "Exists" | "DoesNotExist" => {}
            other => errs.push(FieldError::invalid(
                &format!("{path}.operator"),
                other,
                "not a valid selector operator",
            )),
        }
        names.push(scope);
    }
    for _ in 0..conflicting(&names) {
        // Upstream reports the spec's scopes here, not the selector's.
        let scopes = match spec["scopes"].as_array() {
            Some(s) => Value::Array(s.clone()),
            None => Value::Null,
        };
        errs.push(FieldError::invalid_value(
            path,
            &scopes,
            "conflicting scopes",
        ));
    }
    errs
}

/// `ValidateResourceQuotaSpec`.
fn quota_spec_rules(spec: &Value) -> Vec<FieldError> {
    let mut errs = quota_list_rules(&spec["hard"], "spec.hard");
    errs.extend(scopes_rules(spec));
    errs.extend(scope_selector_rules(spec));
    errs
}

/// `ValidateResourceQuotaStatus` of `status` (its hard and used lists).
pub(crate) fn quota_status_rules(status: &Value) -> Vec<FieldError> {
    let mut errs = quota_list_rules(&status["hard"], "status.hard");
    errs.extend(quota_list_rules(&status["used"], "status.used"));
    errs
}

/// `SetObjectDefaults_ResourceQuota`: every quantity rounded up to milli, canonical.
///
/// # Errors
/// The decoder's message for a value that is not a quantity.
pub(crate) fn default_resource_quota(obj: &mut Value) -> Result<(), String> {
    for pointer in ["/spec/hard", "/status/hard", "/status/used"] {
        if let Some(list) = obj.pointer_mut(pointer).and_then(Value::as_object_mut) {
            default_resource_list(list)?;
        }
    }
    Ok(())
}

/// `ValidateResourceQuota` (a create: the spec; its status was cleared) or
/// `ValidateResourceQuotaUpdate` (the spec, and scopes that may not change).
pub(crate) fn resource_quota_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = quota_spec_rules(&new["spec"]);
    // A create's status is cleared before its validation (`PrepareForCreate`).
    if let Some(old) = old {
        let set = |v: &Value| {
            let mut s: Vec<String> = strings(&v["spec"]["scopes"])
                .into_iter()
                .map(str::to_owned)
                .collect();
            s.sort();
            s.dedup();
            s
        };
        if set(new) != set(old) {
            let scopes = match new["spec"]["scopes"].as_array() {
                Some(s) => Value::Array(s.clone()),
                None => Value::Null,
            };
            errs.push(FieldError::invalid_value("spec.scopes", &scopes, IMMUTABLE));
        }
    }
    errs
}

// LimitRanges.

/// `standardContainerResources` (and huge pages).
fn is_standard_container_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with(HUGE_PAGES)
}

/// `validateContainerResourceName`.
fn container_resource_name_rules(name: &str, path: &str) -> Vec<FieldError> {
    let mut errs = resource_name_rules(name, path);
    if !name.contains('/') {
        if !is_standard_container_resource(name) {
            errs.push(FieldError::invalid(
                path,
                name,
                "must be a standard resource for containers",
            ));
        }
    } else if !is_native(name) && !is_extended(name) {
        errs.push(FieldError::invalid(
            path,
            name,
            "doesn't follow extended resource name standard",
        ));
    }
    errs
}

/// `validateLimitRangeResourceName`.
fn limit_resource_name_rules(limit_type: &str, name: &str, path: &str) -> Vec<FieldError> {
    match limit_type {
        "Pod" | "Container" => container_resource_name_rules(name, path),
        _ => resource_name_rules(name, path),
    }
}

/// `validateLimitRangeTypeName`.
fn limit_type_rules(value: &str, path: &str) -> Vec<FieldError> {
    let errs: Vec<FieldError> = is_qualified_name(value)
        .iter()
        .map(|m| FieldError::invalid(path, value, m))
        .collect();
    if !errs.is_empty() {
        return errs;
    }
    if !value.contains('/') && !matches!(value, "Pod" | "Container" | "PersistentVolumeClaim") {
        return vec![FieldError::invalid(
            path,
            value,
            "must be a standard limit type or fully qualified",
        )];
    }
    Vec::new()
}

/// `SetObjectDefaults_LimitRange`: a container limit's `default` from `max`, its
/// `defaultRequest` from `default` then `min` (`SetDefaults_LimitRangeItem`); every quantity
/// rounded up to milli, canonical.
///
/// # Errors
/// The decoder's message for a value that is not a quantity.
pub(crate) fn default_limit_range(obj: &mut Value) -> Result<(), String> {
    let Some(limits) = obj
        .pointer_mut("/spec/limits")
        .and_then(Value::as_array_mut)
    else {
        return Ok(());
    };
    for limit in limits.iter_mut().filter(|l| l.is_object()) {
        if limit["type"] == "Container" {
            let from = |limit: &Value, field: &str| -> Map<String, Value> {
                limit[field].as_object().cloned().unwrap_or_default()
            };
            let mut default = from(limit, "default");
            let mut request = from(limit, "defaultRequest");
            for (k, v) in from(limit, "max") {
                default.entry(k).or_insert(v);
            }
            for (k, v) in &default {
                request.entry(k.clone()).or_insert_with(|| v.clone());
            }
            for (k, v) in from(limit, "min") {
                request.entry(k).or_insert(v);
            }
            // Empty maps are omitted by the encoder.
            if !default.is_empty() {
                limit["default"] = Value::Object(default);
            }
            if !request.is_empty() {
                limit["defaultRequest"] = Value::Object(request);
            }
        }
        for field in [
            "max",
            "min",
            "default",
            "defaultRequest",
            "maxLimitRequestRatio",
        ] {
            if let Some(list) = limit.get_mut(field).and_then(Value::as_object_mut) {
                default_resource_list(list)?;
            }
        }
    }
    Ok(())
}

/// The quantities of a limit's list `field`, by resource name.
fn limit_list(limit: &Value, field: &str) -> Vec<(String, Quantity)> {
    limit[field]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), Quantity::of_json(v)?)))
        .collect()
}

fn find<'a>(list: &'a [(String, Quantity)], name: &str) -> Option<&'a Quantity> {
    list.iter().find(|(k, _)| k == name).map(|(_, q)| q)
}

/// `ValidateLimitRange`'s rules of the limits (its metadata is the registry's).
pub(crate) fn limit_range_rules(obj: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen_types: Vec<&str> = Vec::new();
    let limits = obj["spec"]["limits"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, limit) in limits.iter().enumerate() {
        let at = format!("spec.limits[{i}]");
        let limit_type = limit["type"].as_str().unwrap_or_default();
        errs.extend(limit_type_rules(limit_type, &format!("{at}.type")));
        if seen_types.contains(&limit_type) {
            errs.push(FieldError::duplicate(
                &format!("{at}.type"),
                &json!(limit_type),
            ));
        }
        seen_types.push(limit_type);
        let mut keys: Vec<String> = Vec::new();
        let mut names = |field: &str, errs: &mut Vec<FieldError>| {
            for (k, _) in limit_list(limit, field) {
                errs.extend(limit_resource_name_rules(
                    limit_type,
                    &k,
                    &key(&format!("{at}.{field}"), &k),
                ));
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        };
        names("max", &mut errs);
        names("min", &mut errs);
        if limit_type == "Pod" {
            for field in ["default", "defaultRequest"] {
                if limit[field].as_object().is_some_and(|m| !m.is_empty()) {
                    errs.push(FieldError::forbidden(
                        &format!("{at}.{field}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        } else {
            names("default", &mut errs);
            names("defaultRequest", &mut errs);
        }
        if limit_type == "PersistentVolumeClaim"
            && limit["min"].get("storage").is_none()
            && limit["max"].get("storage").is_none()
        {
            errs.push(FieldError::required_because(
                &format!("{at}.limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        names("maxLimitRequestRatio", &mut errs);
        keys.sort();
        let max = limit_list(limit, "max");
        let min = limit_list(limit, "min");
        let (default, request) = if limit_type == "Pod" {
            (Vec::new(), Vec::new())
        } else {
            (
                limit_list(limit, "default"),
                limit_list(limit, "defaultRequest"),
            )
        };
        let ratio = limit_list(limit, "maxLimitRequestRatio");
        for k in &keys {
            errs.extend(bound_rules(
                &at,
                k,
                find(&min, k),
                find(&max, k),
                find(&default, k),
                find(&request, k),
                find(&ratio, k),
            ));
        }
    }
    errs
}

/// The min ≤ defaultRequest ≤ default ≤ max rules of one resource `k` of the limit at `at`,
/// and its ratio's.
fn bound_rules(
    at: &str,
    k: &str,
    min: Option<&Quantity>,
    max: Option<&Quantity>,
    default: Option<&Quantity>,
    request: Option<&Quantity>,
    ratio: Option<&Quantity>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = |field: &str| key(&format!("{at}.{field}"), k);
    let s = |q: &Quantity| q.canonical();
    // Upstream's checks in its order: (the field reported, its value shown, the smaller bound
    // and the larger, each with its name in the message); each pair out of order is an error.
    let orders = [
        ("min", min, ("min value", min), ("max value", max)),
        (
            "defaultRequest",
            request,
            ("min value", min),
            ("default request value", request),
        ),
        (
            "defaultRequest",
            request,
            ("default request value", request),
            ("max value", max),
        ),
        (
            "defaultRequest",
            request,
            ("default request value", request),
            ("default limit value", default),
        ),
        (
            "default",
            min,
            ("min value", min),
            ("default value", default),
        ),
        (
            "default",
            max,
            ("default value", default),
            ("max value", max),
        ),
    ];
    for (field, shown, (low_name, low), (high_name, high)) in orders {
        if let (Some(shown), Some(low), Some(high)) = (shown, low, high)
            && low > high
        {
            errs.push(FieldError::invalid(
                &path(field),
                &s(shown),
                &format!(
                    "{low_name} {} is greater than {high_name} {}",
                    s(low),
                    s(high)
                ),
            ));
        }
    }
    if let Some(ratio) = ratio {
        if ratio.milli_value() < 1000 {
            errs.push(FieldError::invalid(
                &path("maxLimitRequestRatio"),
                &s(ratio),
                &format!("ratio {} is less than 1", s(ratio)),
            ));
        }
        if let (Some(min), Some(max)) = (min, max) {
            let limit = max.milli_value() as f64 / min.milli_value() as f64;
            if ratio.milli_value() as f64 / 1000.0 > limit {
                errs.push(FieldError::invalid(
                    &path("maxLimitRequestRatio"),
                    &s(ratio),
                    &format!("ratio {} is greater than max/min = {limit:.6}", s(ratio)),
                ));
            }
        }
    }
    let overcommit = is_native(k) && !k.starts_with(HUGE_PAGES);
    if let (Some(default), Some(request)) = (default, request)
        && !overcommit
        && default != request
    {
        errs.push(FieldError::invalid(
            &path("defaultRequest"),
            &s(request),
            &format!(
                "default value {} must equal to defaultRequest value {} in {k}",
                s(default),
                s(request)
            ),
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_container_limit_defaults_its_default_and_request_from_max_and_min() {
        let mut lr = json!({"spec": {"limits": [{"type": "Container",
            "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "0.1"}}]}});
        default_limit_range(&mut lr).unwrap();
        assert_eq!(
            lr["spec"]["limits"][0],
            json!({"type": "Container", "max": {"cpu": "2", "memory": "1Gi"},
                "min": {"cpu": "100m"}, "default": {"cpu": "2", "memory": "1Gi"},
                "defaultRequest": {"cpu": "2", "memory": "1Gi"}})
        );
    }

    #[test]
    fn quota_names_and_quantities_are_checked() {
        let errs = quota_list_rules(&json!({"pods": "1500m", "foo": "1"}), "spec.hard");
        let text: Vec<String> = errs.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "spec.hard[foo]: Invalid value: \"foo\": must be a standard resource type or fully qualified",
                "spec.hard[foo]: Invalid value: \"foo\": must be a standard resource for quota",
                "spec.hard[pods]: Invalid value: \"1500m\": must be an integer",
            ]
        );
    }
}
