//! Discovery, CRD registration and built-in resources of the in-process API server.

mod apiserver_support;

use std::time::Duration;

use apiserver_support::{raw, rollout, rollout_crd_json, rollouts};
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams, WatchParams};
use kube::discovery::{Discovery, Scope};
use kubeward_testing::ApiServer;
use serde_json::json;

#[tokio::test]
async fn a_posted_crd_is_established_and_appears_in_discovery() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(rollout_crd_json(true)).unwrap();
    let created = crds.create(&PostParams::default(), &crd).await.unwrap();
    // The create answers the fresh status, as kube-apiserver's strategy leaves it; the
    // controllers' write that accepts the names and establishes the CRD comes after.
    let fresh = created.status.unwrap();
    assert_eq!(fresh.conditions, None);
    assert_eq!(fresh.accepted_names.map(|n| n.kind), Some(String::new()));
    assert_eq!(fresh.stored_versions, Some(vec!["v1".to_owned()]));
    let name = created.metadata.name.unwrap();
    let stored = crds.get(&name).await.unwrap();
    assert_eq!(
        stored
            .status
            .as_ref()
            .and_then(|s| s.accepted_names.as_ref())
            .map(|n| n.kind.as_str()),
        Some("Rollout")
    );
    assert_ne!(
        stored.metadata.resource_version,
        created.metadata.resource_version
    );
    let conditions = stored.status.unwrap().conditions.unwrap();
    for ty in ["NamesAccepted", "Established"] {
        assert!(
            conditions
                .iter()
                .any(|c| c.type_ == ty && c.status == "True"),
            "{ty} missing: {conditions:?}"
        );
    }
    let discovery = Discovery::new(client.clone()).run().await.unwrap();
    let group = discovery
        .get("demo.kubeward.dev")
        .expect("group discovered");
    let (ar, caps) = group.recommended_kind("Rollout").expect("kind discovered");
    assert_eq!(ar.plural, "rollouts");
    assert_eq!(caps.scope, Scope::Namespaced);
    assert!(
        caps.subresources
            .iter()
            .any(|(sub, _)| sub.plural == "rollouts/status" || sub.plural == "status")
    );
    rollouts(&client, "default")
        .create(&PostParams::default(), &rollout("web", json!({})))
        .await
        .unwrap();
    let (code, list) = raw(
        &client,
        "GET",
        "/apis/demo.kubeward.dev/v1/rollouts",
        None,
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(list["kind"], "RolloutList");
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn cluster_scoped_crds_are_served_without_namespaces() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let mut crd = rollout_crd_json(false);
    crd["spec"]["scope"] = json!("Cluster");
    let crd: CustomResourceDefinition = serde_json::from_value(crd).unwrap();
    server.install_crd(&crd).unwrap();
    let body = json!({"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "metadata": {"name": "global"}});
    let (code, created) = raw(
        &client,
        "POST",
        "/apis/demo.kubeward.dev/v1/rollouts",
        Some("application/json"),
        Some(body.clone()),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    assert!(created["metadata"].get("namespace").is_none());
    let (code, _) = raw(
        &client,
        "POST",
        "/apis/demo.kubeward.dev/v1/namespaces/default/rollouts",
        Some("application/json"),
        Some(body),
    )
    .await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn version_and_legacy_discovery_documents_are_served() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(version.major, "1");
    let core = client.list_core_api_versions().await.unwrap();
    assert_eq!(core.versions, ["v1"]);
    let v1 = client.list_core_api_resources("v1").await.unwrap();
    for name in ["namespaces", "configmaps", "secrets", "events"] {
        assert!(
            v1.resources.iter().any(|r| r.name == name),
            "{name} in /api/v1"
        );
    }
    let groups = client.list_api_groups().await.unwrap();
    for group in [
        "events.k8s.io",
        "coordination.k8s.io",
        "apiextensions.k8s.io",
    ] {
        assert!(
            groups.groups.iter().any(|g| g.name == group),
            "{group} in /apis"
        );
    }
    let leases = client
        .list_api_group_resources("coordination.k8s.io/v1")
        .await
        .unwrap();
    assert!(
        leases
            .resources
            .iter()
            .any(|r| r.name == "leases" && r.namespaced)
    );
}

#[tokio::test]
async fn built_in_namespaces_exist_and_builtin_kinds_round_trip() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for ns in ["default", "kube-system"] {
        let got = namespaces.get(ns).await.unwrap();
        assert_eq!(got.status.and_then(|s| s.phase).as_deref(), Some("Active"));
    }
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-system");
    let lease: Lease = serde_json::from_value(json!({
        "metadata": {"name": "leader"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
    }))
    .unwrap();
    let created = leases.create(&PostParams::default(), &lease).await.unwrap();
    assert_eq!(created.spec.unwrap().holder_identity.as_deref(), Some("a"));
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let mut secret = Secret::default();
    secret.metadata.name = Some("s".into());
    secret.string_data = Some([("k".to_string(), "v".to_string())].into());
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();

    let mut ns = Namespace::default();
    ns.metadata.name = Some("team".into());
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "team");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    cms.create(&PostParams::default(), &cm).await.unwrap();
    namespaces
        .delete("team", &Default::default())
        .await
        .unwrap();
    assert!(
        cms.get_opt("a").await.unwrap().is_none(),
        "deleting a namespace deletes its contents"
    );
}

#[tokio::test]
async fn watch_response_headers_arrive_before_any_event() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    let rv = server.resource_version().to_string();
    // Nothing will ever be sent on this watch; `watch` still returns once headers arrive.
    let stream = tokio::time::timeout(
        Duration::from_secs(30),
        cms.watch(&WatchParams::default(), &rv),
    )
    .await;
    let mut stream = stream.expect("headers flushed at once").unwrap().boxed();
    assert!(futures::poll!(stream.next()).is_pending());
}

#[tokio::test]
async fn dropping_the_server_stops_serving() {
    let server = ApiServer::start().await.unwrap();
    let addr = server.addr();
    drop(server);
    tokio::task::yield_now().await;
    let connected = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match tokio::net::TcpStream::connect(addr).await {
                Err(_) => return,
                Ok(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
    })
    .await;
    assert!(connected.is_ok(), "the listener was closed");
}

#[tokio::test]
async fn shutdown_frees_the_port_for_a_fixed_port_server() {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = probe.local_addr().unwrap().port();
    drop(probe);
    let server = ApiServer::builder().port(port).start().await.unwrap();
    assert_eq!(server.addr().port(), port);
    server.client().unwrap().apiserver_version().await.unwrap();
    server.shutdown().await;
    let again = ApiServer::builder().port(port).start().await.unwrap();
    again.client().unwrap().apiserver_version().await.unwrap();
}

#[tokio::test]
async fn each_served_crd_version_has_its_own_status_subresource_setting() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let mut crd = rollout_crd_json(true);
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    v2.as_object_mut().unwrap().remove("subresources");
    let mut v3 = v2.clone();
    v3["name"] = json!("v3");
    v3["served"] = json!(false);
    crd["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .extend([v2, v3]);
    let crd: CustomResourceDefinition = serde_json::from_value(crd).unwrap();
    server.install_crd(&crd).unwrap();
    let v1 = client
        .list_api_group_resources("demo.kubeward.dev/v1")
        .await
        .unwrap();
    assert!(v1.resources.iter().any(|r| r.name == "rollouts/status"));
    let v2 = client
        .list_api_group_resources("demo.kubeward.dev/v2")
        .await
        .unwrap();
    assert!(v2.resources.iter().any(|r| r.name == "rollouts"));
    assert!(!v2.resources.iter().any(|r| r.name == "rollouts/status"));
    assert!(
        client
            .list_api_group_resources("demo.kubeward.dev/v3")
            .await
            .is_err(),
        "unserved versions are not served"
    );
    let body = json!({"apiVersion": "demo.kubeward.dev/v2", "kind": "Rollout", "metadata": {"name": "web"}, "status": {"ready": true}});
    let (code, created) = raw(
        &client,
        "POST",
        "/apis/demo.kubeward.dev/v2/namespaces/default/rollouts",
        Some("application/json"),
        Some(body),
    )
    .await;
    assert_eq!(code, 201);
    assert_eq!(
        created["status"]["ready"], true,
        "v2 has no status subresource"
    );
    let (code, as_v1) = raw(
        &client,
        "GET",
        "/apis/demo.kubeward.dev/v1/namespaces/default/rollouts/web",
        None,
        None,
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(
        as_v1["apiVersion"], "demo.kubeward.dev/v1",
        "one store, served at the requested version"
    );
}
