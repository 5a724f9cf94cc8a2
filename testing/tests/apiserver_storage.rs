//! core/v1 PersistentVolumeClaims, PersistentVolumes and Nodes, storage.k8s.io/v1
//! StorageClasses on the in-process API server through a real `kube::Client`: defaults read
//! back, the admission plugins' finalizers and taint, upstream's refusals, status vs main
//! writes (a node's create keeping its status, as the kubelet registers it), field selectors and
//! `kubectl get` columns.

mod apiserver_support;

use apiserver_support::{create, merge, merge_status, refusal, with_spec};
use k8s_openapi::api::core::v1::{Node, PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{Api, ListParams};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

fn claim(name: &str, spec: Value) -> Value {
    with_spec(
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
        spec,
    )
}

fn volume(name: &str, spec: Value) -> Value {
    with_spec(
        json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"]}}),
        spec,
    )
}

fn kubelet_node(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"node-role.kubernetes.io/worker": ""}},
        "spec": {"providerID": format!("kind://docker/kind/{name}")},
        "status": {
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "message": "kubelet is posting ready status"}],
            "addresses": [{"type": "InternalIP", "address": "172.18.0.2"},
                          {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "m", "systemUUID": "s", "bootID": "b",
                         "kernelVersion": "6.8.0", "osImage": "Debian GNU/Linux 12 (bookworm)",
                         "containerRuntimeVersion": "containerd://2.0.2",
                         "kubeletVersion": "v1.34.12", "kubeProxyVersion": "",
                         "operatingSystem": "linux", "architecture": "amd64"}}})
}

#[tokio::test]
async fn a_claim_reads_back_defaults_and_keeps_its_spec() {
    let server = ApiServer::start().await.unwrap();
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(server.client().unwrap(), "default");
    let created = create(&claims, claim("data", json!({}))).await.unwrap();
    assert_eq!(created["spec"]["volumeMode"], "Filesystem");
    assert_eq!(created["status"], json!({"phase": "Pending"}));
    assert_eq!(
        created["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );

    let (code, message) = refusal(
        create(
            &claims,
            claim("empty", json!({"accessModes": [], "resources": {}})),
        )
        .await,
    );
    assert_eq!(code, 422);
    assert_eq!(
        message,
        "PersistentVolumeClaim \"empty\" is invalid: [spec.accessModes: Required value: at least 1 access mode is required, spec.resources[storage]: Required value]"
    );

    let (code, message) = refusal(
        merge(
            &claims,
            "data",
            json!({"spec": {"accessModes": ["ReadWriteMany"]}}),
        )
        .await,
    );
    assert_eq!(code, 422);
    assert!(
        message.starts_with("PersistentVolumeClaim \"data\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n@@ -1,6 +1,6 @@\n {\n  \"AccessModes\": [\n-  \"ReadWriteOnce\"\n+  \"ReadWriteMany\"\n  ],"),
        "{message}"
    );

    // An unbound claim may be given its volume and class once.
    let bound = merge(
        &claims,
        "data",
        json!({"spec": {"volumeName": "pv-1", "storageClassName": "standard"}}),
    )
    .await
    .unwrap();
    assert_eq!(bound["spec"]["volumeName"], "pv-1");
}

#[tokio::test]
async fn a_claims_status_and_spec_are_written_apart() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    create(
        &claims,
        claim(
            "data",
            json!({"volumeName": "pv-1", "resources": {"requests": {"storage": "10Gi"}}}),
        ),
    )
    .await
    .unwrap();
    let status = merge_status(
        &claims,
        "data",
        json!({"spec": {"accessModes": ["ReadWriteMany"]},
               "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"],
                          "capacity": {"storage": "10Gi"}}}),
    )
    .await
    .unwrap();
    assert_eq!(status["spec"]["accessModes"], json!(["ReadWriteOnce"]));
    assert_eq!(status["status"]["phase"], "Bound");
    let main = merge(&claims, "data", json!({"status": {"phase": "Lost"}}))
        .await
        .unwrap();
    assert_eq!(main["status"]["phase"], "Bound");

    // A bound claim may not shrink below its capacity.
    let (_, message) = refusal(
        merge(
            &claims,
            "data",
            json!({"spec": {"resources": {"requests": {"storage": "5Gi"}}}}),
        )
        .await,
    );
    assert_eq!(
        message,
        "PersistentVolumeClaim \"data\" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity"
    );

    apiserver_support::assert_table(
        &client,
        "/api/v1/namespaces/default/persistentvolumeclaims",
        "Name, Status, Volume, Capacity, Access Modes, StorageClass, VolumeAttributesClass, Age, VolumeMode",
        &[
            (1, json!("Bound")),
            (3, json!("10Gi")),
            (4, json!("RWO")),
            (6, json!("<unset>")),
            (8, json!("Filesystem")),
        ],
    )
    .await;
}

#[tokio::test]
async fn a_volume_reads_back_defaults_and_needs_one_source() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let created = create(
        &volumes,
        volume("pv-1", json!({"hostPath": {"path": "/data/pv-1"}})),
    )
    .await
    .unwrap();
    assert_eq!(created["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(created["spec"]["volumeMode"], "Filesystem");
    assert_eq!(created["spec"]["hostPath"]["type"], "");
    assert_eq!(created["status"]["phase"], "Pending");
    assert!(created["status"]["lastPhaseTransitionTime"].is_string());
    assert_eq!(
        created["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );

    let (_, message) = refusal(create(&volumes, volume("none", json!({}))).await);
    assert_eq!(
        message,
        "PersistentVolume \"none\" is invalid: spec: Required value: must specify a volume type"
    );
    let (_, message) = refusal(
        create(
            &volumes,
            volume("local", json!({"local": {"path": "/mnt/disks/a"}})),
        )
        .await,
    );
    assert_eq!(
        message,
        "PersistentVolume \"local\" is invalid: spec.nodeAffinity: Required value: Local volume requires node affinity"
    );
    let (_, message) = refusal(
        merge(
            &volumes,
            "pv-1",
            json!({"spec": {"hostPath": {"path": "/data/other"}}}),
        )
        .await,
    );
    assert!(
        message.starts_with("PersistentVolume \"pv-1\" is invalid: spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation\n@@"),
        "{message}"
    );

    apiserver_support::assert_table(
        &client,
        "/api/v1/persistentvolumes",
        "Name, Capacity, Access Modes, Reclaim Policy, Status, Claim, StorageClass, VolumeAttributesClass, Reason, Age, VolumeMode",
        &[
            (1, json!("5Gi")),
            (2, json!("RWO")),
            (3, json!("Retain")),
            (4, json!("Pending")),
        ],
    )
    .await;
}

#[tokio::test]
async fn a_node_keeps_the_status_it_registers_with() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    let created = create(&nodes, kubelet_node("worker-1")).await.unwrap();
    // SetDefaults_NodeStatus: the allocatable resources are the capacity.
    assert_eq!(
        created["status"]["allocatable"],
        json!({"cpu": "8", "memory": "32Gi", "pods": "110"})
    );
    assert_eq!(created["status"]["nodeInfo"]["kubeletVersion"], "v1.34.12");
    // TaintNodesByCondition.
    assert_eq!(
        created["spec"]["taints"],
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    );

    // The kubelet's status update keeps the spec; a main write keeps the status.
    let status = merge_status(
        &nodes,
        "worker-1",
        json!({"spec": {"unschedulable": true},
               "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "KubeletNotReady"}]}}),
    )
    .await
    .unwrap();
    assert_eq!(status["spec"].get("unschedulable"), None);
    assert_eq!(status["status"]["conditions"][0]["status"], "False");
    let main = merge(
        &nodes,
        "worker-1",
        json!({"spec": {"unschedulable": true}, "status": {"capacity": {"cpu": "1"}}}),
    )
    .await
    .unwrap();
    assert_eq!(main["spec"]["unschedulable"], true);
    assert_eq!(main["status"]["capacity"]["cpu"], "8");

    let (_, message) = refusal(
        merge(
            &nodes,
            "worker-1",
            json!({"spec": {"providerID": "kind://docker/kind/other"}}),
        )
        .await,
    );
    assert_eq!(
        message,
        "Node \"worker-1\" is invalid: spec.providerID: Forbidden: node updates may not change providerID except from \"\" to valid"
    );
    let (_, message) = refusal(
        merge(
            &nodes,
            "worker-1",
            json!({"spec": {"taints": [{"key": "gpu", "effect": "Sometimes"}]}}),
        )
        .await,
    );
    // ValidateNode and ValidateNodeUpdate both check the taints, at upstream's path (the
    // message lists the problem once).
    assert_eq!(
        message,
        "Node \"worker-1\" is invalid: metadata.taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
    );

    create(&nodes, kubelet_node("worker-2")).await.unwrap();
    let cordoned = nodes
        .list(&ListParams::default().fields("spec.unschedulable=true"))
        .await
        .unwrap();
    let names: Vec<_> = cordoned
        .items
        .iter()
        .map(|n| n.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["worker-1"]);

    apiserver_support::assert_table(
        &client,
        "/api/v1/nodes",
        "Name, Status, Roles, Age, Version, Internal-IP, External-IP, OS-Image, Kernel-Version, Container-Runtime",
        &[
            (1, json!("NotReady,SchedulingDisabled")),
            (2, json!("worker")),
            (4, json!("v1.34.12")),
            (5, json!("172.18.0.2")),
            (6, json!("<none>")),
            (9, json!("containerd://2.0.2")),
        ],
    )
    .await;
}

#[tokio::test]
async fn a_storage_class_is_defaulted_and_its_provisioning_immutable() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let classes: Api<StorageClass> = Api::all(client.clone());
    let created = create(
        &classes,
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "standard",
                         "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "rancher.io/local-path", "parameters": {"type": "local"}}),
    )
    .await
    .unwrap();
    assert_eq!(created["reclaimPolicy"], "Delete");
    assert_eq!(created["volumeBindingMode"], "Immediate");

    // DefaultStorageClass: a claim without a class is given the default one; an empty class
    // stays empty.
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    let defaulted = create(&claims, claim("data", json!({}))).await.unwrap();
    assert_eq!(defaulted["spec"]["storageClassName"], "standard");
    let classless = create(&claims, claim("raw", json!({"storageClassName": ""})))
        .await
        .unwrap();
    assert_eq!(classless["spec"]["storageClassName"], "");

    let (_, message) = refusal(
        merge(
            &classes,
            "standard",
            json!({"parameters": {"type": "ssd"}, "reclaimPolicy": "Retain"}),
        )
        .await,
    );
    assert_eq!(
        message,
        "StorageClass.storage.k8s.io \"standard\" is invalid: [parameters: Forbidden: updates to parameters are forbidden., reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.]"
    );
    let (_, message) = refusal(
        create(
            &classes,
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": "bad"}, "provisioner": "", "volumeBindingMode": "Later"}),
        )
        .await,
    );
    assert_eq!(
        message,
        "StorageClass.storage.k8s.io \"bad\" is invalid: [provisioner: Required value, volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"]"
    );

    apiserver_support::assert_table(
        &client,
        "/apis/storage.k8s.io/v1/storageclasses",
        "Name, Provisioner, ReclaimPolicy, VolumeBindingMode, AllowVolumeExpansion, Age",
        &[
            (0, json!("standard (default)")),
            (1, json!("rancher.io/local-path")),
            (4, json!(false)),
        ],
    )
    .await;
}
