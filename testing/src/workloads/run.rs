//! The simulated cluster's task: every [`Controller`] fed by the store's changes and woken at
//! the times it asks for, on the server's clock.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Weak};
use std::time::Duration;

use jiff::Timestamp;
use tokio::sync::broadcast::error::TryRecvError;

use super::{Ctx, Workloads};
use crate::registry::State;
use crate::shared::Shared;
use crate::store::{Change, ObjectKey, StorageKey};

/// Keys (namespace, name) a controller is to sync, in order.
pub(crate) type Keys = BTreeSet<ObjectKey>;

/// One of the simulated cluster's control loops, written as kube-controller-manager's are: a
/// key is synced from what is stored, never from the change that queued it, so a missed or
/// repeated change costs nothing but a sync.
pub(crate) trait Controller: Send {
    /// The store of the objects whose keys this controller syncs (a Deployment's, a Pod's).
    fn primary(&self) -> StorageKey;

    /// Adds to `keys` the keys `change` concerns. By default: the changed object's, when it is
    /// of [`Controller::primary`]; controllers that follow other kinds map those to their keys
    /// (a pod to its owner), reading `state` as an informer's cache.
    fn observe(&mut self, change: &Change, state: &State, keys: &mut Keys) {
        let _ = state;
        if change.storage == self.primary() {
            keys.insert(crate::store::object_key(&change.object));
        }
    }

    /// Rebuilds from `state` what the controller derives from the changes it observes (an
    /// informer's indexes): at start, and after missed changes.
    fn resync(&mut self, state: &State) {
        let _ = state;
    }

    /// Work before the first sync (a kubelet registering its nodes).
    fn start(&mut self, ctx: &mut Ctx<'_>) {
        let _ = ctx;
    }

    /// Brings `key` to its desired state from what is stored. Returns when, on the clock, to
    /// sync it again though nothing changed (a probe's delay, a deadline, a schedule).
    fn sync(&mut self, ctx: &mut Ctx<'_>, key: &ObjectKey) -> Option<Timestamp>;
}

/// How many keys are synced under one hold of the server's lock: clients' requests get in
/// between batches.
const BATCH: usize = 256;

/// The longest real wait while a timer is pending: a test's [`ManualClock`] moves without
/// telling anyone, so the task looks again this often.
///
/// [`ManualClock`]: kubeward_names::clock::ManualClock
const POLL: Duration = Duration::from_millis(20);

/// The first retry of a key whose sync failed comes this long after it, each further one
/// twice as long after the last, up to [`RETRY_MAX`]: `workqueue.DefaultControllerRateLimiter`'s
/// per-item exponential back-off.
const RETRY_BASE: Duration = Duration::from_millis(5);
/// The longest wait before retrying a failed sync.
const RETRY_MAX: Duration = Duration::from_secs(1000);

/// The controllers and their queues.
struct Loops {
    controllers: Vec<Box<dyn Controller>>,
    dirty: Vec<Keys>,
    /// When each controller's keys are due again.
    timers: BTreeSet<(Timestamp, usize, ObjectKey)>,
    due: Vec<BTreeMap<ObjectKey, Timestamp>>,
    /// How many syncs of each controller's keys failed in a row (a write refused: a quota, a
    /// conflict), as the work queue's rate limiter counts them until `Forget`.
    failures: Vec<BTreeMap<ObjectKey, u32>>,
}

impl Loops {
    fn new(controllers: Vec<Box<dyn Controller>>) -> Self {
        let n = controllers.len();
        Self {
            controllers,
            dirty: vec![Keys::new(); n],
            timers: BTreeSet::new(),
            due: vec![BTreeMap::new(); n],
            failures: vec![BTreeMap::new(); n],
        }
    }

    /// Every stored key of every controller queued (at start, and after missed changes).
    fn queue_all(&mut self, state: &State) {
        for (controller, dirty) in self.controllers.iter_mut().zip(&mut self.dirty) {
            controller.resync(state);
            dirty.extend(
                state
                    .store
                    .list(&controller.primary(), None)
                    .map(crate::store::object_key),
            );
        }
    }

    fn observe(&mut self, change: &Change, state: &State) {
        for (controller, dirty) in self.controllers.iter_mut().zip(&mut self.dirty) {
            controller.observe(change, state, dirty);
        }
    }

    /// Moves the keys due at `now` to their queues.
    fn fire(&mut self, now: Timestamp) {
        while let Some(first) = self.timers.first() {
            if first.0 > now {
                break;
            }
            let (_, i, key) = self.timers.pop_first().expect("just seen");
            self.due[i].remove(&key);
            self.dirty[i].insert(key);
        }
    }

    fn set_timer(&mut self, i: usize, key: ObjectKey, at: Timestamp) {
        if let Some(old) = self.due[i].insert(key.clone(), at) {
            self.timers.remove(&(old, i, key.clone()));
        }
        self.timers.insert((at, i, key));
    }

    /// When to retry `key` of controller `i`, whose sync just failed again.
    fn back_off(&mut self, i: usize, key: &ObjectKey, now: Timestamp) -> Timestamp {
        let failures = self.failures[i].entry(key.clone()).or_default();
        let delay = RETRY_BASE
            .saturating_mul(2u32.saturating_pow(*failures))
            .min(RETRY_MAX);
        *failures = failures.saturating_add(1);
        now.checked_add(delay).unwrap_or(now)
    }

    fn has_work(&self) -> bool {
        self.dirty.iter().any(|d| !d.is_empty())
    }

    /// Syncs up to [`BATCH`] queued keys, the first controllers' first.
    fn sync_batch(&mut self, state: &mut State, world: &Workloads) {
        let now = state.now();
        let mut left = BATCH;
        for i in 0..self.controllers.len() {
            while left > 0 {
                let Some(key) = self.dirty[i].pop_first() else {
                    break;
                };
                left -= 1;
                let mut ctx = Ctx::new(state, world, now);
                let again = self.controllers[i].sync(&mut ctx, &key);
                let retry = if ctx.write_failed() {
                    Some(self.back_off(i, &key, now))
                } else {
                    self.failures[i].remove(&key);
                    None
                };
                if let Some(at) = again.into_iter().chain(retry).min() {
                    self.set_timer(i, key, at);
                }
            }
        }
    }
}

/// The running simulated cluster, as the server holds it.
pub(crate) struct Simulation {
    task: tokio::task::JoinHandle<()>,
    kubelets: super::kubelet::KubeletSwitch,
}

impl Simulation {
    /// Stops the task.
    pub(crate) fn abort(&self) {
        self.task.abort();
    }

    /// Stops or starts the kubelet of `node` at the server's `now` (see
    /// [`ApiServer::set_node_ready`](crate::ApiServer::set_node_ready)).
    pub(crate) fn set_node_ready(&self, shared: &Shared, node: &str, ready: bool) {
        let now = shared.lock().now();
        self.kubelets.set(node, ready, now);
    }
}

/// Starts the simulated cluster of `world`: its controllers' start-up work (the kubelets
/// registering their nodes) is done when this returns; then their task runs until the server is
/// dropped.
pub(crate) fn start(shared: &Arc<Shared>, mut world: Workloads) -> Simulation {
    // Each server's kubelets are its own, whoever else cloned the declaration.
    world.kubelets = super::kubelet::KubeletSwitch::default();
    let kubelets = world.kubelets.clone();
    let mut loops = Loops::new(super::controllers());
    let changes = {
        let mut state = shared.lock();
        let changes = state.store.subscribe();
        let now = state.now();
        for controller in &mut loops.controllers {
            controller.start(&mut Ctx::new(&mut state, &world, now));
        }
        loops.queue_all(&state);
        changes
    };
    let task = tokio::spawn(run(Arc::downgrade(shared), world, loops, changes));
    Simulation { task, kubelets }
}

/// The simulated cluster's task.
async fn run(
    shared: Weak<Shared>,
    world: Workloads,
    mut loops: Loops,
    mut changes: tokio::sync::broadcast::Receiver<Arc<Change>>,
) {
    loop {
        // What happened since the last batch.
        let mut seen = Vec::new();
        let mut lagged = false;
        loop {
            match changes.try_recv() {
                Ok(change) => seen.push(change),
                Err(TryRecvError::Lagged(_)) => lagged = true,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Closed) => return,
            }
        }
        if seen.is_empty() && !lagged && !loops.has_work() {
            let Some(now) = shared.upgrade().map(|s| s.lock().now()) else {
                return;
            };
            loops.fire(now);
            if !loops.has_work() {
                let wait = loops.timers.first().map(|(at, _, _)| {
                    let left = at.duration_since(now).unsigned_abs();
                    left.min(POLL)
                });
                match wait {
                    Some(wait) => {
                        tokio::select! {
                            change = changes.recv() => match change {
                                Ok(change) => seen.push(change),
                                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => lagged = true,
                                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                            },
                            () = tokio::time::sleep(wait) => {}
                            // A kubelet stopped or started: everything is looked at again.
                            () = world.kubelets.woken() => lagged = true,
                        }
                    }
                    None => tokio::select! {
                        change = changes.recv() => match change {
                            Ok(change) => seen.push(change),
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => lagged = true,
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                        },
                        () = world.kubelets.woken() => lagged = true,
                    },
                }
            }
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        {
            let mut state = shared.lock();
            if lagged {
                loops.queue_all(&state);
            }
            for change in &seen {
                loops.observe(change, &state);
            }
            loops.fire(state.now());
            loops.sync_batch(&mut state, &world);
        }
        drop(shared);
        tokio::task::yield_now().await;
    }
}
