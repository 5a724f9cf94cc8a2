//! apps/v1 Deployments: defaults read back (the Deployment's and its pod template's), validation
//! of each rule family (selector, strategy, replicas, containers, ports, env, volumes and
//! mounts, resources), immutable fields, generation, status vs main writes, the scale
//! subresource, strategic merge patches and server-side apply by the OpenAPI's merge keys,
//! tables and discovery.

use serde_json::{Value, json};

use crate::corpus::{
    self, APPLY, Case, JSON_PATCH, SMP, Step, delete, merge_patch, merged, patch, post,
    status_patch, table,
};

const DEPLOYS: &str = "/apis/apps/v1/namespaces/NS/deployments";
const D: &str = "/apis/apps/v1/namespaces/NS/deployments/d";

/// A valid Deployment `d` (one container `web`, selector `app: d`), with `extra` merged in.
fn deployment(extra: Value) -> Value {
    merged(
        json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "d"}},
                 "template": {"metadata": {"labels": {"app": "d"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}}),
        extra,
    )
}

/// `deployment` with its containers replaced by `containers`.
fn with_containers(containers: Value) -> Value {
    deployment(json!({"spec": {"template": {"spec": {"containers": containers}}}}))
}

/// `deployment` with its pod spec's fields `extra` merged in.
fn with_pod(extra: Value) -> Value {
    deployment(json!({"spec": {"template": {"spec": extra}}}))
}

fn create(body: Value) -> Step {
    post(DEPLOYS, body)
}

fn get() -> Step {
    corpus::get(D)
}

fn put(body: Value) -> Step {
    corpus::put(D, body)
}

fn apply(manager: &str, force: bool, body: Value) -> Step {
    let force = if force { "&force=true" } else { "" };
    patch(format!("{D}?fieldManager={manager}{force}"), APPLY, body)
}

/// The Deployment a Helm chart's template renders (the `helm create` chart, with a sidecar,
/// env from several sources, volumes and probes).
fn helm_chart() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "labels": {
            "helm.sh/chart": "shop-0.1.0", "app.kubernetes.io/name": "shop",
            "app.kubernetes.io/instance": "d", "app.kubernetes.io/version": "1.16.0",
            "app.kubernetes.io/managed-by": "Helm"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app.kubernetes.io/name": "shop", "app.kubernetes.io/instance": "d"}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "shop", "app.kubernetes.io/instance": "d"},
                             "annotations": {"checksum/config": "abc123"}},
                "spec": {
                    "serviceAccountName": "shop",
                    "securityContext": {"fsGroup": 2000},
                    "containers": [
                        {"name": "shop", "image": "nginx:1.16.0", "imagePullPolicy": "IfNotPresent",
                         "securityContext": {"runAsNonRoot": true, "runAsUser": 1000,
                                             "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": true},
                         "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP"},
                                   {"name": "metrics", "containerPort": 9090}],
                         "env": [{"name": "LOG_LEVEL", "value": "info"},
                                 {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                                 {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "shop", "key": "password"}}},
                                 {"name": "LIMIT", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}}],
                         "envFrom": [{"configMapRef": {"name": "shop-env"}}],
                         "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
                         "readinessProbe": {"tcpSocket": {"port": 80}, "initialDelaySeconds": 5},
                         "resources": {"limits": {"cpu": "500m", "memory": "128Mi"},
                                       "requests": {"cpu": "100m", "memory": "64Mi"}},
                         "volumeMounts": [{"name": "config", "mountPath": "/etc/shop", "readOnly": true},
                                          {"name": "cache", "mountPath": "/var/cache/nginx"}]},
                        {"name": "sidecar", "image": "busybox", "command": ["sh", "-c", "sleep infinity"],
                         "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}],
                    "volumes": [
                        {"name": "config", "configMap": {"name": "shop"}},
                        {"name": "tls", "secret": {"secretName": "shop-tls"}},
                        {"name": "cache", "emptyDir": {}}],
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "shop", "effect": "NoSchedule"}]}}}})
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |label: &str, steps: Vec<Step>| {
        cases.push(Case::new(format!("deployment: {label}"), steps));
    };

    // Defaults read back.
    add("minimal", vec![create(deployment(json!({}))), get()]);
    add("helm chart", vec![create(helm_chart()), get()]);
    for (label, image) in [
        ("no tag", "nginx"),
        ("latest", "nginx:latest"),
        ("tag", "nginx:1.25"),
        ("registry port", "registry.example.com:5000/team/nginx"),
        (
            "digest",
            "nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000",
        ),
    ] {
        add(
            &format!("image {label}"),
            vec![create(with_containers(
                json!([{"name": "web", "image": image}]),
            ))],
        );
    }
    for (label, body) in [
        (
            "recreate",
            deployment(json!({"spec": {"strategy": {"type": "Recreate"}}})),
        ),
        (
            "rolling update given",
            deployment(
                json!({"spec": {"replicas": 0, "strategy": {"rollingUpdate": {"maxSurge": 1}}}}),
            ),
        ),
        (
            "probes",
            with_containers(json!([{"name": "web", "image": "nginx",
            "livenessProbe": {"exec": {"command": ["true"]}},
            "readinessProbe": {"grpc": {"port": 9000}},
            "startupProbe": {"httpGet": {"port": 8080}, "failureThreshold": 30},
            "lifecycle": {"preStop": {"httpGet": {"port": 8080, "path": "/stop"}}}}])),
        ),
        (
            "volume sources",
            deployment(json!({"spec": {"template": {"spec": {
            "containers": [{"name": "web", "image": "nginx", "volumeMounts": [{"name": "a", "mountPath": "/a"}]}],
            "volumes": [{"name": "a"},
                        {"name": "b", "hostPath": {"path": "/b"}},
                        {"name": "c", "downwardAPI": {"items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
                        {"name": "e", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
                        {"name": "f", "persistentVolumeClaim": {"claimName": "data"}}]}}}})),
        ),
        (
            "init containers",
            deployment(json!({"spec": {"template": {"spec": {
            "initContainers": [{"name": "init", "image": "busybox:1.36", "command": ["true"]}]}}}})),
        ),
        (
            "quantities",
            with_containers(json!([{"name": "web", "image": "nginx",
            "resources": {"requests": {"cpu": "0.5", "memory": "1024Mi", "ephemeral-storage": "1G"},
                          "limits": {"cpu": 2, "memory": "2Gi"}}}])),
        ),
        (
            "template without labels metadata",
            deployment(json!({"spec": {"template": {"metadata": {"annotations": {"a": "b"}}}}})),
        ),
    ] {
        add(label, vec![create(body)]);
    }

    // Validation, one rule family at a time.
    let invalid: Vec<(&str, Value)> = vec![
        (
            "no selector",
            deployment(json!({"spec": {"selector": null}})),
        ),
        (
            "empty selector",
            deployment(json!({"spec": {"selector": {"matchLabels": null}}})),
        ),
        (
            "selector not matching",
            deployment(json!({"spec": {"selector": {"matchLabels": {"app": "other"}}}})),
        ),
        (
            "selector expression",
            deployment(
                json!({"spec": {"selector": {"matchLabels": null, "matchExpressions": [
                {"key": "app", "operator": "In", "values": ["d", "e"]}]}}}),
            ),
        ),
        (
            "selector bad operator",
            deployment(json!({"spec": {"selector": {"matchExpressions": [
                {"key": "app", "operator": "Near", "values": ["d"]}]}}})),
        ),
        (
            "selector label value",
            deployment(json!({"spec": {"selector": {"matchLabels": {"app": "-d"}},
                "template": {"metadata": {"labels": {"app": "-d"}}}}})),
        ),
        (
            "replicas negative",
            deployment(json!({"spec": {"replicas": -1}})),
        ),
        (
            "revisionHistoryLimit negative",
            deployment(json!({"spec": {"revisionHistoryLimit": -1}})),
        ),
        (
            "minReadySeconds negative",
            deployment(json!({"spec": {"minReadySeconds": -1}})),
        ),
        (
            "progressDeadline not above minReady",
            deployment(json!({"spec": {"minReadySeconds": 30, "progressDeadlineSeconds": 30}})),
        ),
        (
            "strategy type unknown",
            deployment(json!({"spec": {"strategy": {"type": "BlueGreen"}}})),
        ),
        (
            "recreate with rollingUpdate",
            deployment(
                json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}}),
            ),
        ),
        (
            "maxSurge and maxUnavailable zero",
            deployment(
                json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}}),
            ),
        ),
        (
            "maxUnavailable over 100%",
            deployment(
                json!({"spec": {"strategy": {"rollingUpdate": {"maxUnavailable": "150%"}}}}),
            ),
        ),
        (
            "maxSurge negative",
            deployment(json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": -1}}}})),
        ),
        (
            "maxSurge bad percent",
            deployment(json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": "ten%"}}}})),
        ),
        (
            "restartPolicy Never",
            with_pod(json!({"restartPolicy": "Never"})),
        ),
        (
            "dnsPolicy unknown",
            with_pod(json!({"dnsPolicy": "Nearest"})),
        ),
        ("no containers", with_pod(json!({"containers": []}))),
        (
            "container without name",
            with_containers(json!([{"image": "nginx"}])),
        ),
        (
            "container name uppercase",
            with_containers(json!([{"name": "Web", "image": "nginx"}])),
        ),
        (
            "container names duplicate",
            with_containers(
                json!([{"name": "web", "image": "nginx"}, {"name": "web", "image": "redis"}]),
            ),
        ),
        (
            "container without image",
            with_containers(json!([{"name": "web"}])),
        ),
        (
            "image with spaces",
            with_containers(json!([{"name": "web", "image": " nginx"}])),
        ),
        (
            "pull policy unknown",
            with_containers(
                json!([{"name": "web", "image": "nginx", "imagePullPolicy": "Sometimes"}]),
            ),
        ),
        (
            "port zero",
            with_containers(
                json!([{"name": "web", "image": "nginx", "ports": [{"containerPort": 0}]}]),
            ),
        ),
        (
            "port too large",
            with_containers(
                json!([{"name": "web", "image": "nginx", "ports": [{"containerPort": 70000}]}]),
            ),
        ),
        (
            "port name invalid",
            with_containers(json!([{"name": "web", "image": "nginx",
                "ports": [{"name": "HTTP_port", "containerPort": 80}, {"name": "averyveryverylongname", "containerPort": 81}]}])),
        ),
        (
            "port names duplicate",
            with_containers(json!([{"name": "web", "image": "nginx",
                "ports": [{"name": "http", "containerPort": 80}, {"name": "http", "containerPort": 81}]}])),
        ),
        (
            "port protocol unknown",
            with_containers(
                json!([{"name": "web", "image": "nginx", "ports": [{"containerPort": 80, "protocol": "ICMP"}]}]),
            ),
        ),
        (
            "host port out of range",
            with_containers(
                json!([{"name": "web", "image": "nginx", "ports": [{"containerPort": 80, "hostPort": 70000}]}]),
            ),
        ),
        (
            "env without name",
            with_containers(json!([{"name": "web", "image": "nginx", "env": [{"value": "x"}]}])),
        ),
        (
            "env name with equals",
            with_containers(
                json!([{"name": "web", "image": "nginx", "env": [{"name": "A=B", "value": "x"}]}]),
            ),
        ),
        (
            "env value and valueFrom",
            with_containers(
                json!([{"name": "web", "image": "nginx", "env": [{"name": "A", "value": "x",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}]),
            ),
        ),
        (
            "env valueFrom empty",
            with_containers(
                json!([{"name": "web", "image": "nginx", "env": [{"name": "A", "valueFrom": {}}]}]),
            ),
        ),
        (
            "env secretKeyRef without key",
            with_containers(
                json!([{"name": "web", "image": "nginx", "env": [{"name": "A",
                "valueFrom": {"secretKeyRef": {"name": "s", "key": ""}}}]}]),
            ),
        ),
        (
            "volume names duplicate",
            with_pod(
                json!({"volumes": [{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}]}),
            ),
        ),
        (
            "volume name invalid",
            with_pod(json!({"volumes": [{"name": "A_b", "emptyDir": {}}]})),
        ),
        (
            "volume two sources",
            with_pod(
                json!({"volumes": [{"name": "a", "emptyDir": {}, "configMap": {"name": "c"}}]}),
            ),
        ),
        (
            "mount of an unknown volume",
            with_containers(
                json!([{"name": "web", "image": "nginx", "volumeMounts": [{"name": "nope", "mountPath": "/x"}]}]),
            ),
        ),
        (
            "mount without path",
            with_pod(json!({"volumes": [{"name": "a", "emptyDir": {}}],
                "containers": [{"name": "web", "image": "nginx", "volumeMounts": [{"name": "a", "mountPath": ""}]}]})),
        ),
        (
            "mount paths duplicate",
            with_pod(
                json!({"volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}],
                "containers": [{"name": "web", "image": "nginx", "volumeMounts": [
                    {"name": "a", "mountPath": "/x"}, {"name": "b", "mountPath": "/x"}]}]}),
            ),
        ),
        (
            "quantity malformed",
            with_containers(
                json!([{"name": "web", "image": "nginx", "resources": {"limits": {"cpu": "lots"}}}]),
            ),
        ),
        (
            "quantity negative",
            with_containers(
                json!([{"name": "web", "image": "nginx", "resources": {"requests": {"memory": "-1Mi"}}}]),
            ),
        ),
        (
            "requests above limits",
            with_containers(json!([{"name": "web", "image": "nginx",
                "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}])),
        ),
        (
            "resource name unknown",
            with_containers(
                json!([{"name": "web", "image": "nginx", "resources": {"limits": {"gpu": "1"}}}]),
            ),
        ),
        (
            "several problems",
            deployment(
                json!({"spec": {"replicas": -2, "selector": {"matchLabels": {"app": "x"}},
                "template": {"spec": {"containers": [{"name": "Web"}, {"name": "Web", "image": "a",
                    "ports": [{"containerPort": -1}]}]}}}}),
            ),
        ),
    ];
    for (label, body) in invalid {
        add(label, vec![create(body)]);
    }
    add(
        "name not a DNS label",
        vec![create(deployment(json!({"metadata": {"name": "d.v1"}})))],
    );
    add(
        "unknown field in a container",
        vec![create(with_containers(
            json!([{"name": "web", "image": "nginx", "imagePolicy": "x"}]),
        ))],
    );
    add(
        "unknown field strict",
        vec![post(
            format!("{DEPLOYS}?fieldValidation=Strict"),
            deployment(json!({"spec": {"paused": true, "pause": true}})),
        )],
    );
    add(
        "containerPort a string",
        vec![create(with_containers(
            json!([{"name": "web", "image": "nginx", "ports": [{"containerPort": "80"}]}]),
        ))],
    );

    // Updates: immutable selector, generation, status vs main.
    let created = || create(deployment(json!({})));
    add(
        "selector immutable",
        vec![
            created(),
            put(deployment(
                json!({"spec": {"selector": {"matchLabels": {"app": "d", "tier": "web"}},
                "template": {"metadata": {"labels": {"app": "d", "tier": "web"}}}}}),
            )),
        ],
    );
    add(
        "selector immutable by merge patch",
        vec![
            created(),
            merge_patch(
                D,
                json!({"spec": {"selector": {"matchLabels": {"app": "e"}},
                "template": {"metadata": {"labels": {"app": "e"}}}}}),
            ),
        ],
    );
    add(
        "spec change bumps generation",
        vec![
            created(),
            put(deployment(json!({"spec": {"replicas": 3}}))),
            get(),
        ],
    );
    add(
        "label change keeps generation",
        vec![
            created(),
            merge_patch(D, json!({"metadata": {"labels": {"tier": "web"}}})),
        ],
    );
    add(
        "annotation change bumps generation",
        vec![
            created(),
            merge_patch(D, json!({"metadata": {"annotations": {"note": "x"}}})),
        ],
    );
    add(
        "defaults written back are no change",
        vec![
            created(),
            put(deployment(
                json!({"spec": {"replicas": 1, "revisionHistoryLimit": 10}}),
            )),
        ],
    );
    add(
        "create drops status",
        vec![create(deployment(
            json!({"status": {"replicas": 3, "readyReplicas": 3}}),
        ))],
    );
    add(
        "main write keeps status",
        vec![
            created(),
            put(deployment(
                json!({"spec": {"replicas": 2}, "status": {"replicas": 9}}),
            )),
        ],
    );
    add(
        "status write",
        vec![
            created(),
            corpus::put(
                format!("{D}/status"),
                deployment(json!({
                    "metadata": {"labels": {"ignored": "yes"}, "annotations": {"kept": "yes"}},
                    "spec": {"replicas": 7},
                    "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1,
                               "observedGeneration": 1, "conditions": [{"type": "Available",
                               "status": "True", "reason": "MinimumReplicasAvailable",
                               "message": "Deployment has minimum availability."}]}})),
            ),
            get(),
        ],
    );
    for (label, body) in [
        (
            "status merge patch",
            json!({"status": {"replicas": 2, "updatedReplicas": 2}}),
        ),
        ("status negative", json!({"status": {"replicas": -1}})),
        (
            "status counts inconsistent",
            json!({"status": {"replicas": 1, "readyReplicas": 2, "availableReplicas": 3}}),
        ),
    ] {
        add(label, vec![created(), status_patch(D, body)]);
    }

    // Scale.
    add(
        "scale get",
        vec![created(), corpus::get(format!("{D}/scale"))],
    );
    add(
        "scale put",
        vec![
            created(),
            corpus::put(
                format!("{D}/scale"),
                json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                    "metadata": {"name": "d"}, "spec": {"replicas": 5}}),
            ),
            get(),
        ],
    );
    add(
        "scale merge patch",
        vec![
            created(),
            merge_patch(format!("{D}/scale"), json!({"spec": {"replicas": 0}})),
            get(),
        ],
    );
    add(
        "scale strategic patch",
        vec![
            created(),
            patch(format!("{D}/scale"), SMP, json!({"spec": {"replicas": 4}})),
        ],
    );
    add(
        "scale json patch",
        vec![
            created(),
            patch(
                format!("{D}/scale"),
                JSON_PATCH,
                json!([{"op": "replace", "path": "/spec/replicas", "value": 2}]),
            ),
        ],
    );
    add(
        "scale negative",
        vec![
            created(),
            merge_patch(format!("{D}/scale"), json!({"spec": {"replicas": -1}})),
        ],
    );
    add(
        "scale stale resourceVersion",
        vec![
            created(),
            corpus::put(
                format!("{D}/scale"),
                json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                    "metadata": {"name": "d", "resourceVersion": "1"}, "spec": {"replicas": 5}}),
            ),
        ],
    );
    add(
        "scale of a missing deployment",
        vec![corpus::get(format!("{D}/scale"))],
    );
    add(
        "scale selector expressions",
        vec![
            create(deployment(
                json!({"spec": {"selector": {"matchExpressions": [
                {"key": "tier", "operator": "NotIn", "values": ["db", "cache"]},
                {"key": "app", "operator": "Exists"}]}}}),
            )),
            corpus::get(format!("{D}/scale")),
        ],
    );

    // Strategic merge patches by the merge keys, and the other patch types.
    let two = || {
        create(with_containers(json!([
            {"name": "web", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
             "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
            {"name": "side", "image": "busybox"}])))
    };
    for (label, body) in [
        (
            "smp container image by name",
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "side", "image": "busybox:1.36"}]}}}}),
        ),
        (
            "smp container added",
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "third", "image": "redis"}]}}}}),
        ),
        (
            "smp container deleted",
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "side", "$patch": "delete"}]}}}}),
        ),
        (
            "smp env by name",
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "web", "env": [{"name": "B", "value": "two"}, {"name": "C", "value": "3"}]}]}}}}),
        ),
        (
            "smp ports by containerPort",
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "web", "ports": [{"containerPort": 443, "name": "https"}]}]}}}}),
        ),
    ] {
        add(label, vec![two(), patch(D, SMP, body)]);
    }
    add(
        "smp retainKeys strategy",
        vec![
            created(),
            patch(
                D,
                SMP,
                json!({"spec": {"strategy": {"type": "Recreate", "rollingUpdate": null,
                "$retainKeys": ["type"]}}}),
            ),
        ],
    );
    add(
        "merge patch replaces containers",
        vec![
            two(),
            merge_patch(
                D,
                json!({"spec": {"template": {"spec": {"containers": [
                {"name": "only", "image": "redis"}]}}}}),
            ),
        ],
    );
    add(
        "json patch replicas",
        vec![
            created(),
            patch(
                D,
                JSON_PATCH,
                json!([{"op": "replace", "path": "/spec/replicas", "value": 4}]),
            ),
        ],
    );

    // Server-side apply by the list-map keys of the OpenAPI.
    add("apply create", vec![apply("a", false, helm_chart()), get()]);
    add(
        "apply ports merged by containerPort and protocol",
        vec![
            apply(
                "a",
                false,
                with_containers(json!([{"name": "web", "image": "nginx",
                "ports": [{"containerPort": 80}]}])),
            ),
            apply(
                "b",
                false,
                with_containers(json!([{"name": "web", "image": "nginx",
                "ports": [{"containerPort": 80, "protocol": "UDP"}, {"containerPort": 53}]}])),
            ),
        ],
    );
    add(
        "apply env merged by name",
        vec![
            apply(
                "a",
                false,
                with_containers(json!([{"name": "web", "image": "nginx",
                "env": [{"name": "A", "value": "1"}]}])),
            ),
            apply(
                "b",
                false,
                with_containers(json!([{"name": "web",
                "env": [{"name": "B", "value": "2"}]}])),
            ),
            apply(
                "a",
                false,
                with_containers(json!([{"name": "web", "image": "nginx"}])),
            ),
        ],
    );
    add(
        "apply replicas conflict",
        vec![
            apply("a", false, deployment(json!({"spec": {"replicas": 2}}))),
            apply("b", false, deployment(json!({"spec": {"replicas": 3}}))),
            apply("b", true, deployment(json!({"spec": {"replicas": 3}}))),
        ],
    );
    add(
        "apply status",
        vec![
            created(),
            patch(
                format!("{D}/status?fieldManager=c"),
                APPLY,
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                       "status": {"replicas": 1, "observedGeneration": 1}}),
            ),
        ],
    );

    // Reads: tables, selectors, delete, discovery.
    add("table", vec![create(helm_chart()), table(DEPLOYS)]);
    add(
        "table of one with the object",
        vec![created(), table(format!("{D}?includeObject=Object"))],
    );
    add(
        "field selector name",
        vec![
            created(),
            corpus::get(format!("{DEPLOYS}?fieldSelector=metadata.name%3Dd")),
        ],
    );
    add(
        "field selector unsupported",
        vec![corpus::get(format!(
            "{DEPLOYS}?fieldSelector=spec.replicas%3D1"
        ))],
    );
    add("delete", vec![created(), delete(D)]);
    add("discovery of apps", vec![corpus::get("/apis/apps")]);
    cases
}
