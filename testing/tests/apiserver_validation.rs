//! Validation like kube-apiserver's: each invalid request goes through a real `kube::Client` (or
//! raw HTTP where kube cannot send it) and gets the code, reason, field path and message a real
//! server answers.

mod apiserver_support;

use apiserver_support::{raw, rollout, rollout_server, server_with_web};
use k8s_openapi::ByteString;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::client::Body;
use kube::core::{ObjectMeta, Status};
use kube::{Client, Resource};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};
use std::collections::BTreeMap;

const SUBDOMAIN_RULE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

async fn client() -> (ApiServer, Client) {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    (server, client)
}

/// The `Status` of a failed request.
fn status<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> Status {
    match result {
        Err(kube::Error::Api(s)) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// Asserts a 422 Invalid whose message starts `<qualified> "<name>" is invalid: ` and contains
/// `phrase`, with a cause at `field` whose `field: message` text contains `phrase`.
fn assert_invalid(s: &Status, qualified: &str, name: &str, field: &str, phrase: &str) {
    assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"), "{s:?}");
    let prefix = format!("{qualified} \"{name}\" is invalid: ");
    assert!(s.message.starts_with(&prefix), "{}", s.message);
    assert!(
        s.message.contains(phrase),
        "{:?} lacks {phrase:?}",
        s.message
    );
    let causes = &s.details.as_ref().expect("details").causes;
    assert!(
        causes
            .iter()
            .any(|c| c.field == field && format!("{}: {}", c.field, c.message).contains(phrase)),
        "no cause at {field} saying {phrase:?}: {causes:?}"
    );
}

fn named<K: Resource<DynamicType = ()> + Default>(name: &str) -> K {
    let mut k = K::default();
    k.meta_mut().name = Some(name.into());
    k
}

fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    let mut cm: ConfigMap = named(name);
    cm.data = Some(
        data.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    cm
}

/// A raw request with a body of bytes: the HTTP status and the JSON body.
async fn raw_bytes(
    client: &Client,
    method: &str,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> (u16, Value) {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(Body::from(body))
        .expect("request");
    let resp = client.send(req).await.expect("response");
    let code = resp.status().as_u16();
    let bytes = resp.into_body().collect_bytes().await.expect("body");
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn names_follow_the_kinds_rule() {
    let (_server, client) = client().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let too_long = "a".repeat(254);
    for (name, phrase) in [
        ("Web", SUBDOMAIN_RULE),
        ("a..b", SUBDOMAIN_RULE),
        ("a/b", SUBDOMAIN_RULE),
        (too_long.as_str(), "must be no more than 253 characters"),
    ] {
        let s = status(cms.create(&PostParams::default(), &named(name)).await);
        assert_invalid(
            &s,
            "ConfigMap",
            name,
            "metadata.name",
            &format!("metadata.name: Invalid value: \"{name}\": {phrase}"),
        );
    }
    // Custom resources are named by the same rule.
    let (_server, crs) = rollout_server(false).await;
    let s = status(
        crs.create(&PostParams::default(), &rollout("Web", json!({})))
            .await,
    );
    assert_invalid(
        &s,
        "Rollout.demo.kubeward.dev",
        "Web",
        "metadata.name",
        SUBDOMAIN_RULE,
    );
}

/// A name in a request path must be usable as one segment of a storage key
/// (`path.IsValidPathSegmentName`, checked by the generic registry's key functions): 400 naming
/// the name and every rule it breaks.
#[tokio::test]
async fn names_in_request_paths_are_path_segments() {
    let (_server, client) = client().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let message = r#"Name parameter invalid: "a%b": may not contain '%'"#;
    let s = status(cms.get("a%b").await);
    assert_eq!((s.code, s.reason.as_str()), (400, "BadRequest"), "{s:?}");
    assert_eq!(s.message, message);
    let s = status(cms.delete("a%b", &Default::default()).await);
    assert_eq!((s.code, s.message.as_str()), (400, message), "{s:?}");
    // Escaped, `/` and `%` stay inside the segment; `..` is a segment of its own.
    for (path, message) in [
        (
            "/api/v1/namespaces/default/configmaps/a%2F%25b",
            r#"Name parameter invalid: "a/%b": may not contain '/';may not contain '%'"#,
        ),
        (
            "/api/v1/namespaces/default/configmaps/..",
            r#"Name parameter invalid: "..": may not be '..'"#,
        ),
    ] {
        let (code, body) = raw(&client, "GET", path, None, None).await;
        assert_eq!(
            (code, body["reason"].as_str()),
            (400, Some("BadRequest")),
            "{body}"
        );
        assert_eq!(body["message"], message);
    }
    // A valid name that does not exist is still a plain 404.
    assert_eq!(status(cms.get("missing").await).code, 404);
}

#[tokio::test]
async fn namespace_names_are_dns_labels() {
    let (_server, client) = client().await;
    let nss: Api<Namespace> = Api::all(client);
    let s = status(nss.create(&PostParams::default(), &named("team.a")).await);
    assert_invalid(
        &s,
        "Namespace",
        "team.a",
        "metadata.name",
        "Invalid value: \"team.a\": must not contain dots",
    );
    let long = "n".repeat(64);
    let s = status(nss.create(&PostParams::default(), &named(&long)).await);
    assert_invalid(
        &s,
        "Namespace",
        &long,
        "metadata.name",
        "must be no more than 63 characters",
    );
    nss.create(&PostParams::default(), &named("team-a"))
        .await
        .expect("a DNS label is a valid namespace name");
}

#[tokio::test]
async fn generate_name_is_checked_as_a_prefix() {
    let (_server, client) = client().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let mut cm = ConfigMap::default();
    cm.metadata.generate_name = Some("Web-".into());
    let s = status(cms.create(&PostParams::default(), &cm).await);
    let causes = &s.details.as_ref().unwrap().causes;
    assert_eq!(
        causes.iter().map(|c| c.field.as_str()).collect::<Vec<_>>(),
        ["metadata.generateName", "metadata.name"]
    );
    assert!(
        s.message
            .contains("metadata.generateName: Invalid value: \"Web-\": a lowercase RFC 1123"),
        "{}",
        s.message
    );
    cm.metadata.generate_name = Some("web-".into());
    let created = cms.create(&PostParams::default(), &cm).await.unwrap();
    assert!(created.metadata.name.unwrap().starts_with("web-"));
}

#[tokio::test]
async fn label_keys_and_values_are_qualified_names_and_label_values() {
    let (_server, client) = client().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let mut cm: ConfigMap = named("a");
    cm.metadata.labels = Some(BTreeMap::from([("bad key".into(), "ok".into())]));
    let s = status(cms.create(&PostParams::default(), &cm).await);
    assert_invalid(
        &s,
        "ConfigMap",
        "a",
        "metadata.labels",
        "metadata.labels: Invalid value: \"bad key\": name part must consist of alphanumeric characters",
    );
    let long = "v".repeat(64);
    cm.metadata.labels = Some(BTreeMap::from([("app".into(), long.clone())]));
    let s = status(cms.create(&PostParams::default(), &cm).await);
    assert_invalid(
        &s,
        "ConfigMap",
        "a",
        "metadata.labels",
        &format!("Invalid value: \"{long}\": must be no more than 63 characters"),
    );
    // An update is held to the same rules.
    cm.metadata.labels = None;
    cms.create(&PostParams::default(), &cm).await.unwrap();
    let patch = json!({"metadata": {"labels": {"example.com/": "x"}}});
    let s = status(
        cms.patch("a", &PatchParams::default(), &Patch::Merge(&patch))
            .await,
    );
    assert_invalid(
        &s,
        "ConfigMap",
        "a",
        "metadata.labels",
        "name part must be non-empty",
    );
}

#[tokio::test]
async fn annotations_may_total_256_kib() {
    let (_server, client) = client().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let mut cm: ConfigMap = named("a");
    cm.metadata.annotations = Some(BTreeMap::from([
        ("a".into(), "x".repeat(128 * 1024)),
        ("b".into(), "x".repeat(128 * 1024)),
    ]));
    let s = status(cms.create(&PostParams::default(), &cm).await);
    assert_invalid(
        &s,
        "ConfigMap",
        "a",
        "metadata.annotations",
        "metadata.annotations: Too long: may not be more than 262144 bytes",
    );
    let s = status(
        cms.create(
            &PostParams::default(),
            &ConfigMap {
                metadata: ObjectMeta {
                    name: Some("b".into()),
                    annotations: Some(BTreeMap::from([("Bad Key".into(), String::new())])),
                    ..ObjectMeta::default()
                },
                ..ConfigMap::default()
            },
        )
        .await,
    );
    assert_invalid(
        &s,
        "ConfigMap",
        "b",
        "metadata.annotations",
        "Invalid value: \"Bad Key\": name part must consist of",
    );
}

#[tokio::test]
async fn owner_references_need_a_uid_and_at_most_one_controller() {
    let (_server, client) = client().await;
    let (code, body) = raw(
        &client,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        Some("application/json"),
        Some(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner"}]}}),
        ),
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(
        body["message"],
        "ConfigMap \"a\" is invalid: metadata.ownerReferences.uid: Invalid value: \"\": must not be empty"
    );
    assert_eq!(
        body["details"]["causes"][0]["field"],
        "metadata.ownerReferences.uid"
    );
    let controller = |name: &str| json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": name, "uid": name, "controller": true});
    let (code, body) = raw(
        &client,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        Some("application/json"),
        Some(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
            "ownerReferences": [controller("x"), controller("y")]}}),
        ),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["details"]["causes"][0]["field"],
        "metadata.ownerReferences"
    );
    let message = body["message"].as_str().unwrap();
    assert!(
        message.ends_with(
            "Only one reference can have Controller set to true. Found \"true\" in references for Deployment/x and Deployment/y"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn finalizer_names_are_qualified_names() {
    let (_server, client) = client().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let mut cm: ConfigMap = named("a");
    cm.metadata.finalizers = Some(vec!["example.com/ok".into(), "not ok".into()]);
    let s = status(cms.create(&PostParams::default(), &cm).await);
    assert_invalid(
        &s,
        "ConfigMap",
        "a",
        "metadata.finalizers",
        "metadata.finalizers: Invalid value: \"not ok\": name part must consist of",
    );
    // As kube-apiserver: the core group's ValidateObjectMeta also refuses a finalizer without
    // a `/` that is not a standard one, at its index.
    let causes = s.details.unwrap().causes;
    assert_eq!(causes.len(), 2);
    assert_eq!(causes[1].field, "metadata.finalizers[1]");
    assert_eq!(
        causes[1].message,
        "Invalid value: \"not ok\": name is neither a standard finalizer name nor is it fully qualified"
    );
}

#[tokio::test]
async fn config_map_keys_size_duplicates_and_immutability() {
    let (_server, client) = client().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let s = status(
        cms.create(
            &PostParams::default(),
            &config_map("a", &[("bad key", "v")]),
        )
        .await,
    );
    assert_invalid(
        &s,
        "ConfigMap",
        "a",
        "data[bad key]",
        "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    );
    let s = status(
        cms.create(&PostParams::default(), &config_map("a", &[("..x", "v")]))
            .await,
    );
    assert_invalid(
        &s,
        "ConfigMap",
        "a",
        "data[..x]",
        "must not start with '..'",
    );

    let mut both = config_map("a", &[("k", "v")]);
    both.binary_data = Some(BTreeMap::from([("k".into(), ByteString(b"v".to_vec()))]));
    let s = status(cms.create(&PostParams::default(), &both).await);
    assert_invalid(
        &s,
        "ConfigMap",
        "a",
        "data[k]",
        "duplicate of key present in binaryData",
    );
    // As kube-apiserver: reported once, from data's side.
    assert_eq!(s.details.as_ref().map(|d| d.causes.len()), Some(1));

    let big = "x".repeat(1024 * 1024);
    let s = status(
        cms.create(
            &PostParams::default(),
            &config_map("a", &[("a", &big), ("b", "y")]),
        )
        .await,
    );
    assert_invalid(
        &s,
        "ConfigMap",
        "a",
        "[]",
        "[]: Too long: may not be more than 1048576 bytes",
    );

    let mut frozen = config_map("frozen", &[("k", "v")]);
    frozen.immutable = Some(true);
    cms.create(&PostParams::default(), &frozen).await.unwrap();
    let patch = json!({"data": {"k": "changed"}});
    let s = status(
        cms.patch("frozen", &PatchParams::default(), &Patch::Merge(&patch))
            .await,
    );
    assert_invalid(
        &s,
        "ConfigMap",
        "frozen",
        "data",
        "data: Forbidden: field is immutable when `immutable` is set",
    );
    let patch = json!({"immutable": false});
    let s = status(
        cms.patch("frozen", &PatchParams::default(), &Patch::Merge(&patch))
            .await,
    );
    assert_invalid(
        &s,
        "ConfigMap",
        "frozen",
        "immutable",
        "immutable: Forbidden: field is immutable when `immutable` is set",
    );
    // Metadata of an immutable ConfigMap still changes.
    let patch = json!({"metadata": {"labels": {"a": "b"}}});
    cms.patch("frozen", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("labels of an immutable ConfigMap may change");
}

#[tokio::test]
async fn secrets_default_to_opaque_and_fold_string_data_into_data() {
    let (_server, client) = client().await;
    let secrets: Api<Secret> = Api::default_namespaced(client.clone());
    let mut s: Secret = named("a");
    s.data = Some(BTreeMap::from([("k".into(), ByteString(b"v".to_vec()))]));
    s.string_data = Some(BTreeMap::from([
        ("plain".into(), "text".into()),
        ("k".into(), "wins".into()),
    ]));
    let created = secrets.create(&PostParams::default(), &s).await.unwrap();
    assert_eq!(created.type_.as_deref(), Some("Opaque"));
    assert!(created.string_data.is_none());
    let data = created.data.unwrap();
    assert_eq!(data["plain"].0, b"text");
    assert_eq!(data["k"].0, b"wins", "stringData overrides data");

    // kube cannot send bad base64: a raw body can.
    let (code, body) = raw(
        &client,
        "POST",
        "/api/v1/namespaces/default/secrets",
        Some("application/json"),
        Some(
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "b"},
            "data": {"k": "not base64!"}}),
        ),
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));
    assert_eq!(
        body["message"],
        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3"
    );
}

#[tokio::test]
async fn typed_secrets_need_their_keys_and_keep_their_type() {
    let (_server, client) = client().await;
    let secrets: Api<Secret> = Api::default_namespaced(client);
    let mut tls: Secret = named("tls");
    tls.type_ = Some("kubernetes.io/tls".into());
    tls.data = Some(BTreeMap::from([(
        "tls.crt".into(),
        ByteString(b"cert".to_vec()),
    )]));
    let s = status(secrets.create(&PostParams::default(), &tls).await);
    assert_invalid(
        &s,
        "Secret",
        "tls",
        "data[tls.key]",
        "data[tls.key]: Required value",
    );
    let mut auth: Secret = named("auth");
    auth.type_ = Some("kubernetes.io/basic-auth".into());
    let s = status(secrets.create(&PostParams::default(), &auth).await);
    assert_invalid(&s, "Secret", "auth", "data[username]", "Required value");
    assert_invalid(&s, "Secret", "auth", "data[password]", "Required value");

    let mut frozen: Secret = named("frozen");
    frozen.immutable = Some(true);
    frozen.data = Some(BTreeMap::from([("k".into(), ByteString(b"v".to_vec()))]));
    secrets
        .create(&PostParams::default(), &frozen)
        .await
        .unwrap();
    let patch = json!({"type": "kubernetes.io/ssh-auth", "data": {"k": "dzI="}});
    let s = status(
        secrets
            .patch("frozen", &PatchParams::default(), &Patch::Merge(&patch))
            .await,
    );
    assert_invalid(
        &s,
        "Secret",
        "frozen",
        "type",
        "type: Invalid value: \"kubernetes.io/ssh-auth\": field is immutable",
    );
    assert_invalid(
        &s,
        "Secret",
        "frozen",
        "data",
        "data: Forbidden: field is immutable when `immutable` is set",
    );
}

#[tokio::test]
async fn lease_durations_are_positive_and_times_parse() {
    let (_server, client) = client().await;
    let leases: Api<Lease> = Api::default_namespaced(client.clone());
    let mut lease: Lease = named("leader");
    lease.spec = Some(k8s_openapi::api::coordination::v1::LeaseSpec {
        lease_duration_seconds: Some(0),
        lease_transitions: Some(-1),
        ..Default::default()
    });
    let s = status(leases.create(&PostParams::default(), &lease).await);
    assert_invalid(
        &s,
        "Lease.coordination.k8s.io",
        "leader",
        "spec.leaseDurationSeconds",
        "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0",
    );
    assert_invalid(
        &s,
        "Lease.coordination.k8s.io",
        "leader",
        "spec.leaseTransitions",
        "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0",
    );
    let (code, body) = raw(
        &client,
        "POST",
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        Some("application/json"),
        Some(
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "leader"}, "spec": {"renewTime": "yesterday"}}),
        ),
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "Lease in version \"v1\" cannot be handled as a Lease: parsing time \"yesterday\""
        ),
        "{message}"
    );
}

/// A PUT of a custom resource or of a CustomResourceDefinition (or of their status) without a
/// resourceVersion, or with `0`, is the generic store's 422, whose value is the parsed
/// resourceVersion, a `uint64` that kube-apiserver 1.34's `field.Error` renders as JSON: `0`
/// (1.33 and older printed `0x0`).
#[tokio::test]
async fn custom_resource_and_definition_puts_must_name_a_resource_version() {
    let (server, api, created) = server_with_web(json!({"replicas": 1})).await;
    let assert_unspecified = |s: Status, plural: &str, group: &str, name: &str| {
        assert_eq!((s.code, s.reason.as_str()), (422, "Invalid"), "{s:?}");
        assert_eq!(
            s.message,
            format!(
                "{plural}.{group} \"{name}\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"
            )
        );
        let details = s.details.unwrap();
        assert_eq!(
            (details.kind.as_str(), details.group.as_str()),
            (plural, group)
        );
        assert_eq!(details.causes.len(), 1);
        assert_eq!(details.causes[0].field, "metadata.resourceVersion");
        assert_eq!(details.causes[0].reason, "FieldValueInvalid");
        assert_eq!(
            details.causes[0].message,
            "Invalid value: 0: must be specified for an update"
        );
    };
    for rv in [None, Some("0")] {
        let mut unconditional = created.clone();
        unconditional.metadata.resource_version = rv.map(str::to_owned);
        unconditional.data["spec"]["replicas"] = json!(2);
        for s in [
            status(
                api.replace("web", &PostParams::default(), &unconditional)
                    .await,
            ),
            status(
                api.replace_status("web", &PostParams::default(), &unconditional)
                    .await,
            ),
        ] {
            assert_unspecified(s, "rollouts", "demo.kubeward.dev", "web");
        }
    }
    let crds: Api<CustomResourceDefinition> = Api::all(server.client().unwrap());
    let crd_name = "rollouts.demo.kubeward.dev";
    let mut crd = crds.get(crd_name).await.unwrap();
    crd.metadata.resource_version = None;
    for s in [
        status(crds.replace(crd_name, &PostParams::default(), &crd).await),
        status(
            crds.replace_status(crd_name, &PostParams::default(), &crd)
                .await,
        ),
    ] {
        assert_unspecified(
            s,
            "customresourcedefinitions",
            "apiextensions.k8s.io",
            crd_name,
        );
    }
    // Built-ins allow unconditional updates, and `0` is no resourceVersion.
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().unwrap());
    cms.create(&PostParams::default(), &config_map("c", &[]))
        .await
        .unwrap();
    cms.replace("c", &PostParams::default(), &config_map("c", &[("k", "v")]))
        .await
        .expect("a ConfigMap PUT without resourceVersion is unconditional");
    let mut zero = config_map("c", &[("k", "w")]);
    zero.metadata.resource_version = Some("0".into());
    cms.replace("c", &PostParams::default(), &zero)
        .await
        .expect("a ConfigMap PUT with resourceVersion 0 is unconditional");
}

#[tokio::test]
async fn a_put_of_a_missing_event_creates_it() {
    let (_server, client) = client().await;
    let event = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "web.1", "namespace": "default"},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
        "action": "Sync", "reason": "Synced", "type": "Normal", "note": "synced",
        "regarding": {"kind": "ConfigMap", "namespace": "default", "name": "c", "apiVersion": "v1"},
    });
    let (code, body) = raw(
        &client,
        "PUT",
        "/apis/events.k8s.io/v1/namespaces/default/events/web.1",
        Some("application/json"),
        Some(event),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let events: Api<Event> = Api::default_namespaced(client.clone());
    let stored = events.get("web.1").await.unwrap();
    assert_eq!(stored.reason.as_deref(), Some("Synced"));
    // Other kinds do not create on update.
    let cms: Api<ConfigMap> = Api::default_namespaced(client);
    let s = status(
        cms.replace("nope", &PostParams::default(), &config_map("nope", &[]))
            .await,
    );
    assert_eq!((s.code, s.reason.as_str()), (404, "NotFound"));
}

#[tokio::test]
async fn bodies_over_3_mib_are_413() {
    let (_server, client) = client().await;
    let big = "x".repeat(3 * 1024 * 1024);
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
        "data": {"a": big}});
    let (code, body) = raw(
        &client,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        Some("application/json"),
        Some(body),
    )
    .await;
    assert_eq!(code, 413);
    assert_eq!(body["reason"], "RequestEntityTooLarge");
    assert_eq!(
        body["message"],
        "Request entity too large: limit is 3145728"
    );
}

#[tokio::test]
async fn yaml_bodies_create_update_and_apply() {
    let (_server, client) = client().await;
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n";
    let (code, body) = raw_bytes(
        &client,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/yaml",
        yaml.into(),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = raw_bytes(
        &client,
        "PUT",
        "/api/v1/namespaces/default/configmaps/from-yaml",
        "application/yaml",
        yaml.replace("k: v", "k: w").into(),
    )
    .await;
    assert_eq!((code, body["data"]["k"].as_str()), (200, Some("w")));
    let apply = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v\n";
    let (code, body) = raw_bytes(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/configmaps/applied?fieldManager=yaml-test",
        "application/apply-patch+yaml",
        apply.into(),
    )
    .await;
    assert_eq!(
        (code, body["data"]["k"].as_str()),
        (201, Some("v")),
        "{body}"
    );
    let (code, body) = raw_bytes(
        &client,
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/yaml",
        b"metadata: [unclosed".to_vec(),
    )
    .await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")));
}

#[tokio::test]
async fn the_remaining_secret_types_lease_holder_and_metadata_rules() {
    let (_server, client) = client().await;
    let post = |path: &'static str, body: Value| {
        let client = client.clone();
        async move { raw(&client, "POST", path, Some("application/json"), Some(body)).await }
    };
    let secret = |name: &str, secret_type: &str| json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "type": secret_type});
    let secrets = "/api/v1/namespaces/default/secrets";
    for (name, secret_type, field) in [
        (
            "sa",
            "kubernetes.io/service-account-token",
            "metadata.annotations[kubernetes.io/service-account.name]",
        ),
        ("ssh", "kubernetes.io/ssh-auth", "data[ssh-privatekey]"),
        (
            "pull",
            "kubernetes.io/dockerconfigjson",
            "data[.dockerconfigjson]",
        ),
        ("cfg", "kubernetes.io/dockercfg", "data[.dockercfg]"),
    ] {
        let (code, body) = post(secrets, secret(name, secret_type)).await;
        assert_eq!(code, 422, "{body}");
        assert_eq!(
            body["message"],
            format!("Secret \"{name}\" is invalid: {field}: Required value")
        );
        assert_eq!(body["details"]["causes"][0]["field"], field);
    }

    let (code, body) = post(
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
        json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "l"}, "spec": {"preferredHolder": "b"}}),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Lease.coordination.k8s.io \"l\" is invalid: spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"
    );

    let configmaps = "/api/v1/namespaces/default/configmaps";
    let (code, body) = post(
        configmaps,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}]}}),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "ConfigMap \"a\" is invalid: metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"e\",\"uid\":\"u\"}: /v1, Kind=Event is disallowed from being an owner"
    );

    let (code, body) = post(
        configmaps,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
            "finalizers": ["orphan", "foregroundDeletion"]}}),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "ConfigMap \"a\" is invalid: metadata.finalizers: Invalid value: [\"orphan\",\"foregroundDeletion\"]: finalizer orphan and foregroundDeletion cannot be both set"
    );
}
