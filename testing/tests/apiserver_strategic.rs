//! Strategic merge patch against the in-process API server through a real `kube::Client` and
//! kubectl: list strategies and merge keys of the built-in kinds, the directives, and upstream's
//! errors.

mod apiserver_support;

use apiserver_support::{raw, rollout, rollout_crd, rollouts};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubeward_testing::kubectl::Kubectl;
use kubeward_testing::{ApiServer, Identity};
use serde_json::{Value, json};

const CM_PATH: &str = "/api/v1/namespaces/default/configmaps/app";

fn owner(uid: &str, name: &str) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: name.into(),
        uid: uid.into(),
        ..OwnerReference::default()
    }
}

/// The uids of the owner ConfigMaps `one`, `two` and `three` (real objects, so that garbage
/// collection leaves their dependents alone).
struct Owners([String; 3]);

impl Owners {
    fn uid(&self, i: usize) -> &str {
        &self.0[i]
    }

    fn owner(&self, i: usize) -> OwnerReference {
        owner(self.uid(i), ["one", "two", "three"][i])
    }
}

/// A ConfigMap `app` with two finalizers, owned by `one` and `two`, with some data.
async fn configmap(client: &kube::Client) -> (Api<ConfigMap>, Owners) {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut uids = Vec::new();
    for name in ["one", "two", "three"] {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        let created = cms.create(&PostParams::default(), &cm).await.unwrap();
        uids.push(created.metadata.uid.unwrap());
    }
    let owners = Owners(uids.try_into().unwrap());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("app".into());
    cm.metadata.finalizers = Some(vec!["a.example.com/one".into(), "b.example.com/two".into()]);
    cm.metadata.owner_references = Some(vec![owners.owner(0), owners.owner(1)]);
    cm.data = Some([("k".to_string(), "v".to_string())].into());
    cms.create(&PostParams::default(), &cm).await.unwrap();
    (cms, owners)
}

async fn strategic(cms: &Api<ConfigMap>, patch: Value) -> ConfigMap {
    cms.patch("app", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .unwrap()
}

#[tokio::test]
async fn finalizers_merge_as_a_union_so_another_controllers_finalizer_is_kept() {
    let server = ApiServer::start().await.unwrap();
    let (cms, _) = configmap(&server.client().unwrap()).await;
    let patched = strategic(
        &cms,
        json!({"metadata": {"finalizers": ["c.example.com/three"]}}),
    )
    .await;
    let stored = cms.get("app").await.unwrap();
    assert_eq!(stored.metadata.finalizers, patched.metadata.finalizers);
    assert_eq!(
        stored.metadata.finalizers.unwrap(),
        [
            "c.example.com/three",
            "a.example.com/one",
            "b.example.com/two"
        ]
    );
}

#[tokio::test]
async fn delete_from_primitive_list_removes_only_the_named_finalizer() {
    let server = ApiServer::start().await.unwrap();
    let (cms, _) = configmap(&server.client().unwrap()).await;
    strategic(
        &cms,
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a.example.com/one"]}}),
    )
    .await;
    let stored = cms.get("app").await.unwrap();
    assert_eq!(stored.metadata.finalizers.unwrap(), ["b.example.com/two"]);
    // The directive is consumed, never stored as a key.
    let (_, raw_stored) = raw(&server.client().unwrap(), "GET", CM_PATH, None, None).await;
    assert!(
        raw_stored["metadata"]
            .get("$deleteFromPrimitiveList/finalizers")
            .is_none()
    );
}

#[tokio::test]
async fn owner_references_merge_by_uid_and_patch_delete_removes_one() {
    let server = ApiServer::start().await.unwrap();
    let (cms, owners) = configmap(&server.client().unwrap()).await;
    strategic(
        &cms,
        json!({"metadata": {"ownerReferences": [
            {"uid": owners.uid(1), "controller": true},
            owners.owner(2),
        ]}}),
    )
    .await;
    let stored = cms.get("app").await.unwrap().metadata.owner_references;
    let mut two = owners.owner(1);
    two.controller = Some(true);
    assert_eq!(
        stored.unwrap(),
        [owners.owner(0), two.clone(), owners.owner(2)]
    );

    strategic(
        &cms,
        json!({"metadata": {"ownerReferences": [{"uid": owners.uid(0), "$patch": "delete"}]}}),
    )
    .await;
    let stored = cms.get("app").await.unwrap().metadata.owner_references;
    assert_eq!(stored.unwrap(), [two, owners.owner(2)]);
}

/// OwnerReferencesPermissionEnforcement judges the owner references a strategic merge
/// produces: adding one (merged by uid) needs `delete` on the object, a patch that leaves them
/// alone does not.
#[tokio::test]
async fn owner_reference_admission_sees_the_merged_references() {
    let server = ApiServer::start().await.unwrap();
    let (cms, owners) = configmap(&server.client().unwrap()).await;
    let rule = |verbs: &[&str]| PolicyRule {
        api_groups: Some(vec!["".into()]),
        resources: Some(vec!["configmaps".into()]),
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..Default::default()
    };
    let limited: Api<ConfigMap> = Api::namespaced(
        server
            .client_for(&Identity::with_rules("op", vec![rule(&["get", "patch"])]))
            .unwrap(),
        "default",
    );
    let add_owner = json!({"metadata": {"ownerReferences": [
        owners.owner(2),
    ]}});
    match limited
        .patch(
            "app",
            &PatchParams::default(),
            &Patch::Strategic(&add_owner),
        )
        .await
    {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 403);
            assert_eq!(
                status.message,
                "configmaps \"app\" is forbidden: cannot set an ownerRef on a resource you can't delete: , <nil>"
            );
        }
        other => panic!("expected 403, got {other:?}"),
    }
    // Restating an existing reference merges to the same list: no change, no check.
    let same = json!({"metadata": {"ownerReferences": [{"uid": owners.uid(0), "name": "one"}]}, "data": {"x": "1"}});
    limited
        .patch("app", &PatchParams::default(), &Patch::Strategic(&same))
        .await
        .unwrap();
    let stored = cms.get("app").await.unwrap();
    assert_eq!(stored.metadata.owner_references.unwrap().len(), 2);
}

#[tokio::test]
async fn patch_replace_and_null_on_maps() {
    let server = ApiServer::start().await.unwrap();
    let (cms, _) = configmap(&server.client().unwrap()).await;
    strategic(&cms, json!({"data": {"$patch": "replace", "n": "1"}})).await;
    assert_eq!(
        cms.get("app").await.unwrap().data.unwrap(),
        [("n".to_string(), "1".to_string())].into()
    );
    strategic(&cms, json!({"data": {"n": null, "m": "2"}})).await;
    assert_eq!(
        cms.get("app").await.unwrap().data.unwrap(),
        [("m".to_string(), "2".to_string())].into()
    );
}

/// A strategic merge patch of `app` as sent: the status code and body.
async fn raw_strategic(client: &kube::Client, patch: Value) -> (u16, Value) {
    let smp = Some("application/strategic-merge-patch+json");
    raw(client, "PATCH", CM_PATH, smp, Some(patch)).await
}

#[tokio::test]
async fn malformed_directives_and_missing_merge_keys_answer_as_upstream() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    configmap(&client).await;
    // mergepatch.ErrBadPatchFormatForPrimitiveList: 400.
    let (code, status) = raw_strategic(
        &client,
        json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["x"]}}),
    )
    .await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")));
    assert_eq!(status["message"], "invalid patch format of primitive list");
    // An item without the merge key: apimachinery's error, unconverted (500, no reason).
    let (code, status) = raw_strategic(
        &client,
        json!({"metadata": {"ownerReferences": [{"name": "x"}]}}),
    )
    .await;
    assert_eq!(code, 500);
    assert_eq!(
        status["message"],
        "map: map[name:x] does not contain declared merge key: uid"
    );
    // Items of another type than the live list's.
    let (code, status) = raw_strategic(&client, json!({"metadata": {"finalizers": [["x"]]}})).await;
    assert_eq!(code, 500);
    assert_eq!(
        status["message"],
        "list element types are not identical: [[a.example.com/one b.example.com/two] [[x]]]"
    );
    // Nothing was stored by the failed patches.
    let stored: Api<ConfigMap> = Api::namespaced(client, "default");
    assert_eq!(
        stored
            .get("app")
            .await
            .unwrap()
            .metadata
            .finalizers
            .unwrap(),
        ["a.example.com/one", "b.example.com/two"]
    );
}

#[tokio::test]
async fn custom_resources_still_answer_415() {
    let server = ApiServer::start().await.unwrap();
    server.install_crd(&rollout_crd(true)).unwrap();
    let client = server.client().unwrap();
    let api = rollouts(&client, "default");
    api.create(
        &PostParams::default(),
        &rollout("web", json!({"replicas": 1})),
    )
    .await
    .unwrap();
    let err = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"metadata": {"finalizers": ["x.example.com/y"]}})),
        )
        .await
        .unwrap_err();
    match err {
        kube::Error::Api(status) => assert_eq!(status.code, 415),
        other => panic!("expected a 415, got {other}"),
    }
}

/// `kubectl apply` sends a three-way strategic merge patch (`$setElementOrder`, only the
/// changed items): the finalizer another controller added since the last apply is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_keeps_a_finalizer_another_controller_added() {
    let server = ApiServer::start().await.unwrap();
    let dir = std::env::temp_dir().join(format!("kubeward-smp-apply-{}", server.addr().port()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let k = Kubectl::new(&kubeconfig);
    let manifest = |finalizers: &str, mode: &str| {
        let file = dir.join(format!("cm-{mode}.yaml"));
        std::fs::write(
            &file,
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: default\n  \
                 finalizers: [{finalizers}]\ndata:\n  mode: {mode}\n"
            ),
        )
        .unwrap();
        file.to_string_lossy().into_owned()
    };
    let first = manifest("a.example.com/user", "slow");
    let second = manifest("a.example.com/user, c.example.com/user", "fast");
    let kc = k.clone();
    tokio::task::spawn_blocking(move || kc.ok(&["apply", "-f", &first]))
        .await
        .unwrap();

    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    strategic(
        &cms,
        json!({"metadata": {"finalizers": ["b.example.com/controller"]}}),
    )
    .await;

    let kc = k.clone();
    let applied = tokio::task::spawn_blocking(move || kc.ok(&["apply", "-f", &second]))
        .await
        .unwrap();
    assert!(applied.contains("configmap/app configured"), "{applied}");
    let stored = cms.get("app").await.unwrap();
    assert_eq!(stored.data.unwrap()["mode"], "fast");
    let mut finalizers = stored.metadata.finalizers.unwrap();
    finalizers.sort();
    assert_eq!(
        finalizers,
        [
            "a.example.com/user",
            "b.example.com/controller",
            "c.example.com/user"
        ]
    );
    let (_, raw_stored) = raw(&server.client().unwrap(), "GET", CM_PATH, None, None).await;
    assert!(
        raw_stored["metadata"]
            .as_object()
            .unwrap()
            .keys()
            .all(|k| !k.starts_with('$')),
        "no directive is stored: {raw_stored}"
    );
}
