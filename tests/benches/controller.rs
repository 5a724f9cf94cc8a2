//! What kubeward's controller runtime costs, against anchors measured in the same run:
//!
//! 1. per step: a `step()` inside a pass reporting to the Prometheus collector, against awaiting
//!    the same future bare;
//! 2. per pass: the runtime's pass bookkeeping (pass guard, `Pass` with the object's conditions,
//!    outcome classification, observer call) against calling the same reconcile body bare;
//! 3. throughput: N objects (default 10,000; `BENCH_OBJECTS`) reconciled once on the in-process
//!    API server by a kubeward controller, against a bare kube-runtime controller doing the same
//!    work, in `BENCH_PAIRS` interleaved pairs (default 7), reported as the median ratio with its
//!    range. Goal: >= 0.95x. (Instructions per pass, which noise does not move: `--bench
//!    instructions`.)
//!
//! Run: `cargo bench -p kubeward-tests --bench controller`. Prints one line per figure.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::CustomResourceExt;
use kube::api::{Api, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use kubeward::controller::Controller;
use kubeward::metrics::Metrics;
use kubeward::observe::{
    ObjectRef, Observers, Outcome, PassGuard, PassRecord, Phase, ReconcileObserver, StepName, step,
};
use kubeward::{Pass, Reconciler};
use kubeward_testing::ApiServer;
use kubeward_tests::{Widget, WidgetSpec};

const STEP: StepName = StepName::from_static("render");

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn object() -> Arc<ObjectRef> {
    Arc::new(ObjectRef {
        api_version: "test.kubeward.dev/v1".into(),
        kind: "Widget".into(),
        namespace: Some("default".into()),
        name: "w".into(),
        uid: Some("uid".into()),
    })
}

fn per_step(rt: &tokio::runtime::Runtime) {
    const STEPS: u32 = 200_000;
    let metrics = Metrics::builder().build().unwrap();
    let observers = Observers::new(vec![Arc::new(metrics)]);
    let bare = || {
        rt.block_on(async {
            let start = Instant::now();
            for i in 0..STEPS {
                std::hint::black_box(async { i }.await);
            }
            start.elapsed()
        })
    };
    let stepped = || {
        rt.block_on(async {
            let pass = PassGuard::start("bench".into(), object(), Phase::Apply, observers.clone());
            let elapsed = pass
                .run(async {
                    let start = Instant::now();
                    for i in 0..STEPS {
                        std::hint::black_box(step(STEP, async { i }).await);
                    }
                    start.elapsed()
                })
                .await;
            pass.finish(Outcome::Completed);
            elapsed
        })
    };
    let bare = median((0..5).map(|_| bare()).collect());
    let stepped = median((0..5).map(|_| stepped()).collect());
    let added = (stepped.saturating_sub(bare)).as_nanos() as f64 / f64::from(STEPS);
    println!(
        "per step: {added:.0} ns added per step (bare await {:.1} ns, step with Prometheus observer {:.1} ns)",
        bare.as_nanos() as f64 / f64::from(STEPS),
        stepped.as_nanos() as f64 / f64::from(STEPS)
    );
}

fn per_pass(rt: &tokio::runtime::Runtime) {
    const PASSES: u32 = 50_000;
    let metrics = Metrics::builder().build().unwrap();
    let observers = Observers::new(vec![Arc::new(metrics)]);
    let widget = Widget::new("w", WidgetSpec::default());
    let body = |w: &Widget| -> Result<Action, ()> {
        std::hint::black_box(w);
        Ok(Action::await_change())
    };
    let bare = || {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..PASSES {
                let _ = std::hint::black_box(body(&widget));
            }
            start.elapsed()
        })
    };
    let instrumented = || {
        rt.block_on(async {
            let start = Instant::now();
            for _ in 0..PASSES {
                let reference = Arc::new(ObjectRef::from_resource(&widget));
                let guard = PassGuard::start(
                    "bench".into(),
                    reference.clone(),
                    Phase::Apply,
                    observers.clone(),
                );
                let result = guard
                    .run(async {
                        let conditions = widget
                            .status
                            .clone()
                            .map(|s| s.conditions)
                            .unwrap_or_default();
                        let mut pass = Pass::<Widget>::new(
                            reference,
                            Phase::Apply,
                            widget.metadata.generation,
                            conditions,
                        );
                        let result = body(&widget);
                        (
                            result,
                            pass.outcome_override(),
                            pass.status_needs_write(),
                            &mut pass,
                        )
                            .0
                    })
                    .await;
                guard.finish(Outcome::of_pass(&result, None));
            }
            start.elapsed()
        })
    };
    let bare = median((0..5).map(|_| bare()).collect());
    let instrumented = median((0..5).map(|_| instrumented()).collect());
    let added = instrumented.saturating_sub(bare).as_nanos() as f64 / f64::from(PASSES);
    println!("per pass: {added:.0} ns added per pass by the pass guard, Pass handle and metrics");
}

/// Reconciles every widget once and does nothing else.
struct Noop {
    done: Arc<AtomicUsize>,
}

impl Reconciler for Noop {
    type Resource = Widget;
    type Error = std::convert::Infallible;
    const NAME: Option<&'static str> = Some("bench.kubeward.dev/noop");

    async fn apply(&self, _: &Widget, _: &mut Pass<Widget>) -> Result<Action, Self::Error> {
        self.done.fetch_add(1, Ordering::Relaxed);
        Ok(Action::await_change())
    }
}

struct Count(Arc<AtomicUsize>);
impl ReconcileObserver for Count {
    fn pass_finished(&self, _: &PassRecord) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

async fn server_with(objects: usize) -> ApiServer {
    let server = ApiServer::start().await.unwrap();
    server.install_crd(&Widget::crd()).unwrap();
    let api = Api::<Widget>::namespaced(server.client().unwrap(), "default");
    for i in 0..objects {
        api.create(
            &PostParams::default(),
            &Widget::new(&format!("w{i}"), WidgetSpec::default()),
        )
        .await
        .unwrap();
    }
    server
}

async fn wait_for(counter: &AtomicUsize, n: usize) {
    while counter.load(Ordering::Relaxed) < n {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

async fn kubeward_run(server: &ApiServer, objects: usize) -> Duration {
    let done = Arc::new(AtomicUsize::new(0));
    let observed = Arc::new(AtomicUsize::new(0));
    let metrics = Metrics::builder().build().unwrap();
    let controller = Controller::new(Noop { done: done.clone() }, server.client().unwrap())
        .with_observer(Arc::new(metrics))
        .with_observer(Arc::new(Count(observed.clone())))
        .shutdown_on(futures::future::pending());
    let start = Instant::now();
    let handle = tokio::spawn(controller.run());
    wait_for(&observed, objects).await;
    let elapsed = start.elapsed();
    handle.abort();
    elapsed
}

async fn bare_run(server: &ApiServer, objects: usize) -> Duration {
    let done = Arc::new(AtomicUsize::new(0));
    let api = Api::<Widget>::all(server.client().unwrap());
    let counter = done.clone();
    let start = Instant::now();
    let handle = tokio::spawn(
        kube::runtime::Controller::new(api, watcher::Config::default())
            .with_config(kube::runtime::controller::Config::default().concurrency(16))
            .run(
                |_widget: Arc<Widget>, done: Arc<AtomicUsize>| async move {
                    done.fetch_add(1, Ordering::Relaxed);
                    Ok::<_, std::convert::Infallible>(Action::await_change())
                },
                |_, _, _| Action::await_change(),
                counter,
            )
            .for_each(|_| futures::future::ready(())),
    );
    wait_for(&done, objects).await;
    let elapsed = start.elapsed();
    handle.abort();
    elapsed
}

fn throughput(rt: &tokio::runtime::Runtime) {
    let objects: usize = std::env::var("BENCH_OBJECTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000);
    let pairs: usize = std::env::var("BENCH_PAIRS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(7)
        .max(1);
    // Interleaved, anchor first then kubeward, then the other way round: a noisy neighbour
    // slows both sides of a pair alike, so the ratio of a pair is what is compared.
    let mut ratios = Vec::new();
    let (mut kubeward, mut bare) = (Vec::new(), Vec::new());
    rt.block_on(async {
        let server = server_with(objects).await;
        for pair in 0..pairs {
            let (k, b) = if pair % 2 == 0 {
                let b = bare_run(&server, objects).await;
                (kubeward_run(&server, objects).await, b)
            } else {
                let k = kubeward_run(&server, objects).await;
                (k, bare_run(&server, objects).await)
            };
            // Throughput ratio: the anchor's time over kubeward's.
            ratios.push(b.as_secs_f64() / k.as_secs_f64());
            kubeward.push(k);
            bare.push(b);
        }
    });
    ratios.sort_by(f64::total_cmp);
    let (kubeward, bare) = (median(kubeward), median(bare));
    let rate = |d: Duration| objects as f64 / d.as_secs_f64();
    println!(
        "throughput: {objects} objects, {pairs} interleaved pairs: kubeward {:.0} passes/s, bare kube-runtime {:.0} passes/s (medians); ratio median {:.3}x, range {:.3}–{:.3} (goal >= 0.95x)",
        rate(kubeward),
        rate(bare),
        ratios[ratios.len() / 2],
        ratios[0],
        ratios[ratios.len() - 1],
    );
}

fn main() {
    let rt = runtime();
    per_step(&rt);
    per_pass(&rt);
    throughput(&rt);
}
