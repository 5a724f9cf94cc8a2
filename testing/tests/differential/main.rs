//! The differential corpus: the same requests sent to the embedded server and to a real
//! kube-apiserver, their answers compared once what legitimately differs is normalised (uids,
//! timestamps, resourceVersion values, generated name suffixes, server versions). Prints
//! `differential: N cases, M identical`; a difference fails the test unless
//! `tests/differential/accepted.txt` lists the case with its reason.
//!
//! Runs where the real tier runs (`KUBEBUILDER_ASSETS` set, as `scripts/test` sets it); elsewhere
//! it says in one line that it did not run.
//!
//! `KUBEWARD_DIFF_ONLY=<substring>` runs only the cases whose name contains it (to iterate on a
//! few cases; the accepted list is then checked only for the cases run); `KUBEWARD_DIFF_SHOW=1`
//! also prints the accepted differences.
//!
//! An answer is the status code, the `Warning` headers (unknown fields, deprecations) and the
//! normalised body.
//!
//! Layout: `corpus.rs` is the vocabulary of cases (requests, helpers); every other module is one
//! area of the API and returns its cases from `cases()`; `accepted.txt` lists the accepted
//! differences.

mod access;
mod apply;
mod batch;
mod builtins;
mod clients;
mod corpus;
mod crds;
mod deployments;
mod events;
mod lifecycle;
mod lists;
mod networking;
mod pods;
mod policy;
mod protobuf;
mod services;
mod storage;
mod validation;
mod watch;
mod workloads;

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use http::{Method, Request};
use kubeward_testing::{ASSETS_VARIABLE, Backend, Cluster};
use serde_json::{Value, json};

use corpus::{Case, Step, step};

/// Every area's cases, in order.
fn cases() -> Vec<Case> {
    let cases: Vec<Case> = [
        builtins::cases(),
        crds::cases(),
        deployments::cases(),
        pods::cases(),
        apply::cases(),
        validation::cases(),
        watch::cases(),
        lists::cases(),
        events::cases(),
        access::cases(),
        lifecycle::cases(),
        clients::cases(),
        workloads::cases(),
        batch::cases(),
        // After the watch cases: what runs before them ages the real watch cache's history.
        services::cases(),
        protobuf::cases(),
        policy::cases(),
        networking::cases(),
        // Last: its default StorageClass, deleted at once, would default the claims after it.
        storage::cases(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut names = HashSet::new();
    for case in &cases {
        assert!(
            names.insert(&case.name),
            "two cases are named {:?}",
            case.name
        );
    }
    cases
}

/// The cases `KUBEWARD_DIFF_ONLY` selects (all without it).
fn selected(cases: &[Case]) -> Vec<&Case> {
    let only = std::env::var("KUBEWARD_DIFF_ONLY").unwrap_or_default();
    cases.iter().filter(|c| c.name.contains(&only)).collect()
}

/// What is compared of an answer.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    /// The `Warning` headers, in order.
    warnings: Vec<String>,
    body: Value,
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:?} {}", self.status, self.warnings, self.body)
    }
}

/// The answer to `step` (the last one, if it has an `until`); a stream of JSON values, as a
/// watch answers, is an array of them. What the step remembers of the raw answer goes into
/// `bindings`, for the case's later steps.
async fn send(
    client: &kube::Client,
    step: &Step,
    ns: &str,
    bindings: &mut BTreeMap<&'static str, String>,
) -> Answer {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (status, warnings, raw) = send_once(client, step, ns, bindings).await;
        let answer = Answer {
            status,
            warnings,
            body: normalise_allocations(normalise(raw.clone(), ns, generate_name(step)), step),
        };
        match step.until {
            Some(done)
                if !done(answer.status, &answer.body) && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            _ => {
                for (name, pointer) in &step.remember {
                    let value = match raw.pointer(pointer) {
                        Some(Value::String(text)) => text.clone(),
                        Some(other) => other.to_string(),
                        None => panic!("{name}: the answer has no {pointer}: {raw}"),
                    };
                    bindings.insert(name, value);
                }
                return answer;
            }
        }
    }
}

/// `text` with the case's namespace for `NS` and every remembered value for its name
/// (percent-encoded in paths).
fn substitute(
    text: &str,
    ns: &str,
    bindings: &BTreeMap<&'static str, String>,
    in_path: bool,
) -> String {
    let mut text = text.replace("NS", ns);
    for (name, value) in bindings {
        let value = if in_path {
            corpus::encode(value)
        } else {
            value.clone()
        };
        text = text.replace(name, &value);
    }
    text
}

async fn send_once(
    client: &kube::Client,
    step: &Step,
    ns: &str,
    bindings: &BTreeMap<&'static str, String>,
) -> (u16, Vec<String>, Value) {
    let path = substitute(&step.path, ns, bindings, true);
    let body = match &step.body {
        None => Vec::new(),
        Some(Value::String(hex)) if step.content_type == corpus::PROTOBUF => corpus::unhex(hex),
        Some(Value::String(raw)) => substitute(raw, ns, bindings, false).into_bytes(),
        Some(value) => {
            substitute(&serde_json::to_string(value).unwrap(), ns, bindings, false).into_bytes()
        }
    };
    let mut request = Request::builder()
        .method(step.method.clone())
        .uri(path)
        .header(http::header::CONTENT_TYPE, step.content_type);
    if !step
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("accept"))
    {
        request = request.header(http::header::ACCEPT, "application/json");
    }
    for (name, value) in &step.headers {
        request = request.header(*name, substitute(value, ns, bindings, false));
    }
    let request = request.body(body).unwrap();
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .expect("answered");
    let status = response.status().as_u16();
    let warnings = response
        .headers()
        .get_all("warning")
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).replace(ns, "NS"))
        .collect();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    (status, warnings, parse(&bytes))
}

/// A JSON value, an array of the JSON values of a stream, or the text.
fn parse(bytes: &[u8]) -> Value {
    if let Ok(value) = serde_json::from_slice(bytes) {
        return value;
    }
    let stream: Result<Vec<Value>, _> = serde_json::Deserializer::from_slice(bytes)
        .into_iter::<Value>()
        .collect();
    match stream {
        Ok(values) if !values.is_empty() => Value::Array(values),
        _ => Value::String(String::from_utf8_lossy(bytes).into_owned()),
    }
}

/// Removes what legitimately differs between two servers.
/// The `metadata.generateName` of `step`'s body, if it has one.
fn generate_name(step: &Step) -> Option<String> {
    let body = match &step.body {
        Some(Value::String(raw)) => serde_json::from_str(raw).ok()?,
        Some(value) => value.clone(),
        None => return None,
    };
    body.pointer("/metadata/generateName")?
        .as_str()
        .map(str::to_owned)
}

/// What differs in every answer's text by chance: uids, the resourceVersion a conflict or a
/// quoted object carries, timestamps, and the random suffix of a name generated from `generate_name` (quoted in a message, or a
/// whole value).
fn normalise_text(text: &str, generate_name: Option<&str>) -> String {
    use std::sync::LazyLock;
    static UID: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap()
    });
    static RECORD_RV: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"in record \(\d+\)").unwrap());
    // An object quoted in a message (a strict patch's patched document) carries its own.
    static QUOTED_RV: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r#"\\"resourceVersion\\":\\"\d+\\""#).unwrap());
    static TIME: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z").unwrap()
    });
    let mut text = UID.replace_all(text, "<uid>").into_owned();
    text = RECORD_RV
        .replace_all(&text, "in record (<rv>)")
        .into_owned();
    text = QUOTED_RV
        .replace_all(&text, r#"\"resourceVersion\":\"<rv>\""#)
        .into_owned();
    text = TIME.replace_all(&text, "<time>").into_owned();
    // A YAML answer's own resourceVersion.
    static YAML_RV: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r#"resourceVersion: "\d+""#).unwrap());
    text = YAML_RV
        .replace_all(&text, r#"resourceVersion: "<rv>""#)
        .into_owned();
    if let Some(prefix) = generate_name {
        let generated = regex::Regex::new(&format!(
            r#"(^|"){}[bcdfghjklmnpqrstvwxz2456789]{{5}}("|$)"#,
            regex::escape(prefix)
        ))
        .unwrap();
        text = generated
            .replace_all(&text, format!("${{1}}{prefix}<generated>${{2}}"))
            .into_owned();
    }
    text
}

fn normalise(mut value: Value, ns: &str, generate_name: Option<String>) -> Value {
    fn walk(value: &mut Value, ns: &str, generate_name: Option<&str>) {
        match value {
            Value::Object(map) => {
                for key in [
                    "uid",
                    "creationTimestamp",
                    "resourceVersion",
                    "deletionTimestamp",
                    "selfLink",
                    "continue",
                    "remainingItemCount",
                    "serverAddress",
                    "lastTransitionTime",
                ] {
                    if let Some(v) = map.get_mut(key) {
                        *v = Value::String("<normalised>".into());
                    }
                }
                // managedFields are compared but for each entry's time (and so the order
                // entries of different seconds sort in), and the uids in owner-reference keys.
                if let Some(Value::Array(entries)) = map.get_mut("managedFields") {
                    for entry in entries.iter_mut().filter_map(Value::as_object_mut) {
                        if entry.contains_key("time") {
                            entry.insert("time".into(), Value::String("<normalised>".into()));
                        }
                        if let Some(fields) = entry.get_mut("fieldsV1") {
                            normalise_uid_keys(fields);
                        }
                    }
                    entries.sort_by_key(|entry| {
                        ["operation", "manager", "apiVersion", "subresource"]
                            .map(|key| entry[key].as_str().unwrap_or_default().to_owned())
                    });
                }
                // `/version`: the build's strings (the versions compared are major and minor).
                if map.contains_key("gitVersion") && map.contains_key("goVersion") {
                    for key in [
                        "gitVersion",
                        "gitCommit",
                        "gitTreeState",
                        "buildDate",
                        "goVersion",
                        "compiler",
                        "platform",
                    ] {
                        map.insert(key.into(), Value::String("<normalised>".into()));
                    }
                }
                // A Table row's age (`0s`, `1s`) is timing.
                if let Some(Value::Array(cells)) = map.get_mut("cells") {
                    for cell in cells {
                        if cell.as_str().is_some_and(is_age) {
                            *cell = Value::String("<age>".into());
                        }
                    }
                }
                if let Some(Value::String(name)) = map.get("name").cloned()
                    && let Some(Value::String(prefix)) = map.get("generateName")
                    && name.starts_with(prefix.as_str())
                {
                    map.insert("name".into(), Value::String(format!("{prefix}<generated>")));
                }
                for v in map.values_mut() {
                    walk(v, ns, generate_name);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, ns, generate_name)),
            Value::String(text) => {
                *text = normalise_text(&text.replace(ns, "NS"), generate_name);
            }
            _ => {}
        }
    }
    walk(&mut value, ns, generate_name.as_deref());
    value
}

/// The cluster IPs (in the real tier's `--service-cluster-ip-range`, 10.0.0.0/24) and node ports
/// (in the default range, 30000-32767) a server allocated for `step`: kube-apiserver picks them at
/// random, the embedded server lowest first, so those the step's body did not ask for are
/// compared by their shape (allocated, in range). A value out of range stays as it is.
fn normalise_allocations(mut value: Value, step: &Step) -> Value {
    use std::sync::LazyLock;
    static IP: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"^10\.0\.0\.(\d+)$").unwrap());
    static PORTS: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"(\d+):(3\d{4})/").unwrap());
    let requested = step
        .body
        .as_ref()
        .map(|b| match b {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default();
    let ip = |text: &str| IP.is_match(text) && !requested.contains(&format!("\"{text}\""));
    let port = |n: i64| (30000..=32767).contains(&n) && !requested.contains(&n.to_string());
    fn walk(v: &mut Value, ip: &dyn Fn(&str) -> bool, port: &dyn Fn(i64) -> bool) {
        match v {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    match (key.as_str(), &mut *v) {
                        ("clusterIP", Value::String(s)) if ip(s) => {
                            *s = "<allocated cluster IP>".into();
                        }
                        ("clusterIPs", Value::Array(items)) => {
                            for item in items {
                                if item.as_str().is_some_and(ip) {
                                    *item = json!("<allocated cluster IP>");
                                }
                            }
                        }
                        ("nodePort" | "healthCheckNodePort", Value::Number(n))
                            if n.as_i64().is_some_and(port) =>
                        {
                            *v = json!("<allocated node port>");
                        }
                        ("cells", Value::Array(cells)) => {
                            for cell in cells {
                                if let Value::String(s) = cell {
                                    if ip(s) {
                                        *s = "<allocated cluster IP>".into();
                                    } else {
                                        *s = PORTS
                                            .replace_all(s, |c: &regex::Captures| {
                                                match c[2].parse().is_ok_and(port) {
                                                    true => format!("{}:<node port>/", &c[1]),
                                                    false => c[0].to_owned(),
                                                }
                                            })
                                            .into_owned();
                                    }
                                }
                            }
                        }
                        _ => walk(v, ip, port),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, ip, port)),
            _ => {}
        }
    }
    walk(&mut value, &ip, &port);
    value
}

/// A field set's `k:{"uid":"…"}` keys (owner references) with the uid normalised.
fn normalise_uid_keys(fields: &mut Value) {
    if let Value::Object(map) = fields {
        let entries = std::mem::take(map);
        for (key, mut value) in entries {
            normalise_uid_keys(&mut value);
            let key = match key.strip_prefix("k:{\"uid\":\"") {
                Some(_) => "k:{\"uid\":\"<normalised>\"}".to_owned(),
                None => key,
            };
            map.insert(key, value);
        }
    }
}

/// Whether `text` is an age as kubectl's printers write it (`5s`, `3m2s`, `4d`).
fn is_age(text: &str) -> bool {
    !text.is_empty()
        && text.ends_with(['s', 'm', 'h', 'd', 'y'])
        && text
            .chars()
            .all(|c| c.is_ascii_digit() || "smhdy".contains(c))
        && text.starts_with(|c: char| c.is_ascii_digit())
}

/// The answers of every case on `cluster`, in order.
async fn answers(cluster: &Cluster, cases: &[&Case]) -> Vec<Vec<Answer>> {
    let client = cluster.client().unwrap();
    let mut all = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        let ns = format!("diff-{index}");
        let mut bindings = BTreeMap::new();
        let created = send(
            &client,
            &step(
                Method::POST,
                "/api/v1/namespaces",
                Some(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})),
            ),
            &ns,
            &mut bindings,
        )
        .await;
        assert_eq!(created.status, 201, "namespace {ns}: {created}");
        for step in &case.setup {
            // A fixture already there (a CRD shared with an earlier case) is fine.
            let answer = send(&client, step, &ns, &mut bindings).await;
            assert!(
                answer.status < 400 || answer.status == 409,
                "case {:?}: setup {} {} failed: {answer}",
                case.name,
                step.method,
                step.path
            );
        }
        let mut answers = Vec::new();
        for step in &case.steps {
            answers.push(send(&client, step, &ns, &mut bindings).await);
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
    let all = cases();
    let cases = selected(&all);
    let embedded = Cluster::start_on(Backend::Embedded).await.unwrap();
    let real = Cluster::start_on(Backend::Real).await.unwrap();
    let (ours, theirs) = tokio::join!(answers(&embedded, &cases), answers(&real, &cases));
    let accepted: BTreeMap<String, String> = include_str!("accepted.txt")
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
            // A case whose real answer varies from run to run may match by chance.
            let varies = accepted
                .get(&case.name)
                .is_some_and(|why| why.starts_with("nondeterministic"));
            if accepted.contains_key(&case.name) && !varies {
                new_differences.push(format!(
                    "{}: identical now; remove it from accepted.txt",
                    case.name
                ));
            }
            continue;
        }
        let step = ours
            .iter()
            .zip(theirs)
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        if accepted.contains_key(&case.name) {
            if std::env::var_os("KUBEWARD_DIFF_SHOW").is_some() {
                println!(
                    "accepted: {} (step {step}):\n  embedded: {}\n  real:     {}",
                    case.name, ours[step], theirs[step]
                );
            }
            continue;
        }
        new_differences.push(format!(
            "{} (step {step}):\n  embedded: {}\n  real:     {}",
            case.name, ours[step], theirs[step]
        ));
    }
    let unknown: Vec<&String> = accepted
        .keys()
        .filter(|name| !all.iter().any(|c| &c.name == *name))
        .collect();
    assert!(
        unknown.is_empty(),
        "accepted.txt names no case: {unknown:?}"
    );
    println!(
        "differential: {} cases, {identical} identical ({:.0} %)",
        cases.len(),
        100.0 * identical as f64 / cases.len() as f64
    );
    assert!(
        new_differences.is_empty(),
        "{} differences not in accepted.txt:\n{}",
        new_differences.len(),
        new_differences.join("\n")
    );
}
