//! Pass latency while `/metrics` is scraped (issue 23, item 8): kubeward's controller on
//! `BENCH_SCRAPE_OBJECTS` converged workloads (default 100,000) with every metric registered
//! (per-object state included: about 150 MiB of text per scrape at 100,000), on the default
//! multi-threaded runtime (one worker per core). A probe edits one workload at a time and times
//! the edit to the end of the pass it starts, in three windows:
//!
//! 1. idle: no scrape (5 s);
//! 2. anchor: `BENCH_SCRAPES` scrapes (default 3) built and encoded synchronously on a runtime
//!    worker, as `/metrics` was served before;
//! 3. `OpsServer`: the same scrapes over HTTP from `kubeward::ops::OpsServer` (built on the
//!    blocking pool, streamed in chunks), the body read to its end.
//!
//! `cargo bench -p kubeward-tests --bench scrape`

mod support;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kube::api::{Api, Patch, PatchParams};
use kubeward::observe::{PassRecord, ReconcileObserver};
use prometheus::Registry;
use serde_json::json;
use support::drive::{self, size, wait_until};
use support::ward;
use support::workload::{NAMESPACE, Progress, Workload};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;

const TIMEOUT: Duration = Duration::from_secs(1800);
/// The workloads the probe edits in turn.
const PROBED: usize = 100;

/// Tells the probe when the next pass over the object it waits for finished.
#[derive(Default)]
struct Probe {
    waiting: Mutex<Option<(String, oneshot::Sender<Instant>)>>,
}

impl ReconcileObserver for Probe {
    fn pass_finished(&self, record: &PassRecord) {
        let mut waiting = self.waiting.lock().unwrap();
        if waiting
            .as_ref()
            .is_some_and(|(name, _)| *name == record.object.name)
            && let Some((_, done)) = waiting.take()
        {
            let _ = done.send(Instant::now());
        }
    }
}

/// Edits probed workloads one after the other until `until` completes: the latency from each
/// edit to the end of the pass it starts.
async fn probe_while(
    driver: &kube::Client,
    probe: &Probe,
    round: &mut usize,
    until: impl std::future::Future<Output = ()>,
) -> Vec<Duration> {
    let api = Api::<Workload>::namespaced(driver.clone(), NAMESPACE);
    let mut latencies = Vec::new();
    let mut until = std::pin::pin!(until);
    loop {
        *round += 1;
        let name = format!("w{}", *round % PROBED);
        let (done, finished) = oneshot::channel();
        *probe.waiting.lock().unwrap() = Some((name.clone(), done));
        let sent = Instant::now();
        let patch = json!({ "spec": { "image": format!("registry.example/app:probe-{round}") } });
        let edit = async {
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .expect("edit");
            tokio::time::timeout(Duration::from_secs(120), finished)
                .await
                .expect("the probe's pass finished")
                .expect("the probe is told")
        };
        tokio::select! {
            finished = edit => latencies.push(finished - sent),
            () = &mut until => return latencies,
        }
    }
}

/// A scrape as `/metrics` was served before: gathered and encoded on a runtime worker.
async fn scrape_on_a_worker(registry: &Registry) -> usize {
    let registry = registry.clone();
    tokio::spawn(async move {
        prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .expect("encodes")
            .len()
    })
    .await
    .expect("scrape")
}

/// A scrape of the ops server at `addr`: the bytes of its response, read to the end.
async fn scrape_over_http(addr: SocketAddr) -> usize {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .expect("send");
    let mut buffer = vec![0; 64 * 1024];
    let mut bytes = 0;
    loop {
        match stream.read(&mut buffer).await.expect("read") {
            0 => return bytes,
            n => bytes += n,
        }
    }
}

/// p50, p99 and max of `samples`.
fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99), at(1.0))
}

fn report(window: &str, samples: Vec<Duration>, scrape: Option<(Duration, usize)>) -> Duration {
    let n = samples.len();
    let (p50, p99, max) = percentiles(samples);
    let scrape = scrape.map_or(String::new(), |(time, bytes)| {
        format!(
            "; scrapes took {:.1?} each, {:.1} MiB",
            time,
            bytes as f64 / f64::from(1 << 20)
        )
    });
    println!(
        "{window}: {n} probes, edit to pass end p50 {p50:.1?}, p99 {p99:.1?}, max {max:.1?}{scrape}"
    );
    p99
}

#[tokio::main]
async fn main() {
    let n = size("BENCH_SCRAPE_OBJECTS", 100_000);
    let scrapes = size("BENCH_SCRAPES", 3);
    let (server, driver) = drive::seeded_server(n).await;

    let client = server.client().expect("client");
    let progress = Arc::new(Progress::counting_only());
    let registry = Registry::new();
    let probe = Arc::new(Probe::default());
    let controller = ward::controller(&client, &progress, Duration::from_secs(3600), &registry)
        .with_observer(probe.clone());
    let task = tokio::spawn(async move { controller.run().await.expect("runs") });
    wait_until("every first pass", TIMEOUT, || progress.passes() >= n).await;
    let ops = kubeward::ops::OpsServer::bind("127.0.0.1:0".parse().unwrap())
        .await
        .expect("binds")
        .with_registry(registry.clone())
        .with_request_timeout(Duration::from_secs(600));
    let addr = ops.local_addr().expect("address");
    tokio::spawn(ops.serve());

    let mut round = 0;
    let idle = probe_while(
        &driver,
        &probe,
        &mut round,
        tokio::time::sleep(Duration::from_secs(5)),
    )
    .await;
    let idle_p99 = report("idle", idle, None);

    let (scrape_time, bytes) = (Arc::new(Mutex::new(Vec::new())), Arc::new(Mutex::new(0)));
    let on_worker = probe_while(&driver, &probe, &mut round, async {
        for _ in 0..scrapes {
            let start = Instant::now();
            *bytes.lock().unwrap() = scrape_on_a_worker(&registry).await;
            scrape_time.lock().unwrap().push(start.elapsed());
        }
    })
    .await;
    let anchor_scrape = (
        drive::median(scrape_time.lock().unwrap().clone()),
        *bytes.lock().unwrap(),
    );
    let anchor_p99 = report(
        "anchor: scrapes encoded on a runtime worker",
        on_worker,
        Some(anchor_scrape),
    );

    scrape_time.lock().unwrap().clear();
    let streamed = probe_while(&driver, &probe, &mut round, async {
        for _ in 0..scrapes {
            let start = Instant::now();
            *bytes.lock().unwrap() = scrape_over_http(addr).await;
            scrape_time.lock().unwrap().push(start.elapsed());
        }
    })
    .await;
    let ops_scrape = (
        drive::median(scrape_time.lock().unwrap().clone()),
        *bytes.lock().unwrap(),
    );
    let ops_p99 = report(
        "OpsServer: scrapes built on the blocking pool, streamed",
        streamed,
        Some(ops_scrape),
    );
    println!(
        "p99 ratio at {n} objects: OpsServer / anchor {:.3}x, OpsServer / idle {:.2}x, anchor / idle {:.2}x",
        ops_p99.as_secs_f64() / anchor_p99.as_secs_f64(),
        ops_p99.as_secs_f64() / idle_p99.as_secs_f64(),
        anchor_p99.as_secs_f64() / idle_p99.as_secs_f64(),
    );
    task.abort();
}
