//! Lifecycle: namespace deletion (Terminating, creates refused, finalisation), garbage
//! collection (owner references, foreground, background and orphan propagation,
//! `blockOwnerDeletion`), what each kind's DELETE answers, `dryRun=All` on every verb, and
//! deletecollection.

use http::Method;
use serde_json::{Value, json};

use crate::corpus::{Case, Step, config_map, delete, get, patch, post, put, step};

const CMS: &str = "/api/v1/namespaces/NS/configmaps";

/// A ConfigMap `name` owned by ConfigMap `owner` (whose uid the case remembered as `$OWNER`).
fn dependent(name: &str, owner: &str, extra: Value) -> Step {
    let mut reference =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": "$OWNER"});
    crate::corpus::merge(&mut reference, extra);
    post(
        CMS,
        config_map(name, json!({"metadata": {"ownerReferences": [reference]}})),
    )
}

/// ConfigMap `owner` with `finalizers` (none when empty), its uid remembered as `$OWNER`.
fn owner(finalizers: Value) -> Step {
    let extra = match finalizers.as_array().is_some_and(|f| !f.is_empty()) {
        true => json!({"metadata": {"finalizers": finalizers}}),
        false => json!({}),
    };
    post(CMS, config_map("owner", extra)).remember("$OWNER", "/metadata/uid")
}

fn delete_with(path: &str, options: Value) -> Step {
    let mut body = json!({"kind": "DeleteOptions", "apiVersion": "v1"});
    crate::corpus::merge(&mut body, options);
    step(Method::DELETE, path, Some(body))
}

fn gone(status: u16, _: &Value) -> bool {
    status == 404
}

/// The list of the namespace's ConfigMaps has exactly one item.
fn one_left(_: u16, answer: &Value) -> bool {
    answer["items"]
        .as_array()
        .is_some_and(|items| items.len() == 1)
}

/// No ConfigMap in the namespace still has an owner reference.
fn unowned(_: u16, answer: &Value) -> bool {
    answer["items"].as_array().is_some_and(|items| {
        items
            .iter()
            .all(|item| item["metadata"].get("ownerReferences").is_none())
    })
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let owner_path = format!("{CMS}/owner");
    // Garbage collection.
    for (label, options, wait) in [
        (
            "background",
            json!({"propagationPolicy": "Background"}),
            one_left as fn(u16, &Value) -> bool,
        ),
        ("default policy", json!({}), one_left),
        ("orphan", json!({"propagationPolicy": "Orphan"}), unowned),
        (
            "orphanDependents true",
            json!({"orphanDependents": true}),
            unowned,
        ),
        (
            "foreground",
            json!({"propagationPolicy": "Foreground"}),
            one_left,
        ),
    ] {
        cases.push(Case::new(
            format!("gc: {label}"),
            vec![
                owner(json!([])),
                dependent("d1", "owner", json!({})),
                dependent("d2", "owner", json!({"blockOwnerDeletion": true})),
                post(CMS, config_map("unrelated", json!({}))),
                delete_with(&owner_path, options),
                get(&owner_path).until(gone),
                get(CMS).until(wait),
            ],
        ));
    }
    cases.push(Case::new(
        "gc: foreground holds the owner while a blocking dependent stays",
        vec![
            owner(json!([])),
            post(CMS, config_map("d", json!({"metadata": {
                    "finalizers": ["example.com/hold"],
                    "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "$OWNER", "blockOwnerDeletion": true}]}}))),
            delete_with(&owner_path, json!({"propagationPolicy": "Foreground"})),
            get(format!("{CMS}/d")).until(|_, a| a["metadata"].get("deletionTimestamp").is_some()),
            get(&owner_path),
            patch(format!("{CMS}/d"), "application/merge-patch+json", json!({"metadata": {"finalizers": null}})),
            get(&owner_path).until(gone),
        ],
    ));
    cases.push(Case::new(
        "gc: propagationPolicy in the query",
        vec![
            owner(json!([])),
            dependent("d1", "owner", json!({})),
            delete(format!("{owner_path}?propagationPolicy=Orphan")),
            get(&owner_path).until(gone),
            get(CMS).until(unowned),
        ],
    ));
    cases.push(Case::new(
        "gc: an owner that never existed",
        vec![
            post(CMS, config_map("d", json!({"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "00000000-0000-0000-0000-000000000001"}]}}))),
            get(format!("{CMS}/d")).until(gone),
        ],
    ));
    cases.push(Case::new(
        "gc: one of two owners goes",
        vec![
            owner(json!([])),
            post(CMS, config_map("other", json!({}))).remember("$OTHER", "/metadata/uid"),
            post(
                CMS,
                config_map(
                    "d",
                    json!({"metadata": {"ownerReferences": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "$OWNER"},
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "$OTHER"}]}}),
                ),
            ),
            delete(owner_path.clone()),
            get(format!("{CMS}/d")).until(|_, a| {
                a["metadata"]["ownerReferences"]
                    .as_array()
                    .is_some_and(|r| r.len() == 1)
            }),
        ],
    ));
    cases.push(Case::new(
        "gc: orphan with a finalizer already present",
        vec![
            owner(json!(["orphan"])),
            dependent("d1", "owner", json!({})),
            delete(owner_path.clone()),
            get(&owner_path).until(gone),
            get(CMS).until(unowned),
        ],
    ));
    cases.push(Case::new(
        "create with empty finalizers",
        vec![post(
            CMS,
            config_map("e", json!({"metadata": {"finalizers": []}})),
        )],
    ));
    // What DELETE answers.
    for (label, finalizers, options) in [
        ("configmap", json!([]), json!({})),
        (
            "configmap with a finalizer",
            json!(["example.com/hold"]),
            json!({}),
        ),
        (
            "configmap foreground",
            json!([]),
            json!({"propagationPolicy": "Foreground"}),
        ),
        (
            "configmap orphan",
            json!([]),
            json!({"propagationPolicy": "Orphan"}),
        ),
        (
            "configmap gracePeriodSeconds 0",
            json!([]),
            json!({"gracePeriodSeconds": 0}),
        ),
        (
            "configmap orphanDependents false",
            json!([]),
            json!({"orphanDependents": false}),
        ),
        (
            "configmap both policy fields",
            json!([]),
            json!({"orphanDependents": true, "propagationPolicy": "Background"}),
        ),
        (
            "configmap resourceVersion precondition",
            json!([]),
            json!({"preconditions": {"resourceVersion": "1"}}),
        ),
    ] {
        cases.push(Case::new(
            format!("delete answers: {label}"),
            vec![owner(finalizers), delete_with(&owner_path, options)],
        ));
    }
    for (label, path, body) in [
        (
            "secret",
            "/api/v1/namespaces/NS/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}),
        ),
        (
            "serviceaccount",
            "/api/v1/namespaces/NS/serviceaccounts",
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "x"}}),
        ),
        (
            "lease",
            "/apis/coordination.k8s.io/v1/namespaces/NS/leases",
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "x"}}),
        ),
        (
            "role",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/NS/roles",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "x"}}),
        ),
        (
            "clusterrole",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "x-NS"}}),
        ),
        (
            "event",
            "/api/v1/namespaces/NS/events",
            json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "x"}, "involvedObject": {"namespace": "NS"}, "reason": "R"}),
        ),
    ] {
        let name = body["metadata"]["name"].as_str().unwrap().to_owned();
        cases.push(Case::new(
            format!("delete answers: {label}"),
            vec![post(path, body.clone()), delete(format!("{path}/{name}"))],
        ));
    }
    cases.push(Case::new(
        "delete answers: a namespace",
        vec![
            post(
                "/api/v1/namespaces",
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "NS-x"}}),
            ),
            delete("/api/v1/namespaces/NS-x"),
            get("/api/v1/namespaces/NS-x").until(gone),
        ],
    ));
    // Namespace deletion.
    cases.push(Case::new(
        "namespace: terminating refuses creates, then goes",
        vec![
            post(
                "/api/v1/namespaces",
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "NS-t"}}),
            ),
            post(
                "/api/v1/namespaces/NS-t/configmaps",
                config_map(
                    "held",
                    json!({"metadata": {"finalizers": ["example.com/hold"]}}),
                ),
            ),
            delete("/api/v1/namespaces/NS-t"),
            post(
                "/api/v1/namespaces/NS-t/configmaps",
                config_map("new", json!({})),
            ),
            get("/api/v1/namespaces/NS-t/configmaps/held")
                .until(|_, a| a["metadata"].get("deletionTimestamp").is_some()),
            get("/api/v1/namespaces/NS-t").until(|_, a| {
                a["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter().any(|c| {
                        c["type"] == "NamespaceFinalizersRemaining" && c["status"] == "True"
                    })
                })
            }),
            patch(
                "/api/v1/namespaces/NS-t/configmaps/held",
                "application/merge-patch+json",
                json!({"metadata": {"finalizers": null}}),
            ),
            get("/api/v1/namespaces/NS-t").until(gone),
        ],
    ));
    cases.push(Case::new(
        "namespace: delete twice",
        vec![
            post(
                "/api/v1/namespaces",
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "NS-d"}}),
            ),
            post(
                "/api/v1/namespaces/NS-d/configmaps",
                config_map(
                    "held",
                    json!({"metadata": {"finalizers": ["example.com/hold"]}}),
                ),
            ),
            delete("/api/v1/namespaces/NS-d"),
            // Deleted again once the namespace controller reported on it.
            delete("/api/v1/namespaces/NS-d").until(|_, a| {
                a["status"]["conditions"]
                    .as_array()
                    .is_some_and(|c| c.len() == 5)
            }),
            patch(
                "/api/v1/namespaces/NS-d/configmaps/held",
                "application/merge-patch+json",
                json!({"metadata": {"finalizers": null}}),
            ),
            get("/api/v1/namespaces/NS-d").until(gone),
        ],
    ));
    for name in ["default", "kube-system", "kube-public"] {
        cases.push(Case::new(
            format!("namespace: delete {name}"),
            vec![delete(format!("/api/v1/namespaces/{name}?dryRun=All"))],
        ));
    }
    cases.push(Case::new(
        "namespace: deletecollection",
        vec![delete("/api/v1/namespaces?labelSelector=none%3Dnone")],
    ));
    // dryRun=All on every verb.
    let cm = config_map("dry", json!({"data": {"k": "v"}}));
    for (label, steps) in [
        (
            "create",
            vec![
                post(format!("{CMS}?dryRun=All"), cm.clone()),
                get(format!("{CMS}/dry")),
            ],
        ),
        (
            "create invalid",
            vec![post(
                format!("{CMS}?dryRun=All"),
                config_map("Bad", json!({})),
            )],
        ),
        (
            "dryRun unknown value",
            vec![post(format!("{CMS}?dryRun=Some"), cm.clone())],
        ),
        (
            "put",
            vec![
                post(CMS, cm.clone()),
                put(
                    format!("{CMS}/dry?dryRun=All"),
                    config_map("dry", json!({"data": {"k": "new"}})),
                ),
                get(format!("{CMS}/dry")),
            ],
        ),
        (
            "merge patch",
            vec![
                post(CMS, cm.clone()),
                patch(
                    format!("{CMS}/dry?dryRun=All"),
                    "application/merge-patch+json",
                    json!({"data": {"k": "new"}}),
                ),
                get(format!("{CMS}/dry")),
            ],
        ),
        (
            "apply",
            vec![
                patch(
                    format!("{CMS}/dry?dryRun=All&fieldManager=m"),
                    "application/apply-patch+yaml",
                    cm.clone(),
                ),
                get(format!("{CMS}/dry")),
            ],
        ),
        (
            "delete",
            vec![
                post(CMS, cm.clone()),
                delete(format!("{CMS}/dry?dryRun=All")),
                get(format!("{CMS}/dry")),
            ],
        ),
        (
            "delete in the body",
            vec![
                post(CMS, cm.clone()),
                delete_with(&format!("{CMS}/dry"), json!({"dryRun": ["All"]})),
                get(format!("{CMS}/dry")),
            ],
        ),
        (
            "deletecollection",
            vec![
                post(CMS, cm.clone()),
                delete(format!("{CMS}?dryRun=All")),
                get(format!("{CMS}/dry")),
            ],
        ),
        (
            "namespace delete",
            vec![
                post(
                    "/api/v1/namespaces",
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "NS-dry"}}),
                ),
                delete("/api/v1/namespaces/NS-dry?dryRun=All"),
                get("/api/v1/namespaces/NS-dry"),
            ],
        ),
        (
            "create with generateName",
            vec![post(
                format!("{CMS}?dryRun=All"),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "g-"}}),
            )],
        ),
    ] {
        cases.push(Case::new(format!("dryRun: {label}"), steps));
    }
    // deletecollection.
    let labelled = |name: &str, app: &str| {
        post(
            CMS,
            config_map(name, json!({"metadata": {"labels": {"app": app}}})),
        )
    };
    for (label, query) in [
        ("all", ""),
        ("labelSelector", "?labelSelector=app%3Dweb"),
        ("fieldSelector", "?fieldSelector=metadata.name%3Da"),
        ("bad labelSelector", "?labelSelector=a%20b"),
        ("limit", "?limit=1"),
    ] {
        cases.push(Case::new(
            format!("deletecollection: {label}"),
            vec![
                labelled("a", "web"),
                labelled("b", "db"),
                delete(format!("{CMS}{query}")),
                get(CMS),
            ],
        ));
    }
    cases.push(Case::new(
        "deletecollection: with a finalizer",
        vec![
            post(
                CMS,
                config_map(
                    "held",
                    json!({"metadata": {"finalizers": ["example.com/hold"]}}),
                ),
            ),
            labelled("b", "db"),
            delete(CMS),
            get(CMS),
        ],
    ));
    cases.push(Case::new(
        "deletecollection: secrets",
        vec![
            post(
                "/api/v1/namespaces/NS/secrets",
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}),
            ),
            delete("/api/v1/namespaces/NS/secrets"),
            get("/api/v1/namespaces/NS/secrets"),
        ],
    ));
    cases
}
