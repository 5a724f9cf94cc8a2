//! Access: RBAC objects' validation, requests as users with and without permissions (the 403
//! texts), escalation refusal, impersonation of groups and service accounts, and the access
//! reviews. Users are named `u-NS` and cluster-scoped objects carry `NS`, so no case's grants
//! reach another's.

use http::Method;
use serde_json::{Value, json};

use crate::corpus::{Case, Step, config_map, get, patch, post, step};

const ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/namespaces/NS/roles";
const BINDINGS: &str = "/apis/rbac.authorization.k8s.io/v1/namespaces/NS/rolebindings";
const CLUSTER_ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
const CLUSTER_BINDINGS: &str = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
const CMS: &str = "/api/v1/namespaces/NS/configmaps";
const USER: &str = "u-NS";

fn role(kind: &str, name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": name}, "rules": rules})
}

fn binding(kind: &str, name: &str, role_kind: &str, role: &str, subjects: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects})
}

fn user(name: &str) -> Value {
    json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}])
}

/// Grants `u-NS` `verbs` on `resources` (core group) in the case's namespace.
fn grant(verbs: Value, resources: Value) -> Vec<Step> {
    vec![
        post(
            ROLES,
            role(
                "Role",
                "r",
                json!([{"apiGroups": [""], "resources": resources, "verbs": verbs}]),
            ),
        ),
        post(
            BINDINGS,
            binding("RoleBinding", "b", "Role", "r", user(USER)),
        ),
    ]
}

fn review(kind: &str, spec: Value) -> Value {
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": kind, "spec": spec})
}

/// What `kubectl auth whoami` sends: a SelfSubjectReview has no spec.
fn whoami() -> Value {
    json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
}

const SSAR: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
const SAR: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
const LSAR: &str = "/apis/authorization.k8s.io/v1/namespaces/NS/localsubjectaccessreviews";
const SSRR: &str = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
const SSR: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // Role validation.
    for (label, rules) in [
        (
            "valid",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
        ),
        (
            "no verbs",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": []}]),
        ),
        (
            "no apiGroups",
            json!([{"resources": ["configmaps"], "verbs": ["get"]}]),
        ),
        (
            "no resources",
            json!([{"apiGroups": [""], "verbs": ["get"]}]),
        ),
        (
            "nonResourceURLs",
            json!([{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]),
        ),
        (
            "resourceNames",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"], "verbs": ["get"]}]),
        ),
        (
            "wildcards",
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]),
        ),
        ("empty rules", json!([])),
        (
            "verbs a string",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": "get"}]),
        ),
    ] {
        cases.push(Case::new(
            format!("rbac role: {label}"),
            vec![post(ROLES, role("Role", "r", rules))],
        ));
    }
    for (label, rules) in [
        (
            "valid",
            json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
        ),
        (
            "nonResourceURLs",
            json!([{"nonResourceURLs": ["/healthz", "/metrics/*"], "verbs": ["get"]}]),
        ),
        (
            "nonResourceURLs and resources",
            json!([{"nonResourceURLs": ["/healthz"], "resources": ["configmaps"], "apiGroups": [""], "verbs": ["get"]}]),
        ),
        (
            "no verbs",
            json!([{"nonResourceURLs": ["/healthz"], "verbs": []}]),
        ),
    ] {
        cases.push(Case::new(
            format!("rbac clusterrole: {label}"),
            vec![post(CLUSTER_ROLES, role("ClusterRole", "cr-NS", rules))],
        ));
    }
    cases.push(Case::new(
        "rbac clusterrole: aggregationRule",
        vec![post(CLUSTER_ROLES, json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "agg-NS"},
                "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "NS"}}]}}))],
    ));
    for (label, role_kind, role_name, subjects) in [
        ("valid", "Role", "r", user("alice")),
        ("to a ClusterRole", "ClusterRole", "view", user("alice")),
        ("roleRef kind unknown", "Secret", "r", user("alice")),
        ("no roleRef name", "Role", "", user("alice")),
        ("no subjects", "Role", "r", json!([])),
        (
            "group subject",
            "Role",
            "r",
            json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "devs"}]),
        ),
        (
            "service account subject",
            "Role",
            "r",
            json!([{"kind": "ServiceAccount", "name": "sa", "namespace": "NS"}]),
        ),
        (
            "service account without namespace",
            "Role",
            "r",
            json!([{"kind": "ServiceAccount", "name": "sa"}]),
        ),
        (
            "service account with apiGroup",
            "Role",
            "r",
            json!([{"kind": "ServiceAccount", "apiGroup": "rbac.authorization.k8s.io", "name": "sa", "namespace": "NS"}]),
        ),
        (
            "user without apiGroup",
            "Role",
            "r",
            json!([{"kind": "User", "name": "alice"}]),
        ),
        (
            "subject kind unknown",
            "Role",
            "r",
            json!([{"kind": "Robot", "name": "r2"}]),
        ),
        (
            "subject without name",
            "Role",
            "r",
            json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": ""}]),
        ),
        (
            "service account bad name",
            "Role",
            "r",
            json!([{"kind": "ServiceAccount", "name": "Bad_Name", "namespace": "NS"}]),
        ),
    ] {
        cases.push(Case::new(
            format!("rbac rolebinding: {label}"),
            vec![post(
                BINDINGS,
                binding("RoleBinding", "b", role_kind, role_name, subjects),
            )],
        ));
    }
    cases.push(Case::new(
        "rbac rolebinding: roleRef is immutable",
        vec![
            post(
                BINDINGS,
                binding("RoleBinding", "b", "Role", "r", user("alice")),
            ),
            Step {
                content_type: "application/merge-patch+json",
                ..step(
                    Method::PATCH,
                    format!("{BINDINGS}/b"),
                    Some(json!({"roleRef": {"name": "other"}})),
                )
            },
        ],
    ));
    cases.push(Case::new(
        "rbac clusterrolebinding: valid and to a Role",
        vec![
            post(
                CLUSTER_BINDINGS,
                binding(
                    "ClusterRoleBinding",
                    "crb-NS",
                    "ClusterRole",
                    "view",
                    user("u-NS"),
                ),
            ),
            post(
                CLUSTER_BINDINGS,
                binding("ClusterRoleBinding", "crb2-NS", "Role", "r", user("u-NS")),
            ),
        ],
    ));
    // Requests as a user without permissions: the 403s.
    for (label, method, path, body) in [
        ("get", Method::GET, format!("{CMS}/a"), None),
        ("list", Method::GET, CMS.to_owned(), None),
        (
            "list all namespaces",
            Method::GET,
            "/api/v1/configmaps".to_owned(),
            None,
        ),
        (
            "watch",
            Method::GET,
            format!("{CMS}?watch=true&timeoutSeconds=1"),
            None,
        ),
        (
            "create",
            Method::POST,
            CMS.to_owned(),
            Some(config_map("n", json!({}))),
        ),
        ("delete", Method::DELETE, format!("{CMS}/a"), None),
        ("deletecollection", Method::DELETE, CMS.to_owned(), None),
        (
            "get a namespace",
            Method::GET,
            "/api/v1/namespaces/NS".to_owned(),
            None,
        ),
        (
            "list namespaces",
            Method::GET,
            "/api/v1/namespaces".to_owned(),
            None,
        ),
        (
            "get a clusterrole",
            Method::GET,
            format!("{CLUSTER_ROLES}/view"),
            None,
        ),
        (
            "list events.k8s.io",
            Method::GET,
            "/apis/events.k8s.io/v1/namespaces/NS/events".to_owned(),
            None,
        ),
        (
            "non-resource /metrics",
            Method::GET,
            "/metrics".to_owned(),
            None,
        ),
        ("discovery /api", Method::GET, "/api".to_owned(), None),
        ("/version", Method::GET, "/version".to_owned(), None),
        (
            "status subresource",
            Method::GET,
            "/api/v1/namespaces/NS/status".to_owned(),
            None,
        ),
    ] {
        cases.push(Case::new(
            format!("forbidden: {label}"),
            vec![step(method, path, body).as_user(USER)],
        ));
    }
    // With permissions.
    for (label, verbs, method, path, body) in [
        (
            "get granted",
            json!(["get"]),
            Method::GET,
            format!("{CMS}/a"),
            None,
        ),
        (
            "get granted, list refused",
            json!(["get"]),
            Method::GET,
            CMS.to_owned(),
            None,
        ),
        (
            "list granted",
            json!(["list"]),
            Method::GET,
            CMS.to_owned(),
            None,
        ),
        (
            "create granted",
            json!(["create"]),
            Method::POST,
            CMS.to_owned(),
            Some(config_map("n", json!({}))),
        ),
        (
            "wildcard granted",
            json!(["*"]),
            Method::DELETE,
            format!("{CMS}/a"),
            None,
        ),
        (
            "in another namespace",
            json!(["get"]),
            Method::GET,
            "/api/v1/namespaces/default/configmaps/a".to_owned(),
            None,
        ),
    ] {
        let mut steps = vec![post(CMS, config_map("a", json!({})))];
        steps.extend(grant(verbs, json!(["configmaps"])));
        steps.push(step(method, path, body).as_user(USER));
        cases.push(Case::new(format!("permitted: {label}"), steps));
    }
    // A server-side apply that creates is authorised as a create too; one that updates is not.
    for (label, verbs, existing) in [
        ("apply that creates, patch only", json!(["patch"]), false),
        (
            "apply that creates, create and patch",
            json!(["create", "patch"]),
            false,
        ),
        ("apply that updates, patch only", json!(["patch"]), true),
    ] {
        let mut steps = Vec::new();
        if existing {
            steps.push(post(CMS, config_map("a", json!({}))));
        }
        steps.extend(grant(verbs, json!(["configmaps"])));
        steps.push(
            patch(
                format!("{CMS}/a?fieldManager=m"),
                "application/apply-patch+yaml",
                config_map("a", json!({"data": {"k": "v"}})),
            )
            .as_user(USER),
        );
        cases.push(Case::new(format!("permitted: {label}"), steps));
    }
    cases.push(Case::new(
        "permitted: resourceNames",
        vec![
            post(CMS, config_map("a", json!({}))),
            post(CMS, config_map("b", json!({}))),
            post(ROLES, role("Role", "r", json!([{"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["a"], "verbs": ["get"]}]))),
            post(BINDINGS, binding("RoleBinding", "b", "Role", "r", user(USER))),
            get(format!("{CMS}/a")).as_user(USER),
            get(format!("{CMS}/b")).as_user(USER),
        ],
    ));
    cases.push(Case::new(
        "forbidden: binding to a missing role",
        vec![
            post(
                BINDINGS,
                binding("RoleBinding", "b", "Role", "absent", user(USER)),
            ),
            get(format!("{CMS}/a")).as_user(USER),
        ],
    ));
    // Escalation.
    let writer = |verbs: Value| {
        vec![
            post(
                CLUSTER_ROLES,
                role(
                    "ClusterRole",
                    "writer-NS",
                    json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": verbs},
                           {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
                ),
            ),
            post(
                BINDINGS,
                binding(
                    "RoleBinding",
                    "writer",
                    "ClusterRole",
                    "writer-NS",
                    user(USER),
                ),
            ),
        ]
    };
    for (label, verbs, body) in [
        (
            "a role within what the writer holds",
            json!(["create"]),
            role(
                "Role",
                "mine",
                json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
            ),
        ),
        (
            "a role beyond what the writer holds",
            json!(["create"]),
            role(
                "Role",
                "mine",
                json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}]),
            ),
        ),
        (
            "a role beyond, with escalate",
            json!(["create", "escalate"]),
            role(
                "Role",
                "mine",
                json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]),
            ),
        ),
    ] {
        let mut steps = writer(verbs);
        steps.push(post(ROLES, body).as_user(USER));
        cases.push(Case::new(format!("escalation: {label}"), steps));
    }
    for (label, verbs, role_name) in [
        (
            "binding a role the writer holds",
            json!(["create"]),
            "writer-NS",
        ),
        (
            "binding a role beyond the writer",
            json!(["create"]),
            "cluster-admin",
        ),
        (
            "binding beyond, with bind",
            json!(["create", "bind"]),
            "cluster-admin",
        ),
    ] {
        let mut steps = writer(verbs);
        steps.push(
            post(
                BINDINGS,
                binding(
                    "RoleBinding",
                    "new",
                    "ClusterRole",
                    role_name,
                    user("someone"),
                ),
            )
            .as_user(USER),
        );
        cases.push(Case::new(format!("escalation: {label}"), steps));
    }
    // Impersonation.
    for (label, headers) in [
        (
            "group system:masters",
            vec![
                ("Impersonate-User", "u-NS"),
                ("Impersonate-Group", "system:masters"),
            ],
        ),
        (
            "a group without a user",
            vec![("Impersonate-Group", "system:masters")],
        ),
        (
            "a service account",
            vec![("Impersonate-User", "system:serviceaccount:NS:robot")],
        ),
        (
            "a uid",
            vec![("Impersonate-User", "u-NS"), ("Impersonate-Uid", "1234")],
        ),
        (
            "an extra",
            vec![
                ("Impersonate-User", "u-NS"),
                ("Impersonate-Extra-Scopes", "view"),
            ],
        ),
        (
            "two groups",
            vec![
                ("Impersonate-User", "u-NS"),
                ("Impersonate-Group", "devs"),
                ("Impersonate-Group", "ops"),
            ],
        ),
        ("a uid without a user", vec![("Impersonate-Uid", "1234")]),
    ] {
        for (what, method, path, body) in [
            ("whoami", Method::POST, SSR, Some(whoami())),
            ("get", Method::GET, "/api/v1/namespaces/NS/configmaps", None),
        ] {
            let mut s = step(method.clone(), path, body.clone());
            for (name, value) in &headers {
                s = s.header(name, *value);
            }
            cases.push(Case::new(format!("impersonate {label}: {what}"), vec![s]));
        }
    }
    cases.push(Case::new(
        "impersonate: as a user that may not impersonate",
        vec![get(CMS).as_user(USER).header("Impersonate-User", "other")],
    ));
    cases.push(Case::new(
        "impersonate: a service account with a role",
        vec![
            post(
                ROLES,
                role(
                    "Role",
                    "r",
                    json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]),
                ),
            ),
            post(
                BINDINGS,
                binding(
                    "RoleBinding",
                    "b",
                    "Role",
                    "r",
                    json!([{"kind": "ServiceAccount", "name": "robot", "namespace": "NS"}]),
                ),
            ),
            get(CMS).as_user("system:serviceaccount:NS:robot"),
            get("/api/v1/namespaces/NS/secrets").as_user("system:serviceaccount:NS:robot"),
        ],
    ));
    cases.push(Case::new(
        "impersonate: the service accounts group bound",
        vec![
            post(ROLES, role("Role", "r", json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]))),
            post(BINDINGS, binding("RoleBinding", "b", "Role", "r", json!([{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:serviceaccounts:NS"}]))),
            get(CMS).as_user("system:serviceaccount:NS:anyone"),
        ],
    ));
    // Reviews.
    let resource =
        json!({"resourceAttributes": {"namespace": "NS", "verb": "get", "resource": "configmaps"}});
    for (label, spec, as_user) in [
        ("admin may", resource.clone(), false),
        ("user may not", resource.clone(), true),
        // A path one default binding grants: /healthz is granted by two
        // (system:discovery, system:public-info-viewer), and kube-apiserver's reason names
        // whichever its informer cache lists first.
        (
            "non-resource",
            json!({"nonResourceAttributes": {"path": "/apis", "verb": "get"}}),
            true,
        ),
        (
            "non-resource refused",
            json!({"nonResourceAttributes": {"path": "/metrics", "verb": "get"}}),
            true,
        ),
        (
            "both attributes",
            json!({"resourceAttributes": {"verb": "get", "resource": "configmaps"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}}),
            false,
        ),
        ("no attributes", json!({}), false),
        (
            "a subresource",
            json!({"resourceAttributes": {"namespace": "NS", "verb": "get", "resource": "pods", "subresource": "log"}}),
            true,
        ),
        (
            "all namespaces",
            json!({"resourceAttributes": {"verb": "list", "resource": "namespaces"}}),
            true,
        ),
        (
            "a group",
            json!({"resourceAttributes": {"verb": "create", "group": "rbac.authorization.k8s.io", "resource": "roles", "namespace": "NS"}}),
            true,
        ),
    ] {
        let s = post(SSAR, review("SelfSubjectAccessReview", spec));
        cases.push(Case::new(
            format!("ssar: {label}"),
            vec![if as_user { s.as_user(USER) } else { s }],
        ));
    }
    cases.push(Case::new(
        "ssar: user granted",
        [
            grant(json!(["get"]), json!(["configmaps"])),
            vec![post(SSAR, review("SelfSubjectAccessReview", resource.clone())).as_user(USER)],
        ]
        .concat(),
    ));
    cases.push(Case::new("ssar: get is 405", vec![get(SSAR)]));
    for (label, spec) in [
        (
            "user allowed",
            json!({"user": "u-NS", "resourceAttributes": {"namespace": "NS", "verb": "get", "resource": "configmaps"}}),
        ),
        (
            "group allowed",
            json!({"user": "x", "groups": ["system:masters"], "resourceAttributes": {"namespace": "NS", "verb": "get", "resource": "configmaps"}}),
        ),
        (
            "non-resource",
            json!({"user": "u-NS", "nonResourceAttributes": {"path": "/version", "verb": "get"}}),
        ),
        (
            "no user",
            json!({"resourceAttributes": {"verb": "get", "resource": "configmaps"}}),
        ),
        ("no attributes", json!({"user": "u-NS"})),
    ] {
        cases.push(Case::new(
            format!("sar: {label}"),
            vec![post(SAR, review("SubjectAccessReview", spec))],
        ));
    }
    for (label, spec) in [
        (
            "user",
            json!({"user": "u-NS", "resourceAttributes": {"namespace": "NS", "verb": "get", "resource": "configmaps"}}),
        ),
        (
            "namespace mismatch",
            json!({"user": "u-NS", "resourceAttributes": {"namespace": "other", "verb": "get", "resource": "configmaps"}}),
        ),
    ] {
        let mut body = review("LocalSubjectAccessReview", spec);
        body["metadata"] = json!({"namespace": "NS"});
        cases.push(Case::new(format!("lsar: {label}"), vec![post(LSAR, body)]));
    }
    for (label, spec, as_user) in [
        ("user without grants", json!({"namespace": "NS"}), true),
        ("no namespace", json!({}), true),
    ] {
        let s = post(SSRR, review("SelfSubjectRulesReview", spec));
        cases.push(Case::new(
            format!("ssrr: {label}"),
            vec![if as_user { s.as_user(USER) } else { s }],
        ));
    }
    cases.push(Case::new(
        "ssrr: user granted",
        [
            grant(json!(["get", "list"]), json!(["configmaps", "secrets"])),
            vec![
                post(
                    SSRR,
                    review("SelfSubjectRulesReview", json!({"namespace": "NS"})),
                )
                .as_user(USER),
            ],
        ]
        .concat(),
    ));
    cases.push(Case::new(
        "whoami: as a user",
        vec![post(SSR, whoami()).as_user(USER)],
    ));
    cases.extend(owner_reference_cases());
    cases
}

/// `OwnerReferencesPermissionEnforcement` on what each kind of write stores: a JSON patch, a
/// merge patch and a create, by a user who may write ConfigMaps but not their `finalizers` (nor,
/// in one case, delete them); and a create that is invalid as well as forbidden (the strategy's
/// 422 comes before admission's 403).
fn owner_reference_cases() -> Vec<Case> {
    let owner = post(CMS, config_map("owner", json!({}))).remember("$OWNER", "/metadata/uid");
    let child = post(CMS, config_map("child", json!({})));
    let reference = |block: bool| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "$OWNER",
            "controller": true, "blockOwnerDeletion": block})
    };
    let child_path = format!("{CMS}/child");
    let mut cases = Vec::new();
    for (label, verbs, block, content_type) in [
        (
            "a json patch blocking the owner's deletion",
            json!(["create", "get", "patch", "delete"]),
            true,
            "application/json-patch+json",
        ),
        (
            "a json patch by a user who cannot delete",
            json!(["create", "get", "patch"]),
            false,
            "application/json-patch+json",
        ),
        (
            "a merge patch blocking the owner's deletion",
            json!(["create", "get", "patch", "delete"]),
            true,
            "application/merge-patch+json",
        ),
    ] {
        let body = match content_type {
            "application/json-patch+json" => json!([
                {"op": "add", "path": "/metadata/ownerReferences", "value": [reference(block)]}
            ]),
            _ => json!({"metadata": {"ownerReferences": [reference(block)]}}),
        };
        let steps = [
            grant(verbs, json!(["configmaps"])),
            vec![
                owner.clone(),
                child.clone(),
                patch(child_path.clone(), content_type, body).as_user(USER),
            ],
        ]
        .concat();
        cases.push(Case::new(format!("owner references: {label}"), steps));
    }
    for (label, data) in [
        ("a create blocking the owner's deletion", json!({"k": "v"})),
        (
            "an invalid create blocking the owner's deletion",
            json!({"bad key!": "v"}),
        ),
    ] {
        let body = config_map(
            "child",
            json!({"data": data, "metadata": {"ownerReferences": [reference(true)]}}),
        );
        let steps = [
            grant(json!(["create", "get", "delete"]), json!(["configmaps"])),
            vec![owner.clone(), post(CMS, body).as_user(USER)],
        ]
        .concat();
        cases.push(Case::new(format!("owner references: {label}"), steps));
    }
    cases
}
