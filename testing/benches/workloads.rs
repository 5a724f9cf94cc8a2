//! The cost of serving a realistic Deployment (3 containers with probes, env, ports, resources
//! and volume mounts; 2 volumes) against a ConfigMap of the same size in JSON: creates, updates
//! (a merge patch of one field) and a full LIST, each of `BENCH_WORKLOAD_OBJECTS` objects (default
//! 1,000), and the bytes the server keeps per stored object. The LIST is taken twice: decoded
//! into the typed list as a client reads it, and read as bytes (the server's share: decoding a
//! Deployment's few hundred JSON values costs the client far more than a ConfigMap's one string).
//!
//! `cargo bench -p kubeward-testing --bench workloads`
//!
//! Wall-clock figures are taken interleaved — `BENCH_ROUNDS` rounds (default 5), each on a fresh
//! server, the two kinds one after the other, in alternating order — and reported as the median
//! ratio with its range over the rounds: a noisy neighbour on these shared cores moves both sides
//! of a round alike. Memory is counted by this binary's allocator (live bytes after the creates,
//! less before), and includes the watch history's share of each object.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

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

/// A container as a Helm chart writes one: ports, env, probes, resources, mounts.
fn container(name: &str, port: u16) -> Value {
    json!({
        "name": name,
        "image": format!("registry.example.com/shop/{name}:1.4.2"),
        "ports": [{ "name": "http", "containerPort": port }, { "name": "metrics", "containerPort": port + 1000 }],
        "env": [
            { "name": "LOG_LEVEL", "value": "info" },
            { "name": "DATABASE_URL", "valueFrom": { "secretKeyRef": { "name": "db", "key": "url" } } },
            { "name": "POD_NAME", "valueFrom": { "fieldRef": { "fieldPath": "metadata.name" } } },
        ],
        "resources": {
            "requests": { "cpu": "100m", "memory": "128Mi" },
            "limits": { "cpu": "1", "memory": "512Mi" },
        },
        "readinessProbe": { "httpGet": { "path": "/ready", "port": "http" }, "periodSeconds": 5 },
        "livenessProbe": { "httpGet": { "path": "/live", "port": "http" }, "initialDelaySeconds": 10 },
        "volumeMounts": [
            { "name": "config", "mountPath": "/etc/shop" },
            { "name": "cache", "mountPath": "/var/cache/shop" },
        ],
    })
}

fn deployment(name: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": { "name": name, "labels": { "app.kubernetes.io/name": "shop" } },
        "spec": {
            "replicas": 3,
            "selector": { "matchLabels": { "app.kubernetes.io/instance": name } },
            "template": {
                "metadata": { "labels": { "app.kubernetes.io/instance": name } },
                "spec": {
                    "containers": [container("web", 8080), container("api", 8081), container("worker", 8082)],
                    "volumes": [
                        { "name": "config", "configMap": { "name": "shop-config" } },
                        { "name": "cache", "emptyDir": {} },
                    ],
                },
            },
        },
    }))
    .expect("a Deployment")
}

/// A ConfigMap whose JSON is as long as the Deployment's.
fn config_map(name: &str, size: usize) -> ConfigMap {
    let mut config_map = ConfigMap::default();
    config_map.metadata.name = Some(name.to_owned());
    config_map.metadata.labels = Some([("app.kubernetes.io/name".into(), "shop".into())].into());
    let bare = serde_json::to_vec(&config_map).expect("JSON").len();
    let filler = size.saturating_sub(bare + r#","data":{"blob":""}"#.len());
    config_map.data = Some([("blob".to_owned(), "x".repeat(filler))].into());
    config_map
}

/// What one kind's phases took, and the bytes kept per object.
struct Phases {
    create: Duration,
    update: Duration,
    list: Duration,
    /// The same LIST read as bytes (the server's answer without the client's decoding).
    list_bytes: Duration,
    bytes_per_object: f64,
}

/// Creates `n` objects made by `make`, patches each once (`patch`, a merge patch), lists them all.
async fn phases<K>(
    client: &kube::Client,
    api: &Api<K>,
    n: usize,
    make: impl Fn(&str) -> K,
    patch: &Value,
) -> Phases
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let before = counting::live();
    let start = Instant::now();
    for i in 0..n {
        api.create(&PostParams::default(), &make(&format!("o-{i}")))
            .await
            .expect("create");
    }
    let create = start.elapsed();
    let bytes_per_object = (counting::live() - before) as f64 / n as f64;
    let start = Instant::now();
    for i in 0..n {
        api.patch(
            &format!("o-{i}"),
            &PatchParams::default(),
            &Patch::Merge(patch),
        )
        .await
        .expect("update");
    }
    let update = start.elapsed();
    let start = Instant::now();
    let listed = api.list(&ListParams::default()).await.expect("list");
    let list = start.elapsed();
    assert_eq!(listed.items.len(), n);
    let request = http::Request::get(api.resource_url())
        .body(Vec::new())
        .expect("a request");
    let start = Instant::now();
    let text = client.request_text(request).await.expect("list");
    let list_bytes = start.elapsed();
    assert!(
        text.len() > n * 1000,
        "{} bytes for {n} objects",
        text.len()
    );
    Phases {
        create,
        update,
        list,
        list_bytes,
        bytes_per_object,
    }
}

/// Serves each kind once on a throwaway server, so that what the server builds once per process
/// (each kind's Go type and apply schema, read from the OpenAPI definitions) is neither counted
/// as the first round's time nor as its objects' bytes.
async fn warm_up(size: usize) {
    let server = ApiServer::start().await.expect("server");
    let client = server.client().expect("client");
    let patch = json!({ "metadata": { "labels": { "warm": "up" } } });
    phases(
        &client,
        &Api::namespaced(client.clone(), "default"),
        1,
        deployment,
        &patch,
    )
    .await;
    phases(
        &client,
        &Api::namespaced(client.clone(), "default"),
        1,
        |name| config_map(name, size),
        &patch,
    )
    .await;
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}

async fn run() {
    let n = env("BENCH_WORKLOAD_OBJECTS", 1_000);
    let rounds = env("BENCH_ROUNDS", 5).max(1);
    let size = serde_json::to_vec(&deployment("o-0000"))
        .expect("JSON")
        .len();
    println!(
        "{n} objects per kind, {rounds} rounds; a Deployment of {size} bytes of JSON (3 containers), \
         a ConfigMap of the same size"
    );
    warm_up(size).await;
    let mut ratios: [Vec<f64>; 4] = Default::default();
    let mut bytes = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let server = ApiServer::start().await.expect("server");
        let client = server.client().expect("client");
        let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
        let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        let deployment_patch = json!({ "spec": { "replicas": 4 } });
        let config_map_patch = json!({ "metadata": { "labels": { "round": "updated" } } });
        let run_deployments = || phases(&client, &deployments, n, deployment, &deployment_patch);
        let run_config_maps = || {
            phases(
                &client,
                &config_maps,
                n,
                |name| config_map(name, size),
                &config_map_patch,
            )
        };
        let (d, c) = if round % 2 == 0 {
            let c = run_config_maps().await;
            (run_deployments().await, c)
        } else {
            let d = run_deployments().await;
            (d, run_config_maps().await)
        };
        let round_ratios = [
            d.create.as_secs_f64() / c.create.as_secs_f64(),
            d.update.as_secs_f64() / c.update.as_secs_f64(),
            d.list.as_secs_f64() / c.list.as_secs_f64(),
            d.list_bytes.as_secs_f64() / c.list_bytes.as_secs_f64(),
        ];
        println!(
            "round {round}: create {:?} / {:?}, update {:?} / {:?}, list {:?} / {:?}, list as bytes {:?} / {:?} (Deployment / ConfigMap)",
            d.create, c.create, d.update, c.update, d.list, c.list, d.list_bytes, c.list_bytes
        );
        for (all, ratio) in ratios.iter_mut().zip(round_ratios) {
            all.push(ratio);
        }
        bytes.0.push(d.bytes_per_object);
        bytes.1.push(c.bytes_per_object);
    }
    let names = [
        "create",
        "update",
        "list",
        "list read as bytes (no client decoding)",
    ];
    for (name, all) in names.iter().zip(&mut ratios) {
        let (low, high) = all
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), r| (l.min(*r), h.max(*r)));
        println!(
            "{name}: Deployment / ConfigMap of equal size: median {:.2}x (range {low:.2}–{high:.2} over {rounds} rounds)",
            median(all)
        );
    }
    println!(
        "memory per stored object (store and watch history): Deployment {:.0} B, ConfigMap of equal size {:.0} B (medians)",
        median(&mut bytes.0),
        median(&mut bytes.1)
    );
}
