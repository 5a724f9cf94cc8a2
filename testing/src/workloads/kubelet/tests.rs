//! The kubelet's pod status transitions, stepped by hand on a fixed clock.

use std::collections::BTreeSet;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::faults::{Backoff, Runtime, go_duration, normalized_reference, pull_error};
use super::status::{Addresses, PodStep, generate};
use crate::workloads::{PodFault, Workloads};

fn at(s: &str) -> Timestamp {
    s.parse().unwrap()
}

const T0: &str = "2026-01-01T00:00:00Z";

/// A pod and what its kubelet remembers, stepped by hand.
struct Sim {
    pod: Value,
    world: Workloads,
    backoff: Backoff,
    images: BTreeSet<String>,
    now: Timestamp,
}

impl Sim {
    fn new(spec: Value) -> Self {
        let world = Workloads::new()
            .fault(PodFault::image_pull("missing:*"))
            .fault(PodFault::crash_loop("crash"))
            .fault(PodFault::never_ready("stuck"))
            .fault(PodFault::oom_killed("hog"));
        Self {
            pod: json!({"metadata": {"name": "web", "namespace": "ns", "uid": "u1"},
                        "spec": spec, "status": {"phase": "Pending"}}),
            world,
            backoff: Backoff::default(),
            images: BTreeSet::new(),
            now: at(T0),
        }
    }

    fn step(&mut self) -> PodStep {
        let world = &self.world;
        let faults = |image: &str| world.fault_for(image).map(|f| f.kind);
        let mut runtime = Runtime {
            now: self.now,
            pod_desc: "web_ns(u1)".into(),
            restart_policy: self.pod["spec"]["restartPolicy"]
                .as_str()
                .unwrap_or("Always"),
            backoff: &mut self.backoff,
            images: &mut self.images,
            faults: &faults,
        };
        let addresses = Addresses {
            host_ip: "172.18.0.2".into(),
            pod_ip: "10.244.0.7".into(),
        };
        let step = generate(&self.pod, &mut runtime, &addresses);
        self.pod["status"] = step.status.clone();
        step
    }

    /// Steps until the pod's status stops changing at this time: the last step, with the
    /// events of them all.
    fn settle(&mut self) -> PodStep {
        let mut events = Vec::new();
        loop {
            let before = self.pod["status"].clone();
            let mut step = self.step();
            events.append(&mut step.events);
            if step.status == before && step.next != Some(self.now) {
                step.events = events;
                return step;
            }
        }
    }

    fn advance_to(&mut self, next: Option<Timestamp>) -> PodStep {
        self.now = next.expect("a timer");
        self.settle()
    }

    fn container(&self) -> &Value {
        &self.pod["status"]["containerStatuses"][0]
    }

    fn condition(&self, type_: &str) -> Value {
        self.pod["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == type_)
            .cloned()
            .unwrap_or(Value::Null)
    }
}

fn app(image: &str) -> Value {
    json!({"containers": [{"name": "app", "image": image}]})
}

fn reasons(step: &PodStep) -> Vec<&str> {
    step.events.iter().map(|e| e.reason).collect()
}

#[test]
fn a_pod_is_created_then_runs_then_is_ready_after_its_probe_delay() {
    let mut sim = Sim::new(json!({"containers": [
        {"name": "app", "image": "nginx", "readinessProbe": {"initialDelaySeconds": 5}}]}));
    let first = sim.step();
    assert_eq!(first.status["phase"], "Pending");
    assert_eq!(
        sim.container()["state"]["waiting"]["reason"],
        "ContainerCreating"
    );
    assert_eq!(first.next, Some(sim.now));
    let running = sim.step();
    assert_eq!(running.status["phase"], "Running");
    assert_eq!(
        reasons(&running),
        ["Pulling", "Pulled", "Created", "Started"]
    );
    assert_eq!(running.events[0].message, "Pulling image \"nginx:latest\"");
    assert_eq!(running.events[0].field_path, "spec.containers{app}");
    assert_eq!(running.events[2].message, "Created container: app");
    assert_eq!(running.events[3].message, "Started container app");
    assert_eq!(sim.container()["ready"], false);
    assert_eq!(
        sim.condition("Ready")["message"],
        "containers with unready status: [app]"
    );
    assert_eq!(running.next, Some(at("2026-01-01T00:00:05Z")));
    let ready = sim.advance_to(running.next);
    assert_eq!(sim.container()["ready"], true);
    assert_eq!(sim.condition("Ready")["status"], "True");
    assert_eq!(ready.next, None);
}

#[test]
fn a_pod_that_runs_to_completion_succeeds() {
    let mut sim = Sim::new(json!({"restartPolicy": "Never",
                                  "containers": [{"name": "job", "image": "busybox"}]}));
    sim.step();
    assert_eq!(sim.step().status["phase"], "Running");
    let done = sim.settle();
    assert_eq!(done.status["phase"], "Succeeded");
    assert_eq!(
        sim.container()["state"]["terminated"]["reason"],
        "Completed"
    );
    assert_eq!(sim.condition("Ready")["reason"], "PodCompleted");
    assert_eq!(done.next, None);
}

#[test]
fn an_image_that_does_not_pull_backs_off_doubling() {
    let mut sim = Sim::new(app("missing:v1"));
    sim.step();
    let failed = sim.step();
    let error = "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/missing:v1\": failed to resolve reference \"docker.io/library/missing:v1\": docker.io/library/missing:v1: not found";
    assert_eq!(
        sim.container()["state"]["waiting"]["reason"],
        "ErrImagePull"
    );
    assert_eq!(sim.container()["state"]["waiting"]["message"], error);
    assert_eq!(reasons(&failed), ["Pulling", "Failed", "Failed"]);
    assert_eq!(
        failed.events[1].message,
        format!("Failed to pull image \"missing:v1\": {error}")
    );
    assert_eq!(failed.events[2].message, "Error: ErrImagePull");
    assert_eq!(failed.events[1].type_, "Warning");
    let backing_off = sim.step();
    assert_eq!(
        sim.container()["state"]["waiting"]["reason"],
        "ImagePullBackOff"
    );
    assert_eq!(
        sim.container()["state"]["waiting"]["message"],
        format!("Back-off pulling image \"missing:v1\": ErrImagePull: {error}")
    );
    assert_eq!(reasons(&backing_off), ["BackOff", "Failed"]);
    assert_eq!(backing_off.events[0].type_, "Normal");
    assert_eq!(
        backing_off.events[0].message,
        "Back-off pulling image \"missing:v1\""
    );
    assert_eq!(backing_off.events[1].message, "Error: ImagePullBackOff");
    assert_eq!(backing_off.next, Some(at("2026-01-01T00:00:10Z")));
    assert_eq!(sim.pod["status"]["phase"], "Pending");
    assert_eq!(sim.condition("Ready")["reason"], "ContainersNotReady");
    // Retried when the back-off ends: fails again, then backs off twice as long, up to 5 min.
    let mut next = backing_off.next;
    let mut periods = Vec::new();
    for _ in 0..7 {
        let before = sim.now;
        let step = sim.advance_to(next);
        periods.push(step.next.unwrap().duration_since(sim.now).as_secs());
        assert!(sim.now > before);
        next = step.next;
    }
    assert_eq!(periods, [20, 40, 80, 160, 300, 300, 300]);
}

#[test]
fn a_crashing_container_restarts_with_a_growing_back_off() {
    let mut sim = Sim::new(app("crash"));
    sim.step();
    let first = sim.step();
    assert_eq!(reasons(&first), ["Pulling", "Pulled", "Created", "Started"]);
    assert_eq!(sim.container()["state"]["terminated"]["reason"], "Error");
    assert_eq!(sim.container()["state"]["terminated"]["exitCode"], 1);
    // The first restart is at once; the next ones wait 10 s, 20 s, 40 s, …
    let backing_off = sim.settle();
    let status = sim.container().clone();
    assert_eq!(status["restartCount"], 1);
    assert_eq!(status["state"]["waiting"]["reason"], "CrashLoopBackOff");
    assert_eq!(
        status["state"]["waiting"]["message"],
        "back-off 10s restarting failed container=app pod=web_ns(u1)"
    );
    assert_eq!(status["lastState"]["terminated"]["reason"], "Error");
    assert_eq!(status["ready"], false);
    assert_eq!(sim.pod["status"]["phase"], "Running");
    let backoff = backing_off
        .events
        .iter()
        .find(|e| e.reason == "BackOff")
        .unwrap();
    assert_eq!(backoff.type_, "Warning");
    assert_eq!(
        backoff.message,
        "Back-off restarting failed container app in pod web_ns(u1)"
    );
    assert_eq!(backing_off.next, Some(at("2026-01-01T00:00:10Z")));
    let mut next = backing_off.next;
    let mut seen = Vec::new();
    for _ in 0..6 {
        let step = sim.advance_to(next);
        let c = sim.container();
        seen.push((
            c["restartCount"].as_i64().unwrap(),
            c["state"]["waiting"]["message"]
                .as_str()
                .unwrap()
                .to_owned(),
        ));
        next = step.next;
    }
    let message = |d: &str| format!("back-off {d} restarting failed container=app pod=web_ns(u1)");
    assert_eq!(
        seen,
        [
            (2, message("20s")),
            (3, message("40s")),
            (4, message("1m20s")),
            (5, message("2m40s")),
            (6, message("5m0s")),
            (7, message("5m0s")),
        ]
    );
}

#[test]
fn a_crashing_container_that_is_not_restarted_fails_the_pod() {
    let mut spec = app("crash");
    spec["restartPolicy"] = json!("Never");
    let mut sim = Sim::new(spec);
    let done = sim.settle();
    assert_eq!(sim.pod["status"]["phase"], "Failed");
    assert_eq!(sim.container()["restartCount"], 0);
    assert_eq!(sim.container()["state"]["terminated"]["exitCode"], 1);
    assert_eq!(sim.condition("Ready")["reason"], "PodFailed");
    assert_eq!(
        sim.condition("PodReadyToStartContainers")["status"],
        "False"
    );
    assert_eq!(done.next, None);
}

#[test]
fn an_oom_killed_container_exits_137_and_crash_loops() {
    let mut sim = Sim::new(app("hog"));
    sim.settle();
    let status = sim.container();
    assert_eq!(status["lastState"]["terminated"]["reason"], "OOMKilled");
    assert_eq!(status["lastState"]["terminated"]["exitCode"], 137);
    assert_eq!(status["state"]["waiting"]["reason"], "CrashLoopBackOff");
    assert_eq!(status["restartCount"], 1);
    // Under OnFailure too (137 is a failure).
    let mut spec = app("hog");
    spec["restartPolicy"] = json!("OnFailure");
    let mut sim = Sim::new(spec);
    sim.settle();
    assert_eq!(sim.container()["restartCount"], 1);
    assert_eq!(sim.pod["status"]["phase"], "Running");
}

#[test]
fn a_never_ready_container_runs_unready() {
    let mut sim = Sim::new(app("stuck"));
    let last = sim.settle();
    assert_eq!(sim.pod["status"]["phase"], "Running");
    assert!(sim.container()["state"]["running"].is_object());
    assert_eq!(sim.container()["ready"], false);
    assert_eq!(sim.container()["started"], true);
    let ready = sim.condition("Ready");
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "ContainersNotReady");
    assert_eq!(last.next, None);
}

#[test]
fn init_containers_complete_in_order_before_the_containers_start() {
    let mut sim = Sim::new(json!({
        "initContainers": [{"name": "migrate", "image": "busybox"},
                           {"name": "seed", "image": "busybox"}],
        "containers": [{"name": "app", "image": "nginx"}]}));
    sim.step();
    let init = |sim: &Sim, i: usize| sim.pod["status"]["initContainerStatuses"][i].clone();
    assert_eq!(
        init(&sim, 0)["state"]["waiting"]["reason"],
        "PodInitializing"
    );
    assert_eq!(
        sim.container()["state"]["waiting"]["reason"],
        "PodInitializing"
    );
    let initialized = sim.condition("Initialized");
    assert_eq!(initialized["status"], "False");
    assert_eq!(initialized["reason"], "ContainersNotInitialized");
    assert_eq!(
        initialized["message"],
        "containers with incomplete status: [migrate seed]"
    );
    let started = sim.step();
    assert!(init(&sim, 0)["state"]["running"].is_object());
    assert_eq!(started.events[0].field_path, "spec.initContainers{migrate}");
    assert_eq!(sim.pod["status"]["phase"], "Pending");
    sim.step();
    assert_eq!(init(&sim, 0)["state"]["terminated"]["reason"], "Completed");
    assert_eq!(init(&sim, 0)["ready"], true);
    assert!(init(&sim, 1)["state"]["running"].is_object());
    assert_eq!(
        sim.condition("Initialized")["message"],
        "containers with incomplete status: [seed]"
    );
    sim.settle();
    assert_eq!(sim.condition("Initialized")["status"], "True");
    assert_eq!(sim.pod["status"]["phase"], "Running");
    assert_eq!(sim.condition("Ready")["status"], "True");
}

#[test]
fn a_failing_init_container_crash_loops_or_fails_the_pod() {
    let spec = json!({"initContainers": [{"name": "migrate", "image": "crash"}],
                      "containers": [{"name": "app", "image": "nginx"}]});
    let mut sim = Sim::new(spec.clone());
    sim.settle();
    let init = &sim.pod["status"]["initContainerStatuses"][0];
    assert_eq!(init["state"]["waiting"]["reason"], "CrashLoopBackOff");
    assert_eq!(sim.pod["status"]["phase"], "Pending");
    assert_eq!(
        sim.container()["state"]["waiting"]["reason"],
        "PodInitializing"
    );
    let mut never = spec;
    never["restartPolicy"] = json!("Never");
    let mut sim = Sim::new(never);
    sim.settle();
    assert_eq!(sim.pod["status"]["phase"], "Failed");
}

#[test]
fn readiness_gates_hold_the_pod_unready_until_their_condition_is_true() {
    let mut spec = app("nginx");
    spec["readinessGates"] = json!([{"conditionType": "example.com/lb"}]);
    let mut sim = Sim::new(spec);
    sim.settle();
    assert_eq!(sim.condition("ContainersReady")["status"], "True");
    let ready = sim.condition("Ready");
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "ReadinessGatesNotReady");
    assert_eq!(
        ready["message"],
        "corresponding condition of pod readiness gate \"example.com/lb\" does not exist."
    );
    let conditions = sim.pod["status"]["conditions"].as_array_mut().unwrap();
    conditions.push(json!({"type": "example.com/lb", "status": "False"}));
    sim.settle();
    assert_eq!(
        sim.condition("Ready")["message"],
        "the status of pod readiness gate \"example.com/lb\" is not \"True\", but False"
    );
    let conditions = sim.pod["status"]["conditions"].as_array_mut().unwrap();
    let gate = conditions
        .iter_mut()
        .find(|c| c["type"] == "example.com/lb")
        .unwrap();
    gate["status"] = json!("True");
    sim.settle();
    assert_eq!(sim.condition("Ready")["status"], "True");
    assert_eq!(sim.condition("example.com/lb")["status"], "True");
}

#[test]
fn an_image_present_on_the_node_is_not_pulled_again() {
    let mut sim = Sim::new(app("nginx:1.27"));
    sim.images.insert("nginx:1.27".into());
    sim.step();
    let started = sim.step();
    assert_eq!(reasons(&started), ["Pulled", "Created", "Started"]);
    assert_eq!(
        started.events[0].message,
        "Container image \"nginx:1.27\" already present on machine"
    );
}

#[test]
fn image_references_are_normalized_as_containerd_resolves_them() {
    for (image, reference) in [
        ("nginx", "docker.io/library/nginx:latest"),
        ("nginx:1.27", "docker.io/library/nginx:1.27"),
        ("user/app:v1", "docker.io/user/app:v1"),
        ("registry.example/broken:v2", "registry.example/broken:v2"),
        ("localhost:5000/app", "localhost:5000/app:latest"),
        ("localhost/app", "localhost/app:latest"),
    ] {
        assert_eq!(normalized_reference(image), reference, "{image}");
    }
    assert!(pull_error("x").ends_with("docker.io/library/x:latest: not found"));
}

#[test]
fn back_off_periods_double_to_the_maximum_and_expire() {
    let mut backoff = Backoff::default();
    let t0 = at(T0);
    assert_eq!(backoff.in_backoff_since_update("k", t0), None);
    backoff.next("k", t0);
    assert_eq!(backoff.get("k"), SignedDuration::from_secs(10));
    assert_eq!(
        backoff.in_backoff_since_update("k", t0),
        Some(at("2026-01-01T00:00:10Z"))
    );
    assert_eq!(
        backoff.in_backoff_since_update("k", at("2026-01-01T00:00:10Z")),
        None
    );
    for _ in 0..10 {
        backoff.next("k", t0);
    }
    assert_eq!(backoff.get("k"), SignedDuration::from_secs(300));
    // Unused for more than 10 minutes: starts over.
    backoff.next("k", at("2026-01-01T00:10:01Z"));
    assert_eq!(backoff.get("k"), SignedDuration::from_secs(10));
    let durations: Vec<String> = [10, 80, 160, 300, 3700]
        .into_iter()
        .map(|s| go_duration(SignedDuration::from_secs(s)))
        .collect();
    assert_eq!(durations, ["10s", "1m20s", "2m40s", "5m0s", "1h1m40s"]);
}
