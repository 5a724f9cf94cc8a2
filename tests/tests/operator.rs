//! Two controllers in one `Operator`: one client, one registry and one ops server (every metric
//! family once, both controllers' series, `/readyz` over both), one shutdown.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ObjectMeta, PostParams};
use kubeward::controller::{Controller, ControllerState};
use kubeward::operator::{Operator, OperatorError};
use kubeward::{Action, Pass, Reconciler};
use kubeward_tests::{eventually, http_get};

struct Configs;
impl Reconciler for Configs {
    type Resource = ConfigMap;
    type Error = kube::Error;
    const NAME: Option<&'static str> = Some("test.kubeward.dev/configs");
    async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, kube::Error> {
        Ok(Action::await_change())
    }
}

struct Secrets;
impl Reconciler for Secrets {
    type Resource = Secret;
    type Error = kube::Error;
    const NAME: Option<&'static str> = Some("test.kubeward.dev/secrets");
    async fn apply(&self, _: &Secret, _: &mut Pass<Secret>) -> Result<Action, kube::Error> {
        Ok(Action::await_change())
    }
}

fn meta(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        ..ObjectMeta::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_controllers_share_one_registry_one_ops_server_and_one_shutdown() {
    let server = kubeward_testing::ApiServer::start().await.expect("server");
    let client = server.client().expect("client");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let operator = Operator::new(client.clone())
        .with_reconciler(Configs)
        .expect("configs")
        .with_reconciler(Secrets)
        .expect("secrets")
        .with_ops_server("127.0.0.1:0".parse().unwrap())
        .await
        .expect("ops server")
        .shutdown_on(async move {
            let _ = stopped.await;
        });
    let ops = operator.ops_address().expect("ops address");
    let states = operator.readiness();
    let running = tokio::spawn(operator.run());

    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &ConfigMap {
                metadata: meta("settings"),
                ..ConfigMap::default()
            },
        )
        .await
        .expect("configmap");
    Api::<Secret>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &Secret {
                metadata: meta("token"),
                ..Secret::default()
            },
        )
        .await
        .expect("secret");
    let completed = |controller: &str| {
        format!(
            r#"kubeward_reconcile_passes_total{{controller="{controller}",outcome="completed",phase="apply"}}"#
        )
    };
    let passed = |metrics: &str, controller: &str| {
        metrics
            .lines()
            .find_map(|l| {
                l.strip_prefix(&completed(controller))?
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .is_some_and(|n| n >= 1.0)
    };
    eventually("both controllers reconciled", || async {
        let (_, metrics) = http_get(ops, "/metrics").await;
        passed(&metrics, "test.kubeward.dev/configs")
            && passed(&metrics, "test.kubeward.dev/secrets")
    })
    .await;
    let (status, metrics) = http_get(ops, "/metrics").await;
    assert_eq!(status, 200);
    for family in [
        "kubeward_reconcile_passes_total",
        "kubeward_reconcile_errors_total",
        "kubeward_reconcile_passes_in_flight",
        "kubeward_event_publishes_total",
        // (ConfigMaps and Secrets have no generation: no kubeward_object_generation series.)
        "kubeward_object_suspended",
        "kubeward_object_terminal",
        "kubeward_controller_leading",
    ] {
        let headers = metrics
            .lines()
            .filter(|l| l.starts_with(&format!("# TYPE {family} ")))
            .count();
        assert_eq!(headers, 1, "{family} once in:\n{metrics}");
    }
    for series in [
        r#"kubeward_object_suspended{controller="test.kubeward.dev/configs",name="settings",namespace="default"} 0"#,
        r#"kubeward_object_suspended{controller="test.kubeward.dev/secrets",name="token",namespace="default"} 0"#,
        r#"kubeward_controller_leading{controller="test.kubeward.dev/configs"} 1"#,
        r#"kubeward_controller_leading{controller="test.kubeward.dev/secrets"} 1"#,
    ] {
        assert!(metrics.contains(series), "{series} in:\n{metrics}");
    }
    eventually("ready", || async {
        http_get(ops, "/readyz").await.0 == 200
    })
    .await;
    assert_eq!(http_get(ops, "/healthz").await.0, 200);

    let _ = stop.send(());
    running
        .await
        .expect("operator task")
        .expect("operator stopped cleanly");
    for state in states {
        assert_eq!(*state.borrow(), ControllerState::Stopped);
    }
}

#[tokio::test]
async fn two_controllers_of_one_name_are_refused() {
    let server = kubeward_testing::ApiServer::start().await.expect("server");
    let client = server.client().expect("client");
    let twin = Controller::new(Secrets, client.clone()).with_name("test.kubeward.dev/configs");
    let refused = Operator::new(client)
        .with_reconciler(Configs)
        .expect("configs")
        .with_controller(twin);
    match refused {
        Err(OperatorError::DuplicateController(name)) => {
            assert_eq!(name, "test.kubeward.dev/configs");
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
}
