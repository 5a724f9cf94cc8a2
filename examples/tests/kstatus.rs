//! Deploy tools read the example's Rollouts as kstatus says at every stage of its scenario. The
//! oracle is kstatus' own `Compute` for a custom resource, ported below from cli-utils
//! (`pkg/kstatus/status/status.go`, `generic.go`): the operator runs as the identity its
//! generated RBAC grants, and each stage is checked on the object as the API server stores it.
//! And `kubectl wait --for=condition=Ready` after a spec change returns only once the new
//! generation is observed and applied.

use std::path::Path;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kubeward_examples::rollouts::operator::OperatorOptions;
use kubeward_examples::rollouts::scenario::{RunningOperator, cluster};
use kubeward_examples::rollouts::{APPROVED_GENERATION, Rollout, RolloutSpec, Strategy, rbac};
use kubeward_testing::Cluster;
use kubeward_testing::kubectl::Kubectl;
use serde_json::{Value, json};

/// kstatus' statuses of a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kstatus {
    InProgress(String),
    Failed(String),
    Current,
    Terminating,
}

/// `status.Compute` of cli-utils for a custom resource (no type-specific rules): a deletion
/// timestamp is Terminating; an observedGeneration behind the generation is InProgress
/// (`LatestGenerationNotObserved`); a `Reconciling` condition True is InProgress, a `Stalled`
/// True Failed; then (`checkReadyCondition`, in the versions that have it) `Ready` True is
/// Current and False InProgress; else Current.
fn compute(object: &Value) -> Kstatus {
    if object["metadata"]["deletionTimestamp"]
        .as_str()
        .is_some_and(|t| !t.is_empty())
    {
        return Kstatus::Terminating;
    }
    if let (Some(generation), Some(observed)) = (
        object["metadata"]["generation"].as_i64(),
        object["status"]["observedGeneration"].as_i64(),
    ) && observed != generation
    {
        return Kstatus::InProgress("LatestGenerationNotObserved".into());
    }
    let conditions = object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let with = |type_: &str| conditions.iter().find(|c| c["type"] == type_);
    for condition in &conditions {
        let reason = condition["reason"].as_str().unwrap_or_default().to_owned();
        if condition["type"] == "Reconciling" && condition["status"] == "True" {
            return Kstatus::InProgress(reason);
        }
        if condition["type"] == "Stalled" && condition["status"] == "True" {
            return Kstatus::Failed(reason);
        }
    }
    match with("Ready").map(|c| c["status"].as_str().unwrap_or_default()) {
        Some("False") => Kstatus::InProgress(
            with("Ready").unwrap()["reason"]
                .as_str()
                .unwrap_or_default()
                .into(),
        ),
        _ => Kstatus::Current,
    }
}

fn rollout(name: &str, image: &str, strategy: Strategy) -> Rollout {
    let mut rollout = Rollout::new(
        name,
        RolloutSpec {
            image: image.into(),
            replicas: 2,
            strategy,
            timeout_seconds: 600,
            suspend: false,
        },
    );
    rollout.metadata.namespace = Some("default".into());
    rollout
}

/// Polls the stored `name` until `done` holds for it; the stored object. Bounded only so that a
/// broken operator fails the test instead of hanging it.
async fn until(api: &Api<Rollout>, name: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let stored = serde_json::to_value(api.get(name).await.expect("get")).expect("json");
        if done(&stored) {
            return stored;
        }
        assert!(Instant::now() < deadline, "never {what}; last: {stored:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The condition `type_` of `object` as (status, reason, observedGeneration).
fn condition(object: &Value, type_: &str) -> Option<(String, String, Option<i64>)> {
    let condition = object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)?;
    Some((
        condition["status"].as_str()?.to_owned(),
        condition["reason"].as_str()?.to_owned(),
        condition["observedGeneration"].as_i64(),
    ))
}

fn up_to_date(object: &Value) -> Option<(String, String, Option<i64>)> {
    condition(object, "UpToDate")
}

fn at(object: &Value, reason: &str, generation: i64) -> bool {
    up_to_date(object).is_some_and(|(_, r, g)| r == reason && g == Some(generation))
}

async fn approve(api: &Api<Rollout>, name: &str, generation: i64) {
    let annotation =
        json!({"metadata": {"annotations": {APPROVED_GENERATION: generation.to_string()}}});
    api.patch(name, &PatchParams::default(), &Patch::Merge(annotation))
        .await
        .expect("approve");
}

/// A cluster with the operator running as its generated RBAC (stages `stage_delay` apart) and
/// Rollout `web` (image `registry.example/web:1.0`, `strategy`) created; the admin's Rollouts.
async fn start_with_web(
    stage_delay: Duration,
    strategy: Strategy,
) -> (Cluster, RunningOperator, Api<Rollout>) {
    let server = cluster().await.expect("cluster");
    let operator_client = server
        .service_account_client("default", "rollouts", rbac::rules(false))
        .await
        .expect("the operator's identity");
    let options = OperatorOptions {
        stage_delay,
        ..OperatorOptions::default()
    };
    let operator = RunningOperator::start(operator_client, &options).expect("operator");
    let admin = server.client().expect("admin client");
    let rollouts: Api<Rollout> = Api::namespaced(admin, "default");
    rollouts
        .create(
            &PostParams::default(),
            &rollout("web", "registry.example/web:1.0", strategy),
        )
        .await
        .expect("create web");
    (server, operator, rollouts)
}

/// Sets `web`'s image (a new generation).
async fn set_image(api: &Api<Rollout>, image: &str) {
    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"image": image}})),
    )
    .await
    .expect("set the image");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deploy_tools_read_every_stage_of_the_scenario_as_kstatus_documents() {
    let (_server, operator, rollouts) =
        start_with_web(Duration::from_millis(20), Strategy::Manual).await;

    // Waiting for approval: a gate, InProgress (Helm's --wait waits for the approval).
    let waiting = until(&rollouts, "web", "waiting for approval", |o| {
        at(o, "WaitingForApproval", 1)
    })
    .await;
    assert_eq!(
        compute(&waiting),
        Kstatus::InProgress("WaitingForApproval".into()),
        "{waiting:#}"
    );
    assert_eq!(waiting["status"]["observedGeneration"], 1, "{waiting:#}");
    assert_eq!(
        condition(&waiting, "Ready"),
        Some(("False".into(), "WaitingForApproval".into(), Some(1)))
    );
    assert_eq!(condition(&waiting, "Stalled"), None);

    // Approved and promoted: Current, Ready True at the generation.
    approve(&rollouts, "web", 1).await;
    let applied = until(&rollouts, "web", "applied", |o| at(o, "Applied", 1)).await;
    assert_eq!(compute(&applied), Kstatus::Current, "{applied:#}");
    assert_eq!(
        condition(&applied, "Ready"),
        Some(("True".into(), "Applied".into(), Some(1)))
    );
    assert_eq!(condition(&applied, "Reconciling"), None, "{applied:#}");

    // A spec change: from the patch on, every stored version is InProgress until the new
    // generation is applied — never Current on the old generation's conditions.
    let versions = watcher(
        rollouts.clone(),
        watcher::Config::default().fields("metadata.name=web"),
    )
    .applied_objects()
    .boxed();
    // The watch's initial list (generation 1) first: from here on it sees every write.
    let mut versions = versions;
    versions.try_next().await.expect("watch").expect("web");
    set_image(&rollouts, "registry.example/web:2.0").await;
    let mut approved = false;
    let seen = tokio::time::timeout(Duration::from_secs(60), async {
        let mut seen = Vec::new();
        while let Some(version) = versions.try_next().await.expect("watch") {
            let version = serde_json::to_value(version).expect("json");
            if version["metadata"]["generation"] != 2 {
                continue;
            }
            let status = compute(&version);
            seen.push(status.clone());
            if status == Kstatus::Current {
                assert!(
                    at(&version, "Applied", 2),
                    "Current before generation 2 was applied: {version:#}"
                );
                return seen;
            }
            if at(&version, "WaitingForApproval", 2) && !approved {
                approved = true;
                approve(&rollouts, "web", 2).await;
            }
        }
        seen
    })
    .await
    .expect("generation 2 becomes Current");
    assert!(
        seen.contains(&Kstatus::InProgress("LatestGenerationNotObserved".into())),
        "{seen:?}"
    );
    assert!(
        seen.contains(&Kstatus::InProgress("WaitingForApproval".into())),
        "{seen:?}"
    );

    // A spec that can never work (a terminal error): Failed.
    set_image(&rollouts, "registry.example/web").await;
    let stalled = until(&rollouts, "web", "stalled", |o| {
        condition(o, "Stalled").is_some_and(|(_, _, g)| g == Some(3))
    })
    .await;
    assert_eq!(
        compute(&stalled),
        Kstatus::Failed("FailedDeploy".into()),
        "{stalled:#}"
    );
    assert_eq!(
        condition(&stalled, "Ready"),
        Some(("False".into(), "FailedDeploy".into(), Some(3)))
    );

    // Deleting: Terminating while the operator's cleanup holds its finalizer.
    rollouts
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["example.com/hold", kubeward_examples::rollouts::FINALIZER]}})),
        )
        .await
        .expect("hold the deletion");
    rollouts
        .delete("web", &DeleteParams::default())
        .await
        .expect("delete");
    let deleting = until(&rollouts, "web", "deleting", |o| {
        !o["metadata"]["deletionTimestamp"].is_null()
    })
    .await;
    assert_eq!(compute(&deleting), Kstatus::Terminating);
    operator.stop().await.expect("stop");
}

/// `kubectl wait --for=condition=Ready` after a spec change returns only when the new generation
/// is observed: kubectl compares the condition's observedGeneration with the generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_wait_for_ready_returns_once_the_new_generation_is_applied() {
    // Slow stages: the spec change takes a while to apply, so a wait that returned on the old
    // generation's Ready would be caught.
    let (server, operator, rollouts) =
        start_with_web(Duration::from_millis(300), Strategy::Automatic).await;
    let dir = std::env::temp_dir().join(format!("kubeward-kstatus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    kubectl_wait_ready(&kubeconfig);
    let first = until(&rollouts, "web", "applied", |o| at(o, "Applied", 1)).await;
    assert_eq!(compute(&first), Kstatus::Current);

    set_image(&rollouts, "registry.example/web:2.0").await;
    kubectl_wait_ready(&kubeconfig);
    let after = serde_json::to_value(rollouts.get("web").await.expect("get")).expect("json");
    assert!(
        at(&after, "Applied", 2),
        "kubectl wait returned before generation 2 was applied: {after:#}"
    );
    assert_eq!(after["status"]["observedGeneration"], 2);
    assert_eq!(after["status"]["liveImage"], "registry.example/web:2.0");
    operator.stop().await.expect("stop");
    let _ = std::fs::remove_dir_all(&dir);
}

fn kubectl_wait_ready(kubeconfig: &Path) {
    let out = Kubectl::new(kubeconfig).output(&[
        "wait",
        "--for=condition=Ready",
        "rollout/web",
        "-n",
        "default",
        "--timeout=60s",
    ]);
    assert!(out.success, "kubectl wait: {}{}", out.stdout, out.stderr);
}
