//! apps/v1 ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions on the in-process API
//! server through a real `kube::Client`: defaults read back, upstream's refusals (selectors,
//! a StatefulSet's immutable spec fields, claim templates, a DaemonSet's restart policy and
//! rolling update, a revision's data), generation and a DaemonSet's template generation, status
//! vs main writes, the scale subresource, server-side apply of containers, discovery and
//! `kubectl get` columns.

mod apiserver_support;

use apiserver_support::{create, default_api as api, kubectl_for, refusal, with_spec};
use k8s_openapi::api::apps::v1::{ControllerRevision, DaemonSet, ReplicaSet, StatefulSet};
use kube::api::{Patch, PatchParams};
use kube::core::ObjectList;
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

/// A `kind` named `w` selecting `app: w`, one container, with `extra` merged into its spec.
fn workload(kind: &str, spec: Value) -> Value {
    with_spec(
        json!({
        "apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "w"},
        "spec": {"selector": {"matchLabels": {"app": "w"}},
                 "template": {"metadata": {"labels": {"app": "w"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}}),
        spec,
    )
}

fn postgres() -> Value {
    workload(
        "StatefulSet",
        json!({"serviceName": "db", "replicas": 3,
            "template": {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [
                {"name": "db", "image": "postgres:16",
                 "volumeMounts": [{"name": "data", "mountPath": "/var/lib/postgresql"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "8Gi"}}}}]}),
    )
}

#[tokio::test]
async fn each_kind_reads_back_with_upstreams_defaults() {
    let server = ApiServer::start().await.unwrap();
    let rs = create(
        &api::<ReplicaSet>(&server),
        workload("ReplicaSet", json!({})),
    )
    .await
    .unwrap();
    assert_eq!(rs["spec"]["replicas"], 1);
    assert_eq!(rs["metadata"]["generation"], 1);
    assert_eq!(rs["status"], json!({"replicas": 0}));
    assert_eq!(
        rs["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );

    let sts = create(&api::<StatefulSet>(&server), postgres())
        .await
        .unwrap();
    let spec = &sts["spec"];
    assert_eq!(spec["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        spec["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    let claim = &spec["volumeClaimTemplates"][0];
    assert_eq!(claim["apiVersion"], "v1");
    assert_eq!(claim["kind"], "PersistentVolumeClaim");
    assert_eq!(claim["spec"]["volumeMode"], "Filesystem");
    assert_eq!(claim["status"], json!({"phase": "Pending"}));

    let ds = create(&api::<DaemonSet>(&server), workload("DaemonSet", json!({})))
        .await
        .unwrap();
    assert_eq!(
        ds["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(ds["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(
        ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "1"
    );
    assert_eq!(
        ds["status"],
        json!({"currentNumberScheduled": 0, "numberMisscheduled": 0,
               "desiredNumberScheduled": 0, "numberReady": 0})
    );

    let revision = json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": "w-1"}, "revision": 1, "data": {"spec": {"replicas": 3}}});
    let cr = create(&api::<ControllerRevision>(&server), revision)
        .await
        .unwrap();
    assert_eq!(cr["data"], json!({"spec": {"replicas": 3}}));
    assert!(cr["metadata"].get("generation").is_none());
}

#[tokio::test]
async fn upstreams_rules_refuse_what_kube_apiserver_refuses() {
    let server = ApiServer::start().await.unwrap();
    let rs = api::<ReplicaSet>(&server);
    let (code, message) = refusal(
        create(
            &rs,
            workload(
                "ReplicaSet",
                json!({"selector": {"matchLabels": {"app": "x"}}}),
            ),
        )
        .await,
    );
    assert_eq!(code, 422);
    assert_eq!(
        message,
        "ReplicaSet.apps \"w\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"w\"}: `selector` does not match template `labels`"
    );

    let ds = api::<DaemonSet>(&server);
    let never = workload(
        "DaemonSet",
        json!({"template": {"metadata": {"labels": {"app": "w"}}, "spec": {
            "restartPolicy": "Never", "containers": [{"name": "web", "image": "nginx"}]}}}),
    );
    let (_, message) = refusal(create(&ds, never).await);
    assert_eq!(
        message,
        "DaemonSet.apps \"w\" is invalid: spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""
    );
    let both = workload(
        "DaemonSet",
        json!({"updateStrategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}}),
    );
    let (_, message) = refusal(create(&ds, both).await);
    assert!(
        message.contains("spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"),
        "{message}"
    );

    let sts = api::<StatefulSet>(&server);
    let mut no_storage = postgres();
    no_storage["spec"]["volumeClaimTemplates"][0]["spec"] = json!({});
    let (_, message) = refusal(create(&sts, no_storage).await);
    assert_eq!(
        message,
        "StatefulSet.apps \"w\" is invalid: [spec.volumeClaimTemplates[0].spec.accessModes: Required value: at least 1 access mode is required, spec.volumeClaimTemplates[0].spec.resources[storage]: Required value]"
    );

    let cr = api::<ControllerRevision>(&server);
    let no_data = json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": "w-1"}, "revision": 1});
    let (_, message) = refusal(create(&cr, no_data).await);
    assert_eq!(
        message,
        "ControllerRevision.apps \"w-1\" is invalid: data: Required value: data is mandatory"
    );
}

#[tokio::test]
async fn a_statefulset_changes_only_its_mutable_fields() {
    let server = ApiServer::start().await.unwrap();
    let sts = api::<StatefulSet>(&server);
    create(&sts, postgres()).await.unwrap();
    let renamed = json!({"spec": {"serviceName": "other"}});
    let (code, message) = refusal(
        sts.patch("w", &PatchParams::default(), &Patch::Merge(&renamed))
            .await,
    );
    assert_eq!(code, 422);
    assert_eq!(
        message,
        "StatefulSet.apps \"w\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    );
    let mutable = json!({"spec": {"replicas": 5, "minReadySeconds": 3,
        "updateStrategy": {"rollingUpdate": {"partition": 2}}}});
    let s = sts
        .patch("w", &PatchParams::default(), &Patch::Merge(&mutable))
        .await
        .unwrap();
    assert_eq!(s.metadata.generation, Some(2));
    let scale = sts.get_scale("w").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(5));
    assert_eq!(scale.status.unwrap().selector.as_deref(), Some("app=w"));
}

#[tokio::test]
async fn status_writes_keep_the_spec_and_main_writes_keep_the_status() {
    let server = ApiServer::start().await.unwrap();
    let rs = api::<ReplicaSet>(&server);
    create(&rs, workload("ReplicaSet", json!({})))
        .await
        .unwrap();
    let status = json!({"metadata": {"labels": {"seen": "yes"}}, "spec": {"replicas": 9},
        "status": {"replicas": 1, "readyReplicas": 1, "observedGeneration": 1}});
    let r = rs
        .patch_status("w", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    assert_eq!(r.spec.as_ref().unwrap().replicas, Some(1));
    assert_eq!(r.status.as_ref().unwrap().ready_replicas, Some(1));
    assert_eq!(
        r.metadata.labels.unwrap().get("seen").map(String::as_str),
        Some("yes"),
        "a ReplicaSet's status write keeps its labels"
    );
    let main = json!({"metadata": {"annotations": {"note": "x"}}, "status": {"replicas": 7}});
    let r = rs
        .patch("w", &PatchParams::default(), &Patch::Merge(&main))
        .await
        .unwrap();
    assert_eq!(r.status.unwrap().replicas, 1);
    assert_eq!(
        r.metadata.generation,
        Some(1),
        "annotations are not the spec"
    );
    let too_many = json!({"status": {"replicas": 1, "readyReplicas": 2}});
    let (_, message) = refusal(
        rs.patch_status("w", &PatchParams::default(), &Patch::Merge(&too_many))
            .await,
    );
    assert!(
        message.contains(
            "status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn a_daemonsets_template_change_bumps_its_template_generation() {
    let server = ApiServer::start().await.unwrap();
    let ds = api::<DaemonSet>(&server);
    create(&ds, workload("DaemonSet", json!({}))).await.unwrap();
    let generation = |d: &DaemonSet| {
        (
            d.metadata.generation,
            d.metadata.annotations.as_ref().unwrap()["deprecated.daemonset.template.generation"]
                .clone(),
        )
    };
    let spec_only = json!({"spec": {"minReadySeconds": 5}});
    let d = ds
        .patch("w", &PatchParams::default(), &Patch::Merge(&spec_only))
        .await
        .unwrap();
    assert_eq!(generation(&d), (Some(2), "1".to_owned()));
    let image = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.27"}]}}}});
    let d = ds
        .patch("w", &PatchParams::default(), &Patch::Strategic(&image))
        .await
        .unwrap();
    assert_eq!(generation(&d), (Some(3), "2".to_owned()));
    let moved = json!({"spec": {"selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "x"}}}}});
    let (_, message) = refusal(
        ds.patch("w", &PatchParams::default(), &Patch::Merge(&moved))
            .await,
    );
    assert_eq!(
        message,
        "DaemonSet.apps \"w\" is invalid: spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"x\"}}: field is immutable"
    );
}

#[tokio::test]
async fn a_controller_revisions_data_is_immutable_and_its_controller_printed() {
    let server = ApiServer::start().await.unwrap();
    let sts = api::<StatefulSet>(&server);
    let owner = create(&sts, postgres()).await.unwrap();
    let cr = api::<ControllerRevision>(&server);
    let revision = json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": "w-1", "ownerReferences": [{"apiVersion": "apps/v1",
            "kind": "StatefulSet", "name": "w", "uid": owner["metadata"]["uid"], "controller": true}]},
        "revision": 1, "data": {"spec": {"template": {"$patch": "replace"}}}});
    create(&cr, revision).await.unwrap();
    let changed = json!({"data": {"b": 1}});
    let (_, message) = refusal(
        cr.patch("w-1", &PatchParams::default(), &Patch::Merge(&changed))
            .await,
    );
    assert_eq!(
        message,
        "ControllerRevision.apps \"w-1\" is invalid: data: Invalid value: {\"b\":1,\"spec\":{\"template\":{\"$patch\":\"replace\"}}}: field is immutable"
    );
    let bumped = json!({"revision": 2});
    let r = cr
        .patch("w-1", &PatchParams::default(), &Patch::Merge(&bumped))
        .await
        .unwrap();
    assert_eq!(r.revision, 2);

    // `kubectl get controllerrevisions`'s columns.
    apiserver_support::assert_table(
        &server.client().unwrap(),
        "/apis/apps/v1/namespaces/default/controllerrevisions",
        "Name, Controller, Revision, Age",
        &[
            (0, json!("w-1")),
            (1, json!("statefulset.apps/w")),
            (2, json!(2)),
        ],
    )
    .await;
}

#[tokio::test]
async fn discovery_lists_the_kinds_with_their_short_names_and_subresources() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let request = http::Request::get("/apis/apps/v1")
        .body(Vec::new())
        .unwrap();
    let list: Value = client.request(request).await.unwrap();
    let names: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    for name in [
        "controllerrevisions",
        "daemonsets",
        "daemonsets/status",
        "replicasets",
        "replicasets/scale",
        "replicasets/status",
        "statefulsets",
        "statefulsets/scale",
        "statefulsets/status",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    assert!(!names.contains(&"daemonsets/scale"));
    let short = |plural: &str| {
        apiserver_support::discovered(&list, plural).map(|r| r["shortNames"].clone())
    };
    assert_eq!(short("replicasets"), Some(json!(["rs"])));
    assert_eq!(short("statefulsets"), Some(json!(["sts"])));
    assert_eq!(short("daemonsets"), Some(json!(["ds"])));
    let rs = api::<ReplicaSet>(&server);
    create(&rs, workload("ReplicaSet", json!({})))
        .await
        .unwrap();
    let listed: ObjectList<ReplicaSet> = rs.list(&Default::default()).await.unwrap();
    assert_eq!(listed.items.len(), 1);
}

#[tokio::test]
async fn kubectl_gets_and_explains_the_workloads() {
    let server = ApiServer::start().await.unwrap();
    create(&api::<StatefulSet>(&server), postgres())
        .await
        .unwrap();
    let daemon = workload(
        "DaemonSet",
        json!({"template": {"metadata": {"labels": {"app": "w"}}, "spec": {
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "containers": [{"name": "agent", "image": "fluent-bit:3"}]}}}),
    );
    create(&api::<DaemonSet>(&server), daemon).await.unwrap();
    let (k, _) = kubectl_for(&server);
    let out = tokio::task::spawn_blocking(move || {
        (
            k.ok(&["get", "sts,ds", "-o", "wide"]),
            k.ok(&["explain", "statefulset.spec.volumeClaimTemplates"]),
        )
    })
    .await
    .unwrap();
    let (get, explain) = out;
    assert!(get.contains("statefulset.apps/w   0/3"), "{get}");
    assert!(get.contains("NODE SELECTOR"), "{get}");
    assert!(get.contains("kubernetes.io/os=linux"), "{get}");
    assert!(get.contains("fluent-bit:3"), "{get}");
    assert!(explain.contains("PersistentVolumeClaim"), "{explain}");
}
