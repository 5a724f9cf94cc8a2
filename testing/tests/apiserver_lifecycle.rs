//! Object lifecycle of the in-process API server as a cluster runs it: namespace deletion
//! (`Terminating`, the namespace controller's conditions, `NamespaceLifecycle` admission), the
//! garbage collector (background, foreground and orphan propagation by owner references), and
//! finalization that ends in a single DELETED event.

mod apiserver_support;

use std::time::Duration;

use apiserver_support::{raw, rollout, rollout_crd, rollouts};
use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::{Client, Resource};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

/// A deadline so that a broken server fails the test instead of hanging it.
const DEADLINE: Duration = Duration::from_secs(30);
const HOLD: &str = "example.com/hold";

fn cm(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm
}

fn held(name: &str) -> ConfigMap {
    let mut cm = cm(name);
    cm.metadata.finalizers = Some(vec![HOLD.into()]);
    cm
}

fn owned_by(name: &str, owner: &ConfigMap, block: bool) -> ConfigMap {
    let mut cm = cm(name);
    cm.metadata.owner_references = Some(vec![owner_ref(owner, block)]);
    cm
}

fn owner_ref<K: Resource<DynamicType = ()>>(owner: &K, block: bool) -> OwnerReference {
    OwnerReference {
        api_version: K::api_version(&()).into(),
        kind: K::kind(&()).into(),
        name: owner.meta().name.clone().unwrap(),
        uid: owner.meta().uid.clone().unwrap(),
        block_owner_deletion: block.then_some(true),
        controller: None,
    }
}

async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    tokio::time::timeout(DEADLINE, async {
        while !check().await {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{what} before the deadline"));
}

async fn gone<K>(api: &Api<K>, name: &str) -> bool
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.get_opt(name).await.unwrap().is_none()
}

/// Watch events (type, object as JSON) until one matches `last`, which is included.
async fn events_until<K, S>(
    stream: &mut S,
    mut last: impl FnMut(&str, &Value) -> bool,
) -> Vec<(String, Value)>
where
    K: serde::Serialize,
    S: Stream<Item = kube::Result<WatchEvent<K>>> + Unpin,
{
    let mut out = Vec::new();
    loop {
        let event = tokio::time::timeout(DEADLINE, stream.next())
            .await
            .expect("event before the deadline")
            .expect("stream open")
            .expect("event");
        let (kind, obj) = match event {
            WatchEvent::Added(o) => ("ADDED", o),
            WatchEvent::Modified(o) => ("MODIFIED", o),
            WatchEvent::Deleted(o) => ("DELETED", o),
            other => panic!("unexpected event {other:?}"),
        };
        let obj = serde_json::to_value(obj).unwrap();
        let done = last(kind, &obj);
        out.push((kind.to_string(), obj));
        if done {
            return out;
        }
    }
}

fn condition<'a>(ns: &'a Value, type_: &str) -> &'a Value {
    ns["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

async fn create_namespace(client: &Client, name: &str) -> Namespace {
    let nss: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.name = Some(name.into());
    nss.create(&PostParams::default(), &ns).await.unwrap()
}

async fn create(cms: &Api<ConfigMap>, obj: &ConfigMap) -> ConfigMap {
    cms.create(&PostParams::default(), obj).await.unwrap()
}

/// DELETE of a ConfigMap in `default` with optional `DeleteOptions`: the code and the body.
async fn delete_cm(client: &Client, name: &str, options: Option<Value>) -> (u16, Value) {
    let content_type = options.is_some().then_some("application/json");
    let path = format!("/api/v1/namespaces/default/configmaps/{name}");
    raw(client, "DELETE", &path, content_type, options).await
}

async fn remove_finalizers(api: &Api<ConfigMap>, name: &str) {
    api.patch(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn deleting_a_namespace_terminates_it_deletes_its_content_and_waits_for_finalizers() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let nss: Api<Namespace> = Api::all(client.clone());
    let created = create_namespace(&client, "shop").await;
    let spec = created.spec.clone().unwrap();
    assert_eq!(spec.finalizers, Some(vec!["kubernetes".to_string()]));
    assert_eq!(created.status.unwrap().phase.as_deref(), Some("Active"));

    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "shop");
    create(&cms, &cm("plain")).await;
    create(&cms, &held("held")).await;
    let rv = server.resource_version().to_string();
    let mut ns_events = nss
        .watch(&WatchParams::default().fields("metadata.name=shop"), &rv)
        .await
        .unwrap()
        .boxed();
    let mut cm_events = cms
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();

    // DELETE answers the Namespace, Terminating, with its spec finalizer.
    let (code, answer) = raw(&client, "DELETE", "/api/v1/namespaces/shop", None, None).await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer["kind"], "Namespace");
    assert_eq!(answer["status"]["phase"], "Terminating");
    assert_eq!(answer["spec"]["finalizers"], json!(["kubernetes"]));
    assert!(answer["metadata"]["deletionTimestamp"].is_string());

    // The controller deletes the content; the object with a finalizer waits for it, and the
    // namespace says so.
    eventually(
        "the namespace reports the finalizer that remains",
        || async {
            let ns = serde_json::to_value(nss.get("shop").await.unwrap()).unwrap();
            condition(&ns, "NamespaceFinalizersRemaining")["status"] == "True"
        },
    )
    .await;
    assert!(gone(&cms, "plain").await);
    let waiting = cms.get("held").await.unwrap();
    assert!(waiting.metadata.deletion_timestamp.is_some());
    let ns = serde_json::to_value(nss.get("shop").await.unwrap()).unwrap();
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert_eq!(
        condition(&ns, "NamespaceContentRemaining"),
        &json!({"type": "NamespaceContentRemaining", "status": "True",
                "lastTransitionTime": condition(&ns, "NamespaceContentRemaining")["lastTransitionTime"],
                "reason": "SomeResourcesRemain",
                "message": "Some resources are remaining: configmaps. has 1 resource instances"})
    );
    assert_eq!(
        condition(&ns, "NamespaceFinalizersRemaining")["message"],
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    );
    assert_eq!(
        condition(&ns, "NamespaceFinalizersRemaining")["reason"],
        "SomeFinalizersRemain"
    );
    for (type_, reason) in [
        ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered"),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            "ParsedGroupVersions",
        ),
        ("NamespaceDeletionContentFailure", "ContentDeleted"),
    ] {
        assert_eq!(condition(&ns, type_)["status"], "False", "{type_}");
        assert_eq!(condition(&ns, type_)["reason"], reason, "{type_}");
    }

    // NamespaceLifecycle admission: no new content while terminating.
    let (code, status) = raw(
        &client,
        "POST",
        "/api/v1/namespaces/shop/configmaps",
        Some("application/json"),
        Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late"}})),
    )
    .await;
    assert_eq!(code, 403, "{status}");
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps \"late\" is forbidden: unable to create new content in namespace shop because it is being terminated"
    );
    assert_eq!(
        status["details"]["causes"],
        json!([{"reason": "NamespaceTerminating", "message": "namespace shop is being terminated",
                "field": "metadata.namespace"}])
    );
    // Before a name is generated, admission names the object by its prefix.
    let (code, status) = raw(
        &client,
        "POST",
        "/api/v1/namespaces/shop/configmaps",
        Some("application/json"),
        Some(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "late-"}}),
        ),
    )
    .await;
    assert_eq!(code, 403, "{status}");
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .starts_with("configmaps \"late-\" is forbidden: unable to create new content"),
        "{status}"
    );
    // Repeating the DELETE changes nothing and answers the namespace.
    let (code, again) = raw(&client, "DELETE", "/api/v1/namespaces/shop", None, None).await;
    assert_eq!(
        (code, &again["status"]["phase"]),
        (200, &json!("Terminating"))
    );

    // The finalizer's owner finishes: the object goes, then the namespace.
    remove_finalizers(&cms, "held").await;
    eventually("the namespace is removed", || gone(&nss, "shop")).await;

    let cm_seen = events_until(&mut cm_events, |kind, o| {
        kind == "DELETED" && o["metadata"]["name"] == "held"
    })
    .await;
    let summary: Vec<(String, String)> = cm_seen
        .iter()
        .map(|(k, o)| {
            (
                k.clone(),
                o["metadata"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    assert_eq!(
        summary,
        pairs(&[
            ("MODIFIED", "held"),
            ("DELETED", "plain"),
            ("DELETED", "held")
        ]),
        "{cm_seen:?}"
    );
    // The held object's DELETED carries its last stored state (with the finalizer).
    assert_eq!(cm_seen[2].1["metadata"]["finalizers"], json!([HOLD]));

    let ns_seen = events_until(&mut ns_events, |kind, _| kind == "DELETED").await;
    let (first, last) = (&ns_seen[0], &ns_seen[ns_seen.len() - 1]);
    assert_eq!(first.0, "MODIFIED");
    assert_eq!(first.1["status"]["phase"], "Terminating");
    assert!(
        ns_seen[..ns_seen.len() - 1]
            .iter()
            .all(|(k, _)| k == "MODIFIED"),
        "{ns_seen:?}"
    );
    // Its last state: everything removed, the spec finalizer still listed (deleted in the
    // update that removed it).
    assert_eq!(
        condition(&last.1, "NamespaceContentRemaining")["reason"],
        "ContentRemoved"
    );
    assert_eq!(
        condition(&last.1, "NamespaceContentRemaining")["message"],
        "All content successfully removed"
    );
    assert_eq!(
        condition(&last.1, "NamespaceContentRemaining")["status"],
        "False"
    );
    assert_eq!(last.1["spec"]["finalizers"], json!(["kubernetes"]));

    // The name is free again, and the new namespace is empty.
    create_namespace(&client, "shop").await;
    assert!(
        cms.list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn an_empty_namespace_goes_after_its_conditions_are_written() {
    let server = ApiServer::start().await.unwrap();
    server.install_crd(&rollout_crd(true)).unwrap();
    let client = server.client().unwrap();
    let nss: Api<Namespace> = Api::all(client.clone());
    create_namespace(&client, "empty").await;
    // A custom resource is content too.
    rollouts(&client, "empty")
        .create(&PostParams::default(), &rollout("web", json!({})))
        .await
        .unwrap();
    let rv = server.resource_version().to_string();
    let mut events = nss
        .watch(&WatchParams::default().fields("metadata.name=empty"), &rv)
        .await
        .unwrap()
        .boxed();
    let (code, _) = raw(&client, "DELETE", "/api/v1/namespaces/empty", None, None).await;
    assert_eq!(code, 200);
    let seen = events_until(&mut events, |kind, _| kind == "DELETED").await;
    let kinds: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["MODIFIED", "MODIFIED", "DELETED"], "{seen:?}");
    assert!(seen[0].1["status"].get("conditions").is_none());
    assert_eq!(
        seen[1].1["status"]["conditions"].as_array().unwrap().len(),
        5
    );
    assert!(
        server
            .object("demo.kubeward.dev/v1", "rollouts", Some("empty"), "web")
            .is_none()
    );
}

#[tokio::test]
async fn default_kube_system_and_kube_public_may_not_be_deleted() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    for name in ["default", "kube-system", "kube-public"] {
        let (code, status) = raw(
            &client,
            "DELETE",
            &format!("/api/v1/namespaces/{name}"),
            None,
            None,
        )
        .await;
        assert_eq!(code, 403, "{name}: {status}");
        assert_eq!(status["reason"], "Forbidden");
        assert_eq!(
            status["message"],
            format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted")
        );
        assert_eq!(
            status["details"],
            json!({"name": name, "kind": "namespaces"})
        );
        let ns = server.object("v1", "namespaces", None, name).unwrap();
        assert!(ns["metadata"]["deletionTimestamp"].is_null());
        assert_eq!(ns["status"]["phase"], "Active");
    }
}

#[tokio::test]
async fn removing_the_last_finalizer_sends_only_deleted() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create(&cms, &held("a")).await;
    let rv = server.resource_version().to_string();
    let mut events = cms
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    let (code, _) = delete_cm(&client, "a", None).await;
    assert_eq!(code, 200);
    let (code, answer) = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/a",
        Some("application/merge-patch+json"),
        Some(json!({"metadata": {"finalizers": null}})),
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    let seen = events_until(&mut events, |kind, _| kind == "DELETED").await;
    let kinds: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["MODIFIED", "DELETED"], "{seen:?}");
    assert!(seen[0].1["metadata"]["deletionTimestamp"].is_string());
    // The deletion is of the stored object: it still lists the finalizer, at a new version.
    assert_eq!(seen[1].1["metadata"]["finalizers"], json!([HOLD]));
    assert_eq!(
        seen[1].1["metadata"]["resourceVersion"],
        server.resource_version().to_string()
    );
    // The writer gets its update back (`deleteWithoutFinalizers`).
    assert_eq!(answer["metadata"]["finalizers"], Value::Null);
    assert!(gone(&cms, "a").await);
}

#[tokio::test]
async fn background_collection_deletes_dependents_whose_owners_are_gone() {
    let server = ApiServer::start().await.unwrap();
    server.install_crd(&rollout_crd(true)).unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = create(&cms, &cm("owner")).await;
    let other = create(&cms, &cm("other")).await;
    create(&cms, &owned_by("child", &owner, false)).await;
    // Two owners: losing one leaves the dependent with the other's reference only.
    let mut shared = owned_by("shared", &owner, false);
    shared
        .metadata
        .owner_references
        .as_mut()
        .unwrap()
        .push(owner_ref(&other, false));
    create(&cms, &shared).await;
    // A dependent of a custom resource.
    let rollout_owner = rollouts(&client, "default")
        .create(&PostParams::default(), &rollout("web", json!({})))
        .await
        .unwrap();
    let mut of_rollout = cm("of-rollout");
    of_rollout.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "demo.kubeward.dev/v1".into(),
        kind: "Rollout".into(),
        name: "web".into(),
        uid: rollout_owner.metadata.uid.clone().unwrap(),
        ..Default::default()
    }]);
    create(&cms, &of_rollout).await;
    // An owner reference whose uid matches nothing (same name as a live object): collected.
    let mut stray = cm("stray");
    let mut wrong = owner_ref(&owner, false);
    wrong.uid = "00000000-0000-0000-0000-000000000000".into();
    stray.metadata.owner_references = Some(vec![wrong]);
    create(&cms, &stray).await;
    eventually("the stray dependent is collected", || gone(&cms, "stray")).await;
    assert!(!gone(&cms, "child").await);

    // The default policy of every kind here is background: the owner goes at once.
    let (code, status) = delete_cm(&client, "owner", None).await;
    assert_eq!((code, &status["kind"]), (200, &json!("Status")));
    eventually("the child is collected", || gone(&cms, "child")).await;
    eventually("the shared dependent keeps only its live owner", || async {
        let refs = cms.get("shared").await.unwrap().metadata.owner_references;
        refs.is_some_and(|r| r.len() == 1 && r[0].name == "other")
    })
    .await;

    rollouts(&client, "default")
        .delete("web", &Default::default())
        .await
        .unwrap();
    eventually("the rollout's dependent is collected", || {
        gone(&cms, "of-rollout")
    })
    .await;
    assert!(!gone(&cms, "other").await);
}

#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = create(&cms, &cm("owner")).await;
    let mut blocking = owned_by("blocking", &owner, true);
    blocking.metadata.finalizers = Some(vec![HOLD.into()]);
    create(&cms, &blocking).await;
    create(&cms, &owned_by("loose", &owner, false)).await;
    let rv = server.resource_version().to_string();
    let mut events = cms
        .watch(&WatchParams::default().fields("metadata.name=owner"), &rv)
        .await
        .unwrap()
        .boxed();

    let (code, answer) = delete_cm(
        &client,
        "owner",
        Some(json!({"propagationPolicy": "Foreground"})),
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(
        answer["metadata"]["finalizers"],
        json!(["foregroundDeletion"])
    );
    assert!(answer["metadata"]["deletionTimestamp"].is_string());

    // Every dependent is deleted; the blocking one waits on its own finalizer, and the owner
    // waits for it.
    eventually("the non-blocking dependent is collected", || {
        gone(&cms, "loose")
    })
    .await;
    eventually("the blocking dependent is deleting", || async {
        cms.get("blocking")
            .await
            .unwrap()
            .metadata
            .deletion_timestamp
            .is_some()
    })
    .await;
    let still = cms.get("owner").await.unwrap();
    assert_eq!(
        still.metadata.finalizers,
        Some(vec!["foregroundDeletion".to_string()])
    );

    remove_finalizers(&cms, "blocking").await;
    eventually("the owner goes after its blocking dependent", || {
        gone(&cms, "owner")
    })
    .await;
    let seen = events_until(&mut events, |kind, _| kind == "DELETED").await;
    let kinds: Vec<&str> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["MODIFIED", "DELETED"], "{seen:?}");
}

#[tokio::test]
async fn orphan_propagation_keeps_dependents_without_the_reference() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");

    // By policy.
    let owner = create(&cms, &cm("owner")).await;
    create(&cms, &owned_by("child", &owner, true)).await;
    let (code, answer) = delete_cm(
        &client,
        "owner",
        Some(json!({"propagationPolicy": "Orphan"})),
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer["metadata"]["finalizers"], json!(["orphan"]));
    eventually("the owner goes", || gone(&cms, "owner")).await;
    let child = cms.get("child").await.unwrap();
    assert_eq!(child.metadata.owner_references, None);

    // By the `orphan` finalizer the owner carries, with the default policy.
    let mut owner = cm("owner2");
    owner.metadata.finalizers = Some(vec!["orphan".into()]);
    let owner = create(&cms, &owner).await;
    create(&cms, &owned_by("child2", &owner, false)).await;
    let (code, _) = delete_cm(&client, "owner2", None).await;
    assert_eq!(code, 200);
    eventually("the second owner goes", || gone(&cms, "owner2")).await;
    assert_eq!(
        cms.get("child2").await.unwrap().metadata.owner_references,
        None
    );
}

/// `orphanDependents` in a DELETE's query is read as the query parameter codec reads a boolean:
/// any spelling but `0` and `false` (in any case) is true, so the Python client's `True` orphans
/// the dependents instead of deleting them.
#[tokio::test]
async fn orphan_dependents_in_the_query_is_read_as_the_parameter_codec_reads_booleans() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for (i, (value, orphans)) in [
        ("True", true),
        ("TRUE", true),
        ("1", true),
        ("t", true),
        ("yes", true),
        ("False", false),
        ("FALSE", false),
        ("0", false),
    ]
    .into_iter()
    .enumerate()
    {
        let (owner_name, child_name) = (format!("owner-{i}"), format!("child-{i}"));
        let owner = create(&cms, &cm(&owner_name)).await;
        create(&cms, &owned_by(&child_name, &owner, false)).await;
        let (code, answer) = raw(
            &client,
            "DELETE",
            &format!("/api/v1/namespaces/default/configmaps/{owner_name}?orphanDependents={value}"),
            None,
            None,
        )
        .await;
        assert_eq!(code, 200, "orphanDependents={value}: {answer}");
        if orphans {
            // Orphaned: the owner waits for the `orphan` finalizer, the child stays and loses
            // its reference.
            assert_eq!(
                answer["metadata"]["finalizers"],
                json!(["orphan"]),
                "orphanDependents={value}: {answer}"
            );
            eventually("the owner goes", || gone(&cms, &owner_name)).await;
            let child = cms.get(&child_name).await.unwrap();
            assert_eq!(
                child.metadata.owner_references, None,
                "orphanDependents={value}"
            );
        } else {
            // Not orphaned: deleted at once, and the collector deletes the child.
            assert_eq!(
                answer["status"], "Success",
                "orphanDependents={value}: {answer}"
            );
            eventually("the child is collected", || gone(&cms, &child_name)).await;
        }
    }
}

#[tokio::test]
async fn unknown_propagation_policies_are_invalid_delete_options() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create(&cms, &cm("a")).await;
    let (code, status) = delete_cm(&client, "a", Some(json!({"propagationPolicy": "Later"}))).await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(status["reason"], "Invalid");
    assert_eq!(
        status["message"],
        "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Later\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
    );
    assert!(!gone(&cms, "a").await);
}

#[tokio::test]
async fn orphan_dependents_false_is_background_and_policies_read_from_the_query() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create(&cms, &cm("a")).await;
    // The registry's shouldDeleteDependents is false whenever orphanDependents is set, and
    // shouldOrphanDependents false for `false`: neither finalizer, deleted at once (as the
    // real kube-apiserver 1.34 answers, differential corpus).
    let (code, answer) = delete_cm(&client, "a", Some(json!({"orphanDependents": false}))).await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer["status"], "Success", "{answer}");
    assert!(gone(&cms, "a").await);

    create(&cms, &cm("b")).await;
    let (code, answer) = raw(
        &client,
        "DELETE",
        "/api/v1/namespaces/default/configmaps/b?propagationPolicy=Orphan",
        None,
        None,
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    assert_eq!(answer["metadata"]["finalizers"], json!(["orphan"]));
    eventually("b goes once orphaned", || gone(&cms, "b")).await;
}

#[tokio::test]
async fn foreground_deletion_breaks_a_cycle_of_blocking_owner_references() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let a = create(&cms, &cm("a")).await;
    let b = create(&cms, &owned_by("b", &a, true)).await;
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"ownerReferences": [owner_ref(&b, true)]}})),
    )
    .await
    .unwrap();
    let (code, _) = delete_cm(
        &client,
        "a",
        Some(json!({"propagationPolicy": "Foreground"})),
    )
    .await;
    assert_eq!(code, 200);
    eventually("both objects of the cycle go", || async {
        gone(&cms, "a").await && gone(&cms, "b").await
    })
    .await;
}

#[tokio::test]
async fn finalize_removes_a_namespace_whatever_content_remains() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let nss: Api<Namespace> = Api::all(client.clone());
    create_namespace(&client, "stuck").await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "stuck");
    create(&cms, &held("held")).await;
    raw(&client, "DELETE", "/api/v1/namespaces/stuck", None, None).await;
    eventually("the namespace reports the remaining content", || async {
        let ns = serde_json::to_value(nss.get("stuck").await.unwrap()).unwrap();
        condition(&ns, "NamespaceContentRemaining")["status"] == "True"
    })
    .await;
    // Main-resource writes do not change spec finalizers; /finalize does.
    let mut ns = serde_json::to_value(nss.get("stuck").await.unwrap()).unwrap();
    ns["spec"]["finalizers"] = json!([]);
    let (code, kept) = raw(
        &client,
        "PUT",
        "/api/v1/namespaces/stuck",
        Some("application/json"),
        Some(ns.clone()),
    )
    .await;
    assert_eq!(code, 200, "{kept}");
    assert_eq!(kept["spec"]["finalizers"], json!(["kubernetes"]));
    let (code, answer) = raw(
        &client,
        "PUT",
        "/api/v1/namespaces/stuck/finalize",
        Some("application/json"),
        Some(ns),
    )
    .await;
    assert_eq!(code, 200, "{answer}");
    assert!(gone(&nss, "stuck").await);
    // As on a cluster, the content is left in storage.
    assert!(
        server
            .object("v1", "configmaps", Some("stuck"), "held")
            .is_some()
    );
}

#[tokio::test]
async fn delete_collection_applies_its_propagation_policy_to_every_object() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = create(&cms, &cm("owner")).await;
    create(&cms, &owned_by("child", &owner, false)).await;
    let (code, list) = raw(
        &client,
        "DELETE",
        "/api/v1/namespaces/default/configmaps",
        Some("application/json"),
        Some(json!({"propagationPolicy": "Orphan"})),
    )
    .await;
    assert_eq!(code, 200, "{list}");
    let finalizers: Vec<&Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["metadata"]["finalizers"])
        .collect();
    // The registry's DeleteCollection answers the list it deleted from, as listed before the
    // deletions (`return listObj, errs` in apiserver's store.go): no orphan finalizers yet.
    assert_eq!(finalizers, [&Value::Null, &Value::Null], "{list}");
    eventually("both go once orphaned", || async {
        cms.list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    })
    .await;
    let (code, status) = raw(
        &client,
        "DELETE",
        "/api/v1/namespaces/default/configmaps",
        Some("application/json"),
        Some(json!({"propagationPolicy": "Later"})),
    )
    .await;
    assert_eq!((code, &status["reason"]), (422, &json!("Invalid")));
}
