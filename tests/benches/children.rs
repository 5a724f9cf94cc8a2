//! Owned children, kubeward against the anchor (a kube-runtime `Controller` with `owns`), each on
//! a fresh in-process API server in the same run: `BENCH_CHILD_OBJECTS` converged workloads
//! (default 1,000), then each one's child ConfigMap deleted in turn by a user, and the time from
//! the delete's answer to the restored child's ADDED event on a watch of ConfigMaps (the
//! owner's pass, started by the child's delete event, applies it again). Reports p50, p99 and
//! max, and the passes each side ran for the deletes.
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
use support::alloc::Counting;
use support::drive::{self, size, wait_until};
use support::workload::{NAMESPACE, Progress, Steady};
use support::{anchor, ward};
use tokio::sync::Notify;

#[global_allocator]
static GLOBAL: Counting = Counting;

const TIMEOUT: Duration = Duration::from_secs(600);

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
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let notified = self.notify.notified();
            if let Some((uid, at)) = self.at.lock().unwrap().get(name)
                && uid != old
            {
                return *at;
            }
            assert!(Instant::now() < deadline, "{name} was not restored");
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
    }
}

/// The restore latencies of one side, and its passes during the deletes.
struct Restores {
    latencies: Vec<Duration>,
    passes: usize,
}

async fn restores(kubeward: bool, n: usize) -> Restores {
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
    task.abort();
    follower.abort();
    Restores { latencies, passes }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

fn main() {
    let n = size("BENCH_CHILD_OBJECTS", 1_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!("child delete -> restored: {n} converged workloads, each child deleted in turn");
    let mut p50s = Vec::new();
    for (label, kubeward) in [("kubeward", true), ("anchor", false)] {
        let mut result = rt.block_on(restores(kubeward, n));
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
    }
    println!(
        "  p50 ratio kubeward/anchor {:.2}",
        p50s[0].as_secs_f64() / p50s[1].as_secs_f64()
    );
}
