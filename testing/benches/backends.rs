//! The embedded server against a real kube-apiserver (etcd, kube-controller-manager) on the
//! same requests, in one run: start-up time of each backend, and the time of one request mix
//! (create, get, merge patch, list of 100 ConfigMaps, then delete them), sequential, as the
//! administrator through each backend's [`Cluster`] (the real one through its fault proxy,
//! which is how tests reach it).
//!
//! `KUBEBUILDER_ASSETS=<dir> cargo bench -p kubeward-testing --bench backends`
//! (`scripts/kube-assets` prints the directory). Without it, this says so and measures nothing.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kubeward_testing::{ASSETS_VARIABLE, Backend, Cluster};
use serde_json::json;

const OBJECTS: usize = 100;
const STARTS: usize = 3;
const ROUNDS: usize = 3;

fn config_map(name: String) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name);
    cm.data = Some([("key".to_owned(), "value".to_owned())].into());
    cm
}

/// One request mix: 100 creates, gets, patches, one list, 100 deletes; its duration.
async fn request_mix(cluster: &Cluster, round: usize) -> Duration {
    let cms: Api<ConfigMap> = Api::namespaced(cluster.client().expect("client"), "default");
    let started = Instant::now();
    for i in 0..OBJECTS {
        let name = format!("r{round}-{i}");
        cms.create(&PostParams::default(), &config_map(name.clone()))
            .await
            .expect("create");
        cms.get(&name).await.expect("get");
        let patch = json!({ "data": { "key": "patched" } });
        cms.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("patch");
    }
    let listed = cms.list(&ListParams::default()).await.expect("list");
    assert!(listed.items.len() >= OBJECTS);
    for i in 0..OBJECTS {
        cms.delete(&format!("r{round}-{i}"), &DeleteParams::default())
            .await
            .expect("delete");
    }
    started.elapsed()
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Median start-up time of `backend` and median time of the request mix on it.
async fn measure(backend: Backend) -> (String, Duration, Duration) {
    let mut starts = Vec::new();
    let mut cluster = None;
    for _ in 0..STARTS {
        drop(cluster.take());
        let started = Instant::now();
        cluster = Some(Cluster::start_on(backend).await.expect("backend starts"));
        starts.push(started.elapsed());
    }
    let cluster = cluster.expect("started");
    // One unmeasured round warms connections and caches.
    request_mix(&cluster, 0).await;
    let mut rounds = Vec::new();
    for round in 1..=ROUNDS {
        rounds.push(request_mix(&cluster, round).await);
    }
    (cluster.describe(), median(starts), median(rounds))
}

fn main() {
    if std::env::var_os(ASSETS_VARIABLE).is_none() {
        println!(
            "backends: not measured: {ASSETS_VARIABLE} is not set (scripts/kube-assets prints it)"
        );
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let requests = OBJECTS * 4 + 1;
        let embedded = measure(Backend::Embedded).await;
        let real = measure(Backend::Real).await;
        for (name, start, mix) in [&embedded, &real] {
            println!(
                "{name}: start {start:.2?} (median of {STARTS}); {requests} requests in {mix:.2?} \
                 ({:.0}/s, median of {ROUNDS})",
                requests as f64 / mix.as_secs_f64()
            );
        }
        println!(
            "real / embedded: start-up {:.0}x, request mix {:.1}x (above 1: the embedded server is faster)",
            real.1.as_secs_f64() / embedded.1.as_secs_f64(),
            real.2.as_secs_f64() / embedded.2.as_secs_f64()
        );
    });
}
