//! Leader election: of several replicas only the lease holder reconciles; losing the lease
//! abandons in-flight passes; a dead leader is replaced once its lease expires; identities are
//! unique per process; expiry is judged by the holder's stored duration; no write is sent after
//! the lease is given up. Every replica runs as its own service account holding the generated
//! RBAC.

use std::sync::Arc;
use std::time::Duration;

use http::Method;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kubeward::controller::Controller;
use kubeward::leader::LeaderElection;
use kubeward::observe::{Outcome, Phase};
use kubeward_testing::{Cluster, Fault, FaultAction};
use kubeward_tests::*;

const LEASE_DURATION: Duration = Duration::from_millis(3000);
const RENEW_DEADLINE: Duration = Duration::from_millis(2000);
const RETRY_PERIOD: Duration = Duration::from_millis(250);

/// A replica running as the service account `name` (with the generated RBAC), candidate with
/// the identity prefix `name`.
async fn replica(
    server: &Cluster,
    name: &str,
    widgets: &Widgets,
    observer: &Arc<Recording>,
) -> Running {
    let timings = TIMINGS;
    replica_with(server, name, name, timings, widgets, observer).await
}

/// A replica running as the service account `account`, candidate with the identity prefix
/// `identity` and the lease `timings` (duration, renew deadline, retry period).
async fn replica_with(
    server: &Cluster,
    account: &str,
    identity: &str,
    timings: Timings,
    widgets: &Widgets,
    observer: &Arc<Recording>,
) -> Running {
    Running::start(replica_controller(server, account, identity, timings, widgets, observer).await)
}

/// Lease duration, renew deadline and retry period.
type Timings = (Duration, Duration, Duration);

/// The timings the replicas of these tests run with.
const TIMINGS: Timings = (LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD);

/// The controller of a replica as [`replica_with`] runs it.
async fn replica_controller(
    server: &Cluster,
    account: &str,
    identity: &str,
    (duration, deadline, retry): Timings,
    widgets: &Widgets,
    observer: &Arc<Recording>,
) -> Controller<Widgets> {
    let client = operator_client(server, account).await;
    let election = LeaderElection::new(client.clone(), "default", "widgets-controller", identity)
        .with_timings(duration, deadline, retry);
    Controller::new(widgets.clone(), client.clone())
        .with_observer(observer.clone())
        .with_event_recorder(recorder(&client))
        .with_leader_election(election)
        .with_shutdown_grace(Duration::from_millis(100))
}

#[tokio::test]
async fn the_leading_gauge_says_which_replica_reconciles() {
    let (server, client) = server_with_widgets().await;
    let timings = TIMINGS;
    let leading = r#"kubeward_controller_leading{controller="test.kubeward.dev/widgets"} "#;
    let gauge = |registry: &prometheus::Registry| {
        scrape(registry)
            .lines()
            .find_map(|l| l.strip_prefix(leading)?.parse::<f64>().ok())
    };
    let mut replicas = Vec::new();
    for name in ["replica-a", "replica-b"] {
        let controller = replica_controller(
            &server,
            name,
            name,
            timings,
            &Widgets::default(),
            &Recording::new(),
        )
        .await;
        let registry = prometheus::Registry::new();
        let metrics = controller.controller_metrics("kubeward").expect("metrics");
        registry.register(Box::new(metrics)).expect("registered");
        assert_eq!(gauge(&registry), Some(0.0), "not started");
        let readiness = controller.readiness();
        replicas.push((Running::start(controller), registry, readiness));
        if name == "replica-a" {
            eventually("a leads", || held_by(&client, "replica-a")).await;
        }
    }
    let (b, b_registry, b_readiness) = replicas.pop().expect("b");
    let (a, a_registry, _) = replicas.pop().expect("a");
    eventually("a's gauge says it leads", || async {
        gauge(&a_registry) == Some(1.0)
    })
    .await;
    eventually("b is a standby", || async {
        *b_readiness.borrow() == kubeward::controller::ControllerState::Standby
    })
    .await;
    assert_eq!(gauge(&b_registry), Some(0.0));
    // a stops and gives the lease up: b leads.
    a.stop().await;
    assert_eq!(gauge(&a_registry), Some(0.0));
    eventually("b's gauge says it leads", || async {
        gauge(&b_registry) == Some(1.0)
    })
    .await;
    assert!(held_by(&client, "replica-b").await);
    b.stop().await;
    assert_eq!(gauge(&b_registry), Some(0.0));
}

/// Every lease renewal (PUT) is answered 500 from now on, until the faults are cleared.
fn fail_lease_renewals(server: &Cluster) {
    server.faults().add(
        Fault::new(FaultAction::Status(500))
            .method(Method::PUT)
            .resource("coordination.k8s.io", "leases"),
    );
}

async fn holder(client: &kube::Client) -> Option<String> {
    Api::<Lease>::namespaced(client.clone(), "default")
        .get_opt("widgets-controller")
        .await
        .unwrap()
        .and_then(|lease| lease.spec?.holder_identity)
}

/// Whether the lease is held by a candidate of the identity prefix `prefix` (its identity is the
/// prefix, `_` and a random suffix).
async fn held_by(client: &kube::Client, prefix: &str) -> bool {
    holder(client)
        .await
        .is_some_and(|holder| holder.starts_with(&format!("{prefix}_")))
}

#[tokio::test]
async fn only_the_leader_reconciles_and_a_dead_leaders_lease_is_taken_over() {
    let (server, client) = server_with_widgets().await;
    let (a_widgets, a_observer) = (Widgets::default(), Recording::new());
    let (b_widgets, b_observer) = (Widgets::default(), Recording::new());
    let a = replica(&server, "replica-a", &a_widgets, &a_observer).await;
    eventually("a leads", || held_by(&client, "replica-a")).await;
    let b = replica(&server, "replica-b", &b_widgets, &b_observer).await;

    create_widget(
        &client,
        "w1",
        WidgetSpec {
            mode: Mode::Hang,
            ..WidgetSpec::default()
        },
    )
    .await;
    eventually("a's apply is in flight", || async {
        a_widgets.started("w1") == 1
    })
    .await;
    // b is a running replica too, but does not reconcile while a holds the lease.
    tokio::time::sleep(LEASE_DURATION).await;
    assert_eq!(b_widgets.started("w1"), 0);
    assert!(b_observer.passes().is_empty());

    // a dies without releasing the lease: its in-flight pass is abandoned, and b takes over once
    // the lease has gone unrenewed for the lease duration.
    a.kill();
    eventually("b takes over and reconciles", || async {
        b_widgets.started("w1") == 1
    })
    .await;
    assert!(held_by(&client, "replica-b").await);
    assert_eq!(
        a_observer.passes_of("w1"),
        [
            (Phase::Init, Outcome::Completed),
            (Phase::Apply, Outcome::Abandoned)
        ]
    );
    b.stop().await;
    assert_eq!(
        b_observer.passes_of("w1"),
        [(Phase::Apply, Outcome::Abandoned)]
    );
    // Stopping released the lease.
    assert_eq!(holder(&client).await, None);
}

#[tokio::test]
async fn a_leader_that_cannot_renew_stops_and_abandons_its_passes() {
    let (server, client) = server_with_widgets().await;
    let (widgets, observer) = (Widgets::default(), Recording::new());
    let running = replica(&server, "replica-a", &widgets, &observer).await;
    create_widget(
        &client,
        "w1",
        WidgetSpec {
            mode: Mode::Hang,
            ..WidgetSpec::default()
        },
    )
    .await;
    eventually("the apply is in flight", || async {
        widgets.started("w1") == 1
    })
    .await;

    // The lease cannot be renewed: after the renew deadline the replica stops leading and
    // abandons its in-flight pass, without waiting for it.
    fail_lease_renewals(&server);
    eventually("the pass is abandoned", || async {
        observer
            .passes_of("w1")
            .contains(&(Phase::Apply, Outcome::Abandoned))
    })
    .await;

    // Once the API server accepts renewals again, it leads again and reconciles.
    server.faults().clear();
    eventually("it leads and reconciles again", || async {
        widgets.started("w1") == 2
    })
    .await;
    running.stop().await;
}

/// The leader's lease requests hang (kube's client has no read timeout). It must stop
/// reconciling, abandoning its in-flight pass, when its renew deadline passes, which is before
/// the lease expires for a standby: never two replicas reconciling at once.
#[tokio::test]
async fn a_leader_whose_renewal_hangs_abandons_its_passes_before_a_standby_takes_over() {
    let (server, admin) = server_with_widgets().await;
    let (a_widgets, a_observer) = (Widgets::default(), Recording::new());
    let (b_widgets, b_observer) = (Widgets::default(), Recording::new());
    let a = replica(&server, "replica-a", &a_widgets, &a_observer).await;
    eventually("a leads", || held_by(&admin, "replica-a")).await;
    let b = replica(&server, "replica-b", &b_widgets, &b_observer).await;
    create_widget(&admin, "w1", WidgetSpec::with_mode(Mode::Hang)).await;
    eventually("a's apply is in flight", || async {
        a_widgets.started("w1") == 1
    })
    .await;

    server.faults().add(
        Fault::new(FaultAction::Hang)
            .user(&service_account_user("replica-a"))
            .resource("coordination.k8s.io", "leases"),
    );
    eventually("b takes over and reconciles", || async {
        b_widgets.started("w1") == 1
    })
    .await;
    assert_eq!(
        a_observer.passes_of("w1"),
        [
            (Phase::Init, Outcome::Completed),
            (Phase::Apply, Outcome::Abandoned)
        ],
        "a stopped reconciling before b started: no split brain"
    );
    server.faults().clear();
    b.stop().await;
    a.stop().await;
}

/// A renewal PUT commits, the server answers 504, and kube's client retries it with the old
/// resourceVersion: 409. That conflict is benign (the lease is still this replica's): the
/// renewal is retried within the deadline and the in-flight pass goes on.
#[tokio::test]
async fn a_single_conflict_on_renewal_does_not_abandon_passes() {
    let (server, client) = server_with_widgets().await;
    let (widgets, observer) = (Widgets::default(), Recording::new());
    let running = replica(&server, "replica-a", &widgets, &observer).await;
    create_widget(&client, "w1", WidgetSpec::with_mode(Mode::Hang)).await;
    eventually("the apply is in flight", || async {
        widgets.started("w1") == 1
    })
    .await;
    server.request_log().clear();
    server.faults().add(
        Fault::new(FaultAction::CommitThenStatus(504))
            .method(Method::PUT)
            .resource("coordination.k8s.io", "leases")
            .times(1),
    );
    let lease_puts = || {
        server
            .requests()
            .iter()
            .filter(|r| r.method == Method::PUT && r.path.contains("/leases/"))
            .map(|r| r.status)
            .collect::<Vec<_>>()
    };
    eventually("a renewal after the conflict", || async {
        lease_puts().starts_with(&[504, 409, 200])
    })
    .await;
    assert_eq!(
        observer.passes_of("w1"),
        [(Phase::Init, Outcome::Completed)],
        "the apply is still in flight"
    );
    assert_eq!(widgets.started("w1"), 1);
    running.stop().await;
}

/// A leader loses its lease while its pass waits for kube's retry of a status write that
/// committed (answered 504): the pass is abandoned, but the write persisted, so its transition
/// event is published all the same, once — within the margin between the leader's renew
/// deadline and the lease's expiry, when no standby can lead yet.
#[tokio::test]
async fn a_pass_abandoned_on_lost_leadership_inside_its_status_write_still_publishes_its_transition()
 {
    let (server, client) = server_with_widgets().await;
    let (widgets, observer) = (Widgets::default(), Recording::new());
    // A lease that expires 4 s after the renew deadline; the retried write answers 3 s after the
    // first one, after the deadline and well before the expiry.
    let timings = (Duration::from_secs(6), Duration::from_secs(2), RETRY_PERIOD);
    for fault in [
        FaultAction::CommitThenStatus(504),
        FaultAction::Latency(Duration::from_secs(3)),
    ] {
        server.faults().add(
            Fault::new(fault)
                .method(Method::PATCH)
                .path_prefix(&status_path("w1"))
                .times(1),
        );
    }
    let running = replica_with(
        &server,
        "replica-a",
        "replica-a",
        timings,
        &widgets,
        &observer,
    )
    .await;
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out"),
    )
    .await;
    eventually(
        "the status write committed and was answered 504",
        || async { status_writes(&server, "w1") == [504] },
    )
    .await;
    server
        .faults()
        .add(Fault::new(FaultAction::Hang).resource("coordination.k8s.io", "leases"));
    eventually("the leader abandons the pass", || async {
        observer.count("w1", Outcome::Abandoned) == 1
    })
    .await;
    eventually("the transition event", || async {
        !events_about(&client, "w1").await.is_empty()
    })
    .await;
    server.faults().clear();
    running.stop().await;
    let events = events_about(&client, "w1").await;
    let reasons: Vec<_> = events.iter().map(|e| e.reason.clone()).collect();
    assert_eq!(reasons, [Some("Applied".to_owned())], "{events:#?}");
    assert_eq!(events[0].series.as_ref().map_or(1, |s| s.count), 1);
    assert_eq!(
        status_writes(&server, "w1"),
        [504, 409],
        "one status write, retried once by kube's client, after the pass was abandoned"
    );
}

/// Two replicas given the same identity (a copied manifest, a fallback constant) are two
/// candidates: the identity is made unique per process, so only one of them leads.
#[tokio::test]
async fn two_replicas_given_the_same_identity_never_both_lead() {
    let (server, client) = server_with_widgets().await;
    let (a_widgets, a_observer) = (Widgets::default(), Recording::new());
    let (b_widgets, b_observer) = (Widgets::default(), Recording::new());
    let timings = TIMINGS;
    let a = replica_with(
        &server,
        "replica-a",
        "rollouts",
        timings,
        &a_widgets,
        &a_observer,
    )
    .await;
    eventually("one leads", || held_by(&client, "rollouts")).await;
    let first = holder(&client).await.expect("held");
    let b = replica_with(
        &server,
        "replica-b",
        "rollouts",
        timings,
        &b_widgets,
        &b_observer,
    )
    .await;
    create_widget(&client, "w1", WidgetSpec::with_mode(Mode::Hang)).await;
    eventually("the leader's apply is in flight", || async {
        a_widgets.started("w1") == 1
    })
    .await;
    // Long enough for the second replica to renew "its" lease if it took the identity as its own.
    tokio::time::sleep(LEASE_DURATION).await;
    assert_eq!(
        b_widgets.started("w1"),
        0,
        "the second replica reconciled too"
    );
    assert_eq!(holder(&client).await.as_deref(), Some(&*first));
    a.kill();
    eventually(
        "the second takes over under an identity of its own",
        || async { b_widgets.started("w1") == 1 },
    )
    .await;
    let second = holder(&client).await.expect("held");
    assert!(
        second.starts_with("rollouts_") && second != first,
        "{first} then {second}"
    );
    b.stop().await;
}

/// A candidate configured with a shorter lease duration than the holder's does not take the
/// lease early: expiry is judged by the duration stored in the Lease.
#[tokio::test]
async fn expiry_is_judged_by_the_holders_stored_lease_duration() {
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
    let (server, client) = server_with_widgets().await;
    let lease = Lease {
        metadata: kube::api::ObjectMeta {
            name: Some("widgets-controller".into()),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some("another-replica_x1".into()),
            lease_duration_seconds: Some(3600),
            renew_time: Some(MicroTime(jiff::Timestamp::now())),
            ..LeaseSpec::default()
        }),
    };
    Api::<Lease>::namespaced(client.clone(), "default")
        .create(&Default::default(), &lease)
        .await
        .expect("lease stored");
    let (widgets, observer) = (Widgets::default(), Recording::new());
    let short = (
        Duration::from_millis(600),
        Duration::from_millis(400),
        Duration::from_millis(100),
    );
    let running = replica_with(
        &server,
        "replica-b",
        "replica-b",
        short,
        &widgets,
        &observer,
    )
    .await;
    create_widget(&client, "w1", WidgetSpec::with_mode(Mode::Complete)).await;
    // Many times its own lease duration, a small part of the holder's hour.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        holder(&client).await.as_deref(),
        Some("another-replica_x1"),
        "the lease was taken before the holder's duration ran out"
    );
    assert_eq!(widgets.started("w1"), 0);
    running.stop().await;
}

/// `replica-a` leading, and the apply of a widget `w1` that sets `Ready` run, whose status
/// write the server serves only after `latency`.
async fn leading_with_delayed_status_write(latency: Duration) -> (Cluster, kube::Client, Running) {
    let (server, client) = server_with_widgets().await;
    let (widgets, observer) = (Widgets::default(), Recording::new());
    server.faults().add(
        Fault::new(FaultAction::Latency(latency))
            .method(Method::PATCH)
            .path_prefix(&status_path("w1"))
            .times(1),
    );
    let running = replica(&server, "replica-a", &widgets, &observer).await;
    eventually("a leads", || held_by(&client, "replica-a")).await;
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out"),
    )
    .await;
    eventually("the apply ran", || async { widgets.started("w1") == 1 }).await;
    (server, client, running)
}

/// On shutdown the leader's last writes — the status write of an abandoned pass that is still
/// under way, its transition event, the flush of event series — are all sent before the lease
/// is released: none after.
#[tokio::test]
async fn no_write_is_sent_after_the_lease_is_released() {
    let (server, client, running) =
        leading_with_delayed_status_write(Duration::from_millis(800)).await;
    // The shutdown grace (100 ms) ends while the status write is delayed.
    running.stop().await;
    assert_eq!(holder(&client).await, None, "the lease was released");
    assert_no_write_after_release(&server, &service_account_user("replica-a"));
    assert_eq!(
        status_writes(&server, "w1"),
        [200],
        "the delayed write completed"
    );
    let events = events_about(&client, "w1").await;
    assert_eq!(
        events.iter().map(|e| e.reason.clone()).collect::<Vec<_>>(),
        [Some("Applied".to_owned())],
        "its transition event was published before the release"
    );
}

/// A leader whose lease was lost sends nothing once the lease can have expired for a standby:
/// the status write of an abandoned pass that answers only after that stores its transition,
/// but the transition event — a new write — is not sent.
#[tokio::test]
async fn a_deposed_leader_sends_no_write_once_its_lease_can_have_expired() {
    let (server, _client, running) = leading_with_delayed_status_write(LEASE_DURATION * 2).await;
    server.faults().add(
        Fault::new(FaultAction::Hang)
            .user(&service_account_user("replica-a"))
            .resource("coordination.k8s.io", "leases"),
    );
    eventually("the delayed status write committed", || async {
        status_writes(&server, "w1") == [200]
    })
    .await;
    // What the effects would send next (the event) is refused by the fence at once.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let user = service_account_user("replica-a");
    let event_writes = server
        .requests()
        .iter()
        .filter(|r| r.user == user && r.path.contains("/events"))
        .count();
    assert_eq!(
        event_writes, 0,
        "a deposed leader published after its lease could expire"
    );
    server.faults().clear();
    running.stop().await;
}

/// A transition event whose create failed just before shutdown (the events API answering 500 a
/// few times) is still published before the lease is released: the term's final flush retries
/// within its budget instead of giving up after one failure, which would lose the event for
/// good (the successor sees no transition to publish).
#[tokio::test]
async fn a_transition_event_that_failed_just_before_shutdown_is_published_before_the_release() {
    let (server, client) = server_with_widgets().await;
    let (widgets, observer) = (Widgets::default(), Recording::new());
    let running = replica(&server, "replica-a", &widgets, &observer).await;
    eventually("a leads", || held_by(&client, "replica-a")).await;
    let user = service_account_user("replica-a");
    let event_creates = || {
        server
            .requests()
            .iter()
            .filter(|r| r.user == user && r.method == Method::POST && r.path.contains("/events"))
            .count()
    };
    // The transition's create, its flush and the flush's first retry fail (the recorder's own
    // retries may take some of them first: whoever sends the fifth create, it lands).
    server.faults().add(
        Fault::new(FaultAction::Status(500))
            .user(&user)
            .method(Method::POST)
            .resource("events.k8s.io", "events")
            .times(4),
    );
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "rolled out"),
    )
    .await;
    eventually("the transition's event create failed", || async {
        event_creates() >= 1
    })
    .await;
    assert_eq!(
        status_writes(&server, "w1"),
        [200],
        "the transition persisted"
    );
    running.stop().await;
    assert_eq!(holder(&client).await, None, "the lease was released");
    let events = events_about(&client, "w1").await;
    assert_eq!(
        events.iter().map(|e| e.reason.clone()).collect::<Vec<_>>(),
        [Some("Applied".to_owned())],
        "the transition's event was published"
    );
    assert_eq!(events[0].series.as_ref().map_or(1, |s| s.count), 1);
    assert_eq!(
        event_creates(),
        5,
        "four failed creates, then the one that landed"
    );
}

/// A shutdown fits its budget while a status write hangs and every limit of its own is longer:
/// the in-flight pass is abandoned at half the budget, its write given up on, and the lease is
/// still released — after which nothing is written.
#[tokio::test]
async fn a_shutdown_fits_its_budget_while_a_status_write_hangs() {
    let (server, client) = server_with_widgets().await;
    let widgets = Widgets::default();
    let observer = Recording::new();
    let timings = TIMINGS;
    let controller = replica_controller(
        &server,
        "replica-a",
        "replica-a",
        timings,
        &widgets,
        &observer,
    )
    .await
    .with_shutdown_grace(Duration::from_secs(60))
    .with_status_write_timeout(Duration::from_secs(60))
    .with_shutdown_budget(Duration::from_secs(3));
    let running = Running::start(controller);
    eventually("replica-a leads", || held_by(&client, "replica-a")).await;
    server.faults().add(
        Fault::new(FaultAction::Hang)
            .method(Method::PATCH)
            .path_prefix(&status_path("w1")),
    );
    create_widget(
        &client,
        "w1",
        WidgetSpec::ready(Mode::Complete, "True", "Applied", "done"),
    )
    .await;
    eventually("the pass is writing its status", || async {
        widgets.started("w1") > 0
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    // Bounded only so that a broken budget fails the test instead of hanging it: the limits
    // of its own (a 60 s grace, a 60 s write timeout) are far past it.
    tokio::time::timeout(Duration::from_secs(30), running.stop())
        .await
        .expect("the shutdown ends within its budget, not its 60 s limits");
    eprintln!(
        "shutdown with a hung status write took {:?} (budget 3 s)",
        started.elapsed()
    );
    assert_eq!(holder(&client).await, None, "the lease was released");
    assert_no_write_after_release(&server, &service_account_user("replica-a"));
    server.faults().clear();
}

/// The widget list requests `account` sent (its watches' lists, not the watches).
fn widget_lists(server: &Cluster, account: &str) -> usize {
    let user = service_account_user(account);
    server
        .requests()
        .iter()
        .filter(|r| r.user == user && r.method == Method::GET && !r.is_watch())
        .filter(|r| r.path.ends_with("/widgets"))
        .count()
}

/// A warm standby (`with_warm_standby`) keeps its cache in sync: when it takes over it lists
/// nothing and reconciles at once — also an object created while it waited. A cold one (the
/// default) lists only once it leads.
#[tokio::test]
async fn a_warm_standby_takes_over_without_listing_and_a_cold_one_lists_first() {
    for warm in [true, false] {
        let (server, client) = server_with_widgets().await;
        let (leader, standby) = (Widgets::default(), Widgets::default());
        let observer = Recording::new();
        let a = replica(&server, "replica-a", &leader, &observer).await;
        eventually("replica-a leads", || held_by(&client, "replica-a")).await;
        let timings = TIMINGS;
        let b = replica_controller(
            &server,
            "replica-b",
            "replica-b",
            timings,
            &standby,
            &observer,
        )
        .await;
        let b = Running::start(if warm { b.with_warm_standby() } else { b });
        create_widget(
            &client,
            "w1",
            WidgetSpec::ready(Mode::Complete, "True", "Applied", "done"),
        )
        .await;
        eventually("the leader reconciles w1", || async {
            leader.started("w1") > 0
        })
        .await;
        if warm {
            eventually("the warm standby has listed", || async {
                widget_lists(&server, "replica-b") == 1
            })
            .await;
        }
        let before = widget_lists(&server, "replica-b");
        assert_eq!(
            before,
            usize::from(warm),
            "warm {warm}: lists while standing by"
        );
        assert_eq!(standby.started("w1"), 0, "a standby reconciles nothing");

        a.stop().await;
        eventually("replica-b leads", || held_by(&client, "replica-b")).await;
        eventually("the new leader reconciles w1", || async {
            standby.started("w1") > 0
        })
        .await;
        assert_eq!(
            widget_lists(&server, "replica-b"),
            1,
            "warm {warm}: one list in all, at the start of the standby or of the term"
        );
        b.stop().await;
    }
}

/// A leader that loses its lease and wins it back goes on with a deleted object's cleanup that
/// asks to be requeued: the new term's first pass over it requeues it like any other.
#[tokio::test]
async fn a_requeued_cleanup_goes_on_after_the_lease_is_lost_and_won_back() {
    let (server, client) = server_with_widgets().await;
    let (widgets, observer) = (Widgets::default(), Recording::new());
    let running = replica(&server, "replica-a", &widgets, &observer).await;
    create_widget(
        &client,
        "w1",
        WidgetSpec {
            cleanup: Mode::Requeue,
            requeue_ms: Some(200),
            ..WidgetSpec::default()
        },
    )
    .await;
    eventually("applied", || async { widgets.started("w1") == 1 }).await;
    let api: Api<Widget> = Api::namespaced(client.clone(), "default");
    api.delete("w1", &Default::default()).await.unwrap();
    let cleanups = || {
        observer
            .passes_of("w1")
            .iter()
            .filter(|(phase, _)| *phase == Phase::Cleanup)
            .count()
    };
    eventually("cleanup requeues itself", || async { cleanups() >= 2 }).await;

    fail_lease_renewals(&server);
    // Past the renew deadline the replica no longer leads.
    tokio::time::sleep(RENEW_DEADLINE + Duration::from_secs(1)).await;
    let before = cleanups();
    server.faults().clear();
    eventually(
        "it leads again, and the cleanup goes on requeueing itself",
        || async { cleanups() >= before + 4 },
    )
    .await;
    running.stop().await;
}
