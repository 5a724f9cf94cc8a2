//! The workload both controllers run: a `Workload` custom resource whose every generation walks
//! `Progressing` → `Verifying` → `Available` on its `Ready` condition, one transition per pass:
//!
//! | stage (the stored `Ready` at the object's generation) | the pass does | then |
//! |---|---|---|
//! | absent, or at an older generation | nothing but decide | `Progressing` |
//! | `Progressing` | applies the child ConfigMaps (server-side apply) | `Verifying` |
//! | `Verifying` | reads the children back and checks their generation | `Available` |
//! | `Available` | nothing (steady state; resynced periodically) | — |
//!
//! Deleting it runs cleanup: `Terminating` is written, the children are deleted, the finalizer
//! goes. A workload owns one child ConfigMap, or `BENCH_CHILDREN_PER_OBJECT` of them
//! ([`children_per_object`]), on both sides. Each transition is one status write and one event,
//! so the minimum a controller needs for one object is known exactly ([`minimum`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
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

/// How many child ConfigMaps each workload owns: `BENCH_CHILDREN_PER_OBJECT`, default 1.
pub fn children_per_object() -> usize {
    static CHILDREN: OnceLock<usize> = OnceLock::new();
    *CHILDREN.get_or_init(|| super::drive::size("BENCH_CHILDREN_PER_OBJECT", 1).max(1))
}

/// Whether `BENCH_CHILDREN_PER_OBJECT` was set (benches that seed no children by default seed
/// that many when it is).
pub fn children_per_object_set() -> bool {
    std::env::var_os("BENCH_CHILDREN_PER_OBJECT").is_some()
}

/// The name of the first child ConfigMap of `workload` (the one child by default).
pub fn child_name(workload: &Workload) -> String {
    child_name_at(&workload.name_any(), 0)
}

/// The name of child `index` of the workload `name`: `<name>-config`, then `<name>-config-1`...
pub fn child_name_at(name: &str, index: usize) -> String {
    match index {
        0 => format!("{name}-config"),
        i => format!("{name}-config-{i}"),
    }
}

/// The names of every child of `workload`.
pub fn child_names(workload: &Workload) -> Vec<String> {
    (0..children_per_object())
        .map(|i| child_name_at(&workload.name_any(), i))
        .collect()
}

/// Every child ConfigMap of `workload`'s current generation.
pub fn children_of(workload: &Workload) -> Vec<ConfigMap> {
    (0..children_per_object())
        .map(|i| child_at(workload, i))
        .collect()
}

/// Child `index` of `workload`'s current generation, owned by it.
pub fn child_at(workload: &Workload, index: usize) -> ConfigMap {
    let generation = workload.metadata.generation.unwrap_or_default();
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(child_name_at(&workload.name_any(), index)),
            namespace: workload.namespace(),
            owner_references: workload.controller_owner_ref(&()).map(|o| vec![o]),
            // As kubeward's `apply_child` labels it (its owned watch lists only those); the
            // anchor's applies carry it too, and its watch ignores it.
            labels: Some(BTreeMap::from([(
                kubeward::children::CONTROLLER_LABEL.to_owned(),
                kubeward::children::controller_label_value(CONTROLLER),
            )])),
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

/// Applies the children of `workload` (server-side apply, forced: this controller owns them).
pub async fn apply_child(client: &kube::Client, workload: &Workload) -> Result<(), kube::Error> {
    let api = children(client, workload);
    for child in children_of(workload) {
        api.patch(
            &child.metadata.name.clone().unwrap_or_default(),
            &PatchParams::apply(CONTROLLER).force(),
            &Patch::Apply(&child),
        )
        .await?;
    }
    Ok(())
}

/// Reads the children of `workload` back: whether they all carry the current generation.
pub async fn child_is_current(
    client: &kube::Client,
    workload: &Workload,
) -> Result<bool, kube::Error> {
    let generation = workload.metadata.generation.unwrap_or_default().to_string();
    let api = children(client, workload);
    for name in child_names(workload) {
        let stored = api.get_opt(&name).await?;
        let current = stored
            .and_then(|c| c.data)
            .is_some_and(|d| d.get("generation") == Some(&generation));
        if !current {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Deletes the children of `workload` (a missing child is fine).
pub async fn delete_child(client: &kube::Client, workload: &Workload) -> Result<(), kube::Error> {
    let api = children(client, workload);
    for name in child_names(workload) {
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// The requests the workload needs at the least for one object's lifecycle of `edits` spec
/// edits, by verb and resource (as [`super::requests::Tally`] names them): the finalizer added
/// and removed; per generation three transitions (a status write and an event each), per child
/// one apply and one read; on delete one transition, the children's deletes. Nothing at steady
/// state.
pub fn minimum(edits: usize) -> BTreeMap<String, usize> {
    let generations = edits + 1;
    let children = children_per_object();
    BTreeMap::from([
        ("patch workloads".to_owned(), 2),
        ("patch workloads/status".to_owned(), 3 * generations + 1),
        ("create events".to_owned(), 3 * generations + 1),
        ("patch configmaps".to_owned(), generations * children),
        ("get configmaps".to_owned(), generations * children),
        ("delete configmaps".to_owned(), children),
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
    /// The pass count [`Progress::reached`] waits for (0: none).
    target: AtomicUsize,
    /// Woken when the passes reach `target`.
    reached_target: tokio::sync::Notify,
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
        let passes = self.passes.fetch_add(1, Ordering::Relaxed) + 1;
        if passes == self.target.load(Ordering::Relaxed) {
            self.reached_target.notify_one();
        }
    }

    /// Returns once `target` passes have started (set once per `Progress`, before its
    /// controller starts): a wait that polls nothing meanwhile.
    pub async fn reached(&self, target: usize) {
        self.target.store(target, Ordering::Relaxed);
        if self.passes() < target {
            self.reached_target.notified().await;
        }
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
