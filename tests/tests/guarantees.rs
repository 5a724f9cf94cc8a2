//! The controller runtime keeps its guarantees under faults and misbehaving reconcilers: the
//! finalizer follows the returned action, one delete runs one cleanup, conflicts back off, backoff
//! state belongs to one object, a panic is a failed pass, one pass's publishing is bounded by one
//! deadline, standbys are ready, and a condition that comes back keeps its transition time.
//!
//! Each test runs the controller on the in-process API server with a reconciler scripted for the
//! case ([`Scripted`]), and asserts what a user observes: the stored object, its events, the
//! server's request log, the recorded passes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::Method;
use k8s_openapi::api::coordination::v1::Lease;
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kubeward::conditions::{ConditionStatus, DesiredCondition};
use kubeward::controller::{Controller, PassError};
use kubeward::events::{Event, EventRecorder, Reporter};
use kubeward::leader::LeaderElection;
use kubeward::observe::{Outcome, Phase};
use kubeward::vocabulary::Vocabulary;
use kubeward::{Action, Pass, Reconciler};
use kubeward_testing::{Cluster, Fault, FaultAction};
use kubeward_tests::*;
use serde_json::json;

/// What a scripted `apply` or `cleanup` does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Script {
    /// `Ok(await_change)`.
    #[default]
    Complete,
    /// Overrides the outcome with `Completed` and requeues (a periodic resync).
    RequeueAsCompleted,
    /// `pass.skip(..)` and `Ok(await_change)`.
    SkipAndComplete,
    /// Sets `Ready` to False `CleaningUp` and completes: a status write.
    WriteStatus,
    /// Sets `Ready` Unknown `Checking`, then the spec's condition, and completes.
    Recheck,
    /// Sets conditions `A`, `B`, `C` to True (reasons `AReady`, ...) and completes: three transitions.
    ThreeTransitions,
    /// Returns an error naming the object's uid.
    Fail,
    /// Returns the error `hooks panic`, on which `failure_event` and `error_backoff` panic.
    FailAndPanicInHooks,
    /// Panics (objects whose name starts with `panic`); completes otherwise.
    PanicByName,
    /// Publishes an event, then removes every finalizer as another actor would (the object goes),
    /// and completes.
    PublishAndForceFinalize,
}

/// The error on which the hooks of [`Scripted`] panic.
const HOOKS_PANIC: &str = "hooks panic";

/// A reconciler of widgets following a [`Script`], recording its calls and the backoff attempts
/// it was asked for. `F` says whether it declares a finalizer.
#[derive(Clone)]
struct Scripted<const F: bool = true> {
    apply: Script,
    cleanup: Script,
    client: kube::Client,
    calls: Arc<Mutex<Vec<(String, Phase)>>>,
    attempts: Arc<Mutex<Vec<(String, u32)>>>,
}

impl Scripted {
    /// A reconciler with a finalizer.
    fn new(client: &kube::Client, apply: Script, cleanup: Script) -> Self {
        Self::build(client, apply, cleanup)
    }
}

impl Scripted<false> {
    /// A reconciler without a finalizer.
    fn without_finalizer(client: &kube::Client, apply: Script, cleanup: Script) -> Self {
        Self::build(client, apply, cleanup)
    }
}

impl<const F: bool> Scripted<F> {
    fn build(client: &kube::Client, apply: Script, cleanup: Script) -> Self {
        Self {
            apply,
            cleanup,
            client: client.clone(),
            calls: Arc::default(),
            attempts: Arc::default(),
        }
    }

    fn calls(&self, name: &str, phase: Phase) -> usize {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .filter(|(n, p)| n == name && *p == phase)
            .count()
    }

    /// The backoff attempts asked for after failures of the object with `uid` (or after
    /// conflicts of a write, `"status conflict"` or `"finalizer conflict"`), in order.
    fn attempts_of(&self, uid: &str) -> Vec<u32> {
        self.attempts
            .lock()
            .unwrap()
            .iter()
            .filter(|(u, _)| u == uid)
            .map(|(_, a)| *a)
            .collect()
    }

    async fn follow(
        &self,
        script: Script,
        widget: &Widget,
        pass: &mut Pass<Widget>,
    ) -> Result<Action, WidgetError> {
        self.calls
            .lock()
            .unwrap()
            .push((widget.name_any(), pass.phase()));
        let condition = |type_: &str, status, reason: &str| {
            DesiredCondition::new(type_, status, reason, "").map_err(|e| WidgetError(e.to_string()))
        };
        match script {
            Script::Complete => {}
            Script::RequeueAsCompleted => {
                pass.set_outcome(Outcome::Completed);
                return Ok(Action::requeue(Duration::from_millis(20)));
            }
            Script::SkipAndComplete => pass.skip("nothing to release"),
            Script::WriteStatus => {
                pass.set(condition("Ready", ConditionStatus::False, "CleaningUp")?);
            }
            Script::Recheck => {
                if let Some(wanted) = &widget.spec.condition {
                    pass.set(
                        DesiredCondition::new(
                            "Ready",
                            ConditionStatus::Unknown,
                            "Checking",
                            "re-checking",
                        )
                        .map_err(|e| WidgetError(e.to_string()))?,
                    );
                    let status = wanted
                        .status
                        .parse()
                        .map_err(|_| WidgetError("status".into()))?;
                    pass.set(
                        DesiredCondition::new(
                            "Ready",
                            status,
                            wanted.reason.clone(),
                            wanted.message.clone(),
                        )
                        .map_err(|e| WidgetError(e.to_string()))?,
                    );
                }
            }
            Script::ThreeTransitions => {
                // Three reasons, so three series that publish independently.
                for (type_, reason) in [("A", "AReady"), ("B", "BReady"), ("C", "CReady")] {
                    pass.set(condition(type_, ConditionStatus::True, reason)?);
                }
            }
            Script::Fail => {
                return Err(WidgetError(widget.uid().unwrap_or_default()));
            }
            Script::FailAndPanicInHooks => return Err(WidgetError(HOOKS_PANIC.into())),
            Script::PanicByName => {
                if widget.name_any().starts_with("panic") {
                    panic!("index out of range in {}", widget.name_any());
                }
            }
            Script::PublishAndForceFinalize => {
                pass.publish_event(&Event::normal("CleaningUp", "Cleanup"))
                    .await
                    .map_err(|e| WidgetError(e.to_string()))?;
                let patch = json!({"metadata": {"finalizers": null}});
                widgets(&self.client)
                    .patch(
                        &widget.name_any(),
                        &PatchParams::default(),
                        &Patch::Merge(&patch),
                    )
                    .await
                    .map_err(|e| WidgetError(e.to_string()))?;
            }
        }
        Ok(Action::await_change())
    }
}

impl<const F: bool> Reconciler for Scripted<F> {
    type Resource = Widget;
    type Error = WidgetError;
    const NAME: Option<&'static str> = Some(CONTROLLER);
    const FINALIZER: Option<&'static str> = if F { Some(FINALIZER) } else { None };
    const CONDITIONS: &'static [&'static Vocabulary] = &[&READY];

    async fn apply(&self, widget: &Widget, pass: &mut Pass<Widget>) -> Result<Action, WidgetError> {
        self.follow(self.apply, widget, pass).await
    }

    async fn cleanup(
        &self,
        widget: &Widget,
        pass: &mut Pass<Widget>,
    ) -> Result<Action, WidgetError> {
        self.follow(self.cleanup, widget, pass).await
    }

    /// Panics for objects whose name starts with `unsure` (a reconciler bug met at scrape time).
    fn is_suspended(widget: &Widget) -> bool {
        assert!(!widget.name_any().starts_with("unsure"), "is_suspended bug");
        false
    }

    fn failure_event(&self, error: &PassError<WidgetError>, phase: Phase) -> Option<Event> {
        assert!(
            !error.to_string().contains(HOOKS_PANIC),
            "failure_event hook bug"
        );
        Some(kubeward::controller::default_failure_event(error, phase))
    }

    fn error_backoff(&self, error: &PassError<WidgetError>, attempt: u32) -> Duration {
        assert!(
            !error.to_string().contains(HOOKS_PANIC),
            "error_backoff hook bug"
        );
        match error {
            PassError::Conflict { write } => {
                let key = format!("{write} conflict");
                self.attempts.lock().unwrap().push((key, attempt));
            }
            _ => {
                if let Some(WidgetError(uid)) = error.reconcile_error() {
                    self.attempts.lock().unwrap().push((uid.clone(), attempt));
                }
            }
        }
        Duration::from_millis(20)
    }
}

fn start<const F: bool>(
    client: &kube::Client,
    reconciler: &Scripted<F>,
    observer: &Arc<Recording>,
    recorder: EventRecorder,
) -> Running {
    Running::start(
        Controller::new(reconciler.clone(), client.clone())
            .with_observer(observer.clone())
            .with_event_recorder(recorder)
            .with_shutdown_grace(Duration::from_millis(200)),
    )
}

async fn delete_widget(client: &kube::Client, name: &str) {
    widgets(client)
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

async fn wait_gone(client: &kube::Client, name: &str) {
    eventually("the widget is gone", || async {
        widgets(client).get_opt(name).await.unwrap().is_none()
    })
    .await;
}

/// The HTTP statuses of the PATCHes of the widget `name` itself (its finalizer writes).
fn finalizer_writes(server: &Cluster, name: &str) -> Vec<u16> {
    patch_statuses(
        server,
        &format!("/apis/test.kubeward.dev/v1/namespaces/default/widgets/{name}"),
    )
}

/// A controller whose `cleanup` follows a script, and its widget `w1`, applied, then deleted.
/// Keep `server` bound: dropping it stops the API server.
struct Deleted {
    server: Cluster,
    client: kube::Client,
    reconciler: Scripted,
    observer: Arc<Recording>,
    recorder: EventRecorder,
    running: Running,
}

impl Deleted {
    /// Starts the controller, creates `w1`, waits for its apply, and deletes it.
    async fn start(cleanup: Script) -> Self {
        let (server, client) = server_with_widgets().await;
        let reconciler = Scripted::new(&client, Script::Complete, cleanup);
        let observer = Recording::new();
        let recorder = recorder(&client);
        let running = start(&client, &reconciler, &observer, recorder.clone());
        create_widget(&client, "w1", WidgetSpec::default()).await;
        eventually("apply", || async {
            reconciler.calls("w1", Phase::Apply) == 1
        })
        .await;
        delete_widget(&client, "w1").await;
        Self {
            server,
            client,
            reconciler,
            observer,
            recorder,
            running,
        }
    }
}

/// Item 2: a cleanup that overrides its outcome to `Completed` but requeues is not finished: the
/// finalizer stays and cleanup is called again.
#[tokio::test]
async fn a_requeuing_cleanup_that_says_completed_keeps_the_finalizer() {
    let Deleted {
        server: _server, // bound: dropping it stops the API server
        client,
        reconciler,
        observer,
        running,
        ..
    } = Deleted::start(Script::RequeueAsCompleted).await;
    eventually("three cleanups", || async {
        reconciler.calls("w1", Phase::Cleanup) >= 3
    })
    .await;
    running.stop().await;
    let stored = widgets(&client).get("w1").await.unwrap();
    assert_eq!(stored.metadata.finalizers, Some(vec![FINALIZER.to_owned()]));
    assert!(
        !observer
            .passes_of("w1")
            .iter()
            .any(|(p, _)| *p == Phase::Delete),
        "{:?}",
        observer.passes_of("w1")
    );
}

/// Item 2: a cleanup that skips and returns `await_change` is finished: the finalizer goes with
/// the object, and the cleanup pass is recorded as skipped.
#[tokio::test]
async fn a_skipping_cleanup_that_awaits_change_lets_the_object_go() {
    let Deleted {
        server: _server, // bound: dropping it stops the API server
        client,
        observer,
        running,
        ..
    } = Deleted::start(Script::SkipAndComplete).await;
    wait_gone(&client, "w1").await;
    eventually("the delete pass", || async {
        observer.passes_of("w1").len() == 4
    })
    .await;
    running.stop().await;
    assert_eq!(
        observer.passes_of("w1"),
        [
            (Phase::Init, Outcome::Completed),
            (Phase::Apply, Outcome::Completed),
            (Phase::Cleanup, Outcome::Skipped),
            (Phase::Delete, Outcome::Completed),
        ]
    );
}

/// Item 3: a cleanup that writes a status runs once: the finalizer removal builds on the status
/// write instead of conflicting with it.
#[tokio::test]
async fn one_delete_runs_one_cleanup_even_when_cleanup_writes_status() {
    let Deleted {
        server,
        client,
        reconciler,
        observer,
        running,
        ..
    } = Deleted::start(Script::WriteStatus).await;
    wait_gone(&client, "w1").await;
    eventually("the delete pass", || async {
        observer
            .passes_of("w1")
            .contains(&(Phase::Delete, Outcome::Completed))
    })
    .await;
    // Give a second cleanup every chance to show up: another widget's whole life after it.
    create_widget(&client, "w2", WidgetSpec::default()).await;
    delete_widget(&client, "w2").await;
    wait_gone(&client, "w2").await;
    running.stop().await;
    assert_eq!(
        reconciler.calls("w1", Phase::Cleanup),
        1,
        "one delete, one cleanup"
    );
    assert_eq!(
        status_writes(&server, "w1"),
        [200],
        "the cleanup's status write"
    );
    assert_eq!(
        finalizer_writes(&server, "w1"),
        [200, 200],
        "finalizer added, then removed without a conflict"
    );
    let events = events_about(&client, "w1").await;
    let reasons: Vec<_> = events.iter().filter_map(|e| e.reason.as_deref()).collect();
    assert_eq!(reasons, ["CleaningUp"], "one transition event: {events:#?}");
}

/// The write timeout of the hung finalizer patch tests: short, so that they run quickly.
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// A finalizer removal the server never answers (and never serves) does not wedge the delete:
/// after the write timeout it is in doubt, read back, found not stored (the finalizer is still
/// there), and the pass fails; the retry removes the finalizer without running cleanup again.
#[tokio::test]
async fn a_hung_finalizer_removal_that_did_not_commit_is_retried_and_cleanup_runs_once() {
    let (server, client, reconciler, observer, running) =
        hung_finalizer_removal(FaultAction::Hang).await;
    wait_gone(&client, "w1").await;
    eventually("the completed delete pass", || async {
        observer
            .passes_of("w1")
            .contains(&(Phase::Delete, Outcome::Completed))
    })
    .await;
    running.stop().await;
    assert_eq!(
        finalizer_writes(&server, "w1"),
        [200, 0, 200],
        "added; removal unanswered, then retried"
    );
    assert_eq!(
        reconciler.calls("w1", Phase::Cleanup),
        1,
        "one delete, one cleanup"
    );
    assert_eq!(
        observer.passes_of("w1")[2..],
        [
            (Phase::Cleanup, Outcome::Completed),
            (Phase::Delete, Outcome::Failed),
            (Phase::Delete, Outcome::Completed),
        ]
    );
    let events = events_about(&client, "w1").await;
    let failure = events
        .iter()
        .find(|e| e.reason.as_deref() == Some("CleanupFailed"))
        .unwrap_or_else(|| panic!("a failure event: {events:#?}"));
    assert_eq!(
        failure.note.as_deref(),
        Some(
            "failed to remove finalizer \"test.kubeward.dev/cleanup\": ServiceError: no answer within 1s"
        )
    );
}

/// A finalizer removal that commits (the object goes) and is never answered: after the write
/// timeout, the read-back finds the object gone, so the delete pass completes without a failure
/// and without a second cleanup.
#[tokio::test]
async fn a_hung_finalizer_removal_that_committed_completes_without_a_second_cleanup() {
    let (server, client, reconciler, observer, running) =
        hung_finalizer_removal(FaultAction::CommitThenHang).await;
    wait_gone(&client, "w1").await;
    eventually("the delete pass", || async {
        observer.passes_of("w1").len() == 4
    })
    .await;
    // Give a second cleanup every chance to show up: another widget's whole life after it.
    create_widget(&client, "w2", WidgetSpec::default()).await;
    delete_widget(&client, "w2").await;
    wait_gone(&client, "w2").await;
    running.stop().await;
    assert_eq!(
        finalizer_writes(&server, "w1"),
        [200, 0],
        "added; removed, unanswered"
    );
    assert_eq!(
        reconciler.calls("w1", Phase::Cleanup),
        1,
        "one delete, one cleanup"
    );
    assert_eq!(
        observer.passes_of("w1")[2..],
        [
            (Phase::Cleanup, Outcome::Completed),
            (Phase::Delete, Outcome::Completed),
        ]
    );
    assert_eq!(events_about(&client, "w1").await, []);
}

/// Runs the scripted controller with a [`WRITE_TIMEOUT`] write timeout, creates `w1`, and once it
/// is applied, deletes it with its finalizer removal (the next PATCH of `w1`) meeting `fault`.
async fn hung_finalizer_removal(
    fault: FaultAction,
) -> (Cluster, kube::Client, Scripted, Arc<Recording>, Running) {
    let (server, client) = server_with_widgets().await;
    let reconciler = Scripted::new(&client, Script::Complete, Script::Complete);
    let observer = Recording::new();
    let running = Running::start(
        Controller::new(reconciler.clone(), client.clone())
            .with_observer(observer.clone())
            .with_event_recorder(recorder(&client))
            .with_status_write_timeout(WRITE_TIMEOUT)
            .with_shutdown_grace(Duration::from_millis(200)),
    );
    create_widget(&client, "w1", WidgetSpec::default()).await;
    eventually("apply", || async {
        observer
            .passes_of("w1")
            .contains(&(Phase::Apply, Outcome::Completed))
    })
    .await;
    server.faults().add(
        Fault::new(fault)
            .method(Method::PATCH)
            .path_prefix("/apis/test.kubeward.dev/v1/namespaces/default/widgets/w1")
            .times(1),
    );
    delete_widget(&client, "w1").await;
    (server, client, reconciler, observer, running)
}

/// Item 5: under a persistent 409 on status writes, the object is retried with a growing
/// per-object backoff, not at a fixed 5 requests a second; conflicts are waiting passes that
/// publish nothing.
#[tokio::test]
async fn persistent_status_conflicts_back_off() {
    conflicts_back_off(&status_path("w1"), Phase::Apply).await;
}

/// Item 5: the same for the finalizer patch (here: adding it, so the init pass conflicts).
#[tokio::test]
async fn persistent_finalizer_conflicts_back_off() {
    let widget = "/apis/test.kubeward.dev/v1/namespaces/default/widgets/w1";
    conflicts_back_off(widget, Phase::Init).await;
}

/// Runs the widget controller over `w1` while every PATCH of `path` answers 409, and checks that
/// the `phase` passes retry with backoff: at most 5 PATCHes in the 4 s after the first.
async fn conflicts_back_off(path: &str, phase: Phase) {
    let (server, client) = server_with_widgets().await;
    server.faults().add(
        Fault::new(FaultAction::Status(409))
            .method(Method::PATCH)
            .path_prefix(path),
    );
    let observer = Recording::new();
    let running = start_widgets(&server, &Widgets::default(), &observer).await;
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "done"),
    )
    .await;
    eventually("the first conflicted write", || async {
        !patch_statuses(&server, path).is_empty()
    })
    .await;
    let window = Duration::from_secs(4);
    tokio::time::sleep(window).await;
    let writes = patch_statuses(&server, path);
    let requests = server
        .requests()
        .iter()
        .filter(|r| r.path.contains("/widgets/w1") && !r.is_watch())
        .count();
    running.stop().await;
    let retries = writes.len() - 1;
    eprintln!(
        "persistent 409 on {phase}: {retries} retried writes in the {window:?} after the first \
         ({:.2} writes/s); {requests} requests about w1 in all, reads included",
        retries as f64 / window.as_secs_f64()
    );
    assert!(writes.iter().all(|s| *s == 409), "{writes:?}");
    // Backoff 0.5 s doubling with jitter in the upper half: retries at >= 0.25, 0.75, 1.75 and
    // 3.75 s, so at most 5 writes fit in the window (a slow machine only makes fewer). A fixed
    // 200 ms requeue made 20.
    assert!(writes.len() <= 5, "{} writes in {window:?}", writes.len());
    let passes = observer.passes_of("w1");
    let conflicted: Vec<_> = passes.iter().filter(|(p, _)| *p == phase).collect();
    assert!(
        !conflicted.is_empty() && conflicted.iter().all(|(_, o)| *o == Outcome::Waiting),
        "{passes:?}"
    );
    assert!(events_about(&client, "w1").await.is_empty());
}

/// Item 5: a custom `error_backoff` decides the retries after conflicts too: it is told which
/// write conflicted ([`PassError::Conflict`]) and the attempt, counted per object and reset by a
/// success. (Its 20 ms delays let the retries come quickly; the default backoff would space four
/// attempts over seconds.)
#[tokio::test]
async fn conflicts_are_retried_after_the_error_backoff_hook() {
    let (server, client) = server_with_widgets().await;
    let widget = "/apis/test.kubeward.dev/v1/namespaces/default/widgets/w1";
    server.faults().add(
        Fault::new(FaultAction::Status(409))
            .method(Method::PATCH)
            .path_prefix(widget)
            .times(3),
    );
    // Then every status write (the prefix above matches it too, but is spent by the init pass).
    server.faults().add(
        Fault::new(FaultAction::Status(409))
            .method(Method::PATCH)
            .path_prefix(&status_path("w1")),
    );
    let reconciler = Scripted::new(&client, Script::WriteStatus, Script::Complete);
    let observer = Recording::new();
    let running = start(&client, &reconciler, &observer, recorder(&client));
    create_widget(&client, "w1", WidgetSpec::default()).await;
    eventually("four retries after status conflicts", || async {
        reconciler.attempts_of("status conflict").len() >= 4
    })
    .await;
    running.stop().await;
    assert_eq!(
        reconciler.attempts_of("finalizer conflict"),
        [1, 2, 3],
        "the init pass's three conflicts"
    );
    assert_eq!(
        reconciler.attempts_of("status conflict")[..4],
        [1, 2, 3, 4],
        "counted afresh after the init pass succeeded"
    );
    assert_eq!(finalizer_writes(&server, "w1"), [409, 409, 409, 200]);
    assert!(status_writes(&server, "w1").iter().all(|s| *s == 409));
    assert!(
        events_about(&client, "w1").await.is_empty(),
        "conflicts publish nothing"
    );
}

/// Item 8: backoff state belongs to one object (its uid): a new object of the same name starts
/// from the first attempt.
#[tokio::test]
async fn a_new_object_of_a_deleted_ones_name_does_not_inherit_its_backoff() {
    let (_server, client) = server_with_widgets().await;
    let reconciler = Scripted::without_finalizer(&client, Script::Fail, Script::Complete);
    let observer = Recording::new();
    let running = start(&client, &reconciler, &observer, recorder(&client));
    let first = create_widget(&client, "w1", WidgetSpec::default()).await;
    let first_uid = first.uid().unwrap();
    eventually("three failures", || async {
        reconciler.attempts_of(&first_uid).len() >= 3
    })
    .await;
    assert_eq!(reconciler.attempts_of(&first_uid)[..3], [1, 2, 3]);
    delete_widget(&client, "w1").await;
    wait_gone(&client, "w1").await;
    let second = create_widget(&client, "w1", WidgetSpec::default()).await;
    let second_uid = second.uid().unwrap();
    eventually("a failure of the new object", || async {
        !reconciler.attempts_of(&second_uid).is_empty()
    })
    .await;
    running.stop().await;
    assert_eq!(reconciler.attempts_of(&second_uid)[0], 1);
}

/// Item 9: a panicking pass is a failed pass with a failure event and a backoff; the controller
/// keeps reconciling other objects.
#[tokio::test]
async fn a_panicking_pass_is_a_failed_pass_and_the_controller_goes_on() {
    let (_server, client) = server_with_widgets().await;
    let reconciler = Scripted::new(&client, Script::PanicByName, Script::Complete);
    let observer = Recording::new();
    let running = start(&client, &reconciler, &observer, recorder(&client));
    create_widget(&client, "panic-1", WidgetSpec::default()).await;
    eventually("two failed passes", || async {
        observer.count("panic-1", Outcome::Failed) >= 2
    })
    .await;
    create_widget(&client, "w1", WidgetSpec::default()).await;
    eventually("another object is reconciled", || async {
        observer
            .passes_of("w1")
            .contains(&(Phase::Apply, Outcome::Completed))
    })
    .await;
    running.stop().await; // returns: the controller did not go down
    let events = events_about(&client, "panic-1").await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0].type_.as_deref(), Some("Warning"));
    assert_eq!(events[0].reason.as_deref(), Some("ReconcileFailed"));
    assert_eq!(
        events[0].note.as_deref(),
        Some("reconciler panicked: index out of range in panic-1")
    );
}

/// Item 9: a panic in the `failure_event` or `error_backoff` hook falls back to the default event
/// and backoff; the controller goes on.
#[tokio::test]
async fn a_panicking_hook_falls_back_to_the_default() {
    let (_server, client) = server_with_widgets().await;
    let reconciler = Scripted::new(&client, Script::FailAndPanicInHooks, Script::Complete);
    let observer = Recording::new();
    let running = start(&client, &reconciler, &observer, recorder(&client));
    create_widget(&client, "w1", WidgetSpec::default()).await;
    eventually("two failed passes", || async {
        observer.count("w1", Outcome::Failed) >= 2
    })
    .await;
    running.stop().await;
    let events = events_about(&client, "w1").await;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0].reason.as_deref(), Some("ReconcileFailed"));
    assert_eq!(events[0].note.as_deref(), Some(HOOKS_PANIC));
}

/// Item 9: a panic in the `is_suspended` hook, which runs at scrape time, does not fail the
/// scrape: that object is exported as not suspended, and every other series as usual.
#[tokio::test]
async fn a_panicking_is_suspended_hook_does_not_fail_the_scrape() {
    let (_server, client) = server_with_widgets().await;
    let reconciler = Scripted::new(&client, Script::Complete, Script::Complete);
    let controller = Controller::new(reconciler, client.clone())
        .with_event_recorder(recorder(&client))
        .with_shutdown_grace(Duration::from_millis(200));
    let registry = object_metrics_registry(&controller);
    let running = Running::start(controller);
    create_widget(&client, "w1", WidgetSpec::default()).await;
    create_widget(&client, "unsure-1", WidgetSpec::default()).await;
    let suspended = |name: &str| {
        format!(
            r#"kubeward_object_suspended{{controller="{CONTROLLER}",name="{name}",namespace="default"}} 0"#
        )
    };
    eventually("both objects in a scrape", || async {
        let text = scrape(&registry);
        text.contains(&suspended("w1")) && text.contains(&suspended("unsure-1"))
    })
    .await;
    let text = scrape(&registry);
    running.stop().await;
    assert!(
        text.contains(&format!(
            r#"kubeward_object_generation{{controller="{CONTROLLER}",name="unsure-1",namespace="default"}} 1"#
        )),
        "{text}"
    );
}

/// Item 10: one pass's events are published together, under one deadline: while one publish
/// hangs, the pass's other transitions are published.
#[tokio::test]
async fn a_hung_publish_does_not_hold_up_the_passes_other_events() {
    let (server, client) = server_with_widgets().await;
    server.faults().add(
        Fault::new(FaultAction::Hang)
            .method(Method::POST)
            .resource("events.k8s.io", "events")
            .times(1),
    );
    let reconciler = Scripted::new(&client, Script::ThreeTransitions, Script::Complete);
    let observer = Recording::new();
    // A timeout longer than `eventually` waits: one publish after another could not pass.
    let recorder = EventRecorder::new(
        client.clone(),
        Reporter::new(CONTROLLER, "test-pod").unwrap(),
    )
    .with_timeout(Duration::from_secs(60));
    let running = start(&client, &reconciler, &observer, recorder);
    create_widget(&client, "w1", WidgetSpec::default()).await;
    eventually("two of three transition events", || async {
        events_about(&client, "w1").await.len() == 2
    })
    .await;
    let hanging = server
        .requests()
        .iter()
        .filter(|r| r.method == Method::POST && r.path.contains("/events") && r.status == 0)
        .count();
    assert_eq!(hanging, 1, "the third publish is still hanging");
    running.kill();
}

/// Item 10: a delete pass that finds the object already gone (404) is completed, and the object's
/// event series are forgotten.
#[tokio::test]
async fn a_delete_pass_finding_the_object_gone_completes_and_forgets_its_series() {
    let Deleted {
        server: _server, // bound: dropping it stops the API server
        client,
        observer,
        recorder,
        running,
        ..
    } = Deleted::start(Script::PublishAndForceFinalize).await;
    wait_gone(&client, "w1").await;
    eventually("the delete pass", || async {
        observer.passes_of("w1").len() == 4
    })
    .await;
    eventually("no series left", || async {
        recorder.series_in_memory() == 0
    })
    .await;
    running.stop().await;
    assert_eq!(
        observer.passes_of("w1")[2..],
        [
            (Phase::Cleanup, Outcome::Completed),
            (Phase::Delete, Outcome::Completed),
        ]
    );
    assert_eq!(events_about(&client, "w1").await.len(), 1);
}

/// Item 11: a pass that moves a condition away and back (Unknown, then True with a new message)
/// keeps the stored lastTransitionTime: the condition never left True as far as anyone saw.
#[tokio::test]
async fn a_condition_moved_away_and_back_in_one_pass_keeps_its_transition_time() {
    let (server, client) = server_with_widgets().await;
    let reconciler = Scripted::new(&client, Script::Recheck, Script::Complete);
    let observer = Recording::new();
    let running = start(&client, &reconciler, &observer, recorder(&client));
    create_widget(&client, "w1", WidgetSpec::default()).await;
    eventually("apply", || async {
        reconciler.calls("w1", Phase::Apply) == 1
    })
    .await;
    write_conditions(
        &client,
        "w1",
        json!([{"type": "Ready", "status": "True", "reason": "Applied", "message": "v1",
                "lastTransitionTime": "2020-01-01T00:00:00Z", "observedGeneration": 1}]),
    )
    .await;
    set_spec(
        &client,
        "w1",
        &WidgetSpec::ready(Mode::Complete, "True", "Applied", "v2"),
    )
    .await;
    eventually("the new message is stored", || async {
        let stored = widgets(&client).get("w1").await.unwrap();
        stored
            .status
            .is_some_and(|s| s.conditions.iter().any(|c| c.message == "v2"))
    })
    .await;
    running.stop().await;
    let stored = widgets(&client).get("w1").await.unwrap();
    let ready = &stored.status.unwrap().conditions[0];
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Applied")
    );
    assert_eq!(
        ready.last_transition_time.0.to_string(),
        "2020-01-01T00:00:00Z"
    );
    assert_eq!(ready.observed_generation, Some(2));
    assert!(
        events_about(&client, "w1").await.is_empty(),
        "no transition"
    );
    assert_eq!(
        status_writes(&server, "w1").len(),
        2,
        "the test's write and the pass's"
    );
}

/// Item 4: a standby replica (waiting for the lease) is ready; readiness is about the process,
/// not leadership.
#[tokio::test]
async fn a_standby_waiting_for_the_lease_is_ready() {
    let (_server, client) = server_with_widgets().await;
    let replica = |identity: &str| {
        let election = LeaderElection::new(client.clone(), "default", "widgets", identity)
            .with_timings(
                Duration::from_secs(3),
                Duration::from_secs(2),
                Duration::from_millis(250),
            );
        let controller = Controller::new(Widgets::default(), client.clone())
            .with_leader_election(election)
            .with_shutdown_grace(Duration::from_millis(100));
        let ready = controller.readiness();
        (Running::start(controller), ready)
    };
    let holder = || async {
        Api::<Lease>::namespaced(client.clone(), "default")
            .get_opt("widgets")
            .await
            .unwrap()
            .and_then(|lease| lease.spec?.holder_identity)
    };
    let (a, a_ready) = replica("replica-a");
    eventually("a leads", || async {
        // The identity is the prefix given, `_` and a random suffix.
        holder().await.is_some_and(|h| h.starts_with("replica-a_"))
    })
    .await;
    let (b, b_ready) = replica("replica-b");
    eventually("a is ready (its cache synced)", || async {
        a_ready.borrow().is_ready()
    })
    .await;
    eventually("b is ready (waiting for the lease)", || async {
        b_ready.borrow().is_ready()
    })
    .await;
    assert!(holder().await.is_some_and(|h| h.starts_with("replica-a_")));
    b.stop().await;
    assert!(!b_ready.borrow().is_ready(), "not ready once stopped");
    a.stop().await;
}
