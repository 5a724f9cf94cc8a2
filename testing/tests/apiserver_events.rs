//! Events in the in-process API server: one store served as events.k8s.io/v1 and core/v1,
//! validation, the field selectors `kubectl describe` uses, and the TTL.

mod apiserver_support;

use std::sync::Arc;
use std::time::Duration;

use apiserver_support::raw;
use k8s_openapi::api::core::v1::Event as CoreEvent;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kubeward_names::clock::ManualClock;
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

fn event_json(name: &str, object: &str, reason: &str, ty: &str) -> Value {
    json!({
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "demo.kubeward.dev/rollouts",
        "reportingInstance": "rollouts-0",
        "action": "Reconcile",
        "reason": reason,
        "type": ty,
        "note": format!("{reason} happened"),
        "regarding": {"apiVersion": "demo.kubeward.dev/v1", "kind": "Rollout", "namespace": "default", "name": object, "uid": format!("uid-{object}")},
    })
}

fn event(name: &str, object: &str, reason: &str, ty: &str) -> Event {
    serde_json::from_value(event_json(name, object, reason, ty)).unwrap()
}

#[tokio::test]
async fn events_created_as_events_k8s_io_are_listed_through_core_v1_with_the_field_mapping() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    events
        .create(
            &PostParams::default(),
            &event("e1", "web", "Started", "Normal"),
        )
        .await
        .unwrap();
    let core: Api<CoreEvent> = Api::namespaced(client, "default");
    let got = core.get("e1").await.unwrap();
    let stored = server.objects("v1", "events", Some("default"));
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0]["involvedObject"]["name"], "web");
    assert!(server.objects("v1", "nonsense", None).is_empty());
    assert_eq!(got.involved_object.name.as_deref(), Some("web"));
    assert_eq!(got.involved_object.kind.as_deref(), Some("Rollout"));
    assert_eq!(got.message.as_deref(), Some("Started happened"));
    assert_eq!(
        got.reporting_component.as_deref(),
        Some("demo.kubeward.dev/rollouts")
    );
    assert_eq!(got.type_.as_deref(), Some("Normal"));
}

#[tokio::test]
async fn core_v1_field_selectors_of_kubectl_describe_filter_events() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    events
        .create(
            &PostParams::default(),
            &event("e1", "web", "Started", "Normal"),
        )
        .await
        .unwrap();
    events
        .create(
            &PostParams::default(),
            &event("e2", "web", "Failed", "Warning"),
        )
        .await
        .unwrap();
    events
        .create(
            &PostParams::default(),
            &event("e3", "api", "Started", "Normal"),
        )
        .await
        .unwrap();
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let names = |l: kube::core::ObjectList<CoreEvent>| {
        l.items
            .into_iter()
            .map(|e| e.metadata.name.unwrap())
            .collect::<Vec<_>>()
    };
    let describe = ListParams::default().fields("involvedObject.name=web,involvedObject.namespace=default,involvedObject.kind=Rollout,involvedObject.uid=uid-web");
    assert_eq!(names(core.list(&describe).await.unwrap()), ["e1", "e2"]);
    assert_eq!(
        names(
            core.list(&ListParams::default().fields("type=Warning"))
                .await
                .unwrap()
        ),
        ["e2"]
    );
    assert_eq!(
        names(
            core.list(&ListParams::default().fields("reason=Started"))
                .await
                .unwrap()
        ),
        ["e1", "e3"]
    );
    let v1_regarding = events
        .list(&ListParams::default().fields("regarding.name=api"))
        .await
        .unwrap();
    assert_eq!(v1_regarding.items.len(), 1);
    let err = core
        .list(&ListParams::default().fields("note=x"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(s) if s.code == 400 && s.message == "field label not supported: note")
    );
}

#[tokio::test]
async fn invalid_events_are_rejected_with_422_and_causes() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let mut bad = event_json("e1", "web", "Started", "Normal");
    bad.as_object_mut().unwrap().remove("eventTime");
    let (code, body) = raw(
        &client,
        "POST",
        "/apis/events.k8s.io/v1/namespaces/default/events",
        Some("application/json"),
        Some(bad),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(body["reason"], "Invalid");
    // kube-apiserver serves events.k8s.io from the core Event storage, whose errors name the
    // kind without its group (checked against the real server by the differential corpus).
    assert_eq!(
        body["message"],
        "Event \"e1\" is invalid: eventTime: Required value"
    );
    assert_eq!(
        body["details"]["causes"],
        json!([{"reason": "FieldValueRequired", "message": "Required value", "field": "eventTime"}])
    );
    assert_eq!(body["details"]["kind"], "Event");
    assert_eq!(body["details"].get("group"), None, "{body}");
}

#[tokio::test]
async fn the_note_of_an_event_is_immutable_but_its_series_may_change() {
    let server = ApiServer::start().await.unwrap();
    let events: Api<Event> = Api::namespaced(server.client().unwrap(), "default");
    events
        .create(
            &PostParams::default(),
            &event("e1", "web", "Started", "Normal"),
        )
        .await
        .unwrap();
    let series = json!({"series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}});
    let updated = events
        .patch("e1", &PatchParams::default(), &Patch::Merge(series))
        .await
        .unwrap();
    assert_eq!(updated.series.map(|s| s.count), Some(2));
    let err = events
        .patch(
            "e1",
            &PatchParams::default(),
            &Patch::Merge(json!({"note": "changed"})),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(s) if s.code == 422),
        "note is immutable"
    );
}

#[tokio::test]
async fn events_expire_after_the_ttl_which_every_write_re_arms() {
    let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
    let server = ApiServer::builder()
        .clock(Arc::new(clock.clone()))
        .start()
        .await
        .unwrap();
    let events: Api<Event> = Api::namespaced(server.client().unwrap(), "default");
    events
        .create(
            &PostParams::default(),
            &event("e1", "web", "Started", "Normal"),
        )
        .await
        .unwrap();
    clock.advance(Duration::from_secs(40 * 60));
    let series = json!({"series": {"count": 2, "lastObservedTime": "2026-01-01T00:40:00.000000Z"}});
    events
        .patch("e1", &PatchParams::default(), &Patch::Merge(series))
        .await
        .unwrap();
    clock.advance(Duration::from_secs(40 * 60));
    assert!(
        events.get_opt("e1").await.unwrap().is_some(),
        "80 minutes after creation but 40 after the last write"
    );
    clock.advance(Duration::from_secs(21 * 60));
    assert!(
        events.get_opt("e1").await.unwrap().is_none(),
        "gone an hour after the last write"
    );
    let series = json!({"series": {"count": 3, "lastObservedTime": "2026-01-01T01:41:00.000000Z"}});
    let err = events
        .patch("e1", &PatchParams::default(), &Patch::Merge(series))
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(s) if s.code == 404 && s.message == "events.events.k8s.io \"e1\" not found")
    );
}

#[tokio::test]
async fn event_ttl_is_configurable() {
    let clock = ManualClock::new("2026-01-01T00:00:00Z".parse().unwrap());
    let server = ApiServer::builder()
        .clock(Arc::new(clock.clone()))
        .event_ttl(Duration::from_secs(60))
        .start()
        .await
        .unwrap();
    let core: Api<CoreEvent> = Api::namespaced(server.client().unwrap(), "default");
    let events: Api<Event> = Api::namespaced(server.client().unwrap(), "default");
    events
        .create(
            &PostParams::default(),
            &event("e1", "web", "Started", "Normal"),
        )
        .await
        .unwrap();
    clock.advance(Duration::from_secs(61));
    assert!(
        core.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn events_created_through_core_v1_are_served_as_events_k8s_io() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let legacy: CoreEvent = serde_json::from_value(json!({
        "metadata": {"name": "legacy", "namespace": "default"},
        "involvedObject": {"kind": "ConfigMap", "namespace": "default", "name": "cm"},
        "reason": "Updated", "message": "the config changed", "type": "Normal",
        "source": {"component": "old-controller"},
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z", "count": 1,
    }))
    .unwrap();
    let created = core.create(&PostParams::default(), &legacy).await.unwrap();
    let events: Api<Event> = Api::namespaced(client, "default");
    let v1 = events.get("legacy").await.unwrap();
    assert_eq!(
        v1.regarding.as_ref().and_then(|r| r.name.as_deref()),
        Some("cm")
    );
    assert_eq!(v1.note.as_deref(), Some("the config changed"));
    assert_eq!(
        v1.metadata.resource_version, created.metadata.resource_version,
        "one object, two views"
    );
    let by_source = core
        .list(&ListParams::default().fields("source=old-controller"))
        .await
        .unwrap();
    assert_eq!(by_source.items.len(), 1);
    // A write through core/v1 that changes nothing is a no-op in the shared store.
    let same = core
        .replace("legacy", &PostParams::default(), &created)
        .await
        .unwrap();
    assert_eq!(
        same.metadata.resource_version,
        created.metadata.resource_version
    );
}

#[tokio::test]
async fn kube_runtime_recorder_creates_then_counts_a_series() {
    use k8s_openapi::api::core::v1::ObjectReference;
    use kube::runtime::events::{Event as RecorderEvent, EventType, Recorder, Reporter};
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "demo.kubeward.dev/rollouts".into(),
            instance: None,
        },
    );
    let reference = ObjectReference {
        api_version: Some("demo.kubeward.dev/v1".into()),
        kind: Some("Rollout".into()),
        name: Some("web".into()),
        namespace: Some("default".into()),
        uid: Some("uid-web".into()),
        ..Default::default()
    };
    let ev = RecorderEvent {
        type_: EventType::Warning,
        reason: "DeployFailed".into(),
        note: Some("image pull failed".into()),
        action: "Deploy".into(),
        secondary: None,
    };
    for _ in 0..3 {
        recorder.publish(&ev, &reference).await.unwrap();
    }
    let events: Api<Event> = Api::namespaced(client, "default");
    let list = events.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].series.as_ref().map(|s| s.count), Some(3));
}
