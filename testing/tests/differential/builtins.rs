//! Built-in kinds: metadata validation, CRUD, patches, conflicts, finalizers and deletion,
//! owner references, lists and selectors, namespaces, secrets, discovery.

use http::Method;
use serde_json::{Value, json};

use crate::corpus::{Case, Step, config_map, delete, encode, get, merge, patch, post, put, step};

/// A case's steps, given the namespace it runs in.
type StepsOf = Box<dyn Fn(&str) -> Vec<Step>>;

/// The corpus; every case runs in a namespace of its own, `ns`.
pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let cms = |ns: &str| format!("/api/v1/namespaces/{ns}/configmaps");
    let mut add = |name: String, steps: StepsOf| {
        cases.push((name, steps));
    };
    // Names.
    for name in [
        "ok",
        "a.b",
        "UPPER",
        "-lead",
        "trail-",
        "under_score",
        "dots..dots",
        "a",
        "1",
        "with space",
        "x".repeat(253).as_str(),
        "x".repeat(254).as_str(),
        "a/b",
        "%2e",
        "ünï",
    ] {
        let n = name.to_owned();
        add(
            // Long names are cut to 20 characters: their length tells them apart.
            match name.len() {
                0..=20 => format!("configmap name {name}"),
                long => format!("configmap name {name:.20} ({long} chars)"),
            },
            Box::new(move |ns| vec![post(cms(ns), config_map(&n, json!({})))]),
        );
    }
    add(
        "no name".into(),
        Box::new(move |ns| {
            vec![post(
                cms(ns),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
            )]
        }),
    );
    // Labels.
    for (key, value) in [
        ("app", "web"),
        ("example.com/app", "web"),
        ("-bad", "v"),
        ("a/b/c", "v"),
        ("Example.com/app", "v"),
        ("app", "-bad"),
        ("app", "bad value"),
        ("app", ""),
        (&*"k".repeat(64), "v"),
        ("app", &*"v".repeat(64)),
        ("kubernetes.io/x", "y"),
        ("/x", "y"),
    ] {
        let (k, v) = (key.to_owned(), value.to_owned());
        add(
            format!("label {key:.20}={value:.20}"),
            Box::new(move |ns| {
                vec![post(
                    cms(ns),
                    config_map("l", json!({"metadata": {"labels": {k.clone(): v.clone()}}})),
                )]
            }),
        );
    }
    // Annotations.
    for key in [
        "note",
        "example.com/note",
        "bad key",
        "a/b/c",
        &*"k".repeat(70),
    ] {
        let k = key.to_owned();
        add(
            format!("annotation {key:.20}"),
            Box::new(move |ns| {
                vec![post(
                    cms(ns),
                    config_map("a", json!({"metadata": {"annotations": {k.clone(): "v"}}})),
                )]
            }),
        );
    }
    add(
        "annotations over 256 KiB".into(),
        Box::new(move |ns| {
            vec![post(
                cms(ns),
                config_map(
                    "big",
                    json!({"metadata": {"annotations": {"a": "x".repeat(262_144)}}}),
                ),
            )]
        }),
    );
    // Finalizers.
    for finalizer in [
        "example.com/f",
        "f",
        "Example.com/f",
        "example.com/a/b",
        "kubernetes",
    ] {
        let f = finalizer.to_owned();
        add(
            format!("finalizer {finalizer}"),
            Box::new(move |ns| {
                vec![post(
                    cms(ns),
                    config_map("f", json!({"metadata": {"finalizers": [f.clone()]}})),
                )]
            }),
        );
    }
    // generateName.
    for prefix in ["web-", "Web-", "-"] {
        let p = prefix.to_owned();
        add(
            format!("generateName {prefix}"),
            Box::new(move |ns| {
                vec![post(
                    cms(ns),
                    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": p.clone()}}),
                )]
            }),
        );
    }
    // ConfigMap data.
    for key in ["key", "a.b", "-k", "k/k", "..", "k k", "_k"] {
        let k = key.to_owned();
        add(
            format!("configmap data key {key}"),
            Box::new(move |ns| {
                vec![post(
                    cms(ns),
                    config_map("d", json!({"data": {k.clone(): "v"}})),
                )]
            }),
        );
    }
    add(
        "key in data and binaryData".into(),
        Box::new(move |ns| {
            vec![post(
                cms(ns),
                config_map(
                    "d",
                    json!({"data": {"k": "v"}, "binaryData": {"k": "dg=="}}),
                ),
            )]
        }),
    );
    add(
        "binaryData not base64".into(),
        Box::new(move |ns| {
            vec![post(
                cms(ns),
                config_map("d", json!({"binaryData": {"k": "%%%"}})),
            )]
        }),
    );
    add(
        "data value a number".into(),
        Box::new(move |ns| vec![post(cms(ns), config_map("d", json!({"data": {"k": 1}})))]),
    );
    // CRUD sequences.
    add(
        "create twice".into(),
        Box::new(move |ns| {
            let body = config_map("twice", json!({}));
            vec![post(cms(ns), body.clone()), post(cms(ns), body)]
        }),
    );
    add(
        "get missing".into(),
        Box::new(move |ns| vec![get(format!("{}/missing", cms(ns)))]),
    );
    add(
        "delete missing".into(),
        Box::new(move |ns| vec![delete(format!("{}/missing", cms(ns)))]),
    );
    add(
        "create get delete get".into(),
        Box::new(move |ns| {
            let path = format!("{}/c", cms(ns));
            vec![
                post(cms(ns), config_map("c", json!({"data": {"k": "v"}}))),
                get(path.clone()),
                delete(path.clone()),
                get(path),
            ]
        }),
    );
    add(
        "put with a stale resourceVersion".into(),
        Box::new(move |ns| {
            vec![
                post(cms(ns), config_map("p", json!({}))),
                put(
                    format!("{}/p", cms(ns)),
                    config_map(
                        "p",
                        json!({"metadata": {"resourceVersion": "1"}, "data": {"k": "v"}}),
                    ),
                ),
            ]
        }),
    );
    add(
        "put without resourceVersion".into(),
        Box::new(move |ns| {
            vec![
                post(cms(ns), config_map("p", json!({}))),
                put(
                    format!("{}/p", cms(ns)),
                    config_map("p", json!({"data": {"k": "v"}})),
                ),
            ]
        }),
    );
    add(
        "put with resourceVersion 0".into(),
        Box::new(move |ns| {
            vec![
                post(cms(ns), config_map("p", json!({}))),
                put(
                    format!("{}/p", cms(ns)),
                    config_map(
                        "p",
                        json!({"metadata": {"resourceVersion": "0"}, "data": {"k": "v"}}),
                    ),
                ),
            ]
        }),
    );
    add(
        "put with a different name".into(),
        Box::new(move |ns| {
            vec![
                post(cms(ns), config_map("p", json!({}))),
                put(format!("{}/p", cms(ns)), config_map("q", json!({}))),
            ]
        }),
    );
    add(
        "put of a missing object".into(),
        Box::new(move |ns| {
            vec![put(
                format!("{}/absent", cms(ns)),
                config_map("absent", json!({})),
            )]
        }),
    );
    add(
        "create in another namespace than the path".into(),
        Box::new(move |ns| {
            vec![post(
                cms(ns),
                config_map("x", json!({"metadata": {"namespace": "elsewhere"}})),
            )]
        }),
    );
    add(
        "create in a missing namespace".into(),
        Box::new(move |_| vec![post(cms("does-not-exist"), config_map("x", json!({})))]),
    );
    add(
        "wrong kind in body".into(),
        Box::new(move |ns| {
            vec![post(
                cms(ns),
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}),
            )]
        }),
    );
    add(
        "body not json".into(),
        Box::new(move |ns| {
            vec![Step {
                body: Some(Value::String("{not json".into())),
                ..step(Method::POST, cms(ns), None)
            }]
        }),
    );
    // Patches.
    for (label, content_type, body) in [
        (
            "merge patch",
            "application/merge-patch+json",
            json!({"data": {"k": "patched"}}),
        ),
        (
            "merge patch null deletes",
            "application/merge-patch+json",
            json!({"data": {"k": null}}),
        ),
        (
            "json patch replace",
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/data/k", "value": "x"}]),
        ),
        (
            "json patch test fails",
            "application/json-patch+json",
            json!([{"op": "test", "path": "/data/k", "value": "nope"}]),
        ),
        (
            "json patch missing path",
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/data/missing", "value": "x"}]),
        ),
        (
            "json patch bad op",
            "application/json-patch+json",
            json!([{"op": "frobnicate", "path": "/data/k"}]),
        ),
        (
            "strategic patch",
            "application/strategic-merge-patch+json",
            json!({"data": {"k2": "v2"}}),
        ),
        (
            "strategic patch finalizers",
            "application/strategic-merge-patch+json",
            json!({"metadata": {"finalizers": ["example.com/a"]}}),
        ),
        (
            "merge patch with stale resourceVersion",
            "application/merge-patch+json",
            json!({"metadata": {"resourceVersion": "1"}, "data": {"k": "x"}}),
        ),
        (
            "merge patch changing the name",
            "application/merge-patch+json",
            json!({"metadata": {"name": "other"}}),
        ),
        (
            "merge patch invalid label",
            "application/merge-patch+json",
            json!({"metadata": {"labels": {"-x": "y"}}}),
        ),
        ("unsupported patch type", "application/x-unknown", json!({})),
    ] {
        add(
            format!("patch: {label}"),
            Box::new(move |ns| {
                vec![
                    post(cms(ns), config_map("m", json!({"data": {"k": "v"}}))),
                    patch(format!("{}/m", cms(ns)), content_type, body.clone()),
                ]
            }),
        );
    }
    add(
        "patch of a missing object".into(),
        Box::new(move |ns| {
            vec![patch(
                format!("{}/nothing", cms(ns)),
                "application/merge-patch+json",
                json!({"data": {"k": "v"}}),
            )]
        }),
    );
    // Finalizers and deletion.
    add(
        "delete with a finalizer, then remove it".into(),
        Box::new(move |ns| {
            let path = format!("{}/held", cms(ns));
            vec![
                post(
                    cms(ns),
                    config_map(
                        "held",
                        json!({"metadata": {"finalizers": ["example.com/hold"]}}),
                    ),
                ),
                delete(path.clone()),
                get(path.clone()),
                patch(
                    path.clone(),
                    "application/merge-patch+json",
                    json!({"metadata": {"finalizers": ["example.com/hold", "example.com/new"]}}),
                ),
                patch(
                    path.clone(),
                    "application/merge-patch+json",
                    json!({"metadata": {"finalizers": null}}),
                ),
                get(path),
            ]
        }),
    );
    add(
        "delete with a uid precondition that fails".into(),
        Box::new(move |ns| {
            vec![
                post(cms(ns), config_map("pre", json!({}))),
                step(
                    Method::DELETE,
                    format!("{}/pre", cms(ns)),
                    Some(
                        json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}),
                    ),
                ),
            ]
        }),
    );
    add(
        "delete with an unknown propagation policy".into(),
        Box::new(move |ns| {
            vec![
                post(cms(ns), config_map("pp", json!({}))),
                step(
                    Method::DELETE,
                    format!("{}/pp", cms(ns)),
                    Some(
                        json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Sideways"}),
                    ),
                ),
            ]
        }),
    );
    // Owner references.
    add(
        "owner reference without uid".into(),
        Box::new(move |ns| {
            vec![post(
                cms(ns),
                config_map(
                    "o",
                    json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": ""}]}}),
                ),
            )]
        }),
    );
    add(
        "two controller owner references".into(),
        Box::new(move |ns| {
            let r = |u: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": u, "controller": true});
            vec![post(
                cms(ns),
                config_map(
                    "o",
                    json!({"metadata": {"ownerReferences": [r("1"), r("2")]}}),
                ),
            )]
        }),
    );
    // Lists and selectors.
    for selector in [
        "app=web",
        "app!=web",
        "app in (web,db)",
        "app",
        "!app",
        "app==web",
        "app=",
        "=web",
        "a b",
    ] {
        let s = selector.to_owned();
        add(
            format!("list labelSelector {selector}"),
            Box::new(move |ns| {
                vec![
                    post(
                        cms(ns),
                        config_map("s1", json!({"metadata": {"labels": {"app": "web"}}})),
                    ),
                    post(
                        cms(ns),
                        config_map("s2", json!({"metadata": {"labels": {"app": "db"}}})),
                    ),
                    get(format!("{}?labelSelector={}", cms(ns), encode(&s))),
                ]
            }),
        );
    }
    for selector in [
        "metadata.name=s1",
        "metadata.namespace!=x",
        "data.k=v",
        "metadata.name",
    ] {
        let s = selector.to_owned();
        add(
            format!("list fieldSelector {selector}"),
            Box::new(move |ns| {
                vec![
                    post(cms(ns), config_map("s1", json!({}))),
                    get(format!("{}?fieldSelector={}", cms(ns), encode(&s))),
                ]
            }),
        );
    }
    add(
        "list with limit and continue".into(),
        Box::new(move |ns| {
            let mut steps: Vec<Step> = (0..3)
                .map(|i| post(cms(ns), config_map(&format!("page{i}"), json!({}))))
                .collect();
            steps.push(get(format!("{}?limit=2", cms(ns))));
            steps.push(get(format!("{}?limit=-1", cms(ns))));
            steps.push(get(format!("{}?continue=garbage", cms(ns))));
            steps
        }),
    );
    // Namespaces.
    for name in ["ok-ns", "Bad", "a.b", &*"n".repeat(64)] {
        let n = name.to_owned();
        add(
            format!("namespace name {name:.20}"),
            Box::new(move |_| {
                vec![post(
                    "/api/v1/namespaces",
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("{n}")}}),
                )]
            }),
        );
    }
    // Secrets.
    for (label, body) in [
        ("secret default type", json!({})),
        ("secret stringData", json!({"stringData": {"k": "v"}})),
        (
            "secret tls without keys",
            json!({"type": "kubernetes.io/tls"}),
        ),
        ("secret bad base64", json!({"data": {"k": "%%"}})),
        ("secret type change", json!({})),
    ] {
        add(
            label.to_owned(),
            Box::new(move |ns| {
                let mut secret =
                    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}});
                merge(&mut secret, body.clone());
                let path = format!("/api/v1/namespaces/{ns}/secrets");
                let mut steps = vec![post(path.clone(), secret)];
                if label == "secret type change" {
                    steps.push(patch(
                        format!("{path}/s"),
                        "application/merge-patch+json",
                        json!({"type": "Other"}),
                    ));
                }
                steps
            }),
        );
    }
    // Discovery.
    add(
        "discovery core".into(),
        Box::new(move |_| vec![get("/api")]),
    );
    add(
        "unknown resource".into(),
        Box::new(move |ns| vec![get(format!("/api/v1/namespaces/{ns}/widgets"))]),
    );
    add(
        "unknown group".into(),
        Box::new(move |_| vec![get("/apis/nothing.example.com/v1/things")]),
    );
    cases
        .into_iter()
        .map(|(name, steps)| Case::new(name, steps("NS")))
        .collect()
}
