//! Leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics, so that of
//! several replicas of a controller only one reconciles at a time.
//!
//! - A candidate acquires the lease when it is unheld, or when the holder has not renewed it for
//!   `lease_duration` — measured, as in client-go, on the candidate's own clock from the moment
//!   it *observed* the record last change, never by comparing its clock with the holder's
//!   `renewTime` (clocks of different nodes disagree).
//! - The leader renews every `retry_period`. Every renewal is bounded by `renew_deadline`,
//!   counted from the start of the last renewal that succeeded (client-go's `RenewDeadline`):
//!   each attempt (a GET and a PUT, which kube's client may retry on 429/503/504 and which may
//!   hang, since the client has no read timeout) is cut off at the deadline, and failed attempts
//!   are retried within it. A leader that misses the deadline stops leading (its in-flight passes
//!   are abandoned) and goes back to candidacy. As `renew_deadline < lease_duration` and a
//!   standby counts the lease duration from when it saw the last renewal (after that renewal
//!   started), the leader has stopped before any standby can acquire the lease: no split brain.
//! - A conflict on renewal (409: the lease changed since it was read, e.g. kube's client retried
//!   a PUT that had committed) is retried within the deadline; only a lease seen held by another
//!   candidate ends leadership at once.
//! - A candidate judges a lease expired by the duration stored in the Lease (the holder's), not
//!   by its own setting: replicas configured differently agree on when the holder is gone.
//! - Identities are unique per process: the identity given is a prefix to which a random suffix
//!   is appended (as client-go users append a UUID to the hostname), so two replicas given the
//!   same name (a fallback constant, a copied manifest) never both take the lease for theirs.
//! - Writes are fenced ([`Fence`]): the controller's status writes, finalizer patches and event
//!   writes are sent only while the fence is open — from acquiring the lease until a standby
//!   could acquire it (the last renewal's start plus the lease duration), until the lease is seen
//!   held by another, or until it is given up on shutdown — so a deposed leader sends no write
//!   once another may lead. client-go leaves this to each controller. (A request already sent,
//!   and kube's client's own retries of it, are bounded by the write timeout, not fenced.)
//! - On shutdown the leader first lets its work end (in-flight passes, their status writes and
//!   events, the event flush), then closes the fence and releases the lease (empty holder),
//!   bounded by the renew deadline, so a successor need not wait for it to expire. A leader that
//!   lost its lease abandons its passes at once, and settles what they left under way (their
//!   status writes and events, the flush of events whose write failed earlier) while the fence
//!   is still open: a transition that persisted keeps its event even when the term ends right
//!   after it.
//!
//! Every write is an update carrying the lease's resourceVersion: two candidates racing for an
//! expired lease cannot both win.

mod shared;

pub(crate) use self::shared::Member;
#[cfg(feature = "prometheus")]
pub(crate) use self::shared::SharedElection;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};
use tokio::time::Instant;

use crate::clock::{SharedClock, SystemClock};

/// client-go's default lease duration.
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
/// client-go's default renew deadline.
pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// client-go's default retry period.
pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);

/// Why leader election could not proceed.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    /// The timings break client-go's rules: `lease_duration > renew_deadline > retry_period > 0`.
    #[error(
        "invalid leader election timings: need lease duration ({lease_duration:?}) > renew deadline ({renew_deadline:?}) > retry period ({retry_period:?}) > 0"
    )]
    InvalidTimings {
        /// The lease duration.
        lease_duration: Duration,
        /// The renew deadline.
        renew_deadline: Duration,
        /// The retry period.
        retry_period: Duration,
    },
    /// The identity is empty.
    #[error("leader election needs a non-empty identity (usually the pod name)")]
    EmptyIdentity,
}

/// Whether this process may write as the leader: open from the moment its candidate acquired the
/// lease until no other candidate could have acquired it yet — the start of its last successful
/// renewal plus the lease duration (a standby counts the duration from when it saw that renewal,
/// which is later) — or until the lease is given up or seen held by another. So a leader that
/// lost its lease can still finish in-flight work within that margin, and sends nothing after.
/// Clones share the state.
///
/// ```
/// # use kubeward::leader::Fence;
/// let fence = Fence::default();
/// assert!(!fence.is_open(), "closed until the lease is acquired");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Fence(Arc<std::sync::Mutex<Option<Instant>>>);

impl Fence {
    /// Whether writes may be sent now.
    pub fn is_open(&self) -> bool {
        self.lock().is_some_and(|until| Instant::now() < until)
    }

    fn open_until(&self, until: Instant) {
        *self.lock() = Some(until);
    }

    /// When the fence closes by itself, if it is open.
    fn closes_at(&self) -> Option<Instant> {
        self.lock().filter(|until| Instant::now() < *until)
    }

    fn close(&self) {
        *self.lock() = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `Ok` if writes may be sent now, else the [`NotLeader`] error a refused write fails with.
    ///
    /// # Errors
    /// [`NotLeader`] (as a [`kube::Error::Service`]) when the fence is closed.
    pub fn check(&self) -> Result<(), kube::Error> {
        if self.is_open() {
            Ok(())
        } else {
            Err(kube::Error::Service(Box::new(NotLeader)))
        }
    }
}

/// A write refused before it was sent: this process does not hold the lease.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("not sent: this process does not hold the lease (leadership was lost or given up)")]
pub struct NotLeader;

/// Whether `error` is a write the [`Fence`] refused (it was never sent).
pub fn is_not_leader(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Service(source) if source.is::<NotLeader>())
}

/// A lease to hold while reconciling.
///
/// ```no_run
/// # async fn run(client: kube::Client) {
/// use kubeward::leader::LeaderElection;
/// let election = LeaderElection::new(client, "demo", "rollouts-controller", "pod-a");
/// # }
/// ```
#[derive(Clone)]
pub struct LeaderElection {
    api: Api<Lease>,
    name: String,
    identity: String,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    clock: SharedClock,
    fence: Fence,
    /// The shutdown budget the release is cut to.
    budget: Option<crate::shutdown::Budget>,
}

impl std::fmt::Debug for LeaderElection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderElection")
            .field("name", &self.name)
            .field("identity", &self.identity)
            .field("lease_duration", &self.lease_duration)
            .field("renew_deadline", &self.renew_deadline)
            .field("retry_period", &self.retry_period)
            .finish_non_exhaustive()
    }
}

/// What one acquire-or-renew attempt found.
enum Attempt {
    /// This candidate holds the lease.
    Holding,
    /// Another candidate holds the lease, and it has not expired.
    HeldByOther,
    /// The lease changed between read and write (409): try again.
    Conflict,
}

/// What a candidate last saw of the lease.
struct Observed {
    lease: Option<Lease>,
    /// When (on this candidate's clock) the holder or renew time last changed.
    changed_at: Instant,
}

impl LeaderElection {
    /// An election for the lease `namespace/name`, with client-go's default timings. The
    /// candidate's identity is `identity` (usually the pod name, see [`default_identity`]) with
    /// `_` and a random suffix appended: unique per process, whatever name two replicas are given.
    pub fn new(
        client: kube::Client,
        namespace: &str,
        name: impl Into<String>,
        identity: impl Into<String>,
    ) -> Self {
        let prefix: String = identity.into();
        let identity = if prefix.is_empty() {
            prefix
        } else {
            format!("{prefix}_{}", random_suffix())
        };
        Self {
            api: Api::namespaced(client, namespace),
            name: name.into(),
            identity,
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
            clock: std::sync::Arc::new(SystemClock),
            fence: Fence::default(),
            budget: None,
        }
    }

    /// Releases the lease within what is left of `budget` on shutdown.
    pub(crate) fn with_budget(mut self, budget: crate::shutdown::Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The fence of this candidate's writes: open while it leads (see [`Fence`]). The
    /// controller a [`LeaderElection`] is given to fences its own writes with it.
    pub fn fence(&self) -> Fence {
        self.fence.clone()
    }

    /// Sets the lease duration, renew deadline and retry period.
    #[must_use]
    pub fn with_timings(
        mut self,
        lease_duration: Duration,
        renew_deadline: Duration,
        retry_period: Duration,
    ) -> Self {
        self.lease_duration = lease_duration;
        self.renew_deadline = renew_deadline;
        self.retry_period = retry_period;
        self
    }

    /// Stamps acquire and renew times with `clock`.
    #[must_use]
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// The candidate's identity: the prefix given to [`LeaderElection::new`], `_` and the
    /// random suffix that makes it unique per process.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Checks that the election can run: a non-empty identity and client-go's timings
    /// (`lease_duration > renew_deadline > retry_period > 0`).
    ///
    /// # Errors
    /// [`LeaderError::EmptyIdentity`] or [`LeaderError::InvalidTimings`].
    pub(crate) fn validate(&self) -> Result<(), LeaderError> {
        if self.identity.is_empty() {
            return Err(LeaderError::EmptyIdentity);
        }
        if !(self.lease_duration > self.renew_deadline
            && self.renew_deadline > self.retry_period
            && self.retry_period > Duration::ZERO)
        {
            return Err(LeaderError::InvalidTimings {
                lease_duration: self.lease_duration,
                renew_deadline: self.renew_deadline,
                retry_period: self.retry_period,
            });
        }
        Ok(())
    }

    /// Runs `lead` each time this candidate becomes leader, until `shutdown` completes, and
    /// `settle` at the end of each term, before the lease is given up. `lead` gets a future that
    /// completes on shutdown (for a graceful stop); if leadership is lost first, the future `lead`
    /// returned is dropped at once, abandoning its work. `settle` finishes what the term's work
    /// left under way (status writes of abandoned passes, their events, the event flush): to its
    /// end after a shutdown, and after a lost lease only while the [`Fence`] is still open (until
    /// a standby could acquire the lease; not at all once the lease is seen held by another).
    ///
    /// # Errors
    /// [`LeaderError`] when the configuration is invalid.
    pub async fn run_while_leader<F, Fut, S, SFut>(
        &self,
        shutdown: impl Future<Output = ()> + Send,
        mut lead: F,
        mut settle: S,
    ) -> Result<(), LeaderError>
    where
        F: FnMut(futures::future::Shared<futures::future::BoxFuture<'static, ()>>) -> Fut,
        Fut: Future<Output = ()>,
        S: FnMut() -> SFut,
        SFut: Future<Output = ()>,
    {
        use futures::FutureExt;
        self.validate()?;
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let stopped: futures::future::Shared<futures::future::BoxFuture<'static, ()>> =
            async move {
                let mut stop_rx = stop_rx;
                let _ = stop_rx.wait_for(|stopped| *stopped).await;
            }
            .boxed()
            .shared();
        let mut shutdown = std::pin::pin!(shutdown.fuse());
        loop {
            let mut observed = Observed {
                lease: None,
                changed_at: Instant::now(),
            };
            let acquired = tokio::select! {
                acquired = self.acquire(&mut observed) => acquired,
                () = &mut shutdown => return Ok(()),
            };
            self.fence.open_until(acquired + self.lease_duration);
            tracing::info!(lease = %self.name, identity = %self.identity, "became leader");
            let stop_tx = &stop_tx;
            let leading = async {
                tokio::select! {
                    () = lead(stopped.clone()) => {}
                    () = async { (&mut shutdown).await; stop_tx.send_replace(true); futures::future::pending::<()>().await } => {}
                }
            };
            tokio::select! {
                () = leading => {
                    // `lead` has ended its work: what it left under way settles, then no write
                    // is sent any more, and the lease is given up.
                    settle().await;
                    self.fence.close();
                    self.release(&mut observed).await;
                    return Ok(());
                }
                () = self.hold(&mut observed, acquired) => {
                    tracing::warn!(lease = %self.name, identity = %self.identity, "lost leadership; abandoning in-flight passes");
                }
            }
            // While no standby can lead yet, the abandoned work's status writes and events may
            // still land: settle them within that margin, and send nothing after it.
            if let Some(closes) = self.fence.closes_at()
                && tokio::time::timeout_at(closes, settle()).await.is_err()
            {
                tracing::warn!(lease = %self.name, "the lost term's writes did not settle before the lease could expire for a standby");
            }
            self.fence.close();
            if *stop_tx.borrow() {
                return Ok(());
            }
        }
    }

    /// Tries every retry period until this candidate holds the lease; returns when the attempt
    /// that acquired it started. Each attempt is bounded by the renew deadline, so a hung request
    /// delays candidacy, never ends it.
    async fn acquire(&self, observed: &mut Observed) -> Instant {
        loop {
            let started = Instant::now();
            let attempt = self.try_acquire_or_renew(observed);
            match tokio::time::timeout(self.renew_deadline, attempt).await {
                Ok(Ok(Attempt::Holding)) => return started,
                Ok(Ok(Attempt::HeldByOther | Attempt::Conflict)) => {}
                Ok(Err(error)) => {
                    tracing::debug!(%error, lease = %self.name, "could not acquire lease")
                }
                Err(_elapsed) => {
                    tracing::debug!(lease = %self.name, "lease acquisition timed out")
                }
            }
            tokio::time::sleep(self.retry_period).await;
        }
    }

    /// Renews every retry period; returns when another candidate holds the lease, or when no
    /// renewal succeeded within the renew deadline after the start of the last one that did
    /// (`acquired`, first). Every attempt is cut off at the deadline.
    async fn hold(&self, observed: &mut Observed, acquired: Instant) {
        let mut last_renewal = acquired;
        loop {
            tokio::time::sleep(self.retry_period).await;
            let started = Instant::now();
            let deadline = last_renewal + self.renew_deadline;
            let attempt = self.try_acquire_or_renew(observed);
            match tokio::time::timeout_at(deadline, attempt).await {
                Ok(Ok(Attempt::Holding)) => {
                    last_renewal = started;
                    self.fence.open_until(started + self.lease_duration);
                    continue;
                }
                Ok(Ok(Attempt::HeldByOther)) => {
                    self.fence.close();
                    return;
                }
                Ok(Ok(Attempt::Conflict)) => {
                    tracing::debug!(lease = %self.name, "lease changed while renewing; retrying");
                }
                Ok(Err(error)) => {
                    tracing::debug!(%error, lease = %self.name, "could not renew lease");
                }
                Err(_elapsed) => {
                    tracing::warn!(lease = %self.name, renew_deadline = ?self.renew_deadline, "lease renewal did not finish within the renew deadline");
                    return;
                }
            }
            if Instant::now() + self.retry_period >= deadline {
                tracing::warn!(lease = %self.name, renew_deadline = ?self.renew_deadline, "lease not renewed within the renew deadline");
                return;
            }
        }
    }

    /// client-go's `tryAcquireOrRenew`: whether this candidate holds the lease afterwards.
    async fn try_acquire_or_renew(&self, observed: &mut Observed) -> Result<Attempt, kube::Error> {
        let now = MicroTime(self.clock.now());
        let current = match self.api.get_opt(&self.name).await? {
            Some(lease) => lease,
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(self.spec(now.clone(), now, 0)),
                };
                return match self.api.create(&PostParams::default(), &lease).await {
                    Ok(created) => {
                        self.observe(observed, created);
                        Ok(Attempt::Holding)
                    }
                    Err(kube::Error::Api(status)) if status.code == 409 => Ok(Attempt::Conflict),
                    Err(error) => Err(error),
                };
            }
        };
        self.observe(observed, current.clone());
        let spec = current.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.as_deref().unwrap_or_default();
        let held_by_me = holder == self.identity;
        // The holder's duration, as stored in the Lease, decides when it is gone.
        let duration = spec
            .lease_duration_seconds
            .and_then(|seconds| u64::try_from(seconds).ok())
            .filter(|seconds| *seconds > 0)
            .map_or(self.lease_duration, Duration::from_secs);
        let expired = observed.changed_at.elapsed() >= duration;
        if !holder.is_empty() && !held_by_me && !expired {
            return Ok(Attempt::HeldByOther);
        }
        let (acquire_time, transitions) = if held_by_me {
            (
                spec.acquire_time.clone().unwrap_or_else(|| now.clone()),
                spec.lease_transitions.unwrap_or(0),
            )
        } else {
            (now.clone(), spec.lease_transitions.unwrap_or(0) + 1)
        };
        let mut lease = current;
        lease.spec = Some(self.spec(acquire_time, now, transitions));
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(updated) => {
                self.observe(observed, updated);
                Ok(Attempt::Holding)
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(Attempt::Conflict),
            Err(error) => Err(error),
        }
    }

    /// Gives the lease up (empty holder) so a successor need not wait for it to expire. The
    /// request is bounded by the renew deadline: a server that does not answer leaves the lease
    /// to expire.
    async fn release(&self, observed: &mut Observed) {
        let Some(mut lease) = observed.lease.clone() else {
            return;
        };
        let Some(spec) = lease.spec.as_mut() else {
            return;
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return;
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(self.clock.now()));
        let params = PostParams::default();
        let release = self.api.replace(&self.name, &params, &lease);
        let timeout = self.budget.as_ref().map_or(self.renew_deadline, |budget| {
            budget.bound(crate::shutdown::Step::Release, self.renew_deadline)
        });
        match tokio::time::timeout(timeout, release).await {
            Ok(Ok(_)) => {
                tracing::info!(lease = %self.name, identity = %self.identity, "released the lease")
            }
            Ok(Err(error)) => {
                tracing::warn!(%error, lease = %self.name, "could not release the lease; it expires on its own");
            }
            Err(_elapsed) => {
                tracing::warn!(lease = %self.name, ?timeout, "releasing the lease got no answer in time; it expires on its own");
            }
        }
    }

    fn spec(&self, acquire_time: MicroTime, renew_time: MicroTime, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            // Rounded up: standbys judge expiry by the stored duration, which must not be
            // shorter than the one this leader's fence and renew deadline assume.
            lease_duration_seconds: Some(
                i32::try_from(
                    (self.lease_duration.as_secs()
                        + u64::from(self.lease_duration.subsec_nanos() > 0))
                    .max(1),
                )
                .unwrap_or(i32::MAX),
            ),
            acquire_time: Some(acquire_time),
            renew_time: Some(renew_time),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }

    /// Records what the candidate sees; the expiry clock restarts whenever holder or renew time
    /// changed.
    fn observe(&self, observed: &mut Observed, lease: Lease) {
        let key = |l: &Lease| {
            l.spec
                .as_ref()
                .map(|s| (s.holder_identity.clone(), s.renew_time.clone()))
        };
        if observed.lease.as_ref().map(key) != Some(key(&lease)) {
            observed.changed_at = Instant::now();
        }
        observed.lease = Some(lease);
    }
}

/// The identity prefix a process should use: the `POD_NAME` environment variable (set it from the
/// downward API), else `HOSTNAME` (a pod's hostname is its name), else `"kubeward"`.
pub fn default_identity() -> String {
    ["POD_NAME", "HOSTNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "kubeward".to_owned())
}

/// Eight random lowercase letters and digits.
fn random_suffix() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..8)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect()
}
