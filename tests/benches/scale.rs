//! kubeward at scale against the anchor (a hand-written kube-runtime controller, see
//! `support::anchor`), each started on the same server holding `BENCH_SCALE_OBJECTS` converged
//! workloads (default 100,000):
//!
//! 1. start-up: the time from a controller's start to every object's first pass, and the list
//!    requests it issued (paged, as kube's watcher lists: 500 per page);
//! 2. memory after convergence: the bytes a controller holds once every watch has listed,
//!    counted by a global allocator as what is freed when the controller is dropped (the
//!    server's storage stays allocated on both sides of that difference, so it does not count);
//! 3. scrape cost: `/metrics` of kubeward's registry with per-object state, bytes and time per
//!    scrape and series per object, against the same series held in prometheus `GaugeVec`s (what
//!    a hand-written controller would keep, set in its reconcile), and what holding those costs
//!    (`BENCH_SCRAPES` scrapes, default 3; 0 skips this part).
//!
//! With `BENCH_CHILDREN_PER_OBJECT` set, each workload is seeded with that many child ConfigMaps
//! (owned by it, as its controller applies them): both controllers watch them (kubeward caches
//! their metadata with an owner index; kube-runtime's `owns` keeps no store of them).
//!
//! `cargo bench -p kubeward-tests --bench scale`

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kubeward_testing::ApiServer;
use prometheus::Registry;
use support::alloc::{self, Counting};
use support::drive::{self, DRIVER, size, wait_until};
use support::requests::Tally;
use support::scrape::{copy_cost, encode, encode_gathered, gauges_like, scrape_cost};
use support::workload::{self, Progress};
use support::{anchor, ward};

#[global_allocator]
static GLOBAL: Counting = Counting;

const TIMEOUT: Duration = Duration::from_secs(1800);

/// What one start of a controller on the converged objects measured.
struct Start {
    /// Start to every object's first pass.
    first_passes: Duration,
    /// Its requests (lists and watches: nothing else at steady state).
    requests: Tally,
    /// Bytes held, freed when it was dropped.
    memory: isize,
    /// kubeward's registry, scraped before the controller was dropped.
    scrape: Option<String>,
}

async fn start(kubeward: bool, server: &ApiServer, n: usize) -> Start {
    let client = server.client().expect("client");
    let mark = server.requests().len();
    let progress = Arc::new(Progress::counting_only());
    let resync = Duration::from_secs(3600);
    let started = Instant::now();
    let (task, registry) = if kubeward {
        let registry = Registry::new();
        let controller = ward::controller(&client, &progress, resync, &registry);
        let task = tokio::spawn(async move { controller.run().await.expect("runs") });
        (task, Some(registry))
    } else {
        let task = tokio::spawn(anchor::run(client.clone(), progress.clone(), resync));
        (task, None)
    };
    drop(client);
    wait_until("every first pass", TIMEOUT, || progress.passes() >= n).await;
    let first_passes = started.elapsed();
    // Every watch listed (its watch opened after its list): the children's too.
    wait_until("every list", TIMEOUT, || {
        let tally = Tally::of(&server.requests()[mark..], DRIVER);
        tally.get("watch workloads") > 0 && tally.get("watch configmaps") > 0
    })
    .await;
    // Scraped before the readings, so that the text is live in both.
    let scrape = registry.as_ref().map(encode);
    let requests = Tally::of(&server.requests()[mark..], DRIVER);
    let held = alloc::settled().await;
    task.abort();
    let _ = task.await;
    drop(registry);
    let after = alloc::settled().await;
    Start {
        first_passes,
        requests,
        memory: held - after,
        scrape,
    }
}

fn mib(bytes: isize) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}

#[tokio::main]
async fn main() {
    let n = size("BENCH_SCALE_OBJECTS", 100_000);
    let scrapes = size("BENCH_SCRAPES", 3);
    let children = if workload::children_per_object_set() {
        workload::children_per_object()
    } else {
        0
    };
    let (server, _driver) = drive::seeded_server_with_children(n, children).await;

    let anchor = start(false, &server, n).await;
    let kubeward = start(true, &server, n).await;

    let lists = |s: &Start| s.requests.get("list workloads");
    println!(
        "start-up at {n} objects: every first pass after kubeward {:.2?}, anchor {:.2?} (ratio {:.2}); \
         list requests kubeward {}, anchor {}; all requests kubeward {}, anchor {}",
        kubeward.first_passes,
        anchor.first_passes,
        kubeward.first_passes.as_secs_f64() / anchor.first_passes.as_secs_f64(),
        lists(&kubeward),
        lists(&anchor),
        kubeward.requests,
        anchor.requests,
    );
    println!(
        "memory at {n} converged objects with {children} children each: kubeward {:.1} MiB \
         ({:.0} B/object), anchor {:.1} MiB ({:.0} B/object), ratio {:.3}x",
        mib(kubeward.memory),
        kubeward.memory as f64 / n as f64,
        mib(anchor.memory),
        anchor.memory as f64 / n as f64,
        kubeward.memory as f64 / anchor.memory as f64,
    );

    if scrapes == 0 {
        // `BENCH_SCRAPES=0`: start-up and memory only.
        return;
    }
    // Scrape cost: kubeward's per-object state is read from the cache at scrape time; a
    // controller of its own would hold the same series. Re-run kubeward to scrape it live.
    let text = kubeward.scrape.expect("kubeward's scrape");
    let object_series = text
        .lines()
        .filter(|l| l.starts_with("kubeward_object_"))
        .count();
    let client = server.client().expect("client");
    let progress = Arc::new(Progress::counting_only());
    let registry = Registry::new();
    let controller = ward::controller(&client, &progress, Duration::from_secs(3600), &registry);
    let task = tokio::spawn(async move { controller.run().await.expect("runs") });
    wait_until("every first pass", TIMEOUT, || progress.passes() >= n).await;
    let (time, bytes) = scrape_cost(&registry, scrapes, encode);
    let (gathered_time, _) = scrape_cost(&registry, scrapes, encode_gathered);
    let copy_time = copy_cost(bytes, scrapes);
    task.abort();
    let before = alloc::settled().await;
    let gauges = gauges_like(&text);
    let held = alloc::allocated() - before;
    let (gauge_time, gauge_bytes) = scrape_cost(&gauges, scrapes, encode);
    let per_second = |time: Duration| bytes as f64 / f64::from(1 << 20) / time.as_secs_f64();
    println!(
        "scrape at {n} objects: kubeward {:.1?} ({:.0} MiB/s) and {:.1} MiB per scrape, \
         {object_series} object series ({:.1} per object), 0 B held between scrapes; gathered \
         through prometheus::TextEncoder {:.1?}; the same series in GaugeVecs: {:.1?} and \
         {:.1} MiB per scrape, {:.1} MiB held ({:.0} B/object); copying the bytes (the limit): \
         {:.1?} ({:.0} MiB/s); ratio time {:.2}x the GaugeVecs', {:.1}x the copy",
        time,
        per_second(time),
        mib(bytes as isize),
        object_series as f64 / n as f64,
        gathered_time,
        gauge_time,
        mib(gauge_bytes as isize),
        mib(held),
        held as f64 / n as f64,
        copy_time,
        per_second(copy_time),
        time.as_secs_f64() / gauge_time.as_secs_f64(),
        time.as_secs_f64() / copy_time.as_secs_f64(),
    );
}
