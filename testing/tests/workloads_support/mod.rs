//! Helpers shared by the `workloads_*` tests (the simulated cluster on the embedded server).
#![allow(dead_code)]

use std::time::Duration;

use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kubeward_testing::{ApiServer, Workloads};
use serde_json::{Value, json};

/// A server running the simulated cluster of `workloads`, and an admin client.
pub async fn server(workloads: Workloads) -> (ApiServer, Client) {
    let server = ApiServer::builder()
        .workloads(workloads)
        .start()
        .await
        .expect("server starts");
    let client = server.client().expect("client");
    (server, client)
}

/// The objects of `api_version`/`kind` (`plural`) in `namespace`, untyped.
pub fn api(
    client: &Client,
    api_version: &str,
    kind: &str,
    plural: &str,
    namespace: &str,
) -> Api<DynamicObject> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    if namespace.is_empty() {
        Api::all_with(client.clone(), &resource)
    } else {
        Api::namespaced_with(client.clone(), namespace, &resource)
    }
}

/// Creates `object` (JSON with `apiVersion`, `kind`, `metadata.name`) through `api`.
pub async fn create(api: &Api<DynamicObject>, object: Value) -> Value {
    let object: DynamicObject = serde_json::from_value(object).expect("a valid object");
    let created = api
        .create(&PostParams::default(), &object)
        .await
        .expect("the object is created");
    serde_json::to_value(created).expect("json")
}

/// Polls `probe` every 10 ms until it returns `Some`, for at most 10 s of real time; panics
/// with `what` and the last value seen otherwise.
pub async fn until<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match probe().await {
            Ok(value) => return value,
            Err(last) if tokio::time::Instant::now() > deadline => {
                panic!("timed out waiting for {what}; last seen: {last}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// The object `name` of `api` as JSON (`Null` when missing).
pub async fn get(api: &Api<DynamicObject>, name: &str) -> Value {
    match api.get_opt(name).await.expect("GET works") {
        Some(object) => serde_json::to_value(object).expect("json"),
        None => Value::Null,
    }
}

/// The condition of `type_` in `object`'s `status.conditions`.
pub fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// A bare pod running `image` in one container `app`.
pub fn pod(name: &str, image: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "app", "image": image}]},
    })
}

/// [`server`] with a default StorageClass (`standard`, provisioned by `rancher.io/local-path`,
/// binding at once), as kind clusters have: claims without a class get a volume.
pub async fn server_with_storage(workloads: Workloads) -> (ApiServer, Client) {
    let (server, client) = server(workloads).await;
    let classes = api(
        &client,
        "storage.k8s.io/v1",
        "StorageClass",
        "storageclasses",
        "",
    );
    create(
        &classes,
        json!({
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "standard",
                         "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "rancher.io/local-path",
            "volumeBindingMode": "Immediate",
        }),
    )
    .await;
    (server, client)
}

/// Waits until the object `name` of `api` has a condition of `type_` with `status`, and returns
/// the object.
pub async fn until_condition(
    api: &Api<DynamicObject>,
    name: &str,
    type_: &str,
    status: &str,
) -> Value {
    let what = format!("{name} to have {type_}={status}");
    until(&what, || async {
        let object = get(api, name).await;
        match condition(&object, type_) {
            Some(c) if c["status"] == status => Ok(object),
            _ => Err(object["status"].to_string()),
        }
    })
    .await
}
