//! A spec that can never work fails once: the example's `RenderError::InvalidImage` is
//! `#[terminal]`, so the operator publishes one `ReconcileFailed`, counts one failure of reason
//! `terminal`, exports the Rollout as `kubeward_object_terminal 1`, and runs no pass for it until
//! the spec changes; the change proceeds at once.

use std::time::{Duration, Instant};

use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kubeward_examples::rollouts::operator::OperatorOptions;
use kubeward_examples::rollouts::scenario::{BROKEN_IMAGE, RunningOperator, cluster};
use kubeward_examples::rollouts::{Rollout, RolloutSpec, Strategy};

const CONTROLLER: &str = "demo.kubeward.dev/rollouts";

fn rollout(name: &str, image: &str) -> Rollout {
    let mut rollout = Rollout::new(
        name,
        RolloutSpec {
            image: image.into(),
            replicas: 2,
            strategy: Strategy::Automatic,
            timeout_seconds: 600,
            suspend: false,
        },
    );
    rollout.metadata.namespace = Some("default".into());
    rollout
}

/// The value of the one sample `series` (metric name and labels as exposed) in `metrics`.
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Polls `done` until it holds. Bounded only so that a broken operator fails the test instead
/// of hanging it.
async fn wait_for(what: &str, mut done: impl AsyncFnMut() -> Result<(), String>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match done().await {
            Ok(()) => return,
            Err(last) => assert!(Instant::now() < deadline, "never {what}; last: {last}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn reason_of(rollout: &Rollout) -> (Option<i64>, String) {
    let condition = rollout.up_to_date();
    (
        condition.and_then(|c| c.observed_generation),
        condition.map(|c| c.reason.clone()).unwrap_or_default(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_image_fails_once_and_waits_for_the_spec_to_change() {
    let server = cluster().await.expect("cluster");
    let client = server.client().expect("client");
    let options = OperatorOptions {
        stage_delay: Duration::from_millis(20),
        // A repeat of an event reaches the server within this interval: as its series count, or
        // as a new event once the series was idle for as long.
        event_flush_interval: Duration::from_millis(100),
        ..OperatorOptions::default()
    };
    let operator = RunningOperator::start(client.clone(), &options).expect("operator");
    let rollouts: Api<Rollout> = Api::namespaced(client.clone(), "default");
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    let created = rollouts
        .create(
            &PostParams::default(),
            &rollout("web", "registry.example/web"),
        )
        .await
        .expect("create web");
    let uid = created.metadata.uid.clone().expect("uid");
    let failed_events = async || -> Vec<Event> {
        let list = events.list(&ListParams::default()).await.expect("events");
        list.items
            .into_iter()
            .filter(|e| e.regarding.as_ref().and_then(|r| r.uid.as_deref()) == Some(&*uid))
            .filter(|e| e.reason.as_deref() == Some("ReconcileFailed"))
            .collect()
    };
    let terminal_web = format!(
        r#"kubeward_object_terminal{{controller="{CONTROLLER}",name="web",namespace="default"}}"#
    );
    let terminal_errors = format!(
        r#"kubeward_reconcile_errors_total{{controller="{CONTROLLER}",phase="apply",reason="terminal"}}"#
    );
    let retried_errors = format!(
        r#"kubeward_reconcile_errors_total{{controller="{CONTROLLER}",phase="apply",reason="error"}}"#
    );
    wait_for("failed terminally", async || {
        let metrics = operator.metrics();
        match sample(&metrics, &terminal_web) {
            Some(1.0) => Ok(()),
            other => Err(format!("{terminal_web} = {other:?}")),
        }
    })
    .await;

    // The barrier: a Rollout whose image the kubelets cannot pull (it may yet be pushed), a
    // failure worth retrying, created after web failed, retried with the same backoff twice
    // since. Had web been retried, it would have been retried as often.
    rollouts
        .create(&PostParams::default(), &rollout("db", BROKEN_IMAGE))
        .await
        .expect("create db");
    wait_for("db retried twice", async || {
        let metrics = operator.metrics();
        match sample(&metrics, &retried_errors) {
            Some(n) if n >= 3.0 => Ok(()),
            other => Err(format!("{retried_errors} = {other:?}")),
        }
    })
    .await;
    let web = rollouts.get("web").await.expect("get web");
    assert_eq!(reason_of(&web), (Some(1), "FailedDeploy".to_owned()));

    let metrics = operator.metrics();
    assert_eq!(sample(&metrics, &terminal_errors), Some(1.0), "{metrics}");
    let failed_passes = sample(
        &metrics,
        &format!(
            r#"kubeward_reconcile_passes_total{{controller="{CONTROLLER}",outcome="failed",phase="apply"}}"#
        ),
    );
    let retried = sample(&metrics, &retried_errors).unwrap_or_default();
    assert_eq!(
        failed_passes,
        Some(retried + 1.0),
        "every failed pass but web's one is db's: {metrics}"
    );
    let failed = failed_events().await;
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(
        failed[0].series.as_ref().map_or(1, |s| s.count),
        1,
        "published once: {failed:#?}"
    );
    assert!(
        failed[0]
            .note
            .as_deref()
            .is_some_and(|n| n.contains("is not of the form repository:tag")),
        "{failed:#?}"
    );

    // Fixing the spec proceeds at once: the next generation rolls out.
    rollouts
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"image": "registry.example/web:2.0"}})),
        )
        .await
        .expect("fix the image");
    wait_for("web applied at generation 2", async || {
        let web = rollouts.get("web").await.map_err(|e| e.to_string())?;
        match reason_of(&web) {
            (Some(2), reason) if reason == "Applied" => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let metrics = operator.metrics();
    assert_eq!(sample(&metrics, &terminal_web), Some(0.0), "{metrics}");
    assert_eq!(sample(&metrics, &terminal_errors), Some(1.0), "{metrics}");
    assert_eq!(failed_events().await.len(), 1);
    operator.stop().await.expect("stop");
}
