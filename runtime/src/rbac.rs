//! The RBAC a controller needs, derived from its [`Reconciler`](crate::Reconciler) declaration:
//! `#[kubeward::reconciler]` generates `rbac_rules(leader_election)` from it, and a hand-written
//! `Reconciler` gets the same rules from [`rules`].
//!
//! ```
//! # use kubeward::{Action, Pass, Reconciler};
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! struct Greeter;
//! impl Reconciler for Greeter {
//!     type Resource = ConfigMap;
//!     type Error = std::convert::Infallible;
//!     async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, Self::Error> {
//!         Ok(Action::await_change())
//!     }
//! }
//! let rules = kubeward::rbac::rules::<Greeter>(false);
//! assert_eq!(rules[0].resources.as_deref(), Some(&["configmaps".to_owned()][..]));
//! assert_eq!(rules[0].verbs, ["get", "list", "watch", "patch"]);
//! ```

/// The RBAC rules a controller of `R` needs, and no more, (the example operator's RBAC test
/// takes each verb away and sees the controller refused): its resource (list and watch for the
/// reflector, patch for the finalizer, get to read back a status write or finalizer patch whose
/// answer was lost), its status (patch: status writes are merge patches with a resourceVersion
/// precondition; the read-back reads the object itself, so the status needs no get), its
/// finalizers subresource when it has a finalizer or owns children (update: clusters that enforce owner
/// references require it to create children whose owner reference blocks the owner's
/// deletion), events (create, patch, and get to read back a create or patch whose answer was
/// lost), the kinds of its [relations](crate::relations) (list and watch; on owned kinds also
/// create, patch and delete: see [`Relation::verbs`](crate::relations::Relation::verbs)) and,
/// with `leader_election`, leases (get, create, update; in the Lease's namespace alone with
/// [`namespaced`] Roles: see [`lease`]).
pub fn rules<R: crate::Reconciler>(
    leader_election: bool,
) -> Vec<k8s_openapi::api::rbac::v1::PolicyRule> {
    use k8s_openapi::api::rbac::v1::PolicyRule;
    use kube::Resource;

    let rule = |group: &str, resources: &[String], verbs: &[&str]| PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(resources.to_vec()),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..PolicyRule::default()
    };
    let group = R::Resource::group(&());
    let plural = R::Resource::plural(&()).into_owned();
    let mut rules = vec![
        rule(
            &group,
            std::slice::from_ref(&plural),
            &["get", "list", "watch", "patch"],
        ),
        rule(&group, &[format!("{plural}/status")], &["patch"]),
    ];
    let relations = R::relations();
    let owns = relations
        .iter()
        .any(|r| r.role() == crate::relations::Role::Owned);
    if R::FINALIZER.is_some() || owns {
        rules.push(rule(&group, &[format!("{plural}/finalizers")], &["update"]));
    }
    rules.push(rule(
        "events.k8s.io",
        &["events".to_owned()],
        &["get", "create", "patch"],
    ));
    for relation in relations.iter() {
        let kind = relation.kind();
        rules.push(rule(
            &kind.group,
            std::slice::from_ref(&kind.plural),
            relation.verbs(),
        ));
    }
    if leader_election {
        rules.push(lease_rule());
    }
    merge(rules)
}

/// `rules` with each rule's target given once: the rules of the same API groups, resources,
/// resource names and non-resource URLs are one rule holding the verbs of all (in the order
/// first given), in the order their targets first appear. What the rules of several
/// controllers (of one [`Operator`](crate::operator::Operator)) make together: each reads
/// events, often the same owned kinds.
///
/// ```
/// use k8s_openapi::api::rbac::v1::PolicyRule;
/// let rule = |resource: &str, verbs: &[&str]| PolicyRule {
///     api_groups: Some(vec![String::new()]),
///     resources: Some(vec![resource.to_owned()]),
///     verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
///     ..PolicyRule::default()
/// };
/// let merged = kubeward::rbac::merge([
///     rule("configmaps", &["list", "watch"]),
///     rule("secrets", &["get"]),
///     rule("configmaps", &["watch", "patch"]),
/// ]);
/// assert_eq!(merged, [rule("configmaps", &["list", "watch", "patch"]), rule("secrets", &["get"])]);
/// ```
pub fn merge(
    rules: impl IntoIterator<Item = k8s_openapi::api::rbac::v1::PolicyRule>,
) -> Vec<k8s_openapi::api::rbac::v1::PolicyRule> {
    let mut merged: Vec<k8s_openapi::api::rbac::v1::PolicyRule> = Vec::new();
    for rule in rules {
        let same_target = merged.iter_mut().find(|known| {
            known.api_groups == rule.api_groups
                && known.resources == rule.resources
                && known.resource_names == rule.resource_names
                && known.non_resource_urls == rule.non_resource_urls
        });
        match same_target {
            Some(known) => {
                for verb in rule.verbs {
                    if !known.verbs.contains(&verb) {
                        known.verbs.push(verb);
                    }
                }
            }
            None => merged.push(rule),
        }
    }
    merged
}

/// A ClusterRole of `rules` named `name` and a ClusterRoleBinding of it (same name) to the
/// service account `service_account_namespace/service_account`: what an operator reconciling
/// the whole cluster needs (the namespaced counterpart is [`namespaced`]).
///
/// ```
/// let (role, binding) = kubeward::rbac::cluster_wide("rollouts", vec![], "operators", "rollouts");
/// assert_eq!(role.metadata.name.as_deref(), Some("rollouts"));
/// assert_eq!(binding.role_ref.kind, "ClusterRole");
/// assert_eq!(binding.subjects.unwrap()[0].namespace.as_deref(), Some("operators"));
/// ```
pub fn cluster_wide(
    name: &str,
    rules: Vec<k8s_openapi::api::rbac::v1::PolicyRule>,
    service_account_namespace: &str,
    service_account: &str,
) -> (
    k8s_openapi::api::rbac::v1::ClusterRole,
    k8s_openapi::api::rbac::v1::ClusterRoleBinding,
) {
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    let metadata = ObjectMeta {
        name: Some(name.to_owned()),
        ..ObjectMeta::default()
    };
    let role = ClusterRole {
        metadata: metadata.clone(),
        rules: Some(rules),
        ..ClusterRole::default()
    };
    let binding = ClusterRoleBinding {
        metadata,
        role_ref: role_ref("ClusterRole", name),
        subjects: Some(vec![service_account_subject(
            service_account_namespace,
            service_account,
        )]),
    };
    (role, binding)
}

fn role_ref(kind: &str, name: &str) -> k8s_openapi::api::rbac::v1::RoleRef {
    k8s_openapi::api::rbac::v1::RoleRef {
        api_group: "rbac.authorization.k8s.io".to_owned(),
        kind: kind.to_owned(),
        name: name.to_owned(),
    }
}

fn service_account_subject(namespace: &str, name: &str) -> k8s_openapi::api::rbac::v1::Subject {
    k8s_openapi::api::rbac::v1::Subject {
        kind: "ServiceAccount".to_owned(),
        name: name.to_owned(),
        namespace: Some(namespace.to_owned()),
        ..k8s_openapi::api::rbac::v1::Subject::default()
    }
}

/// The rule of a leader election's Lease: get, create and update of `leases`.
pub(crate) fn lease_rule() -> k8s_openapi::api::rbac::v1::PolicyRule {
    k8s_openapi::api::rbac::v1::PolicyRule {
        api_groups: Some(vec!["coordination.k8s.io".to_owned()]),
        resources: Some(vec!["leases".to_owned()]),
        verbs: ["get", "create", "update"].map(str::to_owned).to_vec(),
        ..k8s_openapi::api::rbac::v1::PolicyRule::default()
    }
}

/// A Role of `rules` named `name` in `namespace` and a RoleBinding of it (same name) to the
/// service account `service_account` of namespace `service_account_namespace` (where the
/// controller's pod runs): what a controller run
/// [`in_namespace`](crate::controller::Controller::in_namespace) needs instead of a ClusterRole,
/// and — once per namespace — one run
/// [`in_namespaces`](crate::controller::Controller::in_namespaces).
///
/// The Lease rule of [`rules(true)`](rules) is left out: the Lease lives in one namespace of its
/// own choosing (often the operator's), not in each reconciled one. [`lease`] grants it there.
///
/// ```
/// # use kubeward::{Action, Pass, Reconciler};
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # struct Rollouts;
/// # impl Reconciler for Rollouts {
/// #     type Resource = ConfigMap;
/// #     type Error = std::convert::Infallible;
/// #     async fn apply(&self, _: &ConfigMap, _: &mut Pass<ConfigMap>) -> Result<Action, Self::Error> {
/// #         Ok(Action::await_change())
/// #     }
/// # }
/// let rules = kubeward::rbac::rules::<Rollouts>(true);
/// let leases = |rules: &[k8s_openapi::api::rbac::v1::PolicyRule]| {
///     rules.iter().any(|r| r.resources.as_ref().is_some_and(|r| r.contains(&"leases".into())))
/// };
/// // The operator runs in `operators`, holds its Lease there, and reconciles `team-a` and
/// // `team-b`.
/// for namespace in ["team-a", "team-b"] {
///     let (role, binding) =
///         kubeward::rbac::namespaced("rollouts", namespace, rules.clone(), "operators", "rollouts");
///     assert_eq!(role.metadata.namespace.as_deref(), Some(namespace));
///     assert!(!leases(role.rules.as_deref().unwrap_or_default()));
///     assert_eq!(binding.role_ref.kind, "Role");
///     let subject = &binding.subjects.as_ref().unwrap()[0];
///     assert_eq!(subject.namespace.as_deref(), Some("operators"));
/// }
/// let (role, _binding) = kubeward::rbac::lease("rollouts", "operators", "operators", "rollouts");
/// assert_eq!(role.metadata.namespace.as_deref(), Some("operators"));
/// assert!(leases(role.rules.as_deref().unwrap_or_default()));
/// ```
pub fn namespaced(
    name: &str,
    namespace: &str,
    rules: Vec<k8s_openapi::api::rbac::v1::PolicyRule>,
    service_account_namespace: &str,
    service_account: &str,
) -> (
    k8s_openapi::api::rbac::v1::Role,
    k8s_openapi::api::rbac::v1::RoleBinding,
) {
    let lease = lease_rule();
    let rules = rules.into_iter().filter(|rule| *rule != lease).collect();
    role_and_binding(
        name,
        namespace,
        rules,
        service_account_namespace,
        service_account,
    )
}

/// The Role `{name}-leader-election` in `lease_namespace`, granting what leader election needs
/// on its Lease there (get, create and update of `leases`), and a RoleBinding of it (same name)
/// to the service account `service_account` of namespace `service_account_namespace`: with
/// leader election, the companion of the Roles of [`namespaced`] (which leave the Lease rule
/// out), given the same `name` — also when the Lease is in a reconciled namespace, where the
/// two Roles' names differ.
///
/// ```
/// let (role, binding) = kubeward::rbac::lease("rollouts", "operators", "operators", "rollouts");
/// assert_eq!(role.metadata.name.as_deref(), Some("rollouts-leader-election"));
/// assert_eq!(role.metadata.namespace.as_deref(), Some("operators"));
/// assert_eq!(binding.role_ref.name, "rollouts-leader-election");
/// ```
pub fn lease(
    name: &str,
    lease_namespace: &str,
    service_account_namespace: &str,
    service_account: &str,
) -> (
    k8s_openapi::api::rbac::v1::Role,
    k8s_openapi::api::rbac::v1::RoleBinding,
) {
    role_and_binding(
        &format!("{name}-leader-election"),
        lease_namespace,
        vec![lease_rule()],
        service_account_namespace,
        service_account,
    )
}

/// A Role of `rules` named `name` in `namespace`, and a RoleBinding of it (same name) to the
/// service account `service_account_namespace/service_account`.
fn role_and_binding(
    name: &str,
    namespace: &str,
    rules: Vec<k8s_openapi::api::rbac::v1::PolicyRule>,
    service_account_namespace: &str,
    service_account: &str,
) -> (
    k8s_openapi::api::rbac::v1::Role,
    k8s_openapi::api::rbac::v1::RoleBinding,
) {
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    let metadata = ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some(namespace.to_owned()),
        ..ObjectMeta::default()
    };
    let role = Role {
        metadata: metadata.clone(),
        rules: Some(rules),
    };
    let binding = RoleBinding {
        metadata,
        role_ref: role_ref("Role", name),
        subjects: Some(vec![service_account_subject(
            service_account_namespace,
            service_account,
        )]),
    };
    (role, binding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    struct Configs;
    impl crate::Reconciler for Configs {
        type Resource = ConfigMap;
        type Error = std::io::Error;
        const FINALIZER: Option<&'static str> = Some("demo.kubeward.dev/cleanup");
        async fn apply(
            &self,
            _: &ConfigMap,
            _: &mut crate::Pass<ConfigMap>,
        ) -> Result<crate::Action, Self::Error> {
            Ok(crate::Action::await_change())
        }
    }

    #[test]
    fn rbac_rules_cover_resource_status_finalizers_events_and_leases() {
        let summary: Vec<(String, String, String)> = rules::<Configs>(true)
            .iter()
            .map(|r| {
                (
                    r.api_groups.clone().unwrap_or_default().join(","),
                    r.resources.clone().unwrap_or_default().join(","),
                    r.verbs.join(","),
                )
            })
            .collect();
        let expected = [
            ("", "configmaps", "get,list,watch,patch"),
            ("", "configmaps/status", "patch"),
            ("", "configmaps/finalizers", "update"),
            ("events.k8s.io", "events", "get,create,patch"),
            ("coordination.k8s.io", "leases", "get,create,update"),
        ];
        assert_eq!(
            summary,
            expected.map(|(g, r, v)| (g.to_owned(), r.to_owned(), v.to_owned()))
        );
        assert_eq!(rules::<Configs>(false).len(), 4);
    }

    #[test]
    fn namespaced_roles_leave_the_lease_rule_to_the_role_in_the_leases_namespace() {
        let (role, binding) = namespaced("configs", "team-a", rules::<Configs>(true), "ops", "sa");
        assert_eq!(role.rules, Some(rules::<Configs>(false)));
        assert_eq!(role.metadata.namespace.as_deref(), Some("team-a"));
        assert_eq!(binding.role_ref.name, "configs");

        let (role, binding) = lease("configs", "ops", "ops", "sa");
        assert_eq!(
            role.metadata.name.as_deref(),
            Some("configs-leader-election")
        );
        assert_eq!(role.metadata.namespace.as_deref(), Some("ops"));
        let granted: Vec<_> = role
            .rules
            .iter()
            .flatten()
            .map(|r| (r.api_groups.clone(), r.resources.clone(), r.verbs.join(",")))
            .collect();
        assert_eq!(
            granted,
            [(
                Some(vec!["coordination.k8s.io".to_owned()]),
                Some(vec!["leases".to_owned()]),
                "get,create,update".to_owned()
            )]
        );
        assert_eq!(binding.role_ref.name, "configs-leader-election");
        assert_eq!(binding.metadata.namespace.as_deref(), Some("ops"));
        let subject = &binding.subjects.unwrap_or_default()[0];
        assert_eq!(
            (subject.namespace.as_deref(), subject.name.as_str()),
            (Some("ops"), "sa")
        );
    }
}
