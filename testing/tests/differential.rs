//! The differential corpus: the same requests sent to the embedded server and to a real
//! kube-apiserver, their answers compared once what legitimately differs is normalised (uids,
//! timestamps, resourceVersion values, generated name suffixes, server versions). Prints
//! `differential: N cases, M identical`; a difference fails the test unless
//! `tests/differential-accepted.txt` lists the case with its reason.
//!
//! Runs where the real tier runs (`KUBEBUILDER_ASSETS` set, as `scripts/test` sets it); elsewhere
//! it says in one line that it did not run.
//!
//! This is the corpus's first slice (metadata validation, CRUD, patches, conflicts and
//! namespaces of built-in kinds); the areas still to cover are listed in the README.

use std::collections::BTreeMap;

use http::{Method, Request};
use kubeward_testing::{ASSETS_VARIABLE, Backend, Cluster};
use serde_json::{Value, json};

/// One request of a case.
#[derive(Clone)]
struct Step {
    method: Method,
    path: String,
    content_type: &'static str,
    body: Option<Value>,
}

/// A named sequence of requests, each answer compared.
struct Case {
    name: String,
    steps: Vec<Step>,
}

fn step(method: Method, path: impl Into<String>, body: Option<Value>) -> Step {
    Step {
        method,
        path: path.into(),
        content_type: "application/json",
        body,
    }
}

fn patch(path: impl Into<String>, content_type: &'static str, body: Value) -> Step {
    Step {
        content_type,
        ..step(Method::PATCH, path, Some(body))
    }
}

fn config_map(name: &str, extra: Value) -> Value {
    let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
    merge(&mut object, extra);
    object
}

fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                merge(t.entry(k).or_insert(Value::Null), v);
            }
        }
        (t, p) => *t = p,
    }
}

/// A case's steps, given the namespace it runs in.
type StepsOf = Box<dyn Fn(&str) -> Vec<Step>>;

/// The corpus; every case runs in a namespace of its own, `ns`.
fn cases() -> Vec<Case> {
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
            format!("configmap name {name:.20}"),
            Box::new(move |ns| vec![step(Method::POST, cms(ns), Some(config_map(&n, json!({}))))]),
        );
    }
    add(
        "no name".into(),
        Box::new(move |ns| {
            vec![step(
                Method::POST,
                cms(ns),
                Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})),
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
                vec![step(
                    Method::POST,
                    cms(ns),
                    Some(config_map(
                        "l",
                        json!({"metadata": {"labels": {k.clone(): v.clone()}}}),
                    )),
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
                vec![step(
                    Method::POST,
                    cms(ns),
                    Some(config_map(
                        "a",
                        json!({"metadata": {"annotations": {k.clone(): "v"}}}),
                    )),
                )]
            }),
        );
    }
    add(
        "annotations over 256 KiB".into(),
        Box::new(move |ns| {
            vec![step(
                Method::POST,
                cms(ns),
                Some(config_map(
                    "big",
                    json!({"metadata": {"annotations": {"a": "x".repeat(262_144)}}}),
                )),
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
                vec![step(
                    Method::POST,
                    cms(ns),
                    Some(config_map(
                        "f",
                        json!({"metadata": {"finalizers": [f.clone()]}}),
                    )),
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
                vec![step(
                    Method::POST,
                    cms(ns),
                    Some(
                        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": p.clone()}}),
                    ),
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
                vec![step(
                    Method::POST,
                    cms(ns),
                    Some(config_map("d", json!({"data": {k.clone(): "v"}}))),
                )]
            }),
        );
    }
    add(
        "key in data and binaryData".into(),
        Box::new(move |ns| {
            vec![step(
                Method::POST,
                cms(ns),
                Some(config_map(
                    "d",
                    json!({"data": {"k": "v"}, "binaryData": {"k": "dg=="}}),
                )),
            )]
        }),
    );
    add(
        "binaryData not base64".into(),
        Box::new(move |ns| {
            vec![step(
                Method::POST,
                cms(ns),
                Some(config_map("d", json!({"binaryData": {"k": "%%%"}}))),
            )]
        }),
    );
    add(
        "data value a number".into(),
        Box::new(move |ns| {
            vec![step(
                Method::POST,
                cms(ns),
                Some(config_map("d", json!({"data": {"k": 1}}))),
            )]
        }),
    );
    // CRUD sequences.
    add(
        "create twice".into(),
        Box::new(move |ns| {
            let body = config_map("twice", json!({}));
            vec![
                step(Method::POST, cms(ns), Some(body.clone())),
                step(Method::POST, cms(ns), Some(body)),
            ]
        }),
    );
    add(
        "get missing".into(),
        Box::new(move |ns| vec![step(Method::GET, format!("{}/missing", cms(ns)), None)]),
    );
    add(
        "delete missing".into(),
        Box::new(move |ns| vec![step(Method::DELETE, format!("{}/missing", cms(ns)), None)]),
    );
    add(
        "create get delete get".into(),
        Box::new(move |ns| {
            let path = format!("{}/c", cms(ns));
            vec![
                step(
                    Method::POST,
                    cms(ns),
                    Some(config_map("c", json!({"data": {"k": "v"}}))),
                ),
                step(Method::GET, path.clone(), None),
                step(Method::DELETE, path.clone(), None),
                step(Method::GET, path, None),
            ]
        }),
    );
    add(
        "put with a stale resourceVersion".into(),
        Box::new(move |ns| {
            vec![
                step(Method::POST, cms(ns), Some(config_map("p", json!({})))),
                step(
                    Method::PUT,
                    format!("{}/p", cms(ns)),
                    Some(config_map(
                        "p",
                        json!({"metadata": {"resourceVersion": "1"}, "data": {"k": "v"}}),
                    )),
                ),
            ]
        }),
    );
    add(
        "put without resourceVersion".into(),
        Box::new(move |ns| {
            vec![
                step(Method::POST, cms(ns), Some(config_map("p", json!({})))),
                step(
                    Method::PUT,
                    format!("{}/p", cms(ns)),
                    Some(config_map("p", json!({"data": {"k": "v"}}))),
                ),
            ]
        }),
    );
    add(
        "put with a different name".into(),
        Box::new(move |ns| {
            vec![
                step(Method::POST, cms(ns), Some(config_map("p", json!({})))),
                step(
                    Method::PUT,
                    format!("{}/p", cms(ns)),
                    Some(config_map("q", json!({}))),
                ),
            ]
        }),
    );
    add(
        "put of a missing object".into(),
        Box::new(move |ns| {
            vec![step(
                Method::PUT,
                format!("{}/absent", cms(ns)),
                Some(config_map("absent", json!({}))),
            )]
        }),
    );
    add(
        "create in another namespace than the path".into(),
        Box::new(move |ns| {
            vec![step(
                Method::POST,
                cms(ns),
                Some(config_map(
                    "x",
                    json!({"metadata": {"namespace": "elsewhere"}}),
                )),
            )]
        }),
    );
    add(
        "create in a missing namespace".into(),
        Box::new(move |_| {
            vec![step(
                Method::POST,
                cms("does-not-exist"),
                Some(config_map("x", json!({}))),
            )]
        }),
    );
    add(
        "wrong kind in body".into(),
        Box::new(move |ns| {
            vec![step(
                Method::POST,
                cms(ns),
                Some(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}})),
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
                    step(
                        Method::POST,
                        cms(ns),
                        Some(config_map("m", json!({"data": {"k": "v"}}))),
                    ),
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
                step(
                    Method::POST,
                    cms(ns),
                    Some(config_map(
                        "held",
                        json!({"metadata": {"finalizers": ["example.com/hold"]}}),
                    )),
                ),
                step(Method::DELETE, path.clone(), None),
                step(Method::GET, path.clone(), None),
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
                step(Method::GET, path, None),
            ]
        }),
    );
    add(
        "delete with a uid precondition that fails".into(),
        Box::new(move |ns| {
            vec![
                step(Method::POST, cms(ns), Some(config_map("pre", json!({})))),
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
                step(Method::POST, cms(ns), Some(config_map("pp", json!({})))),
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
            vec![step(
                Method::POST,
                cms(ns),
                Some(config_map(
                    "o",
                    json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": ""}]}}),
                )),
            )]
        }),
    );
    add(
        "two controller owner references".into(),
        Box::new(move |ns| {
            let r = |u: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": u, "controller": true});
            vec![step(
                Method::POST,
                cms(ns),
                Some(config_map(
                    "o",
                    json!({"metadata": {"ownerReferences": [r("1"), r("2")]}}),
                )),
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
                    step(
                        Method::POST,
                        cms(ns),
                        Some(config_map(
                            "s1",
                            json!({"metadata": {"labels": {"app": "web"}}}),
                        )),
                    ),
                    step(
                        Method::POST,
                        cms(ns),
                        Some(config_map(
                            "s2",
                            json!({"metadata": {"labels": {"app": "db"}}}),
                        )),
                    ),
                    step(
                        Method::GET,
                        format!("{}?labelSelector={}", cms(ns), encode(&s)),
                        None,
                    ),
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
                    step(Method::POST, cms(ns), Some(config_map("s1", json!({})))),
                    step(
                        Method::GET,
                        format!("{}?fieldSelector={}", cms(ns), encode(&s)),
                        None,
                    ),
                ]
            }),
        );
    }
    add(
        "list with limit and continue".into(),
        Box::new(move |ns| {
            let mut steps: Vec<Step> = (0..3)
                .map(|i| {
                    step(
                        Method::POST,
                        cms(ns),
                        Some(config_map(&format!("page{i}"), json!({}))),
                    )
                })
                .collect();
            steps.push(step(Method::GET, format!("{}?limit=2", cms(ns)), None));
            steps.push(step(Method::GET, format!("{}?limit=-1", cms(ns)), None));
            steps.push(step(
                Method::GET,
                format!("{}?continue=garbage", cms(ns)),
                None,
            ));
            steps
        }),
    );
    // Namespaces.
    for name in ["ok-ns", "Bad", "a.b", &*"n".repeat(64)] {
        let n = name.to_owned();
        add(
            format!("namespace name {name:.20}"),
            Box::new(move |_| {
                vec![step(
                    Method::POST,
                    "/api/v1/namespaces",
                    Some(
                        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("{n}")}}),
                    ),
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
                let mut steps = vec![step(Method::POST, path.clone(), Some(secret))];
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
        Box::new(move |_| vec![step(Method::GET, "/api", None)]),
    );
    add(
        "unknown resource".into(),
        Box::new(move |ns| {
            vec![step(
                Method::GET,
                format!("/api/v1/namespaces/{ns}/widgets"),
                None,
            )]
        }),
    );
    add(
        "unknown group".into(),
        Box::new(move |_| {
            vec![step(
                Method::GET,
                "/apis/nothing.example.com/v1/things",
                None,
            )]
        }),
    );
    cases
        .into_iter()
        .map(|(name, steps)| Case {
            name,
            steps: steps("NS"),
        })
        .collect()
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// What is compared of an answer: the status code and the normalised body.
async fn send(client: &kube::Client, step: &Step, ns: &str) -> (u16, Value) {
    let path = step.path.replace("NS", ns);
    let body = match &step.body {
        None => Vec::new(),
        Some(Value::String(raw)) => raw.replace("NS", ns).into_bytes(),
        Some(value) => serde_json::to_string(value)
            .unwrap()
            .replace("NS", ns)
            .into_bytes(),
    };
    let request = Request::builder()
        .method(step.method.clone())
        .uri(path)
        .header(http::header::CONTENT_TYPE, step.content_type)
        .header(http::header::ACCEPT, "application/json")
        .body(body)
        .unwrap();
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("answered");
    let status = response.status().as_u16();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, normalise(value, ns))
}

/// Removes what legitimately differs between two servers.
fn normalise(mut value: Value, ns: &str) -> Value {
    fn walk(value: &mut Value, ns: &str) {
        match value {
            Value::Object(map) => {
                for key in [
                    "uid",
                    "creationTimestamp",
                    "resourceVersion",
                    "managedFields",
                    "deletionTimestamp",
                    "selfLink",
                    "continue",
                    "remainingItemCount",
                    "serverAddress",
                ] {
                    if let Some(v) = map.get_mut(key) {
                        *v = Value::String("<normalised>".into());
                    }
                }
                if let Some(Value::String(name)) = map.get("name").cloned()
                    && let Some(Value::String(prefix)) = map.get("generateName")
                    && name.starts_with(prefix.as_str())
                {
                    map.insert("name".into(), Value::String(format!("{prefix}<generated>")));
                }
                for v in map.values_mut() {
                    walk(v, ns);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, ns)),
            Value::String(text) if text.contains(ns) => *text = text.replace(ns, "NS"),
            _ => {}
        }
    }
    walk(&mut value, ns);
    value
}

/// The answers of every case on `cluster`, in order.
async fn answers(cluster: &Cluster, cases: &[Case]) -> Vec<Vec<(u16, Value)>> {
    let client = cluster.client().unwrap();
    let mut all = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        let ns = format!("diff-{index}");
        let created = send(
            &client,
            &step(
                Method::POST,
                "/api/v1/namespaces",
                Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
            ),
            &ns,
        )
        .await;
        assert_eq!(created.0, 201, "namespace {ns}: {:?}", created.1);
        let mut answers = Vec::new();
        for step in &case.steps {
            answers.push(send(&client, step, &ns).await);
        }
        all.push(answers);
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_server_answers_as_kube_apiserver_does() {
    if std::env::var_os(ASSETS_VARIABLE).is_none() {
        eprintln!(
            "differential: not run ({ASSETS_VARIABLE} is not set; scripts/test sets it where the real tier runs)"
        );
        return;
    }
    let cases = cases();
    let embedded = Cluster::start_on(Backend::Embedded).await.unwrap();
    let real = Cluster::start_on(Backend::Real).await.unwrap();
    let (ours, theirs) = tokio::join!(answers(&embedded, &cases), answers(&real, &cases));
    let accepted: BTreeMap<String, String> = include_str!("differential-accepted.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.split_once(" | ")
                .map(|(c, r)| (c.trim().to_owned(), r.trim().to_owned()))
        })
        .collect();
    let mut identical = 0;
    let mut new_differences = Vec::new();
    for ((case, ours), theirs) in cases.iter().zip(&ours).zip(&theirs) {
        if ours == theirs {
            identical += 1;
            if accepted.contains_key(&case.name) {
                new_differences.push(format!(
                    "{}: identical now; remove it from differential-accepted.txt",
                    case.name
                ));
            }
            continue;
        }
        if accepted.contains_key(&case.name) {
            continue;
        }
        let step = ours
            .iter()
            .zip(theirs)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        new_differences.push(format!(
            "{} (step {step}):\n  embedded: {} {}\n  real:     {} {}",
            case.name, ours[step].0, ours[step].1, theirs[step].0, theirs[step].1
        ));
    }
    let unknown: Vec<&String> = accepted
        .keys()
        .filter(|name| !cases.iter().any(|c| &c.name == *name))
        .collect();
    assert!(
        unknown.is_empty(),
        "differential-accepted.txt names no case: {unknown:?}"
    );
    println!(
        "differential: {} cases, {identical} identical ({:.0} %)",
        cases.len(),
        100.0 * identical as f64 / cases.len() as f64
    );
    assert!(
        new_differences.is_empty(),
        "{} differences not in differential-accepted.txt:\n{}",
        new_differences.len(),
        new_differences.join("\n")
    );
}
