//! The event recorder against the in-process API server: what `kubectl describe` would show.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Event as CoreEvent, Namespace, ObjectReference};
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::api::rbac::v1::PolicyRule;
use kube::api::{Api, ListParams, PostParams};
use kubeward::clock::ManualClock;
use kubeward::events::{Event, EventRecorder, EventType, PublishError, Reporter};
use kubeward::limits::EVENT_NOTE_MAX_BYTES;
use kubeward::observe::{Observers, PassRecord, PublishRecord, PublishResult, ReconcileObserver};
use kubeward_testing::{ApiServer, Fault, FaultAction, Identity};

const CONTROLLER: &str = "demo.kubeward.dev/rollouts";
const NAMESPACE: &str = "demo";

/// A server and a recorder sharing one manual clock; the `demo` namespace exists.
struct Fixture {
    server: ApiServer,
    clock: ManualClock,
    client: kube::Client,
    published: Arc<Published>,
}

impl Fixture {
    async fn start() -> Self {
        Self::start_with(ApiServer::builder()).await
    }

    async fn start_with(builder: kubeward_testing::ApiServerBuilder) -> Self {
        let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
        let server = builder
            .clock(Arc::new(clock.clone()))
            .start()
            .await
            .unwrap();
        let client = server.client().unwrap();
        let mut ns = Namespace::default();
        ns.metadata.name = Some(NAMESPACE.into());
        Api::<Namespace>::all(client.clone())
            .create(&PostParams::default(), &ns)
            .await
            .unwrap();
        server.request_log().clear();
        Self {
            server,
            clock,
            client,
            published: Arc::default(),
        }
    }

    fn recorder(&self) -> EventRecorder {
        self.recorder_for(self.client.clone(), "rollouts-0")
    }

    fn recorder_for(&self, client: kube::Client, instance: &str) -> EventRecorder {
        EventRecorder::new(client, Reporter::new(CONTROLLER, instance).unwrap())
            .with_clock(Arc::new(self.clock.clone()))
            .with_observers(Observers::new(vec![self.published.clone()]))
    }

    /// The events.k8s.io/v1 events stored in `namespace`, oldest first.
    async fn events_in(&self, namespace: &str) -> Vec<K8sEvent> {
        let mut events = Api::<K8sEvent>::namespaced(self.client.clone(), namespace)
            .list(&ListParams::default())
            .await
            .unwrap()
            .items;
        events.sort_by_key(|e| e.metadata.creation_timestamp.clone().map(|t| t.0));
        events
    }

    async fn events(&self) -> Vec<K8sEvent> {
        self.events_in(NAMESPACE).await
    }

    /// Requests to the events API with `method`.
    fn event_writes(&self, method: &str) -> usize {
        self.server
            .requests()
            .iter()
            .filter(|r| r.method.as_str() == method && r.path.contains("/events"))
            .count()
    }
}

/// Counts the publish results reported to observers.
#[derive(Default)]
struct Published(Mutex<Vec<PublishResult>>);

impl Published {
    fn count(&self, result: PublishResult) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|r| **r == result)
            .count()
    }
}

impl ReconcileObserver for Published {
    fn pass_finished(&self, _: &PassRecord) {}
    fn event_published(&self, record: &PublishRecord) {
        assert_eq!(&*record.controller, CONTROLLER);
        self.0.lock().unwrap().push(record.result);
    }
}

fn rollout(name: &str, uid: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("demo.kubeward.dev/v1".into()),
        kind: Some("Rollout".into()),
        namespace: Some(NAMESPACE.into()),
        name: Some(name.into()),
        uid: Some(uid.into()),
        ..Default::default()
    }
}

fn failed(note: &str) -> Event {
    Event::warning("FailedDeploy", "Deploy").with_note(note)
}

fn count(event: &K8sEvent) -> i32 {
    event.series.as_ref().map_or(1, |s| s.count)
}

#[tokio::test]
async fn a_changed_note_after_a_repeat_is_a_new_event_carrying_the_new_note() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder();
    let web = rollout("web", "uid-web");
    recorder
        .publish(&failed("secret db-password not found"), &web)
        .await
        .unwrap();
    recorder
        .publish(&failed("secret db-password not found"), &web)
        .await
        .unwrap();
    fx.clock.advance(Duration::from_secs(1));
    recorder
        .publish(&failed("invalid license key"), &web)
        .await
        .unwrap();
    recorder.flush().await.unwrap();

    let events = fx.events().await;
    assert_eq!(events.len(), 2);
    assert_eq!(
        events[0].note.as_deref(),
        Some("secret db-password not found")
    );
    assert_eq!(count(&events[0]), 2);
    assert_eq!(events[1].note.as_deref(), Some("invalid license key"));
    assert_eq!(count(&events[1]), 1);
    for event in &events {
        assert_eq!(event.reporting_controller.as_deref(), Some(CONTROLLER));
        assert_eq!(event.reporting_instance.as_deref(), Some("rollouts-0"));
        assert_eq!(event.type_.as_deref(), Some("Warning"));
        assert_eq!(
            event.regarding.as_ref().and_then(|r| r.uid.as_deref()),
            Some("uid-web")
        );
    }
}

#[tokio::test]
async fn describe_shows_the_latest_note_and_the_exact_count() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder();
    let web = rollout("web", "uid-web");
    for _ in 0..3 {
        recorder
            .publish(&failed("image pull failed"), &web)
            .await
            .unwrap();
    }
    recorder.flush().await.unwrap();
    // `kubectl describe` reads core/v1 events for the object.
    let core: Vec<CoreEvent> = Api::<CoreEvent>::namespaced(fx.client.clone(), NAMESPACE)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    assert_eq!(core.len(), 1);
    assert_eq!(core[0].message.as_deref(), Some("image pull failed"));
    assert_eq!(core[0].reason.as_deref(), Some("FailedDeploy"));
    assert_eq!(core[0].involved_object.name.as_deref(), Some("web"));
    assert_eq!(core[0].series.as_ref().and_then(|s| s.count), Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_identical_publishes_store_an_exact_count_after_flush() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder();
    let web = rollout("web", "uid-web");
    let publishes = (0..200).map(|_| {
        let recorder = recorder.clone();
        let web = web.clone();
        tokio::spawn(async move { recorder.publish(&failed("image pull failed"), &web).await })
    });
    for result in futures::future::join_all(publishes).await {
        result.unwrap().unwrap();
    }
    assert_eq!(fx.event_writes("POST"), 1, "one event is created");
    assert_eq!(
        fx.event_writes("PATCH"),
        0,
        "repeats wait for the flush interval"
    );
    recorder.flush().await.unwrap();

    let events = fx.events().await;
    assert_eq!(events.len(), 1);
    assert_eq!(count(&events[0]), 200);
    assert_eq!(fx.event_writes("PATCH"), 1);
    assert_eq!(fx.published.count(PublishResult::Created), 1);
    assert_eq!(fx.published.count(PublishResult::Aggregated), 199);
    assert_eq!(fx.published.count(PublishResult::Flushed), 1);
}

#[tokio::test]
async fn repeats_are_written_at_most_once_per_flush_interval() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder().with_flush_interval(Duration::from_secs(60));
    let web = rollout("web", "uid-web");
    recorder.publish(&failed("timeout"), &web).await.unwrap();
    for _ in 0..10 {
        fx.clock.advance(Duration::from_secs(5));
        recorder.publish(&failed("timeout"), &web).await.unwrap();
    }
    assert_eq!(fx.event_writes("PATCH"), 0, "50 s into the interval");
    fx.clock.advance(Duration::from_secs(10));
    recorder.publish(&failed("timeout"), &web).await.unwrap();
    assert_eq!(
        fx.event_writes("PATCH"),
        1,
        "the repeat after the interval writes inline"
    );
    assert_eq!(count(&fx.events().await[0]), 12);
    let series = fx.events().await[0].series.clone().unwrap();
    assert_eq!(series.last_observed_time.0, fx.clock_now());
    assert_eq!(fx.event_writes("POST"), 1);
}

impl Fixture {
    fn clock_now(&self) -> k8s_openapi::jiff::Timestamp {
        use kubeward::clock::Clock;
        self.clock.now()
    }
}

#[tokio::test]
async fn a_series_that_stops_repeating_is_written_once_its_interval_passes() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder().with_flush_interval(Duration::from_secs(60));
    let web = rollout("web", "uid-web");
    for _ in 0..3 {
        recorder.publish(&failed("timeout"), &web).await.unwrap();
    }
    recorder.flush_due().await.unwrap();
    assert_eq!(fx.event_writes("PATCH"), 0, "not due yet");
    fx.clock.advance(Duration::from_secs(60));
    recorder.flush_due().await.unwrap();
    assert_eq!(count(&fx.events().await[0]), 3);
    assert_eq!(fx.event_writes("PATCH"), 1);
    // Idle for less than the idle timeout: kept, so a late repeat still counts into it.
    fx.clock.advance(Duration::from_secs(60));
    recorder.flush_due().await.unwrap();
    assert_eq!(recorder.series_in_memory(), 1);
    // Idle for the whole idle timeout since its last use: evicted, nothing left to write.
    fx.clock.advance(kubeward::events::DEFAULT_IDLE_TIMEOUT);
    recorder.flush_due().await.unwrap();
    assert_eq!(recorder.series_in_memory(), 0);
    assert_eq!(fx.event_writes("PATCH"), 1);
}

#[tokio::test]
async fn a_failure_retried_after_a_long_backoff_still_counts_into_its_event() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder().with_flush_interval(Duration::from_secs(60));
    let web = rollout("web", "uid-web");
    // Retries spaced like the controller's longest backoff (5 min), with sweeps in between.
    for _ in 0..4 {
        recorder.publish(&failed("timeout"), &web).await.unwrap();
        fx.clock.advance(kubeward::controller::BACKOFF_MAX);
        recorder.flush_due().await.unwrap();
    }
    let events = fx.events().await;
    assert_eq!(events.len(), 1, "one event, not one per retry");
    assert_eq!(count(&events[0]), 4);
}

#[tokio::test]
async fn the_background_sweep_writes_a_series_that_stopped_repeating() {
    // Real time here: the sweep runs on the runtime's timer. A short interval makes it run
    // every 100 ms; the test waits (up to 30 s) for the count to appear.
    let fx = Fixture::start().await;
    let recorder = EventRecorder::new(
        fx.client.clone(),
        Reporter::new(CONTROLLER, "pod-0").unwrap(),
    )
    .with_flush_interval(Duration::from_millis(200));
    let web = rollout("web", "uid-web");
    for _ in 0..3 {
        recorder.publish(&failed("timeout"), &web).await.unwrap();
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let events = fx.events().await;
        if events.first().is_some_and(|e| count(e) == 3) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the count was never written: {events:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(fx.event_writes("POST"), 1);
}

/// A create the server failed (500) is retried by the recorder's own sweep within moments, not
/// at its next period (15 s at the default flush interval) nor only at the next publish: the
/// event of a transition that persisted reaches the server as soon as the API recovers, before a
/// lost lease or a shutdown can end the process's chance to send it.
#[tokio::test]
async fn a_failed_create_is_retried_by_the_sweep_long_before_its_period() {
    let fx = Fixture::start().await;
    let recorder = EventRecorder::new(
        fx.client.clone(),
        Reporter::new(CONTROLLER, "pod-0").unwrap(),
    );
    fx.server.faults().add(
        Fault::new(FaultAction::Status(500))
            .method(http::Method::POST)
            .resource("events.k8s.io", "events")
            .times(1),
    );
    let web = rollout("web", "uid-web");
    assert!(recorder.publish(&failed("timeout"), &web).await.is_err());
    // Real time: the first retry comes after 500 ms; the sweep's period is 15 s.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let events = fx.events().await;
        if let Some(event) = events.first() {
            assert_eq!(count(event), 1, "{events:?}");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the failed create was not retried before the sweep's period"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        fx.event_writes("POST"),
        2,
        "the failed create and its retry"
    );
}

#[tokio::test]
async fn a_flush_against_a_hung_server_times_out_and_a_later_flush_writes_the_count() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder().with_timeout(Duration::from_millis(200));
    let web = rollout("web", "uid-web");
    let api = rollout("api", "uid-api");
    for _ in 0..2 {
        recorder.publish(&failed("x"), &web).await.unwrap();
        recorder.publish(&failed("x"), &api).await.unwrap();
    }
    fx.server
        .faults()
        .add(Fault::new(FaultAction::Hang).resource("events.k8s.io", "events"));
    let result = recorder.flush().await;
    assert!(
        matches!(result, Err(PublishError::Timeout { .. })),
        "{result:?}"
    );
    fx.server.faults().clear();
    recorder.flush().await.unwrap();
    let events = fx.events().await;
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| count(e) == 2), "{events:?}");
}

#[tokio::test]
async fn an_expired_series_is_recreated_and_its_count_continues() {
    // An event TTL shorter than the flush interval: the server drops the event while the
    // recorder still counts into it.
    let fx = Fixture::start_with(ApiServer::builder().event_ttl(Duration::from_secs(30))).await;
    let recorder = fx.recorder().with_flush_interval(Duration::from_secs(40));
    let web = rollout("web", "uid-web");
    for _ in 0..3 {
        recorder
            .publish(&failed("quota exceeded"), &web)
            .await
            .unwrap();
    }
    let first = fx.events().await;
    assert_eq!(first.len(), 1);
    fx.clock.advance(Duration::from_secs(35));
    recorder
        .publish(&failed("quota exceeded"), &web)
        .await
        .unwrap();
    fx.clock.advance(Duration::from_secs(35));
    // Due: the patch finds the event expired (404) and creates it again.
    recorder
        .publish(&failed("quota exceeded"), &web)
        .await
        .unwrap();
    recorder.flush().await.unwrap();

    let events = fx.events().await;
    assert_eq!(
        events.len(),
        1,
        "the expired event is gone, one new event stands for the series"
    );
    assert_ne!(events[0].metadata.name, first[0].metadata.name);
    assert_eq!(events[0].note.as_deref(), Some("quota exceeded"));
    assert_eq!(count(&events[0]), 5, "3 + 2 occurrences, none lost");
    assert_eq!(
        events[0].event_time, first[0].event_time,
        "it still starts at the first occurrence"
    );
    assert_eq!(fx.published.count(PublishResult::Recreated), 1);
}

#[tokio::test]
async fn a_hung_events_api_times_out_and_the_next_publish_recovers() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder().with_timeout(Duration::from_millis(200));
    let web = rollout("web", "uid-web");
    fx.server
        .faults()
        .add(Fault::new(FaultAction::Hang).resource("events.k8s.io", "events"));
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        recorder.publish(&failed("image pull failed"), &web),
    )
    .await
    .expect("publish is bounded by the recorder's timeout");
    assert!(
        matches!(result, Err(PublishError::Timeout { after }) if after == Duration::from_millis(200)),
        "{result:?}"
    );
    assert_eq!(fx.published.count(PublishResult::TimedOut), 1);

    fx.server.faults().clear();
    recorder
        .publish(&failed("image pull failed"), &web)
        .await
        .unwrap();
    recorder.flush().await.unwrap();
    let events = fx.events().await;
    assert_eq!(
        events.len(),
        1,
        "the create that timed out is not duplicated"
    );
    assert_eq!(
        count(&events[0]),
        2,
        "the occurrence that timed out is not lost"
    );
}

#[tokio::test]
async fn a_create_that_lands_after_the_timeout_is_not_duplicated() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder().with_timeout(Duration::from_millis(200));
    let web = rollout("web", "uid-web");
    fx.server.faults().add(
        Fault::new(FaultAction::Latency(Duration::from_millis(600)))
            .resource("events.k8s.io", "events")
            .times(1),
    );
    let result = recorder.publish(&failed("image pull failed"), &web).await;
    assert!(
        matches!(result, Err(PublishError::Timeout { .. })),
        "{result:?}"
    );
    // The slow create may land after the publish gave up, or be dropped with the connection (the
    // in-process server does the latter): either way there must be one event counting both.
    tokio::time::sleep(Duration::from_millis(800)).await;
    recorder
        .publish(&failed("image pull failed"), &web)
        .await
        .unwrap();
    recorder.flush().await.unwrap();
    let events = fx.events().await;
    assert_eq!(events.len(), 1);
    assert_eq!(count(&events[0]), 2);
}

#[tokio::test]
async fn forbidden_is_a_typed_error_and_leaves_no_series() {
    let fx = Fixture::start().await;
    let reader = PolicyRule {
        api_groups: Some(vec!["events.k8s.io".into()]),
        resources: Some(vec!["events".into()]),
        verbs: vec!["get".into(), "list".into()],
        ..Default::default()
    };
    let client = fx
        .server
        .client_for(&Identity::with_rules("rollouts", vec![reader]))
        .unwrap();
    let recorder = fx.recorder_for(client, "rollouts-0");
    let web = rollout("web", "uid-web");
    for _ in 0..2 {
        match recorder.publish(&failed("x"), &web).await {
            Err(PublishError::Api(kube::Error::Api(status))) => assert_eq!(status.code, 403),
            other => panic!("expected 403, got {other:?}"),
        }
    }
    assert_eq!(
        recorder.series_in_memory(),
        0,
        "a failed create leaves no half series"
    );
    assert!(fx.events().await.is_empty());
    assert_eq!(fx.published.count(PublishResult::Failed), 2);
}

#[tokio::test]
async fn server_errors_are_typed_and_leave_counts_consistent() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder();
    let web = rollout("web", "uid-web");
    fx.server.faults().add(
        Fault::new(FaultAction::Status(500))
            .resource("events.k8s.io", "events")
            .times(1),
    );
    match recorder.publish(&failed("x"), &web).await {
        Err(PublishError::Api(kube::Error::Api(status))) => assert_eq!(status.code, 500),
        other => panic!("expected 500, got {other:?}"),
    }
    // A server error is not a refusal: the occurrence stays counted, and the next publish
    // creates the event carrying both; the third is counted in memory.
    recorder.publish(&failed("x"), &web).await.unwrap();
    recorder.publish(&failed("x"), &web).await.unwrap();
    assert_eq!(count(&fx.events().await[0]), 2);

    // A failed flush keeps the count for the next flush.
    fx.server.faults().add(
        Fault::new(FaultAction::Status(500))
            .resource("events.k8s.io", "events")
            .times(1),
    );
    assert!(matches!(recorder.flush().await, Err(PublishError::Api(_))));
    assert_eq!(count(&fx.events().await[0]), 2);
    recorder.flush().await.unwrap();
    let events = fx.events().await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        count(&events[0]),
        3,
        "every publish counted once the API recovered"
    );
}

#[tokio::test]
async fn forget_failures_makes_a_recurrence_a_new_event_but_keeps_regular_series() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder();
    let web = rollout("web", "uid-web");
    let failure = failed("image pull failed").as_failure();
    let waiting = Event::normal("WaitingForApproval", "Apply").with_note("approve generation 4");
    recorder.publish(&failure, &web).await.unwrap();
    recorder.publish(&failure, &web).await.unwrap();
    recorder.publish(&waiting, &web).await.unwrap();
    recorder.forget_failures("uid-web"); // a pass succeeded
    recorder.publish(&failure, &web).await.unwrap();
    recorder.publish(&waiting, &web).await.unwrap();
    recorder.flush().await.unwrap();

    let mut counts: Vec<_> = fx
        .events()
        .await
        .iter()
        .map(|e| (e.reason.clone().unwrap(), count(e)))
        .collect();
    counts.sort();
    assert_eq!(
        counts,
        [
            ("FailedDeploy".to_owned(), 1), // the recurrence after the success
            ("FailedDeploy".to_owned(), 2),
            ("WaitingForApproval".to_owned(), 2), // regular events are not reset
        ]
    );
}

#[tokio::test]
async fn forget_drops_every_series_of_a_deleted_object() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder();
    let web = rollout("web", "uid-web");
    let api = rollout("api", "uid-api");
    recorder.publish(&failed("a"), &web).await.unwrap();
    recorder
        .publish(&Event::normal("Applied", "Apply"), &web)
        .await
        .unwrap();
    recorder.publish(&failed("a"), &api).await.unwrap();
    recorder.publish(&failed("a"), &web).await.unwrap();
    recorder.forget("uid-web");
    recorder.flush().await.unwrap();
    assert_eq!(recorder.series_in_memory(), 1, "only api's series is left");
    let web_failures: Vec<_> = fx
        .events()
        .await
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("FailedDeploy"))
        .filter(|e| e.regarding.as_ref().and_then(|r| r.uid.as_deref()) == Some("uid-web"))
        .collect();
    assert_eq!(web_failures.len(), 1);
    assert_eq!(
        count(&web_failures[0]),
        2,
        "the count held in memory was still written"
    );
}

#[tokio::test]
async fn cluster_scoped_objects_get_their_events_in_default() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder();
    let node = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Namespace".into()),
        name: Some(NAMESPACE.into()),
        uid: Some("uid-ns".into()),
        ..Default::default()
    };
    recorder
        .publish(&Event::normal("Labelled", "Label"), &node)
        .await
        .unwrap();
    let events = fx.events_in("default").await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].regarding.as_ref().and_then(|r| r.name.as_deref()),
        Some(NAMESPACE)
    );
}

#[tokio::test]
async fn odd_and_long_regarding_names_yield_valid_event_names() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder();
    for name in [
        "system:controller:Attach_Detach".to_owned(),
        format!("{}.{}", "a".repeat(200), "b".repeat(53)),
    ] {
        recorder
            .publish(&Event::normal("Bound", "Bind"), &rollout(&name, &name))
            .await
            .unwrap();
    }
    let events = fx.events().await;
    assert_eq!(events.len(), 2);
    for event in events {
        let name = event.metadata.name.unwrap();
        assert!(name.len() <= 253, "{name}");
    }
}

#[tokio::test]
async fn two_recorders_publishing_the_same_event_at_the_same_instant_do_not_collide() {
    let fx = Fixture::start().await;
    let web = rollout("web", "uid-web");
    let a = fx.recorder_for(fx.client.clone(), "rollouts-0");
    let b = fx.recorder_for(fx.client.clone(), "rollouts-1");
    let event = Event::normal("Applied", "Apply");
    let (ra, rb) = tokio::join!(a.publish(&event, &web), b.publish(&event, &web));
    ra.unwrap();
    rb.unwrap();
    assert_eq!(fx.events().await.len(), 2);
}

#[tokio::test]
async fn long_notes_are_cut_at_a_char_boundary_with_an_ellipsis() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder();
    let note = "ü".repeat(EVENT_NOTE_MAX_BYTES);
    recorder
        .publish(&failed(&note), &rollout("web", "uid-web"))
        .await
        .unwrap();
    let stored = fx.events().await[0].note.clone().unwrap();
    assert!(stored.len() <= EVENT_NOTE_MAX_BYTES);
    assert!(stored.ends_with('…'));
    assert!(note.starts_with(stored.trim_end_matches('…')));
}

#[tokio::test]
async fn an_invalid_reason_is_rejected_before_any_request() {
    let fx = Fixture::start().await;
    let recorder = fx.recorder();
    let web = rollout("web", "uid-web");
    for event in [
        Event::new(EventType::Normal, "R".repeat(129), "Apply"),
        Event::new(EventType::Normal, "Applied", ""),
    ] {
        let result = recorder.publish(&event, &web).await;
        assert!(
            matches!(result, Err(PublishError::InvalidEvent(_))),
            "{result:?}"
        );
    }
    assert!(fx.server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_thousand_distinct_series_stay_within_the_cap() {
    distinct_series_stay_within_the_cap(20_000, 1_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "100,000 creates take minutes in a debug build; run with --ignored (the unit test \
            of the cache covers 100,000 without a server)"]
async fn one_hundred_thousand_distinct_series_stay_within_the_cap() {
    distinct_series_stay_within_the_cap(100_000, 10_000).await;
}

async fn distinct_series_stay_within_the_cap(series: usize, cap: usize) {
    // The server lets events expire after a second of its clock, which moves a second per
    // publish, so that it does not hold 100,000 events; the recorder's flush interval (its idle
    // window) is an hour, so only its bound evicts series.
    let fx = Fixture::start_with(ApiServer::builder().event_ttl(Duration::from_secs(1))).await;
    let recorder = fx
        .recorder()
        .with_max_series(cap)
        .with_flush_interval(Duration::from_secs(3600));
    let clock = fx.clock.clone();
    let web = rollout("web", "uid-web");
    let tasks = (0..8).map(|worker| {
        let recorder = recorder.clone();
        let web = web.clone();
        let clock = clock.clone();
        tokio::spawn(async move {
            for i in (worker..series).step_by(8) {
                clock.advance(Duration::from_secs(1));
                let event = Event::normal("Progressing", "Apply").with_note(format!("step {i}"));
                recorder.publish(&event, &web).await.unwrap();
                assert!(recorder.series_in_memory() <= 2 * cap);
            }
        })
    });
    for task in futures::future::join_all(tasks).await {
        task.unwrap();
    }
    recorder.flush().await.unwrap();
    assert!(recorder.series_in_memory() <= cap);
    assert_eq!(fx.published.count(PublishResult::Created), series);
}
