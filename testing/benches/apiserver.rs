//! Throughput and latency of the in-process API server with 10,000 objects.
//!
//! `cargo bench -p kubeward-testing --bench apiserver`
//!
//! Reports: creates per second (sequential and 16 concurrent clients), a full LIST of 10,000
//! objects and the same in pages of 500, and watch delivery latency (time from sending an update to its MODIFIED event
//! arriving on an open watch), as p50/p99 over 1,000 updates; GET latency while watches replay
//! the whole store, against GET latency idle (a replay must not hold the lock other clients
//! need); and the time to the `410 Expired` of a watch from a compacted resourceVersion.

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kubeward_testing::ApiServer;
use serde_json::json;

const OBJECTS: usize = 10_000;
const CONCURRENCY: usize = 16;
const LATENCY_SAMPLES: usize = 1_000;
const REPLAYS: usize = 4;

fn cm(name: String) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name);
    cm.data = Some([("key".to_string(), "value".to_string())].into());
    cm
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(run());
}

async fn run() {
    let server = ApiServer::builder()
        .watch_history(4 * OBJECTS)
        .start()
        .await
        .expect("server");
    let client = server.client().expect("client");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    // The version before any object: a watch from it replays the whole retained history.
    let before = cms.list(&ListParams::default()).await.expect("list");
    let before = before.metadata.resource_version.expect("rv");

    let sequential = OBJECTS / 4;
    let start = Instant::now();
    for i in 0..sequential {
        cms.create(&PostParams::default(), &cm(format!("seq-{i}")))
            .await
            .expect("create");
    }
    let took = start.elapsed();
    println!(
        "create, sequential:        {:>8.0} writes/s ({sequential} objects in {took:?})",
        sequential as f64 / took.as_secs_f64()
    );

    let concurrent = OBJECTS - sequential;
    let start = Instant::now();
    let tasks: Vec<_> = (0..CONCURRENCY)
        .map(|t| {
            let cms = cms.clone();
            tokio::spawn(async move {
                for i in (t..concurrent).step_by(CONCURRENCY) {
                    cms.create(&PostParams::default(), &cm(format!("par-{i}")))
                        .await
                        .expect("create");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    let took = start.elapsed();
    println!(
        "create, {CONCURRENCY} concurrent:     {:>8.0} writes/s ({concurrent} objects in {took:?})",
        concurrent as f64 / took.as_secs_f64()
    );

    let start = Instant::now();
    let list = cms.list(&ListParams::default()).await.expect("list");
    println!(
        "list of {} objects:     {:>8.1} ms",
        list.items.len(),
        start.elapsed().as_secs_f64() * 1e3
    );

    let start = Instant::now();
    let mut paged = 0;
    let mut token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().limit(500);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = cms.list(&lp).await.expect("page");
        paged += page.items.len();
        token = page.metadata.continue_;
        if token.is_none() {
            break;
        }
    }
    println!(
        "paged list, 500 per page:  {:>8.1} ms ({paged} objects, as kube's watcher lists)",
        start.elapsed().as_secs_f64() * 1e3
    );

    let from = list.metadata.resource_version.clone().expect("rv");
    let mut watch = cms
        .watch(&WatchParams::default(), &from)
        .await
        .expect("watch")
        .boxed();
    let mut latencies = Vec::with_capacity(LATENCY_SAMPLES);
    for i in 0..LATENCY_SAMPLES {
        let name = format!("seq-{}", i % sequential);
        let start = Instant::now();
        cms.patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"key": format!("v{i}")}})),
        )
        .await
        .expect("patch");
        loop {
            match watch.next().await {
                Some(Ok(WatchEvent::Modified(o))) if o.metadata.name.as_deref() == Some(&name) => {
                    break;
                }
                Some(Ok(_)) => continue,
                other => panic!("watch ended: {other:?}"),
            }
        }
        latencies.push(start.elapsed());
    }
    latencies.sort();
    println!(
        "patch -> watch event:      p50 {:?}, p99 {:?} ({LATENCY_SAMPLES} samples, {OBJECTS} objects stored)",
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99)
    );

    get_during_replays(&server, &cms, &before).await;
}

/// Latencies of `samples` sequential GETs of one object, sorted.
async fn get_latencies(cms: &Api<ConfigMap>, samples: usize) -> Vec<Duration> {
    let mut latencies = Vec::with_capacity(samples);
    for _ in 0..samples {
        let start = Instant::now();
        cms.get("seq-0").await.expect("get");
        latencies.push(start.elapsed());
    }
    latencies.sort();
    latencies
}

/// GET latency idle, then while `REPLAYS` watches from `before` (the version before any object)
/// replay the retained history, then the time a watch from a compacted resourceVersion takes to
/// get its 410.
async fn get_during_replays(server: &ApiServer, cms: &Api<ConfigMap>, before: &str) {
    let idle = get_latencies(cms, 200).await;
    let replays: Vec<_> = (0..REPLAYS)
        .map(|_| {
            let cms = cms.clone();
            let before = before.to_owned();
            tokio::spawn(async move {
                let mut watch = cms
                    .watch(&WatchParams::default().timeout(60), &before)
                    .await
                    .expect("watch")
                    .boxed();
                let mut added = 0;
                while added < OBJECTS {
                    match watch.next().await {
                        Some(Ok(WatchEvent::Added(_))) => added += 1,
                        Some(Ok(_)) => {}
                        other => panic!("replay ended: {other:?}"),
                    }
                }
            })
        })
        .collect();
    let start = Instant::now();
    let mut during = Vec::new();
    while replays.iter().any(|r| !r.is_finished()) {
        during.extend(get_latencies(cms, 10).await);
    }
    let replayed = start.elapsed();
    for r in replays {
        r.await.expect("replay");
    }
    during.sort();
    println!(
        "GET idle:                  p50 {:?}, p99 {:?} (200 samples)",
        percentile(&idle, 0.5),
        percentile(&idle, 0.99)
    );
    println!(
        "GET during {REPLAYS} replays:     p50 {:?}, p99 {:?}, max {:?} ({} samples; {REPLAYS} x {OBJECTS} ADDED replayed from history in {replayed:?})",
        percentile(&during, 0.5),
        percentile(&during, 0.99),
        during.last().copied().unwrap_or_default(),
        during.len()
    );

    server.compact();
    let start = Instant::now();
    let mut watch = cms
        .watch(&WatchParams::default(), before)
        .await
        .expect("watch")
        .boxed();
    loop {
        match watch.next().await {
            Some(Ok(WatchEvent::Error(e))) if e.code == 410 => break,
            Some(Ok(WatchEvent::Bookmark(_))) => {}
            other => panic!("expected 410 Expired, got {other:?}"),
        }
    }
    println!(
        "watch from a compacted RV: {:?} to its 410 Expired ({OBJECTS} objects stored)",
        start.elapsed()
    );
}
