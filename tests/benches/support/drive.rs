//! The driver: a server with the workload's CRD, and what users do to workloads (create, edit,
//! delete), through a client of its own so that the tally can leave its requests out.

use std::future::Future;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::rbac::v1::PolicyRule;
use kube::CustomResourceExt;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use kubeward_testing::{ApiServer, Identity};
use serde_json::json;

use k8s_openapi::api::core::v1::ConfigMap;

use super::workload::{FINALIZER, NAMESPACE, READY, Workload, WorkloadSpec, child_at};

/// The user the driver's requests are made as.
pub const DRIVER: &str = "bench-driver";
/// How many of the driver's requests are in flight at once.
const CONCURRENCY: usize = 32;

/// A size from the environment variable `name`, else `default`.
pub fn size(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|n| n.replace('_', "").parse().ok())
        .unwrap_or(default)
}

/// A server that serves workloads (with a watch history long enough for the run), and the
/// driver's client.
pub async fn server() -> (ApiServer, kube::Client) {
    let server = ApiServer::builder()
        .event_ttl(Duration::from_secs(3600))
        .start()
        .await
        .expect("server starts");
    server.install_crd(&Workload::crd()).expect("CRD installs");
    let everything = PolicyRule {
        api_groups: Some(vec!["*".into()]),
        resources: Some(vec!["*".into()]),
        verbs: vec!["*".into()],
        ..PolicyRule::default()
    };
    let driver = server
        .client_for(&Identity::with_rules(DRIVER, vec![everything]))
        .expect("driver client");
    (server, driver)
}

fn name(i: usize) -> String {
    format!("w{i}")
}

fn workloads(client: &kube::Client) -> Api<Workload> {
    Api::namespaced(client.clone(), NAMESPACE)
}

async fn for_each(
    n: usize,
    op: impl Fn(usize) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>>,
) {
    futures::stream::iter(0..n)
        .map(op)
        .buffer_unordered(CONCURRENCY)
        .collect::<()>()
        .await;
}

/// Creates workloads `w0` .. `w{n-1}`.
pub async fn create(client: &kube::Client, n: usize) {
    let api = workloads(client);
    for_each(n, |i| {
        let api = api.clone();
        Box::pin(async move {
            let spec = WorkloadSpec {
                image: "registry.example/app:0".into(),
                replicas: 3,
            };
            api.create(&PostParams::default(), &Workload::new(&name(i), spec))
                .await
                .expect("create");
        })
    })
    .await;
}

/// A server holding `n` converged workloads ([`create_converged`]) and its driver's client,
/// with the time the seeding took printed.
pub async fn seeded_server(n: usize) -> (ApiServer, kube::Client) {
    seeded_server_with_children(n, 0).await
}

/// [`seeded_server`] whose workloads own `children` child ConfigMaps each, as the controllers
/// apply them ([`super::workload::child_at`]).
pub async fn seeded_server_with_children(n: usize, children: usize) -> (ApiServer, kube::Client) {
    let (server, driver) = server().await;
    let seeding = std::time::Instant::now();
    create_converged_with_children(&driver, n, children).await;
    println!(
        "seeded {n} converged workloads with {children} children each in {:.1?}",
        seeding.elapsed()
    );
    (server, driver)
}

/// Creates `n` workloads as a controller leaves them converged: with the finalizer and `Ready`
/// `Available` at their generation (without children: no controller reads them at steady
/// state).
pub async fn create_converged(client: &kube::Client, n: usize) {
    create_converged_with_children(client, n, 0).await;
}

/// [`create_converged`], each workload with `children` child ConfigMaps (owned by it, as its
/// controller's apply leaves them).
pub async fn create_converged_with_children(client: &kube::Client, n: usize, children: usize) {
    let api = workloads(client);
    let configs: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    for_each(n, |i| {
        let api = api.clone();
        let configs = configs.clone();
        Box::pin(async move {
            let mut workload = Workload::new(
                &name(i),
                WorkloadSpec {
                    image: "registry.example/app:0".into(),
                    replicas: 3,
                },
            );
            workload.metadata = ObjectMeta {
                finalizers: Some(vec![FINALIZER.into()]),
                ..workload.metadata
            };
            let created = api
                .create(&PostParams::default(), &workload)
                .await
                .expect("create");
            for index in 0..children {
                configs
                    .create(&PostParams::default(), &child_at(&created, index))
                    .await
                    .expect("create child");
            }
            let status = json!({ "status": { "conditions": [{
                "type": READY,
                "status": "True",
                "reason": "Available",
                "message": "generation 1 is available",
                "observedGeneration": 1,
                "lastTransitionTime": "2026-12-01T00:00:00Z",
            }]}});
            api.patch_status(&name(i), &PatchParams::default(), &Patch::Merge(&status))
                .await
                .expect("status");
        })
    })
    .await;
}

/// Edits the spec of every workload (a new generation each): the image becomes `app:<round>`.
pub async fn edit(client: &kube::Client, n: usize, round: usize) {
    let api = workloads(client);
    for_each(n, |i| {
        let api = api.clone();
        Box::pin(async move {
            let patch = json!({ "spec": { "image": format!("registry.example/app:{round}") } });
            api.patch(&name(i), &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .expect("edit");
        })
    })
    .await;
}

/// Deletes every workload.
pub async fn delete(client: &kube::Client, n: usize) {
    let api = workloads(client);
    for_each(n, |i| {
        let api = api.clone();
        Box::pin(async move {
            api.delete(&name(i), &DeleteParams::default())
                .await
                .expect("delete");
        })
    })
    .await;
}

/// How many workloads the server stores.
pub fn stored(server: &ApiServer) -> usize {
    server
        .objects("bench.kubeward.dev/v1", "workloads", Some(NAMESPACE))
        .len()
}

/// Polls `done` every 20 ms until it holds; panics after `timeout` naming `what`.
pub async fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The median of `samples`.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}
