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
//! each back-off (10 s, doubling) ends and shows `ErrImagePull` again for a moment; a KWOK
//! stage has no counter for the doubling. Crash loops and OOM kills (restart counts, back-offs,
//! a failed phase) are not played: they are refused. A fault stage writes the status of every
//! declared fault in the pod, so a pod with two faulty images gets the same status whichever
//! of their stages KWOK picks (only the events name another image).

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
{{ $unready := list }}
{{ $running := 0 }}
{{ range .spec.containers }}
{{ if hasKey $errors .image }}
{{ $unready = append $unready .name }}
{{ else }}
{{ $running = add1 $running }}
{{ if or (has .image $stuck) (and .readinessProbe (ne (toString (or .readinessProbe.initialDelaySeconds 0)) "0")) }}
{{ $unready = append $unready .name }}
{{ end }}
{{ end }}
{{ end }}
{{ $podIPs := PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
phase: {{ if eq $running 0 }}Pending{{ else }}Running{{ end }}
{{ with $podIPs }}
podIP: {{ index . 0 | Quote }}
podIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
conditions:
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

/// The stages KWOK plays for `workloads`: a multi-document YAML stream (the fault stages are
/// JSON documents).
///
/// # Errors
/// For a fault KWOK cannot play: a crash loop or an OOM kill, or an image pattern with `*`.
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
                    return Err(ServerError::Unsupported(format!(
                        "{fault:?}: on the real tier KWOK plays image-pull and never-ready \
                         faults only; run this test on the embedded server"
                    )));
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
        let template = FAULT_TEMPLATE
            .replace("ERRORS", &format!("dict {errors}"))
            .replace("STUCK", &format!("list {stuck}"));
        let mut stages = Vec::new();
        for (index, image) in self.pulls.iter().enumerate() {
            stages.extend(image_pull_stages(index, image, &template));
        }
        for (index, image) in self.stuck.iter().enumerate() {
            stages.extend(never_ready_stages(index, image, &template));
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
        let text = stages(&w).unwrap();
        let extra: Vec<Value> = text
            .split("---\n")
            .skip(STAGES.matches("---\n").count() + 1)
            .map(|doc| serde_json::from_str(doc).unwrap())
            .collect();
        let names: Vec<_> = extra.iter().map(|s| &s["metadata"]["name"]).collect();
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
    fn faults_kwok_cannot_play_are_refused_with_the_reason() {
        let pattern = Workloads::new().fault(PodFault::image_pull("registry.example/broken:*"));
        let error = stages(&pattern).unwrap_err().to_string();
        assert!(error.contains("exact image"), "{error}");
        let crash = Workloads::new().fault(PodFault::crash_loop("app:v1"));
        let error = stages(&crash).unwrap_err().to_string();
        assert!(error.contains("never-ready faults only"), "{error}");
        let oom = Workloads::new().fault(PodFault::oom_killed("app:v1"));
        assert!(stages(&oom).is_err());
    }

    #[test]
    fn a_never_ready_fault_starts_the_container_unready_and_holds_it() {
        let w = Workloads::new()
            .fault(PodFault::image_pull("broken:v1"))
            .fault(PodFault::never_ready("stuck:v1"));
        let text = stages(&w).unwrap();
        let extra: Vec<Value> = text
            .split("---\n")
            .skip(STAGES.matches("---\n").count() + 1)
            .map(|doc| serde_json::from_str(doc).unwrap())
            .collect();
        let names: Vec<_> = extra.iter().map(|s| &s["metadata"]["name"]).collect();
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
