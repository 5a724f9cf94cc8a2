//! Which RBAC rules apply to a user, from the Roles, ClusterRoles and bindings stored in the
//! server: kubernetes `pkg/registry/rbac/validation/rule.go` `DefaultRuleResolver`.
//!
//! - Every ClusterRoleBinding whose subjects match, then (for a namespaced request) every
//!   RoleBinding of that namespace whose subjects match, its roleRef resolved to a Role of that
//!   namespace or a ClusterRole (`GetRoleReferenceRules`).
//! - Subjects match as `appliesToUser` does: User by name, Group by membership, ServiceAccount as
//!   `system:serviceaccount:<ns>:<name>` with the binding's namespace as the default.
//! - A binding whose role is missing contributes an error (`clusterrole.rbac.authorization.k8s.io
//!   "x" not found`, as the listers word it), which the authorizer appends to its denial.
//! - Each rule comes with its source, worded as upstream's describers (`ClusterRoleBinding
//!   "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"`), which an allowed
//!   SelfSubjectAccessReview reports as its reason.
//! - ClusterRole aggregation is not resolved: a ClusterRole's rules are the ones it stores.

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, Subject,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::user::{UserInfo, service_account_user};
use crate::go::fmt::go_quote;
use crate::store::StorageKey;
use crate::store::Store;

/// The RBAC API group.
pub(crate) const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// Where the RBAC objects come from (upstream's listers).
pub(crate) trait RbacObjects {
    /// Every ClusterRoleBinding.
    fn cluster_role_bindings(&self) -> Vec<ClusterRoleBinding>;
    /// The RoleBindings of `namespace`.
    fn role_bindings(&self, namespace: &str) -> Vec<RoleBinding>;
    /// The ClusterRole `name`.
    fn cluster_role(&self, name: &str) -> Option<ClusterRole>;
    /// The Role `namespace/name`.
    fn role(&self, namespace: &str, name: &str) -> Option<Role>;
}

fn key(resource: &str) -> StorageKey {
    StorageKey {
        group: RBAC_GROUP.to_owned(),
        resource: resource.to_owned(),
    }
}

/// Stored objects that do not decode as their kind are skipped: validation keeps them out.
fn decode<T: DeserializeOwned>(value: &Value) -> Option<T> {
    serde_json::from_value(value.clone()).ok()
}

impl RbacObjects for Store {
    fn cluster_role_bindings(&self) -> Vec<ClusterRoleBinding> {
        self.list(&key("clusterrolebindings"), None)
            .filter_map(decode)
            .collect()
    }

    fn role_bindings(&self, namespace: &str) -> Vec<RoleBinding> {
        self.list(&key("rolebindings"), Some(namespace))
            .filter_map(decode)
            .collect()
    }

    fn cluster_role(&self, name: &str) -> Option<ClusterRole> {
        self.get(&key("clusterroles"), "", name).and_then(decode)
    }

    fn role(&self, namespace: &str, name: &str) -> Option<Role> {
        self.get(&key("roles"), namespace, name).and_then(decode)
    }
}

/// `appliesToUser`.
fn applies_to_user(user: &UserInfo, subject: &Subject, namespace: &str) -> bool {
    match subject.kind.as_str() {
        "User" => subject.name == user.name,
        "Group" => user.groups.contains(&subject.name),
        "ServiceAccount" => {
            let sa_namespace = subject
                .namespace
                .as_deref()
                .filter(|n| !n.is_empty())
                .unwrap_or(namespace);
            !sa_namespace.is_empty()
                && user.name == service_account_user(sa_namespace, &subject.name)
        }
        _ => false,
    }
}

/// `describeSubject`.
fn describe_subject(subject: &Subject, binding_namespace: &str) -> String {
    match subject.kind.as_str() {
        "ServiceAccount" => {
            let namespace = subject
                .namespace
                .as_deref()
                .filter(|n| !n.is_empty())
                .unwrap_or(binding_namespace);
            format!(
                "{} {}",
                subject.kind,
                go_quote(&format!("{}/{namespace}", subject.name))
            )
        }
        _ => format!("{} {}", subject.kind, go_quote(&subject.name)),
    }
}

/// `GetRoleReferenceRules`: the rules of the role a binding refers to, or the lister's error.
fn role_reference_rules(
    objects: &dyn RbacObjects,
    kind: &str,
    name: &str,
    binding_namespace: &str,
) -> Result<Vec<PolicyRule>, String> {
    let not_found =
        |resource: &str| format!("{resource}.{RBAC_GROUP} {} not found", go_quote(name));
    match kind {
        "Role" => objects
            .role(binding_namespace, name)
            .map(|r| r.rules.unwrap_or_default())
            .ok_or_else(|| not_found("role")),
        "ClusterRole" => objects
            .cluster_role(name)
            .map(|r| r.rules.unwrap_or_default())
            .ok_or_else(|| not_found("clusterrole")),
        other => Err(format!(
            "unsupported role reference kind: {}",
            go_quote(other)
        )),
    }
}

/// The rules that apply to `user` in `namespace` (empty for cluster-scoped requests), each with
/// the description of the binding it comes from, and the errors met resolving them
/// (`DefaultRuleResolver.RulesFor`, keeping each rule's source as `VisitRulesFor` gives it).
pub(crate) fn rules_for(
    objects: &dyn RbacObjects,
    user: &UserInfo,
    namespace: &str,
) -> (Vec<(String, PolicyRule)>, Vec<String>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    for binding in objects.cluster_role_bindings() {
        let subjects = binding.subjects.as_deref().unwrap_or_default();
        let Some(subject) = subjects.iter().find(|s| applies_to_user(user, s, "")) else {
            continue;
        };
        let role = &binding.role_ref;
        match role_reference_rules(objects, &role.kind, &role.name, "") {
            Ok(found) => {
                let source = format!(
                    "ClusterRoleBinding {} of {} {} to {}",
                    go_quote(binding.metadata.name.as_deref().unwrap_or_default()),
                    role.kind,
                    go_quote(&role.name),
                    describe_subject(subject, "")
                );
                rules.extend(found.into_iter().map(|r| (source.clone(), r)));
            }
            Err(e) => errors.push(e),
        }
    }
    if namespace.is_empty() {
        return (rules, errors);
    }
    for binding in objects.role_bindings(namespace) {
        let subjects = binding.subjects.as_deref().unwrap_or_default();
        let Some(subject) = subjects
            .iter()
            .find(|s| applies_to_user(user, s, namespace))
        else {
            continue;
        };
        let role = &binding.role_ref;
        match role_reference_rules(objects, &role.kind, &role.name, namespace) {
            Ok(found) => {
                let source = format!(
                    "RoleBinding {} of {} {} to {}",
                    go_quote(&format!(
                        "{}/{namespace}",
                        binding.metadata.name.as_deref().unwrap_or_default()
                    )),
                    role.kind,
                    go_quote(&role.name),
                    describe_subject(subject, namespace)
                );
                rules.extend(found.into_iter().map(|r| (source.clone(), r)));
            }
            Err(e) => errors.push(e),
        }
    }
    (rules, errors)
}

/// `utilerrors.NewAggregate(errs).Error()`: one error as itself, several as `[a, b]`.
pub(crate) fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use k8s_openapi::api::rbac::v1::RoleRef;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    /// Upstream's `StaticRoles`: RBAC objects from lists.
    #[derive(Default)]
    pub(crate) struct StaticRoles {
        pub(crate) cluster_roles: Vec<ClusterRole>,
        pub(crate) cluster_role_bindings: Vec<ClusterRoleBinding>,
        pub(crate) roles: Vec<Role>,
        pub(crate) role_bindings: Vec<RoleBinding>,
    }

    impl RbacObjects for StaticRoles {
        fn cluster_role_bindings(&self) -> Vec<ClusterRoleBinding> {
            self.cluster_role_bindings.clone()
        }
        fn role_bindings(&self, namespace: &str) -> Vec<RoleBinding> {
            self.role_bindings
                .iter()
                .filter(|b| b.metadata.namespace.as_deref() == Some(namespace))
                .cloned()
                .collect()
        }
        fn cluster_role(&self, name: &str) -> Option<ClusterRole> {
            self.cluster_roles
                .iter()
                .find(|r| r.metadata.name.as_deref() == Some(name))
                .cloned()
        }
        fn role(&self, namespace: &str, name: &str) -> Option<Role> {
            self.roles
                .iter()
                .find(|r| {
                    r.metadata.name.as_deref() == Some(name)
                        && r.metadata.namespace.as_deref() == Some(namespace)
                })
                .cloned()
        }
    }

    pub(crate) fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
        PolicyRule {
            api_groups: Some(groups.iter().map(|s| s.to_string()).collect()),
            resources: Some(resources.iter().map(|s| s.to_string()).collect()),
            verbs: verbs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn meta(name: &str, ns: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: ns.map(Into::into),
            ..Default::default()
        }
    }

    fn subject(kind: &str, name: &str, ns: Option<&str>) -> Subject {
        Subject {
            kind: kind.into(),
            name: name.into(),
            namespace: ns.map(Into::into),
            api_group: None,
        }
    }

    fn role_ref(kind: &str, name: &str) -> RoleRef {
        RoleRef {
            api_group: RBAC_GROUP.into(),
            kind: kind.into(),
            name: name.into(),
        }
    }

    fn objects() -> StaticRoles {
        StaticRoles {
            cluster_roles: vec![
                ClusterRole {
                    metadata: meta("reader", None),
                    rules: Some(vec![rule(&[""], &["configmaps"], &["get"])]),
                    ..Default::default()
                },
                ClusterRole {
                    metadata: meta("crd-reader", None),
                    rules: Some(vec![rule(
                        &["apiextensions.k8s.io"],
                        &["customresourcedefinitions"],
                        &["list"],
                    )]),
                    ..Default::default()
                },
            ],
            cluster_role_bindings: vec![ClusterRoleBinding {
                metadata: meta("all-sa-crds", None),
                role_ref: role_ref("ClusterRole", "crd-reader"),
                subjects: Some(vec![subject("Group", "system:serviceaccounts", None)]),
            }],
            roles: vec![Role {
                metadata: meta("events", Some("demo")),
                rules: Some(vec![rule(
                    &["events.k8s.io"],
                    &["events"],
                    &["create", "patch"],
                )]),
            }],
            role_bindings: vec![
                // SA subject without namespace defaults to the binding's namespace
                RoleBinding {
                    metadata: meta("op-events", Some("demo")),
                    role_ref: role_ref("Role", "events"),
                    subjects: Some(vec![subject("ServiceAccount", "op", None)]),
                },
                RoleBinding {
                    metadata: meta("op-reader", Some("demo")),
                    role_ref: role_ref("ClusterRole", "reader"),
                    subjects: Some(vec![subject("User", "system:serviceaccount:demo:op", None)]),
                },
                // a binding in another namespace does not apply to demo
                RoleBinding {
                    metadata: meta("other", Some("other")),
                    role_ref: role_ref("ClusterRole", "reader"),
                    subjects: Some(vec![subject("ServiceAccount", "op", Some("demo"))]),
                },
                RoleBinding {
                    metadata: meta("dangling", Some("demo")),
                    role_ref: role_ref("Role", "gone"),
                    subjects: Some(vec![subject("Group", "system:authenticated", None)]),
                },
            ],
        }
    }

    #[test]
    fn rules_come_from_matching_bindings_in_scope_with_their_sources() {
        let objects = objects();
        let sa = UserInfo::authenticated("system:serviceaccount:demo:op", &[]);
        let (in_demo, errors) = rules_for(&objects, &sa, "demo");
        let sources: Vec<&str> = in_demo.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(
            sources,
            [
                r#"ClusterRoleBinding "all-sa-crds" of ClusterRole "crd-reader" to Group "system:serviceaccounts""#,
                r#"RoleBinding "op-events/demo" of Role "events" to ServiceAccount "op/demo""#,
                r#"RoleBinding "op-reader/demo" of ClusterRole "reader" to User "system:serviceaccount:demo:op""#,
            ]
        );
        assert_eq!(
            errors,
            [r#"role.rbac.authorization.k8s.io "gone" not found"#]
        );
        let (in_other, _) = rules_for(&objects, &sa, "other");
        assert_eq!(in_other.len(), 2);
        let (cluster, errors) = rules_for(&objects, &sa, "");
        assert_eq!(cluster.len(), 1);
        assert!(errors.is_empty());
        // another service account gets only the group binding
        let web = UserInfo::authenticated("system:serviceaccount:demo:web", &[]);
        assert_eq!(rules_for(&objects, &web, "demo").0.len(), 1);
    }

    #[test]
    fn errors_aggregate_as_go_prints_them() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into()]), "[a, b]");
    }
}
