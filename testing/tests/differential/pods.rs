//! core/v1 Pods: defaults read back (the pod spec's, the Pod's own, `PrepareForCreate`'s status
//! and the admission plugins' tolerations, priority and service account), validation of each
//! rule family, the update rules (the forbidden-update message, images, tolerations, the
//! active deadline), status vs main writes, `binding`, `eviction`, graceful deletion, field
//! selectors, tables, strategic merge patches and server-side apply of containers.
//!
//! Every case first creates the namespace's `default` ServiceAccount without token automount
//! (no service-account controller runs on either tier, and the `ServiceAccount` admission plugin
//! refuses a pod whose account does not exist).

use serde_json::{Value, json};

use crate::corpus::{
    self, APPLY, Case, JSON_PATCH, SMP, Step, delete, merge, merge_patch, merged, patch, post,
    service_account, table,
};

const PODS: &str = "/api/v1/namespaces/NS/pods";
const P: &str = "/api/v1/namespaces/NS/pods/p";

/// A valid Pod `p` (one container `web`), with `extra` merged in.
fn pod(extra: Value) -> Value {
    merged(
        json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "p"}},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}),
        extra,
    )
}

/// `pod` with its containers replaced by `containers`.
fn with_containers(containers: Value) -> Value {
    pod(json!({"spec": {"containers": containers}}))
}

/// `pod` with its spec's fields `extra` merged in.
fn with_spec(extra: Value) -> Value {
    pod(json!({"spec": extra}))
}

fn create(body: Value) -> Step {
    post(PODS, body)
}

fn get() -> Step {
    corpus::get(P)
}

fn put(body: Value) -> Step {
    corpus::put(P, body)
}

fn binding(node: &str) -> Step {
    post(
        format!("{P}/binding"),
        json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}}),
    )
}

fn eviction(extra: Value) -> Step {
    let mut body = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "p"}});
    merge(&mut body, extra);
    post(format!("{P}/eviction"), body)
}

fn status_patch(status: Value) -> Step {
    merge_patch(format!("{P}/status"), json!({"status": status}))
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // Cases with setups of their own.
    let mut extra = Vec::new();
    let mut add = |label: &str, steps: Vec<Step>| {
        cases.push(Case::new(format!("pod: {label}"), steps).after(vec![service_account()]));
    };

    // Defaults read back.
    add("minimal", vec![create(pod(json!({}))), get()]);
    add(
        "full spec",
        vec![
            create(with_spec(json!({
                "containers": [{"name": "web", "image": "nginx",
                    "ports": [{"name": "http", "containerPort": 80}],
                    "env": [{"name": "A", "value": "1"},
                            {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                    "readinessProbe": {"httpGet": {"port": 80}},
                    "resources": {"limits": {"cpu": "0.5", "memory": "128Mi"}},
                    "volumeMounts": [{"name": "cache", "mountPath": "/cache"}]}],
                "initContainers": [{"name": "init", "image": "busybox:1", "command": ["true"]}],
                "volumes": [{"name": "cache"}, {"name": "cfg", "configMap": {"name": "c"}}],
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]}))),
            get(),
        ],
    );
    for (label, body) in [
        (
            "qos guaranteed",
            with_containers(json!([{"name": "web", "image": "nginx:1",
            "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}])),
        ),
        (
            "qos burstable",
            with_containers(json!([{"name": "web", "image": "nginx:1",
            "resources": {"requests": {"cpu": "100m"}}}])),
        ),
        (
            "host network ports",
            with_spec(json!({"hostNetwork": true,
            "containers": [{"name": "web", "image": "nginx:1", "ports": [{"containerPort": 8080}]}]})),
        ),
        (
            "not-ready toleration kept",
            with_spec(json!({"tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
             "tolerationSeconds": 10}]})),
        ),
        ("priority given", with_spec(json!({"priority": 5}))),
    ] {
        add(label, vec![create(body)]);
    }
    add(
        "scheduling gated",
        vec![
            create(with_spec(
                json!({"schedulingGates": [{"name": "example.com/wait"}]}),
            )),
            binding("n1"),
        ],
    );
    for (label, body) in [
        (
            "generate name",
            pod(json!({"metadata": {"name": null, "generateName": "p-"}})),
        ),
        (
            "name not a DNS label",
            pod(json!({"metadata": {"name": "p.q"}})),
        ),
        (
            "missing service account",
            with_spec(json!({"serviceAccountName": "nobody"})),
        ),
    ] {
        add(label, vec![create(body)]);
    }

    add(
        "invalid pod without its service account",
        vec![create(with_spec(
            json!({"serviceAccountName": "nobody", "restartPolicy": "Sometimes"}),
        ))],
    );

    // Rule families.
    for (label, body) in [
        ("no containers", with_containers(json!([]))),
        (
            "container name and image",
            with_containers(json!([{"name": "Web_1"}, {"name": "Web_1", "image": "x"}])),
        ),
        (
            "ports",
            with_containers(json!([{"name": "web", "image": "x", "ports": [
            {"containerPort": 0}, {"containerPort": 70000, "name": "too-long-port-name-x"},
            {"containerPort": 80, "protocol": "HTTP"}]}])),
        ),
        (
            "env",
            with_containers(json!([{"name": "web", "image": "x", "env": [
            {"name": ""}, {"name": "A=B"},
            {"name": "C", "value": "v", "valueFrom": {"configMapKeyRef": {"name": "c", "key": ""}}}]}])),
        ),
        (
            "volumes and mounts",
            with_spec(json!({
            "volumes": [{"name": "a", "emptyDir": {}, "configMap": {"name": "c"}}, {"name": "Bad"}],
            "containers": [{"name": "web", "image": "x",
                "volumeMounts": [{"name": "missing", "mountPath": "/m"}, {"name": "Bad", "mountPath": "/m"}]}]})),
        ),
        (
            "resources",
            with_containers(json!([{"name": "web", "image": "x", "resources": {
            "limits": {"cpu": "1"}, "requests": {"cpu": "2"}}}])),
        ),
        (
            "resource names",
            with_containers(json!([{"name": "web", "image": "x", "resources": {
            "requests": {"widgets": "1"}}}])),
        ),
        (
            "bad quantity",
            with_containers(json!([{"name": "web", "image": "x",
            "resources": {"limits": {"cpu": "lots"}}}])),
        ),
        (
            "policies",
            with_spec(json!({"restartPolicy": "Sometimes", "dnsPolicy": "Mine",
            "containers": [{"name": "web", "image": "x", "imagePullPolicy": "Maybe"}]})),
        ),
        (
            "active deadline",
            with_spec(json!({"activeDeadlineSeconds": 0})),
        ),
        ("node name", with_spec(json!({"nodeName": "Not_A_Node"}))),
        (
            "ephemeral containers on create",
            with_spec(json!({"ephemeralContainers": [
            {"name": "debug", "image": "busybox"}]})),
        ),
        ("unknown field", with_spec(json!({"bogus": true}))),
    ] {
        add(label, vec![create(body)]);
    }

    // Updates.
    add(
        "image update",
        vec![
            create(pod(json!({}))),
            patch(
                P,
                SMP,
                json!({"spec": {"containers": [{"name": "web", "image": "nginx:1.26"}]}}),
            ),
        ],
    );
    add(
        "forbidden update",
        vec![
            create(pod(json!({}))),
            merge_patch(P, json!({"spec": {"restartPolicy": "Never"}})),
        ],
    );
    add(
        "add container",
        vec![
            create(pod(json!({}))),
            patch(
                P,
                JSON_PATCH,
                json!([{"op": "add", "path": "/spec/containers/-",
                "value": {"name": "two", "image": "x"}}]),
            ),
        ],
    );
    add(
        "active deadline raised",
        vec![
            create(with_spec(json!({"activeDeadlineSeconds": 10}))),
            merge_patch(P, json!({"spec": {"activeDeadlineSeconds": 20}})),
            merge_patch(P, json!({"spec": {"activeDeadlineSeconds": 5}})),
        ],
    );
    add(
        "tolerations",
        vec![
            create(pod(json!({}))),
            patch(
                P,
                JSON_PATCH,
                json!([{"op": "add", "path": "/spec/tolerations/-",
                "value": {"key": "a", "operator": "Exists"}}]),
            ),
            patch(
                P,
                JSON_PATCH,
                json!([{"op": "remove", "path": "/spec/tolerations/0"}]),
            ),
        ],
    );
    add(
        "labels update",
        vec![
            create(pod(json!({}))),
            merge_patch(P, json!({"metadata": {"labels": {"tier": "web"}}})),
        ],
    );
    add(
        "main write keeps status",
        vec![
            create(pod(json!({}))),
            status_patch(json!({"phase": "Running", "podIP": "10.1.0.5"})),
            merge_patch(
                P,
                json!({"metadata": {"labels": {"x": "1"}},
                "status": {"phase": "Failed"}}),
            ),
        ],
    );
    add("put of a missing pod", vec![put(pod(json!({})))]);

    // Status.
    add(
        "status write",
        vec![
            create(pod(json!({}))),
            status_patch(json!({"phase": "Running", "conditions": [
                {"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "web", "image": "nginx:1.25", "imageID": "",
                    "ready": true, "restartCount": 0, "state": {"running": {}}}]})),
            table(P),
        ],
    );
    // What a kubelet writes: a strategic merge patch of the status, conditions by type.
    let kubelet_patch = || {
        patch(
            format!("{P}/status"),
            SMP,
            json!({"status": {
                "$setElementOrder/conditions": [{"type": "PodReadyToStartContainers"},
                    {"type": "Initialized"}, {"type": "Ready"}, {"type": "ContainersReady"},
                    {"type": "PodScheduled"}],
                "conditions": [
                    {"type": "PodReadyToStartContainers", "status": "True",
                     "lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:01Z"},
                    {"type": "Initialized", "status": "True",
                     "lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:01Z"},
                    {"type": "Ready", "status": "True",
                     "lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:02Z"},
                    {"type": "ContainersReady", "status": "True",
                     "lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:02Z"}],
                "containerStatuses": [{"name": "web", "image": "docker.io/library/nginx:1.25",
                    "imageID": "docker.io/library/nginx@sha256:00", "containerID": "containerd://abc",
                    "ready": true, "started": true, "restartCount": 0,
                    "lastState": {}, "state": {"running": {"startedAt": "2026-01-01T00:00:01Z"}}}],
                "hostIP": "10.0.0.1", "hostIPs": [{"ip": "10.0.0.1"}],
                "phase": "Running", "podIP": "10.244.0.5", "podIPs": [{"ip": "10.244.0.5"}],
                "qosClass": "BestEffort", "startTime": "2026-01-01T00:00:00Z"}}),
        )
    };
    add(
        "kubelet status patch",
        vec![create(pod(json!({}))), binding("n1"), kubelet_patch()],
    );
    extra.push(
        Case::new(
            "pod: running pod read back",
            vec![
                table(format!("{P}?includeObject=None")),
                table(format!(
                    "{PODS}?includeObject=None&fieldSelector={}",
                    crate::corpus::encode("status.podIP=10.244.0.5,status.phase=Running")
                )),
            ],
        )
        .after(vec![
            service_account(),
            create(pod(json!({}))),
            binding("n1"),
            kubelet_patch(),
        ]),
    );
    add(
        "status write ignores spec",
        vec![
            create(pod(json!({}))),
            merge_patch(
                format!("{P}/status"),
                json!({"spec": {"nodeName": "n1"},
                "metadata": {"labels": {"s": "1"}}}),
            ),
        ],
    );
    add(
        "status qos immutable",
        vec![
            create(pod(json!({}))),
            status_patch(json!({"qosClass": "Guaranteed"})),
        ],
    );

    // Binding.
    add(
        "binding",
        vec![create(pod(json!({}))), binding("n1"), get(), binding("n2")],
    );
    add(
        "binding name mismatch",
        vec![
            create(pod(json!({}))),
            post(
                format!("{P}/binding"),
                json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "q"},
                    "target": {"name": "n1"}}),
            ),
        ],
    );
    add(
        "binding without a target",
        vec![
            create(pod(json!({}))),
            post(
                format!("{P}/binding"),
                json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
                    "target": {"kind": "Pod"}}),
            ),
        ],
    );
    add("binding of a missing pod", vec![binding("n1")]);

    // Eviction and deletion.
    add(
        "eviction of a pending pod",
        vec![create(pod(json!({}))), eviction(json!({})), get()],
    );
    add("eviction of a missing pod", vec![eviction(json!({}))]);
    add(
        "eviction of a bound pod",
        vec![
            create(pod(json!({}))),
            binding("n1"),
            status_patch(json!({"phase": "Running"})),
            eviction(json!({"deleteOptions": {"gracePeriodSeconds": 15}})),
            get(),
        ],
    );
    add(
        "eviction name mismatch",
        vec![
            create(pod(json!({}))),
            post(
                format!("{P}/eviction"),
                json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "q"}}),
            ),
        ],
    );
    add(
        "delete bound dry run",
        vec![
            create(pod(json!({}))),
            binding("n1"),
            delete(format!("{P}?dryRun=All")),
            get(),
        ],
    );
    add(
        "smp of tolerations and image",
        vec![
            create(pod(json!({}))),
            patch(
                P,
                SMP,
                json!({"spec": {"containers": [{"name": "web", "image": "nginx:2"}],
                "tolerations": [{"key": "extra", "operator": "Exists"}]}}),
            ),
        ],
    );
    add(
        "delete unbound",
        vec![create(pod(json!({}))), delete(P), get()],
    );
    add(
        "delete bound",
        vec![
            create(pod(json!({}))),
            binding("n1"),
            delete(P),
            delete(P),
            delete(format!("{P}?gracePeriodSeconds=5")),
            delete(format!("{P}?gracePeriodSeconds=0")),
            get(),
        ],
    );
    add(
        "delete bound with finalizer",
        vec![
            create(pod(
                json!({"metadata": {"finalizers": ["example.com/hold"]}}),
            )),
            binding("n1"),
            delete(format!("{P}?gracePeriodSeconds=0")),
            patch(
                P,
                JSON_PATCH,
                json!([{"op": "remove", "path": "/metadata/finalizers"}]),
            ),
            get(),
        ],
    );

    add(
        "watch of a deletion",
        vec![
            create(pod(json!({}))).remember("$RV", "/metadata/resourceVersion"),
            binding("n1"),
            delete(P),
            delete(format!("{P}?gracePeriodSeconds=0")),
            corpus::get(format!(
                "{PODS}?watch=true&timeoutSeconds=1&resourceVersion=$RV"
            )),
        ],
    );
    add(
        "watch of an unbound deletion",
        vec![
            create(pod(json!({}))).remember("$RV", "/metadata/resourceVersion"),
            delete(P),
            corpus::get(format!(
                "{PODS}?watch=true&timeoutSeconds=1&resourceVersion=$RV"
            )),
        ],
    );

    // Field selectors and tables.
    let list = |selector: &str| {
        corpus::get(format!(
            "{PODS}?fieldSelector={}",
            crate::corpus::encode(selector)
        ))
    };
    add(
        "field selectors",
        vec![
            create(pod(json!({}))),
            binding("n1"),
            list("spec.nodeName=n1"),
            list("spec.host=n1"),
            list("status.phase=Pending,spec.restartPolicy=Always"),
            list("spec.hostNetwork=false"),
            list("spec.schedulerName=default-scheduler,spec.serviceAccountName=default"),
            list("status.podIP="),
            list("status.podIPs=x"),
            list("status.nominatedNodeName!=x"),
            list("spec.image=x"),
        ],
    );
    add(
        "table",
        vec![
            create(pod(json!({}))),
            table(PODS),
            table(format!("{PODS}?includeObject=None")),
        ],
    );

    // Server-side apply of containers.
    let apply =
        |manager: &str, body: Value| patch(format!("{P}?fieldManager={manager}"), APPLY, body);
    add(
        "apply containers",
        vec![
            apply("a", pod(json!({}))),
            apply(
                "a",
                with_containers(json!([{"name": "web", "image": "nginx:1.26"}])),
            ),
            apply(
                "b",
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p",
                "labels": {"b": "1"}}}),
            ),
        ],
    );
    add(
        "apply conflict",
        vec![
            apply("a", pod(json!({}))),
            apply(
                "b",
                with_containers(json!([{"name": "web", "image": "nginx:1.27"}])),
            ),
        ],
    );
    cases.extend(extra);
    cases
}
