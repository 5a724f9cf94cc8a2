//! [`EventRecorder`]: publishing, series writes, sweeps and shutdown flush.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::events::EventType;
use tokio::sync::Notify;

use super::PublishError;
use super::cache::SeriesCache;
use super::event::Event;
use super::naming::event_name;
use super::reporter::Reporter;
use super::series::{Series, SeriesKey, SeriesState, Stored};
use crate::clock::{SharedClock, SystemClock};
use crate::names::NameKind;
use crate::observe::{Observers, PublishRecord, PublishResult, ReconcileObserver};

/// How long a publish (or one series write of a sweep or flush) may take, lock wait included.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often at most a series' count is written to the server.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_secs(60);
/// How long a series may go without a repeat before it is evicted (its count written first).
/// Longer than the controller's longest retry backoff (5 min), so that an object failing for
/// hours keeps counting into one event instead of starting a new one at every retry.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// How many series a recorder keeps in memory at most.
pub const DEFAULT_MAX_SERIES: usize = 10_000;

/// Series writes a sweep or flush runs at once.
const WRITE_CONCURRENCY: usize = 8;

/// Publishes events.k8s.io/v1 events on behalf of one controller; see the [module](super)
/// documentation for the rules. Cheap to clone; clones share their series.
///
/// Configure it with the `with_*` methods before its first publish: each returns a new recorder
/// without series. The first publish starts a background sweep on the current tokio runtime; it
/// ends when the last clone is dropped. Call [`flush`](Self::flush) on shutdown.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use std::time::Duration;
/// use kubeward::events::{EventRecorder, Reporter};
///
/// # let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
/// # let client = kube::Client::try_from(config).unwrap();
/// let recorder = EventRecorder::new(client, Reporter::new("demo.kubeward.dev/rollouts", "pod-0").unwrap())
///     .with_timeout(Duration::from_secs(2))
///     .with_flush_interval(Duration::from_secs(30));
/// assert_eq!(recorder.reporter().controller(), "demo.kubeward.dev/rollouts");
/// # }
/// ```
#[derive(Clone)]
pub struct EventRecorder {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Config {
    client: kube::Client,
    reporter: Reporter,
    timeout: Duration,
    flush_interval: Duration,
    idle_timeout: Duration,
    clock: SharedClock,
    observers: Observers,
    max_series: usize,
}

struct Inner {
    config: Config,
    controller: Arc<str>,
    cache: Mutex<SeriesCache>,
    sweeper_started: AtomicBool,
    /// Wakes the sweeper early: series were parked, or the recorder was dropped.
    wake: Arc<Notify>,
    /// Tells the sweeper a write failed and its count waits: it retries soon (with a backoff)
    /// rather than at its next period.
    retry: Arc<Notify>,
    /// Set by a controller with leader election: event writes are sent only while it is open.
    fence: std::sync::OnceLock<crate::leader::Fence>,
}

impl EventRecorder {
    /// A recorder publishing as `reporter`, with the default timeout (5 s), flush interval
    /// (60 s) and bound (10,000 series), the system clock and no observers.
    pub fn new(client: kube::Client, reporter: Reporter) -> Self {
        Self::from_config(Config {
            client,
            reporter,
            timeout: DEFAULT_TIMEOUT,
            flush_interval: DEFAULT_FLUSH_INTERVAL,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            clock: Arc::new(SystemClock),
            observers: Observers::default(),
            max_series: DEFAULT_MAX_SERIES,
        })
    }

    fn from_config(config: Config) -> Self {
        Self {
            inner: Arc::new(Inner {
                controller: config.reporter.controller().into(),
                cache: Mutex::new(SeriesCache::new(config.max_series)),
                sweeper_started: AtomicBool::new(false),
                wake: Arc::new(Notify::new()),
                retry: Arc::new(Notify::new()),
                fence: std::sync::OnceLock::new(),
                config,
            }),
        }
    }

    /// Sends event writes (creates and patches, also the flushes of the background sweep) only
    /// while `fence` is open: a controller with leader election fences its recorder with its
    /// lease, so a process that no longer leads publishes nothing. A write refused so fails with
    /// [`NotLeader`](crate::leader::NotLeader). The first fence set stays: one recorder belongs
    /// to one controller.
    pub fn fence_with(&self, fence: crate::leader::Fence) {
        let _ = self.inner.fence.set(fence);
    }

    /// The builder methods configure a recorder before its first publish: each returns a new
    /// recorder with no series.
    fn configure(self, change: impl FnOnce(&mut Config)) -> Self {
        let mut config = self.inner.config.clone();
        change(&mut config);
        Self::from_config(config)
    }

    /// Gives up a publish after `timeout` (the wait for the series lock included).
    #[must_use]
    pub fn with_timeout(self, timeout: Duration) -> Self {
        self.configure(|c| c.timeout = timeout)
    }

    /// Writes a series' count at most once per `interval`. `Duration::ZERO` writes every
    /// repeat (kube-runtime's behaviour).
    #[must_use]
    pub fn with_flush_interval(self, interval: Duration) -> Self {
        self.configure(|c| c.flush_interval = interval)
    }

    /// Evicts a series after `idle` without a repeat (default [`DEFAULT_IDLE_TIMEOUT`]; never
    /// less than the flush interval). A repeat after eviction starts a new event.
    #[must_use]
    pub fn with_idle_timeout(self, idle: Duration) -> Self {
        self.configure(|c| c.idle_timeout = idle)
    }

    /// Reads time (event times, flush intervals, idleness) from `clock`.
    #[must_use]
    pub fn with_clock(self, clock: SharedClock) -> Self {
        self.configure(|c| c.clock = clock)
    }

    /// Reports every publish and series write to `observers`.
    #[must_use]
    pub fn with_observers(self, observers: Observers) -> Self {
        self.configure(|c| c.observers = observers)
    }

    /// Keeps at most `max` series in memory (at least 1), evicting the least recently used.
    #[must_use]
    pub fn with_max_series(self, max: usize) -> Self {
        self.configure(|c| c.max_series = max)
    }

    /// The reporter every event names.
    pub fn reporter(&self) -> &Reporter {
        &self.inner.config.reporter
    }

    /// How many series the recorder holds in memory: live ones plus evicted or forgotten ones
    /// whose count is still to be written.
    pub fn series_in_memory(&self) -> usize {
        let cache = self.inner.cache();
        cache.len() + cache.parked_len()
    }

    /// Publishes one occurrence of `event` about `regarding`.
    ///
    /// The first occurrence of a series creates an event; a repeat is counted in memory and
    /// written with the series' next write (this publish's, if the flush interval has passed since
    /// the last one). The result is reported to the observers: `created`, `aggregated`, `flushed`,
    /// `recreated`, `failed` or `timed_out`.
    ///
    /// # Errors
    ///
    /// - [`PublishError::InvalidEvent`]: reason or action empty or over 128 bytes; nothing sent.
    /// - [`PublishError::Api`]: the write failed. An occurrence the server refused (a client
    ///   error such as 403 or 422) is not counted; a first one leaves no series behind. Otherwise
    ///   (a 5xx, a throttle, a lost answer) the occurrence stays counted and the series' next
    ///   write (the background sweep, [`flush`](Self::flush) or the next due publish) brings the
    ///   server up to date, so the stored count equals the publishes once the API recovers. A
    ///   create whose outcome is unknown (a 5xx, `409 AlreadyExists` for its own name, a lost
    ///   answer) is resolved by reading the event back: never a duplicate event.
    /// - [`PublishError::Timeout`]: the recorder's timeout passed. If it passed while waiting for
    ///   the series lock, this occurrence is not counted. If it passed during the request, the
    ///   occurrence is counted and the next write of the series (the next due publish, the
    ///   background sweep or [`flush`](Self::flush)) completes it: a create is re-sent under the
    ///   same event name, and an `AlreadyExists` answer shows the first one had landed, so a timeout
    ///   costs neither an extra event nor a lost count.
    pub async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), PublishError> {
        let inner = &self.inner;
        let result = match validate(event).and_then(|()| validate_regarding(regarding)) {
            Err(error) => Err(error),
            Ok(()) => {
                inner.start_sweeper();
                let key = SeriesKey::new(event, regarding);
                let publish = inner.publish(&key, regarding, event.related.as_ref());
                match tokio::time::timeout(inner.config.timeout, publish).await {
                    Ok(result) => result,
                    Err(_elapsed) => Err(PublishError::Timeout {
                        after: inner.config.timeout,
                    }),
                }
            }
        };
        inner.observe(event.type_, &result);
        result.map(drop)
    }

    /// Writes every count the server lacks, whatever the flush interval: call it on shutdown.
    /// Each series write is bounded by the recorder's timeout; a timeout ends the flush early
    /// (the server is hung), other failures do not.
    ///
    /// # Errors
    ///
    /// The first failure; the counts that could not be written are kept for a later flush.
    pub async fn flush(&self) -> Result<(), PublishError> {
        self.inner.write_all(true).await
    }

    /// [`flush`](Self::flush), retried within `budget` while writes fail (a 5xx, a throttle, a
    /// lost answer, a timeout), with a backoff from 100 ms doubling to 1 s: what a controller does
    /// on shutdown or at the end of a leadership term, so that one failed request does not lose
    /// the events of transitions that were persisted. Stops at once when the leadership fence
    /// refuses the writes (nothing may be sent any more).
    ///
    /// # Errors
    ///
    /// The last failure, once the budget is spent; the counts not written are kept.
    pub async fn flush_within(&self, budget: Duration) -> Result<(), PublishError> {
        let deadline = tokio::time::Instant::now() + budget;
        let mut backoff = Duration::from_millis(100);
        loop {
            let result = match tokio::time::timeout_at(deadline, self.flush()).await {
                Ok(result) => result,
                Err(_elapsed) => Err(PublishError::Timeout { after: budget }),
            };
            let fenced =
                matches!(&result, Err(PublishError::Api(e)) if crate::leader::is_not_leader(e));
            match result {
                Err(error) if !fenced && tokio::time::Instant::now() + backoff < deadline => {
                    tracing::debug!(%error, ?backoff, "event flush failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                }
                result => return result,
            }
        }
    }

    /// What the background sweep does every quarter flush interval (at most every 15 s): evicts
    /// series idle for a flush interval, writes the counts of series whose interval has passed and
    /// of evicted ones. Call it to drive a recorder running on a manual clock.
    ///
    /// # Errors
    ///
    /// As [`flush`](Self::flush).
    pub async fn flush_due(&self) -> Result<(), PublishError> {
        self.inner.write_all(false).await
    }

    /// Resets the failure series ([`EventKind::Failure`](super::EventKind::Failure)) of the object
    /// with `uid`: its next failure is a new event. Call it when a pass over the object succeeds.
    /// Regular events are not reset. Counts not yet written are still written. Series are found
    /// by the `uid` of their regarding object: publish with references that carry it.
    pub fn forget_failures(&self, uid: &str) {
        self.inner.forget(uid, true);
    }

    /// Drops every series of the object with `uid` (it was deleted). Counts not yet written are
    /// still written.
    pub fn forget(&self, uid: &str) {
        self.inner.forget(uid, false);
    }
}

impl fmt::Debug for EventRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = &self.inner.config;
        f.debug_struct("EventRecorder")
            .field("reporter", &config.reporter)
            .field("timeout", &config.timeout)
            .field("flush_interval", &config.flush_interval)
            .field("max_series", &config.max_series)
            .field("observers", &config.observers)
            .finish_non_exhaustive()
    }
}

/// `kubectl describe` lists an object's events by `involvedObject` kind, name, namespace and uid:
/// an event without one of them would never be shown.
fn validate_regarding(regarding: &ObjectReference) -> Result<(), PublishError> {
    let missing = [
        ("kind", &regarding.kind),
        ("name", &regarding.name),
        ("uid", &regarding.uid),
    ]
    .into_iter()
    .find(|(_, value)| value.as_deref().is_none_or(str::is_empty));
    match missing {
        Some((missing, _)) => Err(PublishError::InvalidRegarding { missing }),
        None => Ok(()),
    }
}

fn validate(event: &Event) -> Result<(), PublishError> {
    NameKind::EventReason.validate(&event.reason)?;
    NameKind::EventAction.validate(&event.action)?;
    Ok(())
}

/// What reading an event back after an in-doubt create found under the series' name.
enum ReadBack {
    /// The series' own event: the create had landed.
    Ours,
    /// Another event under the same name.
    Someone,
    /// Nothing.
    Absent,
}

/// Whether a failed write was refused for good (a client error such as 400, 403 or 422), rather
/// than failed in a way a later write may overcome (5xx, 408, 409, 429, no answer).
fn refused(error: &PublishError) -> bool {
    match error {
        PublishError::Api(kube::Error::Api(status)) => {
            (400..500).contains(&status.code) && ![408, 409, 429].contains(&status.code)
        }
        PublishError::Api(kube::Error::HyperError(_) | kube::Error::Service(_)) => false,
        _ => true,
    }
}

fn is_already_exists(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.is_already_exists())
}

/// Whether a create that failed with `error` may nonetheless have been stored: `409
/// AlreadyExists` (an earlier attempt under the same name landed), a server error (kube's client
/// retries a 504 that came after the commit, then reports the last answer), or no answer at all.
/// Client errors (400, 403, 422, ...) are refusals.
fn create_in_doubt(error: &kube::Error) -> bool {
    match error {
        kube::Error::Api(status) => status.is_already_exists() || status.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

fn type_name(type_: EventType) -> &'static str {
    match type_ {
        EventType::Normal => "Normal",
        EventType::Warning => "Warning",
    }
}

/// The sweeper's period for a flush interval.
fn sweep_period(flush_interval: Duration) -> Duration {
    (flush_interval / 4).clamp(Duration::from_millis(100), Duration::from_secs(15))
}

impl Inner {
    fn cache(&self) -> MutexGuard<'_, SeriesCache> {
        // Every cache operation leaves the cache consistent before anything that could panic, so
        // a poisoned lock is still safe to use.
        self.cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn observe(&self, event_type: EventType, result: &Result<PublishResult, PublishError>) {
        let result = match result {
            Ok(result) => *result,
            Err(PublishError::Timeout { .. }) => PublishResult::TimedOut,
            Err(_) => PublishResult::Failed,
        };
        self.config.observers.event_published(&PublishRecord {
            controller: self.controller.clone(),
            event_type,
            result,
        });
    }

    async fn publish(
        &self,
        key: &SeriesKey,
        regarding: &ObjectReference,
        related: Option<&ObjectReference>,
    ) -> Result<PublishResult, PublishError> {
        loop {
            let now = self.config.clock.now();
            let series = {
                let mut cache = self.cache();
                let parked = cache.parked_len();
                let series = cache
                    .get_or_insert_with(key, now, |key| Series::new(key, regarding, related, now));
                if cache.parked_len() > parked {
                    self.wake.notify_one();
                }
                series
            };
            let mut state = series.state.lock().await;
            if series.is_retired() {
                // Evicted and written while this publish waited: count into its successor.
                continue;
            }
            let now = self.config.clock.now();
            state.count = state.count.saturating_add(1);
            state.last_observed = now;
            series.set_dirty(true);
            let result = if state.stored == Stored::Yes
                && !state.write_due(now, self.config.flush_interval)
            {
                Ok(PublishResult::Aggregated)
            } else {
                self.write(&series, &mut state)
                    .await
                    .map_err(PublishError::Api)
            };
            if result.as_ref().is_err_and(refused) {
                // The server will not take this occurrence: do not count it. An occurrence whose
                // write failed otherwise (a 5xx, a throttle, a lost answer) stays counted: the
                // series' next write (the sweep, a flush, the next due publish) carries it, so the
                // stored count ends up equal to the publishes once the API recovers.
                state.count -= 1;
            }
            series.set_dirty(state.needs_write());
            if result.is_err() && state.needs_write() {
                self.retry.notify_one();
            }
            if state.count == 0 {
                // A first occurrence that failed: leave no series behind.
                self.cache().discard(&series);
            }
            return result;
        }
    }

    /// Brings the server up to `state`: creates the event, or patches its series, or recreates it
    /// if the server expired it. Call only when `state.needs_write()`.
    ///
    /// Cancellation-safe: `state` records a create before it is sent (as in doubt, under a name
    /// fixed in advance) so that a future dropped mid-request leaves a state the next write
    /// completes; a patch carries the absolute count, so re-sending it is harmless.
    async fn write(
        &self,
        series: &Series,
        state: &mut SeriesState,
    ) -> Result<PublishResult, kube::Error> {
        let api: Api<K8sEvent> = Api::namespaced(self.config.client.clone(), &series.namespace);
        let mut renamed = false;
        loop {
            if let Some(fence) = self.fence.get() {
                fence.check()?;
            }
            if state.stored == Stored::Yes {
                let patch = serde_json::json!({ "series": EventSeries {
                    count: state.count,
                    last_observed_time: MicroTime(state.last_observed),
                }});
                match api
                    .patch(&state.name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    Ok(_) => {
                        state.written = state.count;
                        state.last_write = Some(self.config.clock.now());
                        return Ok(if std::mem::take(&mut state.recreating) {
                            PublishResult::Recreated
                        } else {
                            PublishResult::Flushed
                        });
                    }
                    Err(kube::Error::Api(status)) if status.is_not_found() => {
                        // The server expired the event (events have a TTL, one hour by
                        // default): create it again, carrying the whole count.
                        state.stored = Stored::No;
                        state.written = 0;
                        state.recreating = true;
                        state.name = event_name(series.regarding.name.as_deref());
                    }
                    Err(error) => return Err(error),
                }
            } else {
                let before = state.stored;
                let body = self.event_body(series, state);
                state.stored = Stored::InDoubt;
                let error = match api.create(&PostParams::default(), &body).await {
                    Ok(_) => {
                        state.stored = Stored::Yes;
                        state.written = state.count;
                        state.last_write = Some(self.config.clock.now());
                        return Ok(if std::mem::take(&mut state.recreating) {
                            PublishResult::Recreated
                        } else {
                            PublishResult::Created
                        });
                    }
                    Err(error) => error,
                };
                if !create_in_doubt(&error) {
                    state.stored = before;
                    return Err(error);
                }
                // The create may have landed: an earlier attempt whose answer was lost, or this
                // one (kube's client retries a 504 after the write committed, and the retry meets
                // its own event). The name was fixed before sending: read it back.
                match self.read_back(&api, series, state).await {
                    Ok(ReadBack::Ours) if state.count > state.written => {}
                    Ok(ReadBack::Ours) => {
                        return Ok(if std::mem::take(&mut state.recreating) {
                            PublishResult::Recreated
                        } else {
                            PublishResult::Created
                        });
                    }
                    Ok(ReadBack::Absent) if !is_already_exists(&error) => {
                        // It never landed: nothing is in doubt any more.
                        state.stored = Stored::No;
                        return Err(error);
                    }
                    // `AlreadyExists`, yet nothing under the name: the answers contradict each
                    // other (or the event expired in between). Renaming could make a second
                    // event of one that landed: stay in doubt, and the next write sends the same
                    // create and reads back again.
                    Ok(ReadBack::Absent) => return Err(error),
                    Ok(ReadBack::Someone) if !renamed => {
                        // Someone else's event under our random name: pick another name, once.
                        renamed = true;
                        state.stored = Stored::No;
                        state.name = event_name(series.regarding.name.as_deref());
                    }
                    Ok(ReadBack::Someone) => {
                        state.stored = before;
                        return Err(error);
                    }
                    // Still in doubt: the next write sends the same create and reads back again.
                    Err(_) => return Err(error),
                }
            }
        }
    }

    /// Reads the series' event back after a create whose outcome is unknown. If it is the
    /// series' own (same reporter, regarding object, type, reason, action and note), the series
    /// is stored with the count the server holds.
    async fn read_back(
        &self,
        api: &Api<K8sEvent>,
        series: &Series,
        state: &mut SeriesState,
    ) -> Result<ReadBack, kube::Error> {
        let Some(stored) = api.get_opt(&state.name).await? else {
            return Ok(ReadBack::Absent);
        };
        let expected = self.event_body(series, state);
        let regarding_uid = |e: &K8sEvent| e.regarding.as_ref().and_then(|r| r.uid.clone());
        let ours = stored.type_ == expected.type_
            && stored.reason == expected.reason
            && stored.action == expected.action
            && stored.note == expected.note
            && stored.reporting_controller == expected.reporting_controller
            && stored.reporting_instance == expected.reporting_instance
            && regarding_uid(&stored) == regarding_uid(&expected);
        if !ours {
            return Ok(ReadBack::Someone);
        }
        state.stored = Stored::Yes;
        state.written = stored.series.as_ref().map_or(1, |s| s.count);
        state.last_write = Some(self.config.clock.now());
        Ok(ReadBack::Ours)
    }

    fn event_body(&self, series: &Series, state: &SeriesState) -> K8sEvent {
        let key = &series.key;
        let reporter = &self.config.reporter;
        K8sEvent {
            metadata: ObjectMeta {
                name: Some(state.name.clone()),
                namespace: Some(series.namespace.clone()),
                ..ObjectMeta::default()
            },
            type_: Some(type_name(key.type_).to_owned()),
            reason: Some(key.reason.clone().into_owned()),
            action: Some(key.action.clone().into_owned()),
            note: key.note.clone(),
            event_time: Some(MicroTime(state.first_observed)),
            // A series needs at least two occurrences (apiserver `ValidateEventCreate`).
            series: (state.count >= 2).then_some(EventSeries {
                count: state.count,
                last_observed_time: MicroTime(state.last_observed),
            }),
            regarding: Some(series.regarding.clone()),
            related: series.related.clone(),
            reporting_controller: Some(reporter.controller().to_owned()),
            reporting_instance: Some(reporter.instance().to_owned()),
            ..K8sEvent::default()
        }
    }

    fn forget(&self, uid: &str, failures_only: bool) {
        let mut cache = self.cache();
        let parked = cache.parked_len();
        cache.forget(uid, failures_only);
        if cache.parked_len() > parked {
            self.wake.notify_one();
        }
    }

    /// Writes the counts the server lacks: all of them (`force`, for shutdown) or those whose
    /// flush interval has passed plus the parked ones (a sweep, which first evicts idle series).
    async fn write_all(&self, force: bool) -> Result<(), PublishError> {
        let targets: Vec<(Arc<Series>, bool)> = {
            let mut cache = self.cache();
            if !force {
                let idle = self.config.idle_timeout.max(self.config.flush_interval);
                cache.evict_idle(self.config.clock.now(), idle);
            }
            let live = cache.dirty().into_iter().map(|series| (series, false));
            let parked = cache.parked().into_iter().map(|series| (series, true));
            live.chain(parked).collect()
        };
        let mut writes = futures::stream::iter(targets)
            .map(|(series, parked)| self.write_series(series, parked, force))
            .buffer_unordered(WRITE_CONCURRENCY);
        let mut first_error = None;
        while let Some(result) = writes.next().await {
            match result {
                // The server is hung: stop here rather than wait a timeout per series. Dropping
                // the other writes mid-request is safe (see `write`).
                Err(timeout @ PublishError::Timeout { .. }) => return Err(timeout),
                Err(error) => {
                    first_error.get_or_insert(error);
                }
                Ok(()) => {}
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Writes one series if due (or if `force`d, or if `parked`: an evicted series is written
    /// at once), then retires it if it was parked and is now fully written.
    async fn write_series(
        &self,
        series: Arc<Series>,
        parked: bool,
        force: bool,
    ) -> Result<(), PublishError> {
        let attempt = async {
            let mut state = series.state.lock().await;
            if series.is_retired() {
                return None;
            }
            let now = self.config.clock.now();
            let due = if force || parked {
                state.needs_write()
            } else {
                state.write_due(now, self.config.flush_interval)
            };
            let result = if due {
                Some(self.write(&series, &mut state).await)
            } else {
                None
            };
            series.set_dirty(state.needs_write());
            if parked && !state.needs_write() && self.cache().unpark(&series) {
                series.retire();
            }
            result
        };
        let result = match tokio::time::timeout(self.config.timeout, attempt).await {
            Ok(None) => return Ok(()),
            Ok(Some(result)) => result.map_err(PublishError::Api),
            Err(_elapsed) => Err(PublishError::Timeout {
                after: self.config.timeout,
            }),
        };
        self.observe(series.key.type_, &result);
        result.map(drop)
    }

    /// Starts the background sweep on the first publish (a recorder may be built outside a
    /// runtime). The sweep holds the recorder weakly and ends when the last clone is dropped.
    fn start_sweeper(self: &Arc<Self>) {
        if self.sweeper_started.swap(true, Ordering::AcqRel) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.sweeper_started.store(false, Ordering::Release);
            return;
        };
        let period = sweep_period(self.config.flush_interval);
        runtime.spawn(sweep(
            Arc::downgrade(self),
            self.wake.clone(),
            self.retry.clone(),
            period,
        ));
    }
}

/// The first retry of a failed write, and the bound its backoff doubles up to (unless the sweep
/// period is shorter).
const RETRY_FIRST: Duration = Duration::from_millis(500);

/// Every `period` (or at once when woken), writes what is due; after a failure, retries from
/// [`RETRY_FIRST`] on, doubling up to `period`, so that a count waiting on a failed write (the
/// event of a transition that persisted) reaches the server within moments of the API
/// recovering rather than a whole period later.
async fn sweep(recorder: Weak<Inner>, wake: Arc<Notify>, retry: Arc<Notify>, period: Duration) {
    let first_retry = RETRY_FIRST.min(period);
    let mut next = period;
    loop {
        tokio::select! {
            () = tokio::time::sleep(next) => {}
            () = wake.notified() => {}
            () = retry.notified() => {
                next = next.min(first_retry);
                continue;
            }
        }
        let Some(inner) = recorder.upgrade() else {
            return;
        };
        // Failures are reported to the observers and retried.
        next = match inner.write_all(false).await {
            Ok(()) => period,
            Err(_) if next >= period => first_retry,
            Err(_) => (next * 2).min(period),
        };
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.wake.notify_one();
        let cache = self.cache();
        let unwritten = cache.parked_len() + cache.dirty().len();
        if unwritten > 0 {
            tracing::warn!(
                controller = %self.controller,
                series = unwritten,
                "event recorder dropped with counts not written; call EventRecorder::flush() on shutdown"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_period_is_a_quarter_interval_within_bounds() {
        assert_eq!(
            sweep_period(Duration::from_secs(60)),
            Duration::from_secs(15)
        );
        assert_eq!(
            sweep_period(Duration::from_secs(20)),
            Duration::from_secs(5)
        );
        assert_eq!(
            sweep_period(Duration::from_secs(600)),
            Duration::from_secs(15)
        );
        assert_eq!(sweep_period(Duration::ZERO), Duration::from_millis(100));
    }
}

#[cfg(test)]
mod with_server {
    use super::*;
    use kubeward_testing::ApiServer;

    fn web() -> ObjectReference {
        ObjectReference {
            api_version: Some("demo.kubeward.dev/v1".into()),
            kind: Some("Rollout".into()),
            namespace: Some("default".into()),
            name: Some("web".into()),
            uid: Some("uid-web".into()),
            ..Default::default()
        }
    }

    /// The in-process server drops a request whose client gave up before it is applied, so the
    /// case of a create that was applied but whose answer was lost is set up by hand: the create
    /// is sent here, and the series is left as a publish that timed out mid-request leaves it.
    #[tokio::test]
    async fn a_create_whose_answer_was_lost_is_completed_by_a_patch_not_duplicated() {
        let server = ApiServer::start().await.unwrap();
        let client = server.client().unwrap();
        let reporter = Reporter::new("demo.kubeward.dev/rollouts", "pod-0").unwrap();
        let recorder = EventRecorder::new(client.clone(), reporter);
        let event = Event::warning("FailedDeploy", "Deploy").with_note("image pull failed");
        let regarding = web();
        let now = recorder.inner.config.clock.now();
        let series = recorder.inner.cache().get_or_insert_with(
            &SeriesKey::new(&event, &regarding),
            now,
            |key| Series::new(key, &regarding, None, now),
        );
        let events: Api<K8sEvent> = Api::namespaced(client, "default");
        {
            let mut state = series.state.lock().await;
            state.count = 1;
            events
                .create(
                    &PostParams::default(),
                    &recorder.inner.event_body(&series, &state),
                )
                .await
                .unwrap();
            state.stored = Stored::InDoubt;
            series.set_dirty(true);
        }
        server.request_log().clear();

        recorder.publish(&event, &regarding).await.unwrap();

        let statuses: Vec<_> = server
            .requests()
            .iter()
            .map(|r| (r.method.to_string(), r.status))
            .collect();
        assert_eq!(
            statuses,
            [
                ("POST".to_owned(), 409),
                ("GET".to_owned(), 200),
                ("PATCH".to_owned(), 200)
            ],
            "the create is re-sent under the same name, read back, then the count patched onto it"
        );
        let stored = events.list(&Default::default()).await.unwrap().items;
        assert_eq!(stored.len(), 1);
        assert_eq!(stored[0].series.as_ref().map(|s| s.count), Some(2));
    }
}
