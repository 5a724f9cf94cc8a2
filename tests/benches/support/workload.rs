//! The workload both controllers run: a `Workload` custom resource whose every generation walks
//! `Progressing` → `Verifying` → `Available` on its `Ready` condition, one transition per pass:
//!
//! | stage (the stored `Ready` at the object's generation) | the pass does | then |
//! |---|---|---|
//! | absent, or at an older generation | nothing but decide | `Progressing` |
//! | `Progressing` | applies the child ConfigMap (server-side apply) | `Verifying` |
//! | `Verifying` | reads the child back and checks its generation | `Available` |
//! | `Available` | nothing (steady state; resynced periodically) | — |
//!
//! Deleting it runs cleanup: `Terminating` is written, the child is deleted, the finalizer goes.
//! Each transition is one status write and one event, so the minimum a controller needs for one
//! object is known exactly ([`minimum`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::runtime::events::EventType;
use kube::{CustomResource, Resource, ResourceExt};
use kubeward::conditions::{Condition, ConditionStatus, DesiredCondition};
use kubeward::vocabulary::{Reason, Vocabulary};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The controller's name (events' `reportingController`, the server-side apply field manager).
pub const CONTROLLER: &str = "bench.kubeward.dev/workloads";
/// The finalizer both controllers put on a workload.
pub const FINALIZER: &str = "bench.kubeward.dev/cleanup";
/// Where the workloads live.
pub const NAMESPACE: &str = "default";
/// The condition the workload walks.
pub const READY: &str = "Ready";

/// What a workload asks for.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "bench.kubeward.dev",
    version = "v1",
    kind = "Workload",
    namespaced,
    status = "WorkloadStatus"
)]
pub struct WorkloadSpec {
    /// The image to roll out.
    pub image: String,
    /// How many replicas.
    pub replicas: i32,
}

/// What the controllers report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorkloadStatus {
    /// The `Ready` condition.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// The reasons of `Ready`.
pub static READY_REASONS: Vocabulary = Vocabulary {
    type_: READY,
    reasons: &[
        Reason::new("Progressing", ConditionStatus::Unknown)
            .initial()
            .to(&["Verifying", "Terminating"]),
        Reason::new("Verifying", ConditionStatus::Unknown).to(&[
            "Available",
            "Progressing",
            "Terminating",
        ]),
        Reason::new("Available", ConditionStatus::True).to(&["Progressing", "Terminating"]),
        Reason::new("Terminating", ConditionStatus::False)
            .initial()
            .event(EventType::Normal),
    ],
};

/// What the next pass of a workload does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// A new generation: write `Progressing`.
    Start,
    /// Apply the child, write `Verifying`.
    Apply,
    /// Read the child back, write `Available`.
    Verify,
    /// Converged: nothing to do.
    Steady,
}

/// The stage of `workload` whose stored `Ready` condition is `ready`.
pub fn stage(workload: &Workload, ready: Option<&Condition>) -> Stage {
    let generation = workload.metadata.generation.unwrap_or_default();
    match ready {
        Some(ready) if ready.observed_generation == Some(generation) => {
            match ready.reason.as_str() {
                "Progressing" => Stage::Apply,
                "Verifying" => Stage::Verify,
                "Available" => Stage::Steady,
                _ => Stage::Start,
            }
        }
        _ => Stage::Start,
    }
}

/// The stored `Ready` condition of `workload`.
pub fn ready(workload: &Workload) -> Option<&Condition> {
    workload
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == READY)
}

/// The condition a pass of `stage` writes (for [`Stage::Steady`], none); `None` stage means
/// cleanup (`Terminating`).
pub fn desired(workload: &Workload, stage: Option<Stage>) -> Option<DesiredCondition> {
    let generation = workload.metadata.generation.unwrap_or_default();
    let (status, reason, message) = match stage {
        Some(Stage::Start) => (
            ConditionStatus::Unknown,
            "Progressing",
            format!(
                "rolling out generation {generation}: {} with {} replicas",
                workload.spec.image, workload.spec.replicas
            ),
        ),
        Some(Stage::Apply) => (
            ConditionStatus::Unknown,
            "Verifying",
            format!(
                "ConfigMap {} applied at generation {generation}",
                child_name(workload)
            ),
        ),
        Some(Stage::Verify) => (
            ConditionStatus::True,
            "Available",
            format!("generation {generation} is available"),
        ),
        Some(Stage::Steady) => return None,
        None => (
            ConditionStatus::False,
            "Terminating",
            format!("deleting ConfigMap {}", child_name(workload)),
        ),
    };
    let desired = DesiredCondition::new(READY, status, reason, message)
        .and_then(|d| d.observed_generation(generation))
        .expect("a valid condition");
    Some(desired.event_type(EventType::Normal))
}

/// What a pass of a converged workload does.
#[derive(Debug, Clone, Copy)]
pub struct Steady {
    /// How long until the next pass of a converged workload (a periodic resync).
    pub resync: Duration,
    /// Whether it applies the child again (so that a deleted or edited child is restored by the
    /// pass its watch event runs); otherwise it does nothing.
    pub restore_child: bool,
}

impl Steady {
    /// Resync every `resync`, restore nothing.
    pub fn resyncing(resync: Duration) -> Self {
        Self {
            resync,
            restore_child: false,
        }
    }
}

/// The name of the child ConfigMap of `workload`.
pub fn child_name(workload: &Workload) -> String {
    format!("{}-config", workload.name_any())
}

/// The child ConfigMap of `workload`'s current generation, owned by it.
pub fn child(workload: &Workload) -> ConfigMap {
    let generation = workload.metadata.generation.unwrap_or_default();
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(child_name(workload)),
            namespace: workload.namespace(),
            owner_references: workload.controller_owner_ref(&()).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([
            ("image".to_owned(), workload.spec.image.clone()),
            ("replicas".to_owned(), workload.spec.replicas.to_string()),
            ("generation".to_owned(), generation.to_string()),
        ])),
        ..ConfigMap::default()
    }
}

fn children(client: &kube::Client, workload: &Workload) -> Api<ConfigMap> {
    Api::namespaced(client.clone(), &workload.namespace().unwrap_or_default())
}

/// Applies the child of `workload` (server-side apply, forced: this controller owns it).
pub async fn apply_child(client: &kube::Client, workload: &Workload) -> Result<(), kube::Error> {
    children(client, workload)
        .patch(
            &child_name(workload),
            &PatchParams::apply(CONTROLLER).force(),
            &Patch::Apply(&child(workload)),
        )
        .await
        .map(drop)
}

/// Reads the child of `workload` back: whether it carries the current generation.
pub async fn child_is_current(
    client: &kube::Client,
    workload: &Workload,
) -> Result<bool, kube::Error> {
    let generation = workload.metadata.generation.unwrap_or_default().to_string();
    let stored = children(client, workload)
        .get_opt(&child_name(workload))
        .await?;
    Ok(stored
        .and_then(|c| c.data)
        .is_some_and(|d| d.get("generation") == Some(&generation)))
}

/// Deletes the child of `workload` (a missing child is fine).
pub async fn delete_child(client: &kube::Client, workload: &Workload) -> Result<(), kube::Error> {
    match children(client, workload)
        .delete(&child_name(workload), &DeleteParams::default())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(error) => Err(error),
    }
}

/// The requests the workload needs at the least for one object's lifecycle of `edits` spec
/// edits, by verb and resource (as [`super::requests::Tally`] names them): the finalizer added
/// and removed; per generation three transitions (a status write and an event each), one child
/// apply and one read; on delete one transition, the child's delete. Nothing at steady state.
pub fn minimum(edits: usize) -> BTreeMap<String, usize> {
    let generations = edits + 1;
    BTreeMap::from([
        ("patch workloads".to_owned(), 2),
        ("patch workloads/status".to_owned(), 3 * generations + 1),
        ("create events".to_owned(), 3 * generations + 1),
        ("patch configmaps".to_owned(), generations),
        ("get configmaps".to_owned(), generations),
        ("delete configmaps".to_owned(), 1),
    ])
}

/// What a run of a controller has done, as both controllers report it from their passes.
#[derive(Debug, Default)]
pub struct Progress {
    /// Passes (reconcile calls) so far.
    pub passes: AtomicUsize,
    /// Passes that found their object converged (steady state).
    pub steady: AtomicUsize,
    /// Objects seen converged at a generation newer than before.
    pub converged: AtomicUsize,
    /// The newest generation each object (by uid) was seen converged at; not kept when
    /// `count_only` (the memory benchmark).
    generations: Mutex<HashMap<String, i64>>,
    count_only: bool,
}

impl Progress {
    /// Progress that counts passes and steady passes only.
    pub fn counting_only() -> Self {
        Self {
            count_only: true,
            ..Self::default()
        }
    }

    /// A pass started.
    pub fn pass(&self) {
        self.passes.fetch_add(1, Ordering::Relaxed);
    }

    /// A pass found `workload` converged.
    pub fn steady(&self, workload: &Workload) {
        self.steady.fetch_add(1, Ordering::Relaxed);
        if self.count_only {
            return;
        }
        let generation = workload.metadata.generation.unwrap_or_default();
        let mut seen = self.generations.lock().unwrap();
        let newest = seen.entry(workload.uid().unwrap_or_default()).or_default();
        if *newest < generation {
            *newest = generation;
            self.converged.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many passes so far.
    pub fn passes(&self) -> usize {
        self.passes.load(Ordering::Relaxed)
    }
}
