//! Two controllers of the same kind, each on `BENCH_OPERATOR_OBJECTS` converged workloads
//! (default 100,000), on the same server:
//!
//! 1. shared caches: the bytes held (counted by a global allocator as what is freed when the
//!    operators are dropped) and the list requests issued by one operator of two controllers
//!    (one list-and-watch and one cache, shared), by two operators of one controller each (the
//!    anchor: nothing shared) and by one controller alone;
//! 2. scrape cost: `/metrics` of the operator's one registry with both controllers' per-object
//!    state (both read from the one cache at scrape time), time and bytes per scrape and series
//!    per object, against the same series held in prometheus `GaugeVec`s (the anchor: what
//!    hand-written controllers would keep).
//! 3. shared-watch fan-out: on a server of its own holding `BENCH_FANOUT_OBJECTS` converged
//!    workloads (default 1,000), `BENCH_FANOUT_EVENTS` status writes by a user (default 2,000;
//!    watch events that start no pass: a condition the controllers do not declare), and the
//!    bytes allocated in the process per event (counted by the global allocator, less what the
//!    same writes allocate with no controller running) by one controller, by one operator of
//!    `BENCH_FANOUT_CONTROLLERS` controllers (default 4; one watch, each event handed to each
//!    controller) and by as many operators of one controller (a watch each).
//!
//! `BENCH_OPERATOR_OBJECTS=0` skips parts 1 and 2, `BENCH_FANOUT_EVENTS=0` part 3.
//!
//! `cargo bench -p kubeward-tests --bench operator`

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, Patch, PatchParams};
use kubeward::operator::Operator;
use kubeward_testing::ApiServer;
use support::alloc::{self, Counting};
use support::drive::{self, size, wait_until};
use support::scrape::{encode, gauges_like, scrape_cost};
use support::ward::{self, CountPasses};
use support::workload::{CONTROLLER, NAMESPACE, Progress, READY, Steady, Workload};

#[global_allocator]
static GLOBAL: Counting = Counting;

const TIMEOUT: Duration = Duration::from_secs(1800);

/// What one run of an operator on the converged workloads measured.
struct Run {
    /// Start to every controller's first pass of every object.
    first_passes: Duration,
    /// Lists of workloads it issued (paged: one request per page).
    list_requests: usize,
    /// Bytes held, freed when it was dropped.
    memory: isize,
    /// The registry's scrape cost (median time, bytes) and text, while it ran.
    scrape: (Duration, usize, String),
}

/// Operators of the given numbers of workload controllers, each run in a task until `stop`
/// says so; their registries and tasks.
#[allow(clippy::type_complexity)]
fn spawn_operators(
    client: &kube::Client,
    operators: &[usize],
    progress: &Arc<Progress>,
    stop: &tokio::sync::watch::Sender<bool>,
) -> (
    Vec<prometheus::Registry>,
    Vec<tokio::task::JoinHandle<Result<(), kubeward::operator::OperatorError>>>,
) {
    let mut registries = Vec::new();
    let mut tasks = Vec::new();
    let mut index = 0;
    for &controllers in operators {
        let mut operator = Operator::new(client.clone());
        for _ in 0..controllers {
            let reconciler = ward::reconciler(
                client,
                progress,
                Steady::resyncing(Duration::from_secs(3600)),
            );
            let controller = operator
                .controller(reconciler)
                .with_name(format!("{CONTROLLER}-{index}"))
                .with_reporting_instance("bench-0")
                .with_observer(Arc::new(CountPasses(progress.clone())));
            operator = operator.with_controller(controller).expect("added");
            index += 1;
        }
        registries.push(operator.registry().clone());
        let mut stopped = stop.subscribe();
        let operator = operator.shutdown_on(async move {
            let _ = stopped.wait_for(|stop| *stop).await;
        });
        tasks.push(tokio::spawn(operator.run()));
    }
    (registries, tasks)
}

/// Runs operators of the given numbers of workload controllers (`[2]`: one operator of two;
/// `[1, 1]`: two operators of one, which share nothing) until each controller has passed every
/// one of the `n` objects, scrapes the first operator's registry `scrapes` times, and stops them.
async fn run(server: &ApiServer, operators: &[usize], n: usize, scrapes: usize) -> Run {
    let before = alloc::settled().await;
    let mark = server.requests().len();
    let client = server.client().expect("client");
    let progress = Arc::new(Progress::counting_only());
    let (stop, _) = tokio::sync::watch::channel(false);
    let started = Instant::now();
    let (registries, tasks) = spawn_operators(&client, operators, &progress, &stop);
    drop(client);
    let controllers: usize = operators.iter().sum();
    wait_until("every first pass", TIMEOUT, || {
        progress.passes() >= controllers * n
    })
    .await;
    let first_passes = started.elapsed();
    let (time, bytes) = scrape_cost(&registries[0], scrapes, encode);
    let text = encode(&registries[0]);
    let held = alloc::settled().await - before;
    stop.send_replace(true);
    for task in tasks {
        task.await.expect("operator task").expect("stops cleanly");
    }
    drop(registries);
    let after = alloc::settled().await;
    let list_requests = server.requests()[mark..]
        .iter()
        .filter(|r| {
            r.path.ends_with("/workloads") && !r.is_watch() && r.method == http::Method::GET
        })
        .count();
    Run {
        first_passes,
        list_requests,
        // What was held while they ran, less what they leaked (nothing, if all is well).
        memory: held - (after - before).max(0),
        scrape: (time, bytes, text),
    }
}

/// Writes `events` status changes that start no pass (a `Probe` condition beside the stored
/// `Ready`, its message changed each time), round robin over the `n` workloads, 16 at a time.
async fn probe_writes(driver: &kube::Client, n: usize, events: usize, round: usize) {
    let api: Api<Workload> = Api::namespaced(driver.clone(), NAMESPACE);
    futures::stream::iter(0..events)
        .map(|e| {
            let api = api.clone();
            async move {
                let status = serde_json::json!({ "status": { "conditions": [
                    {
                        "type": READY,
                        "status": "True",
                        "reason": "Available",
                        "message": "generation 1 is available",
                        "observedGeneration": 1,
                        "lastTransitionTime": "2026-12-01T00:00:00Z",
                    },
                    {
                        "type": "Probe",
                        "status": "True",
                        "reason": "Probed",
                        "message": format!("probe {round}.{e}"),
                        "lastTransitionTime": "2026-12-01T00:00:00Z",
                    },
                ]}});
                api.patch_status(
                    &format!("w{}", e % n),
                    &PatchParams::default(),
                    &Patch::Merge(&status),
                )
                .await
                .expect("probe write");
            }
        })
        .buffer_unordered(16)
        .collect::<()>()
        .await;
}

/// What the process allocated per probe write (part 3) with operators of the given numbers
/// of controllers running (none: the writes and the server alone), and the passes they ran.
async fn fanout(
    server: &ApiServer,
    driver: &kube::Client,
    operators: &[usize],
    n: usize,
    events: usize,
    round: usize,
) -> (f64, usize) {
    let client = server.client().expect("client");
    let progress = Arc::new(Progress::counting_only());
    let (stop, _) = tokio::sync::watch::channel(false);
    let (registries, tasks) = spawn_operators(&client, operators, &progress, &stop);
    drop(client);
    let controllers: usize = operators.iter().sum();
    wait_until("every first pass", TIMEOUT, || {
        progress.passes() >= controllers * n
    })
    .await;
    alloc::settled().await;
    let passes = progress.passes();
    let before = alloc::total();
    probe_writes(driver, n, events, round).await;
    // Until every watch has delivered the last write and every controller judged it: the
    // allocations stop (less than 64 KiB in a quarter of a second).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let quiet = Instant::now();
    loop {
        let from = alloc::total();
        tokio::time::sleep(Duration::from_millis(250)).await;
        if alloc::total() - from < 64 << 10 || quiet.elapsed() > Duration::from_secs(10) {
            break;
        }
    }
    let allocated = alloc::total() - before;
    let passes = progress.passes() - passes;
    stop.send_replace(true);
    for task in tasks {
        task.await.expect("operator task").expect("stops cleanly");
    }
    drop(registries);
    (allocated as f64 / events as f64, passes)
}

/// Part 3: the bytes allocated per watch event with one controller, with `controllers` in one
/// operator (one shared watch) and in as many operators (a watch each).
async fn fanout_figures() {
    let n = size("BENCH_FANOUT_OBJECTS", 1_000);
    let events = size("BENCH_FANOUT_EVENTS", 2_000);
    let controllers = size("BENCH_FANOUT_CONTROLLERS", 4);
    if events == 0 || n == 0 {
        return;
    }
    let (server, driver) = drive::seeded_server(n).await;
    probe_writes(&driver, n, n, 0).await;
    let object = server
        .object("bench.kubeward.dev/v1", "workloads", Some(NAMESPACE), "w0")
        .expect("w0");
    let object_bytes = serde_json::to_vec(&object).expect("serializes").len();
    let runs: [(&str, Vec<usize>); 4] = [
        ("no controller (the writes and the server)", vec![]),
        ("one controller", vec![1]),
        ("one operator of them (one shared watch)", vec![controllers]),
        (
            "as many operators of one (a watch each)",
            vec![1; controllers],
        ),
    ];
    let mut per_event = Vec::new();
    for (round, (_, operators)) in runs.iter().enumerate() {
        per_event.push(fanout(&server, &driver, operators, n, events, round + 1).await);
    }
    let base = per_event[0].0;
    println!(
        "watch fan-out: {events} status writes that start no pass, over {n} converged workloads \
         ({object_bytes} B of JSON each), {controllers} controllers; bytes allocated per event \
         beyond the writes' own ({base:.0} B per write with no controller):"
    );
    let one = per_event[1].0 - base;
    for ((what, _), (bytes, passes)) in runs.iter().zip(&per_event).skip(1) {
        let ours = bytes - base;
        println!(
            "  {what}: {ours:.0} B per event ({:.2}x one controller's), {passes} passes",
            ours / one,
        );
    }
    let extra = |i: usize| (per_event[i].0 - base - one) / (controllers as f64 - 1.0);
    println!(
        "  per controller beyond the first: shared watch {:.0} B per event, a watch each {:.0} B \
         per event ({:.2}x)",
        extra(2),
        extra(3),
        extra(2) / extra(3),
    );
}

fn mib(bytes: impl Into<f64>) -> f64 {
    bytes.into() / f64::from(1 << 20)
}

#[tokio::main]
async fn main() {
    fanout_figures().await;
    let n = size("BENCH_OPERATOR_OBJECTS", 100_000);
    let scrapes = size("BENCH_SCRAPES", 3);
    if n == 0 {
        return;
    }
    let (server, _driver) = drive::seeded_server(n).await;

    let one = run(&server, &[1], n, scrapes).await;
    let shared = run(&server, &[2], n, scrapes).await;
    let apart = run(&server, &[1, 1], n, scrapes).await;
    let line = |what: &str, run: &Run| {
        println!(
            "  {what}: {:.1} MiB held ({:.0} B/object), {:.2}x one controller's; {} workload \
             list requests; every first pass after {:.2?}",
            mib(run.memory as f64),
            run.memory as f64 / n as f64,
            run.memory as f64 / one.memory as f64,
            run.list_requests,
            run.first_passes,
        );
    };
    println!("two controllers of one kind at {n} objects:");
    line("one operator (one watch and cache, shared)", &shared);
    line("two operators (nothing shared)", &apart);
    line("one controller alone", &one);

    let two = shared;
    let (time, bytes, text) = &two.scrape;
    let object_series = text
        .lines()
        .filter(|l| l.starts_with("kubeward_object_"))
        .count();
    let before = alloc::settled().await;
    let gauges = gauges_like(text);
    let held = alloc::allocated() - before;
    let (gauge_time, gauge_bytes) = scrape_cost(&gauges, scrapes, encode);
    println!(
        "scrape of two controllers at {n} objects each: kubeward {time:.1?} and {:.1} MiB per \
         scrape, {object_series} object series ({:.1} per object and controller), 0 B held \
         between scrapes; the same series in GaugeVecs: {gauge_time:.1?} and {:.1} MiB per \
         scrape, {:.1} MiB held; ratio time {:.2}x",
        mib(*bytes as f64),
        object_series as f64 / (2 * n) as f64,
        mib(gauge_bytes as f64),
        mib(held as f64),
        time.as_secs_f64() / gauge_time.as_secs_f64(),
    );
}
