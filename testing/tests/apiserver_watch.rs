//! WATCH rules of the in-process API server, and an unmodified kube-runtime `Controller` with
//! kube-runtime's own `finalizer` helper running against it.

mod apiserver_support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use apiserver_support::{rollout, rollout_crd, rollout_resource, rollouts};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::watcher;
use kubeward_testing::ApiServer;
use serde_json::json;

/// A deadline so that a broken server fails the test instead of hanging it.
const DEADLINE: Duration = Duration::from_secs(30);

fn cm(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm
}

async fn next_event<S, K>(stream: &mut S) -> WatchEvent<K>
where
    S: futures::Stream<Item = kube::Result<WatchEvent<K>>> + Unpin,
{
    tokio::time::timeout(DEADLINE, stream.next())
        .await
        .expect("event before deadline")
        .expect("stream open")
        .expect("event")
}

/// Asserts `event` is the BOOKMARK annotated `k8s.io/initial-events-end: "true"`.
fn assert_initial_events_end(event: WatchEvent<ConfigMap>) {
    match event {
        WatchEvent::Bookmark(b) => assert_eq!(
            b.metadata
                .annotations
                .get("k8s.io/initial-events-end")
                .map(String::as_str),
            Some("true")
        ),
        other => panic!("expected the initial-events-end bookmark, got {other:?}"),
    }
}

fn name_of(event: &WatchEvent<ConfigMap>) -> String {
    match event {
        WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
            o.metadata.name.clone().unwrap()
        }
        other => panic!("not an object event: {other:?}"),
    }
}

#[tokio::test]
async fn watch_from_zero_replays_current_state_as_added() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    cms.create(&PostParams::default(), &cm("b")).await.unwrap();
    let mut stream = cms
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    let first = next_event(&mut stream).await;
    let second = next_event(&mut stream).await;
    assert!(matches!(first, WatchEvent::Added(_)) && matches!(second, WatchEvent::Added(_)));
    assert_eq!([name_of(&first), name_of(&second)], ["a", "b"]);
    // kube asks for bookmarks, and kube-apiserver 1.34 ends the initial events of a watch from
    // "0" with the annotated bookmark (seen on the real binary, differential corpus).
    assert_initial_events_end(next_event(&mut stream).await);
    cms.create(&PostParams::default(), &cm("c")).await.unwrap();
    let third = next_event(&mut stream).await;
    assert!(matches!(third, WatchEvent::Added(_)));
    assert_eq!(name_of(&third), "c");
}

#[tokio::test]
async fn watch_from_n_replays_only_later_changes_and_no_ops_emit_nothing() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let b = cms.create(&PostParams::default(), &cm("b")).await.unwrap();
    let from = b.metadata.resource_version.clone().unwrap();
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "v"}})),
    )
    .await
    .unwrap();
    // A no-op: must not appear in the stream.
    cms.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "v"}})),
    )
    .await
    .unwrap();
    cms.delete("b", &DeleteParams::default()).await.unwrap();
    let mut stream = cms
        .watch(&WatchParams::default(), &from)
        .await
        .unwrap()
        .boxed();
    let modified = next_event(&mut stream).await;
    assert!(
        matches!(&modified, WatchEvent::Modified(o) if o.metadata.name.as_deref() == Some("a"))
    );
    let deleted = next_event(&mut stream).await;
    assert!(matches!(&deleted, WatchEvent::Deleted(o) if o.metadata.name.as_deref() == Some("b")));
    cms.create(&PostParams::default(), &cm("z")).await.unwrap();
    let added = next_event(&mut stream).await;
    assert_eq!(
        name_of(&added),
        "z",
        "the no-op patch produced no event in between"
    );
}

#[tokio::test]
async fn watch_from_a_compacted_version_gets_http_200_then_error_410() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    let a = cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    cms.create(&PostParams::default(), &cm("b")).await.unwrap();
    server.compact();
    // `watch` returning Ok means the HTTP status was 200.
    let mut stream = cms
        .watch(
            &WatchParams::default(),
            a.metadata.resource_version.as_deref().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    match next_event(&mut stream).await {
        WatchEvent::Error(status) => {
            assert_eq!(status.code, 410);
            assert_eq!(status.reason, "Expired");
            assert!(
                status.message.starts_with("too old resource version: "),
                "{}",
                status.message
            );
        }
        other => panic!("expected ERROR 410, got {other:?}"),
    }
}

#[tokio::test]
async fn watch_history_limit_expires_old_versions() {
    let server = ApiServer::builder().watch_history(3).start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    let first = cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    for name in ["b", "c", "d", "e"] {
        cms.create(&PostParams::default(), &cm(name)).await.unwrap();
    }
    let mut stream = cms
        .watch(
            &WatchParams::default(),
            first.metadata.resource_version.as_deref().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    assert!(matches!(next_event(&mut stream).await, WatchEvent::Error(s) if s.code == 410));
}

#[tokio::test]
async fn watch_label_selector_turns_leaving_objects_into_deleted() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    let mut labelled = cm("a");
    labelled.metadata.labels = Some([("app".to_string(), "web".to_string())].into());
    cms.create(&PostParams::default(), &labelled).await.unwrap();
    let mut stream = cms
        .watch(
            &WatchParams::default().labels("app=web").disable_bookmarks(),
            "0",
        )
        .await
        .unwrap()
        .boxed();
    assert!(matches!(
        next_event(&mut stream).await,
        WatchEvent::Added(_)
    ));
    cms.create(&PostParams::default(), &cm("unlabelled"))
        .await
        .unwrap();
    let relabelled = cms
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"app": "db"}}})),
        )
        .await
        .unwrap();
    // The watch cache's `convertToWatchEvent` (apiserver storage/cacher/cache_watcher.go): for
    // an object that no longer passes the filter it sends DELETED "with the previous object
    // content, but with the event's resource version".
    let WatchEvent::Deleted(left) = next_event(&mut stream).await else {
        panic!("the object leaving the selector is DELETED");
    };
    assert_eq!(left.metadata.name.as_deref(), Some("a"));
    assert_eq!(
        left.metadata
            .labels
            .unwrap_or_default()
            .get("app")
            .map(String::as_str),
        Some("web"),
        "the previous object's content"
    );
    assert_eq!(
        left.metadata.resource_version, relabelled.metadata.resource_version,
        "the resourceVersion of the change"
    );
}

/// A server sending bookmarks every 20 ms, and the ConfigMaps of `default`.
async fn bookmarking_server() -> (ApiServer, Api<ConfigMap>) {
    let server = ApiServer::builder()
        .bookmark_interval(Duration::from_millis(20))
        .start()
        .await
        .unwrap();
    let cms = Api::namespaced(server.client().unwrap(), "default");
    (server, cms)
}

#[tokio::test]
async fn watch_bookmarks_are_sent_when_allowed() {
    let (_server, cms) = bookmarking_server().await;
    let created = cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let mut stream = cms
        .watch(
            &WatchParams::default(),
            created.metadata.resource_version.as_deref().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    match next_event(&mut stream).await {
        WatchEvent::Bookmark(b) => assert_eq!(
            Some(b.metadata.resource_version),
            created.metadata.resource_version
        ),
        other => panic!("expected a bookmark, got {other:?}"),
    }
}

#[tokio::test]
async fn watch_timeout_seconds_ends_the_stream() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    let mut stream = cms
        .watch(&WatchParams::default().timeout(1).disable_bookmarks(), "0")
        .await
        .unwrap()
        .boxed();
    let end = tokio::time::timeout(DEADLINE, stream.next())
        .await
        .expect("stream ends before the deadline");
    assert!(end.is_none(), "the server closed the stream: {end:?}");
}

#[tokio::test]
async fn streaming_list_sends_initial_events_then_the_initial_events_end_bookmark() {
    let server = ApiServer::start().await.unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), "default");
    cms.create(&PostParams::default(), &cm("a")).await.unwrap();
    let mut stream = cms
        .watch(&WatchParams::streaming_lists(), "")
        .await
        .unwrap()
        .boxed();
    assert!(
        matches!(next_event(&mut stream).await, WatchEvent::Added(o) if o.metadata.name.as_deref() == Some("a"))
    );
    assert_initial_events_end(next_event(&mut stream).await);
    // kube's watcher with streaming lists sees the object and reaches InitDone.
    let cms2 = cms.clone();
    let seen = tokio::time::timeout(
        DEADLINE,
        watcher(cms2, watcher::Config::default().streaming_lists())
            .try_filter_map(
                |e| async move { Ok(matches!(e, watcher::Event::InitDone).then_some(())) },
            )
            .boxed()
            .try_next(),
    )
    .await
    .expect("InitDone before the deadline");
    assert!(matches!(seen, Ok(Some(()))));
}

#[derive(Debug, thiserror::Error)]
#[error("reconcile failed: {0}")]
struct ReconcileError(#[from] kube::Error);

#[derive(Default)]
struct Seen {
    applied: Mutex<Vec<(String, i64)>>,
    cleaned: Mutex<Vec<String>>,
}

const FINALIZER: &str = "demo.kubeward.dev/cleanup";

async fn reconcile(
    obj: Arc<DynamicObject>,
    ctx: Arc<(Api<DynamicObject>, Seen)>,
) -> Result<Action, kube::runtime::finalizer::Error<ReconcileError>> {
    let (api, seen) = &*ctx;
    let api = Api::namespaced_with(
        api.clone().into_client(),
        obj.metadata.namespace.as_deref().unwrap(),
        &rollout_resource(),
    );
    let writer = api.clone();
    finalizer(&api, FINALIZER, obj, |event| async move {
        let api = writer;
        match event {
            Finalizer::Apply(o) => {
                let name = o.metadata.name.clone().unwrap();
                let generation = o.metadata.generation.unwrap_or_default();
                api.patch_status(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"status": {"observedGeneration": generation}})),
                )
                .await?;
                seen.applied.lock().unwrap().push((name, generation));
            }
            Finalizer::Cleanup(o) => seen
                .cleaned
                .lock()
                .unwrap()
                .push(o.metadata.name.clone().unwrap()),
        }
        Ok(Action::await_change())
    })
    .await
}

fn error_policy(
    _: Arc<DynamicObject>,
    _: &kube::runtime::finalizer::Error<ReconcileError>,
    _: Arc<(Api<DynamicObject>, Seen)>,
) -> Action {
    Action::requeue(Duration::from_millis(50))
}

async fn eventually(mut check: impl FnMut() -> bool) {
    tokio::time::timeout(DEADLINE, async {
        while !check() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("condition reached before the deadline");
}

#[tokio::test]
async fn controller_with_kube_runtime_finalizer_runs_the_whole_lifecycle_and_relists_after_compaction()
 {
    let server = Arc::new(ApiServer::start().await.unwrap());
    server.install_crd(&rollout_crd(true)).unwrap();
    let client = server.client().unwrap();
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &rollout_resource());
    let ctx = Arc::new((all.clone(), Seen::default()));
    let controller = tokio::spawn(
        Controller::new_with(all, watcher::Config::default(), rollout_resource())
            .run(reconcile, error_policy, ctx.clone())
            .for_each(|_| async {}),
    );
    let api = rollouts(&client, "default");
    api.create(
        &PostParams::default(),
        &rollout("web", json!({"replicas": 1})),
    )
    .await
    .unwrap();

    let s = server.clone();
    eventually(move || {
        s.object("demo.kubeward.dev/v1", "rollouts", Some("default"), "web")
            .is_some_and(|o| {
                o["metadata"]["finalizers"] == json!([FINALIZER])
                    && o["status"]["observedGeneration"] == 1
            })
    })
    .await;

    // Compaction ends the controller's watch with ERROR 410; it must relist and see a change
    // made after the compaction.
    let lists_before = server
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && !r.is_watch() && r.path.ends_with("/rollouts"))
        .count();
    server.compact();
    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 2}})),
    )
    .await
    .unwrap();
    let s = server.clone();
    eventually(move || {
        s.object("demo.kubeward.dev/v1", "rollouts", Some("default"), "web")
            .is_some_and(|o| o["status"]["observedGeneration"] == 2)
    })
    .await;
    let lists_after = server
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && !r.is_watch() && r.path.ends_with("/rollouts"))
        .count();
    assert!(
        lists_after > lists_before,
        "the watcher relisted after ERROR 410"
    );

    api.delete("web", &DeleteParams::default()).await.unwrap();
    let s = server.clone();
    eventually(move || {
        s.object("demo.kubeward.dev/v1", "rollouts", Some("default"), "web")
            .is_none()
    })
    .await;
    assert_eq!(*ctx.1.cleaned.lock().unwrap(), ["web"]);
    assert!(
        ctx.1
            .applied
            .lock()
            .unwrap()
            .contains(&("web".to_string(), 2))
    );
    controller.abort();
}

#[tokio::test]
async fn send_initial_events_without_not_older_than_is_rejected_like_validate_list_options() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let (code, status) = apiserver_support::raw(
        &client,
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true",
        None,
        None,
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        status["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
    );
}

#[tokio::test]
async fn metadata_lists_and_watches_are_served_as_partial_object_metadata() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut with_data = cm("a");
    with_data.data = Some([("k".to_string(), "v".to_string())].into());
    cms.create(&PostParams::default(), &with_data)
        .await
        .unwrap();
    let (code, list) = apiserver_support::raw_accept(
        &client,
        "/api/v1/namespaces/default/configmaps",
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(code, 200);
    assert_eq!(list["kind"], "PartialObjectMetadataList");
    assert_eq!(list["items"][0]["kind"], "PartialObjectMetadata");
    assert!(list["items"][0].get("data").is_none(), "metadata only");
    let metas = cms.list_metadata(&Default::default()).await.unwrap();
    assert_eq!(metas.items[0].metadata.name.as_deref(), Some("a"));
    let first = tokio::time::timeout(
        DEADLINE,
        watcher(
            Api::<kube::core::PartialObjectMeta<ConfigMap>>::namespaced(client, "default"),
            watcher::Config::default(),
        )
        .try_filter_map(|e| async move {
            Ok(match e {
                watcher::Event::InitApply(o) => Some(o),
                _ => None,
            })
        })
        .boxed()
        .try_next(),
    )
    .await
    .expect("metadata watcher before the deadline")
    .unwrap()
    .unwrap();
    assert_eq!(first.metadata.name.as_deref(), Some("a"));
}

#[tokio::test]
async fn table_watches_send_one_row_tables_with_the_lists_columns_in_the_first_event_only() {
    let (server, api, _) = apiserver_support::server_of_crd_with_web(
        &apiserver_support::rollout_crd_with_columns(),
        json!({"replicas": 1}),
    )
    .await;
    let client = server.client().unwrap();
    let path = "/apis/demo.kubeward.dev/v1/namespaces/default/rollouts";
    let (code, list) =
        apiserver_support::raw_accept(&client, path, apiserver_support::KUBECTL_TABLE_ACCEPT).await;
    assert_eq!((code, list["kind"].as_str()), (200, Some("Table")));
    let names: Vec<&str> = list["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Replicas", "Age"]);
    let rv = list["metadata"]["resourceVersion"].as_str().unwrap();
    let mut events = apiserver_support::raw_watch(
        &client,
        &format!("{path}?watch=true&resourceVersion={rv}"),
        apiserver_support::KUBECTL_TABLE_ACCEPT,
    )
    .await;

    let scaled = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .unwrap();
    let WatchEvent::Modified(first) = next_event(&mut events).await else {
        panic!("MODIFIED first");
    };
    // apiserver endpoints/handlers/response.go watchEmbeddedEncoder: each event's object is the
    // table convertor's Table of that one object; headers only until one event was encoded.
    assert_eq!(first["kind"], "Table");
    assert_eq!(first["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(first["columnDefinitions"], list["columnDefinitions"]);
    assert_eq!(
        first["metadata"]["resourceVersion"].as_str(),
        scaled.metadata.resource_version.as_deref()
    );
    let row = &first["rows"][0];
    assert_eq!(first["rows"].as_array().map(Vec::len), Some(1));
    assert_eq!(row["cells"][0], "web");
    assert_eq!(row["cells"][1], 2);
    assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(row["object"]["metadata"]["name"], "web");
    assert!(
        row["object"].get("spec").is_none(),
        "includeObject=Metadata"
    );

    api.create(
        &PostParams::default(),
        &rollout("api", json!({"replicas": 3})),
    )
    .await
    .unwrap();
    let WatchEvent::Added(second) = next_event(&mut events).await else {
        panic!("ADDED second");
    };
    assert_eq!(second["kind"], "Table");
    assert_eq!(
        second["columnDefinitions"],
        json!(null),
        "no headers after the first"
    );
    assert_eq!(second["rows"][0]["cells"][0], "api");
    assert_eq!(second["rows"][0]["cells"][1], 3);

    api.delete("web", &DeleteParams::default()).await.unwrap();
    let WatchEvent::Deleted(third) = next_event(&mut events).await else {
        panic!("DELETED third");
    };
    assert_eq!(third["rows"][0]["cells"][0], "web");
}

#[tokio::test]
async fn table_watches_of_built_ins_use_their_printers_columns_and_include_object() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut settings = cm("settings");
    settings.data = Some([("mode".to_string(), "fast".to_string())].into());
    cms.create(&PostParams::default(), &settings).await.unwrap();
    let mut events = apiserver_support::raw_watch(
        &client,
        "/api/v1/namespaces/default/configmaps?watch=true&includeObject=Object",
        apiserver_support::KUBECTL_TABLE_ACCEPT,
    )
    .await;
    let WatchEvent::Added(added) = next_event(&mut events).await else {
        panic!("the current state replays as ADDED");
    };
    let names: Vec<&str> = added["columnDefinitions"]
        .as_array()
        .expect("headers in the first event")
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Data", "Age"]);
    let row = &added["rows"][0];
    assert_eq!(row["cells"][0], "settings");
    assert_eq!(row["cells"][1], 1);
    assert_eq!(row["object"]["kind"], "ConfigMap", "includeObject=Object");
    assert_eq!(row["object"]["data"]["mode"], "fast");
}

#[tokio::test]
async fn metadata_watches_get_their_bookmarks_as_partial_object_metadata_too() {
    let (_server, cms) = bookmarking_server().await;
    let mut stream = cms
        .watch_metadata(&WatchParams::default().timeout(60), "0")
        .await
        .unwrap()
        .boxed();
    // The watch encoder transforms every object it sends, bookmarks included.
    let bookmark = loop {
        if let WatchEvent::Bookmark(b) = next_event(&mut stream).await {
            break b;
        }
    };
    assert_eq!(bookmark.types.kind, "PartialObjectMetadata");
    assert_eq!(bookmark.types.api_version, "meta.k8s.io/v1");
    cms.create(&PostParams::default(), &cm("after"))
        .await
        .unwrap();
    let added = loop {
        match next_event(&mut stream).await {
            WatchEvent::Added(o) => break o,
            WatchEvent::Bookmark(_) => {}
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(added.metadata.name.as_deref(), Some("after"));
}
