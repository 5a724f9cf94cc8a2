//! The KWOK Stages that play a simulated cluster's kubelets on the real tier: the committed
//! `testing/kwok/stages.yaml` (the embedded kubelet's sequence, `workloads/kubelet/`), and a
//! stage per declared [`PodFault`] that KWOK can play.
//!
//! KWOK (`sigs.k8s.io/kwok` v0.8.0) selects a stage by jq expressions over the object
//! (`matchExpressions`, `In` true when any result is one of the values), so a fault matches
//! its containers' exact images (`.spec.containers.[].image`); a pattern with `*` cannot be
//! expressed and is refused. [`PodFault::never_ready`]: the container runs and is never ready
//! (nor, under `restartPolicy` Never/OnFailure, completes). [`PodFault::image_pull`] is played as
//! `pkg/kubelet/images/image_manager.go` reports it and the embedded kubelet plays it
//! (`workloads/kubelet/faults.rs`, whose [`pull_error`] is the message): the container waits
//! `ErrImagePull` with the pull error (events `Pulling`, `Failed` "Failed to pull image ...",
//! `Failed` "Error: ErrImagePull"), then `ImagePullBackOff` with `Back-off pulling image
//! "<image>": ErrImagePull: <error>` (events `BackOff`, `Failed` "Error: ImagePullBackOff").
//! Simplified: it then stays in `ImagePullBackOff`, where the kubelet retries the pull when
//! each back-off (10 s, doubling) ends and shows `ErrImagePull` again for a moment.
//! [`PodFault::crash_loop`] and [`PodFault::oom_killed`] are played as the embedded runtime
//! plays them: the container exits as it starts (`Error` with exit code 1, or `OOMKilled` with
//! 137) and is restarted once at once (restart count 1, the first end its `lastState`), then
//! waits `CrashLoopBackOff` ("back-off 10s restarting failed container=app pod=web_ns(uid)"),
//! starts again when the back-off ends and exits, each back-off twice the last (10 s to 5 min,
//! from the restart count, in the stage's delay and message); under `restartPolicy: Never` the
//! container is not restarted and the pod fails (`PodFailed`). Their events (`BackOff`) are not
//! recorded: a stage's events are fixed text, and these name the pod. A fault stage writes the
//! status of every declared fault in the pod, so a pod with two faulty images gets the same
//! status whichever of their stages KWOK picks (only the events name another image).

use serde_json::{Value, json};

use crate::ServerError;
use crate::workloads::{FaultKind, PodFault, Workloads, pull_error};

/// The stages for every pod, as committed.
const STAGES: &str = include_str!("../../kwok/stages.yaml");

/// The status a fault stage writes where pod-running would start the containers: `ERRORS` is
/// replaced by a template dict of the image-pull faults' images to their pull errors, `STUCK`
/// by a template list of the never-ready images.
const FAULT_TEMPLATE: &str = r#"{{ $now := Now }}
{{ $errors := ERRORS }}
{{ $stuck := STUCK }}
{{ $crashes := CRASHES }}
{{ $never := eq (or .spec.restartPolicy "Always") "Never" }}
{{ $unready := list }}
{{ $running := 0 }}
{{ $waiting := 0 }}
{{ $failed := 0 }}
{{ range .spec.containers }}
{{ if hasKey $errors .image }}
{{ $unready = append $unready .name }}
{{ $waiting = add1 $waiting }}
{{ else if hasKey $crashes .image }}
{{ $unready = append $unready .name }}
{{ if $never }}{{ $failed = add1 $failed }}{{ else }}{{ $running = add1 $running }}{{ end }}
{{ else }}
{{ $running = add1 $running }}
{{ if or (has .image $stuck) (and .readinessProbe (ne (toString (or .readinessProbe.initialDelaySeconds 0)) "0")) }}
{{ $unready = append $unready .name }}
{{ end }}
{{ end }}
{{ end }}
{{ $phase := "Pending" }}
{{ if gt $running 0 }}{{ $phase = "Running" }}{{ else if and (eq $waiting 0) (gt $failed 0) }}{{ $phase = "Failed" }}{{ end }}
{{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
phase: {{ $phase }}
{{ with $podIPs }}
podIP: {{ index . 0 | Quote }}
podIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
conditions:
{{ if eq $phase "Failed" }}
- type: PodReadyToStartContainers
  status: "False"
  lastProbeTime: null
  lastTransitionTime: {{ $now | Quote }}
{{ range list "Ready" "ContainersReady" }}
- type: {{ . }}
  status: "False"
  reason: PodFailed
  message: null
{{ end }}
{{ else }}
- type: PodReadyToStartContainers
  status: "True"
  lastProbeTime: null
  lastTransitionTime: {{ $now | Quote }}
{{ range list "Ready" "ContainersReady" }}
- type: {{ . }}
  status: "False"
  reason: ContainersNotReady
  message: {{ printf "containers with unready status: [%s]" (join " " $unready) | Quote }}
{{ end }}
{{ end }}
containerStatuses:
{{ range .spec.containers }}
{{ if hasKey $errors .image }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: ""
  ready: false
  restartCount: 0
  started: false
  state:
    waiting:
      reason: ErrImagePull
      message: {{ get $errors .image | Quote }}
{{ else if hasKey $crashes .image }}
{{ $crash := get $crashes .image }}
{{ $restarts := 1 }}
{{ if $never }}{{ $restarts = 0 }}{{ end }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: {{ printf "docker-pullable://%s" .image | Quote }}
  containerID: {{ printf "kubeward://%s-%d" .name $restarts | Quote }}
  ready: false
  restartCount: {{ $restarts }}
  started: false
{{ if not $never }}
  lastState:
    terminated:
      exitCode: {{ index $crash 1 }}
      reason: {{ index $crash 0 | Quote }}
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
      containerID: {{ printf "kubeward://%s-0" .name | Quote }}
{{ end }}
  state:
    terminated:
      exitCode: {{ index $crash 1 }}
      reason: {{ index $crash 0 | Quote }}
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
      containerID: {{ printf "kubeward://%s-%d" .name $restarts | Quote }}
{{ else }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: {{ printf "docker-pullable://%s" .image | Quote }}
  containerID: {{ printf "kubeward://%s-0" .name | Quote }}
  ready: {{ not (has .name $unready) }}
  restartCount: 0
  started: true
  state:
    running:
      startedAt: {{ $now | Quote }}
{{ end }}
{{ end }}"#;

/// The ImagePullBackOff stage's status for one image, `IMAGE` (a template string).
const BACK_OFF_TEMPLATE: &str = r#"containerStatuses:
{{ range .status.containerStatuses }}
{{ if and (eq .image IMAGE) .state.waiting (eq .state.waiting.reason "ErrImagePull") }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: ""
  ready: false
  restartCount: {{ .restartCount }}
  started: false
  state:
    waiting:
      reason: ImagePullBackOff
      message: {{ printf "Back-off pulling image %q: ErrImagePull: %s" .image .state.waiting.message | Quote }}
{{ else }}
- {{ toJson . }}
{{ end }}
{{ end }}"#;

/// The `CrashLoopBackOff` stage's status for one image, `IMAGE` (a template string): each of
/// its terminated containers waits out the back-off `flowcontrol.Backoff` gives its restart
/// count (10 s, doubling, at most 5 min: the period before its next start), worded as
/// `kuberuntime_manager.go`'s `doBackOff` words it.
const CRASH_BACK_OFF_TEMPLATE: &str = r#"{{ $pod := printf "%s_%s(%s)" .metadata.name .metadata.namespace .metadata.uid }}
containerStatuses:
{{ range .status.containerStatuses }}
{{ if and (eq .image IMAGE) .state.terminated }}
{{ $secs := 10 }}
{{ range until (int (sub (int .restartCount) 1)) }}{{ $secs = mul $secs 2 }}{{ end }}
{{ $secs = min $secs 300 }}
{{ $period := printf "%ds" $secs }}
{{ if ge $secs 60 }}{{ $period = printf "%dm%ds" (div $secs 60) (mod $secs 60) }}{{ end }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: {{ .imageID | Quote }}
  containerID: {{ .containerID | Quote }}
  ready: false
  restartCount: {{ .restartCount }}
  started: false
  lastState:
    terminated: {{ toJson .state.terminated }}
  state:
    waiting:
      reason: CrashLoopBackOff
      message: {{ printf "back-off %s restarting failed container=%s pod=%s" $period .name $pod | Quote }}
{{ else }}
- {{ toJson . }}
{{ end }}
{{ end }}"#;

/// The restart stage's status for one image, `IMAGE` (a template string), whose containers
/// exit as they start with `REASON` and `EXIT`: each container backed off starts again, and
/// exits.
const CRASH_RESTART_TEMPLATE: &str = r#"{{ $now := Now }}
containerStatuses:
{{ range .status.containerStatuses }}
{{ if and (eq .image IMAGE) .state.waiting (eq .state.waiting.reason "CrashLoopBackOff") }}
{{ $restarts := add1 (int .restartCount) }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: {{ .imageID | Quote }}
  containerID: {{ printf "kubeward://%s-%d" .name $restarts | Quote }}
  ready: false
  restartCount: {{ $restarts }}
  started: false
  lastState: {{ toJson .lastState }}
  state:
    terminated:
      exitCode: EXIT
      reason: REASON
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
      containerID: {{ printf "kubeward://%s-%d" .name $restarts | Quote }}
{{ else }}
- {{ toJson . }}
{{ end }}
{{ end }}"#;

/// How long a crashed container of `IMAGE` waits before its restart: the back-off of its
/// restart count, as [`CRASH_BACK_OFF_TEMPLATE`] words it (a jq expression).
const CRASH_DELAY: &str = r#"([.status.containerStatuses[] | select(.image == IMAGE) | .restartCount] | max) as $n | ([10 * pow(2; $n - 1), 300] | min | floor | tostring) + "s""#;

/// The stages KWOK plays for `workloads`: a multi-document YAML stream (the fault stages are
/// JSON documents).
///
/// # Errors
/// For a fault KWOK cannot play: an image pattern with `*`.
pub(crate) fn stages(workloads: &Workloads) -> Result<String, ServerError> {
    let faults = Declared::of(&workloads.faults)?;
    let mut text = STAGES.to_owned();
    for stage in faults.stages() {
        text.push_str("---\n");
        text.push_str(&stage.to_string());
        text.push('\n');
    }
    Ok(text)
}

/// The exact images of the faults KWOK plays, in order, without repeats.
#[derive(Debug, Default)]
struct Declared<'a> {
    pulls: Vec<&'a str>,
    stuck: Vec<&'a str>,
    /// Crash-loop and OOM-kill images, with the reason and exit code of their containers'
    /// end.
    crashes: Vec<(&'a str, &'static str, i64)>,
}

impl<'a> Declared<'a> {
    fn of(faults: &'a [PodFault]) -> Result<Self, ServerError> {
        let mut declared = Self::default();
        for fault in faults {
            if fault.image.contains('*') {
                return Err(ServerError::Unsupported(format!(
                    "{fault:?}: on the real tier a fault names an exact image (KWOK selects \
                     stages by exact values); a pattern with `*` works on the embedded server \
                     only"
                )));
            }
            let images = match fault.kind {
                FaultKind::ImagePull => &mut declared.pulls,
                FaultKind::NeverReady => &mut declared.stuck,
                FaultKind::CrashLoop | FaultKind::OomKilled => {
                    let (reason, exit_code) = match fault.kind {
                        FaultKind::OomKilled => ("OOMKilled", 137),
                        _ => ("Error", 1),
                    };
                    if !declared.crashes.iter().any(|(i, ..)| *i == fault.image) {
                        declared.crashes.push((&fault.image, reason, exit_code));
                    }
                    continue;
                }
            };
            if !images.contains(&fault.image.as_str()) {
                images.push(&fault.image);
            }
        }
        Ok(declared)
    }

    /// Per image-pull image, a stage where pod-running would start the containers (weight 1
    /// wins over its weight 0) and a back-off stage; per never-ready image, such a stage and
    /// one that holds the pod where pod-ready or pod-complete would go on.
    fn stages(&self) -> Vec<Value> {
        let errors = self
            .pulls
            .iter()
            .map(|i| format!("{} {}", template_string(i), template_string(&pull_error(i))))
            .collect::<Vec<_>>()
            .join(" ");
        let stuck = self
            .stuck
            .iter()
            .map(|i| template_string(i))
            .collect::<Vec<_>>()
            .join(" ");
        let crashes = self
            .crashes
            .iter()
            .map(|(i, reason, code)| {
                format!(
                    "{} (list {} {code})",
                    template_string(i),
                    template_string(reason)
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
        let template = FAULT_TEMPLATE
            .replace("ERRORS", &format!("dict {errors}"))
            .replace("STUCK", &format!("list {stuck}"))
            .replace("CRASHES", &format!("dict {crashes}"));
        let mut stages = Vec::new();
        for (index, image) in self.pulls.iter().enumerate() {
            stages.extend(image_pull_stages(index, image, &template));
        }
        for (index, image) in self.stuck.iter().enumerate() {
            stages.extend(never_ready_stages(index, image, &template));
        }
        for (index, crash) in self.crashes.iter().enumerate() {
            stages.extend(crash_stages(index, *crash, &template));
        }
        stages
    }
}

/// A Go template string literal of `text` (a JSON string is one, for image names).
fn template_string(text: &str) -> String {
    Value::from(text).to_string()
}

fn not_deleting() -> Value {
    json!({"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"})
}

/// What selects a pod of `image` whose containers pod-running would start.
fn starting(image: &str) -> Value {
    json!([
        not_deleting(),
        {"key": ".status.phase", "operator": "In", "values": ["Pending"]},
        {"key": ".status.containerStatuses.[].state.waiting.reason", "operator": "In",
         "values": ["ContainerCreating"]},
        {"key": ".spec.containers.[].image", "operator": "In", "values": [image]},
    ])
}

fn image_pull_stages(index: usize, image: &str, template: &str) -> [Value; 2] {
    let quoted = template_string(image);
    let pull = stage(
        &format!("fault-image-pull-{index}"),
        starting(image),
        &[
            ("Normal", "Pulling", format!("Pulling image {quoted}")),
            (
                "Warning",
                "Failed",
                format!("Failed to pull image {quoted}: {}", pull_error(image)),
            ),
            ("Warning", "Failed", "Error: ErrImagePull".to_owned()),
        ],
        Some(template),
    );
    let waiting = format!(
        ".status.containerStatuses.[] | select( .image == {quoted} ) | .state.waiting.reason"
    );
    let back_off = stage(
        &format!("fault-image-pull-back-off-{index}"),
        json!([not_deleting(), {"key": waiting, "operator": "In", "values": ["ErrImagePull"]}]),
        &[
            (
                "Normal",
                "BackOff",
                format!("Back-off pulling image {quoted}"),
            ),
            ("Warning", "Failed", "Error: ImagePullBackOff".to_owned()),
        ],
        Some(&BACK_OFF_TEMPLATE.replace("IMAGE", &quoted)),
    );
    [pull, back_off]
}

fn never_ready_stages(index: usize, image: &str, template: &str) -> [Value; 2] {
    let start = stage(
        &format!("fault-never-ready-{index}"),
        starting(image),
        &[],
        Some(template),
    );
    // Where pod-ready or pod-complete would match: a stage that does nothing.
    let hold = stage(
        &format!("fault-never-ready-hold-{index}"),
        json!([
            not_deleting(),
            {"key": ".status.phase", "operator": "In", "values": ["Running"]},
            {"key": ".spec.containers.[].image", "operator": "In", "values": [image]},
        ]),
        &[],
        None,
    );
    [start, hold]
}

/// Per crash-loop or OOM-kill image: a stage where pod-running would start the containers
/// (each exits at once: restarted once at once, as kubelet's first restart has no back-off,
/// unless the pod never restarts, which then fails); a stage that backs a terminated one off;
/// one that starts it again when the back-off ends (and it exits again).
fn crash_stages(
    index: usize,
    (image, reason, exit_code): (&str, &str, i64),
    template: &str,
) -> [Value; 3] {
    let quoted = template_string(image);
    let start = stage(
        &format!("fault-crash-{index}"),
        starting(image),
        &[],
        Some(template),
    );
    let terminated = format!(
        ".status.containerStatuses.[] | select( .image == {quoted} ) | .state.terminated.reason"
    );
    let back_off = stage(
        &format!("fault-crash-back-off-{index}"),
        json!([
            not_deleting(),
            {"key": ".spec.restartPolicy", "operator": "NotIn", "values": ["Never"]},
            {"key": terminated, "operator": "In", "values": [reason]},
        ]),
        &[],
        Some(&CRASH_BACK_OFF_TEMPLATE.replace("IMAGE", &quoted)),
    );
    let waiting = format!(
        ".status.containerStatuses.[] | select( .image == {quoted} ) | .state.waiting.reason"
    );
    let restart_template = CRASH_RESTART_TEMPLATE
        .replace("IMAGE", &quoted)
        .replace("EXIT", &exit_code.to_string())
        .replace("REASON", &template_string(reason));
    let mut restart = stage(
        &format!("fault-crash-restart-{index}"),
        json!([not_deleting(), {"key": waiting, "operator": "In", "values": ["CrashLoopBackOff"]}]),
        &[],
        Some(&restart_template),
    );
    restart["spec"]["delay"] = json!({
        "durationMilliseconds": 10_000,
        "durationFrom": {"expressionFrom": CRASH_DELAY.replace("IMAGE", &quoted)},
    });
    [start, back_off, restart]
}

/// A pod stage of weight 1 that records `events` (type, reason, message), then patches the
/// status with `template`, if any.
fn stage(
    name: &str,
    expressions: Value,
    events: &[(&str, &str, String)],
    template: Option<&str>,
) -> Value {
    let mut steps: Vec<Value> = events
        .iter()
        .map(|(type_, reason, message)| {
            json!({"event": {"type": type_, "reason": reason, "message": message}})
        })
        .collect();
    if let Some(template) = template {
        steps.push(
            json!({"patch": {"subresource": "status", "root": "status", "template": template}}),
        );
    }
    json!({
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": {
            "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
            "selector": {"matchExpressions": expressions},
            "weight": 1,
            "steps": steps,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stages `w`'s faults add after the committed ones, and their names.
    fn fault_stages(w: &Workloads) -> (Vec<Value>, Vec<String>) {
        let text = stages(w).unwrap();
        let extra: Vec<Value> = text
            .split("---\n")
            .skip(STAGES.matches("---\n").count() + 1)
            .map(|doc| serde_json::from_str(doc).unwrap())
            .collect();
        let names = extra
            .iter()
            .map(|s| s["metadata"]["name"].as_str().unwrap().to_owned())
            .collect();
        (extra, names)
    }

    #[test]
    fn without_faults_the_committed_stages_are_played() {
        let text = stages(&Workloads::with_nodes(1)).unwrap();
        assert_eq!(text, STAGES);
        for name in [
            "pod-create",
            "pod-running",
            "pod-ready",
            "pod-complete",
            "pod-delete",
        ] {
            assert!(text.contains(&format!("name: {name}\n")), "{name}");
        }
    }

    #[test]
    fn an_image_pull_fault_adds_a_pull_and_a_back_off_stage_for_its_exact_image() {
        let w = Workloads::new()
            .fault(PodFault::image_pull("registry.example/broken:v1"))
            .fault(PodFault::image_pull("registry.example/broken:v1"));
        let (extra, names) = fault_stages(&w);
        assert_eq!(names, ["fault-image-pull-0", "fault-image-pull-back-off-0"]);
        assert_eq!(
            extra[0]["spec"]["selector"]["matchExpressions"][3]["values"],
            json!(["registry.example/broken:v1"])
        );
        let steps = extra[0]["spec"]["steps"].as_array().unwrap();
        let messages: Vec<_> = steps
            .iter()
            .map(|s| &s["event"]["message"])
            .take(3)
            .collect();
        assert_eq!(messages[0], r#"Pulling image "registry.example/broken:v1""#);
        assert_eq!(messages[2], "Error: ErrImagePull");
        let template = steps[3]["patch"]["template"].as_str().unwrap();
        let error = pull_error("registry.example/broken:v1");
        assert!(template.contains(&format!(
            r#"{{{{ $errors := dict "registry.example/broken:v1" {} }}}}"#,
            template_string(&error)
        )));
        let back_off = extra[1]["spec"]["steps"][2]["patch"]["template"]
            .as_str()
            .unwrap();
        assert!(back_off.contains(r#"(eq .image "registry.example/broken:v1")"#));
    }

    #[test]
    fn a_fault_pattern_is_refused_with_the_reason() {
        let pattern = Workloads::new().fault(PodFault::image_pull("registry.example/broken:*"));
        let error = stages(&pattern).unwrap_err().to_string();
        assert!(error.contains("exact image"), "{error}");
        let crash = Workloads::new().fault(PodFault::crash_loop("app:*"));
        assert!(stages(&crash).is_err());
    }

    #[test]
    fn a_crash_fault_starts_exits_backs_off_and_restarts_with_its_reason() {
        let w = Workloads::new()
            .fault(PodFault::crash_loop("crash:v1"))
            .fault(PodFault::oom_killed("greedy:v1"));
        let (extra, names) = fault_stages(&w);
        assert_eq!(
            names,
            [
                "fault-crash-0",
                "fault-crash-back-off-0",
                "fault-crash-restart-0",
                "fault-crash-1",
                "fault-crash-back-off-1",
                "fault-crash-restart-1"
            ]
        );
        let start = extra[0]["spec"]["steps"][0]["patch"]["template"]
            .as_str()
            .unwrap();
        assert!(
            start.contains(
                r#"{{ $crashes := dict "crash:v1" (list "Error" 1) "greedy:v1" (list "OOMKilled" 137) }}"#
            ),
            "{start}"
        );
        let back_off = &extra[4]["spec"];
        assert_eq!(
            back_off["selector"]["matchExpressions"][2]["values"],
            json!(["OOMKilled"])
        );
        assert_eq!(
            back_off["selector"]["matchExpressions"][1],
            json!({"key": ".spec.restartPolicy", "operator": "NotIn", "values": ["Never"]})
        );
        let restart = &extra[5]["spec"];
        let template = restart["steps"][0]["patch"]["template"].as_str().unwrap();
        assert!(
            template.contains("exitCode: 137\n      reason: \"OOMKilled\""),
            "{template}"
        );
        assert!(
            restart["delay"]["durationFrom"]["expressionFrom"]
                .as_str()
                .unwrap()
                .contains(r#"select(.image == "greedy:v1")"#)
        );
    }

    #[test]
    fn a_never_ready_fault_starts_the_container_unready_and_holds_it() {
        let w = Workloads::new()
            .fault(PodFault::image_pull("broken:v1"))
            .fault(PodFault::never_ready("stuck:v1"));
        let (extra, names) = fault_stages(&w);
        assert_eq!(
            names,
            [
                "fault-image-pull-0",
                "fault-image-pull-back-off-0",
                "fault-never-ready-0",
                "fault-never-ready-hold-0"
            ]
        );
        // Both faults' stages write the same status for a pod that has both images.
        let start = &extra[2]["spec"]["steps"];
        assert_eq!(start.as_array().unwrap().len(), 1, "no events: {start}");
        assert_eq!(
            start[0]["patch"]["template"],
            extra[0]["spec"]["steps"][3]["patch"]["template"]
        );
        let template = start[0]["patch"]["template"].as_str().unwrap();
        assert!(
            template.contains(r#"{{ $stuck := list "stuck:v1" }}"#),
            "{template}"
        );
        assert_eq!(extra[3]["spec"]["steps"], json!([]));
        assert_eq!(extra[3]["spec"]["weight"], 1);
    }
}
