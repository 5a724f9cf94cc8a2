//! `kubectl` (unmodified, from PATH) against the in-process API server: create a CRD and an
//! object from YAML, get it, describe it with its events, delete it.

mod apiserver_support;

use apiserver_support::kubectl_for;

use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubeward_testing::ApiServer;
use serde_json::json;

const CRD_YAML: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: rollouts.demo.kubeward.dev
spec:
  group: demo.kubeward.dev
  scope: Namespaced
  names:
    plural: rollouts
    singular: rollout
    kind: Rollout
    listKind: RolloutList
  versions:
    - name: v1
      served: true
      storage: true
      subresources:
        status: {}
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
"#;

const ROLLOUT_YAML: &str = r#"apiVersion: demo.kubeward.dev/v1
kind: Rollout
metadata:
  name: web
  namespace: default
spec:
  replicas: 3
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_creates_gets_describes_and_deletes_a_custom_resource() {
    let server = ApiServer::start().await.unwrap();
    let (k, dir) = kubectl_for(&server);
    let crd = dir.join("crd.yaml");
    std::fs::write(&crd, CRD_YAML).unwrap();
    let obj = dir.join("rollout.yaml");
    std::fs::write(&obj, ROLLOUT_YAML).unwrap();

    let kc = k.clone();
    let (crd2, obj2) = (crd.clone(), obj.clone());
    let created = tokio::task::spawn_blocking(move || {
        let a = kc.ok(&["create", "-f", crd2.to_str().unwrap()]);
        let b = kc.ok(&["create", "-f", obj2.to_str().unwrap()]);
        (a, b)
    })
    .await
    .unwrap();
    assert!(
        created.0.contains(
            "customresourcedefinition.apiextensions.k8s.io/rollouts.demo.kubeward.dev created"
        ),
        "{}",
        created.0
    );
    assert!(
        created.1.contains("rollout.demo.kubeward.dev/web created"),
        "{}",
        created.1
    );

    let stored = server
        .object("demo.kubeward.dev/v1", "rollouts", Some("default"), "web")
        .expect("stored");
    assert_eq!(stored["spec"]["replicas"], 3);

    let events: Api<Event> = Api::namespaced(server.client().unwrap(), "default");
    let event: Event = serde_json::from_value(json!({
        "metadata": {"name": "web.1", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "demo.kubeward.dev/rollouts",
        "reportingInstance": "rollouts-0",
        "action": "Reconcile",
        "reason": "RolloutStarted",
        "type": "Normal",
        "note": "rolling out generation 1",
        "regarding": {"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "namespace": "default",
                      "name": "web", "uid": stored["metadata"]["uid"]},
    }))
    .unwrap();
    events.create(&PostParams::default(), &event).await.unwrap();

    // Both kinds of apply: client-side (a merge patch for custom resources) and server-side.
    let scaled = dir.join("rollout-4.yaml");
    std::fs::write(&scaled, ROLLOUT_YAML.replace("replicas: 3", "replicas: 4")).unwrap();
    let ssa = dir.join("rollout-5.yaml");
    std::fs::write(&ssa, ROLLOUT_YAML.replace("replicas: 3", "replicas: 5")).unwrap();
    let kc = k.clone();
    let applied = tokio::task::spawn_blocking(move || {
        let client_side = kc.ok(&["apply", "-f", scaled.to_str().unwrap()]);
        let server_side = kc.ok(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            ssa.to_str().unwrap(),
        ]);
        (client_side, server_side)
    })
    .await
    .unwrap();
    assert!(
        applied
            .0
            .contains("rollout.demo.kubeward.dev/web configured"),
        "{}",
        applied.0
    );
    assert!(
        applied
            .1
            .contains("rollout.demo.kubeward.dev/web serverside-applied"),
        "{}",
        applied.1
    );
    let stored = server
        .object("demo.kubeward.dev/v1", "rollouts", Some("default"), "web")
        .expect("stored");
    assert_eq!(stored["spec"]["replicas"], 5);
    assert!(
        stored["metadata"]["managedFields"]
            .as_array()
            .is_some_and(|m| m.iter().any(|e| e["manager"] == "kubectl")),
        "kubectl's server-side apply is recorded: {}",
        stored["metadata"]["managedFields"]
    );

    let kc = k.clone();
    let (get, describe, deleted, after) = tokio::task::spawn_blocking(move || {
        let get = kc.ok(&["get", "rollouts", "web"]);
        let describe = kc.ok(&["describe", "rollout", "web"]);
        let deleted = kc.ok(&["delete", "rollout", "web"]);
        let after = kc.run(&["get", "rollout", "web"]);
        (get, describe, deleted, after)
    })
    .await
    .unwrap();
    assert!(
        get.lines().next().unwrap_or_default().starts_with("NAME"),
        "{get}"
    );
    assert!(
        get.lines().nth(1).unwrap_or_default().starts_with("web "),
        "{get}"
    );
    assert!(describe.contains("Name:         web"), "{describe}");
    assert!(describe.contains("Replicas:  5"), "{describe}");
    assert!(
        describe.contains("RolloutStarted"),
        "describe lists the event:\n{describe}"
    );
    assert!(describe.contains("rolling out generation 1"), "{describe}");
    assert!(
        deleted.contains("rollout.demo.kubeward.dev \"web\" deleted"),
        "{deleted}"
    );
    assert!(!after.0, "{}", after.1);
    assert!(
        after.1.contains("NotFound") || after.1.contains("not found"),
        "{}",
        after.1
    );
    assert!(
        server
            .object("demo.kubeward.dev/v1", "rollouts", Some("default"), "web")
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_works_with_built_in_configmaps_and_events() {
    let server = ApiServer::start().await.unwrap();
    let (k, _) = kubectl_for(&server);
    let kc = k.clone();
    // kubectl's typed generators send protobuf.
    let created = tokio::task::spawn_blocking(move || {
        kc.ok(&[
            "create",
            "configmap",
            "settings",
            "--from-literal=mode=fast",
        ])
    })
    .await
    .unwrap();
    assert!(created.contains("configmap/settings created"), "{created}");
    let stored = server
        .object("v1", "configmaps", Some("default"), "settings")
        .expect("stored");
    assert_eq!(stored["data"]["mode"], "fast");
    // The empty generateName of the protobuf body decodes to Go's zero value, which JSON omits.
    assert!(stored["metadata"].get("generateName").is_none(), "{stored}");

    let kc = k.clone();
    let created =
        tokio::task::spawn_blocking(move || kc.ok(&["create", "serviceaccount", "robot"]))
            .await
            .unwrap();
    assert!(
        created.contains("serviceaccount/robot created"),
        "{created}"
    );
    let posted = server
        .requests()
        .into_iter()
        .find(|r| r.method == http::Method::POST && r.path.ends_with("/serviceaccounts"))
        .expect("the serviceaccount POST");
    assert_eq!(
        posted.content_type.as_deref(),
        Some("application/vnd.kubernetes.protobuf"),
        "kubectl sends protobuf"
    );
    assert!(
        server
            .object("v1", "serviceaccounts", Some("default"), "robot")
            .is_some()
    );

    let events: Api<Event> = Api::namespaced(server.client().unwrap(), "default");
    let event: Event = serde_json::from_value(json!({
        "metadata": {"name": "settings.1", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "demo.kubeward.dev/config",
        "reportingInstance": "config-0",
        "action": "Validate",
        "reason": "ConfigInvalid",
        "type": "Warning",
        "note": "mode fast needs a cache",
        "regarding": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default",
                      "name": "settings", "uid": stored["metadata"]["uid"]},
    }))
    .unwrap();
    events.create(&PostParams::default(), &event).await.unwrap();

    let kc = k.clone();
    let (describe, listed, deleted) = tokio::task::spawn_blocking(move || {
        (
            kc.ok(&["describe", "configmap", "settings"]),
            kc.ok(&["get", "events"]),
            kc.ok(&["delete", "configmap", "settings"]),
        )
    })
    .await
    .unwrap();
    assert!(describe.contains("mode:"), "{describe}");
    assert!(
        describe.contains("ConfigInvalid") && describe.contains("mode fast needs a cache"),
        "{describe}"
    );
    let header: Vec<&str> = listed
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{listed}"
    );
    assert!(
        listed.contains("Warning   ConfigInvalid   configmap/settings   mode fast needs a cache"),
        "{listed}"
    );
    assert!(
        deleted.contains("configmap \"settings\" deleted"),
        "{deleted}"
    );
    assert!(
        server
            .object("v1", "configmaps", Some("default"), "settings")
            .is_none()
    );
}

/// How long a running kubectl gets to print its next line: generous.
const LINE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_prints_updates_as_rows_under_the_lists_header() {
    let server = ApiServer::start().await.unwrap();
    let (k, _) = kubectl_for(&server);
    server
        .install_crd(&apiserver_support::rollout_crd_with_columns())
        .unwrap();
    let api = apiserver_support::rollouts(&server.client().unwrap(), "default");
    api.create(
        &PostParams::default(),
        &apiserver_support::rollout("web", json!({"replicas": 3})),
    )
    .await
    .unwrap();
    let lines = k.lines(&["get", "rollouts", "-w"]);
    let (lines, listed) = tokio::task::spawn_blocking(move || {
        let listed = lines.next_lines(2, LINE_TIMEOUT);
        (lines, listed)
    })
    .await
    .unwrap();
    let columns =
        |line: &str| -> Vec<String> { line.split_whitespace().map(str::to_string).collect() };
    assert_eq!(
        columns(&listed[0]),
        ["NAME", "REPLICAS", "AGE"],
        "{listed:?}"
    );
    assert_eq!(columns(&listed[1])[..2], ["web", "3"], "{listed:?}");

    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .unwrap();
    api.create(
        &PostParams::default(),
        &apiserver_support::rollout("api", json!({"replicas": 1})),
    )
    .await
    .unwrap();
    let updates = tokio::task::spawn_blocking(move || lines.next_lines(2, LINE_TIMEOUT))
        .await
        .unwrap();
    // The updates are rows of the same table: no second header, the same three columns.
    let rows: Vec<Vec<String>> = updates.iter().map(|l| columns(l)).collect();
    assert_eq!(rows[0].len(), 3, "{updates:?}");
    assert_eq!(rows[0][..2], ["web", "4"], "{updates:?}");
    assert_eq!(rows[1][..2], ["api", "1"], "{updates:?}");
}
