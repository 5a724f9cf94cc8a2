//! The simulated StatefulSet controller: ordered pods with stable identities and claims,
//! scaled down from the highest ordinal, updated above a partition.

mod workloads_support;

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use kubeward_testing::Workloads;
use serde_json::{Value, json};
use workloads_support::{api, condition, create, get, server_with_storage, until};

/// What a watch on pods saw: `(event, pod, ready)` in order.
type Seen = Arc<Mutex<Vec<(&'static str, String, bool)>>>;

/// Records every pod event of `pods` from now on.
async fn record(pods: &Api<DynamicObject>) -> Seen {
    let seen: Seen = Arc::default();
    let mut stream = pods
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    let sink = seen.clone();
    tokio::spawn(async move {
        while let Some(Ok(event)) = stream.next().await {
            let (kind, object) = match event {
                WatchEvent::Added(o) => ("ADDED", o),
                WatchEvent::Modified(o) => ("MODIFIED", o),
                WatchEvent::Deleted(o) => ("DELETED", o),
                _ => continue,
            };
            let object = serde_json::to_value(object).expect("json");
            let ready = condition(&object, "Ready").is_some_and(|c| c["status"] == "True");
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            sink.lock().unwrap().push((kind, name.to_string(), ready));
        }
    });
    seen
}

fn position(seen: &Seen, wanted: impl Fn(&(&'static str, String, bool)) -> bool) -> usize {
    let seen = seen.lock().unwrap();
    seen.iter()
        .position(wanted)
        .unwrap_or_else(|| panic!("not seen in {seen:?}"))
}

fn web(replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas, "serviceName": "nginx",
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}},
                         "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}},
            "volumeClaimTemplates": [{
                "metadata": {"name": "www"},
                "spec": {"accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": "1Gi"}}},
            }],
        },
    })
}

/// Waits until the set's status satisfies `done`, and returns it.
async fn status_until(
    sets: &Api<DynamicObject>,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    until(what, || async {
        let set = get(sets, "web").await;
        if done(&set["status"]) {
            Ok(set["status"].clone())
        } else {
            Err(set["status"].to_string())
        }
    })
    .await
}

async fn scale(sets: &Api<DynamicObject>, patch: Value) {
    sets.patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patched");
}

#[tokio::test]
async fn pods_come_up_in_order_each_after_the_one_before_is_ready() {
    let (_server, client) = server_with_storage(Workloads::with_nodes(2)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let sets = api(&client, "apps/v1", "StatefulSet", "statefulsets", "default");
    let seen = record(&pods).await;
    create(&sets, web(3)).await;
    let status = status_until(&sets, "3 ready replicas", |s| s["readyReplicas"] == 3).await;
    assert_eq!(status["replicas"], 3);
    assert_eq!(status["availableReplicas"], 3);
    assert_eq!(status["currentReplicas"], 3);
    assert_eq!(status["updatedReplicas"], 3);
    assert_eq!(status["currentRevision"], status["updateRevision"]);
    assert_eq!(status["observedGeneration"], 1);

    // OrderedReady: each pod is created only once the one before it is Ready.
    let added = |name: &'static str| position(&seen, move |e| e.0 == "ADDED" && e.1 == name);
    let ready = |name: &'static str| position(&seen, move |e| e.1 == name && e.2);
    assert!(added("web-0") < ready("web-0"));
    assert!(ready("web-0") < added("web-1"));
    assert!(ready("web-1") < added("web-2"));

    let pod = get(&pods, "web-1").await;
    let labels = &pod["metadata"]["labels"];
    assert_eq!(labels["statefulset.kubernetes.io/pod-name"], "web-1");
    assert_eq!(labels["apps.kubernetes.io/pod-index"], "1");
    assert_eq!(labels["controller-revision-hash"], status["updateRevision"]);
    assert_eq!(pod["spec"]["hostname"], "web-1");
    assert_eq!(pod["spec"]["subdomain"], "nginx");
    assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
    let volume = pod["spec"]["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "www")
        .cloned()
        .expect("the claim's volume");
    assert_eq!(volume["persistentVolumeClaim"]["claimName"], "www-web-1");

    // The revision the pods run.
    let revisions = api(
        &client,
        "apps/v1",
        "ControllerRevision",
        "controllerrevisions",
        "default",
    );
    let revision = get(&revisions, status["updateRevision"].as_str().unwrap()).await;
    assert_eq!(revision["revision"], 1);
    assert_eq!(revision["metadata"]["ownerReferences"][0]["name"], "web");
    assert_eq!(revision["data"]["spec"]["template"]["$patch"], "replace");
}

#[tokio::test]
async fn claims_are_created_before_their_pods_and_kept() {
    let (_server, client) = server_with_storage(Workloads::with_nodes(1)).await;
    let sets = api(&client, "apps/v1", "StatefulSet", "statefulsets", "default");
    let claims = api(
        &client,
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "default",
    );
    create(&sets, web(2)).await;
    status_until(&sets, "2 ready replicas", |s| s["readyReplicas"] == 2).await;
    for name in ["www-web-0", "www-web-1"] {
        let claim = get(&claims, name).await;
        assert_eq!(claim["metadata"]["labels"]["app"], "nginx", "{claim}");
        assert_eq!(claim["spec"]["resources"]["requests"]["storage"], "1Gi");
    }
    let events = api(&client, "v1", "Event", "events", "default");
    let messages: Vec<String> = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .filter(|e| e["involvedObject"]["kind"] == "StatefulSet")
        .map(|e| {
            format!(
                "{} {}",
                e["reason"].as_str().unwrap(),
                e["message"].as_str().unwrap()
            )
        })
        .collect();
    for wanted in [
        "SuccessfulCreate create Claim www-web-0 Pod web-0 in StatefulSet web success",
        "SuccessfulCreate create Pod web-0 in StatefulSet web successful",
        "SuccessfulCreate create Pod web-1 in StatefulSet web successful",
    ] {
        assert!(
            messages.iter().any(|m| m == wanted),
            "{wanted} in {messages:?}"
        );
    }

    // Scaled to zero, the pods go and the claims stay (`Retain`).
    scale(&sets, json!({"spec": {"replicas": 0}})).await;
    status_until(&sets, "no replicas", |s| s["replicas"] == 0).await;
    assert!(!get(&claims, "www-web-0").await.is_null());
    assert!(!get(&claims, "www-web-1").await.is_null());
}

#[tokio::test]
async fn scaling_down_removes_the_highest_ordinal_first() {
    let (_server, client) = server_with_storage(Workloads::with_nodes(1)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let sets = api(&client, "apps/v1", "StatefulSet", "statefulsets", "default");
    create(&sets, web(3)).await;
    status_until(&sets, "3 ready replicas", |s| s["readyReplicas"] == 3).await;
    let seen = record(&pods).await;
    scale(&sets, json!({"spec": {"replicas": 1}})).await;
    status_until(&sets, "1 replica", |s| s["replicas"] == 1).await;
    let deleted = |name: &'static str| position(&seen, move |e| e.0 == "DELETED" && e.1 == name);
    assert!(deleted("web-2") < deleted("web-1"));
    assert!(!get(&pods, "web-0").await.is_null());
    assert!(get(&pods, "web-1").await.is_null());
}

#[tokio::test]
async fn a_rolling_update_replaces_only_the_pods_at_or_above_the_partition() {
    let (_server, client) = server_with_storage(Workloads::with_nodes(1)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let sets = api(&client, "apps/v1", "StatefulSet", "statefulsets", "default");
    let mut set = web(3);
    set["spec"]["updateStrategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 2}});
    create(&sets, set).await;
    let before = status_until(&sets, "3 ready replicas", |s| s["readyReplicas"] == 3).await;
    let old = before["currentRevision"].as_str().unwrap().to_string();
    scale(
        &sets,
        json!({"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.28"}]}}}}),
    )
    .await;
    let status = status_until(&sets, "web-2 updated", |s| {
        s["updatedReplicas"] == 1 && s["readyReplicas"] == 3 && s["updateRevision"] != old.as_str()
    })
    .await;
    assert_eq!(status["currentRevision"], old.as_str());
    assert_eq!(status["currentReplicas"], 2);
    let image = |pod: &Value| {
        pod["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(image(&get(&pods, "web-2").await), "nginx:1.28");
    assert_eq!(image(&get(&pods, "web-1").await), "nginx:1.27");
    assert_eq!(image(&get(&pods, "web-0").await), "nginx:1.27");
    assert_eq!(
        get(&pods, "web-0").await["metadata"]["labels"]["controller-revision-hash"],
        old.as_str()
    );

    // The partition lowered to 0: every pod is updated, and the update revision is current.
    scale(
        &sets,
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}),
    )
    .await;
    let done = status_until(&sets, "all updated", |s| {
        s["updatedReplicas"] == 3
            && s["readyReplicas"] == 3
            && s["currentRevision"] == s["updateRevision"]
    })
    .await;
    assert_eq!(done["currentReplicas"], 3);
    assert_eq!(image(&get(&pods, "web-0").await), "nginx:1.28");
    let revisions = api(
        &client,
        "apps/v1",
        "ControllerRevision",
        "controllerrevisions",
        "default",
    );
    let numbers: Vec<i64> = revisions
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|r| {
            serde_json::to_value(r).unwrap()["revision"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(numbers.len(), 2, "{numbers:?}");
    assert!(numbers.contains(&1) && numbers.contains(&2));
}

#[tokio::test]
async fn parallel_pods_are_created_at_once_and_scaled_claims_deleted_with_their_pods() {
    let (_server, client) = server_with_storage(Workloads::with_nodes(1)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let sets = api(&client, "apps/v1", "StatefulSet", "statefulsets", "default");
    let claims = api(
        &client,
        "v1",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        "default",
    );
    let seen = record(&pods).await;
    let mut set = web(3);
    set["spec"]["podManagementPolicy"] = json!("Parallel");
    set["spec"]["persistentVolumeClaimRetentionPolicy"] =
        json!({"whenDeleted": "Retain", "whenScaled": "Delete"});
    create(&sets, set).await;
    status_until(&sets, "3 ready replicas", |s| s["readyReplicas"] == 3).await;
    // Parallel: all three were created before any was ready.
    let first_ready = position(&seen, |e| e.2);
    let last_added = position(&seen, |e| e.0 == "ADDED" && e.1 == "web-2");
    assert!(last_added < first_ready, "{:?}", seen.lock().unwrap());

    scale(&sets, json!({"spec": {"replicas": 1}})).await;
    status_until(&sets, "1 replica", |s| s["replicas"] == 1).await;
    // `whenScaled: Delete`: the claims of the removed pods go with them.
    until("the scaled-down claims deleted", || async {
        let (one, two) = (
            get(&claims, "www-web-1").await,
            get(&claims, "www-web-2").await,
        );
        if one.is_null() && two.is_null() {
            Ok(())
        } else {
            Err(format!("{one} {two}"))
        }
    })
    .await;
    assert!(!get(&claims, "www-web-0").await.is_null());
}

#[tokio::test]
async fn on_delete_updates_a_pod_only_when_the_user_deletes_it() {
    let (_server, client) = server_with_storage(Workloads::with_nodes(1)).await;
    let pods = api(&client, "v1", "Pod", "pods", "default");
    let sets = api(&client, "apps/v1", "StatefulSet", "statefulsets", "default");
    let mut set = web(2);
    set["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    create(&sets, set).await;
    status_until(&sets, "2 ready replicas", |s| s["readyReplicas"] == 2).await;
    scale(
        &sets,
        json!({"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.28"}]}}}}),
    )
    .await;
    let status = status_until(&sets, "a new update revision", |s| {
        s["observedGeneration"] == 2 && s["currentRevision"] != s["updateRevision"]
    })
    .await;
    assert!(status["updatedReplicas"].is_null(), "{status}");
    pods.delete("web-1", &Default::default())
        .await
        .expect("deleted");
    status_until(&sets, "web-1 updated", |s| {
        s["updatedReplicas"] == 1 && s["readyReplicas"] == 2
    })
    .await;
    let image = |pod: Value| {
        pod["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(image(get(&pods, "web-1").await), "nginx:1.28");
    assert_eq!(image(get(&pods, "web-0").await), "nginx:1.27");
}
