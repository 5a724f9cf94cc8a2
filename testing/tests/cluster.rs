//! `Cluster` on whichever backend `KUBEWARD_TEST_APISERVER` picks (the embedded server by
//! default; `scripts/test` runs this file again on the real kube-apiserver): the same clients,
//! RBAC, faults, request log and garbage collection on both.

use std::time::Duration;

use http::Method;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use kubeward_testing::{Cluster, Fault, FaultAction, Identity};

async fn cluster() -> Cluster {
    let cluster = Cluster::start().await.expect("cluster starts");
    eprintln!("backend: {}", cluster.describe());
    cluster
}

fn config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn rule(resource: &str, verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(vec![resource.into()]),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..PolicyRule::default()
    }
}

fn api_code(error: &kube::Error) -> Option<u16> {
    match error {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

/// Polls `done` every 20 ms; bounded only so that a broken backend fails instead of hanging.
async fn eventually<F: std::future::Future<Output = bool>>(
    what: &str,
    mut done: impl FnMut() -> F,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !done().await {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_administrator_creates_reads_and_deletes() {
    let cluster = cluster().await;
    let cms: Api<ConfigMap> = Api::namespaced(cluster.client().unwrap(), "default");
    let created = cms
        .create(&PostParams::default(), &config_map("settings"))
        .await
        .unwrap();
    assert!(created.metadata.uid.is_some());
    assert_eq!(
        cms.get("settings").await.unwrap().metadata.uid,
        created.metadata.uid
    );
    cms.delete("settings", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(api_code(&cms.get("settings").await.unwrap_err()), Some(404));
}

#[tokio::test]
async fn a_service_account_gets_exactly_its_rules_and_is_logged_as_itself() {
    let cluster = cluster().await;
    let admin: Api<ConfigMap> = Api::namespaced(cluster.client().unwrap(), "default");
    admin
        .create(&PostParams::default(), &config_map("settings"))
        .await
        .unwrap();
    let operator = cluster
        .service_account_client("default", "op", vec![rule("configmaps", &["list"])])
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(operator, "default");
    assert_eq!(cms.list(&Default::default()).await.unwrap().items.len(), 1);
    let denied = cms.get("settings").await.unwrap_err();
    assert_eq!(api_code(&denied), Some(403), "{denied}");
    assert!(
        denied.to_string().contains(
            "User \"system:serviceaccount:default:op\" cannot get resource \"configmaps\""
        ),
        "{denied}"
    );
    let logged: Vec<_> = cluster
        .requests()
        .into_iter()
        .filter(|r| r.user == "system:serviceaccount:default:op" && r.path.ends_with("/settings"))
        .map(|r| (r.method, r.status))
        .collect();
    assert_eq!(logged, [(Method::GET, 403)]);
}

#[tokio::test]
async fn an_impersonated_user_is_authorized_as_that_user() {
    let cluster = cluster().await;
    let someone = cluster
        .client_for(&Identity::user("someone", &["team"]))
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(someone, "default");
    let denied = cms.list(&Default::default()).await.unwrap_err();
    assert_eq!(api_code(&denied), Some(403), "{denied}");
    assert!(
        denied.to_string().contains("User \"someone\" cannot list"),
        "{denied}"
    );
}

#[tokio::test]
async fn a_committed_write_whose_answer_is_lost_is_stored() {
    let cluster = cluster().await;
    cluster.faults().add(
        Fault::new(FaultAction::CommitThenStatus(500))
            .method(Method::POST)
            .resource("", "configmaps")
            .times(1),
    );
    let cms: Api<ConfigMap> = Api::namespaced(cluster.client().unwrap(), "default");
    let lost = cms
        .create(&PostParams::default(), &config_map("in-doubt"))
        .await
        .unwrap_err();
    assert_eq!(api_code(&lost), Some(500), "{lost}");
    assert!(cms.get("in-doubt").await.is_ok(), "the write committed");
    cluster.faults().add(
        Fault::new(FaultAction::Status(500))
            .method(Method::POST)
            .resource("", "configmaps")
            .times(1),
    );
    let refused = cms
        .create(&PostParams::default(), &config_map("refused"))
        .await
        .unwrap_err();
    assert_eq!(api_code(&refused), Some(500), "{refused}");
    assert_eq!(api_code(&cms.get("refused").await.unwrap_err()), Some(404));
    let statuses: Vec<u16> = cluster
        .requests()
        .iter()
        .filter(|r| r.method == Method::POST && r.path.ends_with("/configmaps"))
        .map(|r| r.status)
        .collect();
    assert_eq!(statuses, [500, 500]);
}

#[tokio::test]
async fn a_dependent_of_a_deleted_owner_is_collected() {
    let cluster = cluster().await;
    assert!(cluster.has_controllers(), "{}", cluster.describe());
    let cms: Api<ConfigMap> = Api::namespaced(cluster.client().unwrap(), "default");
    let owner = cms
        .create(&PostParams::default(), &config_map("owner"))
        .await
        .unwrap();
    let mut dependent = config_map("dependent");
    dependent.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: "owner".into(),
        uid: owner.metadata.uid.clone().unwrap(),
        ..OwnerReference::default()
    }]);
    cms.create(&PostParams::default(), &dependent)
        .await
        .unwrap();
    cms.delete("owner", &DeleteParams::default()).await.unwrap();
    eventually("the dependent is collected", || async {
        matches!(cms.get("dependent").await, Err(e) if api_code(&e) == Some(404))
    })
    .await;
}

/// `expire_watches` ends an open watch with `ERROR 410 Expired` (what makes a watcher relist),
/// on either backend.
#[tokio::test]
async fn expired_watches_end_with_410() {
    use futures::StreamExt;
    use kube::api::{WatchEvent, WatchParams};
    let cluster = cluster().await;
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client().unwrap());
    let created = api
        .create(&PostParams::default(), &config_map("before"))
        .await
        .unwrap();
    let version = created.metadata.resource_version.unwrap();
    let mut events = api
        .watch(&WatchParams::default().timeout(60), &version)
        .await
        .unwrap()
        .boxed();
    api.create(&PostParams::default(), &config_map("seen"))
        .await
        .unwrap();
    match events.next().await {
        Some(Ok(WatchEvent::Added(cm))) => assert_eq!(cm.metadata.name.as_deref(), Some("seen")),
        other => panic!("expected the create, got {other:?}"),
    }
    cluster.expire_watches();
    match events.next().await {
        Some(Ok(WatchEvent::Error(status))) => {
            assert_eq!(
                (status.code, status.reason.as_str()),
                (410, "Expired"),
                "{status:?}"
            );
        }
        other => panic!("expected ERROR 410, got {other:?}"),
    }
    assert!(events.next().await.is_none(), "the watch ended");
}

/// `restart` drops every connection — a hung request fails — and serves the same state again.
#[tokio::test]
async fn a_restart_drops_hung_requests_and_keeps_the_state() {
    let cluster = cluster().await;
    let api: Api<ConfigMap> = Api::default_namespaced(cluster.client().unwrap());
    api.create(&PostParams::default(), &config_map("kept"))
        .await
        .unwrap();
    cluster.faults().add(
        Fault::new(FaultAction::Hang)
            .method(Method::GET)
            .path_prefix("/api/v1/namespaces/default/configmaps/kept")
            .times(1),
    );
    let hung = tokio::spawn({
        let api = api.clone();
        async move { api.get("kept").await }
    });
    eventually("the GET is hung", || async {
        cluster
            .requests()
            .iter()
            .any(|r| r.method == Method::GET && r.path.ends_with("/configmaps/kept"))
    })
    .await;
    cluster.restart().await.expect("restarts");
    let result = tokio::time::timeout(Duration::from_secs(30), hung)
        .await
        .expect("the hung request ends with the restart")
        .unwrap();
    assert!(
        result.is_err(),
        "a dropped connection, not an answer: {result:?}"
    );
    let kept = api.get("kept").await.expect("served again");
    assert_eq!(kept.metadata.name.as_deref(), Some("kept"));
}
