//! core/v1 Pods on the in-process API server through a real `kube::Client`: defaults and what
//! admission adds, the update rules, status vs main writes, `binding` (as a scheduler binds),
//! graceful deletion (as a kubelet finishes it), `eviction`, field selectors and tables.

mod apiserver_support;

use apiserver_support::api_error;
use k8s_openapi::api::core::v1::{Pod, ServiceAccount};
use kube::api::{Api, DeleteParams, EvictParams, ListParams, Patch, PatchParams, PostParams};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

fn manifest(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "shop"}},
        "spec": {"containers": [{"name": "shop", "image": "nginx:1.27",
            "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "0.5", "memory": "64Mi"}}}]}})
}

/// A server whose `default` namespace has its `default` ServiceAccount (which a cluster's
/// service-account controller would make), and the pods of that namespace.
async fn pods() -> (ApiServer, Api<Pod>) {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "default"}})).unwrap();
    accounts.create(&PostParams::default(), &sa).await.unwrap();
    (server, Api::namespaced(client, "default"))
}

async fn create(api: &Api<Pod>, name: &str) -> Value {
    let pod: Pod = serde_json::from_value(manifest(name)).unwrap();
    serde_json::to_value(api.create(&PostParams::default(), &pod).await.unwrap()).unwrap()
}

async fn bind(api: &Api<Pod>, name: &str, node: &str) -> Result<(), kube::Error> {
    let binding = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}});
    let _: Value = api
        .create_subresource("binding", name, &PostParams::default(), &binding)
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_created_pod_reads_back_with_upstreams_defaults_and_admission() {
    let (_server, api) = pods().await;
    let pod = create(&api, "shop").await;
    let spec = &pod["spec"];
    assert_eq!(pod["metadata"]["generation"], 1);
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["schedulerName"], "default-scheduler");
    assert_eq!(spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(spec["enableServiceLinks"], true);
    assert_eq!(spec["priority"], 0);
    assert_eq!(spec["serviceAccountName"], "default");
    let shop = &spec["containers"][0];
    assert_eq!(shop["imagePullPolicy"], "IfNotPresent");
    assert_eq!(shop["ports"][0]["protocol"], "TCP");
    // Requests default to the limits: a Guaranteed pod.
    assert_eq!(
        shop["resources"]["requests"],
        json!({"cpu": "500m", "memory": "64Mi"})
    );
    assert_eq!(
        pod["status"],
        json!({"phase": "Pending", "qosClass": "Guaranteed"})
    );
    let tolerated: Vec<&str> = spec["tolerations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        tolerated,
        [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable"
        ]
    );
    // The account's token is mounted, as the ServiceAccount admission plugin mounts it.
    let volume = spec["volumes"][0]["name"].as_str().unwrap();
    assert!(volume.starts_with("kube-api-access-"), "{volume}");
    assert_eq!(
        shop["volumeMounts"][0],
        json!({"name": volume, "readOnly": true,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"})
    );
}

#[tokio::test]
async fn a_pod_without_its_service_account_is_forbidden() {
    let server = ApiServer::start().await.unwrap();
    let api: Api<Pod> = Api::namespaced(server.client().unwrap(), "default");
    let pod: Pod = serde_json::from_value(manifest("shop")).unwrap();
    let (status, message) = api_error(api.create(&PostParams::default(), &pod).await.unwrap_err());
    assert_eq!(status, 403);
    assert_eq!(
        message,
        "pods \"shop\" is forbidden: error looking up service account default/default: serviceaccount \"default\" not found"
    );
}

#[tokio::test]
async fn only_images_and_the_like_may_change() {
    let (_server, api) = pods().await;
    create(&api, "shop").await;
    let image = json!({"spec": {"containers": [{"name": "shop", "image": "nginx:1.28"}]}});
    let updated = api
        .patch("shop", &PatchParams::default(), &Patch::Strategic(&image))
        .await
        .unwrap();
    assert_eq!(
        updated.spec.unwrap().containers[0].image.as_deref(),
        Some("nginx:1.28")
    );
    assert_eq!(updated.metadata.generation, Some(2));
    let restart = json!({"spec": {"restartPolicy": "Never"}});
    let (status, message) = api_error(
        api.patch("shop", &PatchParams::default(), &Patch::Merge(&restart))
            .await
            .unwrap_err(),
    );
    assert_eq!(status, 422);
    assert!(
        message.starts_with("Pod \"shop\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"),
        "{message}"
    );
}

#[tokio::test]
async fn status_and_spec_are_written_through_their_own_endpoints() {
    let (_server, api) = pods().await;
    create(&api, "shop").await;
    let status = json!({"status": {"phase": "Running", "podIP": "10.0.0.7"},
        "spec": {"nodeName": "ignored"}});
    let written = api
        .patch_status("shop", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let written = serde_json::to_value(written).unwrap();
    assert_eq!(written["status"]["phase"], "Running");
    assert_eq!(written["status"]["podIPs"], json!([{"ip": "10.0.0.7"}]));
    assert_eq!(written["status"]["qosClass"], "Guaranteed");
    assert!(written["spec"]["nodeName"].is_null());
    let main = json!({"metadata": {"labels": {"tier": "web"}}, "status": {"phase": "Failed"}});
    let kept = api
        .patch("shop", &PatchParams::default(), &Patch::Merge(&main))
        .await
        .unwrap();
    assert_eq!(kept.status.unwrap().phase.as_deref(), Some("Running"));
}

#[tokio::test]
async fn binding_assigns_a_node_once() {
    let (_server, api) = pods().await;
    create(&api, "shop").await;
    bind(&api, "shop", "node-1").await.unwrap();
    let pod = serde_json::to_value(api.get("shop").await.unwrap()).unwrap();
    assert_eq!(pod["spec"]["nodeName"], "node-1");
    let scheduled = &pod["status"]["conditions"][0];
    assert_eq!(scheduled["type"], "PodScheduled");
    assert_eq!(scheduled["status"], "True");
    let (status, message) = api_error(bind(&api, "shop", "node-2").await.unwrap_err());
    assert_eq!(status, 409);
    assert_eq!(
        message,
        "Operation cannot be fulfilled on pods/binding \"shop\": pod shop is already assigned to node \"node-1\""
    );
    let on_node = api
        .list(&ListParams::default().fields("spec.nodeName=node-1"))
        .await
        .unwrap();
    assert_eq!(on_node.items.len(), 1);
    let running = api
        .list(&ListParams::default().fields("status.phase=Running"))
        .await
        .unwrap();
    assert!(running.items.is_empty());
}

#[tokio::test]
async fn a_bound_pod_is_deleted_gracefully_and_an_unbound_one_at_once() {
    let (_server, api) = pods().await;
    create(&api, "pending").await;
    api.delete("pending", &DeleteParams::default())
        .await
        .unwrap();
    assert!(api.get_opt("pending").await.unwrap().is_none());

    create(&api, "shop").await;
    bind(&api, "shop", "node-1").await.unwrap();
    let answer = api.delete("shop", &DeleteParams::default()).await.unwrap();
    let deleting = answer.left().expect("the pod, waiting for its kubelet");
    assert!(deleting.metadata.deletion_timestamp.is_some());
    assert_eq!(deleting.metadata.deletion_grace_period_seconds, Some(30));
    // Still there for its grace period: what a kubelet finishes with a zero grace period.
    let pod = api.get("shop").await.unwrap();
    assert_eq!(pod.metadata.deletion_grace_period_seconds, Some(30));
    api.delete("shop", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    assert!(api.get_opt("shop").await.unwrap().is_none());
}

#[tokio::test]
async fn eviction_deletes_the_pod_without_disruption_budgets() {
    let (_server, api) = pods().await;
    create(&api, "shop").await;
    api.evict("shop", &EvictParams::default()).await.unwrap();
    assert!(api.get_opt("shop").await.unwrap().is_none());

    create(&api, "bound").await;
    bind(&api, "bound", "node-1").await.unwrap();
    api.evict("bound", &EvictParams::default()).await.unwrap();
    let pod = serde_json::to_value(api.get("bound").await.unwrap()).unwrap();
    assert!(!pod["metadata"]["deletionTimestamp"].is_null());
    let disruption = pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "DisruptionTarget")
        .cloned()
        .unwrap();
    assert_eq!(disruption["reason"], "EvictionByEvictionAPI");
}

#[tokio::test]
async fn kubectl_get_pods_shows_upstreams_columns() {
    let (server, api) = pods().await;
    create(&api, "shop").await;
    let client = server.client().unwrap();
    apiserver_support::assert_table(
        &client,
        "/api/v1/namespaces/default/pods",
        "Name, Ready, Status, Restarts, Age, IP, Node, Nominated Node, Readiness Gates",
        &[
            (0, json!("shop")),
            (1, json!("0/1")),
            (2, json!("Pending")),
            (3, json!("0")),
            (5, json!("<none>")),
        ],
    )
    .await;
}
