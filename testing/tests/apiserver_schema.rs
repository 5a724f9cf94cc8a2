//! A CRD's structural schema enforced on its custom resources, as kube-apiserver does: value
//! validation with kube-openapi's messages, list types, defaults, pruning with `fieldValidation`,
//! and `x-kubernetes-validations` CEL rules. Every request goes through a real `kube::Client`.

#![recursion_limit = "256"]

mod apiserver_support;

use std::collections::BTreeSet;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube::{Client, client::Body};
use kubeward_testing::ApiServer;
use serde_json::{Value, json};

const WIDGETS: &str = "/apis/schema.kubeward.dev/v1/namespaces/default/widgets";

/// The CRD under test: every schema rule the server enforces, on `spec` and `status`.
fn widget_crd(spec_rules: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.schema.kubeward.dev"},
        "spec": {
            "group": "schema.kubeward.dev",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "required": ["size"],
                            "x-kubernetes-validations": spec_rules,
                            "properties": {
                                "size": {"type": "string", "enum": ["small", "large"]},
                                "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                                "minReplicas": {"type": "integer", "minimum": 0, "default": 1},
                                "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true,
                                          "maximum": 1, "exclusiveMaximum": true},
                                "step": {"type": "integer", "multipleOf": 5},
                                "name": {"type": "string", "minLength": 3, "maxLength": 8, "pattern": "^[a-z]+$"},
                                "id": {"type": "string", "format": "uuid"},
                                "address": {"type": "string", "format": "ipv4"},
                                "since": {"type": "string", "format": "date-time"},
                                "port": {"x-kubernetes-int-or-string": true},
                                "note": {"type": "string", "nullable": true},
                                "tags": {"type": "array", "maxItems": 3, "x-kubernetes-list-type": "set",
                                         "items": {"type": "string"}},
                                "aliases": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                                          "x-kubernetes-list-map-keys": ["name"],
                                          "items": {"type": "object", "required": ["name"], "properties": {
                                              "name": {"type": "string"},
                                              "port": {"type": "integer", "default": 80},
                                              "protocol": {"type": "string",
                                                  "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "protocol is immutable"}]},
                                          }}},
                                "labels": {"type": "object", "maxProperties": 2,
                                           "additionalProperties": {"type": "string"}},
                                "selector": {"type": "object", "minProperties": 1,
                                             "additionalProperties": {"type": "string"}},
                                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                                "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                             "properties": {"data": {"type": "string"}}},
                                "mode": {"type": "string",
                                         "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "mode is immutable"}]},
                                "limit": {"type": "integer",
                                          "x-kubernetes-validations": [{"rule": "self >= 0",
                                              "messageExpression": "'limit must be non-negative, got ' + string(self)"}]},
                            },
                        },
                        "status": {
                            "type": "object",
                            "properties": {
                                "phase": {"type": "string", "enum": ["Pending", "Ready"]},
                                "observed": {"type": "integer", "minimum": 0},
                            },
                        },
                    },
                }},
            }],
        },
    })
}

fn default_rules() -> Value {
    json!([
        {"rule": "self.minReplicas <= self.replicas", "message": "minReplicas must not exceed replicas"},
        {"rule": "self.size == 'large' || self.replicas <= 5", "fieldPath": ".replicas",
         "reason": "FieldValueForbidden", "message": "small widgets have at most 5 replicas"},
    ])
}

/// A server with the widget CRD installed through its API, and a client.
async fn server_with(spec_rules: Value) -> (ApiServer, Client) {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let crd: CustomResourceDefinition =
        serde_json::from_value(widget_crd(spec_rules)).expect("valid CRD");
    Api::<CustomResourceDefinition>::all(client.clone())
        .create(&PostParams::default(), &crd)
        .await
        .expect("the widget CRD is accepted");
    (server, client)
}

async fn server() -> (ApiServer, Client) {
    server_with(default_rules()).await
}

fn widgets(client: &Client) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("schema.kubeward.dev", "v1", "Widget"),
        "widgets",
    );
    Api::namespaced_with(client.clone(), "default", &resource)
}

fn widget(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "schema.kubeward.dev/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": spec,
    })
}

fn object(v: Value) -> DynamicObject {
    serde_json::from_value(v).expect("valid object")
}

/// A response: status, `Warning` header values, and the JSON body.
struct Answer {
    status: u16,
    warnings: Vec<String>,
    body: Value,
}

async fn send(client: &Client, method: &str, uri: &str, content_type: &str, body: &[u8]) -> Answer {
    let req = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(Body::from(body.to_vec()))
        .expect("request");
    let resp = client.send(req).await.expect("response");
    let status = resp.status().as_u16();
    let warnings = resp
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| v.to_str().expect("ascii warning").to_string())
        .collect();
    let bytes = resp.into_body().collect_bytes().await.expect("body");
    Answer {
        status,
        warnings,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    }
}

async fn post(client: &Client, query: &str, body: &Value) -> Answer {
    let bytes = serde_json::to_vec(body).unwrap();
    send(
        client,
        "POST",
        &format!("{WIDGETS}{query}"),
        "application/json",
        &bytes,
    )
    .await
}

/// The `(field, reason, message)` causes of a 422 Invalid `Status`.
fn causes(status: &Value) -> BTreeSet<(String, String, String)> {
    assert_eq!(status["code"], 422, "{status}");
    assert_eq!(status["reason"], "Invalid", "{status}");
    status["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| {
            (
                c["field"].as_str().unwrap_or_default().to_string(),
                c["reason"].as_str().unwrap_or_default().to_string(),
                c["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn cause(field: &str, reason: &str, message: &str) -> (String, String, String) {
    (field.into(), reason.into(), message.into())
}

/// The cause added when a blocking error (wrong type, enum, required, too long, too many)
/// keeps the CEL rules from running.
fn not_checked() -> (String, String, String) {
    cause(
        "<nil>",
        "FieldValueInvalid",
        "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
    )
}

/// Creates `spec` through the typed client and returns the 422's causes.
async fn rejected(client: &Client, spec: Value) -> BTreeSet<(String, String, String)> {
    let err = widgets(client)
        .create(&PostParams::default(), &object(widget("w", spec)))
        .await
        .expect_err("the server rejects the widget");
    invalid_causes(err)
}

/// The causes of a 422 Invalid about the widget `w`, as `(field, reason, message)`.
fn invalid_causes(err: kube::Error) -> BTreeSet<(String, String, String)> {
    let kube::Error::Api(status) = err else {
        panic!("not an API error: {err}");
    };
    assert_eq!(status.code, 422, "{}", status.message);
    assert_eq!(status.reason, "Invalid");
    let details = status.details.expect("details");
    assert_eq!(details.name, "w");
    assert_eq!(details.group, "schema.kubeward.dev");
    assert_eq!(details.kind, "Widget");
    details
        .causes
        .into_iter()
        .map(|c| (c.field, c.reason, c.message))
        .collect()
}

#[tokio::test]
async fn a_value_of_the_wrong_type_is_422_with_kube_openapis_message() {
    let (_server, client) = server().await;
    let a = post(
        &client,
        "",
        &widget("w", json!({"size": "small", "replicas": "three"})),
    )
    .await;
    assert_eq!(a.status, 422);
    assert_eq!(
        a.body["message"],
        "Widget.schema.kubeward.dev \"w\" is invalid: [spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"
    );
    let got = causes(&a.body);
    assert!(got.contains(&cause(
        "spec.replicas",
        "FieldValueTypeInvalid",
        "Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
    )));
    assert_eq!(
        rejected(&client, json!({"size": "small", "port": true, "note": 3})).await,
        BTreeSet::from([
            cause(
                "spec.port",
                "FieldValueTypeInvalid",
                "Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\""
            ),
            cause(
                "spec.note",
                "FieldValueTypeInvalid",
                "Invalid value: \"integer\": spec.note in body must be of type string: \"integer\""
            ),
            not_checked(),
        ])
    );
}

#[tokio::test]
async fn enum_required_and_bounds_are_enforced_with_upstream_messages() {
    let (_server, client) = server().await;
    assert_eq!(
        rejected(&client, json!({"size": "medium"})).await,
        BTreeSet::from([
            cause(
                "spec.size",
                "FieldValueNotSupported",
                "Unsupported value: \"medium\": supported values: \"small\", \"large\""
            ),
            not_checked()
        ])
    );
    assert_eq!(
        rejected(&client, json!({"replicas": 2})).await,
        BTreeSet::from([
            cause("spec.size", "FieldValueRequired", "Required value"),
            not_checked()
        ])
    );
    assert_eq!(
        rejected(
            &client,
            json!({"size": "large", "replicas": 11, "minReplicas": -1, "ratio": 1, "step": 7})
        )
        .await,
        BTreeSet::from([
            cause(
                "spec.replicas",
                "FieldValueInvalid",
                "Invalid value: 11: spec.replicas in body should be less than or equal to 10"
            ),
            cause(
                "spec.minReplicas",
                "FieldValueInvalid",
                "Invalid value: -1: spec.minReplicas in body should be greater than or equal to 0"
            ),
            cause(
                "spec.ratio",
                "FieldValueInvalid",
                "Invalid value: 1: spec.ratio in body should be less than 1"
            ),
            cause(
                "spec.step",
                "FieldValueInvalid",
                "Invalid value: 7: spec.step in body should be a multiple of 5"
            ),
        ])
    );
    assert_eq!(
        rejected(
            &client,
            json!({"size": "large", "replicas": 0, "minReplicas": 0, "ratio": 0})
        )
        .await,
        BTreeSet::from([
            cause(
                "spec.replicas",
                "FieldValueInvalid",
                "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"
            ),
            cause(
                "spec.ratio",
                "FieldValueInvalid",
                "Invalid value: 0: spec.ratio in body should be greater than 0"
            ),
        ])
    );
    let ok = widgets(&client)
        .create(
            &PostParams::default(),
            &object(widget(
                "w",
                json!({"size": "large", "replicas": 10, "ratio": 0.5, "step": 15}),
            )),
        )
        .await
        .expect("values within bounds are accepted");
    assert_eq!(ok.data["spec"]["ratio"], 0.5);
}

#[tokio::test]
async fn lengths_item_and_property_counts_and_patterns_are_enforced() {
    let (_server, client) = server().await;
    assert_eq!(
        rejected(
            &client,
            json!({"size": "small", "name": "ab", "tags": ["a", "b", "c", "d"], "aliases": [],
                   "labels": {"a": "1", "b": "2", "c": "3"}, "selector": {}})
        )
        .await,
        BTreeSet::from([
            cause(
                "spec.name",
                "FieldValueInvalid",
                "Invalid value: \"ab\": spec.name in body should be at least 3 chars long"
            ),
            cause(
                "spec.tags",
                "FieldValueTooMany",
                "Too many: 4: must have at most 3 items"
            ),
            cause(
                "spec.aliases",
                "FieldValueInvalid",
                "Invalid value: 0: spec.aliases in body should have at least 1 items"
            ),
            cause(
                "spec.labels",
                "FieldValueTooMany",
                "Too many: 3: must have at most 2 items"
            ),
            cause(
                "spec.selector",
                "FieldValueInvalid",
                "Invalid value: 0: spec.selector in body should have at least 1 properties"
            ),
            not_checked(),
        ])
    );
    assert_eq!(
        rejected(&client, json!({"size": "small", "name": "abcdefghi"})).await,
        BTreeSet::from([
            cause(
                "spec.name",
                "FieldValueTooLong",
                "Too long: may not be more than 8 bytes"
            ),
            not_checked()
        ])
    );
    assert_eq!(
        rejected(&client, json!({"size": "small", "name": "ABC"})).await,
        BTreeSet::from([cause(
            "spec.name",
            "FieldValueInvalid",
            "Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'"
        )])
    );
    assert_eq!(
        rejected(&client, json!({"size": "small", "labels": {"a": 1}})).await,
        BTreeSet::from([
            cause(
                "spec.labels.a",
                "FieldValueTypeInvalid",
                "Invalid value: \"integer\": spec.labels.a in body must be of type string: \"integer\""
            ),
            not_checked(),
        ])
    );
}

#[tokio::test]
async fn formats_are_checked_as_apiextensions_does() {
    let (_server, client) = server().await;
    assert_eq!(
        rejected(
            &client,
            json!({"size": "small", "id": "not-a-uuid", "address": "300.1.1.1", "since": "yesterday"})
        )
        .await,
        BTreeSet::from([
            cause(
                "spec.id",
                "FieldValueTypeInvalid",
                "Invalid value: \"not-a-uuid\": spec.id in body must be of type uuid: \"not-a-uuid\""
            ),
            cause(
                "spec.address",
                "FieldValueTypeInvalid",
                "Invalid value: \"300.1.1.1\": spec.address in body must be of type ipv4: \"300.1.1.1\""
            ),
            cause(
                "spec.since",
                "FieldValueTypeInvalid",
                "Invalid value: \"yesterday\": spec.since in body must be of type date-time: \"yesterday\""
            ),
            not_checked(),
        ])
    );
    widgets(&client)
        .create(&PostParams::default(), &object(widget("w", json!({"size": "small", "id": "6f1c2a4e-8a9b-4c3d-9e8f-0a1b2c3d4e5f", "address": "10.0.0.1", "since": "2026-01-02T03:04:05Z"}))))
        .await
        .expect("valid formats are accepted");
}

#[tokio::test]
async fn embedded_resources_need_an_api_version_and_a_kind() {
    let (_server, client) = server().await;
    assert_eq!(
        rejected(
            &client,
            json!({"size": "small", "template": {"apiVersion": "", "data": "d"}})
        )
        .await,
        BTreeSet::from([
            cause(
                "spec.template.apiVersion",
                "FieldValueInvalid",
                "Invalid value: \"\": must not be empty"
            ),
            cause("spec.template.kind", "FieldValueRequired", "Required value"),
            not_checked(),
        ])
    );
}

#[tokio::test]
async fn set_and_map_lists_reject_duplicates() {
    let (_server, client) = server().await;
    assert_eq!(
        rejected(
            &client,
            json!({"size": "small", "tags": ["a", "b", "a"],
                   "ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]})
        )
        .await,
        BTreeSet::from([
            cause(
                "spec.tags[2]",
                "FieldValueDuplicate",
                "Duplicate value: \"a\""
            ),
            cause(
                "spec.ports[1]",
                "FieldValueDuplicate",
                "Duplicate value: {\"name\":\"http\"}"
            ),
        ])
    );
}

#[tokio::test]
async fn defaults_are_applied_on_create_and_update_and_nulls_follow_nullable() {
    let (_server, client) = server().await;
    let api = widgets(&client);
    let created = api
        .create(
            &PostParams::default(),
            &object(widget(
                "w",
                json!({"size": "small", "ports": [{"name": "http"}], "note": null, "name": null}),
            )),
        )
        .await
        .unwrap();
    let spec = &created.data["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["minReplicas"], 1);
    assert_eq!(spec["ports"][0]["port"], 80);
    assert!(
        spec["note"].is_null() && spec.get("note").is_some(),
        "nullable keeps null: {spec}"
    );
    assert!(
        spec.get("name").is_none(),
        "a non-nullable null is dropped: {spec}"
    );
    let stored = api.get("w").await.unwrap();
    assert_eq!(stored.data["spec"]["replicas"], 1, "defaults are stored");

    // An update that drops a defaulted field gets the default again (and null means default).
    let mut body = widget("w", json!({"size": "large", "replicas": null}));
    body["metadata"]["resourceVersion"] = json!(stored.metadata.resource_version);
    let updated = api
        .replace("w", &PostParams::default(), &object(body))
        .await
        .unwrap();
    assert_eq!(updated.data["spec"]["replicas"], 1);
    assert_eq!(updated.data["spec"]["minReplicas"], 1);
    assert_eq!(updated.data["spec"]["size"], "large");
}

#[tokio::test]
async fn a_default_added_to_the_crd_later_shows_on_read() {
    let (_server, client) = server().await;
    widgets(&client)
        .create(
            &PostParams::default(),
            &object(widget("w", json!({"size": "small"}))),
        )
        .await
        .unwrap();
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let mut crd =
        serde_json::to_value(crds.get("widgets.schema.kubeward.dev").await.unwrap()).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["note"]
        ["default"] = json!("none");
    crds.replace(
        "widgets.schema.kubeward.dev",
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .expect("the CRD update is accepted");
    let read = widgets(&client).get("w").await.unwrap();
    assert_eq!(read.data["spec"]["note"], "none");
    let listed = widgets(&client).list(&Default::default()).await.unwrap();
    assert_eq!(listed.items[0].data["spec"]["note"], "none");
}

#[tokio::test]
async fn rules_a_crd_tightens_later_are_ratcheted_on_unchanged_values() {
    let (_server, client) = server().await;
    let api = widgets(&client);
    api.create(
        &PostParams::default(),
        &object(widget("w", json!({"size": "small", "name": "abcd"}))),
    )
    .await
    .unwrap();
    let crds = Api::<CustomResourceDefinition>::all(client.clone());
    let mut crd =
        serde_json::to_value(crds.get("widgets.schema.kubeward.dev").await.unwrap()).unwrap();
    let name = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["name"];
    name["maxLength"] = json!(3);
    name["x-kubernetes-validations"] =
        json!([{"rule": "self.startsWith('x')", "message": "must start with x"}]);
    crds.replace(
        "widgets.schema.kubeward.dev",
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .expect("the CRD update is accepted");

    // The stored name now breaks two rules, but an update that leaves it alone passes.
    let patched = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .expect("the unchanged name is ratcheted");
    assert_eq!(patched.data["spec"]["replicas"], 2);
    // Changing it is validated in full.
    let err = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"name": "abcde"}})),
        )
        .await
        .expect_err("a changed name is validated");
    assert_eq!(
        invalid_causes(err),
        BTreeSet::from([
            cause(
                "spec.name",
                "FieldValueTooLong",
                "Too long: may not be more than 3 bytes"
            ),
            not_checked(),
        ])
    );
    let err = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"name": "abc"}})),
        )
        .await
        .expect_err("a changed name is validated by its rules too");
    assert_eq!(
        invalid_causes(err),
        BTreeSet::from([cause(
            "spec.name",
            "FieldValueInvalid",
            "Invalid value: \"string\": must start with x"
        )])
    );
}

#[tokio::test]
async fn duplicate_keys_of_a_built_in_kind_are_warned_too() {
    let (_server, client) = server().await;
    let body = br#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
        "data": {"a": "1", "a": "2"}}"#;
    let uri = "/api/v1/namespaces/default/configmaps";
    let a = send(&client, "POST", uri, "application/json", body).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.warnings, vec![r#"299 - "duplicate field \"data.a\"""#]);
    let a = send(
        &client,
        "POST",
        &format!("{uri}?fieldValidation=Strict"),
        "application/json",
        body,
    )
    .await;
    assert_eq!(a.status, 400);
    assert_eq!(
        a.body["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: duplicate field \"data.a\""
    );
}

#[tokio::test]
async fn unknown_fields_are_pruned_with_a_warning_by_default() {
    let (_server, client) = server().await;
    let body = widget(
        "w",
        json!({"size": "small", "foo": 1, "ports": [{"name": "a", "bar": true}],
               "extra": {"anything": {"goes": 1}},
               "template": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
                            "data": "d", "junk": 1}}),
    );
    let mut body = body;
    body["topLevel"] = json!("x");
    let a = post(&client, "", &body).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(
        a.warnings,
        vec![
            r#"299 - "unknown field \"spec.foo\"""#,
            r#"299 - "unknown field \"spec.ports[0].bar\"""#,
            r#"299 - "unknown field \"spec.template.junk\"""#,
            r#"299 - "unknown field \"topLevel\"""#,
        ]
    );
    let stored = widgets(&client).get("w").await.unwrap();
    assert!(stored.data.get("topLevel").is_none());
    let spec = &stored.data["spec"];
    assert!(spec.get("foo").is_none());
    assert!(spec["ports"][0].get("bar").is_none());
    assert_eq!(spec["extra"], json!({"anything": {"goes": 1}}), "preserved");
    assert_eq!(
        spec["template"],
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": "d"}),
        "an embedded resource keeps its envelope"
    );
}

#[tokio::test]
async fn field_validation_strict_rejects_and_ignore_prunes_silently() {
    let (_server, client) = server().await;
    let body = widget("w", json!({"size": "small", "foo": 1}));
    let a = post(&client, "?fieldValidation=Strict", &body).await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["reason"], "BadRequest");
    assert_eq!(
        a.body["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.foo\""
    );
    assert!(widgets(&client).get_opt("w").await.unwrap().is_none());

    let a = post(&client, "?fieldValidation=Loose", &body).await;
    assert_eq!(a.status, 422);
    assert_eq!(
        a.body["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Loose\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
    );

    let a = post(&client, "?fieldValidation=Ignore", &body).await;
    assert_eq!(a.status, 201);
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    assert!(a.body["spec"].get("foo").is_none());

    // Patches too: a merge patch with an unknown field under Strict is a 400, under Warn a warning.
    let patch = br#"{"spec": {"bar": 2}}"#;
    let uri = format!("{WIDGETS}/w?fieldValidation=Strict");
    let a = send(
        &client,
        "PATCH",
        &uri,
        "application/merge-patch+json",
        patch,
    )
    .await;
    assert_eq!(a.status, 400);
    assert!(
        a.body["message"]
            .as_str()
            .unwrap()
            .ends_with("strict decoding error: unknown field \"spec.bar\""),
        "{}",
        a.body
    );
    let a = send(
        &client,
        "PATCH",
        &format!("{WIDGETS}/w"),
        "application/merge-patch+json",
        patch,
    )
    .await;
    assert_eq!(a.status, 200);
    assert_eq!(a.warnings, vec![r#"299 - "unknown field \"spec.bar\"""#]);

    // Server-side apply through the typed client, Strict.
    let params = PatchParams::apply("test").validation_strict();
    let err = widgets(&client)
        .patch(
            "w",
            &params,
            &Patch::Apply(widget("w", json!({"size": "small", "baz": 1}))),
        )
        .await
        .expect_err("strict apply of an unknown field");
    let kube::Error::Api(status) = err else {
        panic!("{err}")
    };
    assert_eq!(status.code, 400);
    assert!(
        status.message.contains("unknown field \"spec.baz\""),
        "{}",
        status.message
    );
}

#[tokio::test]
async fn duplicate_json_keys_are_named_by_strict_and_warned_by_default() {
    let (_server, client) = server().await;
    let body = br#"{"apiVersion": "schema.kubeward.dev/v1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"size": "small", "replicas": 2, "replicas": 3}}"#;
    let uri = format!("{WIDGETS}?fieldValidation=Strict");
    let a = send(&client, "POST", &uri, "application/json", body).await;
    assert_eq!(a.status, 400);
    assert_eq!(
        a.body["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: duplicate field \"spec.replicas\""
    );
    let a = send(&client, "POST", WIDGETS, "application/json", body).await;
    assert_eq!(a.status, 201);
    assert_eq!(
        a.warnings,
        vec![r#"299 - "duplicate field \"spec.replicas\"""#]
    );
    assert_eq!(a.body["spec"]["replicas"], 3, "the last value wins");
}

#[tokio::test]
async fn cel_rules_with_messages_field_paths_and_reasons() {
    let (_server, client) = server().await;
    assert_eq!(
        rejected(
            &client,
            json!({"size": "small", "replicas": 2, "minReplicas": 3})
        )
        .await,
        BTreeSet::from([cause(
            "spec",
            "FieldValueInvalid",
            "Invalid value: \"object\": minReplicas must not exceed replicas"
        )])
    );
    assert_eq!(
        rejected(&client, json!({"size": "small", "replicas": 7})).await,
        BTreeSet::from([cause(
            "spec.replicas",
            "FieldValueForbidden",
            "Forbidden: small widgets have at most 5 replicas"
        )])
    );
    assert_eq!(
        rejected(&client, json!({"size": "small", "limit": -4})).await,
        BTreeSet::from([cause(
            "spec.limit",
            "FieldValueInvalid",
            "Invalid value: \"integer\": limit must be non-negative, got -4"
        )])
    );
    // Defaults are applied before the rules see the object: replicas 1, minReplicas 1.
    widgets(&client)
        .create(
            &PostParams::default(),
            &object(widget("w", json!({"size": "small"}))),
        )
        .await
        .expect("the defaults satisfy the rules");
}

#[tokio::test]
async fn a_rule_without_a_message_reports_the_rule() {
    let (_server, client) = server_with(json!([{"rule": "self.replicas != 3"}])).await;
    assert_eq!(
        rejected(&client, json!({"size": "small", "replicas": 3})).await,
        BTreeSet::from([cause(
            "spec",
            "FieldValueInvalid",
            "Invalid value: \"object\": failed rule: self.replicas != 3"
        )])
    );
}

#[tokio::test]
async fn transition_rules_compare_with_the_stored_object_on_update_only() {
    let (_server, client) = server().await;
    let api = widgets(&client);
    let created = api
        .create(&PostParams::default(), &object(widget("w", json!({"size": "small", "mode": "a", "ports": [{"name": "http", "protocol": "TCP"}]}))))
        .await
        .expect("no old object: transition rules do not run on create");
    let mut body = widget(
        "w",
        json!({"size": "small", "mode": "b",
               "ports": [{"name": "dns", "protocol": "UDP"}, {"name": "http", "protocol": "UDP"}]}),
    );
    body["metadata"]["resourceVersion"] = json!(created.metadata.resource_version);
    let err = api
        .replace("w", &PostParams::default(), &object(body))
        .await
        .expect_err("mode and the http port's protocol changed");
    assert_eq!(
        invalid_causes(err),
        BTreeSet::from([
            cause(
                "spec.mode",
                "FieldValueInvalid",
                "Invalid value: \"string\": mode is immutable"
            ),
            // The new "dns" item has no old item to compare with; "http" is correlated by key.
            cause(
                "spec.ports[1].protocol",
                "FieldValueInvalid",
                "Invalid value: \"string\": protocol is immutable"
            ),
        ])
    );
    // A merge patch that leaves the mode alone passes.
    api.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 2}})),
    )
    .await
    .expect("mode unchanged");
}

#[tokio::test]
async fn status_writes_and_patches_are_validated_too() {
    let (_server, client) = server().await;
    let api = widgets(&client);
    let created = api
        .create(
            &PostParams::default(),
            &object(widget("w", json!({"size": "small"}))),
        )
        .await
        .unwrap();
    let mut body = serde_json::to_value(&created).unwrap();
    body["status"] = json!({"phase": "Gone", "observed": -1});
    let err = api
        .replace_status("w", &PostParams::default(), &object(body))
        .await
        .expect_err("invalid status");
    assert_eq!(
        invalid_causes(err),
        BTreeSet::from([
            cause(
                "status.phase",
                "FieldValueNotSupported",
                "Unsupported value: \"Gone\": supported values: \"Pending\", \"Ready\""
            ),
            cause(
                "status.observed",
                "FieldValueInvalid",
                "Invalid value: -1: status.observed in body should be greater than or equal to 0"
            ),
            not_checked(),
        ])
    );
    let err = api
        .patch(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": "many"}})),
        )
        .await
        .expect_err("a merge patch to a wrong type");
    assert!(matches!(err, kube::Error::Api(s) if s.code == 422));
    let ok = api
        .patch_status(
            "w",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Ready", "unknown": 1}})),
        )
        .await
        .expect("a valid status patch");
    assert_eq!(ok.data["status"], json!({"phase": "Ready"}), "pruned");
}

#[tokio::test]
async fn a_crd_whose_rule_or_pattern_does_not_compile_is_rejected() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let crds = Api::<CustomResourceDefinition>::all(client);
    // The fields of the causes of the 422 a CRD with `rule` and `pattern` earns.
    let refused = |rule: &str, pattern: &str| {
        let mut crd = widget_crd(json!([{ "rule": rule }]));
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["name"]["pattern"] = json!(pattern);
        let crd: CustomResourceDefinition = serde_json::from_value(crd).unwrap();
        let crds = crds.clone();
        async move {
            let err = crds
                .create(&PostParams::default(), &crd)
                .await
                .expect_err("invalid CRD");
            let kube::Error::Api(status) = err else {
                panic!("{err}")
            };
            assert_eq!(status.code, 422);
            status
                .details
                .expect("details")
                .causes
                .into_iter()
                .map(|c| c.field)
                .collect::<BTreeSet<String>>()
        }
    };
    let pattern = "spec.validation.openAPIV3Schema.properties[spec].properties[name].pattern";
    let rule = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";
    // As kube-apiserver: a pattern that does not compile makes the schema non-structural, and
    // the rules of a non-structural schema are not compiled, so only the pattern is reported.
    assert_eq!(
        refused("self.replicas >", "([a-z").await,
        BTreeSet::from([pattern.to_string()])
    );
    assert_eq!(
        refused("self.replicas >", "[a-z]+").await,
        BTreeSet::from([rule.to_string()])
    );
}
