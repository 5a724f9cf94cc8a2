//! The simulated PersistentVolume controller, provisioner and in-use protection: claims bind
//! to volumes, get provisioned ones, and go when nothing uses them.

mod workloads_support;

use kube::Api;
use kube::api::{DeleteParams, DynamicObject, ListParams};
use kubeward_testing::Workloads;
use serde_json::{Value, json};
use workloads_support::{api, create, get, pod, server, until};

fn volume(name: &str, size: &str, policy: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {"capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"],
                 "persistentVolumeReclaimPolicy": policy, "storageClassName": "manual",
                 "hostPath": {"path": format!("/data/{name}")}},
    })
}

fn claim(name: &str, size: &str, class: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
                 "resources": {"requests": {"storage": size}}},
    })
}

fn class(name: &str, binding_mode: &str) -> Value {
    json!({
        "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "example.com/fast", "volumeBindingMode": binding_mode,
    })
}

/// Polls until the object `name` has `status.phase` `phase`.
async fn phase(api: &Api<DynamicObject>, name: &str, phase: &str) -> Value {
    until(&format!("{name} to be {phase}"), || async {
        let o = get(api, name).await;
        if o["status"]["phase"] == phase {
            Ok(o)
        } else {
            Err(o.to_string())
        }
    })
    .await
}

/// Polls until `name` is gone.
async fn gone(api: &Api<DynamicObject>, name: &str) {
    until(&format!("{name} to go"), || async {
        let o = get(api, name).await;
        if o.is_null() {
            Ok(())
        } else {
            Err(o.to_string())
        }
    })
    .await;
}

/// Polls until an event of `reason` is recorded about `name`; its message.
async fn event(client: &kube::Client, name: &str, reason: &str) -> String {
    let events = api(client, "v1", "Event", "events", "default");
    until(&format!("a {reason} event about {name}"), || async {
        let list = events
            .list(&ListParams::default())
            .await
            .expect("list works");
        let found = list.items.into_iter().find_map(|e| {
            let e = serde_json::to_value(e).expect("json");
            (e["involvedObject"]["name"] == name && e["reason"] == reason)
                .then(|| e["message"].as_str().unwrap_or_default().to_string())
        });
        found.ok_or_else(|| "none yet".to_string())
    })
    .await
}

#[tokio::test]
async fn a_claim_binds_to_the_smallest_matching_volume() {
    let (_server, client) = server(Workloads::with_nodes(1)).await;
    let volumes = api(&client, "v1", "PersistentVolume", "persistentvolumes", "");
    let claims = api(
        &client,
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "default",
    );
    create(&volumes, volume("small", "1Gi", "Retain")).await;
    create(&volumes, volume("fit", "5Gi", "Retain")).await;
    create(&volumes, volume("big", "50Gi", "Retain")).await;
    phase(&volumes, "big", "Available").await;
    create(&claims, claim("data", "3Gi", "manual")).await;

    let bound = phase(&claims, "data", "Bound").await;
    assert_eq!(bound["spec"]["volumeName"], "fit");
    assert_eq!(bound["status"]["capacity"]["storage"], "5Gi");
    assert_eq!(bound["status"]["accessModes"], json!(["ReadWriteOnce"]));
    let annotations = &bound["metadata"]["annotations"];
    assert_eq!(annotations["pv.kubernetes.io/bind-completed"], "yes");
    assert_eq!(annotations["pv.kubernetes.io/bound-by-controller"], "yes");
    let fit = phase(&volumes, "fit", "Bound").await;
    assert_eq!(fit["spec"]["claimRef"]["name"], "data");
    assert_eq!(fit["spec"]["claimRef"]["uid"], bound["metadata"]["uid"]);
    assert_eq!(
        fit["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"],
        "yes"
    );
    assert_eq!(get(&volumes, "small").await["status"]["phase"], "Available");

    // The claim goes (nothing uses it): its Retain volume is Released, and stays.
    claims
        .delete("data", &DeleteParams::default())
        .await
        .expect("delete works");
    gone(&claims, "data").await;
    phase(&volumes, "fit", "Released").await;
}

#[tokio::test]
async fn a_claim_without_a_class_or_a_volume_waits() {
    let (_server, client) = server(Workloads::with_nodes(1)).await;
    let claims = api(
        &client,
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "default",
    );
    create(&claims, claim("orphan", "1Gi", "")).await;
    let message = event(&client, "orphan", "FailedBinding").await;
    assert_eq!(
        message,
        "no persistent volumes available for this claim and no storage class is set"
    );
    assert_eq!(get(&claims, "orphan").await["status"]["phase"], "Pending");
}

#[tokio::test]
async fn a_claim_of_a_class_gets_a_provisioned_volume_deleted_with_it() {
    let (_server, client) = server(Workloads::with_nodes(1)).await;
    let classes = api(
        &client,
        "storage.k8s.io/v1",
        "StorageClass",
        "storageclasses",
        "",
    );
    let volumes = api(&client, "v1", "PersistentVolume", "persistentvolumes", "");
    let claims = api(
        &client,
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "default",
    );
    create(&classes, class("fast", "Immediate")).await;
    create(&claims, claim("data", "2Gi", "fast")).await;

    let bound = phase(&claims, "data", "Bound").await;
    let uid = bound["metadata"]["uid"].as_str().unwrap();
    let pv_name = format!("pvc-{uid}");
    assert_eq!(bound["spec"]["volumeName"], pv_name.as_str());
    assert_eq!(bound["status"]["capacity"]["storage"], "2Gi");
    assert_eq!(
        bound["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"],
        "example.com/fast"
    );
    let pv = phase(&volumes, &pv_name, "Bound").await;
    assert_eq!(
        pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"],
        "example.com/fast"
    );
    assert_eq!(pv["spec"]["persistentVolumeReclaimPolicy"], "Delete");
    assert_eq!(pv["spec"]["claimRef"]["uid"], uid);
    assert_eq!(
        event(&client, "data", "ProvisioningSucceeded").await,
        format!("Successfully provisioned volume {pv_name}")
    );
    assert!(
        event(&client, "data", "ExternalProvisioning")
            .await
            .starts_with("Waiting for a volume to be created either by the external provisioner 'example.com/fast'")
    );

    // Deleting the unused claim deletes its volume.
    claims
        .delete("data", &DeleteParams::default())
        .await
        .expect("delete works");
    gone(&claims, "data").await;
    gone(&volumes, &pv_name).await;
}

#[tokio::test]
async fn a_late_bound_claim_waits_for_its_pod_and_is_kept_while_used() {
    let (_server, client) = server(Workloads::with_nodes(1)).await;
    let classes = api(
        &client,
        "storage.k8s.io/v1",
        "StorageClass",
        "storageclasses",
        "",
    );
    let volumes = api(&client, "v1", "PersistentVolume", "persistentvolumes", "");
    let claims = api(
        &client,
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "default",
    );
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&classes, class("lazy", "WaitForFirstConsumer")).await;
    create(&claims, claim("data", "1Gi", "lazy")).await;
    assert_eq!(
        event(&client, "data", "WaitForFirstConsumer").await,
        "waiting for first consumer to be created before binding"
    );
    assert_eq!(get(&claims, "data").await["status"]["phase"], "Pending");

    let mut consumer = pod("db", "postgres:17");
    consumer["spec"]["volumes"] =
        json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]);
    create(&pods, consumer).await;
    let bound = phase(&claims, "data", "Bound").await;
    assert_eq!(
        bound["metadata"]["annotations"]["volume.kubernetes.io/selected-node"],
        "worker-1"
    );
    let pv = get(&volumes, bound["spec"]["volumeName"].as_str().unwrap()).await;
    assert_eq!(
        pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"],
        json!(["worker-1"])
    );

    // Deleted while the pod uses it: kept (Terminating) until the pod goes.
    claims
        .delete("data", &DeleteParams::default())
        .await
        .expect("delete works");
    let kept = get(&claims, "data").await;
    assert!(!kept["metadata"]["deletionTimestamp"].is_null(), "{kept}");
    assert_eq!(
        kept["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    pods.delete("db", &DeleteParams::default())
        .await
        .expect("delete works");
    gone(&claims, "data").await;
}
