//! policy/v1 PodDisruptionBudgets' rules, ported from `pkg/apis/policy/validation/validation.go`
//! (`ValidatePodDisruptionBudget`, `ValidatePodDisruptionBudgetStatusUpdate`) and the
//! strategy's choice of selector options (`pkg/registry/policy/poddisruptionbudget/strategy.go`).
//! The v1 kind has no defaults of its own.

use serde_json::Value;

use super::FieldError;
use super::apps::{int_or_percent_rules, non_negative, percent, render_selector, selector_rules};
use super::names::{is_qualified_name, regex_error};
use super::pod::unsupported;

/// `supportedUnhealthyPodEvictionPolicies`, sorted.
const EVICTION_POLICIES: &[&str] = &["AlwaysAllow", "IfHealthyBudget"];

/// An `*intstr.IntOrString` as JSON renders it (`null` when absent).
fn int_or_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        other => other.to_string(),
    }
}

/// The internal `policy.PodDisruptionBudgetSpec` as `field.Error` renders it: JSON with the Go
/// field names (the internal type has no JSON tags).
fn render_spec(spec: &Value) -> String {
    let selector = if spec["selector"].is_object() {
        render_selector(&spec["selector"])
    } else {
        "null".to_owned()
    };
    let policy = match spec["unhealthyPodEvictionPolicy"].as_str() {
        Some(p) => Value::String(p.to_owned()).to_string(),
        None => "null".to_owned(),
    };
    format!(
        "{{\"MinAvailable\":{},\"Selector\":{selector},\"MaxUnavailable\":{},\"UnhealthyPodEvictionPolicy\":{policy}}}",
        int_or_string(&spec["minAvailable"]),
        int_or_string(&spec["maxUnavailable"]),
    )
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` of `value` at `path`.
fn bound_rules(value: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = int_or_percent_rules(value, path);
    if percent(value).is_some_and(|p| p > 100) {
        errs.push(FieldError::invalid_value(
            path,
            value,
            "must not be greater than 100%",
        ));
    }
    errs
}

/// `ValidatePodDisruptionBudgetSpec` of `new`; an update keeps accepting invalid label values
/// in a selector that already had them (`hasInvalidLabelValueInLabelSelector` of `old`).
pub(crate) fn pdb_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &new["spec"];
    let mut errs = Vec::new();
    let min = &spec["minAvailable"];
    let max = &spec["maxUnavailable"];
    if !min.is_null() && !max.is_null() {
        errs.push(FieldError::invalid_rendered(
            "spec",
            &render_spec(spec),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    if !min.is_null() {
        errs.extend(bound_rules(min, "spec.minAvailable"));
    }
    if !max.is_null() {
        errs.extend(bound_rules(max, "spec.maxUnavailable"));
    }
    let allow_invalid_values = old.is_some_and(|o| {
        o["spec"]["selector"].is_object()
            && !selector_rules(&o["spec"]["selector"], "spec.selector").is_empty()
    });
    let selector = selector_rules(&spec["selector"], "spec.selector");
    errs.extend(selector.into_iter().filter(|e| {
        // `AllowInvalidLabelValueInSelector` skips the values' checks only.
        !(allow_invalid_values && is_label_value_error(e))
    }));
    if let Some(policy) = spec["unhealthyPodEvictionPolicy"].as_str()
        && !EVICTION_POLICIES.contains(&policy)
    {
        errs.push(unsupported(
            "spec.unhealthyPodEvictionPolicy",
            policy,
            EVICTION_POLICIES,
        ));
    }
    errs
}

/// Whether `e` is a selector's label value problem (the values of `matchLabels` or of an
/// expression).
fn is_label_value_error(e: &FieldError) -> bool {
    e.field.ends_with(".values") && e.reason == "FieldValueInvalid"
        || e.field.ends_with(".matchLabels") && e.message.contains("a valid label must be")
}

/// `ValidatePodDisruptionBudgetStatusUpdate` (policy/v1): the conditions, and the counts not
/// negative.
pub(crate) fn pdb_status_rules(new: &Value) -> Vec<FieldError> {
    let status = &new["status"];
    let mut errs = conditions_rules(&status["conditions"], "status.conditions");
    for field in [
        "disruptionsAllowed",
        "currentHealthy",
        "desiredHealthy",
        "expectedPods",
    ] {
        non_negative(&mut errs, &format!("status.{field}"), &status[field]);
    }
    errs
}

/// `metav1validation.ValidateConditions`: unique types, and each condition's rules.
fn conditions_rules(conditions: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut types: Vec<&str> = Vec::new();
    for (i, c) in conditions.as_array().into_iter().flatten().enumerate() {
        let at = format!("{path}[{i}]");
        let kind = c["type"].as_str().unwrap_or_default();
        if types.contains(&kind) {
            errs.push(FieldError::duplicate(
                &format!("{at}.type"),
                &Value::from(kind),
            ));
        } else {
            types.push(kind);
        }
        errs.extend(condition_rules(c, &at));
    }
    errs
}

/// `metav1validation.ValidateCondition`.
fn condition_rules(c: &Value, at: &str) -> Vec<FieldError> {
    let mut errs: Vec<FieldError> = Vec::new();
    let kind = c["type"].as_str().unwrap_or_default();
    for m in is_qualified_name(kind) {
        errs.push(FieldError::invalid(&format!("{at}.type"), kind, &m));
    }
    let status = c["status"].as_str().unwrap_or_default();
    if !matches!(status, "True" | "False" | "Unknown") {
        errs.push(unsupported(
            &format!("{at}.status"),
            status,
            &["False", "True", "Unknown"],
        ));
    }
    if c["observedGeneration"].as_i64().is_some_and(|g| g < 0) {
        errs.push(FieldError::invalid_value(
            &format!("{at}.observedGeneration"),
            &c["observedGeneration"],
            "must be greater than or equal to zero",
        ));
    }
    if c["lastTransitionTime"].as_str().is_none_or(str::is_empty) {
        errs.push(FieldError::required(&format!("{at}.lastTransitionTime")));
    }
    let reason = c["reason"].as_str().unwrap_or_default();
    if reason.is_empty() {
        errs.push(FieldError::required(&format!("{at}.reason")));
    } else {
        if !is_condition_reason(reason) {
            errs.push(FieldError::invalid(
                &format!("{at}.reason"),
                reason,
                &regex_error(
                    "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
                    "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?",
                    &["my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB"],
                ),
            ));
        }
        if reason.len() > MAX_REASON_LEN {
            errs.push(FieldError::too_long(
                &format!("{at}.reason"),
                MAX_REASON_LEN,
            ));
        }
    }
    if c["message"].as_str().unwrap_or_default().len() > MAX_MESSAGE_LEN {
        errs.push(FieldError::too_long(
            &format!("{at}.message"),
            MAX_MESSAGE_LEN,
        ));
    }
    errs
}

/// `maxReasonLen` and `maxMessageLen` of a condition (apimachinery `meta/v1/validation`).
const MAX_REASON_LEN: usize = 1024;
const MAX_MESSAGE_LEN: usize = 32 * 1024;

/// `[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?`.
fn is_condition_reason(reason: &str) -> bool {
    let bytes = reason.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    first.is_ascii_alphabetic()
        && (bytes.len() == 1 || last.is_ascii_alphanumeric() || *last == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"_,:".contains(b))
}
