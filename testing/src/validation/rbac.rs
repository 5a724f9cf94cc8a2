//! The RBAC kinds' rules and defaulting: kubernetes `pkg/apis/rbac/validation/validation.go`
//! (`ValidateRole`, `ValidateClusterRole`, `ValidateRoleBinding`, `ValidateClusterRoleBinding`
//! and their updates) and `pkg/apis/rbac/v1/defaults.go` (a binding's `roleRef.apiGroup` and a
//! User or Group subject's `apiGroup` default to `rbac.authorization.k8s.io`). Names of all four
//! kinds need only be path segments (`minimalNameRequirements`).

use serde_json::Value;

use super::field::FieldError;
use super::names::{is_dns1123_subdomain, is_valid_path_segment_name};
use crate::go::fmt::go_quote;

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// The four RBAC kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RbacKind {
    /// A namespaced Role.
    Role,
    /// A ClusterRole.
    ClusterRole,
    /// A namespaced RoleBinding.
    RoleBinding,
    /// A ClusterRoleBinding.
    ClusterRoleBinding,
}

impl RbacKind {
    /// The kind served at `group`/`plural`, if it is one of RBAC's.
    pub(crate) fn of(group: &str, plural: &str) -> Option<Self> {
        match (group, plural) {
            (RBAC_GROUP, "roles") => Some(RbacKind::Role),
            (RBAC_GROUP, "clusterroles") => Some(RbacKind::ClusterRole),
            (RBAC_GROUP, "rolebindings") => Some(RbacKind::RoleBinding),
            (RBAC_GROUP, "clusterrolebindings") => Some(RbacKind::ClusterRoleBinding),
            _ => None,
        }
    }

    fn namespaced(self) -> bool {
        matches!(self, RbacKind::Role | RbacKind::RoleBinding)
    }

    fn is_binding(self) -> bool {
        matches!(self, RbacKind::RoleBinding | RbacKind::ClusterRoleBinding)
    }
}

/// A role as storage returns it: protobuf has no empty repeated field, so empty `rules` come
/// back `null`.
pub(crate) fn stored_form(kind: RbacKind, obj: &mut Value) {
    if !kind.is_binding() && obj["rules"].as_array().is_some_and(Vec::is_empty) {
        obj["rules"] = Value::Null;
    }
}

/// `SetDefaults_RoleBinding`, `SetDefaults_ClusterRoleBinding` and `SetDefaults_Subject`.
pub(crate) fn default(kind: RbacKind, obj: &mut Value) {
    if !kind.is_binding() {
        // `rules` has no omitempty: absent, the encoder writes `null`. An empty list decodes
        // as an empty slice, which the field manager sees; storage makes it null
        // ([`stored_form`]).
        if !obj["rules"].is_array() {
            obj["rules"] = Value::Null;
        }
        return;
    }
    // `subjects` is omitempty: an empty list is not written.
    if obj["subjects"].as_array().is_some_and(Vec::is_empty)
        && let Some(fields) = obj.as_object_mut()
    {
        fields.remove("subjects");
    }
    if obj["roleRef"].is_object()
        && obj["roleRef"]["apiGroup"]
            .as_str()
            .is_none_or(str::is_empty)
    {
        obj["roleRef"]["apiGroup"] = Value::from(RBAC_GROUP);
    }
    if let Some(subjects) = obj.get_mut("subjects").and_then(Value::as_array_mut) {
        for subject in subjects.iter_mut().filter(|s| s.is_object()) {
            let defaulted = match subject["kind"].as_str() {
                Some("User" | "Group") => RBAC_GROUP,
                _ => continue,
            };
            if subject["apiGroup"].as_str().is_none_or(str::is_empty) {
                subject["apiGroup"] = Value::from(defaulted);
            }
        }
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn text<'a>(v: &'a Value, field: &str) -> &'a str {
    v[field].as_str().unwrap_or_default()
}

/// `field.NotSupported(path, value, supported)`.
fn not_supported(field: &str, value: &str, supported: &[&str]) -> FieldError {
    let supported: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
    FieldError {
        field: field.to_owned(),
        reason: "FieldValueNotSupported",
        message: format!(
            "Unsupported value: {}: supported values: {}",
            go_quote(value),
            supported.join(", ")
        ),
    }
}

/// A `[]string` as `field.Invalid` renders a list: its JSON (`["/healthz"]`).
fn go_string_slice(values: &[String]) -> String {
    serde_json::to_string(values).unwrap_or_default()
}

/// `validatePolicyRule`.
fn validate_policy_rule(rule: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let (verbs, groups, resources, names, urls) = (
        strings(&rule["verbs"]),
        strings(&rule["apiGroups"]),
        strings(&rule["resources"]),
        strings(&rule["resourceNames"]),
        strings(&rule["nonResourceURLs"]),
    );
    if verbs.is_empty() {
        errs.push(FieldError::required_because(
            &format!("{path}.verbs"),
            "verbs must contain at least one value",
        ));
    }
    if !urls.is_empty() {
        let field = format!("{path}.nonResourceURLs");
        let rendered = go_string_slice(&urls);
        if namespaced {
            errs.push(FieldError::invalid_rendered(
                &field,
                &rendered,
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if !groups.is_empty() || !resources.is_empty() || !names.is_empty() {
            errs.push(FieldError::invalid_rendered(
                &field,
                &rendered,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if groups.is_empty() {
        errs.push(FieldError::required_because(
            &format!("{path}.apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if resources.is_empty() {
        errs.push(FieldError::required_because(
            &format!("{path}.resources"),
            "resource rules must supply at least one resource",
        ));
    }
    if !names.is_empty() && resources.len() > 1 {
        errs.push(FieldError::required_because(
            &format!("{path}.resourceNames"),
            "resource names cannot apply to multiple resources",
        ));
    }
    errs
}

/// `validateRoleBindingSubject`.
fn validate_subject(subject: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = text(subject, "name");
    let api_group = text(subject, "apiGroup");
    let field = |child: &str| format!("{path}.{child}");
    if name.is_empty() {
        errs.push(FieldError::required(&field("name")));
    }
    match text(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for msg in is_dns1123_subdomain(name) {
                    errs.push(FieldError::invalid(&field("name"), name, &msg));
                }
            }
            if !api_group.is_empty() {
                errs.push(not_supported(&field("apiGroup"), api_group, &[""]));
            }
            if !namespaced && text(subject, "namespace").is_empty() {
                errs.push(FieldError::required(&field("namespace")));
            }
        }
        "User" | "Group" => {
            // An empty name was reported as Required above (upstream has no second check).
            if api_group != RBAC_GROUP {
                errs.push(not_supported(&field("apiGroup"), api_group, &[RBAC_GROUP]));
            }
        }
        other => errs.push(not_supported(
            &field("kind"),
            other,
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

/// The internal `rbac.RoleRef` as `field.Invalid` renders a struct: its JSON, with Go's field
/// names (`{"APIGroup":"rbac.authorization.k8s.io","Kind":"Role","Name":"r"}`).
fn go_role_ref(role_ref: &Value) -> String {
    serde_json::json!({
        "APIGroup": text(role_ref, "apiGroup"),
        "Kind": text(role_ref, "kind"),
        "Name": text(role_ref, "name"),
    })
    .to_string()
}

/// The kind's rules on `new`, and for an update of a binding, that `roleRef` is unchanged.
/// Runs after [`default`].
pub(crate) fn validate(kind: RbacKind, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !kind.is_binding() {
        if let Some(rules) = new["rules"].as_array() {
            for (i, rule) in rules.iter().enumerate() {
                errs.extend(validate_policy_rule(
                    rule,
                    kind.namespaced(),
                    &format!("rules[{i}]"),
                ));
            }
        }
        return errs;
    }
    let role_ref = &new["roleRef"];
    let api_group = text(role_ref, "apiGroup");
    if api_group != RBAC_GROUP {
        errs.push(not_supported("roleRef.apiGroup", api_group, &[RBAC_GROUP]));
    }
    let role_kind = text(role_ref, "kind");
    let kinds: &[&str] = if kind.namespaced() {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&role_kind) {
        errs.push(not_supported("roleRef.kind", role_kind, kinds));
    }
    let role_name = text(role_ref, "name");
    if role_name.is_empty() {
        errs.push(FieldError::required("roleRef.name"));
    } else {
        for msg in is_valid_path_segment_name(role_name) {
            errs.push(FieldError::invalid("roleRef.name", role_name, &msg));
        }
    }
    if let Some(subjects) = new["subjects"].as_array() {
        for (i, subject) in subjects.iter().enumerate() {
            errs.extend(validate_subject(
                subject,
                kind.namespaced(),
                &format!("subjects[{i}]"),
            ));
        }
    }
    if let Some(old) = old {
        let fields = ["apiGroup", "kind", "name"];
        if fields
            .iter()
            .any(|f| text(role_ref, f) != text(&old["roleRef"], f))
        {
            errs.push(FieldError::invalid_rendered(
                "roleRef",
                &go_role_ref(role_ref),
                "cannot change roleRef",
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn rules_need_verbs_and_either_resources_or_urls() {
        let role = json!({"rules": [
            {"apiGroups": [""], "resources": ["configmaps", "secrets"], "resourceNames": ["a"], "verbs": []},
            {"nonResourceURLs": ["/metrics"], "resources": ["pods"], "verbs": ["get"]},
            {"verbs": ["get"]},
        ]});
        assert_eq!(
            messages(&validate(RbacKind::Role, &role, None)),
            [
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[0].resourceNames: Required value: resource names cannot apply to multiple resources",
                r#"rules[1].nonResourceURLs: Invalid value: ["/metrics"]: namespaced rules cannot apply to non-resource URLs"#,
                r#"rules[1].nonResourceURLs: Invalid value: ["/metrics"]: rules cannot apply to both regular resources and non-resource URLs"#,
                "rules[2].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[2].resources: Required value: resource rules must supply at least one resource",
            ]
        );
        let cluster = json!({"rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]});
        assert!(validate(RbacKind::ClusterRole, &cluster, None).is_empty());
    }

    #[test]
    fn bindings_check_their_role_ref_and_subjects_after_defaulting() {
        let mut binding = json!({
            "roleRef": {"kind": "Role", "name": "r"},
            "subjects": [
                {"kind": "User", "name": "alice"},
                {"kind": "ServiceAccount", "name": "op"},
                {"kind": "Robot", "name": "x"},
                {"kind": "ServiceAccount", "name": "Op", "apiGroup": "x"},
            ],
        });
        default(RbacKind::ClusterRoleBinding, &mut binding);
        assert_eq!(binding["roleRef"]["apiGroup"], RBAC_GROUP);
        assert_eq!(binding["subjects"][0]["apiGroup"], RBAC_GROUP);
        assert_eq!(
            messages(&validate(RbacKind::ClusterRoleBinding, &binding, None)),
            [
                r#"roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole""#,
                "subjects[1].namespace: Required value",
                r#"subjects[2].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group""#,
                r#"subjects[3].name: Invalid value: "Op": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
                r#"subjects[3].apiGroup: Unsupported value: "x": supported values: """#,
                "subjects[3].namespace: Required value",
            ]
        );
        // In a RoleBinding, a service account defaults to the binding's namespace.
        assert_eq!(
            messages(&validate(RbacKind::RoleBinding, &binding, None)),
            [
                r#"subjects[2].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group""#,
                r#"subjects[3].name: Invalid value: "Op": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#,
                r#"subjects[3].apiGroup: Unsupported value: "x": supported values: """#,
            ]
        );
    }

    #[test]
    fn a_binding_role_ref_cannot_change() {
        let old = json!({"roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "a"}});
        let new = json!({"roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "b"}});
        assert_eq!(
            messages(&validate(RbacKind::ClusterRoleBinding, &new, Some(&old))),
            [
                r#"roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"b"}: cannot change roleRef"#
            ]
        );
        assert!(validate(RbacKind::ClusterRoleBinding, &old, Some(&old)).is_empty());
    }
}
