//! Fault injection, the request log, restart and authorization of the in-process API server.

mod apiserver_support;

use std::time::Duration;

use futures::StreamExt;
use http::Method;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::PolicyRule;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kubeward_testing::{ApiServer, Fault, FaultAction, Identity};

/// The HTTP statuses the server answered its POSTs with, in order (0: no answer).
fn post_answers(server: &ApiServer) -> Vec<u16> {
    server
        .requests()
        .iter()
        .filter(|r| r.method == Method::POST)
        .map(|r| r.status)
        .collect()
}

fn cm(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm
}

#[tokio::test]
async fn a_status_fault_hits_only_its_route_and_verb_the_given_number_of_times() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    server.faults().add(
        Fault::new(FaultAction::Status(500))
            .method(Method::POST)
            .resource("", "configmaps")
            .times(1),
    );
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let err = cms
        .create(&PostParams::default(), &cm("a"))
        .await
        .unwrap_err();
    assert!(matches!(err, kube::Error::Api(s) if s.code == 500 && s.reason == "InternalError"));
    assert!(
        cms.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty(),
        "the fault did not write; GET is unaffected"
    );
    cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let events: Api<Event> = Api::namespaced(client, "default");
    events.list(&ListParams::default()).await.unwrap();
}

#[tokio::test]
async fn a_fault_on_events_k8s_io_leaves_core_v1_events_alone() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    server
        .faults()
        .add(Fault::new(FaultAction::Status(503)).resource("events.k8s.io", "events"));
    let v1: Api<Event> = Api::namespaced(client.clone(), "default");
    let core: Api<k8s_openapi::api::core::v1::Event> = Api::namespaced(client, "default");
    core.list(&ListParams::default()).await.unwrap();
    server.faults().clear();
    v1.list(&ListParams::default()).await.unwrap();
}

#[tokio::test]
async fn close_connection_and_hang_faults_fail_the_request() {
    let server = ApiServer::start().await.unwrap();
    let mut config = kube::Config::new(server.url().parse().unwrap());
    config.read_timeout = Some(Duration::from_millis(200));
    config.default_retry = false;
    let client = kube::Client::try_from(config).unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    server.faults().add(
        Fault::new(FaultAction::CloseConnection)
            .method(Method::GET)
            .times(1),
    );
    assert!(cms.get("x").await.is_err());
    server.faults().add(
        Fault::new(FaultAction::Hang)
            .path_prefix("/api/v1/namespaces/default/configmaps")
            .times(1),
    );
    assert!(
        cms.list(&ListParams::default()).await.is_err(),
        "the client timed out"
    );
    assert!(
        cms.list(&ListParams::default()).await.is_ok(),
        "the fault is spent"
    );
}

/// Commit-then-fail faults serve the write, then answer a status (a 504 that kube's client
/// retries into its own committed twin: 409 AlreadyExists) or drop the connection; a user fault
/// spares other users.
#[tokio::test]
async fn commit_then_fail_faults_store_the_write_and_lose_the_answer() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    server.faults().add(
        Fault::new(FaultAction::CommitThenStatus(504))
            .method(Method::POST)
            .times(1),
    );
    match cms.create(&PostParams::default(), &cm("a")).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(
                (status.code, status.reason.as_str()),
                (409, "AlreadyExists")
            )
        }
        other => panic!("expected the retry to meet the committed create, got {other:?}"),
    }
    assert!(
        cms.get_opt("a").await.unwrap().is_some(),
        "the create committed"
    );

    server.faults().add(
        Fault::new(FaultAction::CommitThenCloseConnection)
            .method(Method::POST)
            .times(1),
    );
    assert!(matches!(
        cms.create(&PostParams::default(), &cm("b")).await,
        Err(kube::Error::HyperError(_) | kube::Error::Service(_))
    ));
    assert!(
        cms.get_opt("b").await.unwrap().is_some(),
        "the create committed"
    );
    assert_eq!(post_answers(&server), [504, 409, 0]);

    server
        .faults()
        .add(Fault::new(FaultAction::Status(500)).user("someone-else"));
    cms.create(&PostParams::default(), &cm("c")).await.unwrap();
}

/// A write that commits and is never answered: the client's own deadline decides, and the write
/// is stored.
#[tokio::test]
async fn a_commit_then_hang_fault_stores_the_write_and_never_answers() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    server.faults().add(
        Fault::new(FaultAction::CommitThenHang)
            .method(Method::POST)
            .times(1),
    );
    let (params, a) = (PostParams::default(), cm("a"));
    let create = cms.create(&params, &a);
    assert!(
        tokio::time::timeout(Duration::from_secs(1), create)
            .await
            .is_err(),
        "no answer"
    );
    assert!(
        cms.get_opt("a").await.unwrap().is_some(),
        "the create committed"
    );
    assert_eq!(post_answers(&server), [0], "logged as unanswered");
}

/// A watch opened under a `DelayWatchEvents` fault delivers every event, in order, but late: by
/// the time a watch opened without it has seen three creates, the delayed one has seen none
/// (its delay, 10 s, is far beyond what the undelayed watch takes), and then it sees all three.
/// Only the watch opened next meets the fault; lists pass it by.
#[tokio::test]
async fn a_delayed_watch_delivers_every_event_in_order_and_late() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    server.faults().add(
        Fault::new(FaultAction::DelayWatchEvents(Duration::from_secs(10)))
            .resource("", "configmaps")
            .times(1),
    );
    cms.list(&ListParams::default()).await.unwrap();
    let params = WatchParams::default().disable_bookmarks();
    let mut delayed = cms.watch(&params, "0").await.unwrap().boxed();
    let mut prompt = cms.watch(&params, "0").await.unwrap().boxed();
    for name in ["a", "b", "c"] {
        cms.create(&PostParams::default(), &cm(name)).await.unwrap();
    }
    let added = |event: Option<Result<WatchEvent<ConfigMap>, kube::Error>>| match event {
        Some(Ok(WatchEvent::Added(cm))) => cm.metadata.name.unwrap_or_default(),
        other => panic!("expected ADDED, got {other:?}"),
    };
    for name in ["a", "b", "c"] {
        assert_eq!(added(prompt.next().await), name);
    }
    assert!(
        futures::FutureExt::now_or_never(delayed.next()).is_none(),
        "nothing delivered yet"
    );
    for name in ["a", "b", "c"] {
        assert_eq!(added(delayed.next().await), name);
    }
}

#[tokio::test]
async fn latency_faults_delay_but_serve() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    server
        .faults()
        .add(Fault::new(FaultAction::Latency(Duration::from_millis(10))).times(1));
    cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    assert!(cms.get("a").await.is_ok());
}

#[tokio::test]
async fn the_request_log_records_method_path_query_content_type_and_status() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let _ = cms.get("missing").await;
    cms.list(&ListParams::default().labels("x=y"))
        .await
        .unwrap();
    let log = server.requests();
    let create = log.iter().find(|r| r.method == Method::POST).unwrap();
    assert_eq!(create.path, "/api/v1/namespaces/default/configmaps");
    assert_eq!(create.status, 201);
    assert_eq!(create.content_type.as_deref(), Some("application/json"));
    let missing = log.iter().find(|r| r.path.ends_with("/missing")).unwrap();
    assert_eq!(missing.status, 404);
    let list = log
        .iter()
        .find(|r| r.query.contains("labelSelector"))
        .unwrap();
    assert!(
        list.query.split('&').any(|kv| kv == "labelSelector=x%3Dy"),
        "{}",
        list.query
    );
    server.request_log().clear();
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn restart_keeps_state_serves_on_the_same_port_and_drops_watches() {
    let server = ApiServer::start().await.unwrap();
    let url = server.url();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let mut stream = cms
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    assert!(matches!(
        stream.next().await,
        Some(Ok(WatchEvent::Added(_)))
    ));
    server.restart().await.unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match stream.next().await {
                None | Some(Err(_)) => return,
                Some(Ok(WatchEvent::Bookmark(_))) => continue,
                Some(Ok(other)) => panic!("unexpected event after restart: {other:?}"),
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the open watch was dropped");
    assert_eq!(server.url(), url);
    assert!(cms.get("a").await.is_ok(), "state survives the restart");
}

#[tokio::test]
async fn clients_with_rules_get_403_outside_them() {
    let server = ApiServer::start().await.unwrap();
    let rules = vec![PolicyRule {
        api_groups: Some(vec!["".into()]),
        resources: Some(vec!["configmaps".into()]),
        verbs: vec!["get".into(), "list".into()],
        ..Default::default()
    }];
    let client = server
        .client_for(&Identity::with_rules(
            "system:serviceaccount:demo:op",
            rules,
        ))
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    cms.list(&ListParams::default()).await.unwrap();
    let err = cms
        .create(&PostParams::default(), &cm("a"))
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 403);
            assert_eq!(s.reason, "Forbidden");
            assert_eq!(
                s.message,
                "configmaps is forbidden: User \"system:serviceaccount:demo:op\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"default\""
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.status == 403 && r.user == "system:serviceaccount:demo:op")
    );
}

/// OwnerReferencesPermissionEnforcement: blocking an owner's deletion from a child needs
/// `update` on the owner's `finalizers`; changing an existing object's owner references needs
/// `delete` on it.
#[tokio::test]
async fn owner_references_need_finalizer_and_delete_permissions() {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use kube::api::{Patch, PatchParams};
    let server = ApiServer::start().await.unwrap();
    let admin: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    let owner = admin
        .create(&PostParams::default(), &cm("owner"))
        .await
        .unwrap();
    let owner_ref = |block: bool| OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: "owner".into(),
        uid: owner.metadata.uid.clone().unwrap(),
        block_owner_deletion: Some(block),
        controller: Some(true),
    };
    let child = |name: &str, block: bool| {
        let mut child = cm(name);
        child.metadata.owner_references = Some(vec![owner_ref(block)]);
        child
    };
    let rule = |resources: &[&str], verbs: &[&str]| PolicyRule {
        api_groups: Some(vec!["".into()]),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..Default::default()
    };
    let user = "system:serviceaccount:demo:op";
    let limited: Api<ConfigMap> = Api::namespaced(
        server
            .client_for(&Identity::with_rules(
                user,
                vec![rule(&["configmaps"], &["create", "patch"])],
            ))
            .unwrap(),
        "default",
    );
    let forbidden = |result: Result<ConfigMap, kube::Error>| match result {
        Err(kube::Error::Api(status)) if status.code == 403 => status.message,
        other => panic!("expected 403, got {other:?}"),
    };

    // A plain owner reference needs nothing more; a blocking one needs update on finalizers.
    limited
        .create(&PostParams::default(), &child("plain", false))
        .await
        .unwrap();
    assert_eq!(
        forbidden(
            limited
                .create(&PostParams::default(), &child("blocking", true))
                .await
        ),
        "configmaps \"blocking\" is forbidden: cannot set blockOwnerDeletion if an ownerReference \
         refers to a resource you can't set finalizers on: , <nil>"
    );
    // Changing the owner references of an existing object needs delete on it.
    let patch = serde_json::json!({"metadata": {"ownerReferences": [owner_ref(true)]}});
    assert_eq!(
        forbidden(
            limited
                .patch("plain", &PatchParams::default(), &Patch::Merge(&patch))
                .await
        ),
        "configmaps \"plain\" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>"
    );

    let allowed: Api<ConfigMap> = Api::namespaced(
        server
            .client_for(&Identity::with_rules(
                user,
                vec![
                    rule(&["configmaps"], &["create", "patch", "delete"]),
                    rule(&["configmaps/finalizers"], &["update"]),
                ],
            ))
            .unwrap(),
        "default",
    );
    allowed
        .create(&PostParams::default(), &child("blocking", true))
        .await
        .unwrap();
    allowed
        .patch("plain", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}
