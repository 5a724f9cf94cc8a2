//! The reconcile timeout: a pass whose reconciler hangs is abandoned after the timeout declared
//! with `#[reconciler(timeout = "..")]` (or `Controller::with_reconcile_timeout`): its step is
//! recorded as abandoned, it fails for reason `timeout` with a failure event, it is retried with
//! backoff — and its concurrency slot is freed, so the other objects keep being reconciled.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, PostParams};
use kubeward::observe::{FailureReason, Outcome, PassRecord, ReconcileObserver, StepRecord};
use kubeward::{Action, Pass};
use kubeward_tests::{events_about, eventually, scrape};

/// Hangs in its `wait` step on a ConfigMap whose data has `hang`; completes any other.
#[derive(Default, Clone)]
struct Hangs {
    started: Arc<Mutex<Vec<String>>>,
}

#[derive(Debug, thiserror::Error, kubeward::Terminal)]
#[error("never")]
struct Never;

#[kubeward::reconciler(
    resource = ConfigMap,
    controller = "test.kubeward.dev/hangs",
    timeout = "300ms",
)]
impl Hangs {
    async fn apply(&self, cm: &ConfigMap, _pass: &mut Pass<ConfigMap>) -> Result<Action, Never> {
        let name = cm.metadata.name.clone().unwrap_or_default();
        self.started.lock().unwrap().push(name);
        if cm.data.as_ref().is_some_and(|d| d.contains_key("hang")) {
            #[step("wait")]
            futures::future::pending::<()>().await;
        }
        Ok(Action::await_change())
    }
}

/// Every pass and step record.
#[derive(Default)]
struct Records {
    passes: Mutex<Vec<PassRecord>>,
    steps: Mutex<Vec<StepRecord>>,
}

impl ReconcileObserver for Records {
    fn pass_finished(&self, record: &PassRecord) {
        self.passes.lock().unwrap().push(record.clone());
    }
    fn step_finished(&self, record: &StepRecord) {
        self.steps.lock().unwrap().push(record.clone());
    }
}

impl Records {
    fn passes_of(&self, name: &str) -> Vec<PassRecord> {
        let passes = self.passes.lock().unwrap();
        passes
            .iter()
            .filter(|p| p.object.name == name)
            .cloned()
            .collect()
    }
}

fn config_map(name: &str, hang: bool) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: hang.then(|| [("hang".to_owned(), "yes".to_owned())].into()),
        ..ConfigMap::default()
    }
}

#[test]
fn the_declared_timeout_is_the_controllers_unless_the_builder_says_otherwise() {
    let client = || {
        let config = kube::Config::new("http://127.0.0.1:1".parse().unwrap());
        kube::Client::try_from(config).unwrap()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _inside = runtime.enter();
    let declared = Hangs::default().controller(client());
    assert_eq!(declared.reconcile_timeout(), Duration::from_millis(300));
    let overridden = Hangs::default()
        .controller(client())
        .with_reconcile_timeout(Duration::from_secs(2));
    assert_eq!(overridden.reconcile_timeout(), Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_pass_is_abandoned_and_frees_its_slot_for_the_other_objects() {
    let server = kubeward_testing::ApiServer::start().await.expect("server");
    let client = server.client().expect("client");
    let hangs = Hangs::default();
    let records = Arc::new(Records::default());
    let registry = prometheus::Registry::new();
    let controller = hangs
        .clone()
        .controller(client.clone())
        // One slot: while the wedged pass holds it, nothing else is reconciled.
        .with_concurrency(1)
        .with_observer(records.clone())
        .register_metrics(&registry)
        .expect("metrics");
    let running = kubeward_tests::Running::start(controller);
    let config_maps = Api::<ConfigMap>::namespaced(client.clone(), "default");
    config_maps
        .create(&PostParams::default(), &config_map("wedged", true))
        .await
        .expect("create wedged");
    let started = |name: &str| {
        let started = hangs.started.lock().unwrap();
        started.iter().filter(|n| *n == name).count()
    };
    eventually("the wedged pass started", || async {
        started("wedged") >= 1
    })
    .await;
    for name in ["a", "b", "c"] {
        config_maps
            .create(&PostParams::default(), &config_map(name, false))
            .await
            .expect("create");
    }
    eventually("a, b and c reconciled", || async {
        ["a", "b", "c"].iter().all(|name| {
            records
                .passes_of(name)
                .iter()
                .any(|p| p.outcome == Outcome::Completed)
        })
    })
    .await;

    eventually("the wedged pass abandoned and retried", || async {
        started("wedged") >= 2
    })
    .await;
    let wedged = records.passes_of("wedged");
    let first = &wedged[0];
    assert_eq!(first.outcome, Outcome::Failed, "{wedged:?}");
    assert_eq!(first.failure, Some(FailureReason::Timeout), "{wedged:?}");
    let steps = records.steps.lock().unwrap().clone();
    let wait = steps
        .iter()
        .find(|s| s.object.name == "wedged")
        .expect("the wait step was recorded");
    assert_eq!(wait.step.as_str(), "wait");
    assert_eq!(wait.outcome, Outcome::Abandoned);

    let metrics = scrape(&registry);
    let timeouts = r#"kubeward_reconcile_errors_total{controller="test.kubeward.dev/hangs",phase="apply",reason="timeout"} "#;
    let count: f64 = metrics
        .lines()
        .find_map(|l| l.strip_prefix(timeouts))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {timeouts} in {metrics}"));
    assert!(count >= 1.0, "{metrics}");
    eventually("the timed-out pass's failure event", || async {
        events_about(&client, "wedged").await.iter().any(|e| {
            e.reason.as_deref() == Some("ReconcileFailed")
                && e.note.as_deref()
                    == Some("the pass did not finish within its reconcile timeout of 300ms")
        })
    })
    .await;
    running.stop().await;
}
