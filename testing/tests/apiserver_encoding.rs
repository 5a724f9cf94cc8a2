//! What the in-process API server reads and writes besides JSON objects: `Accept` negotiation
//! (406 as `negotiation.NewNotAcceptableError` words it), query parameters decoded by the
//! parameter codec (400), protobuf request bodies, and the verbs discovery advertises.

mod apiserver_support;

use apiserver_support::{raw, raw_accept, raw_bytes, rollout_crd, server_with_web};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

const SERVED: &str = "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf";

#[tokio::test]
async fn an_unacceptable_accept_header_is_406_naming_the_served_media_types() {
    let server = ApiServer::start().await.unwrap();
    server.install_crd(&rollout_crd(true)).unwrap();
    let client = server.client().unwrap();
    // Built-ins are go-restful routes, which refuse an Accept header naming none of their
    // media types before the handler runs (as kube-apiserver answers); custom resources are
    // negotiated by their handler.
    let route = "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf";
    for (path, message) in [
        ("/api/v1/namespaces/default/configmaps", route),
        ("/api/v1/namespaces/default", route),
        (
            "/apis/demo.kubeward.dev/v1/namespaces/default/rollouts",
            SERVED,
        ),
    ] {
        let (code, status) = raw_accept(&client, path, "application/xml").await;
        assert_eq!(code, 406, "{path}: {status}");
        assert_eq!(status["reason"], "NotAcceptable");
        assert_eq!(status["message"], message);
    }
    // A watch needs a media type with a stream serializer: YAML has none.
    let (code, status) = raw_accept(
        &client,
        "/api/v1/namespaces/default/configmaps?watch=true",
        "application/yaml",
    )
    .await;
    assert_eq!(code, 406);
    assert_eq!(
        status["message"],
        "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    );
    // Nothing was decided before negotiation: the same request accepting JSON is served.
    let (code, _) = raw_accept(
        &client,
        "/api/v1/namespaces/default/configmaps",
        "application/xml, application/json;q=0.9",
    )
    .await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn tables_of_one_object_carry_its_resource_version_and_include_object_is_checked() {
    let (server, _, created) = server_with_web(json!({})).await;
    let client = server.client().unwrap();
    let path = "/apis/demo.kubeward.dev/v1/namespaces/default/rollouts/web";
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let (code, one) = raw_accept(&client, path, table).await;
    assert_eq!(code, 200);
    assert_eq!(
        one["metadata"]["resourceVersion"].as_str(),
        created.metadata.resource_version.as_deref()
    );
    let (code, status) = raw_accept(&client, &format!("{path}?includeObject=All"), table).await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")));
    assert_eq!(
        status["message"],
        "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty"
    );
}

#[tokio::test]
async fn integer_list_parameters_that_are_not_integers_are_400() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    // apiserver handlers/get.go listOpts: the parameter codec's conversion error as a
    // BadRequest (runtime.Convert_Slice_string_To_int64 -> strconv.ParseInt).
    for (query, message) in [
        (
            "limit=abc",
            "strconv.ParseInt: parsing \"abc\": invalid syntax",
        ),
        (
            "limit=99999999999999999999",
            "strconv.ParseInt: parsing \"99999999999999999999\": value out of range",
        ),
        (
            "watch=true&timeoutSeconds=soon",
            "strconv.ParseInt: parsing \"soon\": invalid syntax",
        ),
    ] {
        let (code, status) = raw(
            &client,
            "GET",
            &format!("/api/v1/namespaces/default/configmaps?{query}"),
            None,
            None,
        )
        .await;
        assert_eq!(code, 400, "{query}: {status}");
        assert_eq!(status["reason"], "BadRequest");
        assert_eq!(status["message"], message);
    }
    let (code, _) = raw(
        &client,
        "GET",
        "/api/v1/namespaces/default/configmaps?limit=1",
        None,
        None,
    )
    .await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn namespaces_do_not_serve_or_advertise_deletecollection() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let (code, core) = raw(&client, "GET", "/api/v1", None, None).await;
    assert_eq!(code, 200);
    let verbs = |plural: &str| -> Vec<String> {
        apiserver_support::discovered(&core, plural)
            .map(|r| serde_json::from_value(r["verbs"].clone()).unwrap())
            .unwrap()
    };
    // pkg/registry/core/namespace/storage implements no DeleteCollection.
    assert_eq!(
        verbs("namespaces"),
        [
            "create", "delete", "get", "list", "patch", "update", "watch"
        ]
    );
    assert!(verbs("configmaps").contains(&"deletecollection".to_string()));
    let (code, status) = raw(&client, "DELETE", "/api/v1/namespaces", None, None).await;
    assert_eq!(
        (code, status["reason"].as_str()),
        (405, Some("MethodNotAllowed"))
    );
    assert!(
        server
            .object("v1", "namespaces", None, "kube-system")
            .is_some()
    );
}

/// Protobuf wire encoding, for request bodies built by hand.
mod wire {
    fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// A length-delimited field.
    pub fn bytes(n: u64, value: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint((n << 3) | 2, &mut out);
        varint(value.len() as u64, &mut out);
        out.extend_from_slice(value);
        out
    }

    /// A varint field.
    pub fn number(n: u64, value: u64) -> Vec<u8> {
        let mut out = Vec::new();
        varint(n << 3, &mut out);
        varint(value, &mut out);
        out
    }

    /// The `k8s\0` + `runtime.Unknown` envelope.
    pub fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [bytes(1, api_version.as_bytes()), bytes(2, kind.as_bytes())].concat();
        [b"k8s\0".to_vec(), bytes(1, &type_meta), bytes(2, raw)].concat()
    }

    /// The `metadata` field (1) as gogo-protobuf writes it: every string, empty ones included.
    pub fn meta(name: &str) -> Vec<u8> {
        bytes(
            1,
            &[bytes(1, name.as_bytes()), bytes(2, b""), bytes(3, b"")].concat(),
        )
    }
}

async fn post_protobuf(server: &ApiServer, path: &str, body: Vec<u8>) -> (u16, Value) {
    raw_bytes(
        &server.client().unwrap(),
        "POST",
        path,
        Some("application/vnd.kubernetes.protobuf"),
        body,
    )
    .await
}

#[tokio::test]
async fn service_accounts_leases_and_events_accept_protobuf_bodies() {
    use wire::{bytes, envelope, meta, number};
    let server = ApiServer::start().await.unwrap();

    let sa = [meta("robot"), bytes(3, &bytes(1, b"registry"))].concat();
    let (code, created) = post_protobuf(
        &server,
        "/api/v1/namespaces/default/serviceaccounts",
        envelope("v1", "ServiceAccount", &sa),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    let stored = server
        .object("v1", "serviceaccounts", Some("default"), "robot")
        .unwrap();
    assert_eq!(stored["imagePullSecrets"], json!([{"name": "registry"}]));
    // kube-apiserver decodes the empty strings into Go zero values, which JSON omits.
    assert!(stored["metadata"].get("generateName").is_none(), "{stored}");

    // What client-go's leader election writes: MicroTimes, and pointer fields set to zero.
    let renew = [number(1, 1_767_225_600), number(2, 250_000_000)].concat();
    let spec = [
        bytes(1, b"pod-a"),
        number(2, 15),
        bytes(3, &renew),
        bytes(4, &renew),
        number(5, 0),
    ]
    .concat();
    let (code, lease) = post_protobuf(
        &server,
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        envelope(
            "coordination.k8s.io/v1",
            "Lease",
            &[meta("leader"), bytes(2, &spec)].concat(),
        ),
    )
    .await;
    assert_eq!(code, 201, "{lease}");
    assert_eq!(
        lease["spec"],
        json!({"holderIdentity": "pod-a", "leaseDurationSeconds": 15,
            "acquireTime": "2026-01-01T00:00:00.250000Z",
            "renewTime": "2026-01-01T00:00:00.250000Z", "leaseTransitions": 0})
    );

    // An events.k8s.io/v1 Event, as the new event recorder sends it.
    let regarding = [
        bytes(1, b"ServiceAccount"),
        bytes(2, b"default"),
        bytes(3, b"robot"),
        bytes(5, b"v1"),
    ]
    .concat();
    let event = [
        meta("robot.1"),
        bytes(2, &renew),
        bytes(4, b"demo.kubeward.dev/robots"),
        bytes(5, b"robots-0"),
        bytes(6, b"Sync"),
        bytes(7, b"Synced"),
        bytes(8, &regarding),
        bytes(10, b"synced the robot"),
        bytes(11, b"Normal"),
    ]
    .concat();
    let (code, created) = post_protobuf(
        &server,
        "/apis/events.k8s.io/v1/namespaces/default/events",
        envelope("events.k8s.io/v1", "Event", &event),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["regarding"]["name"], "robot");
    assert_eq!(created["note"], "synced the robot");

    // A core/v1 Event, as the legacy recorder sends it (Time keeps whole seconds).
    let first = [number(1, 1_767_225_600), number(2, 7)].concat();
    let event = [
        meta("robot.2"),
        bytes(2, &regarding),
        bytes(3, b"Synced"),
        bytes(4, b"synced again"),
        bytes(5, &bytes(1, b"robots")),
        bytes(6, &first),
        bytes(7, &first),
        number(8, 2),
        bytes(9, b"Normal"),
        bytes(10, b""),
    ]
    .concat();
    let (code, created) = post_protobuf(
        &server,
        "/api/v1/namespaces/default/events",
        envelope("v1", "Event", &event),
    )
    .await;
    assert_eq!(code, 201, "{created}");
    assert_eq!(created["lastTimestamp"], "2026-01-01T00:00:00Z");
    assert_eq!(created["count"], 2);
    assert_eq!(created["source"], json!({"component": "robots"}));
}
