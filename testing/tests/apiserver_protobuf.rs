//! Protobuf request bodies of the built-in kinds, as client-go's typed clients send them: the
//! real `kubectl` (`create deployment|job|cronjob|quota|pdb|ingress`; `run`, which sends JSON) against the
//! in-process server, the objects stored with upstream's defaults; bodies client-go's protobuf
//! serializer wrote (`tests/fixtures/protobuf/`) refused with upstream's messages.

mod apiserver_support;

use apiserver_support::{kubectl_for, kubectl_ok, raw_bytes, rollout_server};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// Runs `kubectl args` against `server` (on a blocking thread) and returns its output.
async fn kubectl(server: &ApiServer, args: &[&str]) -> String {
    kubectl_ok(&kubectl_for(server).0, args).await
}

/// The Content-Type of the POST to `collection` the server recorded.
fn posted_as(server: &ApiServer, collection: &str) -> Option<String> {
    server
        .requests()
        .into_iter()
        .find(|r| r.method == http::Method::POST && r.path.ends_with(collection))
        .and_then(|r| r.content_type)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_deployment_stores_the_protobuf_body_with_upstreams_defaults() {
    let server = ApiServer::start().await.unwrap();
    let out = kubectl(
        &server,
        &[
            "create",
            "deployment",
            "web",
            "--image=nginx",
            "--replicas=2",
        ],
    )
    .await;
    assert_eq!(out.trim(), "deployment.apps/web created");
    assert_eq!(
        posted_as(&server, "/deployments").as_deref(),
        Some(PROTOBUF)
    );
    let stored = server
        .object("apps/v1", "deployments", Some("default"), "web")
        .expect("stored");
    assert_eq!(stored["metadata"]["generation"], 1);
    assert_eq!(stored["metadata"]["labels"], json!({"app": "web"}));
    let spec = &stored["spec"];
    assert_eq!(spec["replicas"], 2);
    assert_eq!(spec["selector"], json!({"matchLabels": {"app": "web"}}));
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(
        spec["template"]["spec"]["containers"],
        json!([{
            "name": "nginx",
            "image": "nginx",
            "imagePullPolicy": "Always",
            "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }])
    );
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Always");
    assert_eq!(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    assert_eq!(
        spec["template"]["spec"]["schedulerName"],
        "default-scheduler"
    );
    assert_eq!(
        spec["template"]["spec"]["terminationGracePeriodSeconds"],
        30
    );
    assert_eq!(stored["status"], json!({}));

    let table = kubectl(&server, &["get", "deployment", "web"]).await;
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    );
    assert_eq!(lines[1][..4], ["web", "0/2", "0", "0"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_job_and_cronjob_store_the_batch_defaults() {
    let server = ApiServer::start().await.unwrap();
    let out = kubectl(&server, &["create", "job", "once", "--image=busybox"]).await;
    assert_eq!(out.trim(), "job.batch/once created");
    assert_eq!(posted_as(&server, "/jobs").as_deref(), Some(PROTOBUF));
    let job = server
        .object("batch/v1", "jobs", Some("default"), "once")
        .expect("stored");
    let spec = &job["spec"];
    assert_eq!(
        (
            &spec["completions"],
            &spec["parallelism"],
            &spec["backoffLimit"],
            &spec["completionMode"]
        ),
        (&json!(1), &json!(1), &json!(6), &json!("NonIndexed"))
    );
    assert_eq!(spec["template"]["spec"]["restartPolicy"], "Never");
    // The selector the server generated from the Job's uid.
    let uid = job["metadata"]["uid"].as_str().unwrap();
    assert_eq!(
        spec["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        uid
    );

    let out = kubectl(
        &server,
        &[
            "create",
            "cronjob",
            "nightly",
            "--image=busybox",
            "--schedule=0 3 * * *",
        ],
    )
    .await;
    assert_eq!(out.trim(), "cronjob.batch/nightly created");
    assert_eq!(posted_as(&server, "/cronjobs").as_deref(), Some(PROTOBUF));
    let cron = server
        .object("batch/v1", "cronjobs", Some("default"), "nightly")
        .expect("stored");
    let spec = &cron["spec"];
    assert_eq!(spec["schedule"], "0 3 * * *");
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["successfulJobsHistoryLimit"], 3);
    assert_eq!(spec["failedJobsHistoryLimit"], 1);
    assert_eq!(
        spec["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"],
        "OnFailure"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_run_creates_a_pending_pod_with_upstreams_defaults() {
    let server = ApiServer::start().await.unwrap();
    // No controller makes the namespace's `default` service account the pod runs as.
    kubectl(&server, &["create", "serviceaccount", "default"]).await;
    let out = kubectl(&server, &["run", "nginx", "--image=nginx"]).await;
    assert_eq!(out.trim(), "pod/nginx created");
    // kubectl run builds its pod through the generic (JSON) client; Pods sent as protobuf are
    // covered by the fixtures of the differential corpus (`protobuf: create pod`).
    let pod = server
        .object("v1", "pods", Some("default"), "nginx")
        .expect("stored");
    assert_eq!(pod["metadata"]["labels"], json!({"run": "nginx"}));
    assert_eq!(pod["spec"]["containers"][0]["imagePullPolicy"], "Always");
    assert_eq!(pod["spec"]["restartPolicy"], "Always");
    assert_eq!(pod["spec"]["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["spec"]["enableServiceLinks"], true);
    assert_eq!(pod["status"]["phase"], "Pending");
    assert_eq!(pod["status"]["qosClass"], "BestEffort");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_create_quota_pdb_and_ingress_send_protobuf() {
    let server = ApiServer::start().await.unwrap();
    for (args, created) in [
        (
            &[
                "create",
                "quota",
                "compute",
                "--hard=pods=10,requests.cpu=2",
            ][..],
            "resourcequota/compute created",
        ),
        (
            &[
                "create",
                "pdb",
                "web",
                "--selector=app=web",
                "--min-available=1",
            ][..],
            "poddisruptionbudget.policy/web created",
        ),
        (
            &[
                "create",
                "ingress",
                "shop",
                "--rule=shop.example.com/=shop:80",
            ][..],
            "ingress.networking.k8s.io/shop created",
        ),
    ] {
        assert_eq!(kubectl(&server, args).await.trim(), created);
    }
    for collection in ["/resourcequotas", "/poddisruptionbudgets", "/ingresses"] {
        assert_eq!(
            posted_as(&server, collection).as_deref(),
            Some(PROTOBUF),
            "{collection}"
        );
    }
    let quota = server
        .object("v1", "resourcequotas", Some("default"), "compute")
        .unwrap();
    assert_eq!(
        quota["spec"]["hard"],
        json!({"pods": "10", "requests.cpu": "2"})
    );
    let pdb = server
        .object("policy/v1", "poddisruptionbudgets", Some("default"), "web")
        .unwrap();
    assert_eq!(pdb["spec"]["minAvailable"], 1);
    let ingress = server
        .object("networking.k8s.io/v1", "ingresses", Some("default"), "shop")
        .unwrap();
    assert_eq!(
        ingress["spec"]["rules"][0]["http"]["paths"][0],
        json!({"path": "/", "pathType": "Exact",
               "backend": {"service": {"name": "shop", "port": {"number": 80}}}})
    );
}

async fn post(server: &ApiServer, path: &str, body: &[u8]) -> (u16, Value) {
    let client = server.client().unwrap();
    raw_bytes(&client, "POST", path, Some(PROTOBUF), body.to_vec()).await
}

#[tokio::test]
async fn invalid_objects_and_unknown_kinds_are_refused_with_upstreams_messages() {
    let server = ApiServer::start().await.unwrap();
    let invalid = include_bytes!("fixtures/protobuf/deployment-invalid.pb");
    let (code, status) = post(
        &server,
        "/apis/apps/v1/namespaces/default/deployments",
        invalid,
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "Deployment.apps \"bad\" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.template.metadata.labels: Invalid value: {\"app\":\"bad\"}: `selector` does not match template `labels`, spec.template.spec.containers[0].name: Invalid value: \"Web\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive]"
    );

    // A Pod's body written to deployments: no conversion between the two.
    let pod = include_bytes!("fixtures/protobuf/pod-kubectl.pb");
    let (code, status) = post(&server, "/apis/apps/v1/namespaces/default/deployments", pod).await;
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "Pod in version \"v1\" cannot be handled as a Deployment: converting (v1.Pod) to (apps.Deployment): unknown conversion"
    );

    // A kind no served group registers.
    let widget = b"k8s\0\x0a\x18\x0a\x0eexample.com/v1\x12\x06Widget\x12\x05\x0a\x03\x0a\x01w";
    let (code, status) = post(&server, "/api/v1/namespaces/default/configmaps", widget).await;
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "Widget in version \"v1\" cannot be handled as a ConfigMap: no kind \"Widget\" is registered for version \"example.com/v1\" in scheme \"pkg/runtime/scheme.go:110\""
    );

    // No envelope.
    let (code, status) = post(
        &server,
        "/api/v1/namespaces/default/configmaps",
        b"\x0a\x03abc",
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "the object provided is unrecognized (must be of type ConfigMap): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] (0a03616263)"
    );
}

#[tokio::test]
async fn custom_resources_are_not_served_as_protobuf() {
    let (server, _) = rollout_server(true).await;
    let body = b"k8s\0\x0a\x1f\x0a\x15demo.kubeward.dev/v1\x12\x06Rollout\x12\x05\x0a\x03\x0a\x01w";
    let (code, status) = post(
        &server,
        "/apis/demo.kubeward.dev/v1/namespaces/default/rollouts",
        body,
    )
    .await;
    assert_eq!(code, 415, "{status}");
    assert_eq!(status["reason"], "UnsupportedMediaType");
}
