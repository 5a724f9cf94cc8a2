//! Helpers shared by the `apiserver_*` integration tests.
#![allow(dead_code)]

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::PostParams;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::{Client, client::Body};
use kubeward_testing::ApiServer;
use kubeward_testing::kubectl::Kubectl;
use serde_json::{Value, json};

/// The CRD of `rollouts.demo.kubeward.dev` (namespaced, v1, with or without the status
/// subresource).
pub fn rollout_crd_json(status_subresource: bool) -> Value {
    let mut version = json!({
        "name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
    });
    if status_subresource {
        version["subresources"] = json!({"status": {}});
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "rollouts.demo.kubeward.dev"},
        "spec": {
            "group": "demo.kubeward.dev",
            "scope": "Namespaced",
            "names": {"plural": "rollouts", "singular": "rollout", "kind": "Rollout", "listKind": "RolloutList"},
            "versions": [version],
        },
    })
}

/// [`rollout_crd_json`] as the typed CRD.
pub fn rollout_crd(status_subresource: bool) -> CustomResourceDefinition {
    serde_json::from_value(rollout_crd_json(status_subresource)).expect("valid CRD")
}

/// [`rollout_crd`] (with the status subresource) showing `Replicas` and `Age` columns, as
/// `kubectl get` prints them.
pub fn rollout_crd_with_columns() -> CustomResourceDefinition {
    let mut crd = rollout_crd_json(true);
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = json!([
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]);
    serde_json::from_value(crd).expect("valid CRD")
}

/// The `ApiResource` of rollouts.
pub fn rollout_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("demo.kubeward.dev", "v1", "Rollout"),
        "rollouts",
    )
}

/// Rollouts in `ns`.
pub fn rollouts(client: &Client, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &rollout_resource())
}

/// A rollout object named `name` with `spec`.
pub fn rollout(name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "demo.kubeward.dev/v1",
        "kind": "Rollout",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .expect("valid rollout")
}

/// A server serving the rollout CRD ([`rollout_crd`], with or without the status subresource),
/// and the rollouts of `default`.
pub async fn rollout_server(status_subresource: bool) -> (ApiServer, Api<DynamicObject>) {
    serving(&rollout_crd(status_subresource)).await
}

/// A server serving `crd` (one of rollouts), and the rollouts of `default`.
async fn serving(crd: &CustomResourceDefinition) -> (ApiServer, Api<DynamicObject>) {
    let server = ApiServer::start().await.expect("server starts");
    server.install_crd(crd).expect("CRD installs");
    let api = rollouts(&server.client().expect("client"), "default");
    (server, api)
}

/// [`rollout_server`] with the status subresource, and a `web` rollout created in `default`
/// with `spec`: the server, the rollouts of `default` and the created object.
pub async fn server_with_web(spec: Value) -> (ApiServer, Api<DynamicObject>, DynamicObject) {
    server_of_crd_with_web(&rollout_crd(true), spec).await
}

/// [`server_with_web`] serving `crd` (a rollout CRD, e.g. [`rollout_crd_with_columns`]).
pub async fn server_of_crd_with_web(
    crd: &CustomResourceDefinition,
    spec: Value,
) -> (ApiServer, Api<DynamicObject>, DynamicObject) {
    let (server, api) = serving(crd).await;
    let created = api
        .create(&PostParams::default(), &rollout("web", spec))
        .await
        .expect("web is created");
    (server, api, created)
}

/// A raw request: the HTTP status and the JSON body (Null if empty or not JSON).
pub async fn raw(
    client: &Client,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let bytes = body
        .map(|b| serde_json::to_vec(&b).expect("json"))
        .unwrap_or_default();
    raw_bytes(client, method, path, content_type, bytes).await
}

/// A raw request with a body of any encoding: the HTTP status and the JSON body.
pub async fn raw_bytes(
    client: &Client,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> (u16, Value) {
    let mut builder = http::Request::builder().method(method).uri(path);
    if let Some(ct) = content_type {
        builder = builder.header("content-type", ct);
    }
    let req = builder.body(Body::from(body)).expect("request");
    let resp = client.send(req).await.expect("response");
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect_bytes().await.expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// The Table `kubectl get` reads of the list at `path`, and its column names.
pub async fn table(client: &Client, path: &str) -> (Value, Vec<String>) {
    let (status, table) =
        raw_accept(client, path, "application/json;as=Table;v=v1;g=meta.k8s.io").await;
    assert_eq!(status, 200, "{table}");
    let names = table["columnDefinitions"]
        .as_array()
        .expect("columnDefinitions")
        .iter()
        .map(|c| c["name"].as_str().expect("a column's name").to_owned())
        .collect();
    (table, names)
}

/// A raw GET with an `Accept` header: the HTTP status and the JSON body.
pub async fn raw_accept(client: &Client, path: &str, accept: &str) -> (u16, Value) {
    let req = http::Request::builder()
        .method("GET")
        .uri(path)
        .header("accept", accept)
        .body(Body::from(Vec::new()))
        .expect("request");
    let resp = client.send(req).await.expect("response");
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect_bytes().await.expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// A raw watch with an `Accept` header: its events, objects as JSON.
pub async fn raw_watch(
    client: &Client,
    path: &str,
    accept: &str,
) -> futures::stream::BoxStream<'static, kube::Result<kube::api::WatchEvent<Value>>> {
    use futures::StreamExt;
    let req = http::Request::builder()
        .method("GET")
        .uri(path)
        .header("accept", accept)
        .body(Vec::new())
        .expect("request");
    client
        .request_events::<Value>(req)
        .await
        .expect("watch starts")
        .boxed()
}

/// What `kubectl get` asks for: a Table, else the objects.
pub const KUBECTL_TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

/// kubectl for `server`: a kubeconfig (and cache) in a directory of the server's own, which is
/// returned for the test's files.
pub fn kubectl_for(server: &ApiServer) -> (Kubectl, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("kubeward-kubectl-{}", server.addr().port()));
    std::fs::create_dir_all(&dir).expect("kubectl's directory");
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
    (Kubectl::new(&kubeconfig), dir)
}
