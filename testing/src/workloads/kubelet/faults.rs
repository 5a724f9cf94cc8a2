//! A kubelet's container runtime, one step at a time, with the faults a test declares
//! ([`FaultKind`]): how a container is pulled, started, restarted and backed off, worded as
//! kubelet words it.
//!
//! Upstream: `pkg/kubelet/images/image_manager.go` (`EnsureImageExists`: the `Pulling`,
//! `Pulled`, `Failed` and `BackOff` events, `ErrImagePull` then `ImagePullBackOff` with
//! `Back-off pulling image "x": ErrImagePull: <error>`), `pkg/kubelet/images/types.go`,
//! `pkg/kubelet/kuberuntime/kuberuntime_manager.go` (`doBackOff`: `CrashLoopBackOff`,
//! `back-off 10s restarting failed container=app pod=web_ns(uid)`),
//! `pkg/kubelet/kuberuntime/kuberuntime_container.go` (`Created`, `Started`, `Error: …`),
//! `pkg/kubelet/container/sync_result.go`, and client-go's `flowcontrol.Backoff` (10 s doubling
//! to 5 min, for image pulls and restarts alike; an entry unused for 10 min starts over).
//!
//! The runtime is deterministic: a pull takes no time, a crashing container exits as it
//! starts, and a back-off ends exactly when its period does (kubelet's pod worker resyncs
//! within seconds of it).

use std::collections::{BTreeMap, BTreeSet};

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::object::rfc3339;
use crate::workloads::FaultKind;

/// The first back-off period (`initialCrashLoopBackOff`, `imageBackOffPeriod`).
const INITIAL_BACKOFF: SignedDuration = SignedDuration::from_secs(10);
/// The longest (`MaxContainerBackOff`, `MaxImageBackOff`).
const MAX_BACKOFF: SignedDuration = SignedDuration::from_secs(300);
/// An entry older than this starts over (`HasExpiredFunc`: 600 s, twice the maximum).
const BACKOFF_EXPIRY: SignedDuration = SignedDuration::from_secs(600);

/// client-go's `flowcontrol.Backoff`: per key, the current period and when it was last
/// stepped.
#[derive(Debug, Default, Clone)]
pub(crate) struct Backoff {
    entries: BTreeMap<String, (SignedDuration, Timestamp)>,
}

impl Backoff {
    fn live(&self, id: &str, event_time: Timestamp) -> Option<(SignedDuration, Timestamp)> {
        self.entries
            .get(id)
            .copied()
            .filter(|(_, last)| event_time.duration_since(*last) <= BACKOFF_EXPIRY)
    }

    /// `Next`: the first period, or the last one doubled (up to the maximum).
    pub(crate) fn next(&mut self, id: &str, event_time: Timestamp) {
        let period = match self.live(id, event_time) {
            Some((period, _)) => (period * 2).min(MAX_BACKOFF),
            None => INITIAL_BACKOFF,
        };
        self.entries.insert(id.to_owned(), (period, event_time));
    }

    /// `Get`: the current period (zero without an entry).
    pub(crate) fn get(&self, id: &str) -> SignedDuration {
        self.entries.get(id).map_or(SignedDuration::ZERO, |e| e.0)
    }

    /// `IsInBackOffSince`: when the back-off that started at `event_time` ends, if after
    /// `now`.
    pub(crate) fn in_backoff_since(
        &self,
        id: &str,
        event_time: Timestamp,
        now: Timestamp,
    ) -> Option<Timestamp> {
        let (period, _) = self.live(id, event_time)?;
        let end = event_time + period;
        (now < end).then_some(end)
    }

    /// `IsInBackOffSinceUpdate`: when the back-off from the last step ends, if after `now`.
    pub(crate) fn in_backoff_since_update(&self, id: &str, now: Timestamp) -> Option<Timestamp> {
        let (period, last) = self.live(id, now)?;
        let end = last + period;
        (now < end).then_some(end)
    }
}

/// A Go `time.Duration` of whole seconds as `String()` prints it (`10s`, `2m40s`, `5m0s`).
pub(crate) fn go_duration(duration: SignedDuration) -> String {
    let secs = duration.as_secs();
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m{s}s"),
        _ => format!("{h}h{m}m{s}s"),
    }
}

/// `applyDefaultImageTag`: `:latest` for an image without a tag or digest.
pub(crate) fn with_default_tag(image: &str) -> String {
    let last = image.rsplit('/').next().unwrap_or(image);
    if last.contains(':') || image.contains('@') {
        image.to_owned()
    } else {
        format!("{image}:latest")
    }
}

/// The fully qualified reference containerd resolves (`docker.io/library/` for an official
/// image's short name, `docker.io/` for a user's).
pub(crate) fn normalized_reference(image: &str) -> String {
    let image = with_default_tag(image);
    match image.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => image,
        Some(_) => format!("docker.io/{image}"),
        None => format!("docker.io/library/{image}"),
    }
}

/// What containerd answers kubelet's `PullImage` for an image its registry does not have.
pub(crate) fn pull_error(image: &str) -> String {
    let reference = normalized_reference(image);
    format!(
        "rpc error: code = NotFound desc = failed to pull and unpack image \"{reference}\": failed to resolve reference \"{reference}\": {reference}: not found"
    )
}

/// An event a kubelet records about a container (`GenerateContainerRef`'s field path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContainerEvent {
    pub field_path: String,
    pub type_: &'static str,
    pub reason: &'static str,
    pub message: String,
}

/// One container's next status, when it changes next without a write, and the events on the
/// way.
#[derive(Debug)]
pub(crate) struct Step {
    pub status: Value,
    pub next: Option<Timestamp>,
    pub events: Vec<ContainerEvent>,
}

/// What a kubelet's runtime knows while it steps one pod's containers.
pub(crate) struct Runtime<'a> {
    pub now: Timestamp,
    /// `name_namespace(uid)` (`format.Pod`).
    pub pod_desc: String,
    /// The pod's `restartPolicy`.
    pub restart_policy: &'a str,
    /// The back-offs of this pod's pulls and restarts.
    pub backoff: &'a mut Backoff,
    /// The images present on the node.
    pub images: &'a mut BTreeSet<String>,
    /// The fault each image plays.
    pub faults: &'a dyn Fn(&str) -> Option<FaultKind>,
}

/// Which list a container is declared in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    Init,
    /// An init container with `restartPolicy: Always`.
    Sidecar,
    App,
}

impl Role {
    pub(crate) fn of(container: &Value, init: bool) -> Self {
        match (init, container["restartPolicy"].as_str()) {
            (false, _) => Self::App,
            (true, Some("Always")) => Self::Sidecar,
            (true, _) => Self::Init,
        }
    }

    fn list(self) -> &'static str {
        match self {
            Self::App => "containers",
            Self::Init | Self::Sidecar => "initContainers",
        }
    }
}

/// A container status as kubelet reports it.
pub(crate) fn container_status(container: &Value, state: Value, restarts: i64) -> Value {
    json!({
        "name": container["name"], "image": container["image"], "imageID": "",
        "ready": false, "restartCount": restarts, "started": false, "state": state,
        "lastState": {},
    })
}

impl Runtime<'_> {
    /// The next step of `container` from its last reported status `old` (`Null` before the
    /// first).
    pub(crate) fn advance(&mut self, container: &Value, role: Role, old: &Value) -> Step {
        let state = &old["state"];
        if state["running"].is_object() {
            return self.running(container, role, old, false);
        }
        if state["terminated"].is_object() {
            return self.exited(container, role, old, &state["terminated"]);
        }
        if state["waiting"]["reason"] == "CrashLoopBackOff" {
            let terminated = old["lastState"]["terminated"].clone();
            return self.exited(container, role, old, &terminated);
        }
        let restarts = old["restartCount"].as_i64().unwrap_or(0);
        let last = if old["lastState"].is_object() {
            old["lastState"].clone()
        } else {
            json!({})
        };
        self.start(container, role, old, restarts, last)
    }

    fn field_path(container: &Value, role: Role) -> String {
        let name = container["name"].as_str().unwrap_or_default();
        format!("spec.{}{{{name}}}", role.list())
    }

    fn event(
        container: &Value,
        role: Role,
        type_: &'static str,
        reason: &'static str,
        message: String,
    ) -> ContainerEvent {
        ContainerEvent {
            field_path: Self::field_path(container, role),
            type_,
            reason,
            message,
        }
    }

    /// A running container: ready once its readiness probe's initial delay passed (never,
    /// for a `NeverReady` image); one that runs to completion (an init container, or any under
    /// `restartPolicy` `Never`/`OnFailure`) exits 0 at the step after it started.
    fn running(&mut self, container: &Value, role: Role, old: &Value, just_started: bool) -> Step {
        let image = container["image"].as_str().unwrap_or_default();
        let never_ready = (self.faults)(image) == Some(FaultKind::NeverReady);
        let completes = !never_ready
            && (role == Role::Init || (role == Role::App && self.restart_policy != "Always"));
        let mut status = old.clone();
        let started_at = old["state"]["running"]["startedAt"].clone();
        if completes && !just_started {
            status["state"] = json!({"terminated": {
                "exitCode": 0, "reason": "Completed", "startedAt": started_at,
                "finishedAt": rfc3339(self.now), "containerID": old["containerID"]}});
            status["ready"] = json!(role == Role::Init);
            status["started"] = json!(false);
            return Step {
                status,
                next: None,
                events: Vec::new(),
            };
        }
        status["started"] = json!(true);
        let since = started_at
            .as_str()
            .and_then(|t| t.parse::<Timestamp>().ok())
            .unwrap_or(self.now);
        let delay = container["readinessProbe"]["initialDelaySeconds"]
            .as_i64()
            .unwrap_or(0);
        let ready_at = since + SignedDuration::from_secs(delay);
        let ready = role != Role::Init
            && !never_ready
            && (container["readinessProbe"].is_null() || self.now >= ready_at);
        status["ready"] = json!(ready);
        let next = if completes {
            Some(self.now)
        } else {
            (!ready && !never_ready).then_some(ready_at)
        };
        Step {
            status,
            next,
            events: Vec::new(),
        }
    }

    /// Whether a container that exited with `exit_code` is started again
    /// (`ShouldContainerBeRestarted`): a sidecar always, an init container after a failure
    /// unless the pod never restarts, a container as the pod's `restartPolicy` says.
    fn restarts(&self, role: Role, exit_code: i64) -> bool {
        match role {
            Role::Sidecar => true,
            Role::Init => self.restart_policy != "Never" && exit_code != 0,
            Role::App => match self.restart_policy {
                "Always" => true,
                "OnFailure" => exit_code != 0,
                _ => false,
            },
        }
    }

    /// An exited container (`terminated` its last state): left so, backed off
    /// (`CrashLoopBackOff`), or started again.
    fn exited(&mut self, container: &Value, role: Role, old: &Value, terminated: &Value) -> Step {
        let exit_code = terminated["exitCode"].as_i64().unwrap_or(0);
        if !self.restarts(role, exit_code) {
            let mut status = old.clone();
            status["ready"] = json!(role == Role::Init && exit_code == 0);
            status["started"] = json!(false);
            return Step {
                status,
                next: None,
                events: Vec::new(),
            };
        }
        let name = container["name"].as_str().unwrap_or_default();
        let key = format!("restart/{name}");
        let finished = terminated["finishedAt"]
            .as_str()
            .and_then(|t| t.parse::<Timestamp>().ok())
            .unwrap_or(self.now);
        let restarts = old["restartCount"].as_i64().unwrap_or(0);
        let last = json!({"terminated": terminated});
        let Some(end) = self.backoff.in_backoff_since(&key, finished, self.now) else {
            self.backoff.next(&key, finished);
            return self.start(container, role, old, restarts + 1, last);
        };
        let mut events = Vec::new();
        if old["state"]["waiting"]["reason"] != "CrashLoopBackOff" {
            events.push(Self::event(
                container,
                role,
                "Warning",
                "BackOff",
                format!(
                    "Back-off restarting failed container {name} in pod {}",
                    self.pod_desc
                ),
            ));
        }
        let message = format!(
            "back-off {} restarting failed container={name} pod={}",
            go_duration(self.backoff.get(&key)),
            self.pod_desc
        );
        let mut status = container_status(
            container,
            json!({"waiting": {"reason": "CrashLoopBackOff", "message": message}}),
            restarts,
        );
        status["lastState"] = last;
        status["imageID"] = old["imageID"].clone();
        status["containerID"] = old["containerID"].clone();
        Step {
            status,
            next: Some(end),
            events,
        }
    }

    /// `EnsureImageExists` then `startContainer`: the container's image pulled (or its pull
    /// failing or backed off), then the container created and started (or exiting at once for
    /// a crashing or OOM-killed image).
    fn start(
        &mut self,
        container: &Value,
        role: Role,
        old: &Value,
        restarts: i64,
        last: Value,
    ) -> Step {
        let requested = container["image"].as_str().unwrap_or_default();
        let image = with_default_tag(requested);
        let fault = (self.faults)(requested);
        let mut events = Vec::new();
        if fault == Some(FaultKind::ImagePull) {
            return self.pull_fails(container, role, old, restarts, last, &image);
        }
        let policy = container["imagePullPolicy"]
            .as_str()
            .unwrap_or("IfNotPresent");
        if policy != "Always" && self.images.contains(&image) {
            let message = format!("Container image \"{requested}\" already present on machine");
            events.push(Self::event(container, role, "Normal", "Pulled", message));
        } else {
            let pulling = format!("Pulling image \"{image}\"");
            events.push(Self::event(container, role, "Normal", "Pulling", pulling));
            let pulled = format!(
                "Successfully pulled image \"{image}\" in 0s (0s including waiting). Image size: 0 bytes."
            );
            events.push(Self::event(container, role, "Normal", "Pulled", pulled));
            self.images.insert(image.clone());
        }
        let name = container["name"].as_str().unwrap_or_default();
        let created = format!("Created container: {name}");
        events.push(Self::event(container, role, "Normal", "Created", created));
        let started = format!("Started container {name}");
        events.push(Self::event(container, role, "Normal", "Started", started));
        let now = rfc3339(self.now);
        let container_id = format!("kubeward://{name}-{restarts}");
        let state = match fault {
            Some(FaultKind::CrashLoop) => json!({"terminated": {"exitCode": 1, "reason": "Error",
                "startedAt": now, "finishedAt": now, "containerID": container_id}}),
            Some(FaultKind::OomKilled) => json!({"terminated": {"exitCode": 137,
                "reason": "OOMKilled", "startedAt": now, "finishedAt": now,
                "containerID": container_id}}),
            _ => json!({"running": {"startedAt": now}}),
        };
        let running = state["running"].is_object();
        let mut status = container_status(container, state, restarts);
        status["lastState"] = last;
        status["imageID"] = json!(format!("docker-pullable://{image}"));
        status["containerID"] = json!(container_id);
        status["started"] = json!(running);
        let mut step = if running {
            self.running(container, role, &status, true)
        } else {
            Step {
                status,
                next: Some(self.now),
                events: Vec::new(),
            }
        };
        events.append(&mut step.events);
        step.events = events;
        step
    }

    /// A pull of an image its registry does not have: `ErrImagePull`, then `ImagePullBackOff`
    /// until the back-off ends and the pull is tried again.
    fn pull_fails(
        &mut self,
        container: &Value,
        role: Role,
        old: &Value,
        restarts: i64,
        last: Value,
        image: &str,
    ) -> Step {
        let key = format!("pull/{image}");
        let error = pull_error(image);
        let mut events = Vec::new();
        let (state, next) = if let Some(end) = self.backoff.in_backoff_since_update(&key, self.now)
        {
            if old["state"]["waiting"]["reason"] != "ImagePullBackOff" {
                let backoff = format!("Back-off pulling image \"{image}\"");
                events.push(Self::event(container, role, "Normal", "BackOff", backoff));
                let failed = "Error: ImagePullBackOff".to_owned();
                events.push(Self::event(container, role, "Warning", "Failed", failed));
            }
            let message = format!("Back-off pulling image \"{image}\": ErrImagePull: {error}");
            (
                json!({"waiting": {"reason": "ImagePullBackOff", "message": message}}),
                Some(end),
            )
        } else {
            let pulling = format!("Pulling image \"{image}\"");
            events.push(Self::event(container, role, "Normal", "Pulling", pulling));
            let failed = format!("Failed to pull image \"{image}\": {error}");
            events.push(Self::event(container, role, "Warning", "Failed", failed));
            let failed = "Error: ErrImagePull".to_owned();
            events.push(Self::event(container, role, "Warning", "Failed", failed));
            self.backoff.next(&key, self.now);
            (
                json!({"waiting": {"reason": "ErrImagePull", "message": error}}),
                Some(self.now),
            )
        };
        let mut status = container_status(container, state, restarts);
        status["lastState"] = last;
        Step {
            status,
            next,
            events,
        }
    }
}
