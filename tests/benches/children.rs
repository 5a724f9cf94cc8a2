//! Owned children, kubeward against the anchor (a kube-runtime `Controller` with `owns`), each on
//! a fresh in-process API server in the same run: `BENCH_CHILD_OBJECTS` converged workloads
//! (default 1,000), then each one's child ConfigMap deleted in turn by a user, and the time from
//! the delete's answer to the restored child's ADDED event on a watch of ConfigMaps (the
//! owner's pass, started by the child's delete event, applies it again). Reports p50, p99 and
//! max, and the passes each side ran for the deletes.
//!
//! Then, on the same servers, children deleted while the controllers' watches relist:
//! `server.compact()` ends every watch with `410 Expired`; the controller's list of ConfigMaps
//! (its relist) is held `BENCH_RELIST_HOLD_MS` (default 10,000; an injected latency) while the
//! owners' relist settles and `BENCH_RELIST_DELETES` children (default 100) are deleted by a
//! user; the list is then served without them — no watch ever delivers their deletes. Reports,
//! for each side, how many of them were restored within 30 s of the relist, and the time from
//! the relist's end (its last page answered) to each restore: p50, p99, max.
//!
//! `cargo bench -p kubeward-tests --bench children`

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams};
use kube::runtime::watcher;
use kubeward_testing::{ApiServer, Fault, FaultAction};
use support::alloc::Counting;
use support::drive::{self, size, wait_until};
use support::requests::verb_and_resource;
use support::workload::{NAMESPACE, Progress, Steady, children_per_object};
use support::{anchor, ward};
use tokio::sync::Notify;

#[global_allocator]
static GLOBAL: Counting = Counting;

const TIMEOUT: Duration = Duration::from_secs(600);
/// How long a child deleted during a relist is waited for after the relist.
const RELIST_WAIT: Duration = Duration::from_secs(30);
/// The user the controllers act as (the server's administrator client).
const CONTROLLER_USER: &str = "system:admin";

/// When each child was last created (by name), seen on the driver's watch of ConfigMaps.
#[derive(Default)]
struct Created {
    at: Mutex<HashMap<String, (String, Instant)>>,
    notify: Notify,
}

impl Created {
    /// Follows the ConfigMaps of `client`'s namespace, noting each new uid's arrival.
    fn follow(self: &Arc<Self>, client: kube::Client) -> tokio::task::JoinHandle<()> {
        let created = self.clone();
        tokio::spawn(async move {
            let api: Api<ConfigMap> = Api::namespaced(client, NAMESPACE);
            let mut events = std::pin::pin!(watcher(api, watcher::Config::default()));
            while let Some(event) = events.next().await {
                if let Ok(watcher::Event::Apply(c) | watcher::Event::InitApply(c)) = event {
                    let uid = c.uid().unwrap_or_default();
                    let mut at = created.at.lock().unwrap();
                    let fresh = at.get(&c.name_any()).is_none_or(|(known, _)| *known != uid);
                    if fresh {
                        at.insert(c.name_any(), (uid, Instant::now()));
                        created.notify.notify_waiters();
                    }
                }
            }
        })
    }

    fn uid(&self, name: &str) -> Option<String> {
        self.at
            .lock()
            .unwrap()
            .get(name)
            .map(|(uid, _)| uid.clone())
    }

    /// Waits until `name` is created with a uid other than `old`; when.
    async fn recreated(&self, name: &str, old: &str) -> Instant {
        self.recreated_within(name, old, Duration::from_secs(30))
            .await
            .unwrap_or_else(|| panic!("{name} was not restored"))
    }

    /// Waits at most `wait` until `name` is created with a uid other than `old`; when, if it was.
    async fn recreated_within(&self, name: &str, old: &str, wait: Duration) -> Option<Instant> {
        let deadline = Instant::now() + wait;
        loop {
            let notified = self.notify.notified();
            if let Some((uid, at)) = self.at.lock().unwrap().get(name)
                && uid != old
            {
                return Some(*at);
            }
            if Instant::now() >= deadline {
                return None;
            }
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
    }
}

/// The restore latencies of one side, and its passes during the deletes.
struct Restores {
    latencies: Vec<Duration>,
    passes: usize,
    relist: Relist,
}

/// Children deleted while the watches relisted, on one side.
struct Relist {
    /// How many were deleted.
    deleted: usize,
    /// From the ConfigMaps relist's end (its last page answered) to each restore, for those
    /// restored.
    from_relist: Vec<Duration>,
    /// From the last delete's answer to each restore.
    from_deletes: Vec<Duration>,
    /// Whether the relist was answered after the deletes (else they were not deleted during the
    /// relist, and the figures say nothing).
    deletes_before_relist: bool,
    /// Passes the owners' relist ran (before the deletes).
    relist_passes: usize,
    /// Passes from the deletes to the end of the wait.
    passes: usize,
}

/// The successful lists of `resource` by the controller in `server`'s log (cleared at the
/// phase's start).
fn controller_lists(server: &ApiServer, resource: &str) -> usize {
    let list = format!("list {resource}");
    server
        .requests()
        .iter()
        .filter(|r| r.user == CONTROLLER_USER && !r.is_watch() && verb_and_resource(r) == list)
        .count()
}

/// Children `w0-config` .. deleted (`batch` of them) while the controllers' watches relist: every
/// watch ends with `410 Expired`, the controller's next request for ConfigMaps (its relist's
/// list) is held `hold` before it is served, the owners' relist settles and the children are
/// deleted meanwhile.
async fn relist_restores(
    server: &ApiServer,
    driver: &kube::Client,
    created: &Arc<Created>,
    progress: &Progress,
    n: usize,
    batch: usize,
    hold: Duration,
) -> Relist {
    // Only this phase's requests: the log is polled below.
    server.request_log().clear();
    let passes_before = progress.passes();
    server.faults().add(
        Fault::new(FaultAction::Latency(hold))
            .method(http::Method::GET)
            .resource("", "configmaps")
            .user(CONTROLLER_USER)
            .times(1),
    );
    server.compact();
    // The owners' relist and what it runs settle first (kube-runtime reconciles every relisted
    // object; kubeward none whose resourceVersion did not move), so that no pass of it restores
    // a child by chance.
    wait_until("the workloads' relist", TIMEOUT, || {
        controller_lists(server, "workloads") > 0
    })
    .await;
    let settle = Instant::now();
    let mut last = (progress.passes(), Instant::now());
    while settle.elapsed() < hold {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let passes = progress.passes();
        if passes != last.0 {
            last = (passes, Instant::now());
        }
        let all_relisted = passes - passes_before >= n;
        let quiet = last.1.elapsed() >= Duration::from_millis(500);
        if quiet && (all_relisted || settle.elapsed() >= Duration::from_secs(2)) {
            break;
        }
    }
    let relist_passes = progress.passes() - passes_before;

    let configs: Api<ConfigMap> = Api::namespaced(driver.clone(), NAMESPACE);
    let mut deleted = Vec::with_capacity(batch);
    for i in 0..batch {
        let name = format!("w{i}-config");
        let old = created.uid(&name).expect("the child was seen");
        configs
            .delete(&name, &DeleteParams::default())
            .await
            .expect("delete");
        deleted.push((name, old));
    }
    let deletes_done = Instant::now();
    let deletes_before_relist = controller_lists(server, "configmaps") == 0;
    let passes_at_deletes = progress.passes();

    // The relist's end: as many pages answered as the ConfigMaps left take (500 per page).
    let pages = (n * children_per_object() - batch).div_ceil(500).max(1);
    let relisted = async {
        let deadline = Instant::now() + hold + RELIST_WAIT;
        loop {
            if controller_lists(server, "configmaps") >= pages {
                return Some(Instant::now());
            }
            if Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    };
    let wait = hold + RELIST_WAIT;
    let restored = futures::future::join_all(
        deleted
            .iter()
            .map(|(name, old)| created.recreated_within(name, old, wait)),
    );
    let (relisted, restored) = futures::future::join(relisted, restored).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let relisted = relisted.expect("the ConfigMaps relisted");
    let restored: Vec<Instant> = restored.into_iter().flatten().collect();
    Relist {
        deleted: batch,
        from_relist: restored
            .iter()
            .map(|at| at.saturating_duration_since(relisted))
            .collect(),
        from_deletes: restored
            .iter()
            .map(|at| at.saturating_duration_since(deletes_done))
            .collect(),
        deletes_before_relist,
        relist_passes,
        passes: progress.passes() - passes_at_deletes,
    }
}

async fn restores(kubeward: bool, n: usize, batch: usize, hold: Duration) -> Restores {
    let (server, driver) = drive::server().await;
    let client = server.client().expect("client");
    let progress = Arc::new(Progress::default());
    // No resync during the run: only watch events start passes.
    let steady = Steady {
        resync: Duration::from_secs(3600),
        restore_child: true,
    };
    let task = if kubeward {
        let registry = prometheus::Registry::new();
        let controller = ward::controller_with(&client, &progress, steady, &registry);
        tokio::spawn(async move { controller.run().await.expect("runs") })
    } else {
        tokio::spawn(anchor::run_with(client.clone(), progress.clone(), steady))
    };
    let created = Arc::new(Created::default());
    let follower = created.follow(driver.clone());
    drive::create(&driver, n).await;
    wait_until("convergence", TIMEOUT, || {
        progress
            .converged
            .load(std::sync::atomic::Ordering::Relaxed)
            >= n
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let passes_before = progress.passes();
    let configs: Api<ConfigMap> = Api::namespaced(driver.clone(), NAMESPACE);
    let mut latencies = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("w{i}-config");
        let old = created.uid(&name).expect("the child was seen");
        configs
            .delete(&name, &DeleteParams::default())
            .await
            .expect("delete");
        let deleted = Instant::now();
        let restored = created.recreated(&name, &old).await;
        latencies.push(restored.saturating_duration_since(deleted));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let passes = progress.passes() - passes_before;
    let relist = relist_restores(&server, &driver, &created, &progress, n, batch, hold).await;
    task.abort();
    follower.abort();
    Restores {
        latencies,
        passes,
        relist,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

/// p50, p99 and max of `samples`, or "none".
fn spread(mut samples: Vec<Duration>) -> String {
    if samples.is_empty() {
        return "none".to_owned();
    }
    samples.sort();
    format!(
        "p50 {:.1?}, p99 {:.1?}, max {:.1?}",
        percentile(&samples, 0.5),
        percentile(&samples, 0.99),
        samples.last().expect("samples"),
    )
}

fn main() {
    let n = size("BENCH_CHILD_OBJECTS", 1_000);
    let batch = size("BENCH_RELIST_DELETES", 100).min(n);
    let hold = Duration::from_millis(size("BENCH_RELIST_HOLD_MS", 10_000) as u64);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!("child delete -> restored: {n} converged workloads, each child deleted in turn");
    let mut p50s = Vec::new();
    let mut relists = Vec::new();
    for (label, kubeward) in [("kubeward", true), ("anchor", false)] {
        let mut result = rt.block_on(restores(kubeward, n, batch, hold));
        result.latencies.sort();
        let (p50, p99) = (
            percentile(&result.latencies, 0.5),
            percentile(&result.latencies, 0.99),
        );
        p50s.push(p50);
        println!(
            "  {label:<9} p50 {p50:.1?}, p99 {p99:.1?}, max {:.1?}; passes {} ({:.2} per delete)",
            result.latencies.last().expect("samples"),
            result.passes,
            result.passes as f64 / n as f64,
        );
        relists.push((label, result.relist));
    }
    println!(
        "  p50 ratio kubeward/anchor {:.2}",
        p50s[0].as_secs_f64() / p50s[1].as_secs_f64()
    );
    println!(
        "children deleted during a relist: {batch} of {n} children deleted while the watches \
         relisted after 410 Expired (the controllers' ConfigMap list held {hold:.0?}, the \
         deletes landing meanwhile), waited for {RELIST_WAIT:.0?} after the relist"
    );
    for (label, relist) in relists {
        println!(
            "  {label:<9} restored {} of {}; relist end -> restored: {}; last delete -> \
             restored: {}; passes of the owners' relist {}, after the deletes {}{}",
            relist.from_relist.len(),
            relist.deleted,
            spread(relist.from_relist),
            spread(relist.from_deletes),
            relist.relist_passes,
            relist.passes,
            if relist.deletes_before_relist {
                ""
            } else {
                " (INVALID: the relist was answered before the deletes; raise BENCH_RELIST_HOLD_MS)"
            },
        );
    }
}
