//! `kubectl explain` (unmodified, from PATH) against the in-process API server, and the OpenAPI
//! documents it reads: built-in kinds from upstream's schemas, custom resources from their CRD's
//! schema, updated when the CRD changes.

mod apiserver_support;

use apiserver_support::{kubectl_ok as ok, raw_accept, rollout_crd_json};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams};
use kubeward_testing::ApiServer;
use kubeward_testing::kubectl::Kubectl;
use serde_json::{Value, json};

/// kubectl with a kubeconfig for `server`, in a directory of its own (`name`).
fn kubectl(server: &ApiServer, name: &str) -> Kubectl {
    let dir =
        std::env::temp_dir().join(format!("kubeward-explain-{name}-{}", server.addr().port()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    Kubectl::new(&kubeconfig)
}

/// The rollouts CRD with a documented schema (`spec.replicas`, `spec.image`).
fn documented_crd(extra_spec_field: Option<(&str, Value)>) -> CustomResourceDefinition {
    let mut crd = rollout_crd_json(true);
    let mut spec_props = json!({
        "replicas": {"type": "integer", "minimum": 0, "description": "How many pods run the new version."},
        "image": {"type": "string", "description": "The image rolled out."},
    });
    if let Some((name, schema)) = extra_spec_field {
        spec_props[name] = schema;
    }
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({
        "type": "object",
        "description": "A Rollout moves pods to a new image.",
        "properties": {
            "spec": {"type": "object", "description": "What to roll out.", "properties": spec_props},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        },
    });
    serde_json::from_value(crd).unwrap()
}

/// The lines of an explain output's `FIELDS:` section that name a field (`name\t<type>`).
fn fields(explained: &str) -> Vec<String> {
    explained
        .split_once("FIELDS:")
        .map(|(_, f)| f)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains('<'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explain_configmap_shows_upstreams_schema() {
    let server = ApiServer::start().await.unwrap();
    let k = kubectl(&server, "cm");
    let out = ok(&k, &["explain", "configmap"]).await;
    assert!(
        out.starts_with("KIND:       ConfigMap\nVERSION:    v1\n"),
        "{out}"
    );
    assert!(
        out.contains("ConfigMap holds configuration data for pods to consume."),
        "{out}"
    );
    assert_eq!(
        fields(&out),
        [
            "apiVersion <string>",
            "binaryData <map[string]string>",
            "data <map[string]string>",
            "immutable <boolean>",
            "kind <string>",
            "metadata <ObjectMeta>",
        ],
        "{out}"
    );
    let v2 = ok(
        &k,
        &["explain", "configmap", "--output", "plaintext-openapiv2"],
    )
    .await;
    assert!(
        v2.contains("ConfigMap holds configuration data for pods to consume."),
        "{v2}"
    );
    assert!(v2.contains("binaryData\t<map[string]string>"), "{v2}");
    // Referenced definitions resolve: metadata's own fields.
    let meta = ok(&k, &["explain", "configmap.metadata.ownerReferences"]).await;
    assert!(
        meta.contains("FIELD: ownerReferences <[]OwnerReference>"),
        "{meta}"
    );
    assert!(
        fields(&meta).contains(&"uid <string> -required-".to_string()),
        "{meta}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explain_lease_spec_recursive_rbac_and_events() {
    let server = ApiServer::start().await.unwrap();
    let k = kubectl(&server, "lease");
    let out = ok(&k, &["explain", "lease.spec", "--recursive"]).await;
    assert!(
        out.starts_with("GROUP:      coordination.k8s.io\nKIND:       Lease\nVERSION:    v1\n"),
        "{out}"
    );
    assert!(out.contains("FIELD: spec <LeaseSpec>"), "{out}");
    for field in [
        "acquireTime <string>",
        "holderIdentity <string>",
        "leaseDurationSeconds <integer>",
        "leaseTransitions <integer>",
        "renewTime <string>",
    ] {
        assert!(fields(&out).contains(&field.to_string()), "{field}:\n{out}");
    }
    // RBAC kinds are served, so explained.
    let rules = ok(&k, &["explain", "clusterroles.rules"]).await;
    assert!(
        rules.starts_with("GROUP:      rbac.authorization.k8s.io\nKIND:       ClusterRole\n"),
        "{rules}"
    );
    assert!(rules.contains("FIELD: rules <[]PolicyRule>"), "{rules}");
    assert!(
        fields(&rules).contains(&"verbs <[]string> -required-".to_string()),
        "{rules}"
    );
    // Both Event kinds are served, each with its own schema.
    let core = ok(&k, &["explain", "events", "--api-version=v1"]).await;
    assert!(core.contains("involvedObject"), "{core}");
    let new = ok(&k, &["explain", "events", "--api-version=events.k8s.io/v1"]).await;
    assert!(
        new.contains("regarding") && !new.contains("involvedObject"),
        "{new}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explain_follows_a_crds_schema_as_it_changes() {
    let server = ApiServer::start().await.unwrap();
    server.install_crd(&documented_crd(None)).unwrap();
    let k = kubectl(&server, "crd");
    let out = ok(&k, &["explain", "rollouts.spec"]).await;
    assert!(
        out.starts_with("GROUP:      demo.kubeward.dev\nKIND:       Rollout\nVERSION:    v1\n"),
        "{out}"
    );
    assert!(out.contains("FIELD: spec <Object>"), "{out}");
    assert!(out.contains("What to roll out."), "{out}");
    assert_eq!(
        fields(&out),
        ["image <string>", "replicas <integer>"],
        "{out}"
    );
    // The same from the OpenAPI v2 document (client-go reads its protobuf form).
    let v2 = ok(
        &k,
        &[
            "explain",
            "rollouts.spec",
            "--output",
            "plaintext-openapiv2",
        ],
    )
    .await;
    assert!(
        v2.starts_with("KIND:     Rollout\nVERSION:  demo.kubeward.dev/v1\n"),
        "{v2}"
    );
    assert!(v2.contains("What to roll out."), "{v2}");
    assert!(v2.contains("replicas\t<integer>"), "{v2}");
    let top = ok(&k, &["explain", "rollouts"]).await;
    assert!(
        top.contains("A Rollout moves pods to a new image."),
        "{top}"
    );
    assert!(
        fields(&top).contains(&"metadata <ObjectMeta>".to_string()),
        "{top}"
    );

    // A new field in the CRD is explained at once.
    let crds: Api<CustomResourceDefinition> = Api::all(server.client().unwrap());
    let updated = documented_crd(Some((
        "paused",
        json!({"type": "boolean", "description": "Stops the rollout."}),
    )));
    crds.patch(
        "rollouts.demo.kubeward.dev",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": updated.spec})),
    )
    .await
    .unwrap();
    let k = kubectl(&server, "crd-updated");
    let out = ok(&k, &["explain", "rollouts.spec.paused"]).await;
    assert!(out.contains("FIELD: paused <boolean>"), "{out}");
    assert!(out.contains("Stops the rollout."), "{out}");
}

#[tokio::test]
async fn openapi_v2_json_holds_builtin_and_crd_definitions() {
    let server = ApiServer::start().await.unwrap();
    server.install_crd(&documented_crd(None)).unwrap();
    let client = server.client().unwrap();
    let (code, doc) = raw_accept(&client, "/openapi/v2", "application/json").await;
    assert_eq!(code, 200);
    assert_eq!(doc["swagger"], "2.0");
    let defs = &doc["definitions"];
    assert_eq!(
        defs["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]["finalizers"]["x-kubernetes-patch-strategy"],
        "merge"
    );
    let rollout = &defs["dev.kubeward.demo.v1.Rollout"];
    assert_eq!(
        rollout["x-kubernetes-group-version-kind"],
        json!([{"group": "demo.kubeward.dev", "version": "v1", "kind": "Rollout"}])
    );
    // v2 drops value validations, and references are v2's.
    assert_eq!(
        rollout["properties"]["spec"]["properties"]["replicas"],
        json!({"type": "integer", "description": "How many pods run the new version."})
    );
    assert_eq!(
        rollout["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    // Neither JSON nor gnostic protobuf: kube-openapi's 406.
    let (code, _) = raw_accept(&client, "/openapi/v2", "application/yaml").await;
    assert_eq!(code, 406);

    // v3 keeps them, with v3 references.
    let (code, doc) = raw_accept(
        &client,
        "/openapi/v3/apis/demo.kubeward.dev/v1",
        "application/json",
    )
    .await;
    assert_eq!(code, 200);
    let rollout = &doc["components"]["schemas"]["dev.kubeward.demo.v1.Rollout"];
    assert_eq!(
        rollout["properties"]["spec"]["properties"]["replicas"]["minimum"].as_f64(),
        Some(0.0)
    );
    assert_eq!(
        rollout["properties"]["metadata"]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert!(
        doc["components"]["schemas"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].is_object()
    );
}
