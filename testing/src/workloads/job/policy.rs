//! A Job's `podFailurePolicy` (`pod_failure_policy.go`: the first rule whose exit codes or pod
//! conditions match a failed pod decides: `FailJob`, `Ignore` (not counted), `Count`) and
//! `successPolicy` (`success_policy.go`: an Indexed Job succeeds once the indexes, or enough of
//! them, of a rule succeeded).

use serde_json::Value;

use super::indexes::Intervals;
use super::{completions, is_pod_failed};

/// A rule that matched a failed pod: its action and, for `FailJob`, the message.
struct Matched {
    action: String,
    message: Option<String>,
}

/// `matchPodFailurePolicy` for a failed `pod`.
fn match_policy(job: &Value, pod: &Value) -> Option<Matched> {
    let rules = job["spec"]["podFailurePolicy"]["rules"].as_array()?;
    let meta = &pod["metadata"];
    let (namespace, name) = (
        meta["namespace"].as_str().unwrap_or_default(),
        meta["name"].as_str().unwrap_or_default(),
    );
    for (index, rule) in rules.iter().enumerate() {
        let action = rule["action"].as_str().unwrap_or_default();
        let message = if rule["onExitCodes"].is_object() {
            let Some((container, code)) = match_exit_codes(&pod["status"], &rule["onExitCodes"])
            else {
                continue;
            };
            format!(
                "Container {container} for pod {namespace}/{name} failed with exit code {code} matching {action} rule at index {index}"
            )
        } else if let Some(patterns) = rule["onPodConditions"].as_array() {
            let Some(condition) = match_conditions(&pod["status"], patterns) else {
                continue;
            };
            format!(
                "Pod {namespace}/{name} has condition {condition} matching {action} rule at index {index}"
            )
        } else {
            continue;
        };
        match action {
            "Ignore" | "Count" | "FailIndex" => {
                return Some(Matched {
                    action: action.to_string(),
                    message: None,
                });
            }
            "FailJob" => {
                return Some(Matched {
                    action: action.to_string(),
                    message: Some(message),
                });
            }
            _ => {}
        }
    }
    None
}

/// `matchOnExitCodes`: a terminated container (then init container) with a non-zero exit code
/// the requirement's operator accepts.
fn match_exit_codes(status: &Value, requirement: &Value) -> Option<(String, i64)> {
    let values: Vec<i64> = requirement["values"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_i64)
        .collect();
    let wanted_name = requirement["containerName"].as_str();
    ["containerStatuses", "initContainerStatuses"]
        .iter()
        .flat_map(|list| status[*list].as_array().into_iter().flatten())
        .find_map(|c| {
            let code = c["state"]["terminated"]["exitCode"].as_i64()?;
            let name = c["name"].as_str().unwrap_or_default();
            let operator_matches = match requirement["operator"].as_str() {
                Some("In") => values.contains(&code),
                Some("NotIn") => !values.contains(&code),
                _ => false,
            };
            (wanted_name.is_none_or(|w| w == name) && code != 0 && operator_matches)
                .then(|| (name.to_string(), code))
        })
}

/// `matchOnPodConditions`: the type of the first pod condition a pattern matches.
fn match_conditions(status: &Value, patterns: &[Value]) -> Option<String> {
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| {
            patterns
                .iter()
                .any(|p| p["type"] == c["type"] && p["status"] == c["status"])
        })
        .and_then(|c| c["type"].as_str().map(str::to_owned))
}

/// Whether a failed pod counts towards the backoff limit (not `Ignore`d).
pub(super) fn counts_failure(job: &Value, pod: &Value) -> bool {
    match_policy(job, pod).is_none_or(|m| m.action != "Ignore")
}

/// `getFailJobMessage`: the message of the first failed pod a `FailJob` rule matches.
pub(super) fn fail_job_message(job: &Value, pods: &[Value]) -> Option<String> {
    job["spec"]["podFailurePolicy"].as_object()?;
    pods.iter()
        .filter(|p| is_pod_failed(p, job))
        .find_map(|p| match_policy(job, p).and_then(|m| m.message))
}

/// `matchSuccessPolicy`: `Matched rules at index <i>` for the first rule the succeeded indexes
/// satisfy.
pub(super) fn match_success_policy(job: &Value, succeeded: &Intervals) -> Option<String> {
    let rules = job["spec"]["successPolicy"]["rules"].as_array()?;
    if succeeded.0.is_empty() {
        return None;
    }
    let completions = completions(job).unwrap_or_default();
    rules.iter().enumerate().find_map(|(index, rule)| {
        let count = rule["succeededCount"].as_i64();
        let matched = match rule["succeededIndexes"].as_str() {
            Some(text) => {
                let required = Intervals::parse(text, completions);
                if required.0.is_empty() {
                    return None;
                }
                let contained = overlap(&required, succeeded);
                contained == required.total() || count.is_some_and(|c| contained >= c)
            }
            None => count.is_some_and(|c| succeeded.total() >= c),
        };
        matched.then(|| format!("Matched rules at index {index}"))
    })
}

/// How many indexes of `a` are in `b`.
fn overlap(a: &Intervals, b: &Intervals) -> i64 {
    a.0.iter()
        .flat_map(|&(af, al)| {
            b.0.iter()
                .map(move |&(bf, bl)| (al.min(bl) - af.max(bf) + 1).max(0))
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn failed_pod(code: i64) -> Value {
        json!({"metadata": {"namespace": "ns", "name": "p"},
               "status": {"phase": "Failed", "containerStatuses": [
                   {"name": "main", "state": {"terminated": {"exitCode": code}}}]}})
    }

    #[test]
    fn the_first_matching_failure_rule_decides() {
        // `TestMatchPodFailurePolicy`.
        let job = json!({"spec": {"podFailurePolicy": {"rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1]}},
        ]}}});
        assert_eq!(
            fail_job_message(&job, &[failed_pod(42)]).as_deref(),
            Some(
                "Container main for pod ns/p failed with exit code 42 matching FailJob rule at index 1"
            )
        );
        assert_eq!(fail_job_message(&job, &[failed_pod(1)]), None);
        assert!(counts_failure(&job, &failed_pod(3)));
        let mut disrupted = failed_pod(1);
        disrupted["status"]["conditions"] = json!([{"type": "DisruptionTarget", "status": "True"}]);
        assert!(!counts_failure(&job, &disrupted));
        assert!(counts_failure(&json!({"spec": {}}), &failed_pod(1)));
    }

    #[test]
    fn success_rules_match_indexes_or_counts() {
        // `TestMatchSuccessPolicy`.
        let job =
            |rules: Value| json!({"spec": {"completions": 10, "successPolicy": {"rules": rules}}});
        let succeeded = Intervals(vec![(0, 2), (5, 5)]);
        let by_indexes = job(json!([{"succeededIndexes": "0-2"}]));
        assert_eq!(
            match_success_policy(&by_indexes, &succeeded).as_deref(),
            Some("Matched rules at index 0")
        );
        let partial = job(
            json!([{"succeededIndexes": "4-6"}, {"succeededIndexes": "1-6", "succeededCount": 3}]),
        );
        assert_eq!(
            match_success_policy(&partial, &succeeded).as_deref(),
            Some("Matched rules at index 1")
        );
        let count = job(json!([{"succeededCount": 5}]));
        assert_eq!(match_success_policy(&count, &succeeded), None);
        assert_eq!(match_success_policy(&json!({"spec": {}}), &succeeded), None);
    }
}
