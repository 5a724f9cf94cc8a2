//! The default ClusterRoles and ClusterRoleBindings a fresh server stores, from kubernetes
//! `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go` — the ones access through
//! kubeconfig relies on:
//!
//! - `cluster-admin` (everything), bound to the group `system:masters`;
//! - `system:discovery` (discovery and OpenAPI paths) and `system:basic-user` (the self
//!   reviews behind `kubectl auth can-i` and `kubectl auth whoami`), bound to
//!   `system:authenticated`;
//! - `system:public-info-viewer` (`/healthz`, `/version`, …), bound to `system:authenticated` and
//!   `system:unauthenticated`.
//!
//! They carry the `kubernetes.io/bootstrapping: rbac-defaults` label and the
//! `rbac.authorization.kubernetes.io/autoupdate: "true"` annotation, as upstream's do. The
//! aggregated `admin`, `edit` and `view` roles and the controllers' roles are not installed.

use serde_json::{Value, json};

use super::resolver::RBAC_GROUP;

fn metadata(name: &str) -> Value {
    json!({
        "name": name,
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({
        "apiVersion": format!("{RBAC_GROUP}/v1"),
        "kind": "ClusterRole",
        "metadata": metadata(name),
        "rules": rules,
    })
}

fn binding_to_groups(name: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": RBAC_GROUP, "kind": "Group", "name": g}))
        .collect();
    json!({
        "apiVersion": format!("{RBAC_GROUP}/v1"),
        "kind": "ClusterRoleBinding",
        "metadata": metadata(name),
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name},
        "subjects": subjects,
    })
}

fn get(urls: &[&str]) -> Value {
    json!([{"nonResourceURLs": urls, "verbs": ["get"]}])
}

/// The default ClusterRoles, in the order they are stored.
pub(crate) fn cluster_roles() -> Vec<Value> {
    vec![
        cluster_role(
            "cluster-admin",
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]),
        ),
        cluster_role(
            "system:discovery",
            get(&[
                "/api",
                "/api/*",
                "/apis",
                "/apis/*",
                "/healthz",
                "/livez",
                "/openapi",
                "/openapi/*",
                "/readyz",
                "/version",
                "/version/",
            ]),
        ),
        cluster_role(
            "system:public-info-viewer",
            get(&["/healthz", "/livez", "/readyz", "/version", "/version/"]),
        ),
        cluster_role(
            "system:basic-user",
            json!([
                {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]},
                {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]},
            ]),
        ),
    ]
}

/// The default ClusterRoleBindings.
pub(crate) fn cluster_role_bindings() -> Vec<Value> {
    vec![
        binding_to_groups("cluster-admin", &["system:masters"]),
        binding_to_groups("system:discovery", &["system:authenticated"]),
        binding_to_groups(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
        binding_to_groups("system:basic-user", &["system:authenticated"]),
    ]
}

/// Stores the default roles and bindings in a fresh server's state.
pub(crate) fn install(state: &mut crate::registry::State) {
    let objects = [
        ("clusterroles", cluster_roles()),
        ("clusterrolebindings", cluster_role_bindings()),
    ];
    for (plural, objects) in objects {
        let Some(info) = state.resource(RBAC_GROUP, "v1", plural) else {
            continue;
        };
        for object in objects {
            // Valid objects with distinct names in an empty store: creating them cannot fail.
            let _ = state.create(
                &info,
                None,
                object,
                &crate::registry::WriteOptions::default(),
            );
        }
    }
}
