//! RBAC authorization as kube-apiserver's RBAC authorizer decides it, with the real 403 message.
//!
//! - Rule matching is kubernetes `plugin/pkg/auth/authorizer/rbac/rbac.go` `RuleAllows` with the
//!   helpers of `pkg/apis/rbac/v1/evaluation_helpers.go`: `VerbMatches`, `APIGroupMatches`,
//!   `ResourceMatches` (exact `resource/subresource`, `*`, and `*/subresource`),
//!   `ResourceNameMatches` (an empty list allows every name) and `NonResourceURLMatches` (exact,
//!   `*`, or a trailing-`*` prefix).
//! - Which rules apply to a user is `crate::auth::resolver`'s business.
//! - The denial message is `responsewriters.forbiddenMessage` wrapped by `errors.NewForbidden`
//!   (the RBAC authorizer's reason is empty unless a role is missing, so no suffix).

use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::go::fmt::go_quote;

/// What a request asks to do, as the API server's `RequestInfo` and authenticator describe it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RequestAttributes {
    /// The user name (`system:serviceaccount:demo:op`, `admin`).
    pub user: String,
    /// The verb: get, list, watch, create, update, patch, delete, deletecollection (see
    /// [`verb_for`]) or, for non-resource requests, the lowercased HTTP method (`get`).
    pub verb: String,
    /// The API group (`""` for core).
    pub api_group: String,
    /// The resource (plural, `configmaps`).
    pub resource: String,
    /// The subresource (`status`, `scale`), if any.
    pub subresource: Option<String>,
    /// The namespace of a namespaced request.
    pub namespace: Option<String>,
    /// The object's name, when the request names one (not for list, watch of a collection, or
    /// create, whose name is in the body).
    pub name: Option<String>,
    /// The request path (used for non-resource requests).
    pub path: String,
    /// True for requests under `/api` and `/apis` that address resources.
    pub resource_request: bool,
}

impl RequestAttributes {
    fn combined_resource(&self) -> String {
        match self.subresource.as_deref() {
            Some(sub) if !sub.is_empty() => format!("{}/{sub}", self.resource),
            _ => self.resource.clone(),
        }
    }
}

/// The RBAC verb of a resource request (apiserver `RequestInfoFactory.NewRequestInfo`): GET of a
/// named object is `get` (even with `?watch=true`), of a collection `list` (or `watch` with
/// `?watch=true`); POST `create`; PUT `update`; PATCH `patch`; DELETE of a named object
/// `delete`, of a collection `deletecollection`. Other methods lowercase as they are.
///
/// For a list or watch of a collection, `NewRequestInfo` also takes the request's *name* from a
/// field selector that requires `metadata.name=<x>` (so `resourceNames` rules allow watching a
/// single object): the server should set [`RequestAttributes::name`] from it.
pub(crate) fn verb_for(method: &str, has_name: bool, watch: bool) -> String {
    match method.to_ascii_uppercase().as_str() {
        "GET" | "HEAD" if has_name => "get".to_owned(),
        "GET" | "HEAD" if watch => "watch".to_owned(),
        "GET" | "HEAD" => "list".to_owned(),
        "POST" => "create".to_owned(),
        "PUT" => "update".to_owned(),
        "PATCH" => "patch".to_owned(),
        "DELETE" if has_name => "delete".to_owned(),
        "DELETE" => "deletecollection".to_owned(),
        other => other.to_ascii_lowercase(),
    }
}

fn list(v: &Option<Vec<String>>) -> &[String] {
    v.as_deref().unwrap_or(&[])
}

/// `rbacv1helpers.VerbMatches`.
fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == "*" || v == verb)
}

/// `rbacv1helpers.APIGroupMatches`.
fn api_group_matches(rule: &PolicyRule, group: &str) -> bool {
    list(&rule.api_groups)
        .iter()
        .any(|g| g == "*" || g == group)
}

/// `rbacv1helpers.ResourceMatches`.
fn resource_matches(rule: &PolicyRule, combined: &str, subresource: &str) -> bool {
    list(&rule.resources).iter().any(|r| {
        r == "*"
            || r == combined
            || (!subresource.is_empty()
                && r.len() == subresource.len() + 2
                && r.starts_with("*/")
                && r.ends_with(subresource))
    })
}

/// `rbacv1helpers.ResourceNameMatches`.
fn resource_name_matches(rule: &PolicyRule, name: &str) -> bool {
    let names = list(&rule.resource_names);
    names.is_empty() || names.iter().any(|n| n == name)
}

/// `rbacv1helpers.NonResourceURLMatches`.
fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    list(&rule.non_resource_urls).iter().any(|u| {
        u == "*" || u == path || (u.ends_with('*') && path.starts_with(u.trim_end_matches('*')))
    })
}

/// `rbac.RuleAllows`: whether one rule allows the request.
pub(crate) fn rule_allows(rule: &PolicyRule, attrs: &RequestAttributes) -> bool {
    if attrs.resource_request {
        let subresource = attrs.subresource.as_deref().unwrap_or("");
        verb_matches(rule, &attrs.verb)
            && api_group_matches(rule, &attrs.api_group)
            && resource_matches(rule, &attrs.combined_resource(), subresource)
            && resource_name_matches(rule, attrs.name.as_deref().unwrap_or(""))
    } else {
        verb_matches(rule, &attrs.verb) && non_resource_url_matches(rule, &attrs.path)
    }
}

/// `responsewriters.forbiddenMessage`: `User "u" cannot get resource "configmaps" in API group
/// "" in the namespace "demo"` (or `at the cluster scope`, or `cannot get path "/metrics"`).
pub(crate) fn forbidden_reason(attrs: &RequestAttributes) -> String {
    let user = go_quote(&attrs.user);
    if !attrs.resource_request {
        return format!(
            "User {user} cannot {} path {}",
            attrs.verb,
            go_quote(&attrs.path)
        );
    }
    let resource = go_quote(&attrs.combined_resource());
    let group = go_quote(&attrs.api_group);
    match attrs.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!(
            "User {user} cannot {} resource {resource} in API group {group} in the namespace {}",
            attrs.verb,
            go_quote(ns)
        ),
        _ => format!(
            "User {user} cannot {} resource {resource} in API group {group} at the cluster scope",
            attrs.verb
        ),
    }
}

/// The message of the 403 Status (`errors.NewForbidden` over [`forbidden_reason`]):
/// `configmaps "web" is forbidden: …`, `events.events.k8s.io is forbidden: …` without a name,
/// `forbidden: …` for non-resource requests. The Status details are `group`, `kind` = the
/// resource (without subresource) and `name`.
pub(crate) fn forbidden_message(attrs: &RequestAttributes) -> String {
    let reason = forbidden_reason(attrs);
    if !attrs.resource_request || (attrs.resource.is_empty() && attrs.api_group.is_empty()) {
        return format!("forbidden: {reason}");
    }
    let qualified = if attrs.api_group.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}.{}", attrs.resource, attrs.api_group)
    };
    match attrs.name.as_deref() {
        Some(name) if !name.is_empty() => {
            format!("{qualified} {} is forbidden: {reason}", go_quote(name))
        }
        _ => format!("{qualified} is forbidden: {reason}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Authorizes `attrs` against `rules`: `Ok` when a rule allows it, otherwise the message of the
    /// real 403 Status.
    pub(super) fn authorize(rules: &[PolicyRule], attrs: &RequestAttributes) -> Result<(), String> {
        if rules.iter().any(|r| rule_allows(r, attrs)) {
            Ok(())
        } else {
            Err(forbidden_message(attrs))
        }
    }

    fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
        PolicyRule {
            api_groups: Some(groups.iter().map(|s| s.to_string()).collect()),
            resources: Some(resources.iter().map(|s| s.to_string()).collect()),
            verbs: verbs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    /// Asserts of each request whether `rules` allow it.
    fn assert_allows(rules: &[PolicyRule], cases: &[(RequestAttributes, bool)]) {
        for (attrs, allowed) in cases {
            assert_eq!(authorize(rules, attrs).is_ok(), *allowed, "{attrs:?}");
        }
    }

    fn req(
        verb: &str,
        group: &str,
        resource: &str,
        sub: Option<&str>,
        ns: Option<&str>,
        name: Option<&str>,
    ) -> RequestAttributes {
        RequestAttributes {
            user: "u".into(),
            verb: verb.into(),
            api_group: group.into(),
            resource: resource.into(),
            subresource: sub.map(Into::into),
            namespace: ns.map(Into::into),
            name: name.map(Into::into),
            path: String::new(),
            resource_request: true,
        }
    }

    #[test]
    fn forbidden_messages_have_the_real_shapes() {
        let mut a = req("get", "", "configmaps", None, Some("demo"), Some("web"));
        a.user = "system:serviceaccount:demo:op".into();
        assert_eq!(
            authorize(&[], &a).unwrap_err(),
            r#"configmaps "web" is forbidden: User "system:serviceaccount:demo:op" cannot get resource "configmaps" in API group "" in the namespace "demo""#
        );
        let a = req(
            "create",
            "events.k8s.io",
            "events",
            None,
            Some("default"),
            None,
        );
        assert_eq!(
            authorize(&[], &a).unwrap_err(),
            r#"events.events.k8s.io is forbidden: User "u" cannot create resource "events" in API group "events.k8s.io" in the namespace "default""#
        );
        let a = req(
            "list",
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            None,
            None,
            None,
        );
        assert_eq!(
            authorize(&[], &a).unwrap_err(),
            r#"customresourcedefinitions.apiextensions.k8s.io is forbidden: User "u" cannot list resource "customresourcedefinitions" in API group "apiextensions.k8s.io" at the cluster scope"#
        );
        let a = req(
            "patch",
            "demo.kubeward.dev",
            "rollouts",
            Some("status"),
            Some("demo"),
            Some("web"),
        );
        assert_eq!(
            authorize(&[], &a).unwrap_err(),
            r#"rollouts.demo.kubeward.dev "web" is forbidden: User "u" cannot patch resource "rollouts/status" in API group "demo.kubeward.dev" in the namespace "demo""#
        );
        let a = RequestAttributes {
            user: "u".into(),
            verb: "get".into(),
            path: "/metrics".into(),
            ..Default::default()
        };
        assert_eq!(
            authorize(&[], &a).unwrap_err(),
            r#"forbidden: User "u" cannot get path "/metrics""#
        );
    }

    #[test]
    fn verbs_groups_and_resources_must_all_match() {
        let rules = [rule(&[""], &["configmaps"], &["get", "list"])];
        assert_allows(
            &rules,
            &[
                (
                    req("get", "", "configmaps", None, Some("d"), Some("x")),
                    true,
                ),
                (req("list", "", "configmaps", None, Some("d"), None), true),
                (req("watch", "", "configmaps", None, Some("d"), None), false),
                (
                    req("get", "apps", "configmaps", None, Some("d"), Some("x")),
                    false,
                ),
                (req("get", "", "secrets", None, Some("d"), Some("x")), false),
                // the rule for the resource does not cover its subresources
                (
                    req(
                        "get",
                        "",
                        "configmaps",
                        Some("status"),
                        Some("d"),
                        Some("x"),
                    ),
                    false,
                ),
            ],
        );
        let any = [rule(&["*"], &["*"], &["*"])];
        assert_allows(
            &any,
            &[(
                req("patch", "x.io", "things", Some("status"), None, Some("a")),
                true,
            )],
        );
    }

    #[test]
    fn subresources_match_exactly_or_by_star_slash() {
        let status = [rule(
            &["demo.kubeward.dev"],
            &["rollouts/status"],
            &["patch"],
        )];
        assert_allows(
            &status,
            &[
                (
                    req(
                        "patch",
                        "demo.kubeward.dev",
                        "rollouts",
                        Some("status"),
                        Some("d"),
                        Some("w"),
                    ),
                    true,
                ),
                (
                    req(
                        "patch",
                        "demo.kubeward.dev",
                        "rollouts",
                        None,
                        Some("d"),
                        Some("w"),
                    ),
                    false,
                ),
            ],
        );
        let scale = [rule(&["*"], &["*/scale"], &["update"])];
        assert_allows(
            &scale,
            &[
                (
                    req(
                        "update",
                        "apps",
                        "deployments",
                        Some("scale"),
                        Some("d"),
                        Some("w"),
                    ),
                    true,
                ),
                (
                    req(
                        "update",
                        "apps",
                        "deployments",
                        Some("status"),
                        Some("d"),
                        Some("w"),
                    ),
                    false,
                ),
                (
                    req("update", "apps", "deployments", None, Some("d"), Some("w")),
                    false,
                ),
            ],
        );
    }

    #[test]
    fn resource_names_restrict_named_requests_only_to_those_names() {
        let mut r = rule(&[""], &["configmaps"], &["get", "list", "create"]);
        r.resource_names = Some(vec!["web".into()]);
        let rules = [r];
        assert_allows(
            &rules,
            &[
                (
                    req("get", "", "configmaps", None, Some("d"), Some("web")),
                    true,
                ),
                (
                    req("get", "", "configmaps", None, Some("d"), Some("db")),
                    false,
                ),
                // list and create carry no name, so a resourceNames rule does not allow them
                (req("list", "", "configmaps", None, Some("d"), None), false),
                (
                    req("create", "", "configmaps", None, Some("d"), None),
                    false,
                ),
            ],
        );
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_prefix() {
        let rules = [PolicyRule {
            non_resource_urls: Some(vec!["/metrics".into(), "/debug/*".into()]),
            verbs: vec!["get".into()],
            ..Default::default()
        }];
        let at = |path: &str, verb: &str| RequestAttributes {
            user: "u".into(),
            verb: verb.into(),
            path: path.into(),
            ..Default::default()
        };
        assert!(authorize(&rules, &at("/metrics", "get")).is_ok());
        assert!(authorize(&rules, &at("/metrics/x", "get")).is_err());
        assert!(authorize(&rules, &at("/debug/pprof", "get")).is_ok());
        assert!(authorize(&rules, &at("/metrics", "post")).is_err());
        // resource rules never allow non-resource paths
        assert!(authorize(&[rule(&["*"], &["*"], &["*"])], &at("/metrics", "get")).is_err());
    }

    #[test]
    fn verbs_map_from_http_methods() {
        assert_eq!(verb_for("GET", true, false), "get");
        assert_eq!(verb_for("GET", false, false), "list");
        assert_eq!(verb_for("GET", false, true), "watch");
        assert_eq!(verb_for("GET", true, true), "get");
        assert_eq!(verb_for("POST", false, false), "create");
        assert_eq!(verb_for("PUT", true, false), "update");
        assert_eq!(verb_for("PATCH", true, false), "patch");
        assert_eq!(verb_for("DELETE", true, false), "delete");
        assert_eq!(verb_for("DELETE", false, false), "deletecollection");
    }

    proptest! {
        #[test]
        fn star_rule_allows_every_resource_request(
            verb in "[a-z]{1,8}", group in "[a-z.]{0,8}", resource in "[a-z]{1,8}",
            sub in proptest::option::of("[a-z]{1,6}"), name in proptest::option::of("[a-z]{1,6}"),
        ) {
            let a = req(&verb, &group, &resource, sub.as_deref(), Some("d"), name.as_deref());
            prop_assert!(authorize(&[rule(&["*"], &["*"], &["*"])], &a).is_ok());
            let msg = authorize(&[], &a).unwrap_err();
            let combined = a.combined_resource();
            let expected_resource = format!("resource \"{combined}\"");
            prop_assert!(msg.contains(&expected_resource));
        }

        #[test]
        fn exact_rule_allows_exactly_its_request(
            verb in "[a-z]{1,4}", resource in "[a-z]{1,4}", other in "[a-z]{1,4}",
        ) {
            let rules = [rule(&["g"], &[&resource], &[&verb])];
            prop_assert!(authorize(&rules, &req(&verb, "g", &resource, None, None, None)).is_ok());
            prop_assert_eq!(authorize(&rules, &req(&verb, "g", &other, None, None, None)).is_ok(), other == resource);
            prop_assert_eq!(authorize(&rules, &req(&other, "g", &resource, None, None, None)).is_ok(), other == verb);
        }
    }
}

/// The usage examples of this module's items (the module is private to the crate).
#[cfg(test)]
mod examples {
    #[test]
    fn authorize() {
        use crate::rbac::RequestAttributes;
        use crate::rbac::tests::authorize;
        use k8s_openapi::api::rbac::v1::PolicyRule;
        let rules = [PolicyRule {
            api_groups: Some(vec!["".into()]),
            resources: Some(vec!["configmaps".into()]),
            verbs: vec!["list".into()],
            ..Default::default()
        }];
        let attrs = RequestAttributes {
            user: "system:serviceaccount:demo:op".into(),
            verb: "get".into(),
            resource: "configmaps".into(),
            namespace: Some("demo".into()),
            name: Some("web".into()),
            resource_request: true,
            ..Default::default()
        };
        assert_eq!(
            authorize(&rules, &attrs).unwrap_err(),
            r#"configmaps "web" is forbidden: User "system:serviceaccount:demo:op" cannot get resource "configmaps" in API group "" in the namespace "demo""#
        );
    }
}
