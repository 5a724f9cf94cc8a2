//! CPU counted in instructions, not seconds: kubeward and the anchors run in child processes
//! under `valgrind --tool=callgrind`, which counts the same on a busy machine, against one
//! in-process API server in this process (so the server's work is never counted).
//!
//! Each child connects, starts one controller on one thread (tokio's current-thread runtime: no
//! work-stealing to vary the count) and exits when its reconcile has run a target number of
//! times. What a figure needs is taken as a difference of two children, so that what both
//! children do alike (the process, the runtime, the client, the connection) cancels:
//!
//! 1. **no-op pass**: `BENCH_INSTR_OBJECTS` widgets (default 1,000) whose reconcile does nothing
//!    and asks for a requeue at once, kubeward's `Controller` (with its Prometheus metrics, as a
//!    user runs it) against a bare kube-runtime `Controller`: the instructions of
//!    `(1 + BENCH_INSTR_ROUNDS)` passes per object less those of 1 pass per object, per pass
//!    (goal: kubeward ≤ the anchor + 10 %);
//! 2. **start-up**: as many converged workloads (`support::workload`), kubeward's workload
//!    controller against the hand-written anchor (`support::anchor`): the instructions until
//!    every object's first pass, less a child that only connects, per object (goal: ≤ the
//!    anchor's);
//! 3. **converged pass**: the same controllers resyncing every converged workload at once:
//!    instructions per pass past the first, as in 1.
//!
//! Every figure is taken `BENCH_INSTR_REPEATS` times (default 3, interleaved: anchor, kubeward,
//! anchor, …) and reported as the median with its range. The callgrind profiles stay in
//! `target/callgrind/` for `callgrind_annotate` (the command is printed).
//!
//! `cargo bench -p kubeward-tests --bench instructions` (needs valgrind; says so in one line and
//! exits without it).

mod support;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::CustomResourceExt;
use kube::api::{Api, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::watcher;
use kubeward::controller::Controller;
use kubeward::metrics::Metrics;
use kubeward::{Pass, Reconciler};
use kubeward_tests::{Widget, WidgetSpec};
use support::drive::{self, size};
use support::workload::{Progress, Steady};
use support::{anchor, ward};

/// The environment variable that makes this binary a measured child: `ROLE`.
const CHILD: &str = "KUBEWARD_INSTR_CHILD";
/// The child's reconcile count to exit at.
const TARGET: &str = "KUBEWARD_INSTR_TARGET";
/// The seconds after which the child's workloads controller resyncs a converged workload.
const RESYNC: &str = "KUBEWARD_INSTR_RESYNC";

/// What a child runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Connects (one request) and exits: what every child does besides its controller.
    Idle,
    NoopAnchor,
    NoopKubeward,
    WorkloadsAnchor,
    WorkloadsKubeward,
}

impl Role {
    const ALL: [Role; 5] = [
        Role::Idle,
        Role::NoopAnchor,
        Role::NoopKubeward,
        Role::WorkloadsAnchor,
        Role::WorkloadsKubeward,
    ];

    fn name(self) -> &'static str {
        match self {
            Role::Idle => "idle",
            Role::NoopAnchor => "noop-anchor",
            Role::NoopKubeward => "noop-kubeward",
            Role::WorkloadsAnchor => "workloads-anchor",
            Role::WorkloadsKubeward => "workloads-kubeward",
        }
    }

    fn parse(name: &str) -> Role {
        Role::ALL
            .into_iter()
            .find(|r| r.name() == name)
            .unwrap_or_else(|| panic!("{CHILD}={name}: not a role"))
    }
}

fn main() {
    match std::env::var(CHILD) {
        Ok(role) => child(Role::parse(&role)),
        Err(_) => parent(),
    }
}

// ---- the measured child ----

/// Reconciles a widget: nothing, and again at once.
struct Noop(Arc<Progress>);

impl Reconciler for Noop {
    type Resource = Widget;
    type Error = std::convert::Infallible;
    const NAME: Option<&'static str> = Some("bench.kubeward.dev/noop");

    async fn apply(&self, _: &Widget, _: &mut Pass<Widget>) -> Result<Action, Self::Error> {
        self.0.pass();
        Ok(Action::requeue(Duration::ZERO))
    }
}

fn child(role: Role) {
    let var = |name: &str| -> usize {
        std::env::var(name)
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{name} is not set"))
    };
    let (target, resync) = (var(TARGET), Duration::from_secs(var(RESYNC) as u64));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let client = kube::Client::try_default().await.expect("client");
        client.apiserver_version().await.expect("connects");
        let progress = Arc::new(Progress::counting_only());
        match role {
            Role::Idle => return,
            Role::NoopAnchor => {
                tokio::spawn(
                    kube::runtime::Controller::new(
                        Api::<Widget>::all(client),
                        watcher::Config::default(),
                    )
                    .with_config(kube::runtime::controller::Config::default().concurrency(16))
                    .run(
                        |_: Arc<Widget>, progress: Arc<Progress>| async move {
                            progress.pass();
                            Ok::<_, std::convert::Infallible>(Action::requeue(Duration::ZERO))
                        },
                        |_, _, _| Action::await_change(),
                        progress.clone(),
                    )
                    .for_each(|_| futures::future::ready(())),
                );
            }
            Role::NoopKubeward => {
                let controller = Controller::new(Noop(progress.clone()), client)
                    .with_observer(Arc::new(Metrics::builder().build().expect("metrics")))
                    .shutdown_on(futures::future::pending());
                tokio::spawn(controller.run());
            }
            Role::WorkloadsAnchor => {
                let steady = Steady::resyncing(resync);
                tokio::spawn(anchor::run_with(client, progress.clone(), steady));
            }
            Role::WorkloadsKubeward => {
                let steady = Steady::resyncing(resync);
                let registry = prometheus::Registry::new();
                let controller = ward::controller_with(&client, &progress, steady, &registry);
                tokio::spawn(async move { controller.run().await.expect("runs") });
            }
        }
        progress.reached(target).await;
    });
    // Whatever is in flight is not waited for (nor dropped: its drop is no pass's cost).
    std::process::exit(0);
}

// ---- the parent: the server, and the children under callgrind ----

/// Whether valgrind runs here; the one line that says how to get it if not.
fn valgrind_runs() -> bool {
    match Command::new("valgrind").arg("--version").output() {
        Ok(out) if out.status.success() => true,
        _ => {
            println!(
                "instructions: not measured (valgrind is not installed; `apt-get install valgrind`)"
            );
            false
        }
    }
}

/// One child's run: what it runs, until how many reconciles, and when its converged workloads
/// resync.
#[derive(Clone, Copy)]
struct Run {
    role: Role,
    target: usize,
    resync_secs: u64,
}

/// Runs this binary as `run` says under callgrind; its total instructions (`Ir`). The profile
/// stays in `out_dir`.
fn measure(kubeconfig: &Path, out_dir: &Path, run: Run, repeat: usize) -> u64 {
    let Run {
        role,
        target,
        resync_secs,
    } = run;
    let profile = out_dir.join(format!(
        "{}-{target}-resync{resync_secs}-{repeat}.out",
        role.name()
    ));
    let started = Instant::now();
    let status = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", profile.display()))
        .arg(std::env::current_exe().expect("this binary"))
        .env(CHILD, role.name())
        .env(TARGET, target.to_string())
        .env(RESYNC, resync_secs.to_string())
        .env("KUBECONFIG", kubeconfig)
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("valgrind starts");
    assert!(
        status.success(),
        "{} under callgrind exited {status}",
        role.name()
    );
    let text = std::fs::read_to_string(&profile).expect("the callgrind profile");
    let total = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("totals:")
                .or_else(|| l.strip_prefix("summary:"))
        })
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no totals in {}", profile.display()));
    eprintln!(
        "  {} to {target} reconciles: {total} instructions ({:.1?} under callgrind)",
        role.name(),
        started.elapsed()
    );
    total
}

/// Median and range of `values`.
fn spread(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    )
}

/// One figure: per repeat, kubeward's and the anchor's value; printed with their ratios.
fn report(what: &str, unit: &str, goal: &str, anchor: Vec<f64>, kubeward: Vec<f64>) {
    let ratios: Vec<f64> = kubeward.iter().zip(&anchor).map(|(k, a)| k / a).collect();
    let (k, k_low, k_high) = spread(kubeward);
    let (a, a_low, a_high) = spread(anchor);
    let (r, r_low, r_high) = spread(ratios);
    println!(
        "{what}: kubeward {k:.0} {unit} ({k_low:.0}–{k_high:.0}), anchor {a:.0} ({a_low:.0}–{a_high:.0}); \
         ratio {r:.3}x (range {r_low:.3}–{r_high:.3}; goal {goal})"
    );
}

fn parent() {
    if !valgrind_runs() {
        return;
    }
    let n = size("BENCH_INSTR_OBJECTS", 1_000);
    let rounds = size("BENCH_INSTR_ROUNDS", 4).max(1);
    let repeats = size("BENCH_INSTR_REPEATS", 3).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target directory")
        .join("callgrind");
    std::fs::create_dir_all(&out_dir).expect("the profiles' directory");
    let kubeconfig = out_dir.join("kubeconfig");
    // The server serves on this process's worker threads while the children run.
    let _server = runtime.block_on(async {
        let (server, driver) = drive::seeded_server(n).await;
        server.install_crd(&Widget::crd()).expect("CRD installs");
        let widgets = Api::<Widget>::namespaced(driver, "default");
        for i in 0..n {
            widgets
                .create(
                    &PostParams::default(),
                    &Widget::new(&format!("w{i}"), WidgetSpec::default()),
                )
                .await
                .expect("widget");
        }
        server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        server
    });
    println!(
        "{n} objects, {rounds} rounds of passes past the first, {repeats} repeats; instructions \
         counted by callgrind in the controller's process only"
    );
    let run = |role, target, resync_secs, repeat| {
        let run = Run {
            role,
            target,
            resync_secs,
        };
        measure(&kubeconfig, &out_dir, run, repeat) as f64
    };
    let later = n * (1 + rounds);
    let per_pass = |first: f64, all: f64| (all - first) / (later - n) as f64;
    // An hour: no resync during a start-up; 0: every converged workload resyncs at once.
    let (never, at_once) = (3600, 0);
    let [mut noop, mut start, mut converged]: [(Vec<f64>, Vec<f64>); 3] = Default::default();
    for repeat in 0..repeats {
        let idle = run(Role::Idle, 1, never, repeat);
        for (kubeward, noop_role, workloads_role) in [
            (false, Role::NoopAnchor, Role::WorkloadsAnchor),
            (true, Role::NoopKubeward, Role::WorkloadsKubeward),
        ] {
            let side = |pair: &mut (Vec<f64>, Vec<f64>), value| {
                if kubeward { &mut pair.1 } else { &mut pair.0 }.push(value)
            };
            let first = run(noop_role, n, never, repeat);
            let all = run(noop_role, later, never, repeat);
            side(&mut noop, per_pass(first, all));
            let started = run(workloads_role, n, never, repeat);
            side(&mut start, (started - idle) / n as f64);
            let first = run(workloads_role, n, at_once, repeat);
            let all = run(workloads_role, later, at_once, repeat);
            side(&mut converged, per_pass(first, all));
        }
    }
    report(
        "no-op pass",
        "instructions per pass",
        "kubeward <= anchor + 10 %",
        noop.0,
        noop.1,
    );
    report(
        &format!("start-up at {n} converged workloads"),
        "instructions per object",
        "<= 1.0x",
        start.0,
        start.1,
    );
    report(
        "converged workload pass (resync)",
        "instructions per pass",
        "<= 1.0x",
        converged.0,
        converged.1,
    );
    println!(
        "profiles: {} (`callgrind_annotate <file> | head -60`)",
        out_dir.display()
    );
}
