//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`), as client-go's typed clients
//! send them for every built-in kind (`kubectl create deployment|job|cronjob`, `kubectl run`,
//! any Go controller): creates (and dry runs) of each kind from the bodies in
//! `tests/fixtures/protobuf/` (written by client-go's protobuf serializer for Go objects with
//! many fields set, and for the objects kubectl's generators build), read back as JSON and as
//! tables; updates sent as protobuf; invalid objects' 422s; bodies of kinds the server does not
//! know.

use http::Method;

use serde_json::json;

use crate::corpus::{APPLY, Case, SMP, Step, delete, get, patch, post, protobuf, table};

/// A fixture: its file name, the collection it is written to, the object's name, and whether
/// it is cluster-scoped (then each case deletes it again: names are shared across cases).
struct Fixture {
    file: &'static str,
    body: &'static [u8],
    collection: &'static str,
    name: &'static str,
    cluster: bool,
}

macro_rules! fixture {
    ($file:literal, $collection:literal, $name:literal) => {
        fixture!($file, $collection, $name, false)
    };
    ($file:literal, $collection:literal, $name:literal, $cluster:literal) => {
        Fixture {
            file: $file,
            body: include_bytes!(concat!("../fixtures/protobuf/", $file, ".pb")),
            collection: $collection,
            name: $name,
            cluster: $cluster,
        }
    };
}

const APPS: &str = "/apis/apps/v1/namespaces/NS";

fn fixtures() -> Vec<Fixture> {
    vec![
        fixture!(
            "deployment",
            "/apis/apps/v1/namespaces/NS/deployments",
            "shop"
        ),
        fixture!(
            "deployment-kubectl",
            "/apis/apps/v1/namespaces/NS/deployments",
            "web"
        ),
        fixture!(
            "statefulset",
            "/apis/apps/v1/namespaces/NS/statefulsets",
            "db"
        ),
        fixture!(
            "daemonset",
            "/apis/apps/v1/namespaces/NS/daemonsets",
            "agent"
        ),
        fixture!(
            "replicaset",
            "/apis/apps/v1/namespaces/NS/replicasets",
            "web-1"
        ),
        fixture!(
            "controllerrevision",
            "/apis/apps/v1/namespaces/NS/controllerrevisions",
            "db-6b8f7d"
        ),
        fixture!("pod", "/api/v1/namespaces/NS/pods", "shop-0"),
        fixture!("pod-kubectl", "/api/v1/namespaces/NS/pods", "nginx"),
        fixture!("service", "/api/v1/namespaces/NS/services", "shop"),
        fixture!("configmap", "/api/v1/namespaces/NS/configmaps", "shop"),
        fixture!("secret", "/api/v1/namespaces/NS/secrets", "shop"),
        fixture!(
            "pvc",
            "/api/v1/namespaces/NS/persistentvolumeclaims",
            "data"
        ),
        fixture!("pv", "/api/v1/persistentvolumes", "protobuf-pv", true),
        fixture!(
            "resourcequota",
            "/api/v1/namespaces/NS/resourcequotas",
            "compute"
        ),
        fixture!(
            "limitrange",
            "/api/v1/namespaces/NS/limitranges",
            "defaults"
        ),
        fixture!("node", "/api/v1/nodes", "protobuf-node", true),
        fixture!("event", "/api/v1/namespaces/NS/events", "shop.17a"),
        fixture!("job", "/apis/batch/v1/namespaces/NS/jobs", "report"),
        fixture!("job-kubectl", "/apis/batch/v1/namespaces/NS/jobs", "once"),
        fixture!(
            "cronjob",
            "/apis/batch/v1/namespaces/NS/cronjobs",
            "nightly"
        ),
        fixture!(
            "hpa",
            "/apis/autoscaling/v2/namespaces/NS/horizontalpodautoscalers",
            "shop"
        ),
        fixture!(
            "hpa-v1",
            "/apis/autoscaling/v1/namespaces/NS/horizontalpodautoscalers",
            "web"
        ),
        fixture!(
            "ingress",
            "/apis/networking.k8s.io/v1/namespaces/NS/ingresses",
            "shop"
        ),
        fixture!(
            "ingressclass",
            "/apis/networking.k8s.io/v1/ingressclasses",
            "protobuf-nginx",
            true
        ),
        fixture!(
            "networkpolicy",
            "/apis/networking.k8s.io/v1/namespaces/NS/networkpolicies",
            "shop"
        ),
        fixture!(
            "pdb",
            "/apis/policy/v1/namespaces/NS/poddisruptionbudgets",
            "shop"
        ),
        fixture!(
            "endpointslice",
            "/apis/discovery.k8s.io/v1/namespaces/NS/endpointslices",
            "shop-abc"
        ),
        fixture!(
            "storageclass",
            "/apis/storage.k8s.io/v1/storageclasses",
            "protobuf-fast",
            true
        ),
        fixture!(
            "lease",
            "/apis/coordination.k8s.io/v1/namespaces/NS/leases",
            "leader"
        ),
    ]
}

impl Fixture {
    fn one(&self) -> String {
        format!("{}/{}", self.collection, self.name)
    }

    fn create(&self) -> Step {
        protobuf(Method::POST, self.collection, self.body)
    }

    fn get(&self) -> Step {
        get(self.one())
    }

    /// The steps that remove a cluster-scoped object again (none for a namespaced one: its
    /// namespace goes with the case). Not a StorageClass: the embedded server answers its
    /// DELETE with a Status where kube-apiserver returns the object (the StorageClass kind's
    /// gap, not protobuf's); a PersistentVolume stays terminating either way.
    fn cleanup(&self) -> Vec<Step> {
        if self.cluster && self.file != "storageclass" {
            vec![delete(self.one())]
        } else {
            Vec::new()
        }
    }

    /// What its objects need to exist first: the service account the pod fixture runs as.
    fn setup(&self) -> Vec<Step> {
        if self.file == "pod" {
            let account = serde_json::json!({"apiVersion": "v1", "kind": "ServiceAccount",
                "metadata": {"name": "shop"}});
            vec![post("/api/v1/namespaces/NS/serviceaccounts", account)]
        } else {
            Vec::new()
        }
    }
}

pub(crate) fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for f in fixtures() {
        if f.cluster {
            // One case per cluster-scoped object: a deleted PersistentVolume stays (its
            // protection finalizer), so its name cannot be created again.
            let mut steps = vec![f.create(), protobuf(Method::PUT, f.one(), f.body), f.get()];
            steps.extend(f.cleanup());
            cases.push(Case::new(
                format!("protobuf: create and update {}", f.file),
                steps,
            ));
            continue;
        }
        // Created, answered and read back: every default the server applies to what client-go
        // decoded, and the managed fields of the create.
        cases.push(
            Case::new(
                format!("protobuf: create {}", f.file),
                vec![f.create(), f.get()],
            )
            .after(f.setup()),
        );
        // kube-apiserver's dry-run node port allocator answers ports out of the range.
        if f.file != "service" {
            let dry_run = protobuf(Method::POST, format!("{}?dryRun=All", f.collection), f.body);
            cases.push(
                Case::new(
                    format!("protobuf: dry-run create {}", f.file),
                    vec![dry_run, f.get()],
                )
                .after(f.setup()),
            );
        }
        // The same body as an update, without a resourceVersion: unconditional where the kind
        // allows it (a Lease refuses it). Not for Jobs: the body lacks the selector the
        // server generated, and upstream quotes the internal Go struct in its 422.
        if !f.file.starts_with("job") {
            let steps = vec![f.create(), protobuf(Method::PUT, f.one(), f.body), f.get()];
            cases.push(Case::new(format!("protobuf: update {}", f.file), steps).after(f.setup()));
        }
    }
    cases.extend(tables());
    cases.extend(after_create());
    cases.extend(refused());
    cases
}

/// Writes of other clients to what kubectl created as protobuf: a strategic merge patch and
/// server-side apply of its containers (merge key `name`), a status write, the scale
/// subresource, a field selector.
fn after_create() -> Vec<Case> {
    let web: &[u8] = include_bytes!("../fixtures/protobuf/deployment-kubectl.pb");
    let nginx: &[u8] = include_bytes!("../fixtures/protobuf/pod-kubectl.pb");
    let deployments = format!("{APPS}/deployments");
    let one = format!("{deployments}/web");
    let create = || protobuf(Method::POST, &deployments, web);
    let containers = |image: &str| json!({"spec": {"template": {"spec": {"containers": [{"name": "nginx", "image": image}]}}}});
    let applied = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "sidecar", "image": "busybox"}]}}}});
    vec![
        Case::new(
            "protobuf: strategic merge patch of containers",
            vec![create(), patch(&one, SMP, containers("nginx:1.27"))],
        ),
        Case::new(
            "protobuf: server-side apply conflicts with the creator",
            vec![
                create(),
                patch(format!("{one}?fieldManager=ops"), APPLY, applied.clone()),
            ],
        ),
        Case::new(
            "protobuf: server-side apply forced adds a container",
            vec![
                create(),
                patch(format!("{one}?fieldManager=ops&force=true"), APPLY, applied),
            ],
        ),
        Case::new(
            "protobuf: status write keeps generation",
            vec![
                create(),
                patch(
                    format!("{one}/status"),
                    "application/merge-patch+json",
                    json!({"status": {"replicas": 2, "observedGeneration": 1}}),
                ),
            ],
        ),
        Case::new(
            "protobuf: scale",
            vec![
                create(),
                get(format!("{one}/scale")),
                patch(
                    format!("{one}/scale"),
                    "application/merge-patch+json",
                    json!({"spec": {"replicas": 4}}),
                ),
                get(&one),
            ],
        ),
        Case::new(
            "protobuf: field selector of pods",
            vec![
                protobuf(Method::POST, "/api/v1/namespaces/NS/pods", nginx),
                get(
                    "/api/v1/namespaces/NS/pods?fieldSelector=metadata.name%3Dnginx,status.phase%3DPending",
                ),
                get("/api/v1/namespaces/NS/pods?fieldSelector=spec.restartPolicy%3DNever"),
            ],
        ),
    ]
}

/// `kubectl get` of what kubectl's generators create: the table rows of the decoded objects.
fn tables() -> Vec<Case> {
    fixtures()
        .into_iter()
        .filter(|f| {
            matches!(
                f.file,
                "deployment"
                    | "deployment-kubectl"
                    | "pod-kubectl"
                    | "job"
                    | "cronjob"
                    | "hpa"
                    | "ingress"
                    | "pvc"
                    | "service"
                    | "statefulset"
            )
        })
        .map(|f| {
            let mut steps = vec![
                f.create(),
                table(f.one()),
                table(format!("{}?includeObject=None", f.collection)),
            ];
            steps.extend(f.cleanup());
            Case::new(format!("protobuf: table of {}", f.file), steps).after(f.setup())
        })
        .collect()
}

/// What the server refuses: invalid objects, a body of another kind than the resource's, kinds
/// the server does not know, bodies that are no protobuf.
fn refused() -> Vec<Case> {
    let invalid_deployment: &[u8] = include_bytes!("../fixtures/protobuf/deployment-invalid.pb");
    let invalid_pod: &[u8] = include_bytes!("../fixtures/protobuf/pod-invalid.pb");
    let pod: &[u8] = include_bytes!("../fixtures/protobuf/pod-kubectl.pb");
    // `k8s\0`, Unknown{typeMeta{apiVersion: example.com/v1, kind: Widget}, raw: ObjectMeta{name: w}}
    let widget: &[u8] =
        b"k8s\0\x0a\x18\x0a\x0eexample.com/v1\x12\x06Widget\x12\x05\x0a\x03\x0a\x01w";
    vec![
        Case::new(
            "protobuf: invalid deployment",
            vec![protobuf(
                Method::POST,
                format!("{APPS}/deployments"),
                invalid_deployment,
            )],
        ),
        Case::new(
            "protobuf: invalid pod",
            vec![protobuf(
                Method::POST,
                "/api/v1/namespaces/NS/pods",
                invalid_pod,
            )],
        ),
        Case::new(
            "protobuf: a pod body written to deployments",
            vec![protobuf(Method::POST, format!("{APPS}/deployments"), pod)],
        ),
        Case::new(
            "protobuf: a kind the server does not know",
            vec![protobuf(
                Method::POST,
                "/api/v1/namespaces/NS/configmaps",
                widget,
            )],
        ),
        Case::new(
            "protobuf: a body without the envelope",
            vec![protobuf(
                Method::POST,
                "/api/v1/namespaces/NS/configmaps",
                b"\x0a\x03abc",
            )],
        ),
    ]
}
