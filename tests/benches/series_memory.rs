//! Memory held by the event series cache with 100,000 live series (`BENCH_SERIES`), kubeward's
//! `EventRecorder` against kube-runtime's `Recorder` in the same run, on the in-process API
//! server.
//!
//! Measured with a counting global allocator: the bytes freed when the recorder (and with it its
//! cache) is dropped after the publishes — the API server's own storage stays allocated on both
//! sides of that difference, so it does not count.
//!
//! `cargo bench -p kubeward-tests --bench series_memory`

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::runtime::events as kr;
use kubeward::events::{Event, EventRecorder, Reporter};
use kubeward_testing::ApiServer;

#[path = "support/alloc.rs"]
#[allow(dead_code)]
mod alloc;
use alloc::Counting;

#[global_allocator]
static GLOBAL: Counting = Counting;

const CONTROLLER: &str = "bench.kubeward.dev/memory";

fn regarding(i: usize) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("ConfigMap".into()),
        namespace: Some("default".into()),
        name: Some(format!("object-{i}")),
        uid: Some(format!("00000000-0000-0000-0000-{i:012}")),
        ..ObjectReference::default()
    }
}

async fn kubeward(server: &ApiServer, series: usize) -> (isize, Duration) {
    let client = server.client().unwrap();
    let recorder = EventRecorder::new(client, Reporter::new(CONTROLLER, "bench").unwrap())
        .with_max_series(series * 2)
        .with_flush_interval(Duration::from_secs(3600));
    let start = Instant::now();
    futures::stream::iter(0..series)
        .for_each_concurrent(64, |i| {
            let recorder = recorder.clone();
            async move {
                let event = Event::warning("ReconcileFailed", "Reconcile")
                    .with_note(format!("failure {i}"));
                recorder.publish(&event, &regarding(i)).await.unwrap();
            }
        })
        .await;
    let elapsed = start.elapsed();
    assert_eq!(recorder.series_in_memory(), series);
    let with_cache = alloc::settled().await;
    drop(recorder);
    (with_cache - alloc::settled().await, elapsed)
}

async fn kube_runtime(server: &ApiServer, series: usize) -> (isize, Duration) {
    let client = server.client().unwrap();
    let recorder = kr::Recorder::new(
        client,
        kr::Reporter {
            controller: CONTROLLER.into(),
            instance: Some("bench".into()),
        },
    );
    let start = Instant::now();
    futures::stream::iter(0..series)
        .for_each_concurrent(64, |i| {
            let recorder = recorder.clone();
            async move {
                let event = kr::Event {
                    type_: kr::EventType::Warning,
                    reason: "ReconcileFailed".into(),
                    note: Some(format!("failure {i}")),
                    action: "Reconcile".into(),
                    secondary: None,
                };
                recorder.publish(&event, &regarding(i)).await.unwrap();
            }
        })
        .await;
    let elapsed = start.elapsed();
    let with_cache = alloc::settled().await;
    drop(recorder);
    (with_cache - alloc::settled().await, elapsed)
}

#[tokio::main]
async fn main() {
    let series: usize = std::env::var("BENCH_SERIES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let server = ApiServer::builder()
        .event_ttl(Duration::from_secs(3600))
        .start()
        .await
        .unwrap();
    let (kubeward_bytes, kubeward_time) = kubeward(&server, series).await;
    let (anchor_bytes, anchor_time) = kube_runtime(&server, series).await;
    let per = |bytes: isize| bytes as f64 / series as f64;
    println!(
        "series cache memory at {series} series: kubeward {:.1} MiB ({:.0} B/series, published in {:.1?}), \
         kube-runtime Recorder {:.1} MiB ({:.0} B/series, published in {:.1?}), ratio {:.2}x",
        kubeward_bytes as f64 / (1 << 20) as f64,
        per(kubeward_bytes),
        kubeward_time,
        anchor_bytes as f64 / (1 << 20) as f64,
        per(anchor_bytes),
        anchor_time,
        kubeward_bytes as f64 / anchor_bytes as f64,
    );
}
