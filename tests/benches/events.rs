//! Event publishing: kubeward's `EventRecorder` against kube-runtime's `Recorder`, on the same
//! in-process API server in the same run. Reports API writes (from the server's request log),
//! what the server stored (events and the sum of their counts) and wall time, as ratios.
//!
//! `cargo bench -p kubeward-tests --bench events`

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, ObjectReference};
use k8s_openapi::api::events::v1::Event as K8sEvent;
use kube::api::{Api, ListParams, PostParams};
use kube::runtime::events as kr;
use kubeward::events::{Event, EventRecorder, Reporter};
use kubeward_testing::ApiServer;

const NAMESPACE: &str = "bench";
const CONTROLLER: &str = "bench.kubeward.dev/rollouts";

/// One recorder under test.
#[derive(Clone, Copy, PartialEq)]
enum Which {
    KubeRuntime,
    Kubeward,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::KubeRuntime => "kube-runtime Recorder",
            Which::Kubeward => "kubeward EventRecorder",
        }
    }
}

struct Measure {
    writes: usize,
    events: usize,
    stored_count: i64,
    wall: Duration,
}

/// How a scenario publishes: `total` publishes spread round-robin over `series` series,
/// `concurrency` at a time.
#[derive(Clone, Copy)]
struct Scenario {
    name: &'static str,
    total: usize,
    series: usize,
    concurrency: usize,
}

fn object(run: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("demo.kubeward.dev/v1".into()),
        kind: Some("Rollout".into()),
        namespace: Some(NAMESPACE.into()),
        name: Some(run.into()),
        uid: Some(format!("uid-{run}")),
        ..Default::default()
    }
}

fn note(i: usize, series: usize) -> String {
    format!("replica set {} is not ready", i % series)
}

async fn run(server: &ApiServer, which: Which, scenario: Scenario, run: &str) -> Measure {
    let client = server.client().expect("client");
    let regarding = object(run);
    server.request_log().clear();
    let started = Instant::now();
    match which {
        Which::KubeRuntime => {
            let recorder = kr::Recorder::new(
                client.clone(),
                kr::Reporter {
                    controller: CONTROLLER.into(),
                    instance: Some("bench-0".into()),
                },
            );
            let publishes = (0..scenario.total).map(|i| {
                let recorder = recorder.clone();
                let regarding = regarding.clone();
                async move {
                    let event = kr::Event {
                        type_: kr::EventType::Warning,
                        reason: "FailedDeploy".into(),
                        note: Some(note(i, scenario.series)),
                        action: "Deploy".into(),
                        secondary: None,
                    };
                    // kube-runtime keys series without the note: give each series its own
                    // action so both recorders see the same number of series.
                    let event = kr::Event {
                        action: format!("Deploy{}", i % scenario.series),
                        ..event
                    };
                    let _ = recorder.publish(&event, &regarding).await;
                }
            });
            drive(publishes, scenario.concurrency).await;
        }
        Which::Kubeward => {
            let recorder = EventRecorder::new(
                client.clone(),
                Reporter::new(CONTROLLER, "bench-0").expect("reporter"),
            );
            let publishes = (0..scenario.total).map(|i| {
                let recorder = recorder.clone();
                let regarding = regarding.clone();
                async move {
                    let event =
                        Event::warning("FailedDeploy", format!("Deploy{}", i % scenario.series))
                            .with_note(note(i, scenario.series));
                    let _ = recorder.publish(&event, &regarding).await;
                }
            });
            drive(publishes, scenario.concurrency).await;
            recorder.flush().await.expect("flush");
        }
    }
    let wall = started.elapsed();
    let writes = server
        .requests()
        .iter()
        .filter(|r| {
            matches!(r.method.as_str(), "POST" | "PATCH" | "PUT") && r.path.contains("/events")
        })
        .count();
    let stored: Vec<K8sEvent> = Api::<K8sEvent>::namespaced(client, NAMESPACE)
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(run))
        .collect();
    Measure {
        writes,
        events: stored.len(),
        stored_count: stored
            .iter()
            .map(|e| i64::from(e.series.as_ref().map_or(1, |s| s.count)))
            .sum(),
        wall,
    }
}

async fn drive(publishes: impl Iterator<Item = impl Future<Output = ()>>, concurrency: usize) {
    use futures::StreamExt;
    futures::stream::iter(publishes)
        .buffer_unordered(concurrency)
        .collect::<Vec<()>>()
        .await;
}

fn ratio(a: f64, b: f64) -> String {
    if b == 0.0 {
        "-".into()
    } else {
        format!("{:.3}", a / b)
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = ApiServer::start().await.expect("server");
    let mut ns = Namespace::default();
    ns.metadata.name = Some(NAMESPACE.into());
    Api::<Namespace>::all(server.client().expect("client"))
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");

    let scenarios = [
        Scenario {
            name: "1,000 identical, sequential",
            total: 1_000,
            series: 1,
            concurrency: 1,
        },
        Scenario {
            name: "1,000 over 100 series, sequential",
            total: 1_000,
            series: 100,
            concurrency: 1,
        },
        Scenario {
            name: "200 identical, concurrent",
            total: 200,
            series: 1,
            concurrency: 200,
        },
    ];
    println!(
        "{:<36} {:<24} {:>7} {:>7} {:>8} {:>10}",
        "scenario", "recorder", "writes", "events", "count", "wall ms"
    );
    for (n, scenario) in scenarios.into_iter().enumerate() {
        // Warm-up run of each, then the measured one.
        let mut results = Vec::new();
        for which in [Which::KubeRuntime, Which::Kubeward] {
            let _ = run(
                &server,
                which,
                scenario,
                &format!("warm-{n}-{}", which as u8),
            )
            .await;
            let m = run(
                &server,
                which,
                scenario,
                &format!("run-{n}-{}", which as u8),
            )
            .await;
            println!(
                "{:<36} {:<24} {:>7} {:>7} {:>8} {:>10.1}",
                scenario.name,
                which.name(),
                m.writes,
                m.events,
                m.stored_count,
                m.wall.as_secs_f64() * 1e3
            );
            results.push(m);
        }
        let (kr, kw) = (&results[0], &results[1]);
        println!(
            "{:<36} {:<24} {:>7} {:>7} {:>8} {:>10}   (expected count {})",
            "",
            "ratio kubeward/kube-rt",
            ratio(kw.writes as f64, kr.writes as f64),
            "",
            ratio(kw.stored_count as f64, kr.stored_count as f64),
            ratio(kw.wall.as_secs_f64(), kr.wall.as_secs_f64()),
            scenario.total
        );
    }
}
