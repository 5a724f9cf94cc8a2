//! Helpers shared by the `apiserver_*` integration tests.
#![allow(dead_code)]

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::api::{Patch, PatchParams, PostParams};
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

/// What the typed helpers below need of a kind: an object `Api<K>` reads and writes.
pub trait Object:
    kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug
{
}

impl<K> Object for K where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug
{
}

/// The `K`s of `default`, through `server`'s client.
pub fn default_api<K>(server: &ApiServer) -> Api<K>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope, DynamicType = ()>,
{
    Api::namespaced(server.client().expect("client"), "default")
}

/// Creates `object` (a `K` as JSON) through `api`: the created object as JSON.
pub async fn create<K: Object>(api: &Api<K>, object: Value) -> Result<Value, kube::Error> {
    let object: K = serde_json::from_value(object).expect("a valid object of the kind");
    let created = api.create(&PostParams::default(), &object).await?;
    Ok(serde_json::to_value(created).expect("json"))
}

/// A merge patch of `name`'s main resource through `api`: the patched object as JSON.
pub async fn merge<K: Object>(api: &Api<K>, name: &str, body: Value) -> Result<Value, kube::Error> {
    let patched = api
        .patch(name, &PatchParams::default(), &Patch::Merge(&body))
        .await?;
    Ok(serde_json::to_value(patched).expect("json"))
}

/// A merge patch of `name`'s status subresource through `api`: the patched object as JSON.
pub async fn merge_status<K: Object>(
    api: &Api<K>,
    name: &str,
    body: Value,
) -> Result<Value, kube::Error> {
    let patched = api
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&body))
        .await?;
    Ok(serde_json::to_value(patched).expect("json"))
}

/// The status code and message of the API error `err`.
pub fn api_error(err: kube::Error) -> (u16, String) {
    match err {
        kube::Error::Api(status) => (status.code, status.message),
        other => panic!("not an API error: {other}"),
    }
}

/// The status code and message of the API error `result` must be.
pub fn refusal<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> (u16, String) {
    api_error(result.unwrap_err())
}

/// `object` with the fields of `spec` set in its spec (each replacing the field it names).
pub fn with_spec(mut object: Value, spec: Value) -> Value {
    for (key, value) in spec.as_object().cloned().unwrap_or_default() {
        object["spec"][key] = value;
    }
    object
}

/// The causes' `field: message` of a 422's body.
pub fn causes(body: &Value) -> Vec<String> {
    body["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| {
            format!(
                "{}: {}",
                c["field"].as_str().unwrap(),
                c["message"].as_str().unwrap()
            )
        })
        .collect()
}

/// The resource `name` of a discovery document's `resources`, if listed.
pub fn discovered(list: &Value, name: &str) -> Option<Value> {
    list["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .find(|r| r["name"] == name)
        .cloned()
}

/// Asserts `result` is the API error 422 (Unprocessable Entity) with `message`.
#[track_caller]
pub fn assert_invalid<T: std::fmt::Debug>(result: Result<T, kube::Error>, message: &str) {
    assert_eq!(refusal(result), (422, message.to_owned()));
}

/// Runs `k args` off the async runtime (the server answers on it), asserting success: its
/// output.
pub async fn kubectl_ok(k: &Kubectl, args: &[&str]) -> String {
    let k = k.clone();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        k.ok(&args)
    })
    .await
    .expect("kubectl's thread")
}

/// Asserts the Table `kubectl get` reads of the list at `path`: its column names are `columns`
/// (separated by `", "`) and the cells of its first row at the given indices hold the given
/// values.
pub async fn assert_table(client: &Client, path: &str, columns: &str, cells: &[(usize, Value)]) {
    let (table, names) = table(client, path).await;
    assert_eq!(names, columns.split(", ").collect::<Vec<_>>());
    let row = &table["rows"][0]["cells"];
    for (index, value) in cells {
        assert_eq!(&row[*index], value, "cell {index} of {row}");
    }
}

/// A raw JSON merge patch of `path` with `body`: the HTTP status and the JSON body.
pub async fn raw_merge(client: &Client, path: &str, body: Value) -> (u16, Value) {
    raw(
        client,
        "PATCH",
        path,
        Some("application/merge-patch+json"),
        Some(body),
    )
    .await
}
