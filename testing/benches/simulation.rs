//! The simulated cluster's cost: start-up of the embedded server with it, against the server
//! alone (the anchor, in the same run); `BENCH_SIM_DEPLOYMENTS` Deployments (default 1,000) of
//! `BENCH_SIM_REPLICAS` replicas (default 10) from create to every one `Available`; and the
//! bytes the server keeps per simulated pod (everything stored for the rollout — Deployments,
//! ReplicaSets, pods, events, watch history — divided by the pods).
//!
//! `cargo bench -p kubeward-testing --bench simulation`
//!
//! With `BENCH_SIM_REAL=1` and `KUBEBUILDER_ASSETS` set, the same rollout also runs on the real
//! tier (kube-controller-manager, kube-scheduler and KWOK), for the comparison.
//!
//! Start-up is taken interleaved (anchor, simulated, anchor, … `BENCH_ROUNDS` pairs, default 21)
//! and reported as medians with their ranges.

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kubeward_testing::{ApiServer, Backend, Cluster, WorkerNode, Workloads};
use serde_json::json;

#[path = "support/counting.rs"]
mod counting;

#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(mut values: Vec<Duration>) -> (Duration, Duration, Duration) {
    values.sort();
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
}

/// Enough nodes of 110 pods for `pods`, with room to roll.
fn world(pods: usize) -> Workloads {
    let nodes = (pods * 12 / 10).div_ceil(110).max(1);
    (1..=nodes).fold(Workloads::new(), |w, i| {
        w.node(
            WorkerNode::new(format!("worker-{i}"))
                .cpu("64")
                .memory("256Gi"),
        )
    })
}

fn deployment(i: usize, replicas: usize) -> Deployment {
    let name = format!("app-{i}");
    serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}},
        },
    }))
    .expect("a valid Deployment")
}

/// Creates the Deployments and waits until every one is Available with all replicas: the
/// time it took.
async fn roll_out(client: kube::Client, deployments: usize, replicas: usize) -> Duration {
    let api: Api<Deployment> = Api::namespaced(client, "default");
    let started = Instant::now();
    futures::stream::iter(0..deployments)
        .map(|i| {
            let api = api.clone();
            async move {
                api.create(&PostParams::default(), &deployment(i, replicas))
                    .await
                    .expect("the Deployment is created")
            }
        })
        .buffer_unordered(16)
        .for_each(|_| async {})
        .await;
    // Followed through a watch (a LIST of every Deployment per poll would cost the server
    // more than the rollout's own last steps).
    let available = |d: &Deployment| {
        let status = d.status.as_ref();
        status.and_then(|s| s.available_replicas) == Some(replicas as i32)
            && status.and_then(|s| s.conditions.as_ref()).is_some_and(|c| {
                c.iter()
                    .any(|c| c.type_ == "Available" && c.status == "True")
            })
    };
    let mut ready = std::collections::BTreeSet::new();
    let mut reported = Instant::now();
    let mut events = std::pin::pin!(watcher(api, watcher::Config::default()).default_backoff());
    while let Some(event) = events.next().await {
        let deployment = match event.expect("the watch goes on") {
            watcher::Event::Apply(d) | watcher::Event::InitApply(d) => d,
            _ => continue,
        };
        let name = deployment.metadata.name.clone().unwrap_or_default();
        if available(&deployment) {
            ready.insert(name);
        } else {
            ready.remove(&name);
        }
        if ready.len() == deployments {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < Duration::from_secs(900),
            "the rollout did not finish in 15 min"
        );
        if reported.elapsed() > Duration::from_secs(1) {
            eprintln!(
                "  {}/{deployments} available after {:.1?}",
                ready.len(),
                started.elapsed()
            );
            reported = Instant::now();
        }
    }
    unreachable!("a watcher's stream does not end")
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rounds = env("BENCH_ROUNDS", 21);
    let deployments = env("BENCH_SIM_DEPLOYMENTS", 1000);
    let replicas = env("BENCH_SIM_REPLICAS", 10);

    let (mut bare, mut simulated) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        let server = ApiServer::start().await.expect("starts");
        bare.push(t.elapsed());
        drop(server);
        let t = Instant::now();
        let server = ApiServer::builder()
            .workloads(Workloads::with_nodes(3))
            .start()
            .await
            .expect("starts");
        simulated.push(t.elapsed());
        drop(server);
    }
    let (b, b_lo, b_hi) = median(bare);
    let (s, s_lo, s_hi) = median(simulated);
    println!(
        "start-up, {rounds} interleaved pairs: server alone {b:.2?} ({b_lo:.2?}-{b_hi:.2?}), with a 3-node simulated cluster {s:.2?} ({s_lo:.2?}-{s_hi:.2?}), ratio {:.2}",
        s.as_secs_f64() / b.as_secs_f64()
    );

    let pods = deployments * replicas;
    let before = counting::live();
    let server = ApiServer::builder()
        .workloads(world(pods))
        .start()
        .await
        .expect("starts");
    let took = roll_out(server.client().expect("client"), deployments, replicas).await;
    let kept = counting::live() - before;
    println!(
        "embedded: {deployments} Deployments x {replicas} replicas ({pods} pods) available in {:.2} s; {} bytes kept per simulated pod (all objects, events and history included)",
        took.as_secs_f64(),
        kept / pods.max(1) as isize
    );
    drop(server);

    if std::env::var_os("BENCH_SIM_REAL").is_some() {
        let cluster = Cluster::builder()
            .backend(Backend::Real)
            .workloads(world(pods))
            .start()
            .await
            .expect("the real tier starts");
        let took = roll_out(cluster.client().expect("client"), deployments, replicas).await;
        println!(
            "real tier (kube-controller-manager, kube-scheduler, KWOK): the same in {:.2} s",
            took.as_secs_f64()
        );
    }
}
