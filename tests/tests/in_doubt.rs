//! Writes whose answer was lost are *in doubt*: the API server committed them, then answered 504
//! (which kube's client retries, so the retry meets its own committed twin: `409`) or dropped the
//! connection. kubeward resolves them by reading back, never by assuming the write failed (a
//! duplicate event; a transition event lost for good). Also: stored event counts under a flaky
//! events API equal the publishes once it recovers.

use std::time::Duration;

use http::Method;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as StoredEvent;
use kube::api::{Api, ListParams};
use kubeward::events::{Event, EventRecorder, Reporter};
use kubeward::observe::Outcome;
use kubeward_testing::{Cluster, Fault, FaultAction};
use kubeward_tests::*;

fn web() -> ObjectReference {
    ObjectReference {
        api_version: Some("test.kubeward.dev/v1".into()),
        kind: Some("Widget".into()),
        namespace: Some("default".into()),
        name: Some("web".into()),
        uid: Some("uid-web".into()),
        ..Default::default()
    }
}

/// A recorder whose timeout leaves room for kube's retries (500 ms backoff at least), publishing
/// as the test controller's service account with its generated RBAC.
async fn patient_recorder(server: &Cluster) -> EventRecorder {
    EventRecorder::new(
        operator_client(server, OPERATOR).await,
        Reporter::new(CONTROLLER, "pod-0").expect("valid reporter"),
    )
    .with_timeout(Duration::from_secs(20))
}

/// The test controller's events stored in `default` (on a real control plane its own
/// controllers may report there too).
async fn stored_events(client: &kube::Client) -> Vec<StoredEvent> {
    Api::<StoredEvent>::namespaced(client.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reporting_controller.as_deref() == Some(CONTROLLER))
        .collect()
}

/// Makes the next `times` (all, if `None`) `method` requests to the events API meet `action`.
fn events_fault(server: &Cluster, action: FaultAction, method: Method, times: Option<usize>) {
    let fault = Fault::new(action)
        .method(method)
        .resource("events.k8s.io", "events");
    server.faults().add(match times {
        Some(n) => fault.times(n),
        None => fault,
    });
}

fn count(event: &StoredEvent) -> i32 {
    event.series.as_ref().map_or(1, |s| s.count)
}

fn event_creates(server: &Cluster) -> Vec<u16> {
    server
        .requests()
        .iter()
        .filter(|r| r.method == Method::POST && r.path.contains("/events"))
        .map(|r| r.status)
        .collect()
}

/// The event create commits and the server answers 504; kube's client retries the POST and gets
/// `409 AlreadyExists` for its own event. Reading it back shows the create landed: one event, no
/// rename, no duplicate, and the occurrence counted once.
#[tokio::test]
async fn an_event_create_answered_504_after_commit_is_not_duplicated() {
    let server = Cluster::start().await.unwrap();
    let client = server.client().unwrap();
    let recorder = patient_recorder(&server).await;
    events_fault(
        &server,
        FaultAction::CommitThenStatus(504),
        Method::POST,
        Some(1),
    );
    let event = Event::warning("FailedDeploy", "Deploy").with_note("image pull failed");
    recorder.publish(&event, &web()).await.unwrap();
    assert_eq!(
        event_creates(&server),
        [504, 409],
        "kube's client retried the committed create"
    );
    let events = stored_events(&client).await;
    assert_eq!(
        events.len(),
        1,
        "no duplicate under another name: {events:#?}"
    );
    assert_eq!(count(&events[0]), 1);

    recorder.publish(&event, &web()).await.unwrap();
    recorder.flush().await.unwrap();
    let events = stored_events(&client).await;
    assert_eq!(events.len(), 1);
    assert_eq!(count(&events[0]), 2, "both publishes counted, once each");
}

/// The event create commits and the connection drops: the recorder reads the event back, finds
/// it stored, and a repeat counts into it instead of creating a second event.
#[tokio::test]
async fn an_event_create_whose_connection_dropped_after_commit_is_not_duplicated() {
    let server = Cluster::start().await.unwrap();
    let client = server.client().unwrap();
    let recorder = patient_recorder(&server).await;
    events_fault(
        &server,
        FaultAction::CommitThenCloseConnection,
        Method::POST,
        Some(1),
    );
    let event = Event::warning("FailedDeploy", "Deploy").with_note("image pull failed");
    let first = recorder.publish(&event, &web()).await;
    assert!(first.is_ok(), "the read-back found the event: {first:?}");
    recorder.publish(&event, &web()).await.unwrap();
    recorder.flush().await.unwrap();
    let events = stored_events(&client).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(count(&events[0]), 2);
    assert_eq!(event_creates(&server), [0], "one create, never repeated");
}

/// The event create commits and is answered 504; kube's client retries it into `409
/// AlreadyExists`, and the read-back meets a 404 — answers that contradict each other (the name
/// exists). The create stays in doubt instead of being renamed into a second event, and the next
/// write resolves it: one event, counted once.
#[tokio::test]
async fn an_event_create_whose_read_back_contradicts_already_exists_is_not_duplicated() {
    let server = Cluster::start().await.unwrap();
    let client = server.client().unwrap();
    let recorder = patient_recorder(&server).await;
    events_fault(
        &server,
        FaultAction::CommitThenStatus(504),
        Method::POST,
        Some(1),
    );
    events_fault(&server, FaultAction::Status(404), Method::GET, Some(1));
    let event = Event::warning("FailedDeploy", "Deploy").with_note("image pull failed");
    let _ = recorder.publish(&event, &web()).await;
    recorder.flush().await.unwrap();
    let events = stored_events(&client).await;
    assert_eq!(events.len(), 1, "no second event: {events:#?}");
    assert_eq!(count(&events[0]), 1);
}

/// A create that fails without committing (the connection drops first) is read back, found
/// absent, and kept counted: the next publish creates the one event carrying both occurrences.
#[tokio::test]
async fn an_event_create_that_did_not_commit_is_created_later_with_its_count() {
    let server = Cluster::start().await.unwrap();
    let client = server.client().unwrap();
    let recorder = patient_recorder(&server).await;
    events_fault(&server, FaultAction::CloseConnection, Method::POST, Some(1));
    let event = Event::warning("FailedDeploy", "Deploy").with_note("image pull failed");
    assert!(recorder.publish(&event, &web()).await.is_err());
    let stored = stored_events(&client).await;
    assert!(
        stored.is_empty(),
        "stored after a create that did not commit: {stored:#?}\nrequests: {:#?}",
        server.requests()
    );
    recorder.publish(&event, &web()).await.unwrap();
    let events = stored_events(&client).await;
    assert_eq!(events.len(), 1);
    assert_eq!(count(&events[0]), 2);
}

/// The first publishes meet a failing events API (500, nothing stored); once it recovers, the
/// background sweep creates the event with every occurrence: a transition event is not lost to
/// a brief outage.
#[tokio::test]
async fn a_first_publish_during_an_events_outage_is_created_once_the_api_recovers() {
    let server = Cluster::start().await.unwrap();
    let client = server.client().unwrap();
    let recorder = patient_recorder(&server)
        .await
        .with_flush_interval(Duration::from_millis(400));
    events_fault(&server, FaultAction::Status(500), Method::POST, None);
    let event = Event::normal("Applied", "Apply").with_note("generation 2 applied");
    assert!(recorder.publish(&event, &web()).await.is_err());
    server.faults().clear();
    eventually("the sweep creates the event", || async {
        stored_events(&client).await.len() == 1
    })
    .await;
    recorder.flush().await.unwrap();
    let events = stored_events(&client).await;
    assert_eq!(events.len(), 1);
    assert_eq!(count(&events[0]), 1);
}

/// Repeats written at every publish (flush interval zero) while the events API fails some of the
/// PATCHes: a failed repeat keeps its occurrence, so once the API recovers the stored count is
/// the number of publishes.
#[tokio::test]
async fn stored_counts_equal_publishes_once_a_flaky_events_api_recovers() {
    let server = Cluster::start().await.unwrap();
    let client = server.client().unwrap();
    let recorder = patient_recorder(&server)
        .await
        .with_flush_interval(Duration::ZERO);
    let event = Event::warning("FailedDeploy", "Deploy").with_note("image pull failed");
    recorder.publish(&event, &web()).await.unwrap();
    events_fault(&server, FaultAction::Status(500), Method::PATCH, Some(3));
    let mut failed = 0;
    for _ in 0..5 {
        if recorder.publish(&event, &web()).await.is_err() {
            failed += 1;
        }
    }
    assert_eq!(failed, 3, "three repeats met the failing API");
    recorder.flush().await.unwrap();
    let events = stored_events(&client).await;
    assert_eq!(events.len(), 1);
    assert_eq!(count(&events[0]), 6, "six publishes, six counted");
}

/// The status write commits and the server answers 504; kube's client retries the PATCH, whose
/// resourceVersion is now stale: 409. Reading the object back shows the status persisted, so the
/// transition event is published, once, and the pass is not a conflict.
#[tokio::test]
async fn a_status_write_answered_504_after_commit_publishes_its_transition_once() {
    in_doubt_status_write(FaultAction::CommitThenStatus(504), &[504, 409], &[]).await;
}

/// The status write commits and the connection drops: the same, without a failed pass.
#[tokio::test]
async fn a_status_write_whose_connection_dropped_after_commit_publishes_its_transition_once() {
    in_doubt_status_write(FaultAction::CommitThenCloseConnection, &[0], &[]).await;
}

/// The status write commits and is answered 504 (then 409), and the first read-back is answered
/// 404 although the object exists (the watch never saw it deleted): the 404 is not taken for the
/// object gone, the read is retried, finds the status stored, and the transition is published.
#[tokio::test]
async fn a_read_back_answered_404_for_an_object_the_watch_holds_does_not_lose_the_transition() {
    let spurious_404 = Fault::new(FaultAction::Status(404))
        .method(Method::GET)
        .path_prefix("/apis/test.kubeward.dev/v1/namespaces/default/widgets/w1")
        .times(1);
    in_doubt_status_write(
        FaultAction::CommitThenStatus(504),
        &[504, 409],
        &[spurious_404],
    )
    .await;
}

/// The status write commits and the connection drops, and so does the connection of the
/// read-back's dry run (what the server would make of the write now), once: the dry run is
/// retried like the read, finds the status stored, and the transition is published. (It was not
/// retried: the write was given up as failed and its event lost, a soak violation.)
#[tokio::test]
async fn a_read_back_whose_dry_run_is_dropped_once_does_not_lose_the_transition() {
    let dry_run_dropped = Fault::new(FaultAction::CloseConnection)
        .method(Method::PATCH)
        .path_prefix(&status_path("w1"))
        .times(1);
    in_doubt_status_write(
        FaultAction::CommitThenCloseConnection,
        &[0],
        &[dry_run_dropped],
    )
    .await;
}

/// A status write that committed and lost its answer, whose read-back failed too (every read
/// of the object answered 500): the pass fails, not knowing whether its transition is stored.
/// The retry finds the transition stored — no transition of its own — and reads the earlier
/// write back: stored, so its event is published then, once.
#[tokio::test]
async fn a_committed_write_whose_read_back_failed_publishes_its_transition_at_the_next_pass() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    server.faults().add(
        Fault::new(FaultAction::CommitThenCloseConnection)
            .method(Method::PATCH)
            .path_prefix(&status_path("w1"))
            .times(1),
    );
    // The read-back reads the object up to three times.
    server.faults().add(
        Fault::new(FaultAction::Status(500))
            .method(Method::GET)
            .path_prefix("/apis/test.kubeward.dev/v1/namespaces/default/widgets/w1")
            .times(3),
    );
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out"),
    )
    .await;
    applied_published(&client).await;
    eventually("the retry completes", || async {
        observer.count("w1", Outcome::Completed) >= 2 // init, then the retry of apply
    })
    .await;
    running.stop().await;
    assert_eq!(
        observer.count("w1", Outcome::Failed),
        1,
        "the pass in doubt"
    );
    let stored = widgets(&client).get_status("w1").await.unwrap();
    let conditions = stored.status.expect("status written").conditions;
    assert_eq!(conditions[0].reason, "Applied");
    let events = events_about(&client, "w1").await;
    let applied: Vec<_> = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("Applied"))
        .collect();
    assert_eq!(applied.len(), 1, "{events:#?}");
    assert_eq!(count(applied[0]), 1, "published once");
}

/// Runs the widgets controller; the first status write of `w1` (which sets `Applied`) meets
/// `fault` and is answered `first_answers`; `other_faults` are added too.
async fn in_doubt_status_write(fault: FaultAction, first_answers: &[u16], other_faults: &[Fault]) {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    server.faults().add(
        Fault::new(fault)
            .method(Method::PATCH)
            .path_prefix(&status_path("w1"))
            .times(1),
    );
    // After the write's fault: the first matching fault is the one a request meets.
    for other in other_faults {
        server.faults().add(other.clone());
    }
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out"),
    )
    .await;
    eventually("the transition event", || async {
        !events_about(&client, "w1").await.is_empty()
    })
    .await;
    eventually("the pass ends", || async {
        observer.count("w1", Outcome::Completed) >= 2 // init, apply
    })
    .await;
    running.stop().await;
    assert_eq!(
        status_writes(&server, "w1"),
        first_answers,
        "one status write, in doubt"
    );
    let events = events_about(&client, "w1").await;
    let reasons: Vec<_> = events.iter().map(|e| e.reason.clone()).collect();
    assert_eq!(reasons, [Some("Applied".to_owned())], "{events:#?}");
    assert_eq!(count(&events[0]), 1);
    assert_eq!(observer.count("w1", Outcome::Failed), 0);
    assert_eq!(observer.count("w1", Outcome::Waiting), 0, "not a conflict");
}

/// The controller stops with no grace while its pass is inside a status write that committed and
/// was answered 504 (kube's client sleeping before its retry, which is slow too). The abandoned
/// pass's write persisted, so its transition event is published all the same, once, before the
/// controller returns.
#[tokio::test]
async fn a_pass_abandoned_inside_a_status_write_that_persisted_still_publishes_its_transition() {
    let (server, client) = abandoned_inside_status_write(&[
        FaultAction::CommitThenStatus(504),
        FaultAction::Latency(Duration::from_secs(2)),
    ])
    .await;
    let stored = widgets(&client).get_status("w1").await.unwrap();
    let conditions = stored.status.expect("status written").conditions;
    assert_eq!(
        conditions
            .iter()
            .map(|c| c.reason.as_str())
            .collect::<Vec<_>>(),
        ["Applied"],
        "the write persisted"
    );
    let events = events_about(&client, "w1").await;
    let reasons: Vec<_> = events.iter().map(|e| e.reason.clone()).collect();
    assert_eq!(reasons, [Some("Applied".to_owned())], "{events:#?}");
    assert_eq!(count(&events[0]), 1);
    assert_eq!(
        status_writes(&server, "w1"),
        [504, 409],
        "the retry ran on after the pass was abandoned"
    );
}

/// The same with a status write that never commits (503, then 500 on kube's retry): nothing
/// persisted, so no transition event exists once the controller stopped.
#[tokio::test]
async fn a_pass_abandoned_inside_a_status_write_that_failed_publishes_no_transition() {
    let (server, client) =
        abandoned_inside_status_write(&[FaultAction::Status(503), FaultAction::Status(500)]).await;
    let stored = widgets(&client).get_status("w1").await.unwrap();
    assert!(
        stored.status.is_none_or(|s| s.conditions.is_empty()),
        "nothing persisted"
    );
    assert_eq!(status_writes(&server, "w1"), [503, 500]);
    let events = events_about(&client, "w1").await;
    assert!(
        events
            .iter()
            .all(|e| e.reason.as_deref() != Some("Applied")),
        "{events:#?}"
    );
}

/// Runs the widgets controller with no shutdown grace; the first status writes of `w1` meet
/// `faults`, one each. Stops the controller as soon as the first write was answered, while its
/// pass waits for kube's retry, and returns once it stopped.
async fn abandoned_inside_status_write(faults: &[FaultAction]) -> (Cluster, kube::Client) {
    let (server, client) = server_with_widgets().await;
    for fault in faults {
        server.faults().add(
            Fault::new(fault.clone())
                .method(Method::PATCH)
                .path_prefix(&status_path("w1"))
                .times(1),
        );
    }
    let operator = operator_client(&server, OPERATOR).await;
    let running = Running::start(
        kubeward::controller::Controller::new(Widgets::default(), operator.clone())
            .with_event_recorder(recorder(&operator))
            .with_shutdown_grace(Duration::ZERO),
    );
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out"),
    )
    .await;
    eventually("the first status write was answered", || async {
        !status_writes(&server, "w1").is_empty()
    })
    .await;
    running.stop().await;
    (server, client)
}

/// The lag of a watch shorter than the runtime's wait for its cache to deliver its own write.
const SHORT_LAG: Duration = Duration::from_secs(2);
/// A lag longer than that wait (5 s).
const LONG_LAG: Duration = Duration::from_secs(8);

/// Soak seed 11's double publish. The controller's watch lags: a pass stores a transition, and
/// the requeued pass that follows still finds the old version in the cache. It recomputes the
/// same transition within the same second (a frozen clock), so its write (refused: 409) carries
/// exactly the stored conditions. Taken for an in-doubt write of its own and read back as
/// "stored", it published the transition a second time. A lag the runtime waits out.
#[tokio::test]
async fn a_pass_on_a_lagging_cache_does_not_publish_a_stored_transition_again() {
    let writes = pass_on_a_lagging_cache(SHORT_LAG).await;
    assert_eq!(
        writes,
        [200],
        "the pass waited for its cache: no stale write"
    );
}

/// The same with a lag the runtime does not wait out: the pass runs on the old version, its
/// write is refused, and that is a conflict, not a stored write.
#[tokio::test]
async fn a_pass_on_a_cache_lagging_past_the_wait_does_not_publish_a_stored_transition_again() {
    let writes = pass_on_a_lagging_cache(LONG_LAG).await;
    assert_eq!(writes[0], 200);
    assert!(
        writes.len() >= 2 && writes[1..].iter().all(|s| *s == 409),
        "passes on the replaced version wrote and were refused: {writes:?}"
    );
}

/// Runs the widgets controller (requeue every 50 ms, a frozen clock) over `w1` while its watch
/// delivers events `lag` late, until passes run on the version its status write stored; checks
/// the transition has one event counted once, and returns the status writes' answers.
async fn pass_on_a_lagging_cache(lag: Duration) -> Vec<u16> {
    let (server, client) = server_with_widgets().await;
    // Created with the finalizer (no init pass) before the controller lists it.
    let spec = WidgetSpec {
        requeue_ms: Some(50),
        ..WidgetSpec::ready(Mode::Requeue, "True", "Applied", "rolled out")
    };
    let mut w1 = Widget::new("w1", spec);
    w1.metadata.finalizers = Some(vec![FINALIZER.into()]);
    widgets(&client)
        .create(&Default::default(), &w1)
        .await
        .unwrap();
    server.faults().add(
        Fault::new(FaultAction::DelayWatchEvents(lag))
            .resource("test.kubeward.dev", "widgets")
            .times(1),
    );
    let observer = Recording::new();
    let clock = kubeward::clock::ManualClock::new(jiff::Timestamp::now());
    let operator = operator_client(&server, OPERATOR).await;
    let running = Running::start(
        kubeward::controller::Controller::new(Widgets::default(), operator.clone())
            .with_observer(observer.clone())
            .with_event_recorder(recorder(&operator))
            .with_clock(std::sync::Arc::new(clock))
            .with_shutdown_grace(Duration::from_millis(200)),
    );
    eventually("the transition event", || async {
        !events_about(&client, "w1").await.is_empty()
    })
    .await;
    // Watch events arrive in order: once the controller saw `marker`, its cache holds the
    // version of w1 its write stored, and the second pass of w1 after that runs on it.
    create_widget(&client, "marker", WidgetSpec::default()).await;
    eventually("the lagging watch delivers the marker", || async {
        !observer.passes_of("marker").is_empty()
    })
    .await;
    let seen = observer.passes_of("w1").len();
    eventually("two more passes of w1", || async {
        observer.passes_of("w1").len() >= seen + 2
    })
    .await;
    running.stop().await;
    let events = events_about(&client, "w1").await;
    let reasons: Vec<_> = events.iter().map(|e| e.reason.clone()).collect();
    assert_eq!(reasons, [Some("Applied".to_owned())], "{events:#?}");
    assert_eq!(count(&events[0]), 1, "published once: {events:#?}");
    status_writes(&server, "w1")
}

/// The status write timeout of the hung-write tests: short, so that they run quickly.
const STATUS_TIMEOUT: Duration = Duration::from_secs(1);

/// A status PATCH the server never answers (and never serves) does not wedge the pass: after the
/// status write timeout it is in doubt, read back, found not stored, and the pass fails with a
/// failure event; the retry writes the status and publishes the transition, once.
#[tokio::test]
async fn a_hung_status_write_that_did_not_commit_fails_the_pass_and_is_retried() {
    let (server, client, observer, running) = hung_status_write(FaultAction::Hang).await;
    applied_published(&client).await;
    running.stop().await;
    assert_eq!(status_writes(&server, "w1"), [0, 200], "hung, then retried");
    let events = events_about(&client, "w1").await;
    let failure = events
        .iter()
        .find(|e| e.reason.as_deref() == Some("ReconcileFailed"))
        .unwrap_or_else(|| panic!("a failure event: {events:#?}"));
    assert_eq!(
        failure.note.as_deref(),
        Some("failed to write status: ServiceError: no answer within 1s")
    );
    let applied: Vec<_> = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("Applied"))
        .collect();
    assert_eq!(applied.len(), 1, "{events:#?}");
    assert_eq!(count(applied[0]), 1);
    assert!(observer.count("w1", Outcome::Failed) >= 1);
}

/// A status PATCH that commits and is never answered: after the timeout, the read-back finds it
/// stored, so the pass completes and publishes the transition, once, without a failure.
#[tokio::test]
async fn a_hung_status_write_that_committed_publishes_its_transition_once() {
    let (server, client, observer, running) = hung_status_write(FaultAction::CommitThenHang).await;
    running.stop().await;
    assert_eq!(status_writes(&server, "w1"), [0], "one write, unanswered");
    let events = events_about(&client, "w1").await;
    let reasons: Vec<_> = events.iter().map(|e| e.reason.clone()).collect();
    assert_eq!(reasons, [Some("Applied".to_owned())], "{events:#?}");
    assert_eq!(count(&events[0]), 1);
    assert_eq!(observer.count("w1", Outcome::Failed), 0);
}

/// Runs the widgets controller with a [`STATUS_TIMEOUT`] status write timeout; the first status
/// write of `w1` (which sets `Applied`) meets `fault`. Returns once the pass that made it ended.
async fn hung_status_write(
    fault: FaultAction,
) -> (Cluster, kube::Client, std::sync::Arc<Recording>, Running) {
    let (server, client) = server_with_widgets().await;
    server.faults().add(
        Fault::new(fault)
            .method(Method::PATCH)
            .path_prefix(&status_path("w1"))
            .times(1),
    );
    let observer = Recording::new();
    let operator = operator_client(&server, OPERATOR).await;
    let running = Running::start(
        kubeward::controller::Controller::new(Widgets::default(), operator.clone())
            .with_observer(observer.clone())
            .with_event_recorder(recorder(&operator))
            .with_status_write_timeout(STATUS_TIMEOUT)
            .with_shutdown_grace(Duration::from_millis(200)),
    );
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out"),
    )
    .await;
    eventually("the first status write was sent", || async {
        !status_writes(&server, "w1").is_empty()
    })
    .await;
    // The pass is not wedged: it ends, one way or the other.
    eventually("the apply pass ends", || async {
        observer
            .passes_of("w1")
            .iter()
            .any(|(phase, _)| *phase == kubeward::observe::Phase::Apply)
    })
    .await;
    (server, client, observer, running)
}

/// A finalizer removal answered 404 although the object is there (the watch never saw it
/// deleted) did not land: it is retried, and the object goes. (The 404 was taken for the object
/// gone, and the finalizer never removed: an object left Terminating in the soak.)
#[tokio::test]
async fn a_finalizer_removal_answered_404_for_an_object_the_watch_holds_is_retried() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    create_widget(&client, "w1", WidgetSpec::default()).await;
    let api: Api<Widget> = Api::namespaced(client.clone(), "default");
    eventually("applied", || async {
        observer.count("w1", Outcome::Completed) >= 2 // init, apply
    })
    .await;
    let path = "/apis/test.kubeward.dev/v1/namespaces/default/widgets/w1";
    server.faults().add(
        Fault::new(FaultAction::Status(404))
            .method(Method::PATCH)
            .path_prefix(path)
            .times(1),
    );
    api.delete("w1", &Default::default()).await.unwrap();
    eventually("the object goes", || async {
        matches!(api.get_opt("w1").await, Ok(None))
    })
    .await;
    running.stop().await;
    let patches = patch_statuses(&server, path);
    assert_eq!(
        patches[patches.len() - 2..],
        [404, 200],
        "the removal met the 404, then was retried: {patches:?}"
    );
}

/// A status write answered 404 although the object and its status subresource are there is not
/// taken for a missing status subresource (a dry run of the write is served): the pass fails,
/// is retried, and the transition is published once.
#[tokio::test]
async fn a_spurious_404_on_a_status_write_is_a_failed_write_not_a_missing_subresource() {
    let (server, client) = server_with_widgets().await;
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    server.faults().add(
        Fault::new(FaultAction::Status(404))
            .method(Method::PATCH)
            .path_prefix(&status_path("w1"))
            .times(1),
    );
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out"),
    )
    .await;
    applied_published(&client).await;
    running.stop().await;
    let events = events_about(&client, "w1").await;
    let notes: Vec<&str> = events.iter().filter_map(|e| e.note.as_deref()).collect();
    assert!(
        notes.iter().all(|n| !n.contains("status subresource")),
        "{notes:?}"
    );
    let applied: Vec<_> = events
        .iter()
        .filter(|e| e.reason.as_deref() == Some("Applied"))
        .collect();
    assert_eq!((applied.len(), count(applied[0])), (1, 1));
    assert_eq!(
        observer.count("w1", Outcome::Failed),
        1,
        "the 404'd write failed its pass"
    );
}

/// Waits for `w1`'s `Applied` transition event.
async fn applied_published(client: &kube::Client) {
    eventually("the transition event", || async {
        events_about(client, "w1")
            .await
            .iter()
            .any(|e| e.reason.as_deref() == Some("Applied"))
    })
    .await;
}
