//! Leader election: of several replicas only the lease holder reconciles; losing the lease
//! abandons in-flight passes; a dead leader is replaced once its lease expires.

use std::sync::Arc;
use std::time::Duration;

use http::Method;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kubeward::controller::Controller;
use kubeward::leader::LeaderElection;
use kubeward::observe::{Outcome, Phase};
use kubeward_testing::{Fault, FaultAction};
use kubeward_tests::*;

const LEASE_DURATION: Duration = Duration::from_millis(3000);
const RENEW_DEADLINE: Duration = Duration::from_millis(2000);
const RETRY_PERIOD: Duration = Duration::from_millis(250);

fn replica(
    client: &kube::Client,
    identity: &str,
    widgets: &Widgets,
    observer: &Arc<Recording>,
) -> Running {
    let election = LeaderElection::new(client.clone(), "default", "widgets-controller", identity)
        .with_timings(LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD);
    Running::start(
        Controller::new(widgets.clone(), client.clone())
            .with_observer(observer.clone())
            .with_leader_election(election)
            .with_shutdown_grace(Duration::from_millis(100)),
    )
}

async fn holder(client: &kube::Client) -> Option<String> {
    Api::<Lease>::namespaced(client.clone(), "default")
        .get_opt("widgets-controller")
        .await
        .unwrap()
        .and_then(|lease| lease.spec?.holder_identity)
}

#[tokio::test]
async fn only_the_leader_reconciles_and_a_dead_leaders_lease_is_taken_over() {
    let (_server, client) = server_with_widgets().await;
    let (a_widgets, a_observer) = (Widgets::default(), Recording::new());
    let (b_widgets, b_observer) = (Widgets::default(), Recording::new());
    let a = replica(&client, "replica-a", &a_widgets, &a_observer);
    eventually("a leads", || async {
        holder(&client).await.as_deref() == Some("replica-a")
    })
    .await;
    let b = replica(&client, "replica-b", &b_widgets, &b_observer);

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
    assert_eq!(holder(&client).await.as_deref(), Some("replica-b"));
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
    let running = replica(&client, "replica-a", &widgets, &observer);
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
    server.faults().add(
        Fault::new(FaultAction::Status(500))
            .method(Method::PUT)
            .resource("coordination.k8s.io", "leases"),
    );
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
    let a = replica(
        &client_as(&server, "replica-a"),
        "replica-a",
        &a_widgets,
        &a_observer,
    );
    eventually("a leads", || async {
        holder(&admin).await.as_deref() == Some("replica-a")
    })
    .await;
    let b = replica(
        &client_as(&server, "replica-b"),
        "replica-b",
        &b_widgets,
        &b_observer,
    );
    create_widget(&admin, "w1", WidgetSpec::with_mode(Mode::Hang)).await;
    eventually("a's apply is in flight", || async {
        a_widgets.started("w1") == 1
    })
    .await;

    server.faults().add(
        Fault::new(FaultAction::Hang)
            .user("replica-a")
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
    let running = replica(&client, "replica-a", &widgets, &observer);
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
/// event is published all the same, once.
#[tokio::test]
async fn a_pass_abandoned_on_lost_leadership_inside_its_status_write_still_publishes_its_transition()
 {
    let (server, client) = server_with_widgets().await;
    let (widgets, observer) = (Widgets::default(), Recording::new());
    for fault in [
        FaultAction::CommitThenStatus(504),
        FaultAction::Latency(RENEW_DEADLINE * 4),
    ] {
        server.faults().add(
            Fault::new(fault)
                .method(Method::PATCH)
                .path_prefix(&status_path("w1"))
                .times(1),
        );
    }
    let running = replica(&client, "replica-a", &widgets, &observer);
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
