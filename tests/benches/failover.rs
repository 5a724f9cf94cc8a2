//! Failover, a warm standby (`Controller::with_warm_standby`) against a cold one, on one server
//! holding `BENCH_FAILOVER_OBJECTS` converged workloads (default 10,000; `docs/operator.md`'s
//! figures also at 100,000): the leader is killed (its task aborted: no lease release, as a
//! crashed pod), and the time from the kill to the first pass on the standby is measured. A
//! standby acquires the lease once it has expired (lease duration 2 s here); a cold one then
//! lists every object before its first pass, a warm one has them already.
//!
//! `cargo bench -p kubeward-tests --bench failover`

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use kubeward::leader::LeaderElection;
use support::alloc::Counting;
use support::drive::{self, size, wait_until};
use support::ward;
use support::workload::{Progress, Steady};

#[global_allocator]
static GLOBAL: Counting = Counting;

const TIMEOUT: Duration = Duration::from_secs(1800);
const LEASE: (Duration, Duration, Duration) = (
    Duration::from_secs(2),
    Duration::from_millis(1500),
    Duration::from_millis(200),
);

/// A replica of the workload controller (identity `identity`), warm or cold, counting its
/// passes into `progress`; runs until aborted.
fn replica(
    client: &kube::Client,
    identity: &str,
    warm: bool,
    progress: &Arc<Progress>,
) -> tokio::task::JoinHandle<()> {
    let (duration, deadline, retry) = LEASE;
    let election = LeaderElection::new(client.clone(), "default", "bench-failover", identity)
        .with_timings(duration, deadline, retry);
    let steady = Steady::resyncing(Duration::from_secs(3600));
    let registry = prometheus::Registry::new();
    let mut controller =
        ward::controller_with(client, progress, steady, &registry).with_leader_election(election);
    if warm {
        controller = controller.with_warm_standby();
    }
    tokio::spawn(async move { controller.run().await.expect("runs") })
}

/// Kill → first pass on the standby, once.
async fn failover(warm: bool, n: usize) -> Duration {
    let (server, driver) = drive::server().await;
    drive::create_converged(&driver, n).await;
    let client = server.client().expect("client");
    let (first, second) = (
        Arc::new(Progress::counting_only()),
        Arc::new(Progress::counting_only()),
    );
    let leader = replica(&client, "first", warm, &first);
    wait_until("the leader's first passes", TIMEOUT, || first.passes() >= n).await;
    let standby = replica(&client, "second", warm, &second);
    // The standby is up (a warm one has listed) before the leader dies.
    tokio::time::sleep(Duration::from_secs(2) + Duration::from_millis(n as u64 / 5)).await;
    assert_eq!(
        second.passes(),
        0,
        "the standby reconciled while the leader led"
    );
    let killed = Instant::now();
    leader.abort();
    wait_until("the standby's first pass", TIMEOUT, || second.passes() > 0).await;
    let took = killed.elapsed();
    standby.abort();
    took
}

fn main() {
    let n = size("BENCH_FAILOVER_OBJECTS", 10_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "failover at {n} converged objects, lease duration {:?}: leader killed -> first pass on the standby",
        LEASE.0
    );
    let warm = rt.block_on(failover(true, n));
    let cold = rt.block_on(failover(false, n));
    println!(
        "  warm {warm:.2?}, cold {cold:.2?}: warm/cold {:.2}; above the lease duration: warm {:.2?}, cold {:.2?}",
        warm.as_secs_f64() / cold.as_secs_f64(),
        warm.saturating_sub(LEASE.0),
        cold.saturating_sub(LEASE.0),
    );
}
