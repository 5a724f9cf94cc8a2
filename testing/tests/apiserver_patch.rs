//! PATCH formats, finalizers and deletion in the in-process API server.

mod apiserver_support;

use apiserver_support::{raw, rollout_crd, rollout_server, rollouts, server_with_web};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kubeward_testing::ApiServer;
use serde_json::json;

const ROLLOUT: &str = "/apis/demo.kubeward.dev/v1/namespaces/default/rollouts/web";

async fn server_with_rollout() -> (ApiServer, kube::Client) {
    let (server, _, _) = server_with_web(json!({"replicas": 1, "paused": true})).await;
    let client = server.client().unwrap();
    (server, client)
}

#[tokio::test]
async fn a_json_patch_of_more_than_10000_operations_is_413() {
    let (_server, client) = server_with_rollout().await;
    let ops: Vec<_> = (0..10_001)
        .map(|_| json!({"op": "test", "path": "/metadata/name", "value": "web"}))
        .collect();
    let (code, body) = raw(
        &client,
        "PATCH",
        ROLLOUT,
        Some("application/json-patch+json"),
        Some(json!(ops)),
    )
    .await;
    assert_eq!(code, 413, "{body}");
    assert_eq!(body["reason"], "RequestEntityTooLarge");
    assert_eq!(
        body["message"],
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
}

#[tokio::test]
async fn json_patch_test_of_a_missing_path_against_null_passes() {
    let (_server, client) = server_with_rollout().await;
    let patch = json!([
        {"op": "test", "path": "/metadata/finalizers", "value": null},
        {"op": "add", "path": "/metadata/finalizers", "value": ["demo.kubeward.dev/cleanup"]},
    ]);
    let (code, body) = raw(
        &client,
        "PATCH",
        ROLLOUT,
        Some("application/json-patch+json"),
        Some(patch),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        body["metadata"]["finalizers"],
        json!(["demo.kubeward.dev/cleanup"])
    );
    // The same test now fails: the finalizers exist.
    let again = json!([{"op": "test", "path": "/metadata/finalizers", "value": null}]);
    let (code, body) = raw(
        &client,
        "PATCH",
        ROLLOUT,
        Some("application/json-patch+json"),
        Some(again),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(body["reason"], "Invalid");
}

#[tokio::test]
async fn merge_patch_null_deletes_a_field() {
    let (_server, client) = server_with_rollout().await;
    let api = rollouts(&client, "default");
    let patched = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"paused": null}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data["spec"], json!({"replicas": 1}));
}

#[tokio::test]
async fn strategic_merge_patch_is_415_for_custom_resources_and_accepted_for_configmaps() {
    let (_server, client) = server_with_rollout().await;
    let (code, body) = raw(
        &client,
        "PATCH",
        ROLLOUT,
        Some("application/strategic-merge-patch+json"),
        Some(json!({"spec": {"replicas": 2}})),
    )
    .await;
    assert_eq!(code, 415);
    assert_eq!(
        body["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    );
    let cms: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    cm.data = Some([("x".to_string(), "1".to_string())].into());
    cms.create(&PostParams::default(), &cm).await.unwrap();
    let patched = cms
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Strategic(json!({"data": {"y": "2"}})),
        )
        .await
        .unwrap();
    assert_eq!(patched.data.unwrap().len(), 2);
}

#[tokio::test]
async fn apply_patch_requires_a_field_manager() {
    let (_server, client) = server_with_rollout().await;
    let body = json!({"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "metadata": {"name": "web"}, "spec": {"replicas": 3}});
    let (code, status) = raw(
        &client,
        "PATCH",
        ROLLOUT,
        Some("application/apply-patch+yaml"),
        Some(body),
    )
    .await;
    // apimachinery ValidatePatchOptions: an Invalid PatchOptions, not a 400.
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
}

#[tokio::test]
async fn apply_patch_creates_then_updates() {
    let server = ApiServer::start().await.unwrap();
    server.install_crd(&rollout_crd(true)).unwrap();
    let client = server.client().unwrap();
    let body = json!({"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "metadata": {"name": "web"}, "spec": {"replicas": 3}});
    let (code, created) = raw(
        &client,
        "PATCH",
        &format!("{ROLLOUT}?fieldManager=test"),
        Some("application/apply-patch+yaml"),
        Some(body.clone()),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["metadata"]["generation"], 1);
    let api = rollouts(&client, "default");
    let mut next = body;
    next["spec"]["replicas"] = json!(4);
    let updated = api
        .patch("web", &PatchParams::apply("test"), &Patch::Apply(next))
        .await
        .unwrap();
    assert_eq!(updated.data["spec"]["replicas"], 4);
    assert_eq!(updated.metadata.generation, Some(2));
}

#[tokio::test]
async fn force_is_forbidden_on_non_apply_patches() {
    let (_server, client) = server_with_rollout().await;
    let (code, status) = raw(
        &client,
        "PATCH",
        &format!("{ROLLOUT}?force=true"),
        Some("application/merge-patch+json"),
        Some(json!({})),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
    );
}

#[tokio::test]
async fn delete_with_finalizers_marks_the_object_and_removal_of_the_last_finalizer_deletes_it() {
    let (server, client) = server_with_rollout().await;
    let api = rollouts(&client, "default");
    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": ["a/b"]}})),
    )
    .await
    .unwrap();
    let (code, deleting) = raw(&client, "DELETE", ROLLOUT, None, None).await;
    assert_eq!(code, 200);
    assert!(deleting["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(deleting["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(
        deleting["metadata"]["generation"], 2,
        "setting deletionTimestamp bumps the generation"
    );
    let stored = api.get("web").await.unwrap();
    assert!(
        stored.metadata.deletion_timestamp.is_some(),
        "still there while finalizers remain"
    );

    let (code, body) = raw(
        &client,
        "PATCH",
        ROLLOUT,
        Some("application/merge-patch+json"),
        Some(json!({"metadata": {"finalizers": ["a/b", "c/d"]}})),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "Rollout.demo.kubeward.dev \"web\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"c/d\"}"
    );
    assert_eq!(body["details"]["causes"][0]["field"], "metadata.finalizers");

    let before = server.resource_version();
    let gone = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .unwrap();
    assert!(gone.metadata.finalizers.is_none());
    assert!(
        api.get_opt("web").await.unwrap().is_none(),
        "removed when the finalizers became empty"
    );
    assert!(server.resource_version() > before);
}

#[tokio::test]
async fn delete_preconditions_are_honoured() {
    let (_server, client) = server_with_rollout().await;
    let api = rollouts(&client, "default");
    let dp = DeleteParams {
        preconditions: Some(Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    let err = api.delete("web", &dp).await.unwrap_err();
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 409);
            // apiserver's rest.BeforeDelete: the kind, not the resource, in the conflict.
            let uid = api.get("web").await.unwrap().metadata.uid.unwrap();
            assert_eq!(
                s.message,
                format!(
                    "Operation cannot be fulfilled on Rollout.demo.kubeward.dev \"web\": the UID in the precondition (not-the-uid) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
                )
            );
            let details = s.details.expect("details");
            assert_eq!(
                (details.kind.as_str(), details.group.as_str()),
                ("Rollout", "demo.kubeward.dev")
            );
        }
        other => panic!("{other:?}"),
    }
    let current = api.get("web").await.unwrap();
    let dp = DeleteParams {
        preconditions: Some(Preconditions {
            uid: current.metadata.uid.clone(),
            resource_version: current.metadata.resource_version.clone(),
        }),
        ..Default::default()
    };
    api.delete("web", &dp).await.unwrap();
    assert!(api.get_opt("web").await.unwrap().is_none());
}

#[tokio::test]
async fn apply_conflicts_with_another_managers_field_unless_forced() {
    let server = ApiServer::start().await.unwrap();
    server.install_crd(&rollout_crd(true)).unwrap();
    let client = server.client().unwrap();
    let api = rollouts(&client, "default");
    let body = |replicas: i64| json!({"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "metadata": {"name": "web"}, "spec": {"replicas": replicas}});
    api.patch("web", &PatchParams::apply("owner"), &Patch::Apply(body(1)))
        .await
        .unwrap();
    let (code, status) = raw(
        &client,
        "PATCH",
        &format!("{ROLLOUT}?fieldManager=intruder"),
        Some("application/apply-patch+yaml"),
        Some(body(2)),
    )
    .await;
    assert_eq!(code, 409);
    assert_eq!(status["reason"], "Conflict");
    assert_eq!(
        status["message"],
        "Apply failed with 1 conflict: conflict with \"owner\": .spec.replicas"
    );
    assert_eq!(status["details"]["causes"][0]["field"], ".spec.replicas");
    let forced = api
        .patch(
            "web",
            &PatchParams::apply("intruder").force(),
            &Patch::Apply(body(2)),
        )
        .await
        .unwrap();
    assert_eq!(forced.data["spec"]["replicas"], 2);
    let managers: Vec<String> = forced
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(managers.contains(&"intruder".to_string()), "{managers:?}");
}

/// `force` is read as the query parameter codec reads a boolean: any spelling but `0` and
/// `false` (in any case) forces, so the Python client's `force=True` takes the fields over
/// instead of answering 409.
#[tokio::test]
async fn force_is_read_as_the_parameter_codec_reads_booleans() {
    let server = ApiServer::start().await.unwrap();
    server.install_crd(&rollout_crd(true)).unwrap();
    let client = server.client().unwrap();
    let api = rollouts(&client, "default");
    let body = |replicas: usize| json!({"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "metadata": {"name": "web"}, "spec": {"replicas": replicas}});
    api.patch("web", &PatchParams::apply("owner"), &Patch::Apply(body(1)))
        .await
        .unwrap();
    let spellings = [
        ("True", true),
        ("TRUE", true),
        ("1", true),
        ("t", true),
        ("T", true),
        ("yes", true),
        ("", true),
        ("False", false),
        ("FALSE", false),
        ("false", false),
        ("0", false),
    ];
    for (i, (value, forces)) in spellings.into_iter().enumerate() {
        // Each forced apply takes the field for its own manager; the owner takes it back.
        let manager = format!("intruder-{i}");
        let (code, answer) = raw(
            &client,
            "PATCH",
            &format!("{ROLLOUT}?fieldManager={manager}&force={value}"),
            Some("application/apply-patch+yaml"),
            Some(body(i + 2)),
        )
        .await;
        if forces {
            assert_eq!(code, 200, "force={value}: {answer}");
            assert_eq!(answer["spec"]["replicas"], i + 2, "force={value}");
            api.patch(
                "web",
                &PatchParams::apply("owner").force(),
                &Patch::Apply(body(1)),
            )
            .await
            .unwrap();
        } else {
            assert_eq!(code, 409, "force={value}: {answer}");
            assert_eq!(
                answer["message"],
                "Apply failed with 1 conflict: conflict with \"owner\": .spec.replicas",
                "force={value}"
            );
        }
    }
}

#[tokio::test]
async fn non_apply_writes_are_recorded_in_managed_fields_under_the_field_manager() {
    let (_server, client) = server_with_rollout().await;
    let api = rollouts(&client, "default");
    let patched = api
        .patch(
            "web",
            &PatchParams {
                field_manager: Some("editor".into()),
                ..Default::default()
            },
            &Patch::Merge(json!({"spec": {"replicas": 5}})),
        )
        .await
        .unwrap();
    let entries = patched.metadata.managed_fields.unwrap_or_default();
    let editor = entries
        .iter()
        .find(|m| m.manager.as_deref() == Some("editor"))
        .expect("editor entry");
    assert_eq!(editor.operation.as_deref(), Some("Update"));
}

#[tokio::test]
async fn a_json_patch_replacing_the_whole_object_with_a_non_object_is_rejected_not_a_crash() {
    let (server, client) = server_with_rollout().await;
    let patch = json!([{"op": "replace", "path": "", "value": [1, 2]}]);
    let (code, _) = raw(
        &client,
        "PATCH",
        ROLLOUT,
        Some("application/json-patch+json"),
        Some(patch),
    )
    .await;
    assert!(code == 400 || code == 422, "{code}");
    assert!(
        server
            .object("demo.kubeward.dev/v1", "rollouts", Some("default"), "web")
            .is_some()
    );
    let (code, _) = raw(&client, "GET", ROLLOUT, None, None).await;
    assert_eq!(code, 200, "the server still serves");
}

#[tokio::test]
async fn an_identical_apply_is_a_no_op_but_sharing_ownership_is_a_write() {
    let (_server, api) = rollout_server(true).await;
    let body = json!({"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "metadata": {"name": "web"}, "spec": {"replicas": 1}});
    let first = api
        .patch("web", &PatchParams::apply("a"), &Patch::Apply(body.clone()))
        .await
        .unwrap();
    let again = api
        .patch("web", &PatchParams::apply("a"), &Patch::Apply(body.clone()))
        .await
        .unwrap();
    assert_eq!(
        again.metadata.resource_version, first.metadata.resource_version,
        "same manager, same values: no write"
    );
    let shared = api
        .patch("web", &PatchParams::apply("b"), &Patch::Apply(body))
        .await
        .unwrap();
    assert_ne!(
        shared.metadata.resource_version, first.metadata.resource_version,
        "a new co-owner is recorded"
    );
    let managers: Vec<String> = shared
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert!(
        managers.contains(&"a".to_string()) && managers.contains(&"b".to_string()),
        "{managers:?}"
    );
    assert_eq!(shared.metadata.generation, Some(1), "ownership is metadata");
}
