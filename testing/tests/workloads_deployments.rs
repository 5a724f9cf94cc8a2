//! The simulated Deployment and ReplicaSet controllers: rollouts as a user sees them through
//! the Deployment's status and conditions, its ReplicaSets, its pods and the events.

mod workloads_support;

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kubeward_names::clock::ManualClock;
use kubeward_testing::{ApiServer, PodFault, Workloads};
use serde_json::{Value, json};
use workloads_support::{api, condition, create, get, server, until, until_condition};

/// A Deployment `name` of `replicas` pods `app: <name>` running `image`.
fn deployment(name: &str, replicas: i64, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": image}]},
            },
        },
    })
}

async fn list(api: &Api<DynamicObject>) -> Vec<Value> {
    api.list(&ListParams::default())
        .await
        .expect("LIST works")
        .items
        .into_iter()
        .map(|o| serde_json::to_value(o).expect("json"))
        .collect()
}

async fn patch(api: &Api<DynamicObject>, name: &str, body: Value) {
    api.patch(name, &PatchParams::default(), &Patch::Merge(&body))
        .await
        .expect("the patch applies");
}

fn name(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or_default()
}

/// The ReplicaSets of the Deployment `d` (by controller uid).
async fn replica_sets_of(rss: &Api<DynamicObject>, d: &Value) -> Vec<Value> {
    let uid = &d["metadata"]["uid"];
    list(rss)
        .await
        .into_iter()
        .filter(|rs| {
            rs["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|refs| refs.iter().any(|r| r["uid"] == *uid))
        })
        .collect()
}

/// The pods not being deleted whose `app` label is `app`.
async fn pods_of(pods: &Api<DynamicObject>, app: &str) -> Vec<Value> {
    list(pods)
        .await
        .into_iter()
        .filter(|p| p["metadata"]["labels"]["app"] == app)
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .collect()
}

/// The messages of the events of `reason` about `name`.
async fn events(client: &kube::Client, object: &str, reason: &str) -> Vec<String> {
    let events = api(client, "v1", "Event", "events", "default");
    list(&events)
        .await
        .into_iter()
        .filter(|e| e["involvedObject"]["name"] == object && e["reason"] == reason)
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Waits until the Deployment has rolled out completely: `replicas` ready, available and
/// updated, `Progressing` `NewReplicaSetAvailable` for the current generation.
async fn rolled_out(deployments: &Api<DynamicObject>, name: &str, replicas: i64) -> Value {
    until(
        &format!("{name} to roll out {replicas} replicas"),
        || async {
            let d = get(deployments, name).await;
            let count = |k: &str| d["status"][k].as_i64().unwrap_or(0);
            let done = condition(&d, "Progressing")
                .is_some_and(|c| c["reason"] == "NewReplicaSetAvailable")
                && count("observedGeneration")
                    == d["metadata"]["generation"].as_i64().unwrap_or(-1)
                && count("replicas") == replicas
                && count("updatedReplicas") == replicas
                && count("readyReplicas") == replicas
                && count("availableReplicas") == replicas;
            if done {
                Ok(d)
            } else {
                Err(d["status"].to_string())
            }
        },
    )
    .await
}

#[tokio::test]
async fn a_deployment_becomes_available_through_its_replica_set() {
    let (_server, client) = server(Workloads::with_nodes(2)).await;
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&deployments, deployment("web", 3, "nginx:1.27")).await;
    let d = rolled_out(&deployments, "web", 3).await;

    let available = condition(&d, "Available").unwrap();
    assert_eq!(available["status"], "True");
    assert_eq!(available["reason"], "MinimumReplicasAvailable");
    assert_eq!(available["message"], "Deployment has minimum availability.");
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    assert!(d["status"].get("unavailableReplicas").is_none());

    let [rs] = replica_sets_of(&rss, &d)
        .await
        .try_into()
        .expect("one ReplicaSet");
    let hash = rs["metadata"]["labels"]["pod-template-hash"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(name(&rs), format!("web-{hash}"));
    assert_eq!(
        rs["spec"]["selector"]["matchLabels"]["pod-template-hash"],
        hash.as_str()
    );
    assert_eq!(
        rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"],
        hash.as_str()
    );
    let annotations = &rs["metadata"]["annotations"];
    assert_eq!(annotations["deployment.kubernetes.io/revision"], "1");
    assert_eq!(
        annotations["deployment.kubernetes.io/desired-replicas"],
        "3"
    );
    // maxSurge 25% of 3, rounded up.
    assert_eq!(annotations["deployment.kubernetes.io/max-replicas"], "4");
    assert_eq!(rs["metadata"]["ownerReferences"][0]["kind"], "Deployment");
    assert_eq!(rs["metadata"]["ownerReferences"][0]["controller"], true);
    assert_eq!(rs["status"]["readyReplicas"], 3);
    assert_eq!(rs["status"]["fullyLabeledReplicas"], 3);
    assert_eq!(
        rs["status"]["observedGeneration"],
        rs["metadata"]["generation"]
    );
    assert_eq!(
        condition(&d, "Progressing").unwrap()["message"],
        format!("ReplicaSet \"{}\" has successfully progressed.", name(&rs))
    );

    let running = pods_of(&pods, "web").await;
    assert_eq!(running.len(), 3);
    for pod in &running {
        assert_eq!(pod["status"]["phase"], "Running");
        assert_eq!(
            pod["metadata"]["labels"]["pod-template-hash"],
            hash.as_str()
        );
        assert_eq!(pod["metadata"]["generateName"], format!("{}-", name(&rs)));
        assert_eq!(
            pod["metadata"]["ownerReferences"][0]["uid"],
            rs["metadata"]["uid"]
        );
    }
    assert_eq!(
        events(&client, "web", "ScalingReplicaSet").await,
        [format!("Scaled up replica set {} from 0 to 3", name(&rs))]
    );
    let created = events(&client, name(&rs), "SuccessfulCreate").await;
    assert_eq!(created.len(), 3, "{created:?}");
    assert!(
        created
            .iter()
            .all(|m| m.starts_with(&format!("Created pod: {}-", name(&rs))))
    );

    // Settled: once the cluster has run another pod, neither object was written again.
    let settled = (get(&deployments, "web").await, get(&rss, name(&rs)).await);
    create(&pods, workloads_support::pod("other", "nginx")).await;
    until_condition(&pods, "other", "Ready", "True").await;
    let rv = |o: &Value| o["metadata"]["resourceVersion"].clone();
    assert_eq!(rv(&get(&deployments, "web").await), rv(&settled.0));
    assert_eq!(rv(&get(&rss, name(&rs)).await), rv(&settled.1));
}

#[tokio::test]
async fn scaling_a_deployment_resizes_its_replica_set() {
    let (_server, client) = server(Workloads::with_nodes(2)).await;
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&deployments, deployment("web", 3, "nginx:1.27")).await;
    let d = rolled_out(&deployments, "web", 3).await;
    let [rs] = replica_sets_of(&rss, &d)
        .await
        .try_into()
        .expect("one ReplicaSet");

    patch(&deployments, "web", json!({"spec": {"replicas": 5}})).await;
    rolled_out(&deployments, "web", 5).await;
    assert_eq!(pods_of(&pods, "web").await.len(), 5);
    let scaled = get(&rss, name(&rs)).await;
    assert_eq!(scaled["spec"]["replicas"], 5);
    assert_eq!(
        scaled["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"],
        "5"
    );

    patch(&deployments, "web", json!({"spec": {"replicas": 1}})).await;
    rolled_out(&deployments, "web", 1).await;
    until("4 pods to be gone", || async {
        let left = pods_of(&pods, "web").await;
        if left.len() == 1 {
            Ok(())
        } else {
            Err(left.len().to_string())
        }
    })
    .await;
    assert_eq!(
        events(&client, "web", "ScalingReplicaSet").await[1..],
        [
            format!("Scaled up replica set {} from 3 to 5", name(&rs)),
            format!("Scaled down replica set {} from 5 to 1", name(&rs)),
        ]
    );
    let deleted = events(&client, name(&rs), "SuccessfulDelete").await;
    assert_eq!(deleted.len(), 4, "{deleted:?}");
    assert_eq!(replica_sets_of(&rss, &d).await.len(), 1);
}

#[tokio::test]
async fn an_image_change_rolls_out_a_second_replica_set() {
    let (_server, client) = server(Workloads::with_nodes(2)).await;
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&deployments, deployment("web", 3, "nginx:1.27")).await;
    let d = rolled_out(&deployments, "web", 3).await;
    let [first] = replica_sets_of(&rss, &d)
        .await
        .try_into()
        .expect("one ReplicaSet");

    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}});
    patch(&deployments, "web", image).await;
    let d = rolled_out(&deployments, "web", 3).await;
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    let all = replica_sets_of(&rss, &d).await;
    assert_eq!(all.len(), 2);
    let old = all.iter().find(|rs| name(rs) == name(&first)).unwrap();
    let new = all.iter().find(|rs| name(rs) != name(&first)).unwrap();
    assert_eq!(old["spec"]["replicas"], 0);
    assert_eq!(
        old["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    assert_eq!(new["spec"]["replicas"], 3);
    assert_eq!(
        new["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    assert_ne!(
        new["metadata"]["labels"]["pod-template-hash"],
        old["metadata"]["labels"]["pod-template-hash"]
    );
    assert_eq!(
        condition(&d, "Progressing").unwrap()["message"],
        format!("ReplicaSet \"{}\" has successfully progressed.", name(new))
    );
    until("the old pods to be gone", || async {
        let images: Vec<Value> = pods_of(&pods, "web")
            .await
            .iter()
            .map(|p| p["spec"]["containers"][0]["image"].clone())
            .collect();
        if images.len() == 3 && images.iter().all(|i| i == "nginx:1.28") {
            Ok(())
        } else {
            Err(format!("{images:?}"))
        }
    })
    .await;
    // maxSurge 25% of 3 is 1 (rounded up), maxUnavailable 0 (rounded down): one pod at a time.
    let (old, new) = (name(&first), name(new));
    assert_eq!(
        events(&client, "web", "ScalingReplicaSet").await,
        [
            format!("Scaled up replica set {old} from 0 to 3"),
            format!("Scaled up replica set {new} from 0 to 1"),
            format!("Scaled down replica set {old} from 3 to 2"),
            format!("Scaled up replica set {new} from 1 to 2"),
            format!("Scaled down replica set {old} from 2 to 1"),
            format!("Scaled up replica set {new} from 2 to 3"),
            format!("Scaled down replica set {old} from 1 to 0"),
        ]
    );
    // Back to the first template: the first ReplicaSet is the new one again, as revision 3.
    let back = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}});
    patch(&deployments, "web", back).await;
    let d = rolled_out(&deployments, "web", 3).await;
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "3"
    );
    let first = get(&rss, name(&first)).await;
    assert_eq!(first["spec"]["replicas"], 3);
    assert_eq!(
        first["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "3"
    );
    assert_eq!(
        first["metadata"]["annotations"]["deployment.kubernetes.io/revision-history"],
        "1"
    );
}

#[tokio::test]
async fn a_recreate_deployment_replaces_every_pod_at_once() {
    let (_server, client) = server(Workloads::with_nodes(2)).await;
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    let mut recreate = deployment("db", 2, "postgres:16");
    recreate["spec"]["strategy"] = json!({"type": "Recreate"});
    create(&deployments, recreate).await;
    let d = rolled_out(&deployments, "db", 2).await;
    assert_eq!(d["spec"]["strategy"]["type"], "Recreate");
    let [first] = replica_sets_of(&rss, &d)
        .await
        .try_into()
        .expect("one ReplicaSet");
    // No surge: the max-replicas annotation is the replicas.
    assert_eq!(
        first["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"],
        "2"
    );

    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "postgres:17"}]}}}});
    patch(&deployments, "db", image).await;
    let d = rolled_out(&deployments, "db", 2).await;
    let all = replica_sets_of(&rss, &d).await;
    let new = all
        .iter()
        .find(|rs| name(rs) != name(&first))
        .expect("a new ReplicaSet");
    assert_eq!(get(&rss, name(&first)).await["spec"]["replicas"], 0);
    assert_eq!(
        events(&client, "db", "ScalingReplicaSet").await,
        [
            format!("Scaled up replica set {} from 0 to 2", name(&first)),
            format!("Scaled down replica set {} from 2 to 0", name(&first)),
            format!("Scaled up replica set {} from 0 to 2", name(new)),
        ]
    );
}

#[tokio::test]
async fn a_paused_deployment_does_not_roll_out_until_resumed() {
    let (_server, client) = server(Workloads::with_nodes(2)).await;
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    create(&deployments, deployment("web", 2, "nginx:1.27")).await;
    rolled_out(&deployments, "web", 2).await;

    let change = json!({"spec": {"paused": true, "template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28"}]}}}});
    patch(&deployments, "web", change).await;
    let paused = until("the Deployment to be paused", || async {
        let d = get(&deployments, "web").await;
        match condition(&d, "Progressing") {
            Some(c) if c["reason"] == "DeploymentPaused" => Ok(d.clone()),
            _ => Err(d["status"].to_string()),
        }
    })
    .await;
    let progressing = condition(&paused, "Progressing").unwrap();
    assert_eq!(progressing["status"], "Unknown");
    assert_eq!(progressing["message"], "Deployment is paused");
    assert_eq!(replica_sets_of(&rss, &paused).await.len(), 1);
    assert_eq!(
        paused["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );

    patch(&deployments, "web", json!({"spec": {"paused": false}})).await;
    let d = rolled_out(&deployments, "web", 2).await;
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    assert_eq!(replica_sets_of(&rss, &d).await.len(), 2);
}

#[tokio::test]
async fn a_pod_deleted_by_hand_is_replaced() {
    let (_server, client) = server(Workloads::with_nodes(2)).await;
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    create(&deployments, deployment("web", 3, "nginx:1.27")).await;
    rolled_out(&deployments, "web", 3).await;
    let before = pods_of(&pods, "web").await;
    let victim = name(&before[0]).to_string();
    pods.delete(&victim, &DeleteParams::default())
        .await
        .expect("the pod is deleted");
    until("a replacement pod to run", || async {
        let now = pods_of(&pods, "web").await;
        let running = now
            .iter()
            .filter(|p| p["status"]["phase"] == "Running")
            .count();
        if running == 3 && now.iter().all(|p| name(p) != victim) {
            Ok(())
        } else {
            Err(format!("{running} running"))
        }
    })
    .await;
    rolled_out(&deployments, "web", 3).await;
}

#[tokio::test]
async fn a_rollout_that_never_gets_ready_exceeds_its_progress_deadline() {
    let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
    let server = ApiServer::builder()
        .clock(Arc::new(clock.clone()))
        .workloads(Workloads::with_nodes(2).fault(PodFault::never_ready("broken:*")))
        .start()
        .await
        .expect("server starts");
    let client = server.client().expect("client");
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    let mut stuck = deployment("web", 2, "broken:1");
    stuck["spec"]["progressDeadlineSeconds"] = json!(60);
    create(&deployments, stuck).await;
    let d = until("the pods to be created", || async {
        let d = get(&deployments, "web").await;
        let progressing = condition(&d, "Progressing").map(|c| c["reason"].clone());
        if d["status"]["replicas"] == 2 && progressing == Some(json!("ReplicaSetUpdated")) {
            Ok(d)
        } else {
            Err(d["status"].to_string())
        }
    })
    .await;
    let available = condition(&d, "Available").unwrap();
    assert_eq!(available["status"], "False");
    assert_eq!(available["reason"], "MinimumReplicasUnavailable");
    assert_eq!(
        available["message"],
        "Deployment does not have minimum availability."
    );
    assert_eq!(d["status"]["unavailableReplicas"], 2);
    let [rs] = replica_sets_of(&rss, &d)
        .await
        .try_into()
        .expect("one ReplicaSet");

    clock.advance(Duration::from_secs(61));
    let timed_out = until("the progress deadline to pass", || async {
        let d = get(&deployments, "web").await;
        match condition(&d, "Progressing") {
            Some(c) if c["reason"] == "ProgressDeadlineExceeded" => Ok(c.clone()),
            _ => Err(d["status"].to_string()),
        }
    })
    .await;
    assert_eq!(timed_out["status"], "False");
    assert_eq!(
        timed_out["message"],
        format!("ReplicaSet \"{}\" has timed out progressing.", name(&rs))
    );
}

#[tokio::test]
async fn old_replica_sets_beyond_the_revision_history_limit_are_deleted() {
    let (_server, client) = server(Workloads::with_nodes(2)).await;
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    let mut limited = deployment("web", 1, "nginx:1");
    limited["spec"]["revisionHistoryLimit"] = json!(1);
    create(&deployments, limited).await;
    rolled_out(&deployments, "web", 1).await;
    for image in ["nginx:2", "nginx:3"] {
        let change = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": image}]}}}});
        patch(&deployments, "web", change).await;
        rolled_out(&deployments, "web", 1).await;
    }
    let d = get(&deployments, "web").await;
    let kept = until("one old ReplicaSet to be kept", || async {
        let all = replica_sets_of(&rss, &d).await;
        if all.len() == 2 {
            Ok(all)
        } else {
            Err(format!("{} ReplicaSets", all.len()))
        }
    })
    .await;
    let mut revisions: Vec<&str> = kept
        .iter()
        .map(|rs| {
            rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                .as_str()
                .unwrap()
        })
        .collect();
    revisions.sort_unstable();
    assert_eq!(revisions, ["2", "3"]);
}

#[tokio::test]
async fn a_replica_set_adopts_orphans_and_releases_pods_it_no_longer_selects() {
    let (_server, client) = server(Workloads::with_nodes(1)).await;
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let mut orphan = workloads_support::pod("orphan", "nginx");
    orphan["metadata"]["labels"] = json!({"app": "cache"});
    create(&pods, orphan).await;
    let rs = create(
        &rss,
        json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "cache"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "cache"}},
                     "template": {"metadata": {"labels": {"app": "cache"}},
                                  "spec": {"containers": [{"name": "app", "image": "redis"}]}}},
        }),
    )
    .await;
    let ready = until("2 ready replicas", || async {
        let rs = get(&rss, "cache").await;
        if rs["status"]["readyReplicas"] == 2 {
            Ok(rs)
        } else {
            Err(rs["status"].to_string())
        }
    })
    .await;
    assert_eq!(ready["status"]["replicas"], 2);
    let adopted = get(&pods, "orphan").await;
    assert_eq!(
        adopted["metadata"]["ownerReferences"][0]["uid"],
        rs["metadata"]["uid"]
    );
    assert_eq!(
        adopted["metadata"]["ownerReferences"][0]["kind"],
        "ReplicaSet"
    );
    // Only one pod was created: the orphan counts.
    assert_eq!(events(&client, "cache", "SuccessfulCreate").await.len(), 1);

    // Relabelled, the pod is released and replaced.
    patch(
        &pods,
        "orphan",
        json!({"metadata": {"labels": {"app": "other"}}}),
    )
    .await;
    let released = until("the pod to be released", || async {
        let p = get(&pods, "orphan").await;
        if p["metadata"]["ownerReferences"]
            .as_array()
            .is_none_or(Vec::is_empty)
        {
            Ok(p)
        } else {
            Err(p["metadata"].to_string())
        }
    })
    .await;
    assert_eq!(released["status"]["phase"], "Running");
    until("a replacement", || async {
        let n = pods_of(&pods, "cache").await.len();
        if n == 2 { Ok(()) } else { Err(n.to_string()) }
    })
    .await;
    assert_eq!(events(&client, "cache", "SuccessfulCreate").await.len(), 2);
}

#[tokio::test]
async fn replicas_become_available_min_ready_seconds_after_they_are_ready() {
    let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
    let server = ApiServer::builder()
        .clock(Arc::new(clock.clone()))
        .workloads(Workloads::with_nodes(2))
        .start()
        .await
        .expect("server starts");
    let client = server.client().expect("client");
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    let mut slow = deployment("web", 2, "nginx:1.27");
    slow["spec"]["minReadySeconds"] = json!(30);
    create(&deployments, slow).await;
    let d = until("2 ready replicas", || async {
        let d = get(&deployments, "web").await;
        if d["status"]["readyReplicas"] == 2 {
            Ok(d)
        } else {
            Err(d["status"].to_string())
        }
    })
    .await;
    assert!(d["status"].get("availableReplicas").is_none(), "{d}");
    assert_eq!(
        condition(&d, "Available").unwrap()["reason"],
        "MinimumReplicasUnavailable"
    );
    let [rs] = replica_sets_of(&rss, &d)
        .await
        .try_into()
        .expect("one ReplicaSet");
    assert_eq!(rs["spec"]["minReadySeconds"], 30);

    clock.advance(Duration::from_secs(31));
    let d = rolled_out(&deployments, "web", 2).await;
    assert_eq!(
        condition(&d, "Available").unwrap()["reason"],
        "MinimumReplicasAvailable"
    );
}

#[tokio::test]
async fn a_deployment_created_paused_or_of_no_replicas_still_reports_its_state() {
    let (_server, client) = server(Workloads::with_nodes(1)).await;
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    let mut paused = deployment("paused", 2, "nginx:1.27");
    paused["spec"]["paused"] = json!(true);
    create(&deployments, paused).await;
    let d = until("the Deployment to be paused", || async {
        let d = get(&deployments, "paused").await;
        match condition(&d, "Progressing") {
            Some(c) if c["reason"] == "DeploymentPaused" => Ok(d.clone()),
            _ => Err(d["status"].to_string()),
        }
    })
    .await;
    assert!(replica_sets_of(&rss, &d).await.is_empty());
    patch(&deployments, "paused", json!({"spec": {"paused": false}})).await;
    rolled_out(&deployments, "paused", 2).await;

    create(&deployments, deployment("none", 0, "nginx:1.27")).await;
    let d = rolled_out(&deployments, "none", 0).await;
    assert_eq!(condition(&d, "Available").unwrap()["status"], "True");
    let [rs] = replica_sets_of(&rss, &d)
        .await
        .try_into()
        .expect("one ReplicaSet");
    assert_eq!(rs["spec"]["replicas"], 0);
    assert!(
        events(&client, "none", "ScalingReplicaSet")
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn a_refused_pod_create_is_retried_with_back_off_until_it_succeeds() {
    let (_server, client) = server(Workloads::with_nodes(1)).await;
    let deployments = api(&client, "apps/v1", "Deployment", "deployments", "default");
    let rss = api(&client, "apps/v1", "ReplicaSet", "replicasets", "default");
    let mut web = deployment("web", 1, "nginx:1.27");
    web["spec"]["template"]["spec"]["serviceAccountName"] = json!("web");
    let d = create(&deployments, web).await;
    // The ServiceAccount admission refuses the pod: the ReplicaSet's sync fails.
    let rs = until("the ReplicaSet's FailedCreate event", || async {
        let rs = replica_sets_of(&rss, &d)
            .await
            .pop()
            .ok_or("no ReplicaSet")?;
        let failed = events(&client, name(&rs), "FailedCreate").await;
        let expected =
            "error looking up service account default/web: serviceaccount \"web\" not found";
        match failed.first() {
            Some(message) if message.contains(expected) => Ok(rs),
            _ => Err(format!("{failed:?}")),
        }
    })
    .await;
    // Nothing the ReplicaSet controller watches changes when the account appears: only its
    // retry of the failed sync creates the pod.
    let accounts = api(
        &client,
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        "default",
    );
    create(
        &accounts,
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "web"}}),
    )
    .await;
    rolled_out(&deployments, "web", 1).await;
    let created = events(&client, name(&rs), "SuccessfulCreate").await;
    assert_eq!(created.len(), 1, "{created:?}");
}
