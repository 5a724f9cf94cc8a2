//! Watches: the events of a stream ended by `timeoutSeconds=1` (the whole answer, parsed as an
//! array), from no resourceVersion, `0`, a remembered one and a too-old one; bookmarks;
//! streaming lists (`sendInitialEvents`) and their `k8s.io/initial-events-end` bookmark;
//! selectors; bad parameters.
//!
//! Bookmarks other than the initial-events-end one are timing: both servers send them at
//! intervals far longer than the one-second streams here (kube-apiserver's watch cache about
//! once a minute, and not in a watch's last two seconds; the embedded server every 10 s), so a
//! stream here holds none — no normalisation is needed, and a case that saw one would fail
//! loudly rather than pass by accident.

use serde_json::json;

use crate::corpus::{self, Case, Step, config_map, encode, get, patch, post};

/// The namespace's ConfigMaps.
const CMS: &str = "/api/v1/namespaces/NS/configmaps";

/// A create of ConfigMap `name` labelled `app=<app>` in the case's namespace.
pub fn create(name: &str, app: &str) -> Step {
    post(
        CMS,
        config_map(
            name,
            json!({"metadata": {"labels": {"app": app}}, "data": {"k": "v"}}),
        ),
    )
}

/// A one-second watch of the namespace's ConfigMaps with `query` added.
fn watch(query: &str) -> Step {
    get(format!("{CMS}?watch=true&timeoutSeconds=1{query}"))
}

/// A change of ConfigMap `name`'s data.
fn change(name: &str) -> Step {
    patch(
        format!("{CMS}/{name}"),
        "application/merge-patch+json",
        json!({"data": {"k": "changed"}}),
    )
}

/// Relabels ConfigMap `name` `app=<app>`.
fn relabel(name: &str, app: &str) -> Step {
    patch(
        format!("{CMS}/{name}"),
        "application/merge-patch+json",
        json!({"metadata": {"labels": {"app": app}}}),
    )
}

fn delete(name: &str) -> Step {
    corpus::delete(format!("{CMS}/{name}"))
}

/// Two ConfigMaps, `a` (app=web) and `b` (app=db), the last remembered as `$RV`'s point: `a`
/// is created, then `$RV` is taken from it, then `b`, a change of `a` and the deletion of `b`.
fn history() -> Vec<Step> {
    vec![
        create("a", "web").remember("$RV", "/metadata/resourceVersion"),
        create("b", "db"),
        change("a"),
        delete("b"),
    ]
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // Watches of the current state (no resourceVersion, or 0: ADDED for what exists).
    for (label, query) in [
        ("watch: empty namespace", ""),
        ("watch: resourceVersion 0 on nothing", "&resourceVersion=0"),
        ("watch: bookmarks on nothing", "&allowWatchBookmarks=true"),
    ] {
        cases.push(Case::new(label, vec![watch(query)]));
    }
    for (label, query) in [
        ("watch: existing objects", ""),
        ("watch: existing objects from 0", "&resourceVersion=0"),
        (
            "watch: existing objects with bookmarks",
            "&allowWatchBookmarks=true",
        ),
        (
            "watch: existing objects from 0 with bookmarks",
            "&resourceVersion=0&allowWatchBookmarks=true",
        ),
        ("watch: labelSelector app=web", "&labelSelector=app%3Dweb"),
        (
            "watch: labelSelector app!=web",
            "&labelSelector=app%21%3Dweb",
        ),
        (
            "watch: labelSelector app in (web)",
            "&labelSelector=app+in+%28web%29",
        ),
        ("watch: labelSelector !app", "&labelSelector=%21app"),
        (
            "watch: fieldSelector metadata.name=b",
            "&fieldSelector=metadata.name%3Db",
        ),
        (
            "watch: fieldSelector metadata.name!=b",
            "&fieldSelector=metadata.name%21%3Db",
        ),
        (
            "watch: both selectors",
            "&labelSelector=app%3Dweb&fieldSelector=metadata.name%3Da",
        ),
        ("watch: pretty", "&pretty=true"),
        ("watch: limit is ignored", "&limit=1"),
    ] {
        cases.push(Case::new(
            label,
            vec![create("a", "web"), create("b", "db"), watch(query)],
        ));
    }
    // Watches from a remembered resourceVersion: the changes after it.
    for (label, query) in [
        (
            "watch from rv: the changes after it",
            "&resourceVersion=$RV",
        ),
        (
            "watch from rv: with bookmarks",
            "&resourceVersion=$RV&allowWatchBookmarks=true",
        ),
        (
            "watch from rv: labelSelector app=db",
            "&resourceVersion=$RV&labelSelector=app%3Ddb",
        ),
        (
            "watch from rv: labelSelector app=web",
            "&resourceVersion=$RV&labelSelector=app%3Dweb",
        ),
        (
            "watch from rv: fieldSelector metadata.name=a",
            "&resourceVersion=$RV&fieldSelector=metadata.name%3Da",
        ),
        (
            "watch from rv: streaming list from it",
            "&resourceVersion=$RV&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
        ),
    ] {
        let mut steps = history();
        steps.push(watch(query));
        cases.push(Case::new(label, steps));
    }
    // Objects entering and leaving a selector: ADDED and DELETED.
    cases.push(Case::new(
        "watch from rv: relabelled out of and into a selector",
        vec![
            create("a", "web").remember("$RV", "/metadata/resourceVersion"),
            create("b", "web"),
            relabel("a", "db"),
            relabel("b", "db"),
            relabel("a", "web"),
            watch("&resourceVersion=$RV&labelSelector=app%3Dweb"),
        ],
    ));
    cases.push(Case::new(
        "watch from rv: a write that changes nothing",
        vec![
            create("a", "web").remember("$RV", "/metadata/resourceVersion"),
            relabel("a", "web"),
            change("a"),
            change("a"),
            watch("&resourceVersion=$RV"),
        ],
    ));
    cases.push(Case::new(
        "watch from rv: the current resourceVersion",
        vec![
            create("a", "web"),
            get(CMS).remember("$RV", "/metadata/resourceVersion"),
            watch("&resourceVersion=$RV"),
        ],
    ));
    cases.push(Case::new(
        "watch from rv: a deletion with finalizers",
        vec![
            post(
                CMS,
                config_map(
                    "f",
                    json!({"metadata": {"finalizers": ["example.com/hold"]}}),
                ),
            )
            .remember("$RV", "/metadata/resourceVersion"),
            delete("f"),
            patch(
                format!("{CMS}/f"),
                "application/merge-patch+json",
                json!({"metadata": {"finalizers": null}}),
            ),
            watch("&resourceVersion=$RV"),
        ],
    ));
    // Too old: resourceVersion 1 is long compacted out of both servers' history.
    for (label, query) in [
        ("watch: resourceVersion 1 is too old", "&resourceVersion=1"),
        (
            "watch: resourceVersion 1 with bookmarks",
            "&resourceVersion=1&allowWatchBookmarks=true",
        ),
    ] {
        cases.push(Case::new(label, vec![create("a", "web"), watch(query)]));
    }
    // Streaming lists.
    for (label, query) in [
        (
            "streaming list",
            "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
        ),
        (
            "streaming list from 0",
            "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=0",
        ),
        (
            "streaming list with a labelSelector",
            "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=app%3Ddb",
        ),
        (
            "streaming list without bookmarks",
            "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
        ),
        (
            "streaming list without resourceVersionMatch",
            "&sendInitialEvents=true&allowWatchBookmarks=true",
        ),
        (
            "streaming list with resourceVersionMatch Exact",
            "&sendInitialEvents=true&resourceVersionMatch=Exact&allowWatchBookmarks=true",
        ),
        (
            "streaming list sendInitialEvents=false",
            "&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
        ),
        (
            "streaming list sendInitialEvents=false from 0",
            "&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=0",
        ),
        // The booleans as clients spell them (the Python client's `True`), read by the query
        // parameter codec: false only for `0` and `false` in any case.
        (
            "streaming list sendInitialEvents=True",
            "&sendInitialEvents=True&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=True",
        ),
        (
            "streaming list sendInitialEvents=yes",
            "&sendInitialEvents=yes&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=yes",
        ),
        (
            "streaming list sendInitialEvents=f",
            "&sendInitialEvents=f&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=t",
        ),
        (
            "streaming list sendInitialEvents=FALSE",
            "&sendInitialEvents=FALSE&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=1",
        ),
        (
            "watch with resourceVersionMatch NotOlderThan",
            "&resourceVersionMatch=NotOlderThan",
        ),
        (
            "watch with resourceVersionMatch Exact",
            "&resourceVersionMatch=Exact&resourceVersion=0",
        ),
    ] {
        cases.push(Case::new(
            label,
            vec![create("a", "web"), create("b", "db"), watch(query)],
        ));
    }
    cases.push(Case::new(
        "streaming list of nothing",
        vec![watch(
            "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
        )],
    ));
    // Bad parameters.
    for (label, query) in [
        ("watch: timeoutSeconds not a number", "&timeoutSeconds=soon"),
        (
            "watch: resourceVersion not a number",
            "&resourceVersion=abc",
        ),
        ("watch: bad labelSelector", "&labelSelector=a%20b"),
        (
            "watch: unknown fieldSelector field",
            "&fieldSelector=data.k%3Dv",
        ),
        (
            "watch: allowWatchBookmarks not a bool",
            "&allowWatchBookmarks=maybe",
        ),
        (
            "watch: sendInitialEvents not a bool",
            "&sendInitialEvents=maybe",
        ),
    ] {
        cases.push(Case::new(label, vec![create("a", "web"), watch(query)]));
    }
    cases.push(Case::new(
        "watch: watch=maybe",
        vec![get(format!("{CMS}?watch=maybe&timeoutSeconds=1"))],
    ));
    // Other scopes and kinds.
    cases.push(Case::new(
        "watch: all namespaces by label",
        vec![
            post(
                CMS,
                config_map("a", json!({"metadata": {"labels": {"case": "NS"}}})),
            ),
            get(format!(
                "/api/v1/configmaps?watch=true&timeoutSeconds=1&labelSelector={}",
                encode("case=NS")
            )),
        ],
    ));
    cases.push(Case::new(
        "watch: the namespace itself",
        vec![get(format!(
            "/api/v1/namespaces?watch=true&timeoutSeconds=1&fieldSelector={}",
            encode("metadata.name=NS")
        ))],
    ));
    cases.push(Case::new(
        "watch: secrets",
        vec![
            post("/api/v1/namespaces/NS/secrets", json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}})),
            get("/api/v1/namespaces/NS/secrets?watch=true&timeoutSeconds=1"),
        ],
    ));
    cases.push(Case::new(
        "watch: as Table",
        vec![
            create("a", "web"),
            watch("").header("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"),
        ],
    ));
    cases.push(Case::new(
        "watch: as PartialObjectMetadata",
        vec![
            create("a", "web"),
            watch("").header(
                "Accept",
                "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
            ),
        ],
    ));
    cases
}
