//! One `Operator` of two controllers of the same kind, each on `BENCH_OPERATOR_OBJECTS` converged
//! workloads (default 100,000), against one controller alone in an operator, on the same server:
//!
//! 1. shared caches: the bytes the operator holds (counted by a global allocator as what is
//!    freed when it is dropped) and the list requests it issued — two controllers watching one
//!    kind share one list-and-watch and one cache, so neither doubles;
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

/// Runs an operator of `controllers` workload controllers until each has passed every one of
/// the `n` objects, scrapes its registry `scrapes` times, and stops it.
async fn run(server: &ApiServer, controllers: usize, n: usize, scrapes: usize) -> Run {
    let before = alloc::settled().await;
    let mark = server.requests().len();
    let client = server.client().expect("client");
    let progress = Arc::new(Progress::counting_only());
    let mut operator = Operator::new(client.clone());
    for index in 0..controllers {
        let reconciler = ward::reconciler(
            &client,
            &progress,
            Steady::resyncing(Duration::from_secs(3600)),
        );
        let controller = Controller::new(reconciler, client.clone())
            .with_name(format!("{CONTROLLER}-{index}"))
            .with_reporting_instance("bench-0")
            .with_observer(Arc::new(CountPasses(progress.clone())));
        operator = operator.with_controller(controller).expect("added");
    }
    let registry = operator.registry().clone();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let operator = operator.shutdown_on(async move {
        let _ = stopped.await;
    });
    drop(client);
    let started = Instant::now();
    let task = tokio::spawn(operator.run());
    wait_until("every first pass", TIMEOUT, || {
        progress.passes() >= controllers * n
    })
    .await;
    let first_passes = started.elapsed();
    let (time, bytes) = scrape_cost(&registry, scrapes);
    let text = encode(&registry);
    let held = alloc::settled().await - before;
    let _ = stop.send(());
    task.await.expect("operator task").expect("stops cleanly");
    drop(registry);
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
        // What was held while it ran, less what it leaked (nothing, if all is well).
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
    let (server, driver) = drive::server().await;
    let seeding = Instant::now();
    drive::create_converged(&driver, n).await;
    println!(
        "seeded {n} converged workloads in {:.1?}",
        seeding.elapsed()
    );

    let one = run(&server, 1, n, scrapes).await;
    let two = run(&server, 2, n, scrapes).await;
    println!(
        "shared cache at {n} objects: two controllers of one kind hold {:.1} MiB ({:.0} B/object), \
         one controller {:.1} MiB ({:.0} B/object): ratio {:.2}x; workload list requests two {}, \
         one {}; every first pass after two {:.2?}, one {:.2?}",
        mib(two.memory as f64),
        two.memory as f64 / n as f64,
        mib(one.memory as f64),
        one.memory as f64 / n as f64,
        two.memory as f64 / one.memory as f64,
        two.list_requests,
        one.list_requests,
        two.first_passes,
        one.first_passes,
    );

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
