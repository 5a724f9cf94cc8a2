//! The simulated scheduler and kubelet: pods placed on declared nodes and run as a kubelet
//! reports them.

mod workloads_support;

use kubeward_testing::{WorkerNode, Workloads};
use serde_json::json;
use workloads_support::{api, condition, create, get, pod, server, until};

#[tokio::test]
async fn a_pod_is_scheduled_started_and_ready_on_a_declared_node() {
    let (_server, client) = server(Workloads::with_nodes(1)).await;
    let nodes = api(&client, "v1", "Node", "nodes", "");
    let node = get(&nodes, "worker-1").await;
    assert_eq!(condition(&node, "Ready").unwrap()["status"], "True");
    assert_eq!(node["status"]["allocatable"]["cpu"], "4");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&pods, pod("web", "nginx:1.27")).await;
    let ready = until("web to be Ready", || async {
        let p = get(&pods, "web").await;
        match condition(&p, "Ready") {
            Some(c) if c["status"] == "True" => Ok(p),
            _ => Err(p.to_string()),
        }
    })
    .await;
    assert_eq!(ready["spec"]["nodeName"], "worker-1");
    assert_eq!(ready["status"]["phase"], "Running");
    assert!(
        ready["status"]["podIP"]
            .as_str()
            .unwrap()
            .starts_with("10.244.")
    );
    assert_eq!(ready["status"]["containerStatuses"][0]["ready"], true);
    assert_eq!(condition(&ready, "PodScheduled").unwrap()["status"], "True");
    let managers: Vec<&str> = ready["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["manager"].as_str())
        .collect();
    assert!(managers.contains(&"kubelet"), "{managers:?}");
}

#[tokio::test]
async fn a_pod_nothing_fits_is_unschedulable_until_a_node_fits() {
    let (_server, client) = server(Workloads::new().node(WorkerNode::new("small").cpu("1"))).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut big = pod("big", "nginx");
    big["spec"]["containers"][0]["resources"] = json!({"requests": {"cpu": "2"}});
    create(&pods, big).await;
    let pending = until("big to be Unschedulable", || async {
        let p = get(&pods, "big").await;
        match condition(&p, "PodScheduled") {
            Some(c) if c["reason"] == "Unschedulable" => Ok(c.clone()),
            _ => Err(p.to_string()),
        }
    })
    .await;
    assert_eq!(pending["status"], "False");
    assert_eq!(
        pending["message"],
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    );
    // A node that fits, registered as a kubelet would: the pod goes there.
    let nodes = api(&client, "v1", "Node", "nodes", "");
    create(
        &nodes,
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "large"},
        "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"},
                   "conditions": [{"type": "Ready", "status": "True"}]}}),
    )
    .await;
    let bound = until("big to be bound", || async {
        let p = get(&pods, "big").await;
        match p["spec"]["nodeName"].as_str() {
            Some(n) => Ok(n.to_string()),
            None => Err(p.to_string()),
        }
    })
    .await;
    assert_eq!(bound, "large");
}

#[tokio::test]
async fn every_namespace_gets_its_default_service_account() {
    let (_server, client) = server(Workloads::new()).await;
    let namespaces = api(&client, "v1", "Namespace", "namespaces", "");
    create(
        &namespaces,
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
    )
    .await;
    let accounts = api(&client, "v1", "ServiceAccount", "serviceaccounts", "team-a");
    until("team-a's default service account", || async {
        let sa = get(&accounts, "default").await;
        if sa.is_null() {
            Err("missing".into())
        } else {
            Ok(())
        }
    })
    .await;
    // A pod can be created there at once (ServiceAccount admission finds the account).
    let pods = api(&client, "v1", "Pod", "pods", "team-a");
    create(&pods, pod("web", "nginx")).await;
}

/// The scheduler's `VolumeBinding`: a pod waits for the claims it mounts to exist and, unless
/// their class binds late, to be bound.
#[tokio::test]
async fn a_pod_waits_for_its_claims_to_be_bound() {
    let (_server, client) = server(Workloads::with_nodes(1)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut web = pod("web", "nginx");
    web["spec"]["volumes"] =
        json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]);
    create(&pods, web).await;
    let scheduled_message = |pods: kube::Api<kube::api::DynamicObject>| async move {
        let p = get(&pods, "web").await;
        match condition(&p, "PodScheduled") {
            Some(c) => Ok((
                c["status"].as_str().unwrap_or_default().to_string(),
                c["message"].as_str().unwrap_or_default().to_string(),
            )),
            None => Err(p.to_string()),
        }
    };
    let missing = until("the missing claim to keep web pending", || async {
        scheduled_message(pods.clone()).await.and_then(|(s, m)| {
            if m.contains("not found") {
                Ok((s, m))
            } else {
                Err(m)
            }
        })
    })
    .await;
    assert_eq!(missing.0, "False");
    assert_eq!(
        missing.1,
        "0/1 nodes are available: persistentvolumeclaim \"data\" not found. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    );
    // The claim exists but nothing binds it (no class, no volume).
    let claims = api(
        &client,
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "default",
    );
    create(
        &claims,
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    )
    .await;
    let unbound = until("the unbound claim to keep web pending", || async {
        scheduled_message(pods.clone()).await.and_then(|(s, m)| {
            if m.contains("unbound") {
                Ok((s, m))
            } else {
                Err(m)
            }
        })
    })
    .await;
    assert_eq!(
        unbound.1,
        "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    );
    // A volume that fits: the claim binds, and the pod is placed.
    let volumes = api(&client, "v1", "PersistentVolume", "persistentvolumes", "");
    create(
        &volumes,
        json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "disk-1"},
        "spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/data/disk-1"}}}),
    )
    .await;
    until("web to be scheduled", || async {
        scheduled_message(pods.clone())
            .await
            .and_then(|(s, m)| if s == "True" { Ok(()) } else { Err(m) })
    })
    .await;
}
