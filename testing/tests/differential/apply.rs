//! Server-side apply: creation by apply, managedFields, conflicts between managers and `force`,
//! lists merged by their list type (sets, maps by key), `fieldManager` rules, apply on a custom
//! resource and on its status.

use serde_json::{Value, json};

use crate::corpus::{APPLY, Case, Step, config_map, get, patch, post};
use crate::crds::Fixture;

const CMS: &str = "/api/v1/namespaces/NS/configmaps";

/// An apply of `body` to `path` as `manager` (with `force`).
fn apply(path: &str, manager: &str, force: bool, body: Value) -> Step {
    let mut query = format!("fieldManager={manager}");
    if force {
        query.push_str("&force=true");
    }
    patch(format!("{path}?{query}"), APPLY, body)
}

/// An apply of ConfigMap `a` with `extra` as `manager`.
fn apply_cm(manager: &str, force: bool, extra: Value) -> Step {
    apply(&format!("{CMS}/a"), manager, force, config_map("a", extra))
}

fn get_cm() -> Step {
    get(format!("{CMS}/a"))
}

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut add = |label: &str, steps: Vec<Step>| {
        cases.push(Case::new(format!("apply: {label}"), steps));
    };
    add(
        "create",
        vec![apply_cm("m", false, json!({"data": {"k": "v"}})), get_cm()],
    );
    add(
        "without fieldManager",
        vec![patch(
            format!("{CMS}/a"),
            APPLY,
            config_map("a", json!({"data": {"k": "v"}})),
        )],
    );
    add(
        "manager from the User-Agent",
        vec![
            post(CMS, config_map("a", json!({"data": {"k": "v"}})))
                .header("User-Agent", "kubectl/v1.34.0 (linux/amd64) kubernetes/abc"),
        ],
    );
    add(
        "as a user without rights",
        vec![apply_cm("m", false, json!({"data": {"k": "v"}})).as_user("someone")],
    );
    add(
        "fieldManager too long",
        vec![apply_cm(&"m".repeat(129), false, json!({}))],
    );
    add(
        "yaml body",
        vec![patch(
            format!("{CMS}/a?fieldManager=m"),
            APPLY,
            Value::String(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n".into(),
            ),
        )],
    );
    add(
        "body not yaml",
        vec![patch(
            format!("{CMS}/a?fieldManager=m"),
            APPLY,
            Value::String("{: [".into()),
        )],
    );
    add(
        "without kind",
        vec![apply(
            &format!("{CMS}/a"),
            "m",
            false,
            json!({"apiVersion": "v1", "metadata": {"name": "a"}}),
        )],
    );
    add(
        "name differs from the path",
        vec![apply(
            &format!("{CMS}/a"),
            "m",
            false,
            config_map("b", json!({})),
        )],
    );
    add(
        "with managedFields in the body",
        vec![apply_cm(
            "m",
            false,
            json!({"metadata": {"managedFields": [{"manager": "x", "operation": "Apply"}]}}),
        )],
    );
    add(
        "with a stale resourceVersion",
        vec![
            apply_cm("m", false, json!({"data": {"k": "v"}})),
            apply_cm(
                "m",
                false,
                json!({"metadata": {"resourceVersion": "1"}, "data": {"k": "w"}}),
            ),
        ],
    );
    add(
        "same manager changes a value",
        vec![
            apply_cm("m", false, json!({"data": {"k": "v"}})),
            apply_cm("m", false, json!({"data": {"k": "w"}})),
        ],
    );
    add(
        "conflict between two managers",
        vec![
            apply_cm("a", false, json!({"data": {"k": "v", "j": "v"}})),
            apply_cm("b", false, json!({"data": {"k": "w", "j": "w"}})),
            get_cm(),
        ],
    );
    add(
        "force takes ownership",
        vec![
            apply_cm("a", false, json!({"data": {"k": "v", "j": "v"}})),
            apply_cm("b", true, json!({"data": {"k": "w"}})),
        ],
    );
    add(
        "same value is shared",
        vec![
            apply_cm("a", false, json!({"data": {"k": "v"}})),
            apply_cm("b", false, json!({"data": {"k": "v"}})),
        ],
    );
    add(
        "dropping a field deletes it",
        vec![
            apply_cm("a", false, json!({"data": {"k": "v", "j": "v"}})),
            apply_cm("a", false, json!({"data": {"k": "v"}})),
        ],
    );
    add(
        "dropping a shared field keeps it",
        vec![
            apply_cm("a", false, json!({"data": {"k": "v", "j": "v"}})),
            apply_cm("b", false, json!({"data": {"j": "v"}})),
            apply_cm("a", false, json!({"data": {"k": "v"}})),
        ],
    );
    add(
        "conflict with an update",
        vec![
            post(
                format!("{CMS}?fieldManager=creator"),
                config_map("a", json!({"data": {"k": "v"}})),
            ),
            apply_cm("a", false, json!({"data": {"k": "w"}})),
        ],
    );
    add(
        "update after apply",
        vec![
            apply_cm("a", false, json!({"data": {"k": "v"}})),
            patch(
                format!("{CMS}/a?fieldManager=editor"),
                "application/merge-patch+json",
                json!({"data": {"k": "w", "e": "x"}}),
            ),
            apply_cm("a", false, json!({"data": {"k": "v"}})),
        ],
    );
    add(
        "labels and annotations",
        vec![
            apply_cm(
                "a",
                false,
                json!({"metadata": {"labels": {"x": "1"}, "annotations": {"n": "1"}}}),
            ),
            apply_cm("b", false, json!({"metadata": {"labels": {"y": "2"}}})),
            apply_cm("a", false, json!({"metadata": {"labels": {"x": "1"}}})),
        ],
    );
    add(
        "finalizers are a set",
        vec![
            apply_cm(
                "a",
                false,
                json!({"metadata": {"finalizers": ["example.com/a"]}}),
            ),
            apply_cm(
                "b",
                false,
                json!({"metadata": {"finalizers": ["example.com/b"]}}),
            ),
            apply_cm("a", false, json!({"metadata": {"finalizers": []}})),
            patch(
                format!("{CMS}/a"),
                "application/merge-patch+json",
                json!({"metadata": {"finalizers": null}}),
            ),
        ],
    );
    // Owners that exist: a reference to a missing uid has the garbage collector delete the
    // dependent at a moment of its own, between the steps or not.
    let owner = |name: &str, uid: &'static str| {
        post(CMS, config_map(name, json!({}))).remember(uid, "/metadata/uid")
    };
    add(
        "owner references keyed by uid",
        vec![
            owner("o1", "$O1"),
            owner("o2", "$O2"),
            apply_cm(
                "a",
                false,
                json!({"metadata": {"ownerReferences": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "o1", "uid": "$O1"}]}}),
            ),
            apply_cm(
                "b",
                false,
                json!({"metadata": {"ownerReferences": [
                    {"apiVersion": "v1", "kind": "ConfigMap", "name": "o2", "uid": "$O2"}]}}),
            ),
        ],
    );
    add(
        "invalid object",
        vec![apply_cm(
            "a",
            false,
            json!({"metadata": {"labels": {"-x": "y"}}}),
        )],
    );
    add(
        "dryRun",
        vec![
            patch(
                format!("{CMS}/a?fieldManager=m&dryRun=All"),
                APPLY,
                config_map("a", json!({"data": {"k": "v"}})),
            ),
            get_cm(),
        ],
    );
    add(
        "force on a merge patch",
        vec![
            post(CMS, config_map("a", json!({}))),
            patch(
                format!("{CMS}/a?fieldManager=m&force=true"),
                "application/merge-patch+json",
                json!({"data": {"k": "v"}}),
            ),
        ],
    );
    add(
        "force not a boolean",
        vec![patch(
            format!("{CMS}/a?fieldManager=m&force=yes"),
            APPLY,
            config_map("a", json!({})),
        )],
    );
    // `force` as clients spell it: the query parameter codec's booleans, false only for `0` and
    // `false` in any case (the Python client sends `True`; `f` and the empty value force too).
    for value in ["True", "TRUE", "1", "t", "f", "", "False", "FALSE", "0"] {
        add(
            &format!("force={value} on a conflict"),
            vec![
                apply_cm("owner", false, json!({"data": {"k": "v"}})),
                patch(
                    format!("{CMS}/a?fieldManager=intruder&force={value}"),
                    APPLY,
                    config_map("a", json!({"data": {"k": "w"}})),
                ),
                get_cm(),
            ],
        );
    }
    add(
        "secret stringData",
        vec![apply(
            "/api/v1/namespaces/NS/secrets/s",
            "m",
            false,
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}}),
        )],
    );
    add("deployment containers merged by name", {
        let deployment = |containers: Value| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                       "spec": {"selector": {"matchLabels": {"app": "d"}},
                                "template": {"metadata": {"labels": {"app": "d"}},
                                             "spec": {"containers": containers}}}})
        };
        let path = "/apis/apps/v1/namespaces/NS/deployments/d";
        vec![
            apply(
                path,
                "a",
                false,
                deployment(json!([{"name": "web", "image": "nginx"}])),
            ),
            apply(
                path,
                "b",
                false,
                deployment(json!([{"name": "side", "image": "busybox"}])),
            ),
            apply(
                path,
                "a",
                false,
                deployment(json!([{"name": "web", "image": "nginx:2"}])),
            ),
        ]
    });
    // Custom resources: list types decide how lists merge.
    let fixture = Fixture::new(
        "apply.corpus.example.com",
        json!({
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"],
                                "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "args": {"type": "array", "items": {"type": "string"}},
            "size": {"type": "integer"}})
        .as_object()
        .cloned()
        .unwrap_or_default(),
    );
    let w = format!("{}/w", fixture.collection());
    let widget = |spec: Value| fixture.widget("w", spec);
    let with_status = |spec: Value, status: Value| {
        let mut w = fixture.widget("w", spec);
        w["status"] = status;
        w
    };
    let on_widget =
        |manager: &str, force: bool, spec: Value| apply(&w, manager, force, widget(spec));
    let mut cr = |label: &str, steps: Vec<Step>| {
        cases.push(Case::new(format!("apply: cr {label}"), steps).after(fixture.setup()));
    };
    cr(
        "list-map merged by key",
        vec![
            on_widget("a", false, json!({"ports": [{"name": "http", "port": 80}]})),
            on_widget("b", false, json!({"ports": [{"name": "grpc", "port": 90}]})),
            on_widget(
                "a",
                false,
                json!({"ports": [{"name": "https", "port": 443}]}),
            ),
        ],
    );
    cr(
        "list-map item conflict",
        vec![
            on_widget("a", false, json!({"ports": [{"name": "http", "port": 80}]})),
            on_widget("b", false, json!({"ports": [{"name": "http", "port": 81}]})),
        ],
    );
    cr(
        "set merged",
        vec![
            on_widget("a", false, json!({"tags": ["x", "y"]})),
            on_widget("b", false, json!({"tags": ["z"]})),
            on_widget("a", false, json!({"tags": ["y"]})),
        ],
    );
    cr(
        "atomic list conflict",
        vec![
            on_widget("a", false, json!({"args": ["x"]})),
            on_widget("b", false, json!({"args": ["y"]})),
            on_widget("b", true, json!({"args": ["y"]})),
        ],
    );
    cr(
        "changed list",
        vec![
            on_widget("a", false, json!({"args": ["x", "y"], "size": 1})),
            on_widget("a", false, json!({"args": ["y"]})),
        ],
    );
    cr(
        "invalid value",
        vec![on_widget("a", false, json!({"size": "big"}))],
    );
    cr(
        "on status",
        vec![
            on_widget("a", false, json!({"size": 1})),
            apply(
                &format!("{w}/status"),
                "c",
                false,
                with_status(json!({"size": 9}), json!({"ready": true})),
            ),
            get(w.clone()),
        ],
    );
    cr(
        "on status of a missing object",
        vec![apply(
            &format!("{w}/status"),
            "c",
            false,
            with_status(json!({}), json!({"ready": true})),
        )],
    );
    cr(
        "status ignored on the main resource",
        vec![apply(
            &w,
            "a",
            false,
            with_status(json!({"size": 1}), json!({"ready": true})),
        )],
    );
    cases
}
