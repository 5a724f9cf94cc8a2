//! The pod status a kubelet reports: its containers stepped by the runtime ([`Runtime`]), init
//! containers first, then the phase and conditions computed from them.
//!
//! Upstream: `pkg/kubelet/kubelet_pods.go` (`generateAPIPodStatus`, `getPhase` without the
//! alpha `ContainerRestartRules`, `convertToAPIContainerStatuses`' default waiting reasons
//! `ContainerCreating` and `PodInitializing`), `pkg/kubelet/status/generate.go`
//! (`GenerateContainersReadyCondition`, `GeneratePodReadyCondition` with `readinessGates`,
//! `GeneratePodInitializedCondition`) and `podutil.UpdatePodCondition` (a condition's
//! `lastTransitionTime` kept while its status stays).

use jiff::Timestamp;
use serde_json::{Value, json};

use super::faults::{ContainerEvent, Role, Runtime, container_status};
use crate::object::rfc3339;

/// A pod's next status, when it changes next without a write, and the container events on
/// the way.
#[derive(Debug)]
pub(crate) struct PodStep {
    pub status: Value,
    pub next: Option<Timestamp>,
    pub events: Vec<ContainerEvent>,
}

/// Where the pod runs: its node's IP and its own.
pub(crate) struct Addresses {
    pub host_ip: String,
    pub pod_ip: String,
}

fn list(value: &Value) -> &[Value] {
    value.as_array().map_or(&[], Vec::as_slice)
}

fn status_of<'a>(statuses: &'a Value, name: &Value) -> &'a Value {
    list(statuses)
        .iter()
        .find(|s| s["name"] == *name)
        .unwrap_or(&Value::Null)
}

fn earliest(a: Option<Timestamp>, b: Option<Timestamp>) -> Option<Timestamp> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        _ => a.or(b),
    }
}

/// The status the kubelet reports for `pod` at the runtime's `now`.
pub(crate) fn generate(pod: &Value, runtime: &mut Runtime<'_>, at: &Addresses) -> PodStep {
    let old = &pod["status"];
    if matches!(old["phase"].as_str(), Some("Succeeded" | "Failed")) {
        return PodStep {
            status: old.clone(),
            next: None,
            events: Vec::new(),
        };
    }
    let spec = &pod["spec"];
    let inits = list(&spec["initContainers"]);
    let apps = list(&spec["containers"]);
    let stamp = rfc3339(runtime.now);
    let mut status = old.clone();
    status["hostIP"] = json!(at.host_ip);
    status["hostIPs"] = json!([{"ip": at.host_ip}]);
    let mut step = PodStep {
        status: Value::Null,
        next: None,
        events: Vec::new(),
    };
    let sandbox = !old["startTime"].is_null();
    let (init_statuses, app_statuses) = if sandbox {
        status["podIP"] = json!(at.pod_ip);
        status["podIPs"] = json!([{"ip": at.pod_ip}]);
        step_containers(spec, old, runtime, &mut step)
    } else {
        // First sight: the sandbox and containers are being created; they start in the next
        // sync.
        status["startTime"] = json!(stamp);
        step.next = Some(runtime.now);
        let reason = if inits.is_empty() {
            "ContainerCreating"
        } else {
            "PodInitializing"
        };
        let waiting = |c: &Value| container_status(c, json!({"waiting": {"reason": reason}}), 0);
        (
            inits.iter().map(waiting).collect(),
            apps.iter().map(waiting).collect(),
        )
    };
    let initialized = is_initialized(inits, &init_statuses, &app_statuses);
    let phase = phase(spec, &init_statuses, &app_statuses, initialized);
    status["phase"] = json!(phase);
    if !inits.is_empty() {
        status["initContainerStatuses"] = Value::Array(init_statuses.clone());
    }
    status["containerStatuses"] = Value::Array(app_statuses.clone());
    let conditions = conditions(pod, phase, sandbox, &init_statuses, &app_statuses);
    set_conditions(&mut status, &stamp, &conditions);
    if matches!(phase, "Succeeded" | "Failed") {
        step.next = None;
    }
    step.status = status;
    step
}

/// Steps the init containers in order (each after the previous completed, or started for a
/// sidecar), then, once they are done, every container.
fn step_containers(
    spec: &Value,
    old: &Value,
    runtime: &mut Runtime<'_>,
    step: &mut PodStep,
) -> (Vec<Value>, Vec<Value>) {
    let mut blocked = false;
    let mut init_statuses = Vec::new();
    for container in list(&spec["initContainers"]) {
        let previous = status_of(&old["initContainerStatuses"], &container["name"]);
        let role = Role::of(container, true);
        if blocked || (role == Role::Init && completed(previous)) {
            init_statuses.push(previous.clone());
            continue;
        }
        let next = runtime.advance(container, role, previous);
        step.next = earliest(step.next, next.next);
        step.events.extend(next.events);
        blocked = match role {
            Role::Sidecar => next.status["started"] != true,
            _ => !completed(&next.status),
        };
        init_statuses.push(next.status);
    }
    let app_statuses = list(&spec["containers"])
        .iter()
        .map(|container| {
            let previous = status_of(&old["containerStatuses"], &container["name"]);
            if blocked && !has_started(previous) {
                return previous.clone();
            }
            let next = runtime.advance(container, Role::App, previous);
            step.next = earliest(step.next, next.next);
            step.events.extend(next.events);
            next.status
        })
        .collect();
    (init_statuses, app_statuses)
}

/// An init container that ran to completion.
fn completed(status: &Value) -> bool {
    status["state"]["terminated"]["exitCode"] == 0
}

/// A container that ran at some point (`HasAnyRegularContainerStarted`, by its states).
fn has_started(status: &Value) -> bool {
    status["state"]["running"].is_object()
        || status["state"]["terminated"].is_object()
        || status["lastState"]["terminated"].is_object()
}

fn is_initialized(inits: &[Value], init_statuses: &[Value], app_statuses: &[Value]) -> bool {
    incomplete_inits(inits, init_statuses).is_empty() || app_statuses.iter().any(has_started)
}

/// `isInitContainerInitialized` over the init containers: those not yet ready (a sidecar:
/// not started).
fn incomplete_inits(inits: &[Value], statuses: &[Value]) -> Vec<String> {
    inits
        .iter()
        .zip(statuses)
        .filter(|(c, s)| match Role::of(c, true) {
            Role::Sidecar => s["started"] != true,
            _ => s["ready"] != true,
        })
        .filter_map(|(c, _)| c["name"].as_str().map(str::to_owned))
        .collect()
}

/// `getPhase`.
fn phase(
    spec: &Value,
    init_statuses: &[Value],
    app_statuses: &[Value],
    initialized: bool,
) -> &'static str {
    let restart_policy = spec["restartPolicy"].as_str().unwrap_or("Always");
    let last_exit = |s: &Value| s["lastState"]["terminated"]["exitCode"].as_i64();
    let (mut pending_init, mut pending_sidecars, mut failed_init) = (0, 0, 0);
    let (mut running, mut waiting, mut stopped, mut succeeded) = (0, 0, 0, 0);
    for (container, s) in list(&spec["initContainers"]).iter().zip(init_statuses) {
        let state = &s["state"];
        if Role::of(container, true) == Role::Sidecar {
            if state["running"].is_object() {
                pending_sidecars += usize::from(s["started"] != true);
                running += 1;
            } else if state["waiting"].is_object() && last_exit(s).is_none() {
                pending_sidecars += 1;
                waiting += 1;
            }
        } else if let Some(code) = state["terminated"]["exitCode"].as_i64() {
            failed_init += usize::from(code != 0);
        } else if let Some(code) = last_exit(s).filter(|_| state["waiting"].is_object()) {
            failed_init += usize::from(code != 0);
        } else {
            pending_init += 1;
        }
    }
    for s in app_statuses {
        let state = &s["state"];
        if state["running"].is_object() {
            running += 1;
        } else if let Some(code) = state["terminated"]["exitCode"].as_i64() {
            stopped += 1;
            succeeded += usize::from(code == 0);
        } else if last_exit(s).is_some() {
            stopped += 1;
        } else {
            waiting += 1;
        }
    }
    if failed_init > 0 && restart_policy == "Never" {
        return "Failed";
    }
    if pending_init > 0 || (pending_sidecars > 0 && !initialized) || waiting > 0 {
        "Pending"
    } else if running > 0 {
        "Running"
    } else if stopped > 0 {
        match restart_policy {
            "Always" => "Running",
            _ if stopped == succeeded => "Succeeded",
            "Never" => "Failed",
            _ => "Running",
        }
    } else {
        "Pending"
    }
}

/// A pod condition the kubelet owns.
struct Condition {
    type_: &'static str,
    status: bool,
    reason: &'static str,
    message: String,
}

impl Condition {
    fn new(type_: &'static str, status: bool) -> Self {
        Self {
            type_,
            status,
            reason: "",
            message: String::new(),
        }
    }

    fn why(mut self, reason: &'static str, message: String) -> Self {
        self.reason = reason;
        self.message = message;
        self
    }
}

/// Go's `%s` of a `[]string`: `[a b]`.
fn go_list(names: &[String]) -> String {
    format!("[{}]", names.join(" "))
}

fn conditions(
    pod: &Value,
    phase: &str,
    sandbox: bool,
    init_statuses: &[Value],
    app_statuses: &[Value],
) -> Vec<Condition> {
    let spec = &pod["spec"];
    let inits = list(&spec["initContainers"]);
    let terminal = matches!(phase, "Succeeded" | "Failed");
    let incomplete = incomplete_inits(inits, init_statuses);
    let initialized = if phase == "Succeeded" {
        Condition::new("Initialized", true).why("PodCompleted", String::new())
    } else if incomplete.is_empty() || app_statuses.iter().any(has_started) {
        Condition::new("Initialized", true)
    } else {
        let message = format!(
            "containers with incomplete status: {}",
            go_list(&incomplete)
        );
        Condition::new("Initialized", false).why("ContainersNotInitialized", message)
    };
    let unready: Vec<String> = inits
        .iter()
        .zip(init_statuses)
        .filter(|(c, _)| Role::of(c, true) == Role::Sidecar)
        .map(|(_, s)| s)
        .chain(app_statuses)
        .filter(|s| s["ready"] != true)
        .filter_map(|s| s["name"].as_str().map(str::to_owned))
        .collect();
    let containers_ready = match phase {
        "Failed" => Condition::new("ContainersReady", false).why("PodFailed", String::new()),
        "Succeeded" => Condition::new("ContainersReady", false).why("PodCompleted", String::new()),
        _ if !unready.is_empty() => {
            let message = format!("containers with unready status: {}", go_list(&unready));
            Condition::new("ContainersReady", false).why("ContainersNotReady", message)
        }
        _ => Condition::new("ContainersReady", true),
    };
    let ready = if containers_ready.status {
        readiness_gates(pod)
    } else {
        Condition::new("Ready", false)
            .why(containers_ready.reason, containers_ready.message.clone())
    };
    vec![
        Condition::new("PodReadyToStartContainers", sandbox && !terminal),
        initialized,
        ready,
        containers_ready,
    ]
}

/// `GeneratePodReadyCondition` once the containers are ready: `True` when every readiness
/// gate's condition is.
fn readiness_gates(pod: &Value) -> Condition {
    let conditions = list(&pod["status"]["conditions"]);
    let unready: Vec<String> = list(&pod["spec"]["readinessGates"])
        .iter()
        .filter_map(|gate| {
            let type_ = gate["conditionType"].as_str().unwrap_or_default();
            match conditions.iter().find(|c| c["type"] == type_) {
                None => Some(format!(
                    "corresponding condition of pod readiness gate \"{type_}\" does not exist."
                )),
                Some(c) if c["status"] != "True" => Some(format!(
                    "the status of pod readiness gate \"{type_}\" is not \"True\", but {}",
                    c["status"].as_str().unwrap_or_default()
                )),
                Some(_) => None,
            }
        })
        .collect();
    if unready.is_empty() {
        Condition::new("Ready", true)
    } else {
        Condition::new("Ready", false).why("ReadinessGatesNotReady", unready.join(", "))
    }
}

/// Sets the conditions the kubelet owns, keeping each one's `lastTransitionTime` while its
/// status stays (`podutil.UpdatePodCondition`), and the others (`PodScheduled`, readiness
/// gates', `DisruptionTarget`) as they are.
fn set_conditions(status: &mut Value, now: &str, wanted: &[Condition]) {
    let old = list(&status["conditions"]).to_vec();
    let mut conditions: Vec<Value> = old
        .iter()
        .filter(|c| !wanted.iter().any(|w| c["type"] == w.type_))
        .cloned()
        .collect();
    for want in wanted {
        let value = if want.status { "True" } else { "False" };
        let since = old
            .iter()
            .find(|c| c["type"] == want.type_)
            .filter(|c| c["status"] == value)
            .and_then(|c| c["lastTransitionTime"].as_str())
            .unwrap_or(now);
        let mut condition = json!({"type": want.type_, "status": value, "lastProbeTime": null,
                                   "lastTransitionTime": since});
        if !want.reason.is_empty() {
            condition["reason"] = json!(want.reason);
        }
        if !want.message.is_empty() {
            condition["message"] = json!(want.message);
        }
        conditions.push(condition);
    }
    conditions.sort_by_key(|c| condition_order(c["type"].as_str().unwrap_or_default()));
    status["conditions"] = Value::Array(conditions);
}

/// The order a kubelet lists pod conditions in.
fn condition_order(type_: &str) -> usize {
    [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    .iter()
    .position(|t| *t == type_)
    .unwrap_or(usize::MAX)
}
