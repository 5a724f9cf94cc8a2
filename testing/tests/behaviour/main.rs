//! The behaviour corpus: the same scenarios — Deployments created, scaled, updated, paused,
//! broken; StatefulSets, DaemonSets, Jobs, CronJobs, Services' endpoints, claims, a node lost
//! and found — on the
//! embedded server's simulated cluster and on the real control plane (kube-controller-manager,
//! kube-scheduler, KWOK), each object's sequence of conditions (type, status, reason) and
//! phases, and its integer status fields at the end, compared. Timing may differ; order and
//! content may not. Prints `behaviour: N scenarios, M identical`; a difference fails the test
//! unless `tests/behaviour/accepted.txt` lists the scenario with its reason.
//!
//! The scenarios always run on the embedded server (each must reach its waits there); the
//! comparison runs where the real tier runs (`KUBEBUILDER_ASSETS` set, as `scripts/test` sets
//! it). `KUBEWARD_BEHAVIOUR_ONLY=<substring>[|<substring>...]` runs only the scenarios whose
//! name contains one of them; `KUBEWARD_BEHAVIOUR_SHOW=1` prints every outcome.

mod corpus;
mod recorder;
mod scenarios;

use std::collections::BTreeMap;
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kubeward_testing::{ASSETS_VARIABLE, Backend, Cluster, PodFault, WorkerNode, Workloads};
use serde_json::{Value, json};

use corpus::{Outcome, Scenario, Step};

/// The nodes every scenario shares: two plain workers and one with an SSD label.
fn world() -> Workloads {
    Workloads::new()
        .node(WorkerNode::new("worker-1"))
        .node(WorkerNode::new("worker-2"))
        .node(WorkerNode::new("worker-3").label("disk", "ssd"))
        .fault(PodFault::image_pull(scenarios::BROKEN))
        .fault(PodFault::crash_loop(scenarios::CRASHING))
        .fault(PodFault::oom_killed(scenarios::GREEDY))
}

/// How long a wait may take before the scenario fails on a backend.
fn wait_limit(cluster: &Cluster) -> Duration {
    match cluster.backend() {
        Backend::Embedded => Duration::from_secs(20),
        Backend::Real => Duration::from_secs(90),
    }
}

/// Runs `scenario` in namespace `ns` of `cluster`: what happened, or why it did not get
/// through its steps.
async fn run(cluster: &Cluster, scenario: &Scenario, ns: &str) -> Result<Outcome, String> {
    let client = cluster.client().map_err(|e| e.to_string())?;
    let namespaces: Api<DynamicObject> = recorder::api(&client, &recorder::NAMESPACE, "");
    let namespace: DynamicObject = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
    )
    .map_err(|e| e.to_string())?;
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .map_err(|e| format!("namespace {ns}: {e}"))?;
    let outcome = run_in(cluster, &client, scenario, ns).await;
    // Whatever happened, the namespace goes: its pods would take room on the shared nodes.
    let _ = namespaces.delete(ns, &DeleteParams::background()).await;
    outcome
}

/// The steps of `scenario` in the namespace `ns`, recorded.
async fn run_in(
    cluster: &Cluster,
    client: &kube::Client,
    scenario: &Scenario,
    ns: &str,
) -> Result<Outcome, String> {
    let client = client.clone();
    let limit = wait_limit(cluster);
    let accounts = recorder::api(&client, &recorder::SERVICE_ACCOUNT, ns);
    poll(limit, "the default service account", || async {
        Ok::<_, String>(accounts.get_opt("default").await.ok().flatten().map(drop))
    })
    .await?;
    let recording = recorder::Recording::start(&client, ns).await?;
    let mut named = Vec::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        let at = |e: String| format!("step {}: {e}", i + 1);
        match step {
            Step::Create(object) => {
                let kind = recorder::kind_of(object).ok_or_else(|| at("unknown kind".into()))?;
                let name = object["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                named.push((kind, name));
                let object: DynamicObject =
                    serde_json::from_value(object.clone()).map_err(|e| at(e.to_string()))?;
                recorder::api(&client, &kind, ns)
                    .create(&PostParams::default(), &object)
                    .await
                    .map_err(|e| at(e.to_string()))?;
            }
            Step::Patch(kind, name, patch) => {
                recorder::api(&client, kind, ns)
                    .patch(name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .map_err(|e| at(e.to_string()))?;
            }
            Step::Delete(kind, name) => {
                recorder::api(&client, kind, ns)
                    .delete(name, &DeleteParams::background())
                    .await
                    .map_err(|e| at(e.to_string()))?;
            }
            Step::Wait(kind, name, what, test) => {
                let api = recorder::api(&client, kind, ns);
                let deadline = tokio::time::Instant::now() + limit;
                loop {
                    let object = api.get_opt(name).await.map_err(|e| at(e.to_string()))?;
                    let object = object
                        .map(|o| serde_json::to_value(o).unwrap_or_default())
                        .unwrap_or_default();
                    if test(&object) {
                        break;
                    }
                    if tokio::time::Instant::now() > deadline {
                        return Err(at(format!(
                            "timed out after {limit:?} waiting for {what}; last seen: {object}"
                        )));
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            Step::WaitAll(kind, what, test) => {
                let api = recorder::api(&client, kind, ns);
                poll(limit, what, || {
                    let api = api.clone();
                    async move {
                        let list = api
                            .list(&Default::default())
                            .await
                            .map_err(|e| e.to_string())?;
                        let items: Vec<Value> = list
                            .items
                            .into_iter()
                            .map(|o| serde_json::to_value(o).unwrap_or_default())
                            .collect();
                        Ok(test(&json!({ "items": items })).then_some(()))
                    }
                })
                .await
                .map_err(at)?;
            }
            Step::Elapse(seconds) => cluster
                .elapse(Duration::from_secs(*seconds))
                .await
                .map_err(|e| at(e.to_string()))?,
            Step::NodeReady(node, ready) => cluster
                .set_node_ready(node, *ready)
                .await
                .map_err(|e| at(e.to_string()))?,
        }
    }
    Ok(recording.finish(&named, quiet_period(cluster)).await)
}

/// How long nothing must change before a scenario's recording ends.
fn quiet_period(cluster: &Cluster) -> Duration {
    match cluster.backend() {
        Backend::Embedded => Duration::from_millis(300),
        Backend::Real => Duration::from_secs(2),
    }
}

/// Polls `probe` every 50 ms until it gives `Some`, for at most `limit`.
async fn poll<T, F, Fut>(limit: Duration, what: &str, mut probe: F) -> Result<T, String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>, String>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Ok(Some(value)) = probe().await {
            return Ok(value);
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("timed out after {limit:?} waiting for {what}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The accepted differences: scenario name → reason.
fn accepted() -> BTreeMap<String, String> {
    include_str!("accepted.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(" | "))
        .map(|(name, why)| (name.trim().to_string(), why.trim().to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behaviour_corpus() {
    let only = std::env::var("KUBEWARD_BEHAVIOUR_ONLY").unwrap_or_default();
    let show = std::env::var("KUBEWARD_BEHAVIOUR_SHOW").is_ok();
    let scenarios: Vec<Scenario> = scenarios::all()
        .into_iter()
        .filter(|s| only.split('|').any(|o| s.name.contains(o)))
        .collect();
    let embedded = Cluster::builder()
        .backend(Backend::Embedded)
        .workloads(world())
        .start()
        .await
        .expect("the embedded server starts");
    let real = if std::env::var_os(ASSETS_VARIABLE).is_some() {
        Some(
            Cluster::builder()
                .backend(Backend::Real)
                .workloads(world())
                .start()
                .await
                .expect("the real control plane starts"),
        )
    } else {
        println!(
            "behaviour: the real tier did not run (set {ASSETS_VARIABLE}, as scripts/test does, to compare)"
        );
        None
    };
    let accepted = accepted();
    let mut failures = Vec::new();
    let mut identical = 0;
    let mut up_to_timing = Vec::new();
    for (i, scenario) in scenarios.iter().enumerate() {
        let ns = format!("behaviour-{i}");
        let ours = run(&embedded, scenario, &ns).await;
        let ours = match ours {
            Ok(outcome) => outcome,
            Err(why) => {
                failures.push(format!("{}: on the embedded server: {why}", scenario.name));
                continue;
            }
        };
        if show {
            println!("{} (embedded):\n{ours}", scenario.name);
        }
        let Some(real) = &real else {
            continue;
        };
        let theirs = match run(real, scenario, &ns).await {
            Ok(outcome) => outcome,
            Err(why) => {
                failures.push(format!("{}: on the real tier: {why}", scenario.name));
                continue;
            }
        };
        if show {
            println!("{} (real):\n{theirs}", scenario.name);
        }
        if ours == theirs {
            identical += 1;
            if accepted.contains_key(scenario.name) {
                // A race of upstream's own decides some accepted differences: this run
                // happened to take the same path on both.
                println!(
                    "{}: identical in this run (accepted as racy)",
                    scenario.name
                );
            }
        } else if ours.equal_up_to_timing(&theirs) {
            up_to_timing.push(scenario.name);
            if show {
                println!("{}: equal up to timing", scenario.name);
            }
        } else if !accepted.contains_key(scenario.name) {
            failures.push(format!(
                "{}: the outcomes differ\n embedded:\n{ours} real:\n{theirs}",
                scenario.name
            ));
        }
    }
    if real.is_some() {
        println!(
            "behaviour: {} scenarios, {identical} identical, {} equal up to transient states one side's timing showed ({})",
            scenarios.len(),
            up_to_timing.len(),
            up_to_timing.join("; ")
        );
    } else {
        println!(
            "behaviour: {} scenarios reached their waits on the embedded server",
            scenarios.len() - failures.len()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
