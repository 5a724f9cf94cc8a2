//! The simulated DaemonSet controller: a pod on each node the pod may run on, pinned there and
//! bound by the scheduler.

mod workloads_support;

use kube::api::{Api, DynamicObject, ListParams};
use kubeward_testing::{WorkerNode, Workloads};
use serde_json::{Value, json};
use workloads_support::{api, create, get, server, until};

fn agent() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                         "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}},
        },
    })
}

async fn list(pods: &Api<DynamicObject>) -> Vec<Value> {
    pods.list(&ListParams::default().labels("app=agent"))
        .await
        .expect("list")
        .items
        .into_iter()
        .map(|p| serde_json::to_value(p).expect("json"))
        .collect()
}

/// Waits until the DaemonSet's status satisfies `done`, and returns it.
async fn status_until(
    sets: &Api<DynamicObject>,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    until(what, || async {
        let ds = get(sets, "agent").await;
        if done(&ds["status"]) {
            Ok(ds["status"].clone())
        } else {
            Err(ds["status"].to_string())
        }
    })
    .await
}

/// The nodes the pods are bound to, sorted.
fn nodes_of(pods: &[Value]) -> Vec<String> {
    let mut nodes: Vec<String> = pods
        .iter()
        .filter_map(|p| p["spec"]["nodeName"].as_str().map(str::to_owned))
        .collect();
    nodes.sort();
    nodes
}

#[tokio::test]
async fn a_pod_runs_on_every_node() {
    let (_server, client) = server(Workloads::with_nodes(3)).await;
    let sets = api(&client, "apps/v1", "DaemonSet", "daemonsets", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&sets, agent()).await;
    let status = status_until(&sets, "3 ready daemon pods", |s| s["numberReady"] == 3).await;
    assert_eq!(status["desiredNumberScheduled"], 3);
    assert_eq!(status["currentNumberScheduled"], 3);
    assert_eq!(status["numberMisscheduled"], 0);
    assert_eq!(status["updatedNumberScheduled"], 3);
    assert_eq!(status["numberAvailable"], 3);
    assert!(status["numberUnavailable"].is_null(), "{status}");
    assert_eq!(status["observedGeneration"], 1);
    let all = list(&pods).await;
    assert_eq!(nodes_of(&all), ["worker-1", "worker-2", "worker-3"]);
    for pod in &all {
        let node = pod["spec"]["nodeName"].as_str().unwrap();
        let term = &pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"][0];
        assert_eq!(
            term["matchFields"],
            json!([{"key": "metadata.name", "operator": "In", "values": [node]}])
        );
        assert!(
            pod["metadata"]["name"]
                .as_str()
                .unwrap()
                .starts_with("agent-")
        );
        assert!(pod["metadata"]["labels"]["controller-revision-hash"].is_string());
        assert_eq!(pod["metadata"]["labels"]["pod-template-generation"], "1");
        let tolerations = pod["spec"]["tolerations"].as_array().unwrap();
        assert!(
            tolerations
                .iter()
                .any(|t| t["key"] == "node.kubernetes.io/unreachable"
                    && t["effect"] == "NoExecute"
                    && t["operator"] == "Exists")
        );
    }
    let events = api(&client, "v1", "Event", "events", "default");
    let created = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|e| e["involvedObject"]["name"] == "agent" && e["reason"] == "SuccessfulCreate")
        .filter(|e| {
            e["message"]
                .as_str()
                .unwrap()
                .starts_with("Created pod: agent-")
        })
        .collect::<Vec<_>>();
    assert_eq!(created.len(), 3);
    // The recorder's component, as `pkg/controller/daemon` names it.
    for event in &created {
        assert_eq!(event["source"]["component"], "daemonset-controller");
    }
}

#[tokio::test]
async fn a_tainted_node_gets_no_pod_unless_tolerated() {
    let workloads = Workloads::new()
        .node(WorkerNode::new("worker-1"))
        .node(WorkerNode::new("gpu-1").taint("gpu", "true", "NoSchedule"));
    let (_server, client) = server(workloads).await;
    let sets = api(&client, "apps/v1", "DaemonSet", "daemonsets", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&sets, agent()).await;
    let status = status_until(&sets, "1 ready daemon pod", |s| s["numberReady"] == 1).await;
    assert_eq!(status["desiredNumberScheduled"], 1);
    assert_eq!(nodes_of(&list(&pods).await), ["worker-1"]);

    // A DaemonSet that tolerates the taint runs there too.
    let mut tolerant = agent();
    tolerant["metadata"]["name"] = json!("gpu-agent");
    tolerant["spec"]["selector"]["matchLabels"]["app"] = json!("gpu-agent");
    tolerant["spec"]["template"]["metadata"]["labels"]["app"] = json!("gpu-agent");
    tolerant["spec"]["template"]["spec"]["tolerations"] =
        json!([{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]);
    create(&sets, tolerant).await;
    until("gpu-agent on both nodes", || async {
        let ds = get(&sets, "gpu-agent").await;
        if ds["status"]["numberReady"] == 2 {
            Ok(())
        } else {
            Err(ds["status"].to_string())
        }
    })
    .await;
}

#[tokio::test]
async fn a_node_added_later_gets_a_pod_and_a_removed_one_loses_it() {
    let (_server, client) = server(Workloads::with_nodes(1)).await;
    let sets = api(&client, "apps/v1", "DaemonSet", "daemonsets", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let nodes = api(&client, "v1", "Node", "nodes", "");
    create(&sets, agent()).await;
    status_until(&sets, "1 ready daemon pod", |s| s["numberReady"] == 1).await;
    create(
        &nodes,
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "late"},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                   "conditions": [{"type": "Ready", "status": "True"}]}}),
    )
    .await;
    // The node has no kubelet here: its pod is created and bound, never started.
    let status = status_until(&sets, "2 scheduled daemon pods", |s| {
        s["currentNumberScheduled"] == 2
    })
    .await;
    assert_eq!(status["desiredNumberScheduled"], 2);
    let bound = until("a pod bound to the new node", || async {
        let all = list(&pods).await;
        let nodes = nodes_of(&all);
        if nodes == ["late", "worker-1"] {
            Ok(nodes)
        } else {
            Err(format!("{nodes:?}"))
        }
    })
    .await;
    assert_eq!(bound.len(), 2);

    // A label the template now requires: the pods on nodes without it are deleted.
    let mut picky = get(&sets, "agent").await;
    picky["spec"]["template"]["spec"]["nodeSelector"] =
        json!({"kubernetes.io/hostname": "worker-1"});
    let picky: DynamicObject = serde_json::from_value(picky).unwrap();
    sets.replace("agent", &Default::default(), &picky)
        .await
        .expect("replaced");
    status_until(&sets, "1 desired daemon pod", |s| {
        s["desiredNumberScheduled"] == 1
    })
    .await;
    // The pod on `late` is deleted (and, that node having no kubelet, stays terminating).
    until("the pod on late deleted", || async {
        let all = list(&pods).await;
        let on_late = all.iter().find(|p| p["spec"]["nodeName"] == "late");
        match on_late {
            Some(p) if p["metadata"]["deletionTimestamp"].is_string() => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

#[tokio::test]
async fn a_rolling_update_replaces_every_pod_with_the_new_revision() {
    let (_server, client) = server(Workloads::with_nodes(3)).await;
    let sets = api(&client, "apps/v1", "DaemonSet", "daemonsets", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&sets, agent()).await;
    status_until(&sets, "3 ready daemon pods", |s| s["numberReady"] == 3).await;
    let mut ds = get(&sets, "agent").await;
    ds["spec"]["template"]["spec"]["containers"][0]["image"] = json!("agent:2");
    let ds: DynamicObject = serde_json::from_value(ds).unwrap();
    sets.replace("agent", &Default::default(), &ds)
        .await
        .expect("replaced");
    let status = status_until(&sets, "3 updated ready pods", |s| {
        s["observedGeneration"] == 2 && s["updatedNumberScheduled"] == 3 && s["numberReady"] == 3
    })
    .await;
    assert_eq!(status["numberAvailable"], 3);
    let all = until("only new pods left", || async {
        let all = list(&pods).await;
        if all.len() == 3
            && all
                .iter()
                .all(|p| p["spec"]["containers"][0]["image"] == "agent:2")
        {
            Ok(all)
        } else {
            Err(format!("{} pods", all.len()))
        }
    })
    .await;
    assert_eq!(nodes_of(&all), ["worker-1", "worker-2", "worker-3"]);
    assert!(
        all.iter()
            .all(|p| p["metadata"]["labels"]["pod-template-generation"] == "2")
    );
    let revisions = api(
        &client,
        "apps/v1",
        "ControllerRevision",
        "controllerrevisions",
        "default",
    );
    let mut numbers: Vec<(i64, String)> = revisions
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .map(|r| {
            let hash = r["metadata"]["labels"]["controller-revision-hash"]
                .as_str()
                .unwrap()
                .to_string();
            assert_eq!(r["metadata"]["name"], format!("agent-{hash}"));
            (r["revision"].as_i64().unwrap(), hash)
        })
        .collect();
    numbers.sort();
    assert_eq!(numbers.iter().map(|n| n.0).collect::<Vec<_>>(), [1, 2]);
    assert!(
        all.iter()
            .all(|p| p["metadata"]["labels"]["controller-revision-hash"] == numbers[1].1.as_str())
    );
}
