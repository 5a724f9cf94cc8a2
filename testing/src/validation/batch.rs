//! batch/v1 Jobs and CronJobs: `SetObjectDefaults_Job` and `SetObjectDefaults_CronJob`
//! (`pkg/apis/batch/v1/defaults.go`, with the pod template's from [`super::pod`]), the job
//! strategy's generated selector (`generateSelector`, `pkg/registry/batch/job/strategy.go`), and
//! `ValidateJob`, `ValidateJobUpdate`, `ValidateJobUpdateStatus`, `ValidateCronJobCreate` and
//! `ValidateCronJobUpdate` (`pkg/apis/batch/validation/validation.go`), with upstream's
//! messages, and the warnings of `WarningsForJobSpec` (`pkg/api/job/warnings.go`). The
//! schedule's grammar is [`super::cron`]'s.
//!
//! Not ported (accepted as valid): `managedBy`'s path syntax after its domain and the success
//! policy's `succeededIndexes` limit of 64 KiB. The value of a refused template update is the
//! v1 template's JSON, where upstream prints its internal Go struct.

use serde_json::{Value, json};

use super::FieldError;
use super::apps::{
    non_negative, render_selector, selector_converts, selector_immutable, selector_rules,
    template_match_rule,
};
use super::names::is_dns1123_label;
use super::{cron, pod};

/// The template label naming a Job's uid, and its selector's key (`batch.ControllerUidLabel`).
pub(crate) const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
/// The legacy, unprefixed form of [`CONTROLLER_UID`].
const LEGACY_CONTROLLER_UID: &str = "controller-uid";
/// The template label naming the Job (`batch.JobNameLabel`).
const JOB_NAME: &str = "batch.kubernetes.io/job-name";
/// The legacy, unprefixed form of [`JOB_NAME`].
const LEGACY_JOB_NAME: &str = "job-name";

/// `maxParallelismForIndexedJob`.
const MAX_INDEXED_PARALLELISM: i64 = 100_000;
/// `maxFailedIndexesForIndexedJob`.
const MAX_FAILED_INDEXES: i64 = 100_000;
/// `completionsSoftLimit`.
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
/// `parallelismLimitForHighCompletions` and `maxFailedIndexesLimitForHighCompletions`.
const HIGH_COMPLETIONS_LIMIT: i64 = 10_000;
/// `maxPodFailurePolicyRules` and `maxSuccessPolicyRule`.
const MAX_POLICY_RULES: u64 = 20;
/// `maxPodFailurePolicyOnExitCodesValues`.
const MAX_EXIT_CODES: u64 = 255;
/// `maxPodFailurePolicyOnPodConditionsPatterns`.
const MAX_CONDITION_PATTERNS: u64 = 20;
/// `maxManagedByLength`.
const MAX_MANAGED_BY: usize = 63;
/// `DNS1035LabelMaxLength - 11`: a CronJob's name leaves room for its Jobs' suffix.
const MAX_CRON_JOB_NAME: usize = 52;

// Defaulting.

/// Sets `obj[key]` to `value` when it is missing or null.
fn default_to(obj: &mut Value, key: &str, value: Value) {
    if obj.get(key).is_none_or(Value::is_null) {
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

/// `SetObjectDefaults_Job`: the Job's defaults (`SetDefaults_Job`: completions and parallelism,
/// backoffLimit, the template's labels copied to a Job without labels, completionMode, suspend,
/// podReplacementPolicy, manualSelector), its pod failure policy's and its template's, and the
/// `status: {}` the encoder always writes.
///
/// # Errors
/// The decoder's message for a quantity that does not parse.
pub(crate) fn default_job(obj: &mut Value) -> Result<(), String> {
    let spec = object_at(obj, "spec");
    if spec["completions"].is_null() && spec["parallelism"].is_null() {
        spec["completions"] = json!(1);
    }
    default_to(spec, "parallelism", json!(1));
    let backoff = if spec["backoffLimitPerIndex"].is_null() {
        6
    } else {
        i64::from(i32::MAX)
    };
    default_to(spec, "backoffLimit", json!(backoff));
    default_to(spec, "completionMode", json!("NonIndexed"));
    default_to(spec, "suspend", json!(false));
    let replacement = if spec["podFailurePolicy"].is_null() {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    default_to(spec, "podReplacementPolicy", json!(replacement));
    default_to(spec, "manualSelector", json!(false));
    default_job_spec(spec)?;
    default_job_status(object_at(obj, "status"));
    let template_labels = obj["spec"]["template"]["metadata"]["labels"].clone();
    let has_labels = obj["metadata"]["labels"]
        .as_object()
        .is_some_and(|l| !l.is_empty());
    if !has_labels && template_labels.as_object().is_some_and(|l| !l.is_empty()) {
        obj["metadata"]["labels"] = template_labels;
    }
    object_at(obj, "status");
    Ok(())
}

/// What decoding and encoding make of a Job's status: its zero counts (`omitempty` integers)
/// dropped, its conditions' zero times (not pointers) written as `null`.
fn default_job_status(status: &mut Value) {
    if let Some(map) = status.as_object_mut() {
        map.retain(|k, v| !(["active", "succeeded", "failed"].contains(&k.as_str()) && *v == 0));
    }
    let conditions = status.get_mut("conditions").and_then(Value::as_array_mut);
    for c in conditions.into_iter().flatten().filter(|c| c.is_object()) {
        for key in ["lastProbeTime", "lastTransitionTime"] {
            if c.get(key).is_none() {
                c[key] = Value::Null;
            }
        }
    }
}

/// The defaults a Job's spec and a CronJob's job template share: the pod failure policy's
/// condition patterns (`status: True`) and the pod template's.
fn default_job_spec(spec: &mut Value) -> Result<(), String> {
    let rules = spec
        .pointer_mut("/podFailurePolicy/rules")
        .and_then(Value::as_array_mut);
    for rule in rules.into_iter().flatten() {
        let patterns = rule
            .get_mut("onPodConditions")
            .and_then(Value::as_array_mut);
        for pattern in patterns.into_iter().flatten() {
            if pattern["status"].as_str().unwrap_or_default().is_empty() {
                pattern["status"] = json!("True");
            }
        }
    }
    pod::default_template(object_at(spec, "template"))
}

/// `SetObjectDefaults_CronJob`: concurrencyPolicy, suspend and the history limits, the job
/// template's pod failure policy and pod template (not `SetDefaults_Job`: the template's Job
/// is defaulted when the controller creates it), and `status: {}`.
///
/// # Errors
/// The decoder's message for a quantity that does not parse.
pub(crate) fn default_cron_job(obj: &mut Value) -> Result<(), String> {
    let spec = object_at(obj, "spec");
    if spec["concurrencyPolicy"]
        .as_str()
        .unwrap_or_default()
        .is_empty()
    {
        spec["concurrencyPolicy"] = json!("Allow");
    }
    default_to(spec, "suspend", json!(false));
    default_to(spec, "successfulJobsHistoryLimit", json!(3));
    default_to(spec, "failedJobsHistoryLimit", json!(1));
    let template = object_at(spec, "jobTemplate");
    object_at(template, "metadata");
    let job_spec = object_at(template, "spec");
    object_at(object_at(job_spec, "template"), "metadata");
    default_job_spec(job_spec)?;
    object_at(obj, "status");
    Ok(())
}

/// `generateSelector` (for a Job without `manualSelector: true`): the template labelled with
/// the Job's name and uid (both label forms, a label the user set kept), and the selector
/// matching `batch.kubernetes.io/controller-uid`. A Job whose labels decoding copied from its
/// template shares them with it (one Go map), so they get the generated labels too; so does a
/// Job without labels, as decoding the stored object copies them.
pub(crate) fn generate_selector(obj: &mut Value) {
    if obj["spec"]["manualSelector"] == true {
        return;
    }
    let labels = &obj["metadata"]["labels"];
    let shared = labels.as_object().is_none_or(serde_json::Map::is_empty)
        || *labels == obj["spec"]["template"]["metadata"]["labels"];
    generate_template_labels(obj);
    if shared {
        obj["metadata"]["labels"] = obj["spec"]["template"]["metadata"]["labels"].clone();
    }
}

/// `generateSelector`'s labels and selector.
fn generate_template_labels(obj: &mut Value) {
    let name = obj["metadata"]["name"].clone();
    let uid = obj["metadata"]["uid"].clone();
    let spec = object_at(obj, "spec");
    let labels = object_at(object_at(object_at(spec, "template"), "metadata"), "labels");
    for (key, value) in [
        (LEGACY_JOB_NAME, &name),
        (JOB_NAME, &name),
        (LEGACY_CONTROLLER_UID, &uid),
        (CONTROLLER_UID, &uid),
    ] {
        default_to(labels, key, value.clone());
    }
    let selector = object_at(object_at(spec, "selector"), "matchLabels");
    default_to(selector, CONTROLLER_UID, uid);
}

// Job validation.

/// The kind's rules on a Job `new` (and on an update, against `old`): `ValidateJob` without the
/// metadata's, and `ValidateJobSpecUpdate` (which runs `ValidateJobSpec` again, reporting its
/// problems twice as upstream does). A create's `new` is validated as `PrepareForCreate` leaves
/// it: with its generated selector.
pub(crate) fn job_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let Some(old) = old else {
        let mut prepared = new.clone();
        generate_selector(&mut prepared);
        return validate_job(&prepared, true);
    };
    // `validationOptionsForJob`: the prefixed labels are required of a Job that has them.
    let template_labels = &old["spec"]["template"]["metadata"]["labels"];
    let prefixed =
        !template_labels[JOB_NAME].is_null() && !template_labels[CONTROLLER_UID].is_null();
    let mut errs = validate_job(new, prefixed);
    // Scheduling directives are mutable while a suspended Job never started.
    let schedulable = old["spec"]["suspend"] == true && old["status"]["startTime"].is_null();
    errs.extend(job_spec_update_rules(
        &new["spec"],
        &old["spec"],
        schedulable,
    ));
    errs
}

/// `ValidateJob` without `ValidateObjectMeta` (the registry's).
fn validate_job(job: &Value, require_prefixed: bool) -> Vec<FieldError> {
    let mut errs = generated_selector_rules(job, require_prefixed);
    errs.extend(job_spec_rules(&job["spec"]));
    let spec = &job["spec"];
    let completions = spec["completions"].as_i64();
    if spec["completionMode"] == "Indexed"
        && let Some(completions) = completions.filter(|c| *c > 0)
    {
        let name = job["metadata"]["name"].as_str().unwrap_or_default();
        let hostname = format!("{name}-{}", completions - 1);
        if !is_dns1123_label(&hostname).is_empty() {
            errs.push(FieldError::invalid(
                "metadata.name",
                name,
                &format!("will not able to create pod with invalid DNS label: {hostname}"),
            ));
        }
    }
    errs
}

/// `validateGeneratedSelector`: the generated labels present on the template, and the
/// selector selecting them.
fn generated_selector_rules(job: &Value, require_prefixed: bool) -> Vec<FieldError> {
    let spec = &job["spec"];
    if spec["manualSelector"] == true || spec["selector"].is_null() {
        return Vec::new();
    }
    let name = job["metadata"]["name"].as_str().unwrap_or_default();
    let uid = job["metadata"]["uid"].as_str().unwrap_or_default();
    let mut errs = Vec::new();
    if uid.is_empty() {
        errs.push(FieldError::required("metadata.uid"));
    }
    let labels = &spec["template"]["metadata"]["labels"];
    let mut expected = vec![(LEGACY_CONTROLLER_UID, uid), (LEGACY_JOB_NAME, name)];
    if require_prefixed {
        expected.extend([(CONTROLLER_UID, uid), (JOB_NAME, name)]);
    }
    for (key, value) in &expected {
        errs.extend(has_label(labels, key, value));
    }
    let selector = &spec["selector"];
    let expected_labels: serde_json::Map<String, Value> = expected
        .iter()
        .map(|(k, v)| ((*k).to_owned(), json!(v)))
        .collect();
    if selector_converts(selector)
        && template_match_rule(selector, &json!({"metadata": {"labels": expected_labels}}))
            .is_some()
    {
        errs.push(FieldError::invalid_rendered(
            "spec.selector",
            &render_selector(selector),
            "`selector` not auto-generated",
        ));
    }
    errs
}

/// `ValidateHasLabel` of a template's labels.
fn has_label(labels: &Value, key: &str, expected: &str) -> Option<FieldError> {
    let path = format!("spec.template.metadata.labels[{key}]");
    let detail = format!("must be '{expected}'");
    match labels[key].as_str() {
        None => Some(FieldError::required_because(&path, &detail)),
        Some(actual) if actual != expected => {
            Some(FieldError::invalid_value(&path, labels, &detail))
        }
        Some(_) => None,
    }
}

/// `ValidateJobSpec`: `validateJobSpec`, the selector required and valid, and matching the
/// template's labels.
fn job_spec_rules(spec: &Value) -> Vec<FieldError> {
    let mut errs = job_spec_inner_rules(spec, "spec");
    let selector = &spec["selector"];
    if selector.is_null() {
        errs.push(FieldError::required("spec.selector"));
    } else {
        errs.extend(selector_rules(selector, "spec.selector"));
    }
    let labels = &spec["template"]["metadata"]["labels"];
    if selector_converts(selector) && template_match_rule(selector, &spec["template"]).is_some() {
        // A nil map renders as `null`.
        errs.push(FieldError::invalid_value(
            "spec.template.metadata.labels",
            labels,
            "`selector` does not match template `labels`",
        ));
    }
    errs
}

/// `validateJobSpec` of the spec at `path` (`spec`, or a CronJob's `spec.jobTemplate.spec`).
fn job_spec_inner_rules(spec: &Value, path: &str) -> Vec<FieldError> {
    let at = |field: &str| format!("{path}.{field}");
    let mut errs = Vec::new();
    for field in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        non_negative(&mut errs, &at(field), &spec[field]);
        if field == "maxFailedIndexes"
            && !spec[field].is_null()
            && spec["backoffLimitPerIndex"].is_null()
        {
            errs.push(FieldError::required_because(
                &at("backoffLimitPerIndex"),
                "when maxFailedIndexes is specified",
            ));
        }
    }
    if let Some(managed_by) = spec["managedBy"].as_str() {
        errs.extend(managed_by_rules(managed_by, &at("managedBy")));
    }
    errs.extend(completion_mode_rules(spec, path));
    if !spec["podFailurePolicy"].is_null() {
        errs.extend(pod_failure_policy_rules(spec, &at("podFailurePolicy")));
    }
    if !spec["successPolicy"].is_null() {
        if spec["completionMode"] != "Indexed" {
            errs.push(FieldError::invalid_rendered(
                &at("successPolicy"),
                &render_success_policy(&spec["successPolicy"]),
                "requires indexed completion mode",
            ));
        } else {
            errs.extend(success_policy_rules(spec, &at("successPolicy")));
        }
    }
    if let Some(policy) = spec["podReplacementPolicy"].as_str() {
        let supported: &[&str] = if spec["podFailurePolicy"].is_null() {
            &["Failed", "TerminatingOrFailed"]
        } else {
            &["Failed"]
        };
        if !supported.contains(&policy) {
            errs.push(pod::unsupported(
                &at("podReplacementPolicy"),
                policy,
                supported,
            ));
        }
    }
    let template = &spec["template"];
    errs.extend(pod::template_rules(template, &at("template")));
    let restart_path = at("template.spec.restartPolicy");
    match template["spec"]["restartPolicy"]
        .as_str()
        .unwrap_or_default()
    {
        "Always" | "" => errs.push(FieldError::required_because(
            &restart_path,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" if !spec["podFailurePolicy"].is_null() => {
            errs.push(FieldError::invalid(
                &restart_path,
                "OnFailure",
                "only \"Never\" is supported when podFailurePolicy is specified",
            ));
        }
        "OnFailure" | "Never" => {}
        other => errs.push(pod::unsupported(
            &restart_path,
            other,
            &["OnFailure", "Never"],
        )),
    }
    errs
}

/// The internal `batch.SuccessPolicy` as `field.Error` renders it: JSON of a struct without
/// tags (Go's field names, every field).
fn render_success_policy(policy: &Value) -> String {
    let rules: Vec<String> = items(&policy["rules"])
        .iter()
        .map(|r| {
            let or_null = |v: &Value| {
                if v.is_null() {
                    "null".to_owned()
                } else {
                    v.to_string()
                }
            };
            format!(
                "{{\"SucceededIndexes\":{},\"SucceededCount\":{}}}",
                or_null(&r["succeededIndexes"]),
                or_null(&r["succeededCount"])
            )
        })
        .collect();
    let rules = if policy["rules"].is_array() {
        format!("[{}]", rules.join(","))
    } else {
        "null".to_owned()
    };
    format!("{{\"Rules\":{rules}}}")
}

/// `IsDomainPrefixedPath` (its domain; the path after it unchecked) and the length limit.
fn managed_by_rules(managed_by: &str, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match managed_by.split_once('/') {
        _ if managed_by.is_empty() => errs.push(FieldError::required(path)),
        Some((host, rest)) if !host.is_empty() && !rest.is_empty() => {
            for m in super::names::is_dns1123_subdomain(host) {
                errs.push(FieldError::invalid(path, host, &m));
            }
        }
        _ => errs.push(FieldError::invalid(
            path,
            managed_by,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )),
    }
    if managed_by.len() > MAX_MANAGED_BY {
        errs.push(FieldError::too_long(path, MAX_MANAGED_BY));
    }
    errs
}

/// The completion mode's rules, and an indexed Job's limits.
fn completion_mode_rules(spec: &Value, path: &str) -> Vec<FieldError> {
    let at = |field: &str| format!("{path}.{field}");
    let mut errs = Vec::new();
    let completions = spec["completions"].as_i64();
    let parallelism = spec["parallelism"].as_i64();
    let max_failed = spec["maxFailedIndexes"].as_i64();
    let per_index = spec["backoffLimitPerIndex"].as_i64();
    let mode = spec["completionMode"].as_str();
    if let Some(mode) = mode
        && mode != "NonIndexed"
        && mode != "Indexed"
    {
        errs.push(FieldError::not_supported_rendered(
            &at("completionMode"),
            &spec["completionMode"].to_string(),
            "\"NonIndexed\", \"Indexed\"",
        ));
    }
    if mode == Some("Indexed") {
        if completions.is_none() {
            errs.push(FieldError::required_because(
                &at("completions"),
                "when completion mode is Indexed",
            ));
        }
        if let Some(p) = parallelism.filter(|p| *p > MAX_INDEXED_PARALLELISM) {
            errs.push(FieldError::invalid_value(
                &at("parallelism"),
                &json!(p),
                &format!(
                    "must be less than or equal to {MAX_INDEXED_PARALLELISM} when completion mode is Indexed"
                ),
            ));
        }
        if let (Some(c), Some(m)) = (completions, max_failed)
            && m > c
        {
            errs.push(FieldError::invalid_value(
                &at("maxFailedIndexes"),
                &json!(m),
                "must be less than or equal to completions",
            ));
        }
        if let Some(m) = max_failed.filter(|m| *m > MAX_FAILED_INDEXES) {
            errs.push(FieldError::invalid_value(
                &at("maxFailedIndexes"),
                &json!(m),
                &format!("must be less than or equal to {MAX_FAILED_INDEXES}"),
            ));
        }
        if completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT) && per_index.is_some() {
            let high = format!(
                "must be less than or equal to {HIGH_COMPLETIONS_LIMIT} when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
            );
            if max_failed.is_none() {
                errs.push(FieldError::required_because(
                    &at("maxFailedIndexes"),
                    &format!(
                        "must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}"
                    ),
                ));
            }
            if let Some(p) = parallelism.filter(|p| *p > HIGH_COMPLETIONS_LIMIT) {
                errs.push(FieldError::invalid_value(
                    &at("parallelism"),
                    &json!(p),
                    &high,
                ));
            }
            if let Some(m) = max_failed.filter(|m| *m > HIGH_COMPLETIONS_LIMIT) {
                errs.push(FieldError::invalid_value(
                    &at("maxFailedIndexes"),
                    &json!(m),
                    &high,
                ));
            }
        }
    }
    if mode.is_none_or(|m| m == "NonIndexed") {
        for (field, value) in [
            ("backoffLimitPerIndex", per_index),
            ("maxFailedIndexes", max_failed),
        ] {
            if let Some(v) = value {
                errs.push(FieldError::invalid_value(
                    &at(field),
                    &json!(v),
                    "requires indexed completion mode",
                ));
            }
        }
    }
    errs
}

/// `validatePodFailurePolicy` and its rules'.
fn pod_failure_policy_rules(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules = items(&spec["podFailurePolicy"]["rules"]);
    let rules_path = format!("{path}.rules");
    if rules.len() as u64 > MAX_POLICY_RULES {
        errs.push(FieldError::too_many(
            &rules_path,
            rules.len() as u64,
            MAX_POLICY_RULES,
        ));
    }
    let pod_spec = &spec["template"]["spec"];
    let names: Vec<&str> = items(&pod_spec["containers"])
        .iter()
        .chain(items(&pod_spec["initContainers"]))
        .filter_map(|c| c["name"].as_str())
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("{rules_path}[{i}]");
        let action_path = format!("{at}.action");
        match rule["action"].as_str().unwrap_or_default() {
            "" => errs.push(FieldError::required_because(
                &action_path,
                "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
            )),
            "FailIndex" => {
                if spec["backoffLimitPerIndex"].is_null() {
                    errs.push(FieldError::invalid(
                        &action_path,
                        "FailIndex",
                        "requires the backoffLimitPerIndex to be set",
                    ));
                }
            }
            "Count" | "FailJob" | "Ignore" => {}
            other => errs.push(pod::unsupported(
                &action_path,
                other,
                &["Count", "FailIndex", "FailJob", "Ignore"],
            )),
        }
        let on_exit = &rule["onExitCodes"];
        let on_conditions = items(&rule["onPodConditions"]);
        if !on_exit.is_null() {
            errs.extend(on_exit_codes_rules(
                on_exit,
                &format!("{at}.onExitCodes"),
                &names,
            ));
        }
        if !on_conditions.is_empty() {
            errs.extend(on_conditions_rules(
                on_conditions,
                &format!("{at}.onPodConditions"),
            ));
        }
        match (on_exit.is_null(), on_conditions.is_empty()) {
            (false, false) => errs.push(FieldError::invalid_omitted(
                &at,
                "specifying both OnExitCodes and OnPodConditions is not supported",
            )),
            (true, true) => errs.push(FieldError::invalid_omitted(
                &at,
                "specifying one of OnExitCodes and OnPodConditions is required",
            )),
            _ => {}
        }
    }
    errs
}

/// `validatePodFailurePolicyRuleOnExitCodes`.
fn on_exit_codes_rules(on_exit: &Value, path: &str, names: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let operator = on_exit["operator"].as_str().unwrap_or_default();
    let operator_path = format!("{path}.operator");
    match operator {
        "" => errs.push(FieldError::required_because(
            &operator_path,
            "valid values: [\"In\" \"NotIn\"]",
        )),
        "In" | "NotIn" => {}
        other => errs.push(pod::unsupported(&operator_path, other, &["In", "NotIn"])),
    }
    if let Some(name) = on_exit["containerName"].as_str()
        && !names.contains(&name)
    {
        errs.push(FieldError::invalid(
            &format!("{path}.containerName"),
            name,
            "must be one of the container or initContainer names in the pod template",
        ));
    }
    let values_path = format!("{path}.values");
    let values = items(&on_exit["values"]);
    if values.is_empty() {
        errs.push(FieldError::invalid_value(
            &values_path,
            &on_exit["values"],
            "at least one value is required",
        ));
    } else if values.len() as u64 > MAX_EXIT_CODES {
        errs.push(FieldError::too_many(
            &values_path,
            values.len() as u64,
            MAX_EXIT_CODES,
        ));
    }
    let mut seen = Vec::new();
    let mut ordered = true;
    for (j, value) in values.iter().enumerate() {
        let at = format!("{values_path}[{j}]");
        let code = value.as_i64().unwrap_or_default();
        if operator == "In" && code == 0 {
            errs.push(FieldError::invalid_value(
                &at,
                value,
                "must not be 0 for the In operator",
            ));
        }
        if seen.contains(&code) {
            errs.push(FieldError::duplicate(&at, value));
        } else {
            seen.push(code);
        }
        if j > 0 && values[j - 1].as_i64().unwrap_or_default() > code {
            ordered = false;
        }
    }
    if !ordered {
        errs.push(FieldError::invalid_value(
            &values_path,
            &on_exit["values"],
            "must be ordered",
        ));
    }
    errs
}

/// `validatePodFailurePolicyRuleOnPodConditions`.
fn on_conditions_rules(patterns: &[Value], path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if patterns.len() as u64 > MAX_CONDITION_PATTERNS {
        errs.push(FieldError::too_many(
            path,
            patterns.len() as u64,
            MAX_CONDITION_PATTERNS,
        ));
    }
    for (j, pattern) in patterns.iter().enumerate() {
        let at = format!("{path}[{j}]");
        let kind = pattern["type"].as_str().unwrap_or_default();
        for m in super::names::is_qualified_name(kind) {
            errs.push(FieldError::invalid(&format!("{at}.type"), kind, &m));
        }
        let status_path = format!("{at}.status");
        match pattern["status"].as_str().unwrap_or_default() {
            "" => errs.push(FieldError::required_because(
                &status_path,
                "valid values: [\"False\" \"True\" \"Unknown\"]",
            )),
            "False" | "True" | "Unknown" => {}
            other => errs.push(pod::unsupported(
                &status_path,
                other,
                &["False", "True", "Unknown"],
            )),
        }
    }
    errs
}

/// `validateSuccessPolicy` of an indexed Job.
fn success_policy_rules(spec: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rules_path = format!("{path}.rules");
    let rules = items(&spec["successPolicy"]["rules"]);
    if rules.is_empty() {
        errs.push(FieldError::required_because(
            &rules_path,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if rules.len() as u64 > MAX_POLICY_RULES {
        errs.push(FieldError::too_many(
            &rules_path,
            rules.len() as u64,
            MAX_POLICY_RULES,
        ));
    }
    let completions = spec["completions"].as_i64().unwrap_or_default();
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("{rules_path}[{i}]");
        let count = rule["succeededCount"].as_i64();
        let indexes = rule["succeededIndexes"].as_str();
        if count.is_none() && indexes.is_none() {
            errs.push(FieldError::required_because(
                &at,
                "at least one of succeededCount or succeededIndexes must be specified",
            ));
        }
        let mut total = 0;
        if let Some(indexes) = indexes {
            match indexes_format(indexes, completions) {
                Ok(t) => total = t,
                Err(e) => errs.push(FieldError::invalid(
                    &format!("{at}.succeededIndexes"),
                    indexes,
                    &format!("error parsing succeededIndexes: {e}"),
                )),
            }
        }
        if let Some(count) = count {
            let count_path = format!("{at}.succeededCount");
            non_negative(&mut errs, &count_path, &json!(count));
            if count > completions {
                errs.push(FieldError::invalid_value(
                    &count_path,
                    &json!(count),
                    &format!("must be less than or equal to {completions} (the number of specified completions)"),
                ));
            }
            if indexes.is_some() && count > total {
                errs.push(FieldError::invalid_value(
                    &count_path,
                    &json!(count),
                    &format!("must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)"),
                ));
            }
        }
    }
    errs
}

/// `validateIndexesFormat`: the number of indexes of `1,3-5`, each below `completions`.
fn indexes_format(text: &str, completions: i64) -> Result<i64, String> {
    if text.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    for interval in text.split(',') {
        let (x, y) = index_interval(interval, completions)?;
        if let Some(last) = last.filter(|l| *l >= x) {
            return Err(format!(
                "non-increasing order, previous: {last}, current: {x}"
            ));
        }
        total += y - x + 1;
        last = Some(y);
    }
    Ok(total)
}

/// `parseIndexInterval`.
fn index_interval(text: &str, completions: i64) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = text.split('-').collect();
    if limits.len() > 2 {
        return Err(format!(
            "the fragment {} violates the requirement that an index interval can have at most two parts separated by '-'",
            crate::go::fmt::go_quote(text)
        ));
    }
    let parse = |s: &str| -> Result<i64, String> {
        let quoted = crate::go::fmt::go_quote(s);
        let x = s
            .parse::<i64>()
            .map_err(|_| format!("cannot convert string to integer for index: {quoted}"))?;
        if x >= completions {
            return Err(format!("too large index: {quoted}"));
        }
        Ok(x)
    };
    let x = parse(limits[0])?;
    let Some(high) = limits.get(1) else {
        return Ok((x, x));
    };
    let y = parse(high)?;
    if x >= y {
        return Err(format!("non-increasing order, previous: {x}, current: {y}"));
    }
    Ok((x, y))
}

/// `ValidateJobSpecUpdate`: `ValidateJobSpec` again, then the immutable fields (completions
/// but for an indexed Job's scaled in tandem with parallelism, the selector, the template, the
/// completion mode, the pod failure policy, backoffLimitPerIndex, managedBy, the success
/// policy); the template's scheduling directives excepted when `schedulable`.
fn job_spec_update_rules(spec: &Value, old: &Value, schedulable: bool) -> Vec<FieldError> {
    let mut errs = job_spec_rules(spec);
    if spec["completionMode"] != "Indexed" {
        errs.extend(immutable(spec, old, "completions"));
    } else if spec["completions"] != old["completions"]
        && !spec["completions"].is_null()
        && spec["completions"] != spec["parallelism"]
    {
        errs.push(FieldError::invalid_value(
            "spec.completions",
            &spec["completions"],
            "can only be modified in tandem with spec.parallelism",
        ));
    }
    if spec["selector"] != old["selector"] {
        errs.push(selector_immutable(&spec["selector"]));
    }
    let template = &spec["template"];
    let old_template = if schedulable {
        with_scheduling_of(&old["template"], template)
    } else {
        old["template"].clone()
    };
    if *template != old_template {
        errs.push(FieldError::invalid_value(
            "spec.template",
            template,
            "field is immutable",
        ));
    }
    for field in [
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        errs.extend(immutable(spec, old, field));
    }
    errs
}

/// `validatePodTemplateUpdate`'s copy of the stored template `old` with the scheduling
/// directives of `new`: node affinity, node selector, tolerations, scheduling gates, labels
/// and annotations.
fn with_scheduling_of(old: &Value, new: &Value) -> Value {
    let mut old = old.clone();
    let copy = |to: &mut Value, from: &Value, key: &str| match from.get(key) {
        Some(v) if !v.is_null() => to[key] = v.clone(),
        _ => {
            if let Some(map) = to.as_object_mut() {
                map.remove(key);
            }
        }
    };
    let new_affinity = &new["spec"]["affinity"];
    let spec = &mut old["spec"];
    match (new_affinity.is_null(), spec["affinity"].is_null()) {
        (true, false) => {
            if let Some(affinity) = spec["affinity"].as_object_mut() {
                affinity.remove("nodeAffinity");
                if affinity.is_empty() {
                    spec.as_object_mut().map(|s| s.remove("affinity"));
                }
            }
        }
        (false, true) => {
            spec["affinity"] = json!({});
            copy(&mut spec["affinity"], new_affinity, "nodeAffinity");
        }
        (false, false) => copy(&mut spec["affinity"], new_affinity, "nodeAffinity"),
        (true, true) => {}
    }
    for key in ["nodeSelector", "tolerations", "schedulingGates"] {
        copy(spec, &new["spec"], key);
    }
    if !old["metadata"].is_object() {
        old["metadata"] = json!({});
    }
    for key in ["annotations", "labels"] {
        copy(&mut old["metadata"], &new["metadata"], key);
    }
    old
}

/// `ValidateImmutableField` of `spec.<field>` (its value rendered as JSON).
fn immutable(spec: &Value, old: &Value, field: &str) -> Option<FieldError> {
    (spec[field] != old[field]).then(|| {
        FieldError::invalid_value(&format!("spec.{field}"), &spec[field], "field is immutable")
    })
}

// Job status validation.

/// Whether a condition of `type_` has status `status` in `status.conditions`.
fn condition(status: &Value, type_: &str, value: &str) -> bool {
    items(&status["conditions"])
        .iter()
        .any(|c| c["type"] == type_ && c["status"] == value)
}

/// An integer of the status (0 when absent).
fn count(status: &Value, key: &str) -> i64 {
    status[key].as_i64().unwrap_or_default()
}

/// `ValidateJobStatusUpdate` with the options `getStatusValidationOptions` gives under the
/// `JobManagedBy` gate (on in v1.34): the status's own rules, those that check a transition
/// only when the fields involved changed.
pub(crate) fn job_status_rules(new: &Value, old: &Value) -> Vec<FieldError> {
    let (status, before) = (&new["status"], &old["status"]);
    let spec = &new["spec"];
    let is_true = |s: &Value, t: &str| condition(s, t, "True");
    let finished = |s: &Value| is_true(s, "Complete") || is_true(s, "Failed");
    let changed = |key: &str| status[key] != before[key];
    let complete_changed = is_true(before, "Complete") != is_true(status, "Complete");
    let failed_changed = is_true(before, "Failed") != is_true(status, "Failed");
    let finished_changed = finished(before) != finished(status);
    let target_changed = is_true(before, "FailureTarget") != is_true(status, "FailureTarget");
    let criteria_changed =
        is_true(before, "SuccessCriteriaMet") != is_true(status, "SuccessCriteriaMet");
    let indexed = spec["completionMode"] == "Indexed";
    let (complete, failed) = (is_true(status, "Complete"), is_true(status, "Failed"));
    let target = is_true(status, "FailureTarget");
    let criteria = is_true(status, "SuccessCriteriaMet");
    let mut errs = Vec::new();
    for key in ["active", "succeeded", "failed", "ready", "terminating"] {
        non_negative(&mut errs, &format!("status.{key}"), &status[key]);
    }
    errs.extend(uncounted_rules(&status["uncountedTerminatedPods"]));
    let conditions = |detail: &str| FieldError::invalid_omitted("status.conditions", detail);
    if (complete_changed || failed_changed) && complete && failed {
        errs.push(conditions(
            "cannot set Complete=True and Failed=true conditions",
        ));
    }
    if (complete_changed || target_changed) && complete && target {
        errs.push(conditions(
            "cannot set Complete=True and FailureTarget=true conditions",
        ));
    }
    let completion = &status["completionTime"];
    let time_changed = changed("completionTime");
    if (complete_changed || time_changed) && !completion.is_null() && !complete {
        errs.push(FieldError::invalid_value(
            "status.completionTime",
            completion,
            "cannot set completionTime when there is no Complete=True condition",
        ));
    }
    if (complete_changed || time_changed) && completion.is_null() && complete {
        errs.push(FieldError::required_because(
            "status.completionTime",
            "completionTime is required for Complete jobs",
        ));
    }
    let start = &status["startTime"];
    let start_changed = changed("startTime");
    if (start_changed || time_changed) && before_time(completion, start) {
        errs.push(FieldError::invalid_value(
            "status.completionTime",
            completion,
            "must be equal to or after `startTime`",
        ));
    }
    if (failed_changed || changed("failedIndexes")) && failed && !target {
        errs.push(conditions(
            "cannot set Failed=True condition without the FailureTarget=true condition",
        ));
    }
    if (complete_changed || criteria_changed) && complete && !criteria {
        errs.push(conditions(
            "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
        ));
    }
    let is_finished = finished(status);
    if (finished_changed || changed("active")) && count(status, "active") > 0 && is_finished {
        errs.push(FieldError::invalid_value(
            "status.active",
            &status["active"],
            "active>0 is invalid for finished job",
        ));
    }
    let suspended_empty = spec["suspend"] == true && spec["completions"] == 0;
    if (finished_changed || start_changed) && !suspended_empty && start.is_null() && is_finished {
        errs.push(FieldError::required_because(
            "status.startTime",
            "startTime is required for finished job",
        ));
    }
    let uncounted = &status["uncountedTerminatedPods"];
    let uncounted_count = items(&uncounted["failed"]).len() + items(&uncounted["succeeded"]).len();
    if (finished_changed || changed("uncountedTerminatedPods"))
        && is_finished
        && uncounted_count > 0
    {
        errs.push(FieldError::invalid_value(
            "status.uncountedTerminatedPods",
            uncounted,
            "must be empty for finished job",
        ));
    }
    errs.extend(indexes_rules(status, before, spec, indexed));
    if (finished_changed || changed("terminating"))
        && count(status, "terminating") > 0
        && is_finished
    {
        errs.push(FieldError::invalid_value(
            "status.terminating",
            &status["terminating"],
            "terminating>0 is invalid for finished job",
        ));
    }
    if (changed("ready") || changed("active"))
        && status["ready"]
            .as_i64()
            .is_some_and(|r| r > count(status, "active"))
    {
        errs.push(FieldError::invalid_value(
            "status.ready",
            &status["ready"],
            "cannot set more ready pods than active",
        ));
    }
    if criteria && failed {
        errs.push(conditions(
            "cannot set SuccessCriteriaMet=True and Failed=true conditions",
        ));
    }
    if criteria && target {
        errs.push(conditions(
            "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
        ));
    }
    if !spec["successPolicy"].is_null() && !criteria && complete {
        errs.push(conditions(
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
        ));
    }
    errs.extend(transition_rules(status, before, spec, indexed));
    errs
}

/// Whether the time `a` is before the time `b` (both set).
fn before_time(a: &Value, b: &Value) -> bool {
    let parse = |v: &Value| v.as_str().and_then(|s| s.parse::<jiff::Timestamp>().ok());
    matches!((parse(a), parse(b)), (Some(a), Some(b)) if a < b)
}

/// The uncounted terminated pods' uids: none empty, none twice.
fn uncounted_rules(uncounted: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut seen = Vec::new();
    for list in ["succeeded", "failed"] {
        for (i, uid) in items(&uncounted[list]).iter().enumerate() {
            let at = format!("status.uncountedTerminatedPods.{list}[{i}]");
            let uid = uid.as_str().unwrap_or_default();
            if uid.is_empty() {
                errs.push(FieldError::invalid(&at, uid, "must not be empty"));
            } else if seen.contains(&uid) {
                errs.push(FieldError::duplicate(&at, &json!(uid)));
            } else {
                seen.push(uid);
            }
        }
    }
    errs
}

/// The completed and failed indexes' rules, each checked when it changed.
fn indexes_rules(status: &Value, before: &Value, spec: &Value, indexed: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let completed = status["completedIndexes"].as_str().unwrap_or_default();
    let completed_changed = status["completedIndexes"] != before["completedIndexes"];
    let failed = &status["failedIndexes"];
    let failed_changed = *failed != before["failedIndexes"];
    let completions = spec["completions"].as_i64();
    if completed_changed
        && let Some(c) = completions
        && let Err(e) = indexes_format(completed, c)
    {
        errs.push(FieldError::invalid(
            "status.completedIndexes",
            completed,
            &format!("error parsing completedIndexes: {e}"),
        ));
    }
    if failed_changed
        && let (Some(c), false, Some(text)) = (
            completions,
            spec["backoffLimitPerIndex"].is_null(),
            failed.as_str(),
        )
        && let Err(e) = indexes_format(text, c)
    {
        errs.push(FieldError::invalid(
            "status.failedIndexes",
            text,
            &format!("error parsing failedIndexes: {e}"),
        ));
    }
    if completed_changed && !completed.is_empty() && !indexed {
        errs.push(FieldError::invalid(
            "status.completedIndexes",
            completed,
            "cannot set non-empty completedIndexes when non-indexed completion mode",
        ));
    }
    if failed_changed && spec["backoffLimitPerIndex"].is_null() && !failed.is_null() {
        errs.push(FieldError::invalid_value(
            "status.failedIndexes",
            failed,
            "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
        ));
    }
    if (failed_changed || completed_changed)
        && let (Some(c), Some(text)) = (completions, failed.as_str())
        && let Some(index) = overlap(completed, text, c)
    {
        errs.push(FieldError::invalid(
            "status.failedIndexes",
            text,
            &format!("failedIndexes and completedIndexes overlap at index: {index}"),
        ));
    }
    errs
}

/// `validateFailedIndexesNotOverlapCompleted`: the first index both lists hold (intervals that
/// do not parse skipped).
fn overlap(completed: &str, failed: &str, completions: i64) -> Option<i64> {
    if completed.is_empty() || failed.is_empty() {
        return None;
    }
    let completed: Vec<_> = completed
        .split(',')
        .map(|i| index_interval(i, completions).ok())
        .collect();
    let failed: Vec<_> = failed
        .split(',')
        .map(|i| index_interval(i, completions).ok())
        .collect();
    let (mut c, mut f) = (0, 0);
    while c < completed.len() && f < failed.len() {
        match (completed[c], failed[f]) {
            (None, _) => c += 1,
            (_, None) => f += 1,
            (Some((cx, cy)), Some((fx, fy))) => {
                if cx <= fy && fx <= cy {
                    return Some(cx.max(fx));
                }
                if cx <= fx {
                    c += 1;
                } else {
                    f += 1;
                }
            }
        }
    }
    None
}

/// `ValidateJobStatusUpdate`'s transitions: terminal conditions kept, counters not decreased,
/// completionTime immutable, startTime kept while running, SuccessCriteriaMet kept.
fn transition_rules(
    status: &Value,
    before: &Value,
    spec: &Value,
    indexed: bool,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let is_true = |s: &Value, t: &str| condition(s, t, "True");
    for kind in ["Failed", "Complete", "FailureTarget"] {
        if is_true(before, kind) && !is_true(status, kind) {
            errs.push(FieldError::invalid_omitted(
                "status.conditions",
                &format!("cannot disable the terminal {kind}=True condition"),
            ));
        }
    }
    if count(status, "failed") < count(before, "failed") {
        errs.push(FieldError::invalid_value(
            "status.failed",
            &json!(count(status, "failed")),
            "cannot decrease the failed counter",
        ));
    }
    let scalable = indexed && spec["completions"] == spec["parallelism"];
    if !scalable && count(status, "succeeded") < count(before, "succeeded") {
        errs.push(FieldError::invalid_value(
            "status.succeeded",
            &json!(count(status, "succeeded")),
            "cannot decrease the succeeded counter",
        ));
    }
    let completion = &status["completionTime"];
    if !completion.is_null()
        && !before["completionTime"].is_null()
        && *completion != before["completionTime"]
    {
        errs.push(FieldError::invalid_value(
            "status.completionTime",
            completion,
            "field is immutable",
        ));
    }
    let resuming = is_true(before, "Suspended") && condition(status, "Suspended", "False");
    if !resuming
        && !before["startTime"].is_null()
        && status["startTime"] != before["startTime"]
        && spec["suspend"] != true
    {
        errs.push(FieldError::required_because(
            "status.startTime",
            "startTime cannot be removed for unsuspended job",
        ));
    }
    if is_true(before, "SuccessCriteriaMet") && !is_true(status, "SuccessCriteriaMet") {
        errs.push(FieldError::invalid_omitted(
            "status.conditions",
            "cannot disable the SuccessCriteriaMet=True condition",
        ));
    }
    if is_true(before, "Complete")
        && !is_true(before, "SuccessCriteriaMet")
        && is_true(status, "SuccessCriteriaMet")
    {
        errs.push(FieldError::invalid_omitted(
            "status.conditions",
            "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
        ));
    }
    errs
}

// CronJob validation.

/// `ValidateCronJobCreate` (without the metadata's) of `new`, or `ValidateCronJobUpdate`
/// against `old`.
pub(crate) fn cron_job_rules(new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = &new["spec"];
    let old_spec = old.map(|o| &o["spec"]);
    let mut errs = Vec::new();
    let schedule = spec["schedule"].as_str().unwrap_or_default();
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule"));
    } else {
        let tz_allowed =
            old_spec.is_some_and(|o| o["schedule"].as_str().unwrap_or_default().contains("TZ"));
        errs.extend(schedule_rules(schedule, tz_allowed, &spec["timeZone"]));
    }
    non_negative(
        &mut errs,
        "spec.startingDeadlineSeconds",
        &spec["startingDeadlineSeconds"],
    );
    if old_spec.is_none_or(|o| o["timeZone"] != spec["timeZone"]) {
        errs.extend(time_zone_rules(&spec["timeZone"]));
    }
    match spec["concurrencyPolicy"].as_str().unwrap_or_default() {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(FieldError::required("spec.concurrencyPolicy")),
        other => errs.push(pod::unsupported(
            "spec.concurrencyPolicy",
            other,
            &["Allow", "Forbid", "Replace"],
        )),
    }
    errs.extend(job_template_rules(&spec["jobTemplate"]["spec"]));
    non_negative(
        &mut errs,
        "spec.successfulJobsHistoryLimit",
        &spec["successfulJobsHistoryLimit"],
    );
    non_negative(
        &mut errs,
        "spec.failedJobsHistoryLimit",
        &spec["failedJobsHistoryLimit"],
    );
    let name = new["metadata"]["name"].as_str().unwrap_or_default();
    if old.is_none() && name.len() > MAX_CRON_JOB_NAME {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            "must be no more than 52 characters",
        ));
    }
    errs
}

/// `validateScheduleFormat`.
fn schedule_rules(schedule: &str, tz_allowed: bool, time_zone: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Err(e) = cron::parse_standard(schedule) {
        errs.push(FieldError::invalid("spec.schedule", schedule, &e));
    }
    let has_tz = schedule.contains("TZ");
    if tz_allowed && has_tz && !time_zone.is_null() {
        errs.push(FieldError::invalid(
            "spec.schedule",
            schedule,
            "cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ));
    } else if !tz_allowed && has_tz {
        errs.push(FieldError::invalid(
            "spec.schedule",
            schedule,
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ));
    }
    errs
}

/// `validateTimeZone`.
fn time_zone_rules(time_zone: &Value) -> Vec<FieldError> {
    let Some(zone) = time_zone.as_str() else {
        return Vec::new();
    };
    let path = "spec.timeZone";
    if zone.is_empty() {
        return vec![FieldError::invalid(
            path,
            zone,
            "timeZone must be nil or non-empty string",
        )];
    }
    let valid_part = |part: &str| {
        (1..=14).contains(&part.len())
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-+".contains(&b))
    };
    if zone
        .split('/')
        .any(|p| p == "." || p == ".." || p.starts_with('-') || !valid_part(p))
    {
        return vec![FieldError::invalid(
            path,
            zone,
            &format!("unknown time zone {zone}"),
        )];
    }
    let mut errs = Vec::new();
    if zone.eq_ignore_ascii_case("Local") {
        errs.push(FieldError::invalid(
            path,
            zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    if let Err(e) = cron::load_location(zone) {
        errs.push(FieldError::invalid(path, zone, &e));
    }
    errs
}

/// `ValidateJobTemplateSpec` of a CronJob's `spec.jobTemplate.spec`: `validateJobSpec`, and
/// neither a selector nor `manualSelector: true`.
fn job_template_rules(spec: &Value) -> Vec<FieldError> {
    let path = "spec.jobTemplate.spec";
    let mut errs = job_spec_inner_rules(spec, path);
    if !spec["selector"].is_null() {
        errs.push(FieldError::invalid_rendered(
            &format!("{path}.selector"),
            &render_selector(&spec["selector"]),
            "`selector` will be auto-generated",
        ));
    }
    if spec["manualSelector"] == true {
        errs.push(FieldError::not_supported_rendered(
            &format!("{path}.manualSelector"),
            "true",
            "\"nil\", \"false\"",
        ));
    }
    errs
}

/// `WarningsForJobSpec` (`pkg/api/job/warnings.go`, its own part) of the job spec at `path`
/// (`spec`, or a CronJob's `spec.jobTemplate.spec`): an indexed Job too large to track its
/// failed indexes.
pub(crate) fn job_spec_warnings(spec: &Value, path: &str) -> Vec<String> {
    let completions = spec["completions"].as_i64().unwrap_or(0);
    let parallelism = spec["parallelism"].as_i64().unwrap_or(0);
    if spec["completionMode"] == "Indexed"
        && completions > COMPLETIONS_SOFT_LIMIT
        && parallelism > HIGH_COMPLETIONS_LIMIT
    {
        vec![format!(
            "{path}: In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than 10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail"
        )]
    } else {
        Vec::new()
    }
}

/// The items of a JSON list (none for anything else).
fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Value {
        json!({"metadata": {"name": "pi", "uid": "u-1"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "pi", "image": "perl:5.34"}]}}}})
    }

    #[test]
    fn a_defaulted_job_gets_its_generated_selector_and_is_valid() {
        let mut j = job();
        default_job(&mut j).unwrap();
        assert_eq!(j["spec"]["completions"], 1);
        assert_eq!(j["spec"]["backoffLimit"], 6);
        assert_eq!(j["spec"]["podReplacementPolicy"], "TerminatingOrFailed");
        assert!(job_rules(&j, None).is_empty(), "{:?}", job_rules(&j, None));
        generate_selector(&mut j);
        assert_eq!(j["spec"]["selector"]["matchLabels"][CONTROLLER_UID], "u-1");
        assert_eq!(
            j["spec"]["template"]["metadata"]["labels"]["job-name"],
            "pi"
        );
        let mut changed = j.clone();
        changed["spec"]["completions"] = json!(2);
        let errs: Vec<String> = job_rules(&changed, Some(&j))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            ["spec.completions: Invalid value: 2: field is immutable"]
        );
    }

    #[test]
    fn a_job_restarting_always_is_refused() {
        let mut j = job();
        j["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
        default_job(&mut j).unwrap();
        let errs: Vec<String> = job_rules(&j, None)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errs,
            [
                "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
            ]
        );
    }

    #[test]
    fn index_intervals_parse_as_upstream() {
        assert_eq!(indexes_format("0,2-4", 5), Ok(4));
        assert_eq!(
            indexes_format("3,1", 5),
            Err("non-increasing order, previous: 3, current: 1".to_owned())
        );
        assert_eq!(
            indexes_format("7", 5),
            Err("too large index: \"7\"".to_owned())
        );
    }
}
