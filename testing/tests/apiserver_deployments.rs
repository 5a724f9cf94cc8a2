//! apps/v1 Deployments on the in-process API server through a real `kube::Client`: defaults
//! read back from a Helm-chart-like manifest, the immutable selector, status vs main writes,
//! generation, the scale subresource, server-side apply and strategic merge patches by the
//! merge keys.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v1::Scale;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

fn manifest() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "shop", "labels": {"app.kubernetes.io/name": "shop"}},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": "shop"}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "shop"}},
                "spec": {"containers": [
                    {"name": "shop", "image": "nginx:1.16.0",
                     "ports": [{"name": "http", "containerPort": 80}],
                     "env": [{"name": "LOG_LEVEL", "value": "info"}],
                     "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
                     "resources": {"requests": {"cpu": "0.1", "memory": "64Mi"}}},
                    {"name": "sidecar", "image": "busybox"}]}}}})
}

async fn deployments() -> (ApiServer, Api<Deployment>) {
    let server = ApiServer::start().await.unwrap();
    let api = Api::namespaced(server.client().unwrap(), "default");
    (server, api)
}

async fn create(api: &Api<Deployment>) -> Deployment {
    let d: Deployment = serde_json::from_value(manifest()).unwrap();
    api.create(&PostParams::default(), &d).await.unwrap()
}

#[tokio::test]
async fn a_created_deployment_reads_back_with_upstreams_defaults() {
    let (_server, api) = deployments().await;
    let d = serde_json::to_value(create(&api).await).unwrap();
    let spec = &d["spec"];
    assert_eq!(d["metadata"]["generation"], 1);
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    let shop = &pod["containers"][0];
    assert_eq!(shop["imagePullPolicy"], "IfNotPresent");
    assert_eq!(pod["containers"][1]["imagePullPolicy"], "Always");
    assert_eq!(shop["ports"][0]["protocol"], "TCP");
    assert_eq!(shop["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(shop["resources"]["requests"]["cpu"], "100m");
    assert_eq!(
        shop["livenessProbe"],
        json!({"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
               "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
}

#[tokio::test]
async fn the_selector_is_immutable_and_must_match_the_template() {
    let (_server, api) = deployments().await;
    create(&api).await;
    let patch = json!({"spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": "cart"}},
        "template": {"metadata": {"labels": {"app.kubernetes.io/name": "cart"}}}}});
    let err = api
        .patch("shop", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err}")
    };
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "Deployment.apps \"shop\" is invalid: spec.selector: Invalid value: {\"matchLabels\":{\"app.kubernetes.io/name\":\"cart\"}}: field is immutable"
    );
    let mut bad = manifest();
    bad["metadata"]["name"] = json!("other");
    bad["spec"]["template"]["metadata"]["labels"] = json!({"x": "y"});
    let err = api
        .create(
            &PostParams::default(),
            &serde_json::from_value(bad).unwrap(),
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("`selector` does not match template `labels`"),
        "{err}"
    );
}

#[tokio::test]
async fn status_and_main_writes_keep_each_others_fields_and_generation_follows_the_spec() {
    let (_server, api) = deployments().await;
    create(&api).await;
    let status = json!({"spec": {"replicas": 9}, "status": {"replicas": 1, "readyReplicas": 1}});
    let d = api
        .patch_status("shop", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    assert_eq!(d.spec.as_ref().unwrap().replicas, Some(1));
    assert_eq!(d.status.as_ref().unwrap().ready_replicas, Some(1));
    assert_eq!(d.metadata.generation, Some(1));
    let main = json!({"metadata": {"labels": {"tier": "web"}}, "status": {"replicas": 5}});
    let d = api
        .patch("shop", &PatchParams::default(), &Patch::Merge(&main))
        .await
        .unwrap();
    assert_eq!(d.status.as_ref().unwrap().replicas, Some(1));
    assert_eq!(d.metadata.generation, Some(1), "labels are not the spec");
    let spec = json!({"spec": {"replicas": 3}});
    let d = api
        .patch("shop", &PatchParams::default(), &Patch::Merge(&spec))
        .await
        .unwrap();
    assert_eq!(d.metadata.generation, Some(2));
}

#[tokio::test]
async fn the_scale_subresource_reads_and_writes_the_replicas() {
    let (_server, api) = deployments().await;
    create(&api).await;
    let scale = api.get_scale("shop").await.unwrap();
    assert_eq!(scale.spec.as_ref().unwrap().replicas, Some(1));
    assert_eq!(
        scale.status.as_ref().unwrap().selector.as_deref(),
        Some("app.kubernetes.io/name=shop")
    );
    let mut new = Scale {
        metadata: scale.metadata.clone(),
        spec: scale.spec.clone(),
        status: None,
    };
    new.spec.as_mut().unwrap().replicas = Some(4);
    let scaled = api
        .replace_scale("shop", &PostParams::default(), &new)
        .await
        .unwrap();
    assert_eq!(scaled.spec.unwrap().replicas, Some(4));
    let d = api.get("shop").await.unwrap();
    assert_eq!(d.spec.unwrap().replicas, Some(4));
    assert_eq!(d.metadata.generation, Some(2));
}

#[tokio::test]
async fn apply_and_strategic_merge_patches_merge_containers_ports_and_env_by_their_keys() {
    let (_server, api) = deployments().await;
    let ssa = |manager: &str| PatchParams::apply(manager);
    api.patch("shop", &ssa("helm"), &Patch::Apply(manifest()))
        .await
        .unwrap();
    let mut extra = manifest();
    extra["metadata"]["labels"] = json!({});
    extra["spec"]["template"]["spec"]["containers"] = json!([
        {"name": "shop", "ports": [{"name": "metrics", "containerPort": 9090}],
         "env": [{"name": "TRACING", "value": "on"}]}]);
    let d = api
        .patch("shop", &ssa("tracing"), &Patch::Apply(extra))
        .await
        .unwrap();
    let d = serde_json::to_value(d).unwrap();
    let shop = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(shop["image"], "nginx:1.16.0");
    assert_eq!(shop["ports"].as_array().unwrap().len(), 2);
    assert_eq!(shop["env"].as_array().unwrap().len(), 2);
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let smp = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "image": "busybox:1.36"}]}}}});
    let d = api
        .patch("shop", &PatchParams::default(), &Patch::Strategic(&smp))
        .await
        .unwrap();
    let containers = d.spec.unwrap().template.spec.unwrap().containers;
    assert_eq!(containers.len(), 2);
    assert_eq!(containers[0].image.as_deref(), Some("nginx:1.16.0"));
    assert_eq!(containers[1].image.as_deref(), Some("busybox:1.36"));
}
