//! RBAC privilege-escalation prevention on writes of roles and bindings, as kubernetes
//! `pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased` storage
//! decides it:
//!
//! - `system:masters` members may write anything (`EscalationAllowed`);
//! - a Role or ClusterRole may be written by whoever is allowed `escalate` on it
//!   (`RoleEscalationAuthorized`), otherwise only when the writer's own rules in the role's
//!   namespace cover every rule it grants (`ConfirmNoEscalation` with component-helpers'
//!   `Covers`);
//! - a binding may be written by whoever is allowed `bind` on the role it refers to
//!   (`BindingAuthorized`, in the binding's namespace), otherwise only when the writer's rules
//!   cover the role's; a role that does not exist is 404.
//!
//! A refusal is 403 `<resource> "<name>" is forbidden: user "u" (groups=[…]) is attempting to
//! grant RBAC permissions not currently held:` followed by the missing rules, one per line,
//! compacted and printed as `PolicyRule.CompactString` does.

use std::collections::BTreeSet;

use k8s_openapi::api::rbac::v1::PolicyRule;
use serde_json::Value;

use super::authorizer::{self, Identity};
use super::resolver::{RBAC_GROUP, RbacObjects, aggregate};
use crate::go::fmt::go_quote;
use crate::rbac::RequestAttributes;
use crate::status::{ApiError, Qualified};
use crate::store::Store;
use crate::validation::rbac::RbacKind;

fn list(v: &Option<Vec<String>>) -> &[String] {
    v.as_deref().unwrap_or(&[])
}

fn has(set: &[String], element: &str) -> bool {
    set.iter().any(|s| s == element)
}

fn has_all(set: &[String], contains: &[String]) -> bool {
    contains.iter().all(|c| has(set, c))
}

/// `BreakdownRule`: one rule per group, resource, verb and resource name (or URL and verb).
fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let one = |s: &String| Some(vec![s.clone()]);
    let mut out = Vec::new();
    for group in list(&rule.api_groups) {
        for resource in list(&rule.resources) {
            for verb in &rule.verbs {
                let base = PolicyRule {
                    api_groups: one(group),
                    resources: one(resource),
                    verbs: vec![verb.clone()],
                    ..PolicyRule::default()
                };
                let names = list(&rule.resource_names);
                if names.is_empty() {
                    out.push(base);
                } else {
                    out.extend(names.iter().map(|name| PolicyRule {
                        resource_names: one(name),
                        ..base.clone()
                    }));
                }
            }
        }
    }
    for url in list(&rule.non_resource_urls) {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                non_resource_urls: one(url),
                verbs: vec![verb.clone()],
                ..PolicyRule::default()
            });
        }
    }
    out
}

/// `resourceCoversAll`.
fn resources_cover(owner: &[String], covered: &[String]) -> bool {
    if has(owner, "*") || has_all(owner, covered) {
        return true;
    }
    covered.iter().all(|path| {
        has(owner, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

/// `nonResourceURLCovers`.
fn url_covers(owner: &str, path: &str) -> bool {
    owner == path || (owner.ends_with('*') && path.starts_with(owner.trim_end_matches('*')))
}

/// `ruleCovers`: whether `owner` covers the broken-down `sub`.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(list(&owner.api_groups), "*")
        || has_all(list(&owner.api_groups), list(&sub.api_groups));
    let resources = resources_cover(list(&owner.resources), list(&sub.resources));
    let urls = list(&sub.non_resource_urls).iter().all(|path| {
        list(&owner.non_resource_urls)
            .iter()
            .any(|o| url_covers(o, path))
    });
    let (owner_names, sub_names) = (list(&owner.resource_names), list(&sub.resource_names));
    let names =
        owner_names.is_empty() || (!sub_names.is_empty() && has_all(owner_names, sub_names));
    verbs && groups && resources && names && urls
}

/// `Covers`: the broken-down rules of `requested` that no rule of `owner` covers.
fn uncovered(owner: &[PolicyRule], requested: &[PolicyRule]) -> Vec<PolicyRule> {
    requested
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect()
}

/// `CompactRules`: rules of one group and one resource, differing only by verb, merged.
fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let is_simple = list(&rule.resource_names).is_empty()
            && list(&rule.non_resource_urls).is_empty()
            && list(&rule.api_groups).len() == 1
            && list(&rule.resources).len() == 1;
        if !is_simple {
            out.push(rule);
            continue;
        }
        match simple
            .iter_mut()
            .find(|s| s.api_groups == rule.api_groups && s.resources == rule.resources)
        {
            Some(existing) => existing.verbs.extend(rule.verbs),
            None => simple.push(rule),
        }
    }
    out.extend(simple);
    out
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn go_strings(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[{}]", quoted.join(" "))
}

/// `PolicyRule.CompactString`: `{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}`.
fn compact_string(rule: &PolicyRule) -> String {
    let parts: Vec<String> = [
        ("APIGroups", list(&rule.api_groups)),
        ("Resources", list(&rule.resources)),
        ("NonResourceURLs", list(&rule.non_resource_urls)),
        ("ResourceNames", list(&rule.resource_names)),
        ("Verbs", rule.verbs.as_slice()),
    ]
    .into_iter()
    .filter(|(_, values)| !values.is_empty())
    .map(|(name, values)| format!("{name}:{}", go_strings(values)))
    .collect();
    format!("{{{}}}", parts.join(", "))
}

/// `ConfirmNoEscalation`: `Err` is the reason the writer may not grant `rules` in `namespace`.
fn confirm_no_escalation(
    store: &Store,
    identity: &Identity,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (owner, errors) = authorizer::rules_for(store, identity, namespace);
    let missing = uncovered(&owner, rules);
    if missing.is_empty() {
        return Ok(());
    }
    let descriptions: BTreeSet<String> = compact(missing).iter().map(compact_string).collect();
    let mut message = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        go_quote(&identity.user.name),
        go_strings(&identity.user.groups),
        descriptions.into_iter().collect::<Vec<_>>().join("\n")
    );
    if !errors.is_empty() {
        message.push_str(&format!("; resolution errors: [{}]", aggregate(&errors)));
    }
    Err(message)
}

fn rules_of(object: &Value) -> Vec<PolicyRule> {
    serde_json::from_value(object["rules"].clone()).unwrap_or_default()
}

/// Checks that `identity` may write `object` (as it will be stored), a Role, ClusterRole,
/// RoleBinding or ClusterRoleBinding named `name` in `namespace` (empty for cluster-scoped ones).
pub(crate) fn check(
    store: &Store,
    identity: &Identity,
    kind: RbacKind,
    plural: &str,
    namespace: &str,
    name: &str,
    object: &Value,
) -> Result<(), ApiError> {
    if identity.user.is_privileged() {
        return Ok(());
    }
    let allowed = |verb: &str, resource: &str, name: &str| {
        let attrs = RequestAttributes {
            user: identity.user.name.clone(),
            verb: verb.to_owned(),
            api_group: RBAC_GROUP.to_owned(),
            resource: resource.to_owned(),
            namespace: Some(namespace.to_owned()).filter(|n| !n.is_empty()),
            name: Some(name.to_owned()).filter(|n| !n.is_empty()),
            resource_request: true,
            ..RequestAttributes::default()
        };
        authorizer::authorize(store, identity, &attrs).allowed
    };
    let forbidden = |reason: String| {
        ApiError::forbidden_resource(
            Qualified {
                group: RBAC_GROUP,
                name: plural,
            },
            name,
            format!(
                "{plural}.{RBAC_GROUP} {} is forbidden: {reason}",
                go_quote(name)
            ),
        )
    };
    let rules = match kind {
        RbacKind::Role | RbacKind::ClusterRole => {
            if allowed("escalate", plural, name) {
                return Ok(());
            }
            rules_of(object)
        }
        RbacKind::RoleBinding | RbacKind::ClusterRoleBinding => {
            let role_kind = object["roleRef"]["kind"].as_str().unwrap_or_default();
            let role_name = object["roleRef"]["name"].as_str().unwrap_or_default();
            let role_plural = match role_kind {
                "Role" => "roles",
                _ => "clusterroles",
            };
            if allowed("bind", role_plural, role_name) {
                return Ok(());
            }
            let role = match role_kind {
                "Role" => store.role(namespace, role_name).map(|r| r.rules),
                _ => store.cluster_role(role_name).map(|r| r.rules),
            };
            let Some(rules) = role else {
                return Err(ApiError::not_found(
                    Qualified {
                        group: RBAC_GROUP,
                        name: role_plural,
                    },
                    role_name,
                ));
            };
            rules.unwrap_or_default()
        }
    };
    confirm_no_escalation(store, identity, namespace, &rules).map_err(forbidden)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::resolver::tests::rule;

    #[test]
    fn owner_rules_cover_what_they_allow_and_report_what_they_do_not() {
        let owner = [
            rule(&[""], &["configmaps"], &["get", "list"]),
            rule(&["apps"], &["*/scale"], &["*"]),
        ];
        assert!(uncovered(&owner, &[rule(&[""], &["configmaps"], &["get"])]).is_empty());
        assert!(
            uncovered(
                &owner,
                &[rule(&["apps"], &["deployments/scale"], &["update"])]
            )
            .is_empty()
        );
        let missing = compact(uncovered(
            &owner,
            &[rule(&[""], &["configmaps", "secrets"], &["get", "delete"])],
        ));
        let described: Vec<String> = missing.iter().map(compact_string).collect();
        assert_eq!(
            described,
            [
                r#"{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}"#,
                r#"{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}"#,
            ]
        );
    }

    #[test]
    fn resource_names_and_urls_are_covered_as_upstream_does() {
        let mut named = rule(&[""], &["configmaps"], &["get"]);
        named.resource_names = Some(vec!["web".into()]);
        // a named owner rule covers that name only, not every name
        assert!(uncovered(std::slice::from_ref(&named), std::slice::from_ref(&named)).is_empty());
        assert_eq!(
            uncovered(&[named.clone()], &[rule(&[""], &["configmaps"], &["get"])]).len(),
            1
        );
        // an unnamed owner rule covers every name
        assert!(uncovered(&[rule(&[""], &["configmaps"], &["get"])], &[named]).is_empty());
        let urls = |u: &[&str]| PolicyRule {
            non_resource_urls: Some(u.iter().map(|s| s.to_string()).collect()),
            verbs: vec!["get".into()],
            ..PolicyRule::default()
        };
        assert!(uncovered(&[urls(&["/debug/*"])], &[urls(&["/debug/pprof"])]).is_empty());
        assert_eq!(
            compact_string(&uncovered(&[urls(&["/debug/*"])], &[urls(&["/metrics"])])[0]),
            r#"{NonResourceURLs:["/metrics"], Verbs:["get"]}"#
        );
    }
}
