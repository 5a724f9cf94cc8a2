//! Real controller work, kubeward against the anchor a user would otherwise write by hand (a
//! kube-runtime `Controller` with kube-runtime's `finalizer` helper and `events::Recorder`), each
//! on a fresh in-process API server in the same run:
//!
//! 1. requests per object lifecycle: `BENCH_LIFECYCLE_OBJECTS` workloads (default 1,000) are
//!    created, edited `BENCH_EDITS` times (default 2; every generation walks three transitions),
//!    left at steady state for `BENCH_RESYNCS` periodic resyncs (default 3, one per second),
//!    then deleted (cleanup writes a condition and deletes the child). The server's request log
//!    is tallied by verb and resource, against the minimum the workload needs
//!    ([`support::workload::minimum`]). kubeward's per-object metrics are scraped after the
//!    deletes: no series of a deleted object may remain.
//! 2. throughput with that work: `BENCH_THROUGHPUT_OBJECTS` (default 10,000) new workloads
//!    converged (finalizer, three transitions, child applied and read back) from a controller's
//!    start, `BENCH_RUNS` alternating runs per side (default 1).
//!
//! Each workload owns one child ConfigMap, or `BENCH_CHILDREN_PER_OBJECT` of them.
//!
//! `cargo bench -p kubeward-tests --bench lifecycle`

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use kubeward_testing::ApiServer;
use support::alloc::{self, Counting};
use support::drive::{self, DRIVER, size, wait_until};
use support::requests::Tally;
use support::workload::{Progress, minimum};
use support::{anchor, ward};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One controller under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Kubeward,
    Anchor,
}

/// A controller running in a task of its own until aborted.
struct Running {
    task: tokio::task::JoinHandle<()>,
    /// kubeward's registry (every metric, per-object state included).
    registry: Option<prometheus::Registry>,
}

fn start(side: Side, client: &kube::Client, progress: &Arc<Progress>, resync: Duration) -> Running {
    match side {
        Side::Kubeward => {
            let registry = prometheus::Registry::new();
            let controller = ward::controller(client, progress, resync, &registry);
            Running {
                task: tokio::spawn(async move { controller.run().await.expect("runs") }),
                registry: Some(registry),
            }
        }
        Side::Anchor => Running {
            task: tokio::spawn(anchor::run(client.clone(), progress.clone(), resync)),
            registry: None,
        },
    }
}

const TIMEOUT: Duration = Duration::from_secs(1800);

/// The requests of one side's lifecycle, by phase.
struct Lifecycle {
    phases: Vec<(&'static str, Tally)>,
    total: Tally,
    passes: usize,
    wall: Duration,
}

/// The requests the controller made since `mark`; moves `mark` to the end of the log.
fn since(server: &ApiServer, mark: &mut usize) -> Tally {
    let records = server.requests();
    let tally = Tally::of(&records[*mark..], DRIVER);
    *mark = records.len();
    tally
}

async fn lifecycle(side: Side, n: usize, edits: usize, resyncs: usize) -> Lifecycle {
    let (server, driver) = drive::server().await;
    let client = server.client().expect("client");
    let progress = Arc::new(Progress::default());
    let started = Instant::now();
    let running = start(side, &client, &progress, Duration::from_secs(1));
    let mut mark = 0;
    let mut phases = Vec::new();
    let converged = |generations: usize| {
        let progress = progress.clone();
        move || progress.converged.load(Ordering::Relaxed) >= n * generations
    };

    drive::create(&driver, n).await;
    wait_until("creation", TIMEOUT, converged(1)).await;
    phases.push(("create", since(&server, &mut mark)));
    for round in 1..=edits {
        drive::edit(&driver, n, round).await;
        wait_until("an edit", TIMEOUT, converged(round + 1)).await;
        phases.push(("edit", since(&server, &mut mark)));
    }
    let steady = progress.steady.load(Ordering::Relaxed);
    wait_until("resyncs", TIMEOUT, || {
        progress.steady.load(Ordering::Relaxed) >= steady + resyncs * n
    })
    .await;
    phases.push(("steady", since(&server, &mut mark)));
    drive::delete(&driver, n).await;
    wait_until("deletion", TIMEOUT, || drive::stored(&server) == 0).await;
    // Requests still under way for deleted objects (a stale pass) belong to this phase.
    tokio::time::sleep(Duration::from_millis(500)).await;
    phases.push(("delete", since(&server, &mut mark)));
    let wall = started.elapsed();

    if let Some(registry) = &running.registry {
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .expect("encodes");
        let left: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("kubeward_object_"))
            .collect();
        assert!(
            left.is_empty(),
            "series of deleted objects remain: {left:?}"
        );
    }
    running.task.abort();
    let mut total = Tally::default();
    for (_, tally) in &phases {
        for (key, count) in &tally.0 {
            *total.0.entry(key.clone()).or_default() += count;
        }
    }
    Lifecycle {
        phases,
        total,
        passes: progress.passes(),
        wall,
    }
}

fn requests_per_lifecycle() {
    let n = size("BENCH_LIFECYCLE_OBJECTS", 1_000);
    let edits = size("BENCH_EDITS", 2);
    let resyncs = size("BENCH_RESYNCS", 3);
    let rt = runtime();
    let kubeward = rt.block_on(lifecycle(Side::Kubeward, n, edits, resyncs));
    let anchor = rt.block_on(lifecycle(Side::Anchor, n, edits, resyncs));
    let minimum = Tally(
        minimum(edits)
            .into_iter()
            .map(|(k, v)| (k, v * n))
            .collect(),
    );

    println!(
        "requests per lifecycle: {n} objects with {} children each, create + {edits} edits + \
         {resyncs} resyncs + delete",
        support::workload::children_per_object(),
    );
    let mut keys: Vec<&String> = minimum
        .0
        .keys()
        .chain(kubeward.total.0.keys())
        .chain(anchor.total.0.keys())
        .collect();
    keys.sort();
    keys.dedup();
    println!(
        "  {:<40} {:>9} {:>9} {:>9}",
        "request", "minimum", "kubeward", "anchor"
    );
    for key in keys {
        println!(
            "  {key:<40} {:>9} {:>9} {:>9}",
            minimum.get(key),
            kubeward.total.get(key),
            anchor.total.get(key)
        );
    }
    for (i, (phase, tally)) in kubeward.phases.iter().enumerate() {
        let anchor = &anchor.phases[i].1;
        println!(
            "  phase {phase:<7} kubeward {:>7} requests ({:>6} writes), anchor {:>7} ({:>6} writes)",
            tally.total(),
            tally.writes(),
            anchor.total(),
            anchor.writes()
        );
    }
    let per_object =
        |l: &Lifecycle| l.total.per_object(&["workloads", "configmaps"]).total() as f64 / n as f64;
    let floor = minimum.total() as f64 / n as f64;
    let steady = |l: &Lifecycle| {
        l.phases
            .iter()
            .find(|(p, _)| *p == "steady")
            .unwrap()
            .1
            .writes()
    };
    println!(
        "  per object: minimum {floor:.2}, kubeward {:.2} (ratio {:.2} to the minimum), anchor {:.2} \
         (ratio {:.2}); kubeward/anchor {:.2}; steady-state writes: kubeward {}, anchor {}; \
         passes: kubeward {}, anchor {}; wall: kubeward {:.1?}, anchor {:.1?}",
        per_object(&kubeward),
        per_object(&kubeward) / floor,
        per_object(&anchor),
        per_object(&anchor) / floor,
        per_object(&kubeward) / per_object(&anchor),
        steady(&kubeward),
        steady(&anchor),
        kubeward.passes,
        anchor.passes,
        kubeward.wall,
        anchor.wall,
    );
}

/// One convergence of new workloads from a controller's start.
#[derive(Debug, Clone, Copy)]
struct Converged {
    elapsed: Duration,
    passes: usize,
    /// The bytes the controller held once converged, freed when it was dropped (its event
    /// caches included).
    memory: isize,
}

/// How long `n` new workloads take to converge from a controller's start, its passes, and the
/// memory it holds then.
async fn converge(side: Side, n: usize) -> Converged {
    let (server, driver) = drive::server().await;
    drive::create(&driver, n).await;
    let client = server.client().expect("client");
    let progress = Arc::new(Progress::default());
    let started = Instant::now();
    let running = start(side, &client, &progress, Duration::from_secs(3600));
    wait_until("convergence", TIMEOUT, || {
        progress.converged.load(Ordering::Relaxed) >= n
    })
    .await;
    let elapsed = started.elapsed();
    let held = alloc::settled().await;
    running.task.abort();
    let _ = running.task.await;
    drop(running.registry);
    let memory = held - alloc::settled().await;
    Converged {
        elapsed,
        passes: progress.passes(),
        memory,
    }
}

fn throughput() {
    let n = size("BENCH_THROUGHPUT_OBJECTS", 10_000);
    let runs = size("BENCH_RUNS", 1);
    let rt = runtime();
    let (mut kubeward, mut anchor) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        anchor.push(rt.block_on(converge(Side::Anchor, n)));
        kubeward.push(rt.block_on(converge(Side::Kubeward, n)));
    }
    let best = |runs: &[Converged]| *runs.iter().min_by_key(|r| r.elapsed).unwrap();
    let (k, a) = (best(&kubeward), best(&anchor));
    let rate = |r: Converged| n as f64 / r.elapsed.as_secs_f64();
    let passes = |r: Converged| r.passes as f64 / r.elapsed.as_secs_f64();
    println!(
        "throughput with real work: {n} objects converged (best of {runs}): kubeward {:.1?} \
         ({:.0} objects/s, {} passes, {:.0} passes/s), anchor {:.1?} ({:.0} objects/s, {} passes, \
         {:.0} passes/s); ratio {:.3}x objects/s; all runs kubeward {:?}, anchor {:?}",
        k.elapsed,
        rate(k),
        k.passes,
        passes(k),
        a.elapsed,
        rate(a),
        a.passes,
        passes(a),
        rate(k) / rate(a),
        kubeward.iter().map(|r| r.elapsed).collect::<Vec<_>>(),
        anchor.iter().map(|r| r.elapsed).collect::<Vec<_>>(),
    );
    let mib = |r: Converged| r.memory as f64 / f64::from(1 << 20);
    println!(
        "memory once {n} objects converged (event caches included): kubeward {:.1} MiB ({:.0} B/object), \
         anchor {:.1} MiB ({:.0} B/object), ratio {:.3}x",
        mib(k),
        k.memory as f64 / n as f64,
        mib(a),
        a.memory as f64 / n as f64,
        k.memory as f64 / a.memory as f64,
    );
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn main() {
    requests_per_lifecycle();
    throughput();
}
