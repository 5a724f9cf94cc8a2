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
//!
//! `cargo bench -p kubeward-tests --bench operator`

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kubeward::controller::Controller;
use kubeward::operator::Operator;
use kubeward_testing::ApiServer;
use support::alloc::{self, Counting};
use support::drive::{self, size, wait_until};
use support::scrape::{encode, gauges_like, scrape_cost};
use support::ward::{self, CountPasses};
use support::workload::{CONTROLLER, Progress, Steady};

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

/// Runs operators of the given numbers of workload controllers (`[2]`: one operator of two;
/// `[1, 1]`: two operators of one, which share nothing) until each controller has passed every
/// one of the `n` objects, scrapes the first operator's registry `scrapes` times, and stops them.
async fn run(server: &ApiServer, operators: &[usize], n: usize, scrapes: usize) -> Run {
    let before = alloc::settled().await;
    let mark = server.requests().len();
    let client = server.client().expect("client");
    let progress = Arc::new(Progress::counting_only());
    let (stop, _) = tokio::sync::watch::channel(false);
    let mut registries = Vec::new();
    let mut tasks = Vec::new();
    let mut index = 0;
    let started = Instant::now();
    for &controllers in operators {
        let mut operator = Operator::new(client.clone());
        for _ in 0..controllers {
            let reconciler = ward::reconciler(
                &client,
                &progress,
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
    drop(client);
    let controllers: usize = operators.iter().sum();
    wait_until("every first pass", TIMEOUT, || {
        progress.passes() >= controllers * n
    })
    .await;
    let first_passes = started.elapsed();
    let (time, bytes) = scrape_cost(&registries[0], scrapes);
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

fn mib(bytes: impl Into<f64>) -> f64 {
    bytes.into() / f64::from(1 << 20)
}

#[tokio::main]
async fn main() {
    let n = size("BENCH_OPERATOR_OBJECTS", 100_000);
    let scrapes = size("BENCH_SCRAPES", 3);
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
    let (gauge_time, gauge_bytes) = scrape_cost(&gauges, scrapes);
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
