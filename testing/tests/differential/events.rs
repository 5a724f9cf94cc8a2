//! Events in both APIs: create validation of `events.k8s.io/v1` and core `v1` events (required
//! fields, series, reporting controller and instance, `eventTime` spellings, note length,
//! type), one API's event read through the other (the conversion), and field selectors.

use http::Method;
use serde_json::{Value, json};

use crate::corpus::{Case, Step, encode, get, merge, post, put, step};

const NEW_EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/NS/events";
const CORE_EVENTS: &str = "/api/v1/namespaces/NS/events";

/// A valid events.k8s.io/v1 Event named `name`, with `extra` merged into it (a `null` removes
/// a field).
fn new_event(name: &str, extra: Value) -> Value {
    let mut event = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name},
        "eventTime": "2024-05-01T10:00:00.000000Z",
        "reportingController": "example.com/controller",
        "reportingInstance": "controller-1",
        "action": "Reconcile", "reason": "Synced", "type": "Normal", "note": "all good",
        "regarding": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "NS", "name": "a", "uid": "11111111-2222-3333-4444-555555555555"},
    });
    merge(&mut event, extra);
    drop_nulls(&mut event);
    event
}

/// A valid core v1 Event named `name`, the way client-go's recorder writes one, with `extra`
/// merged (a `null` removes a field).
fn core_event(name: &str, extra: Value) -> Value {
    let mut event = json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "NS", "name": "a", "uid": "11111111-2222-3333-4444-555555555555"},
        "reason": "Synced", "message": "all good", "type": "Normal",
        "source": {"component": "example-controller", "host": "node-1"},
        "firstTimestamp": "2024-05-01T10:00:00Z", "lastTimestamp": "2024-05-01T10:00:05Z",
        "count": 2,
    });
    merge(&mut event, extra);
    drop_nulls(&mut event);
    event
}

fn drop_nulls(value: &mut Value) {
    if let Value::Object(map) = value {
        map.retain(|_, v| !v.is_null());
        map.values_mut().for_each(drop_nulls);
    }
}

fn create_new(name: &str, extra: Value) -> Step {
    post(NEW_EVENTS, new_event(name, extra))
}

fn create_core(name: &str, extra: Value) -> Step {
    post(CORE_EVENTS, core_event(name, extra))
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // events.k8s.io/v1 creates.
    for (label, extra) in [
        ("valid", json!({})),
        ("no eventTime", json!({"eventTime": null})),
        (
            "eventTime without fraction",
            json!({"eventTime": "2024-05-01T10:00:00Z"}),
        ),
        (
            "eventTime with 3 digits",
            json!({"eventTime": "2024-05-01T10:00:00.123Z"}),
        ),
        (
            "eventTime with 9 digits",
            json!({"eventTime": "2024-05-01T10:00:00.123456789Z"}),
        ),
        (
            "eventTime with an offset",
            json!({"eventTime": "2024-05-01T12:00:00.000000+02:00"}),
        ),
        ("eventTime a number", json!({"eventTime": 1714557600})),
        ("eventTime garbage", json!({"eventTime": "yesterday"})),
        (
            "no reportingController",
            json!({"reportingController": null}),
        ),
        (
            "reportingController not qualified",
            json!({"reportingController": "not a name"}),
        ),
        ("no reportingInstance", json!({"reportingInstance": null})),
        (
            "reportingInstance too long",
            json!({"reportingInstance": "i".repeat(129)}),
        ),
        ("no action", json!({"action": null})),
        ("action too long", json!({"action": "a".repeat(129)})),
        ("no reason", json!({"reason": null})),
        ("reason too long", json!({"reason": "r".repeat(129)})),
        ("note at the limit", json!({"note": "n".repeat(1024)})),
        ("note too long", json!({"note": "n".repeat(1025)})),
        ("no note", json!({"note": null})),
        ("type Warning", json!({"type": "Warning"})),
        ("type unknown", json!({"type": "Info"})),
        ("no type", json!({"type": null})),
        ("no regarding", json!({"regarding": null})),
        (
            "regarding in another namespace",
            json!({"regarding": {"namespace": "elsewhere"}}),
        ),
        (
            "regarding without namespace",
            json!({"regarding": {"namespace": null}}),
        ),
        (
            "series",
            json!({"series": {"count": 2, "lastObservedTime": "2024-05-01T10:00:05.000000Z"}}),
        ),
        (
            "series count 1",
            json!({"series": {"count": 1, "lastObservedTime": "2024-05-01T10:00:05.000000Z"}}),
        ),
        (
            "series without lastObservedTime",
            json!({"series": {"count": 3}}),
        ),
        (
            "series without count",
            json!({"series": {"lastObservedTime": "2024-05-01T10:00:05.000000Z"}}),
        ),
        ("deprecatedCount set", json!({"deprecatedCount": 3})),
        (
            "deprecatedSource set",
            json!({"deprecatedSource": {"component": "x"}}),
        ),
        (
            "deprecatedFirstTimestamp set",
            json!({"deprecatedFirstTimestamp": "2024-05-01T10:00:00Z"}),
        ),
        (
            "related",
            json!({"related": {"apiVersion": "v1", "kind": "Secret", "namespace": "NS", "name": "s"}}),
        ),
        (
            "count a string",
            json!({"series": {"count": "2", "lastObservedTime": "2024-05-01T10:00:05.000000Z"}}),
        ),
        ("unknown field", json!({"spec": {"x": 1}})),
    ] {
        cases.push(Case::new(
            format!("events.k8s.io create: {label}"),
            vec![create_new("e", extra)],
        ));
    }
    // core v1 creates.
    for (label, extra) in [
        ("valid", json!({})),
        (
            "minimal",
            json!({"involvedObject": {"uid": null, "apiVersion": null}, "source": null, "firstTimestamp": null, "lastTimestamp": null, "count": null, "type": null}),
        ),
        (
            "no involvedObject namespace",
            json!({"involvedObject": {"namespace": null}}),
        ),
        (
            "involvedObject in another namespace",
            json!({"involvedObject": {"namespace": "elsewhere"}}),
        ),
        ("no reason", json!({"reason": null})),
        ("type unknown", json!({"type": "Info"})),
        ("message too long", json!({"message": "m".repeat(1025)})),
        (
            "timestamp with an offset",
            json!({"firstTimestamp": "2024-05-01T12:00:00+02:00"}),
        ),
        (
            "timestamp with a fraction",
            json!({"lastTimestamp": "2024-05-01T10:00:05.5Z"}),
        ),
        ("timestamp garbage", json!({"firstTimestamp": "now"})),
        ("count a string", json!({"count": "2"})),
        (
            "with eventTime and reporting fields",
            json!({"eventTime": "2024-05-01T10:00:00.000000Z", "reportingComponent": "example.com/ctl", "reportingInstance": "i-1", "action": "Sync"}),
        ),
        (
            "with eventTime, no reportingComponent",
            json!({"eventTime": "2024-05-01T10:00:00.000000Z", "reportingInstance": "i-1", "action": "Sync"}),
        ),
        (
            "with eventTime, no action",
            json!({"eventTime": "2024-05-01T10:00:00.000000Z", "reportingComponent": "example.com/ctl", "reportingInstance": "i-1"}),
        ),
        (
            "series",
            json!({"eventTime": "2024-05-01T10:00:00.000000Z", "reportingComponent": "example.com/ctl", "reportingInstance": "i-1", "action": "Sync", "series": {"count": 2, "lastObservedTime": "2024-05-01T10:00:05.000000Z"}}),
        ),
        ("no name", json!({"metadata": {"name": null}})),
        (
            "generateName",
            json!({"metadata": {"name": null, "generateName": "a."}}),
        ),
    ] {
        cases.push(Case::new(
            format!("core event create: {label}"),
            vec![create_core("e", extra)],
        ));
    }
    // One API's event read through the other.
    cases.push(Case::new(
        "events mapping: new read as core",
        vec![
            create_new(
                "e",
                json!({"series": {"count": 2, "lastObservedTime": "2024-05-01T10:00:05.000000Z"}}),
            ),
            get(format!("{CORE_EVENTS}/e")),
        ],
    ));
    cases.push(Case::new(
        "events mapping: core read as new",
        vec![create_core("e", json!({})), get(format!("{NEW_EVENTS}/e"))],
    ));
    cases.push(Case::new(
        "events mapping: core list read as new",
        vec![
            create_core("e1", json!({})),
            create_new("e2", json!({})),
            get(NEW_EVENTS),
            get(CORE_EVENTS),
        ],
    ));
    cases.push(Case::new(
        "events mapping: update through the other API",
        vec![
            create_core("e", json!({})),
            step(
                Method::PATCH,
                format!("{NEW_EVENTS}/e"),
                Some(json!({"note": "changed", "deprecatedCount": 3})),
            )
            .header("Content-Type", "application/merge-patch+json"),
        ],
    ));
    cases.push(Case::new(
        "events mapping: update of a new event's note",
        vec![
            create_new("e", json!({})),
            Step {
                content_type: "application/merge-patch+json",
                ..step(
                    Method::PATCH,
                    format!("{NEW_EVENTS}/e"),
                    Some(json!({"note": "changed", "reason": "Other"})),
                )
            },
        ],
    ));
    cases.push(Case::new(
        "events: put of a missing event creates it",
        vec![put(format!("{CORE_EVENTS}/e"), core_event("e", json!({})))],
    ));
    // Field selectors.
    for selector in [
        "involvedObject.name=a",
        "involvedObject.name=b",
        "involvedObject.kind=ConfigMap",
        "involvedObject.namespace=NS",
        "involvedObject.uid=11111111-2222-3333-4444-555555555555",
        "involvedObject.apiVersion=v1",
        "involvedObject.fieldPath=",
        "involvedObject.resourceVersion=",
        "reason=Synced",
        "reason!=Synced",
        "type=Warning",
        "source=example-controller",
        "reportingComponent=",
        "metadata.name=e2",
        "involvedObject.name=a,type=Normal",
        "message=all good",
        "count=2",
    ] {
        for (api, path) in [("core", CORE_EVENTS), ("events.k8s.io", NEW_EVENTS)] {
            cases.push(Case::new(
                format!("events fieldSelector ({api}) {selector}"),
                vec![
                    create_core("e1", json!({})),
                    create_core("e2", json!({"involvedObject": {"name": "b"}, "type": "Warning", "reason": "Failed"})),
                    get(format!("{path}?fieldSelector={}", encode(selector))),
                ],
            ));
        }
    }
    for selector in ["regarding.name=a", "reportingController=", "note=all good"] {
        cases.push(Case::new(
            format!("events fieldSelector (events.k8s.io) {selector}"),
            vec![
                create_core("e1", json!({})),
                get(format!("{NEW_EVENTS}?fieldSelector={}", encode(selector))),
            ],
        ));
    }
    cases
}
