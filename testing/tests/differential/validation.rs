//! Field validation and decoding: `fieldValidation` Strict/Warn/Ignore on built-ins and custom
//! resources (unknown fields, duplicate fields in the JSON body, their `Warning` headers), and
//! the decoding of built-ins into their Go types (numbers where strings belong, strings where
//! integers or booleans belong, times with offsets and fractional digits).

use http::Method;
use serde_json::{Value, json};

use crate::corpus::{Case, Step, config_map, patch, post, put, step};
use crate::crds::Fixture;

const CMS: &str = "/api/v1/namespaces/NS/configmaps";
/// The group of the CRD these cases share.
const GROUP: &str = "validation.corpus.example.com";
const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/NS/leases";

/// A request whose body is sent as written (duplicate keys survive).
fn raw(method: Method, path: impl Into<String>, content_type: &'static str, body: &str) -> Step {
    Step {
        content_type,
        body: Some(Value::String(body.into())),
        ..step(method, path, None)
    }
}

/// The query string of a `fieldValidation` directive (none for the server's default).
fn directive_query(directive: &str) -> String {
    if directive.is_empty() {
        String::new()
    } else {
        format!("?fieldValidation={directive}")
    }
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    field_validation(&mut cases);
    decoding(&mut cases);
    cases
}

fn field_validation(cases: &mut Vec<Case>) {
    for directive in ["", "Strict", "Warn", "Ignore"] {
        let q = directive_query(directive);
        let shown = if directive.is_empty() {
            "default"
        } else {
            directive
        };
        let mut add = |label: &str, steps: Vec<Step>| {
            cases.push(Case::new(
                format!("fieldValidation {shown}: {label}"),
                steps,
            ));
        };
        add(
            "unknown top-level field",
            vec![post(
                format!("{CMS}{q}"),
                config_map("a", json!({"spec": {"x": 1}, "other": true})),
            )],
        );
        add(
            "unknown metadata field",
            vec![post(
                format!("{CMS}{q}"),
                config_map("a", json!({"metadata": {"colour": "red"}})),
            )],
        );
        add(
            "duplicate field",
            vec![raw(
                Method::POST,
                format!("{CMS}{q}"),
                "application/json",
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"1","k":"2"}}"#,
            )],
        );
        add(
            "duplicate metadata name",
            vec![raw(
                Method::POST,
                format!("{CMS}{q}"),
                "application/json",
                r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"}}"#,
            )],
        );
        add(
            "unknown field in a put",
            vec![
                post(CMS, config_map("a", json!({}))),
                put(format!("{CMS}/a{q}"), config_map("a", json!({"extra": 1}))),
            ],
        );
        add(
            "unknown field in a merge patch",
            vec![
                post(CMS, config_map("a", json!({}))),
                patch(
                    format!("{CMS}/a{q}"),
                    "application/merge-patch+json",
                    json!({"extra": 1, "data": {"k": "v"}}),
                ),
            ],
        );
        add(
            "unknown field in a strategic merge patch",
            vec![
                post(CMS, config_map("a", json!({}))),
                patch(
                    format!("{CMS}/a{q}"),
                    "application/strategic-merge-patch+json",
                    json!({"extra": 1}),
                ),
            ],
        );
        add(
            "unknown field in an apply",
            vec![patch(
                format!(
                    "{CMS}/a{q}{}fieldManager=m",
                    if q.is_empty() { "?" } else { "&" }
                ),
                "application/apply-patch+yaml",
                config_map("a", json!({"extra": 1})),
            )],
        );
        add(
            "unknown field in a lease spec",
            vec![post(
                format!("{LEASES}{q}"),
                json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                            "metadata": {"name": "l"}, "spec": {"holderIdentity": "h", "holder": "x"}}),
            )],
        );
        // Custom resources.
        let fixture = Fixture::new(
            GROUP,
            [("a".to_owned(), json!({"type": "string"}))]
                .into_iter()
                .collect(),
        );
        let widgets = fixture.collection();
        let mut with_crd = |label: &str, last: Step| {
            cases.push(
                Case::new(format!("fieldValidation {shown}: cr {label}"), vec![last])
                    .after(fixture.setup()),
            );
        };
        with_crd(
            "unknown spec field",
            post(
                format!("{widgets}{q}"),
                json!({"apiVersion": "validation.corpus.example.com/v1", "kind": "Widget",
                            "metadata": {"name": "w"}, "spec": {"a": "x", "b": 1, "c": {"d": 2}}}),
            ),
        );
        with_crd(
            "unknown metadata field",
            post(
                format!("{widgets}{q}"),
                json!({"apiVersion": "validation.corpus.example.com/v1", "kind": "Widget",
                            "metadata": {"name": "w", "colour": "red"}}),
            ),
        );
        with_crd(
            "duplicate field",
            raw(
                Method::POST,
                format!("{widgets}{q}"),
                "application/json",
                r#"{"apiVersion":"validation.corpus.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"a":"x","a":"y"}}"#,
            ),
        );
        with_crd(
            "yaml duplicate field",
            raw(
                Method::POST,
                format!("{widgets}{q}"),
                "application/yaml",
                "apiVersion: validation.corpus.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n  a: x\n  a: y\n",
            ),
        );
    }
    // YAML that does not parse: go-yaml's message (with the line when it is not the first).
    for (label, body) in [
        ("yaml create: not yaml", "{: ["),
        (
            "yaml create: bad indentation",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n data: {}\n",
        ),
        (
            "yaml create: a tab",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n",
        ),
        (
            "yaml create: yes and no",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  yes: no\n  on: 'off'\n  v: 0755\n",
        ),
    ] {
        cases.push(Case::new(
            label,
            vec![raw(Method::POST, CMS, "application/yaml", body)],
        ));
    }
    cases.push(Case::new(
        "fieldValidation unknown directive",
        vec![post(
            format!("{CMS}?fieldValidation=Loose"),
            config_map("a", json!({})),
        )],
    ));
    cases.push(Case::new(
        "fieldValidation lowercase strict",
        vec![post(
            format!("{CMS}?fieldValidation=strict"),
            config_map("a", json!({"extra": 1})),
        )],
    ));
}

/// Built-ins are decoded into their Go types: a value of the wrong JSON type is a 400.
fn decoding(cases: &mut Vec<Case>) {
    for (label, extra) in [
        (
            "label value a number",
            json!({"metadata": {"labels": {"a": 1}}}),
        ),
        (
            "annotation value a boolean",
            json!({"metadata": {"annotations": {"a": true}}}),
        ),
        ("labels a list", json!({"metadata": {"labels": ["a"]}})),
        ("name a number", json!({"metadata": {"name": 5}})),
        ("immutable a string", json!({"immutable": "true"})),
        ("immutable a boolean", json!({"immutable": true})),
        ("data null", json!({"data": null})),
        ("data value null", json!({"data": {"k": null}})),
        ("data a list", json!({"data": ["k"]})),
        ("binaryData a number", json!({"binaryData": {"k": 1}})),
        (
            "generation a string",
            json!({"metadata": {"generation": "1"}}),
        ),
        (
            "generation a float",
            json!({"metadata": {"generation": 1.5}}),
        ),
        (
            "creationTimestamp with an offset",
            json!({"metadata": {"creationTimestamp": "2024-01-02T03:04:05+02:00"}}),
        ),
        (
            "creationTimestamp not a time",
            json!({"metadata": {"creationTimestamp": "yesterday"}}),
        ),
        (
            "finalizers a string",
            json!({"metadata": {"finalizers": "example.com/f"}}),
        ),
        (
            "ownerReferences controller a string",
            json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                "name": "o", "uid": "u", "controller": "true"}]}}),
        ),
    ] {
        cases.push(Case::new(
            format!("decode configmap: {label}"),
            vec![post(CMS, config_map("a", extra))],
        ));
    }
    for (label, spec) in [
        ("durations an integer", json!({"leaseDurationSeconds": 15})),
        ("duration a string", json!({"leaseDurationSeconds": "15"})),
        ("duration a float", json!({"leaseDurationSeconds": 1.5})),
        (
            "duration out of int32",
            json!({"leaseDurationSeconds": 3_000_000_000_i64}),
        ),
        ("holder a number", json!({"holderIdentity": 7})),
        (
            "renewTime in microseconds",
            json!({"renewTime": "2024-01-02T03:04:05.123456Z"}),
        ),
        (
            "renewTime with an offset",
            json!({"renewTime": "2024-01-02T03:04:05.5+02:00"}),
        ),
        (
            "renewTime with nanoseconds",
            json!({"renewTime": "2024-01-02T03:04:05.123456789Z"}),
        ),
        (
            "renewTime without fraction",
            json!({"renewTime": "2024-01-02T03:04:05Z"}),
        ),
        ("renewTime a date", json!({"renewTime": "2024-01-02"})),
        ("renewTime a number", json!({"renewTime": 1700000000})),
        ("transitions a string", json!({"leaseTransitions": "2"})),
    ] {
        cases.push(Case::new(
            format!("decode lease: {label}"),
            vec![post(
                LEASES,
                json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                            "metadata": {"name": "l"}, "spec": spec}),
            )],
        ));
    }
    for (label, extra) in [
        (
            "automount a string",
            json!({"automountServiceAccountToken": "true"}),
        ),
        ("secrets not a list", json!({"secrets": {"name": "x"}})),
    ] {
        let mut sa =
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}});
        crate::corpus::merge(&mut sa, extra);
        cases.push(Case::new(
            format!("decode serviceaccount: {label}"),
            vec![post("/api/v1/namespaces/NS/serviceaccounts", sa)],
        ));
    }
    let event = |times: Value| {
        let mut e = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e"},
            "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": "NS"},
            "reason": "Tested", "message": "m", "type": "Normal",
            "source": {"component": "corpus"}});
        crate::corpus::merge(&mut e, times);
        e
    };
    for (label, times) in [
        (
            "firstTimestamp with fractional seconds",
            json!({"firstTimestamp": "2024-01-02T03:04:05.999Z", "lastTimestamp": "2024-01-02T03:04:06Z"}),
        ),
        (
            "firstTimestamp with an offset",
            json!({"firstTimestamp": "2024-01-02T05:04:05+02:00", "lastTimestamp": "2024-01-02T03:04:06Z"}),
        ),
        (
            "eventTime with offset and micros",
            json!({"eventTime": "2024-01-02T05:04:05.123456+02:00", "reportingComponent": "c",
                   "reportingInstance": "i", "action": "A"}),
        ),
        ("count a string", json!({"count": "2"})),
        (
            "firstTimestamp not a time",
            json!({"firstTimestamp": "soon"}),
        ),
    ] {
        cases.push(Case::new(
            format!("decode event: {label}"),
            vec![post("/api/v1/namespaces/NS/events", event(times))],
        ));
    }
    cases.push(Case::new(
        "decode events.k8s.io: eventTime with an offset",
        vec![post(
            "/apis/events.k8s.io/v1/namespaces/NS/events",
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": "e"},
                "eventTime": "2024-01-02T05:04:05.1+02:00",
                "regarding": {"kind": "ConfigMap", "name": "x", "namespace": "NS"},
                "reason": "Tested", "note": "n", "type": "Normal", "action": "A",
                "reportingController": "example.com/c", "reportingInstance": "i"}),
        )],
    ));
    cases.push(Case::new(
        "decode deployment: replicas a string",
        vec![post(
            "/apis/apps/v1/namespaces/NS/deployments",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                "spec": {"replicas": "3", "selector": {"matchLabels": {"app": "d"}},
                         "template": {"metadata": {"labels": {"app": "d"}},
                                      "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
        )],
    ));
}
