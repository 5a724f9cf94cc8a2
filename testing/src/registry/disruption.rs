//! What an eviction asks of the pod's PodDisruptionBudgets before the pod is deleted, as
//! `EvictionREST.Create` does (`pkg/registry/core/pod/storage/eviction.go`): terminal, pending
//! and deleting pods are deleted without a look at them; otherwise the one budget matching the
//! pod decides (more than one is a 500), an unready pod may go when the budget is healthy or
//! its `unhealthyPodEvictionPolicy` is `AlwaysAllow`, and a ready one takes one of the budget's
//! allowed disruptions (`checkAndDecrement`), recorded in its status by the server.

use serde_json::{Value, json};

use super::{State, WriteOptions};
use crate::object::{meta_str, rfc3339};
use crate::status::{ApiError, Qualified};
use crate::store::StorageKey;
use crate::validation::apps::{selector_converts, selector_matches};

/// `MaxDisruptedPodSize`: the budget's unconfirmed evictions beyond which it refuses more.
const MAX_DISRUPTED_PODS: usize = 2000;

/// `policyv1.DisruptionBudgetCause`.
const DISRUPTION_BUDGET_CAUSE: &str = "DisruptionBudget";

/// The field manager of the server's own writes of a budget's status (its loopback client).
const SERVER_MANAGER: &str = "kube-apiserver";

/// What the budgets let an eviction do.
pub(super) enum Verdict {
    /// Delete the pod as asked.
    Delete,
    /// Delete the pod only as it was read (its resourceVersion as a precondition).
    DeleteAsRead,
}

fn budgets_key() -> StorageKey {
    StorageKey {
        group: "policy".into(),
        resource: "poddisruptionbudgets".into(),
    }
}

/// `canIgnorePDB`: a terminal, pending or deleting pod.
pub(super) fn ignores_budgets(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed" | "Pending")
    ) || !pod["metadata"]["deletionTimestamp"].is_null()
}

/// `podutil.IsPodReady`.
fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

/// The 429 of an eviction a budget refuses, with its cause.
fn too_many_requests(retry_after: i64, cause: String) -> ApiError {
    let mut details = json!({"causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": cause}]});
    if retry_after > 0 {
        details["retryAfterSeconds"] = json!(retry_after);
    }
    ApiError {
        code: 429,
        reason: "TooManyRequests",
        message: "Cannot evict pod as it would violate the pod's disruption budget.".into(),
        details: Some(details),
    }
}

/// `errors.NewForbidden(policy.Resource("poddisruptionbudget"), name, why)`.
fn forbidden(name: &str, why: &str) -> ApiError {
    let resource = Qualified {
        group: "policy",
        name: "poddisruptionbudget",
    };
    ApiError::forbidden_object(resource, name, why)
}

fn count(status: &Value, field: &str) -> i64 {
    status[field].as_i64().unwrap_or(0)
}

impl State {
    /// The budgets' verdict on evicting `pod` (not [`ignores_budgets`]); with a budget to
    /// decrement, its status is written (unless `dry_run`).
    ///
    /// # Errors
    /// The 500 of a pod with several budgets, the 429 of a budget that allows no disruption
    /// now, the 403 of a budget in a state that allows none.
    pub(super) fn consult_budgets(
        &mut self,
        pod: &Value,
        dry_run: bool,
    ) -> Result<Verdict, ApiError> {
        let ns = meta_str(pod, "namespace").unwrap_or_default();
        let labels = &pod["metadata"]["labels"];
        let matching: Vec<Value> = self
            .store
            .list(&budgets_key(), Some(ns))
            .filter(|b| {
                let selector = &b["spec"]["selector"];
                selector_converts(selector) && selector_matches(selector, labels)
            })
            .cloned()
            .collect();
        let budget = match matching.as_slice() {
            [] => return Ok(Verdict::Delete),
            [budget] => budget.clone(),
            _ => {
                return Err(ApiError {
                    code: 500,
                    reason: "",
                    message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.".into(),
                    details: None,
                });
            }
        };
        let status = &budget["status"];
        if !is_ready(pod) {
            let always = budget["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow";
            let desired = count(status, "desiredHealthy");
            if always || (count(status, "currentHealthy") >= desired && desired > 0) {
                return Ok(Verdict::DeleteAsRead);
            }
        }
        self.check_and_decrement(budget, meta_str(pod, "name").unwrap_or_default(), dry_run)?;
        Ok(Verdict::Delete)
    }

    /// `checkAndDecrement`: one disruption of `budget` taken for the pod `pod_name`, recorded
    /// in its status (`disruptionsAllowed`, `disruptedPods`, the `DisruptionAllowed` condition
    /// once none is left) by the server's status write.
    fn check_and_decrement(
        &mut self,
        mut budget: Value,
        pod_name: &str,
        dry_run: bool,
    ) -> Result<(), ApiError> {
        let name = meta_str(&budget, "name").unwrap_or_default().to_owned();
        let status = &budget["status"];
        let generation = budget["metadata"]["generation"].as_i64().unwrap_or(0);
        if count(status, "observedGeneration") < generation {
            return Err(too_many_requests(
                10,
                format!("The disruption budget {name} is still being processed by the server."),
            ));
        }
        let allowed = count(status, "disruptionsAllowed");
        if allowed < 0 {
            return Err(forbidden(&name, "pdb disruptions allowed is negative"));
        }
        if status["disruptedPods"]
            .as_object()
            .is_some_and(|d| d.len() > MAX_DISRUPTED_PODS)
        {
            return Err(forbidden(
                &name,
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            ));
        }
        if allowed == 0 {
            return Err(too_many_requests(
                0,
                format!(
                    "The disruption budget {name} needs {} healthy pods and has {} currently",
                    count(status, "desiredHealthy"),
                    count(status, "currentHealthy")
                ),
            ));
        }
        if dry_run {
            return Ok(());
        }
        let now = rfc3339(self.now());
        budget["status"]["disruptionsAllowed"] = json!(allowed - 1);
        if allowed - 1 == 0 {
            let observed = count(&budget["status"], "observedGeneration");
            set_condition(&mut budget["status"], observed, &now);
        }
        if !budget["status"]["disruptedPods"].is_object() {
            budget["status"]["disruptedPods"] = json!({});
        }
        budget["status"]["disruptedPods"][pod_name] = json!(now);
        let Some(info) = self.registry.get("policy", "v1", "poddisruptionbudgets") else {
            return Err(ApiError::internal("poddisruptionbudgets are not served"));
        };
        let opts = WriteOptions {
            manager: SERVER_MANAGER.into(),
            ..WriteOptions::default()
        };
        let ns = meta_str(&budget, "namespace")
            .unwrap_or_default()
            .to_owned();
        self.update(&info, Some(&ns), &name, Some("status"), budget, &opts)?;
        Ok(())
    }
}

/// `UpdateDisruptionAllowedCondition` of a budget left with no disruption:
/// `DisruptionAllowed` False for `InsufficientPods` (`apimeta.SetStatusCondition`: the
/// transition time kept when the status does not change).
fn set_condition(status: &mut Value, observed_generation: i64, now: &str) {
    let mut condition = json!({"type": "DisruptionAllowed", "status": "False",
        "observedGeneration": observed_generation, "lastTransitionTime": now,
        "reason": "InsufficientPods", "message": ""});
    if observed_generation == 0 {
        // `observedGeneration` is omitempty.
        if let Some(c) = condition.as_object_mut() {
            c.remove("observedGeneration");
        }
    }
    let mut conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    match conditions
        .iter_mut()
        .find(|c| c["type"] == "DisruptionAllowed")
    {
        Some(existing) => {
            if existing["status"] == "False" {
                condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            *existing = condition;
        }
        None => conditions.push(condition),
    }
    status["conditions"] = json!(conditions);
}
