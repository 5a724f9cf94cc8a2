//! apps/v1 Deployments: `SetDefaults_Deployment` (`pkg/apis/apps/v1/defaults.go`) with its pod
//! template's defaults ([`super::pod`]), and `ValidateDeployment`, `ValidateDeploymentUpdate`
//! and `ValidateDeploymentStatusUpdate` (`pkg/apis/apps/validation/validation.go`), with
//! upstream's messages; the selector and template rules the other apps/v1 workloads share with
//! them ([`super::workloads`]); and a label selector's string form (`labels.Selector.String()`),
//! which the scale subresource reports.

use serde_json::{Value, json};

use super::FieldError;
use super::names::{is_qualified_name, is_valid_label_value};
use super::pod;

/// `SetObjectDefaults_Deployment`: the Deployment's defaults and its template's, and the value
/// structs the encoder always writes (`status: {}`).
///
/// # Errors
/// The decoder's message for a quantity that does not parse.
pub(crate) fn default_deployment(obj: &mut Value) -> Result<(), String> {
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    let spec = &mut obj["spec"];
    if spec["replicas"].is_null() {
        spec["replicas"] = json!(1);
    }
    if !spec["strategy"].is_object() {
        spec["strategy"] = json!({});
    }
    let strategy = &mut spec["strategy"];
    if strategy["type"].as_str().unwrap_or_default().is_empty() {
        strategy["type"] = json!("RollingUpdate");
    }
    if strategy["type"] == "RollingUpdate" {
        if !strategy["rollingUpdate"].is_object() {
            strategy["rollingUpdate"] = json!({});
        }
        for key in ["maxUnavailable", "maxSurge"] {
            if strategy["rollingUpdate"][key].is_null() {
                strategy["rollingUpdate"][key] = json!("25%");
            }
        }
    }
    if spec["revisionHistoryLimit"].is_null() {
        spec["revisionHistoryLimit"] = json!(10);
    }
    if spec["progressDeadlineSeconds"].is_null() {
        spec["progressDeadlineSeconds"] = json!(600);
    }
    if !spec["template"].is_object() {
        spec["template"] = json!({});
    }
    pod::default_template(&mut spec["template"])?;
    if !obj["status"].is_object() {
        obj["status"] = json!({});
    }
    Ok(())
}

/// `ValidateDeploymentSpec` and, on an update, the immutable selector; and the status's rules
/// (which on a main-resource write check the stored status, unchanged).
pub(crate) fn deployment_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &new["spec"];
    let mut errs = Vec::new();
    non_negative(&mut errs, "spec.replicas", &spec["replicas"]);
    errs.extend(replica_set_template_rules(spec));
    errs.extend(strategy_rules(&spec["strategy"]));
    non_negative(&mut errs, "spec.minReadySeconds", &spec["minReadySeconds"]);
    non_negative(
        &mut errs,
        "spec.revisionHistoryLimit",
        &spec["revisionHistoryLimit"],
    );
    let deadline = &spec["progressDeadlineSeconds"];
    if let Some(d) = deadline.as_i64() {
        non_negative(&mut errs, "spec.progressDeadlineSeconds", deadline);
        if d <= spec["minReadySeconds"].as_i64().unwrap_or(0) {
            errs.push(FieldError::invalid_value(
                "spec.progressDeadlineSeconds",
                deadline,
                "must be greater than minReadySeconds",
            ));
        }
    }
    if let Some(old) = old
        && new["spec"]["selector"] != old["spec"]["selector"]
    {
        errs.push(selector_immutable(&spec["selector"]));
    }
    errs.extend(status_rules(&new["status"], old.map(|o| &o["status"])));
    errs
}

/// `spec.selector: Invalid value: {...}: field is immutable`.
pub(super) fn selector_immutable(selector: &Value) -> FieldError {
    FieldError::invalid_rendered(
        "spec.selector",
        &render_selector(selector),
        "field is immutable",
    )
}

/// The selector's rules of a workload that requires one (`ValidateLabelSelector` strictly, and
/// `empty selector is invalid for <kind>`).
pub(super) fn required_selector_rules(selector: &Value, kind: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if selector.is_null() {
        errs.push(FieldError::required("spec.selector"));
    } else {
        errs.extend(selector_rules(selector, "spec.selector"));
        if entries(&selector["matchLabels"]) + entries(&selector["matchExpressions"]) == 0 {
            errs.push(FieldError::invalid_rendered(
                "spec.selector",
                &render_selector(selector),
                &format!("empty selector is invalid for {kind}"),
            ));
        }
    }
    errs
}

/// `selector does not match template labels`, when the selector is not empty and does not
/// select the template's labels.
pub(super) fn template_match_rule(selector: &Value, template: &Value) -> Option<FieldError> {
    let labels = &template["metadata"]["labels"];
    (!selector_is_empty(selector) && !selector_matches(selector, labels)).then(|| {
        FieldError::invalid_value(
            "spec.template.metadata.labels",
            &if labels.is_object() {
                labels.clone()
            } else {
                json!({})
            },
            "`selector` does not match template `labels`",
        )
    })
}

/// A workload's template's `restartPolicy` (only `Always`) and `activeDeadlineSeconds` (none)
/// rules, the latter's message naming `kind`.
pub(super) fn always_restart_rules(template: &Value, kind: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let restart = template["spec"]["restartPolicy"]
        .as_str()
        .unwrap_or_default();
    if restart != "Always" {
        errs.push(pod::unsupported(
            "spec.template.spec.restartPolicy",
            restart,
            &["Always"],
        ));
    }
    if !template["spec"]["activeDeadlineSeconds"].is_null() {
        errs.push(FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    errs
}

/// The selector and template rules Deployments and ReplicaSets share (`ValidateDeploymentSpec`'s
/// and `ValidateReplicaSetSpec`'s selector, `ValidatePodTemplateSpecForReplicaSet`), a
/// ReplicaSet's empty selector `invalid for deployment` too, as upstream words it.
pub(super) fn replica_set_template_rules(spec: &Value) -> Vec<FieldError> {
    let selector = &spec["selector"];
    let mut errs = required_selector_rules(selector, "deployment");
    if !selector_converts(selector) {
        errs.push(FieldError::invalid_rendered(
            "spec.selector",
            &render_selector(selector),
            "invalid label selector",
        ));
    } else {
        let template = &spec["template"];
        errs.extend(template_match_rule(selector, template));
        errs.extend(pod::template_rules(template, "spec.template"));
        errs.extend(always_restart_rules(template, "ReplicaSet"));
    }
    errs
}

/// `ValidateNonnegativeField`.
pub(super) fn non_negative(errs: &mut Vec<FieldError>, path: &str, value: &Value) {
    if value.as_i64().is_some_and(|v| v < 0) {
        errs.push(FieldError::invalid_value(
            path,
            value,
            "must be greater than or equal to 0",
        ));
    }
}

/// The entries of a JSON map or list (0 for anything else).
fn entries(v: &Value) -> usize {
    match v {
        Value::Object(m) => m.len(),
        Value::Array(a) => a.len(),
        _ => 0,
    }
}

/// `ValidateDeploymentStrategy`.
fn strategy_rules(strategy: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rolling = &strategy["rollingUpdate"];
    match strategy["type"].as_str().unwrap_or_default() {
        "Recreate" => {
            if !rolling.is_null() {
                errs.push(FieldError::forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => {
            if rolling.is_null() {
                errs.push(FieldError::required_because(
                    "spec.strategy.rollingUpdate",
                    "this should be defaulted and never be nil",
                ));
            } else {
                errs.extend(rolling_update_rules(rolling));
            }
        }
        other => {
            // The internal struct, which has no JSON tags.
            let rolling_text = if rolling.is_object() {
                format!(
                    "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
                    rolling["maxUnavailable"], rolling["maxSurge"]
                )
            } else {
                "null".to_owned()
            };
            errs.push(FieldError::not_supported_rendered(
                "spec.strategy",
                &format!(
                    "{{\"Type\":{},\"RollingUpdate\":{rolling_text}}}",
                    Value::String(other.to_owned())
                ),
                "\"Recreate\", \"RollingUpdate\"",
            ));
        }
    }
    errs
}

/// `ValidateRollingUpdateDeployment`.
fn rolling_update_rules(rolling: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let unavailable = &rolling["maxUnavailable"];
    let surge = &rolling["maxSurge"];
    let path = "spec.strategy.rollingUpdate";
    errs.extend(int_or_percent_rules(
        unavailable,
        &format!("{path}.maxUnavailable"),
    ));
    errs.extend(int_or_percent_rules(surge, &format!("{path}.maxSurge")));
    if int_or_percent_value(unavailable) == 0 && int_or_percent_value(surge) == 0 {
        errs.push(FieldError::invalid_value(
            &format!("{path}.maxUnavailable"),
            unavailable,
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    if percent(unavailable).is_some_and(|p| p > 100) {
        errs.push(FieldError::invalid_value(
            &format!("{path}.maxUnavailable"),
            unavailable,
            "must not be greater than 100%",
        ));
    }
    errs
}

/// `ValidatePositiveIntOrPercent`.
pub(super) fn int_or_percent_rules(value: &Value, path: &str) -> Vec<FieldError> {
    match value {
        Value::String(_) if percent(value).is_none() => {
            vec![FieldError::invalid_value(
                path,
                value,
                "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            )]
        }
        Value::Number(_) => {
            let mut errs = Vec::new();
            non_negative(&mut errs, path, value);
            errs
        }
        _ => Vec::new(),
    }
}

/// The number of a valid percent string (`[0-9]+%`).
pub(super) fn percent(value: &Value) -> Option<i64> {
    let digits = value.as_str()?.strip_suffix('%')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `getIntOrPercentValue`.
pub(super) fn int_or_percent_value(value: &Value) -> i64 {
    percent(value).or_else(|| value.as_i64()).unwrap_or(0)
}

/// `ValidateDeploymentStatus` and, on an update, `collisionCount` never decremented.
fn status_rules(status: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let count = |key: &str| status[key].as_i64().unwrap_or(0);
    for key in [
        "observedGeneration",
        "replicas",
        "updatedReplicas",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
        "terminatingReplicas",
        "collisionCount",
    ] {
        non_negative(&mut errs, &format!("status.{key}"), &status[key]);
    }
    let replicas = count("replicas");
    for key in ["updatedReplicas", "readyReplicas", "availableReplicas"] {
        if count(key) > replicas {
            errs.push(FieldError::invalid_value(
                &format!("status.{key}"),
                &json!(count(key)),
                "cannot be greater than status.replicas",
            ));
        }
    }
    if count("availableReplicas") > count("readyReplicas") {
        errs.push(FieldError::invalid_value(
            "status.availableReplicas",
            &json!(count("availableReplicas")),
            "cannot be greater than readyReplicas",
        ));
    }
    errs.extend(collision_count_rule(status, old));
    errs
}

/// A workload status's `collisionCount` is never decremented (`old`: the stored status).
pub(crate) fn collision_count_rule(status: &Value, old: Option<&Value>) -> Option<FieldError> {
    let before = old?["collisionCount"].as_i64()?;
    let now = status["collisionCount"].as_i64();
    now.is_none_or(|now| now < before).then(|| {
        FieldError::invalid_value(
            "status.collisionCount",
            &json!(now.unwrap_or(0)),
            "cannot be decremented",
        )
    })
}

// Label selectors (`metav1.LabelSelector`).

/// `ValidateLabelSelector` (invalid label values not allowed).
pub(super) fn selector_rules(selector: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let labels_path = format!("{path}.matchLabels");
    for (key, value) in selector["matchLabels"].as_object().into_iter().flatten() {
        for m in is_qualified_name(key) {
            errs.push(FieldError::invalid(&labels_path, key, &m));
        }
        let value = value.as_str().unwrap_or_default();
        for m in is_valid_label_value(value) {
            errs.push(FieldError::invalid(&labels_path, value, &m));
        }
    }
    let exprs = selector["matchExpressions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, expr) in exprs.iter().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        let values = entries(&expr["values"]);
        match expr["operator"].as_str().unwrap_or_default() {
            "In" | "NotIn" => {
                if values == 0 {
                    errs.push(FieldError::required_because(
                        &format!("{at}.values"),
                        "must be specified when `operator` is 'In' or 'NotIn'",
                    ));
                }
            }
            "Exists" | "DoesNotExist" => {
                if values > 0 {
                    errs.push(FieldError::forbidden(
                        &format!("{at}.values"),
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    ));
                }
            }
            other => errs.push(FieldError::invalid(
                &format!("{at}.operator"),
                other,
                "not a valid selector operator",
            )),
        }
        let key = expr["key"].as_str().unwrap_or_default();
        for m in is_qualified_name(key) {
            errs.push(FieldError::invalid(&format!("{at}.key"), key, &m));
        }
        for v in expr["values"].as_array().into_iter().flatten() {
            let v = v.as_str().unwrap_or_default();
            for m in is_valid_label_value(v) {
                errs.push(FieldError::invalid(&format!("{at}.values"), v, &m));
            }
        }
    }
    errs
}

/// Whether `LabelSelectorAsSelector` accepts the selector (a missing one is the empty
/// selector's `Nothing`).
pub(crate) fn selector_converts(selector: &Value) -> bool {
    let labels_ok = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| {
            is_qualified_name(k).is_empty()
                && is_valid_label_value(v.as_str().unwrap_or_default()).is_empty()
        });
    let exprs_ok = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|e| {
            let values = entries(&e["values"]);
            let operator_ok = match e["operator"].as_str().unwrap_or_default() {
                "In" | "NotIn" => values > 0,
                "Exists" | "DoesNotExist" => values == 0,
                _ => false,
            };
            operator_ok
                && is_qualified_name(e["key"].as_str().unwrap_or_default()).is_empty()
                && e["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .all(|v| is_valid_label_value(v.as_str().unwrap_or_default()).is_empty())
        });
    labels_ok && exprs_ok
}

/// Whether the selector selects everything (no requirement).
fn selector_is_empty(selector: &Value) -> bool {
    // A missing selector converts to `labels.Nothing()`, which is not empty.
    !selector.is_null()
        && entries(&selector["matchLabels"]) + entries(&selector["matchExpressions"]) == 0
}

/// Whether `labels` satisfy every requirement of `selector`.
pub(crate) fn selector_matches(selector: &Value, labels: &Value) -> bool {
    if selector.is_null() {
        return false;
    }
    let label = |key: &str| labels[key].as_str();
    let labels_match = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k) == v.as_str());
    let exprs_match = selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|e| {
            let key = e["key"].as_str().unwrap_or_default();
            let in_values = |v: &str| {
                e["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|x| x.as_str() == Some(v))
            };
            match e["operator"].as_str().unwrap_or_default() {
                "In" => label(key).is_some_and(in_values),
                "NotIn" => !label(key).is_some_and(in_values),
                "Exists" => label(key).is_some(),
                _ => label(key).is_none(),
            }
        });
    labels_match && exprs_match
}

/// A `LabelSelector` as `field.Error` renders it: JSON in the Go type's field order.
pub(super) fn render_selector(selector: &Value) -> String {
    if !selector.is_object() {
        return "null".to_owned();
    }
    let mut parts = Vec::new();
    if let Some(labels) = selector["matchLabels"]
        .as_object()
        .filter(|m| !m.is_empty())
    {
        parts.push(format!("\"matchLabels\":{}", Value::Object(labels.clone())));
    }
    if let Some(exprs) = selector["matchExpressions"]
        .as_array()
        .filter(|a| !a.is_empty())
    {
        let rendered: Vec<String> = exprs
            .iter()
            .map(|e| {
                let mut fields = vec![
                    format!("\"key\":{}", e["key"]),
                    format!("\"operator\":{}", e["operator"]),
                ];
                if let Some(values) = e["values"].as_array().filter(|v| !v.is_empty()) {
                    fields.push(format!("\"values\":{}", Value::Array(values.clone())));
                }
                format!("{{{}}}", fields.join(","))
            })
            .collect();
        parts.push(format!("\"matchExpressions\":[{}]", rendered.join(",")));
    }
    format!("{{{}}}", parts.join(","))
}

/// `metav1.LabelSelectorAsSelector(selector).String()`: the requirements sorted by key,
/// `a=b`, `a in (x,y)`, `a notin (x,y)`, `a`, `!a`, joined by commas.
pub(crate) fn selector_string(selector: &Value) -> String {
    let mut requirements: Vec<(String, String)> = Vec::new();
    for (k, v) in selector["matchLabels"].as_object().into_iter().flatten() {
        requirements.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
    }
    for e in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = e["key"].as_str().unwrap_or_default().to_owned();
        let mut values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        values.dedup();
        let text = match e["operator"].as_str().unwrap_or_default() {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.clone(),
            _ => format!("!{key}"),
        };
        requirements.push((key, text));
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    requirements
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(",")
}

/// The warning `WarningsOnCreate` gives a Deployment whose name is not a DNS label.
pub(crate) fn name_warning(name: &str) -> Option<String> {
    let problems = crate::validation::names::is_dns1123_label(name);
    if problems.is_empty() {
        return None;
    }
    Some(format!(
        "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [{}]",
        problems.join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_print_as_labels_selector_strings() {
        let selector = json!({"matchLabels": {"b": "1", "a": "2"}, "matchExpressions": [
            {"key": "tier", "operator": "NotIn", "values": ["db", "cache"]},
            {"key": "x", "operator": "DoesNotExist"}]});
        assert_eq!(
            selector_string(&selector),
            "a=2,b=1,tier notin (cache,db),!x"
        );
    }

    #[test]
    fn a_defaulted_deployment_is_valid_and_its_selector_immutable() {
        let mut d = json!({"metadata": {"name": "d"}, "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}},
                         "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}});
        default_deployment(&mut d).unwrap();
        assert_eq!(d["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%");
        assert!(deployment_rules(&d, None).is_empty());
        let mut moved = d.clone();
        moved["spec"]["selector"]["matchLabels"]["app"] = json!("e");
        moved["spec"]["template"]["metadata"]["labels"]["app"] = json!("e");
        let errs = deployment_rules(&moved, Some(&d));
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"e\"}}: field is immutable"
        );
    }
}
