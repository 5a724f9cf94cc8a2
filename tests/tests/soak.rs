//! The reliability soak: two replicas of a controller with leader election reconcile a few
//! hundred objects (each owning a ConfigMap) while a seeded random schedule injects every fault
//! kind, and objects are created, edited, approved and deleted. Once the faults stop, it checks
//! the invariants users rely on (see `RELIABILITY.md`). It runs on the API server
//! `KUBEWARD_TEST_APISERVER` picks: the in-process one by default; `scripts/test` runs a short
//! soak on the real kube-apiserver too, its faults injected by the proxy in front of it.
//!
//! About 45 seconds of faults by default; `KUBEWARD_SOAK_SECS` sets another duration,
//! `KUBEWARD_SOAK_SEED` replays a schedule (the seed is printed at the start and in every
//! failure), `KUBEWARD_SOAK_OBJECTS` the starting population.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event as StoredEvent;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use kubeward::conditions::{Condition, ConditionStatus, DesiredCondition};
use kubeward::controller::Controller;
use kubeward::events::{EventRecorder, Reporter};
use kubeward::leader::LeaderElection;
use kubeward::observe::{Outcome, PassRecord, ReconcileObserver};
use kubeward::relations::Relations;
use kubeward::vocabulary::Vocabulary;
use kubeward::{Action, Pass, Reconciler};
use kubeward_testing::{Cluster, Fault, FaultAction};
use kubeward_tests::{READY, Running};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const NAMESPACE: &str = "default";
const CONTROLLER: &str = "soak.kubeward.dev/items";
const FINALIZER: &str = "soak.kubeward.dev/cleanup";
/// The driver's own finalizer on every item: a deleted item stays (Terminating) after the
/// controller removed its finalizer until the driver has read its final status, so that the
/// transition checks cover deleted items too.
const AUDIT: &str = "soak.kubeward.dev/audit";
const REPLICAS: [&str; 2] = ["replica-a", "replica-b"];
/// The reasons of transition events (failure events have others).
const TRANSITION_REASONS: [&str; 3] = ["Applying", "WaitingForApproval", "Applied"];

/// What the driver asks of an item.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "soak.kubeward.dev",
    version = "v1",
    kind = "Item",
    namespaced,
    status = "ItemStatus"
)]
#[serde(rename_all = "camelCase")]
pub struct ItemSpec {
    /// Bumped by every edit.
    pub step: u32,
    /// Whether the current step is approved.
    pub approved: bool,
    /// How many cleanup passes the deletion takes (the earlier ones requeue).
    pub cleanup_passes: u32,
}

/// The status: conditions, and every transition the controller persisted, written in the same
/// status write as the conditions (so the list holds exactly the transitions that persisted).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ItemStatus {
    #[serde(default)]
    pub conditions: Vec<Condition>,
    #[serde(default)]
    pub history: Vec<String>,
}

/// The condition an item's spec asks for.
fn desired(spec: &ItemSpec) -> (ConditionStatus, &'static str, String) {
    let step = spec.step;
    match (spec.approved, step % 2) {
        (true, _) => (
            ConditionStatus::True,
            "Applied",
            format!("step {step} applied"),
        ),
        (false, 0) => (
            ConditionStatus::False,
            "WaitingForApproval",
            format!("step {step} awaits approval"),
        ),
        (false, _) => (
            ConditionStatus::Unknown,
            "Applying",
            format!("step {step} applying"),
        ),
    }
}

/// The name of the ConfigMap an item owns.
fn child_name(item: &str) -> String {
    format!("{item}-child")
}

/// The ConfigMap an item owns: it carries the item's step.
fn child(item: &str, spec: &ItemSpec) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(child_name(item)),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("step".to_owned(), spec.step.to_string())])),
        ..ConfigMap::default()
    }
}

/// Whether `child` carries what `spec` asks.
fn child_matches(child: &ConfigMap, spec: &ItemSpec) -> bool {
    child.data.as_ref().and_then(|d| d.get("step")) == Some(&spec.step.to_string())
}

/// What the replicas did, shared by both, for the invariant checks.
#[derive(Default)]
struct Ledger {
    /// Passes in flight per replica.
    in_flight: Mutex<HashMap<&'static str, usize>>,
    /// Passes started while another replica had one in flight.
    overlaps: AtomicUsize,
    /// Passes started, per replica.
    started: Mutex<HashMap<&'static str, usize>>,
    /// Cleanup passes per item uid.
    cleanup_calls: Mutex<HashMap<String, u32>>,
    /// Uids whose cleanup completed (returned `await_change`).
    cleaned: Mutex<HashSet<String>>,
    /// Cleanups a replica completed for an object it had already cleaned up: `(replica, uid)`.
    repeated_cleanups: Mutex<Vec<(&'static str, String)>>,
    /// Objects each replica completed a cleanup of.
    cleaned_by: Mutex<HashSet<(&'static str, String)>>,
}

/// Records the objects whose passes were abandoned (leadership lost mid-pass), to explain a
/// violation.
#[derive(Default)]
struct Abandoned(Mutex<Vec<String>>);

impl ReconcileObserver for Abandoned {
    fn pass_finished(&self, record: &PassRecord) {
        if record.outcome == Outcome::Abandoned {
            self.0.lock().unwrap().push(record.object.name.to_string());
        }
    }
}

/// A pass in flight; dropping it (the pass ended or was abandoned) ends it.
struct InFlight<'a> {
    ledger: &'a Ledger,
    replica: &'static str,
}

impl Ledger {
    fn start(&self, replica: &'static str) -> InFlight<'_> {
        let mut in_flight = self.in_flight.lock().unwrap();
        if in_flight.iter().any(|(r, n)| *r != replica && *n > 0) {
            self.overlaps.fetch_add(1, Ordering::Relaxed);
        }
        *in_flight.entry(replica).or_default() += 1;
        *self.started.lock().unwrap().entry(replica).or_default() += 1;
        InFlight {
            ledger: self,
            replica,
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut in_flight = self.ledger.in_flight.lock().unwrap();
        if let Some(n) = in_flight.get_mut(self.replica) {
            *n -= 1;
        }
    }
}

#[derive(Clone)]
struct Items {
    replica: &'static str,
    ledger: Arc<Ledger>,
}

#[derive(Debug, thiserror::Error, kubeward::Terminal)]
#[error("{0}")]
struct ItemError(String);

impl Reconciler for Items {
    type Resource = Item;
    type Error = ItemError;
    const NAME: Option<&'static str> = Some(CONTROLLER);
    const FINALIZER: Option<&'static str> = Some(FINALIZER);
    const CONDITIONS: &'static [&'static Vocabulary] = &[&READY];

    fn relations() -> Relations<Item> {
        Relations::new().owns::<ConfigMap>()
    }

    async fn apply(&self, item: &Item, pass: &mut Pass<Item>) -> Result<Action, ItemError> {
        let _in_flight = self.ledger.start(self.replica);
        pass.apply_child(&child(&item.name_any(), &item.spec))
            .await
            .map_err(|e| ItemError(e.to_string()))?;
        let (status, reason, message) = desired(&item.spec);
        let stored = item.status.clone().unwrap_or_default();
        let current = stored.conditions.iter().find(|c| c.type_ == "Ready");
        let transition =
            current.is_none_or(|c| c.status != status.to_string() || c.reason != reason);
        if transition {
            let mut history = stored.history;
            history.push(format!("{reason}|{message}"));
            pass.set_status_field("history", serde_json::json!(history));
        }
        // A field the status schema does not have: the server prunes it from every write, and
        // the controller must not re-send it every pass (steady state is 0 writes).
        pass.set_status_field("prunedByTheSchema", serde_json::json!(true));
        let condition = DesiredCondition::new("Ready", status, reason, message)
            .map_err(|e| ItemError(e.to_string()))?;
        pass.set(condition);
        // Yield so that passes overlap with faults and handovers.
        tokio::task::yield_now().await;
        Ok(Action::await_change())
    }

    async fn cleanup(&self, item: &Item, _pass: &mut Pass<Item>) -> Result<Action, ItemError> {
        let _in_flight = self.ledger.start(self.replica);
        let uid = item.uid().unwrap_or_default();
        let calls = {
            let mut calls = self.ledger.cleanup_calls.lock().unwrap();
            let n = calls.entry(uid.clone()).or_default();
            *n += 1;
            *n
        };
        if calls < item.spec.cleanup_passes {
            return Ok(Action::requeue(Duration::from_millis(20)));
        }
        self.ledger.cleaned.lock().unwrap().insert(uid.clone());
        let first = self
            .ledger
            .cleaned_by
            .lock()
            .unwrap()
            .insert((self.replica, uid.clone()));
        if !first {
            self.ledger
                .repeated_cleanups
                .lock()
                .unwrap()
                .push((self.replica, uid));
        }
        Ok(Action::await_change())
    }
}

/// splitmix64: a small seeded generator, so a schedule replays from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const FAULT_KINDS: [&str; 14] = [
    "hang",
    "404",
    "409",
    "429",
    "500",
    "503",
    "commit-then-504",
    "commit-then-close",
    "commit-then-hang",
    "close",
    "watch 410",
    "watch lag",
    "restart",
    "relist with deletes",
];

/// Injects one random fault; returns its kind. `live` are the items not deleted; the children
/// a fault deleted are added to `relist_deleted` (by item name).
async fn inject(
    server: &Cluster,
    rng: &mut Rng,
    live: &[String],
    relist_deleted: &mut BTreeSet<String>,
) -> &'static str {
    let kind = *rng.pick(&FAULT_KINDS);
    let resources = [
        ("soak.kubeward.dev", "items"),
        ("events.k8s.io", "events"),
        ("coordination.k8s.io", "leases"),
    ];
    let (group, resource) = match *rng.pick(&resources) {
        // The items' watch lags.
        _ if kind == "watch lag" => resources[0],
        picked => picked,
    };
    let user = *rng.pick(&REPLICAS);
    let times = 1 + rng.below(3) as usize;
    let action = match kind {
        "hang" => FaultAction::Hang,
        "commit-then-504" => FaultAction::CommitThenStatus(504),
        "commit-then-close" => FaultAction::CommitThenCloseConnection,
        "commit-then-hang" => FaultAction::CommitThenHang,
        // The next watch the replica opens (after a 410 or a restart) delivers its events 1–8 s
        // late: its cache misses its own writes for that long.
        "watch lag" => FaultAction::DelayWatchEvents(Duration::from_millis(1000 + rng.below(7000))),
        "close" => FaultAction::CloseConnection,
        "watch 410" => {
            server.expire_watches();
            return kind;
        }
        "restart" => {
            server.restart().await.expect("server restarts");
            return kind;
        }
        // Every watch ends with 410, and 1–5 items' children are deleted while no replica can
        // list or watch ConfigMaps: only the relist shows them gone, and it must run their
        // items' passes, which restore them.
        "relist with deletes" => {
            let children: Vec<ObjectRef<ConfigMap>> = (0..1 + rng.below(5))
                .filter(|_| !live.is_empty())
                .map(|_| ObjectRef::new(&child_name(rng.pick::<String>(live))).within(NAMESPACE))
                .collect();
            let deleted = server
                .relist_with_deletes(&children)
                .await
                .expect("the children are deleted");
            relist_deleted.extend(
                deleted
                    .iter()
                    .filter_map(|c| c.name.strip_suffix("-child").map(str::to_owned)),
            );
            return kind;
        }
        code => FaultAction::Status(code.parse().expect("a status code")),
    };
    let mut fault = Fault::new(action)
        .resource(group, resource)
        .user(&format!("system:serviceaccount:{NAMESPACE}:{user}"))
        .times(times);
    if kind.starts_with("commit") {
        fault = fault.method(
            rng.pick(&[Method::POST, Method::PATCH, Method::PUT])
                .clone(),
        );
    } else if kind == "404" {
        // A 404 answering a create means the namespace is gone: a refusal, not a fault to
        // survive. Reads, patches (an expired event) and updates may meet it.
        fault = fault.method(rng.pick(&[Method::GET, Method::PATCH, Method::PUT]).clone());
    }
    server.faults().add(fault);
    kind
}

/// The driver's view of one item: its spec as last written.
struct Driven {
    spec: ItemSpec,
    deleted: bool,
}

async fn retry<T, F, Fut>(mut op: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, kube::Error>>,
{
    // The driver is not under test: its requests are never faulted, but a server restart drops
    // its connections too.
    for _ in 0..50 {
        if let Ok(value) = op().await {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the driver's request kept failing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak() {
    let seed: u64 = env_or("KUBEWARD_SOAK_SEED", rand_seed());
    let secs: u64 = env_or("KUBEWARD_SOAK_SECS", 45);
    let objects: usize = env_or("KUBEWARD_SOAK_OBJECTS", 200);
    eprintln!(
        "soak: seed {seed} ({secs} s, {objects} objects); replay with KUBEWARD_SOAK_SEED={seed}"
    );
    let log = Log::start(seed);
    let outcome = tokio::spawn(run(seed, secs, objects)).await;
    match outcome {
        Ok(figures) => {
            eprintln!("soak figures (seed {seed}):\n{figures}");
            if figures.violations() > 0 {
                log.quote(&figures);
            }
            assert_eq!(
                figures.violations(),
                0,
                "soak seed {seed}: invariants violated:\n{figures}"
            );
        }
        Err(panic) => panic!("soak seed {seed} failed: {panic}"),
    }
}

/// The runtime's log during a soak: kubeward's events at debug level, each with its replica and
/// pass (object, phase, reconcile id), in `target/soak-logs/<seed>.log`. A violation quotes the
/// lines of its item.
struct Log {
    path: std::path::PathBuf,
}

impl Log {
    fn start(seed: u64) -> Self {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::{Layer, filter::Targets, fmt};
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("soak-logs");
        std::fs::create_dir_all(&dir).expect("the log directory");
        let path = dir.join(format!("{seed}.log"));
        let file = std::fs::File::create(&path).expect("the soak log");
        let layer = fmt::layer()
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .with_target(false)
            .with_filter(Targets::new().with_target("kubeward", tracing::Level::DEBUG));
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .expect("the only subscriber");
        eprintln!("soak: the runtime's log is in {}", path.display());
        Log { path }
    }

    /// Prints the log lines of each item a violation names (the first 60 of each).
    fn quote(&self, figures: &Figures) {
        let Ok(text) = std::fs::read_to_string(&self.path) else {
            return;
        };
        let names: BTreeSet<&str> = figures
            .violations
            .values()
            .flatten()
            .flat_map(|v| v.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')))
            .filter(|word| word.starts_with("item-"))
            .collect();
        for name in names {
            let needle = format!("/{name}");
            let lines: Vec<&str> = text.lines().filter(|l| l.contains(&needle)).collect();
            eprintln!(
                "--- the log of {name} ({} lines, {}):",
                lines.len(),
                self.path.display()
            );
            for line in lines.iter().take(60) {
                eprintln!("{line}");
            }
        }
    }
}

fn rand_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

#[derive(Default, Debug)]
struct Figures {
    objects: usize,
    operations: BTreeMap<&'static str, usize>,
    faults: BTreeMap<&'static str, usize>,
    passes: usize,
    abandoned: usize,
    /// Deleted items whose final status was read before they went.
    deleted_audited: usize,
    /// Items whose child was deleted while every watch relisted.
    relist_deleted: usize,
    /// How long convergence took once the faults stopped, and stopping both replicas.
    settle: Duration,
    stop: Duration,
    /// `spec.leaseTransitions` of the lease at the end: how often leadership changed hands.
    handovers: i32,
    checks: BTreeMap<&'static str, usize>,
    violations: BTreeMap<&'static str, Vec<String>>,
    /// Cases of a known limit (RELIABILITY.md): reported, not violations.
    known_limits: Vec<String>,
}

impl Figures {
    fn check(&mut self, invariant: &'static str, holds: bool, detail: impl FnOnce() -> String) {
        *self.checks.entry(invariant).or_default() += 1;
        let violations = self.violations.entry(invariant).or_default();
        if !holds {
            violations.push(detail());
        }
    }

    fn violations(&self) -> usize {
        self.violations.values().map(Vec::len).sum()
    }
}

impl std::fmt::Display for Figures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "objects: {}", self.objects)?;
        writeln!(f, "operations: {:?}", self.operations)?;
        writeln!(
            f,
            "faults: {} {:?}",
            self.faults.values().sum::<usize>(),
            self.faults
        )?;
        writeln!(f, "passes started: {}", self.passes)?;
        writeln!(f, "passes abandoned: {}", self.abandoned)?;
        writeln!(
            f,
            "deleted objects audited (final status read before they went): {}",
            self.deleted_audited
        )?;
        writeln!(
            f,
            "items whose child was deleted while watches relisted: {}",
            self.relist_deleted
        )?;
        writeln!(
            f,
            "converged {:.1} s after the faults stopped; replicas stopped in {:.1} s",
            self.settle.as_secs_f64(),
            self.stop.as_secs_f64()
        )?;
        writeln!(f, "lease handovers: {}", self.handovers)?;
        writeln!(
            f,
            "known limits met (RELIABILITY.md, not violations): {}",
            self.known_limits.len()
        )?;
        for case in &self.known_limits {
            writeln!(f, "  - {case}")?;
        }
        for (invariant, checks) in &self.checks {
            let violations = &self.violations[invariant];
            writeln!(
                f,
                "{invariant}: {checks} checks, {} violations",
                violations.len()
            )?;
            for violation in violations.iter().take(5) {
                writeln!(f, "  - {violation}")?;
            }
        }
        Ok(())
    }
}

fn replica(
    client: kube::Client,
    identity: &'static str,
    ledger: &Arc<Ledger>,
    abandoned: &Arc<Abandoned>,
) -> Running {
    let election = LeaderElection::new(client.clone(), NAMESPACE, "items-controller", identity)
        .with_timings(
            Duration::from_secs(4),
            Duration::from_millis(2500),
            Duration::from_millis(300),
        );
    let recorder = EventRecorder::new(
        client.clone(),
        Reporter::new(CONTROLLER, identity).expect("valid reporter"),
    )
    .with_timeout(Duration::from_secs(2));
    let controller = Controller::new(
        Items {
            replica: identity,
            ledger: ledger.clone(),
        },
        client,
    )
    .with_event_recorder(recorder)
    .with_observer(abandoned.clone())
    .with_leader_election(election)
    // A short grace: passes are abandoned at every stop, also inside status writes (kube's
    // client sleeping between retries of a write that committed), and their transition
    // events must be published all the same.
    .with_shutdown_grace(Duration::from_millis(500));
    let controller = match std::env::var("KUBEWARD_SOAK_STARTS").as_deref() {
        Ok("every") => controller.with_every_change(),
        _ => controller,
    };
    Running::start_in(
        controller,
        tracing::info_span!(target: "kubeward", "replica", name = identity),
    )
}

/// The final status of a deleted item, read once the controller let it go.
struct Released {
    name: String,
    history: Vec<String>,
}

/// Reads the final status of every deleted item the controller let go (only the driver's
/// finalizer is left: no write of the controller can land any more, as each carries a
/// resourceVersion older than its finalizer removal) and removes the driver's finalizer, so the
/// item goes. Keyed by uid into `released`.
async fn release(items: &Api<Item>, released: &mut HashMap<String, Released>) {
    let list = retry(|| async { items.list(&ListParams::default()).await })
        .await
        .items;
    for item in list {
        let let_go = item.metadata.deletion_timestamp.is_some()
            && item.finalizers().iter().all(|f| f == AUDIT);
        let Some(uid) = item.uid().filter(|_| let_go) else {
            continue;
        };
        released.entry(uid).or_insert_with(|| Released {
            name: item.name_any(),
            history: item
                .status
                .as_ref()
                .map(|s| s.history.clone())
                .unwrap_or_default(),
        });
        let patch = serde_json::json!({
            "metadata": { "finalizers": null, "resourceVersion": item.resource_version() }
        });
        // A conflict (someone wrote since the list) leaves it for the next round.
        let _ = retry(|| async {
            match items
                .patch(
                    &item.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&patch),
                )
                .await
            {
                Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => Ok(()),
                Ok(_) => Ok(()),
                Err(error) => Err(error),
            }
        })
        .await;
    }
}

async fn run(seed: u64, secs: u64, objects: usize) -> Figures {
    let mut figures = Figures::default();
    let mut rng = Rng(seed);
    let server = Cluster::start().await.expect("API server starts");
    eprintln!("soak: on {}", server.describe());
    server
        .install_crd(&Item::crd())
        .await
        .expect("CRD installs");
    let admin = server.client().expect("client");
    let items: Api<Item> = Api::namespaced(admin.clone(), NAMESPACE);
    let ledger = Arc::new(Ledger::default());
    let abandoned = Arc::new(Abandoned::default());
    // Each replica is a service account of its own holding exactly the generated RBAC.
    let mut replicas: Vec<Running> = Vec::new();
    for r in REPLICAS {
        let client = server
            .service_account_client(NAMESPACE, r, kubeward::rbac::rules::<Items>(true))
            .await
            .expect("the generated RBAC is stored");
        replicas.push(replica(client, r, &ledger, &abandoned));
    }

    let mut driven: BTreeMap<String, Driven> = BTreeMap::new();
    let mut must_clean: HashSet<String> = HashSet::new();
    let mut next_name = 0usize;
    let mut create = |rng: &mut Rng, driven: &mut BTreeMap<String, Driven>| {
        let name = format!("item-{next_name:04}");
        next_name += 1;
        let spec = ItemSpec {
            step: 0,
            approved: false,
            cleanup_passes: 1 + rng.below(3) as u32,
        };
        driven.insert(
            name.clone(),
            Driven {
                spec: spec.clone(),
                deleted: false,
            },
        );
        let mut item = Item::new(&name, spec);
        item.metadata.finalizers = Some(vec![AUDIT.into()]);
        item
    };
    for _ in 0..objects {
        let item = create(&mut rng, &mut driven);
        retry(|| async { items.create(&PostParams::default(), &item).await }).await;
    }
    figures.objects = objects;

    // Faults and operations, interleaved, for `secs`.
    let mut released: HashMap<String, Released> = HashMap::new();
    let mut relist_deleted: BTreeSet<String> = BTreeSet::new();
    let end = tokio::time::Instant::now() + Duration::from_secs(secs);
    let mut next_fault = tokio::time::Instant::now();
    let mut next_release = tokio::time::Instant::now();
    while tokio::time::Instant::now() < end {
        if tokio::time::Instant::now() >= next_release {
            release(&items, &mut released).await;
            next_release = tokio::time::Instant::now() + Duration::from_millis(500);
        }
        let live: Vec<String> = driven
            .iter()
            .filter(|(_, d)| !d.deleted)
            .map(|(n, _)| n.clone())
            .collect();
        if tokio::time::Instant::now() >= next_fault {
            let kind = inject(&server, &mut rng, &live, &mut relist_deleted).await;
            *figures.faults.entry(kind).or_default() += 1;
            next_fault = tokio::time::Instant::now() + Duration::from_millis(50 + rng.below(250));
        }
        let op = match rng.below(20) {
            0 => "create",
            1 if !live.is_empty() => "delete",
            2..=11 if !live.is_empty() => "edit",
            12..=19 if !live.is_empty() => "approve",
            _ => "create",
        };
        *figures.operations.entry(op).or_default() += 1;
        match op {
            "create" => {
                let item = create(&mut rng, &mut driven);
                retry(|| async { items.create(&PostParams::default(), &item).await }).await;
                figures.objects += 1;
            }
            op => {
                let name = rng.pick(&live).clone();
                let entry = driven.get_mut(&name).expect("driven");
                match op {
                    "delete" => {
                        entry.deleted = true;
                        // An item still there after the DELETE is Terminating on our finalizer:
                        // its cleanup must complete before it goes.
                        let terminating = retry(|| async {
                            match items.delete(&name, &DeleteParams::default()).await {
                                Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
                                Ok(either) => Ok(either.left()),
                                Err(error) => Err(error),
                            }
                        })
                        .await;
                        if let Some(item) = terminating
                            && item.finalizers().iter().any(|f| f == FINALIZER)
                        {
                            must_clean.insert(item.uid().unwrap_or_default());
                        }
                    }
                    op => {
                        if op == "edit" {
                            entry.spec.step += 1;
                            entry.spec.approved = false;
                        } else {
                            entry.spec.approved = true;
                        }
                        let patch = serde_json::json!({ "spec": entry.spec });
                        retry(|| async {
                            let params = PatchParams::default();
                            items.patch(&name, &params, &Patch::Merge(&patch)).await
                        })
                        .await;
                    }
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(5 + rng.below(20))).await;
    }

    // The faults stop; a restart releases requests still hung.
    server.faults().clear();
    server.restart().await.expect("server restarts");
    for (i, running) in replicas.iter().enumerate() {
        figures.check(
            "no panic or fault stops the controller",
            running.is_running(),
            || format!("{} returned", REPLICAS[i]),
        );
    }

    // Convergence: every live item shows its spec's condition and has its child as its spec
    // asks, every deleted one is gone.
    let config_maps: Api<ConfigMap> = Api::namespaced(admin.clone(), NAMESPACE);
    let list_children = || async {
        let list = retry(|| async { config_maps.list(&ListParams::default()).await }).await;
        let children: HashMap<String, ConfigMap> =
            list.items.into_iter().map(|c| (c.name_any(), c)).collect();
        children
    };
    let settle = tokio::time::Instant::now() + Duration::from_secs(240);
    let live: HashMap<String, ItemSpec> = driven
        .iter()
        .filter(|(_, d)| !d.deleted)
        .map(|(n, d)| (n.clone(), d.spec.clone()))
        .collect();
    let converged = |list: &[Item], children: &HashMap<String, ConfigMap>| {
        let children_match = live.iter().all(|(name, spec)| {
            children
                .get(&child_name(name))
                .is_some_and(|c| child_matches(c, spec))
        });
        let live_items: Vec<&Item> = list
            .iter()
            .filter(|item| live.contains_key(&item.name_any()))
            .collect();
        // A deleted item may wait for the driver's finalizer, not for the controller's.
        let let_go = list
            .iter()
            .filter(|item| !live.contains_key(&item.name_any()))
            .all(|item| item.finalizers().iter().all(|f| f == AUDIT));
        let_go
            && children_match
            && live_items.len() == live.len()
            && live_items.iter().all(|item| {
                let Some(spec) = live.get(&item.name_any()) else {
                    return false;
                };
                let (status, reason, message) = desired(spec);
                item.status.as_ref().is_some_and(|s| {
                    s.conditions.iter().any(|c| {
                        c.type_ == "Ready"
                            && c.status == status.to_string()
                            && c.reason == reason
                            && c.message == message
                    })
                })
            })
    };
    let mut list = Vec::new();
    let mut children = HashMap::new();
    let settling = tokio::time::Instant::now();
    while tokio::time::Instant::now() < settle {
        list = retry(|| async { items.list(&ListParams::default()).await })
            .await
            .items;
        children = list_children().await;
        if converged(&list, &children) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    figures.settle = settling.elapsed();
    let by_name: HashMap<String, &Item> = list.iter().map(|i| (i.name_any(), i)).collect();
    for (name, spec) in &live {
        let item = by_name.get(name);
        let (status, reason, message) = desired(spec);
        figures.check(
            "every live object converges once faults stop",
            item.is_some_and(|i| {
                i.status.as_ref().is_some_and(|s| {
                    s.conditions.iter().any(|c| {
                        c.status == status.to_string() && c.reason == reason && c.message == message
                    })
                })
            }),
            || {
                format!(
                    "{name}: wants {reason} {message:?}, has {:?}",
                    item.map(|i| &i.status)
                )
            },
        );
        // Also a child deleted while the watches relisted: only the relist showed it gone.
        let owned = children.get(&child_name(name));
        figures.check(
            "every live object's child is there as its spec asks once faults stop",
            owned.is_some_and(|c| child_matches(c, spec)),
            || {
                let relisted = if relist_deleted.contains(name) {
                    " (deleted while the watches relisted)"
                } else {
                    ""
                };
                format!(
                    "{name}{relisted}: wants its child at step {}, has {:?}",
                    spec.step,
                    owned.map(|c| &c.data)
                )
            },
        );
    }
    figures.relist_deleted = relist_deleted.len();
    let cleaned = ledger.cleaned.lock().unwrap().clone();
    // The deleted items the controller let go (its finalizer removed) that still wait for the
    // driver's: their final status is read, then they go too.
    release(&items, &mut released).await;
    let list: Vec<Item> = retry(|| async { items.list(&ListParams::default()).await })
        .await
        .items;
    let by_name: HashMap<String, &Item> = list.iter().map(|i| (i.name_any(), i)).collect();
    for name in driven.iter().filter(|(_, d)| d.deleted).map(|(n, _)| n) {
        let left = by_name.get(name);
        figures.check(
            "no object is left Terminating once faults stop",
            left.is_none(),
            || format!("{name} still there: {:?}", left.map(|i| &i.metadata)),
        );
    }
    figures.deleted_audited = released.len();

    steady_state(&server, &items, &ledger, &live, &mut figures).await;

    let lease = retry(|| async {
        Api::<Lease>::namespaced(admin.clone(), NAMESPACE)
            .get("items-controller")
            .await
    })
    .await;
    figures.handovers = lease.spec.and_then(|s| s.lease_transitions).unwrap_or(0);
    let stopping = tokio::time::Instant::now();
    let mut stopped_at = Vec::new();
    for (running, replica) in replicas.into_iter().zip(REPLICAS) {
        running.stop().await; // flushes event series, then releases the lease
        stopped_at.push((replica, server.requests().len()));
    }
    figures.stop = stopping.elapsed();
    // Nothing a stopped replica started may still reach the server.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let requests = server.requests();
    for (replica, at) in stopped_at {
        let user = format!("system:serviceaccount:{NAMESPACE}:{replica}");
        let late: Vec<String> = requests[at..]
            .iter()
            .filter(|r| r.user == user)
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        figures.check(
            "no request after a replica stopped and released the lease",
            late.is_empty(),
            || format!("{replica}: {late:?}"),
        );
    }
    let repeated = ledger.repeated_cleanups.lock().unwrap().clone();
    for (replica, uid) in ledger.cleaned_by.lock().unwrap().iter() {
        figures.check(
            "no replica completes one object's cleanup twice",
            !repeated.iter().any(|(r, u)| r == replica && u == uid),
            || format!("{replica} cleaned up {uid} again"),
        );
    }
    figures.passes = ledger.started.lock().unwrap().values().sum();
    let abandoned = abandoned.0.lock().unwrap().clone();
    figures.abandoned = abandoned.len();
    // Every pass start is a check: no other replica had a pass in flight.
    let overlaps = ledger.overlaps.load(Ordering::Relaxed);
    for start in 0..figures.passes {
        figures.check(
            "no two replicas run passes at the same time",
            start >= overlaps,
            || "a pass started while the other replica had one in flight".to_owned(),
        );
    }

    // Deleted items that were Terminating on the finalizer: it went only after their cleanup
    // completed.
    for uid in &must_clean {
        figures.check(
            "no finalizer is removed before its cleanup completed",
            cleaned.contains(uid),
            || format!("item {uid} is gone but its cleanup never completed"),
        );
    }
    let events_api = Api::<StoredEvent>::namespaced(admin.clone(), NAMESPACE);
    let events: Vec<StoredEvent> =
        retry(|| async { events_api.list(&ListParams::default()).await })
            .await
            .items;
    // Every item, live or deleted (with its final status, read before it went): the name and
    // the transitions its status recorded as persisted.
    let mut audited: HashMap<String, (String, Vec<String>)> = list
        .iter()
        .filter_map(|item| {
            let history = item.status.as_ref().map(|s| s.history.clone());
            Some((item.uid()?, (item.name_any(), history.unwrap_or_default())))
        })
        .collect();
    audited.extend(
        released
            .iter()
            .map(|(uid, r)| (uid.clone(), (r.name.clone(), r.history.clone()))),
    );

    // The transitions each item's status recorded as persisted each have exactly one event,
    // counted once, and no transition event exists that the status does not record.
    let mut by_uid: HashMap<&str, Vec<&StoredEvent>> = HashMap::new();
    for event in &events {
        let uid = event.regarding.as_ref().and_then(|r| r.uid.as_deref());
        if let Some(uid) = uid
            && event
                .reason
                .as_deref()
                .is_some_and(|r| TRANSITION_REASONS.contains(&r))
        {
            by_uid.entry(uid).or_default().push(event);
        }
    }
    for (uid, (name, history)) in &audited {
        let mut published: HashMap<String, i32> = HashMap::new();
        for event in by_uid.get(uid.as_str()).into_iter().flatten() {
            let key = format!(
                "{}|{}",
                event.reason.as_deref().unwrap_or_default(),
                event.note.as_deref().unwrap_or_default()
            );
            *published.entry(key).or_default() += event.series.as_ref().map_or(1, |s| s.count);
        }
        for transition in history {
            let count = published.get(transition).copied().unwrap_or(0);
            // The known limit of a lost term: a pass over the object was abandoned and the lease
            // changed hands, so its write may have been answered only after the fence closed —
            // its event is then not sent (RELIABILITY.md, known limits).
            let passes_abandoned = abandoned.iter().filter(|n| *n == name).count();
            if count == 0 && passes_abandoned > 0 && figures.handovers > 0 {
                figures.known_limits.push(format!(
                    "{name}: transition {transition:?} has no event; {passes_abandoned} passes \
                     over it abandoned, {} lease handovers",
                    figures.handovers
                ));
                continue;
            }
            figures.check(
                "every persisted transition has exactly one event, counted once",
                count == 1,
                || {
                    let abandoned = abandoned.iter().filter(|n| *n == name).count();
                    let deleted = if released.contains_key(uid) {
                        ", deleted"
                    } else {
                        ""
                    };
                    // Which events: two of them (a duplicate create) or one counted twice (two
                    // publishes of one series)?
                    let events: Vec<String> = by_uid
                        .get(uid.as_str())
                        .into_iter()
                        .flatten()
                        .filter(|e| {
                            format!(
                                "{}|{}",
                                e.reason.as_deref().unwrap_or_default(),
                                e.note.as_deref().unwrap_or_default()
                            ) == *transition
                        })
                        .map(|e| {
                            format!(
                                "{} by {} count {}",
                                e.name_any(),
                                e.reporting_instance.as_deref().unwrap_or_default(),
                                e.series.as_ref().map_or(1, |s| s.count)
                            )
                        })
                        .collect();
                    format!(
                        "{name}{deleted}: transition {transition:?} published {count} times \
                         ({abandoned} passes over it abandoned): {events:?}"
                    )
                },
            );
        }
        let recorded: HashSet<&String> = history.iter().collect();
        for transition in published.keys() {
            figures.check(
                "no event for a transition that never persisted",
                recorded.contains(transition),
                || format!("{name}: event {transition:?} but history {history:?}"),
            );
        }
    }
    drop(server);
    figures
}

/// Steady state is 0 writes, also for a status field the schema prunes: every live object gets
/// a pass that changes nothing (an annotation), twice — the first round lets a replica that
/// took over learn what the server stores — and the second round's passes write no status.
async fn steady_state(
    server: &Cluster,
    items: &Api<Item>,
    ledger: &Ledger,
    live: &HashMap<String, ItemSpec>,
    figures: &mut Figures,
) {
    let mut poked_at = 0;
    for round in ["1", "2"] {
        poked_at = server.requests().len();
        let passes = ledger.started.lock().unwrap().values().sum::<usize>();
        for name in live.keys() {
            let patch = serde_json::json!({
                "metadata": { "annotations": { "soak.kubeward.dev/poke": round } }
            });
            retry(|| async {
                items
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
            })
            .await;
        }
        // Bounded only so that a stuck controller fails the checks instead of hanging.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while ledger.started.lock().unwrap().values().sum::<usize>() < passes + live.len()
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let requests = server.requests();
    for name in live.keys() {
        let path = format!("/apis/soak.kubeward.dev/v1/namespaces/{NAMESPACE}/items/{name}/status");
        let writes = requests[poked_at..]
            .iter()
            .filter(|r| r.method == Method::PATCH && r.path == path && !r.query.contains("dryRun"))
            .count();
        figures.check(
            "steady state: a pass that changes nothing writes no status (pruned field included)",
            writes == 0,
            || format!("{name}: {writes} status writes after a no-op poke"),
        );
    }
}
