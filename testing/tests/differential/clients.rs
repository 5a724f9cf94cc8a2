//! Client styles: the query parameters and headers as kubectl, client-go, the official Python
//! client and kopf send them, discovery (legacy and aggregated), `/version` and the health
//! endpoints.

use http::Method;
use serde_json::json;

use crate::corpus::{Case, Step, config_map, delete, get, patch, post, step};

const CMS: &str = "/api/v1/namespaces/NS/configmaps";

fn with_cm(steps: Vec<Step>) -> Vec<Step> {
    let mut all = vec![post(
        CMS,
        config_map("a", json!({"metadata": {"labels": {"app": "web"}}})),
    )];
    all.extend(steps);
    all
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // Query parameters as the clients spell them.
    for (label, query) in [
        // The Python client sends Python's booleans as it formats them.
        ("python watch=True", "watch=True&timeoutSeconds=1"),
        ("watch=1", "watch=1&timeoutSeconds=1"),
        ("watch=false is a list", "watch=false"),
        ("watch=0 is a list", "watch=0"),
        ("watch=TRUE", "watch=TRUE&timeoutSeconds=1"),
        // The query parameter codec's booleans are not strconv.ParseBool's: only `0` and `false`
        // in any case are false; `f`, `no` and the empty value are true.
        ("watch=t", "watch=t&timeoutSeconds=1"),
        ("watch=f is a watch", "watch=f&timeoutSeconds=1"),
        ("watch=no is a watch", "watch=no&timeoutSeconds=1"),
        ("watch= is a watch", "watch=&timeoutSeconds=1"),
        ("watch=False is a list", "watch=False"),
        ("watch=FALSE is a list", "watch=FALSE"),
        // kopf's watch: timeoutSeconds and allowWatchBookmarks as Python spells them.
        (
            "kopf watch",
            "watch=true&allowWatchBookmarks=True&timeoutSeconds=1",
        ),
        ("pretty=true", "pretty=true"),
        ("pretty=True", "pretty=True"),
        ("pretty=1", "pretty=1"),
        ("kubectl timeout=32s", "timeout=32s"),
        ("timeout not a duration", "timeout=soon"),
        ("client-go limit=500", "limit=500"),
        ("kubectl get -l", "labelSelector=app%3Dweb&limit=500"),
        (
            "empty parameters",
            "labelSelector=&fieldSelector=&resourceVersion=",
        ),
        ("an unknown parameter", "frobnicate=yes"),
        (
            "resourceVersion= and watch",
            "watch=true&resourceVersion=&timeoutSeconds=1",
        ),
    ] {
        cases.push(Case::new(
            format!("client: {label}"),
            with_cm(vec![get(format!("{CMS}?{query}"))]),
        ));
    }
    // Headers.
    for (label, name, value) in [
        (
            "Accept: application/json, */*",
            "Accept",
            "application/json, */*",
        ),
        ("Accept: */*", "Accept", "*/*"),
        (
            "Accept with protobuf first",
            "Accept",
            "application/vnd.kubernetes.protobuf;q=0.5, application/json",
        ),
        (
            "kubectl User-Agent",
            "User-Agent",
            "kubectl/v1.34.0 (linux/amd64) kubernetes/abcdef",
        ),
        (
            "python User-Agent",
            "User-Agent",
            "OpenAPI-Generator/31.0.0/python",
        ),
    ] {
        cases.push(Case::new(
            format!("client header: {label}"),
            with_cm(vec![get(format!("{CMS}/a")).header(name, value)]),
        ));
    }
    // Writes as the clients send them.
    cases.push(Case::new(
        "client: kubectl client-side apply",
        vec![
            post(format!("{CMS}?fieldManager=kubectl-client-side-apply&fieldValidation=Strict"), config_map("a", json!({"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}}}))),
            patch(
                format!("{CMS}/a?fieldManager=kubectl-client-side-apply&fieldValidation=Strict"),
                "application/strategic-merge-patch+json",
                json!({"data": {"k": "v"}}),
            ),
        ],
    ));
    cases.push(Case::new(
        "client: kubectl server-side apply",
        vec![patch(
            format!("{CMS}/a?fieldManager=kubectl&fieldValidation=Strict&force=true"),
            "application/apply-patch+yaml",
            config_map("a", json!({"data": {"k": "v"}})),
        )],
    ));
    cases.push(Case::new(
        "client: fieldManager too long",
        vec![post(
            format!("{CMS}?fieldManager={}", "m".repeat(129)),
            config_map("a", json!({})),
        )],
    ));
    cases.push(Case::new(
        "client: fieldValidation unknown",
        vec![post(
            format!("{CMS}?fieldValidation=Loose"),
            config_map("a", json!({})),
        )],
    ));
    cases.push(Case::new(
        "client: strict with an unknown field",
        vec![post(
            format!("{CMS}?fieldValidation=Strict"),
            config_map("a", json!({"spec": {"x": 1}})),
        )],
    ));
    for (label, path, body) in [
        (
            "propagationPolicy in the body (python)",
            format!("{CMS}/a"),
            Some(json!({"propagationPolicy": "Foreground"})),
        ),
        (
            "propagationPolicy in the query (kubectl)",
            format!("{CMS}/a?propagationPolicy=Background"),
            None,
        ),
        (
            "gracePeriodSeconds in the query",
            format!("{CMS}/a?gracePeriodSeconds=0"),
            None,
        ),
        (
            "gracePeriodSeconds in the body",
            format!("{CMS}/a"),
            Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0})),
        ),
        (
            "gracePeriodSeconds not a number",
            format!("{CMS}/a?gracePeriodSeconds=now"),
            None,
        ),
        (
            "both body and query",
            format!("{CMS}/a?propagationPolicy=Orphan"),
            Some(
                json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Foreground"}),
            ),
        ),
        (
            "DeleteOptions of meta.k8s.io/v1",
            format!("{CMS}/a"),
            Some(
                json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "propagationPolicy": "Orphan"}),
            ),
        ),
        ("empty body object", format!("{CMS}/a"), Some(json!({}))),
        (
            "orphanDependents in the query",
            format!("{CMS}/a?orphanDependents=true"),
            None,
        ),
    ] {
        cases.push(Case::new(
            format!("client delete: {label}"),
            // The collector's work on the object is its own time: the case waits for the end.
            with_cm(vec![
                step(Method::DELETE, path, body),
                get(format!("{CMS}/a")).until(|status, _| status != 200),
            ]),
        ));
    }
    // orphanDependents as the Python client (`True`) and others spell it: any value but `0` and
    // `false` in any case orphans (the answer is the object, held by the `orphan` finalizer),
    // `f` and `yes` too.
    for value in [
        "True", "TRUE", "1", "t", "f", "yes", "", "False", "FALSE", "0",
    ] {
        cases.push(Case::new(
            format!("client delete: orphanDependents={value} in the query"),
            with_cm(vec![
                delete(format!("{CMS}/a?orphanDependents={value}")),
                get(format!("{CMS}/a")).until(|status, _| status != 200),
            ]),
        ));
    }
    // Discovery.
    for (label, path, accept) in [
        ("/api/v1", "/api/v1", None),
        ("/apis", "/apis", None),
        (
            "/apis/rbac.authorization.k8s.io",
            "/apis/rbac.authorization.k8s.io",
            None,
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1",
            "/apis/rbac.authorization.k8s.io/v1",
            None,
        ),
        ("/apis/events.k8s.io/v1", "/apis/events.k8s.io/v1", None),
        (
            "/apis/coordination.k8s.io",
            "/apis/coordination.k8s.io",
            None,
        ),
        (
            "/apis/authorization.k8s.io/v1",
            "/apis/authorization.k8s.io/v1",
            None,
        ),
        (
            "/apis/authentication.k8s.io/v1",
            "/apis/authentication.k8s.io/v1",
            None,
        ),
        (
            "unknown version",
            "/apis/rbac.authorization.k8s.io/v9",
            None,
        ),
        (
            "aggregated /apis",
            "/apis",
            Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
        ),
        (
            "aggregated /api",
            "/api",
            Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"),
        ),
        (
            "aggregated or legacy",
            "/api",
            Some(
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
            ),
        ),
        ("/healthz", "/healthz", None),
        ("/readyz", "/readyz", None),
        ("/livez", "/livez", None),
        ("/healthz/ping", "/healthz/ping", None),
        ("/healthz?verbose", "/healthz?verbose", None),
        ("/readyz unknown check", "/readyz/nothing", None),
    ] {
        let mut s = get(path);
        if let Some(accept) = accept {
            s = s.header("Accept", accept);
        }
        cases.push(Case::new(format!("discovery: {label}"), vec![s]));
    }
    cases.push(Case::new("version", vec![get("/version")]));
    cases
}
