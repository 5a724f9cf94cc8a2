//! The `Rollout` custom resource.
//!
//! ```yaml
//! apiVersion: demo.kubeward.dev/v1
//! kind: Rollout
//! metadata:
//!   name: web
//! spec:
//!   image: registry.example/web:1.0
//!   replicas: 3
//!   strategy: Manual        # or Automatic (the default)
//!   timeoutSeconds: 600     # how long a generation may stay Applying
//!   suspend: false
//! ```
//!
//! # Approval
//!
//! With `strategy: Manual`, a new generation is staged (the Rollout's Deployment holds its pod
//! template, paused: the running pods stay those of the promoted generation) and then waits, with
//! `UpToDate=False` reason `WaitingForApproval` (a Normal event: waiting for a human is not a
//! failure). A human approves one generation by annotating the Rollout with it:
//!
//! ```sh
//! kubectl annotate rollout web demo.kubeward.dev/approved-generation=2 --overwrite
//! ```
//!
//! The approval names a generation, not "whatever the spec is now": an edit made after the
//! approval is a new generation and waits for its own. An annotation (not a spec field) carries
//! it because writing it must not itself create a new generation.

use kube::{CustomResource, ResourceExt};
use kubeward::conditions::Condition;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The annotation that approves a generation of a `Manual` rollout: its value is the approved
/// `metadata.generation`, in decimal.
pub const APPROVED_GENERATION: &str = "demo.kubeward.dev/approved-generation";

/// The default of `spec.timeoutSeconds`: ten minutes.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 600;

/// What a `Rollout` asks for.
#[derive(CustomResource, Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "demo.kubeward.dev",
    version = "v1",
    kind = "Rollout",
    namespaced,
    status = "RolloutStatus",
    shortname = "ro",
    printcolumn = r#"{"name":"Image","type":"string","jsonPath":".spec.image"}"#,
    printcolumn = r#"{"name":"UpToDate","type":"string","jsonPath":".status.conditions[?(@.type==\"UpToDate\")].reason"}"#,
    printcolumn = r#"{"name":"Suspended","type":"boolean","jsonPath":".spec.suspend"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct RolloutSpec {
    /// The container image to roll out, e.g. `registry.example/web:1.0`.
    pub image: String,
    /// How many replicas the Deployment runs.
    #[serde(default = "default_replicas")]
    pub replicas: i32,
    /// Whether a new generation needs a human's approval before it is promoted.
    #[serde(default)]
    pub strategy: Strategy,
    /// How long a generation may stay `Applying` before the rollout is declared timed out; also
    /// the Deployment's `progressDeadlineSeconds`.
    #[serde(default = "default_timeout_seconds")]
    pub timeout_seconds: u64,
    /// While true, the operator leaves this Rollout alone (its passes are skipped).
    #[serde(default)]
    pub suspend: bool,
}

fn default_replicas() -> i32 {
    1
}

fn default_timeout_seconds() -> u64 {
    DEFAULT_TIMEOUT_SECONDS
}

/// How a staged generation gets promoted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Strategy {
    /// Promote as soon as the generation is staged.
    #[default]
    Automatic,
    /// Wait for the [`APPROVED_GENERATION`] annotation to name the generation.
    Manual,
}

/// What the operator reports about a `Rollout`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    /// The `UpToDate` condition: whether the Deployment runs the current generation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    /// The image the Deployment last ran verified (on every replica), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_image: Option<String>,
    /// The generation the operator last worked on (written by the runtime, for kstatus-based
    /// deploy tools: `kubectl wait`, `helm --wait`, Flux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl Rollout {
    /// Whether the generation the object is at has been approved (always true for
    /// [`Strategy::Automatic`]).
    pub fn approved(&self) -> bool {
        match self.spec.strategy {
            Strategy::Automatic => true,
            Strategy::Manual => {
                let approved = self
                    .annotations()
                    .get(APPROVED_GENERATION)
                    .and_then(|v| v.trim().parse::<i64>().ok());
                approved.is_some() && approved == self.metadata.generation
            }
        }
    }

    /// The `UpToDate` condition as stored, if any.
    pub fn up_to_date(&self) -> Option<&Condition> {
        self.status
            .as_ref()?
            .conditions
            .iter()
            .find(|c| c.type_ == "UpToDate")
    }
}
