//! The authorization decision for a request's identity, as kube-apiserver's authorizer chain
//! makes it (`--authorization-mode=RBAC` behind the privileged-groups authorizer):
//!
//! - members of `system:masters` are allowed everything, with no reason, before RBAC is asked
//!   (apiserver `authorizerfactory.NewPrivilegedGroups`);
//! - everyone else is allowed when a rule from the stored Roles, ClusterRoles and bindings allows
//!   the request (kubernetes `plugin/pkg/auth/authorizer/rbac/rbac.go`), with the reason `RBAC:
//!   allowed by <binding>`; a denial carries `RBAC: <errors>` when a bound role is missing, which
//!   the 403 message appends;
//! - identities minted by [`crate::Identity::Rules`] are decided by their own rules
//!   only, with no reason either way.

use std::sync::Arc;

use k8s_openapi::api::rbac::v1::PolicyRule;

use super::resolver::{self, aggregate};
use super::user::UserInfo;
use crate::rbac::{RequestAttributes, forbidden_message, rule_allows};
use crate::status::{ApiError, Qualified};
use crate::store::Store;

/// Who a request is and how it is authorized.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Identity {
    /// The user.
    pub(crate) user: UserInfo,
    /// `Some` for [`crate::Identity::Rules`] identities: the only rules that apply.
    pub(crate) rules: Option<Arc<[PolicyRule]>>,
}

impl Identity {
    /// A user authorized through RBAC.
    pub(crate) fn rbac(user: UserInfo) -> Self {
        Identity { user, rules: None }
    }
}

/// An authorizer's answer (`authorizer.Decision` and its reason; no opinion is a denial).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    /// Whether the request is allowed.
    pub(crate) allowed: bool,
    /// Why (`RBAC: allowed by …`), or why the rules could not be fully resolved; may be empty.
    pub(crate) reason: String,
}

/// Decides `attrs` for `identity` from the RBAC objects in `store`.
pub(crate) fn authorize(store: &Store, identity: &Identity, attrs: &RequestAttributes) -> Decision {
    if let Some(rules) = &identity.rules {
        return Decision {
            allowed: rules.iter().any(|r| rule_allows(r, attrs)),
            reason: String::new(),
        };
    }
    if identity.user.is_privileged() {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    let namespace = attrs.namespace.as_deref().unwrap_or_default();
    let (rules, errors) = resolver::rules_for(store, &identity.user, namespace);
    if let Some((source, _)) = rules.iter().find(|(_, r)| rule_allows(r, attrs)) {
        return Decision {
            allowed: true,
            reason: format!("RBAC: allowed by {source}"),
        };
    }
    Decision {
        allowed: false,
        reason: if errors.is_empty() {
            String::new()
        } else {
            format!("RBAC: {}", aggregate(&errors))
        },
    }
}

/// [`authorize`], with a denial as the 403 (`responsewriters.Forbidden`: the forbidden
/// message, then `: <reason>` when the authorizer gave one; details naming the resource).
pub(crate) fn check(
    store: &Store,
    identity: &Identity,
    attrs: &RequestAttributes,
) -> Result<(), ApiError> {
    let decision = authorize(store, identity, attrs);
    if decision.allowed {
        return Ok(());
    }
    let message = forbidden_message(attrs);
    let message = if decision.reason.is_empty() {
        message
    } else {
        format!("{message}: {}", decision.reason)
    };
    let resource = Qualified {
        group: &attrs.api_group,
        name: if attrs.resource_request {
            &attrs.resource
        } else {
            ""
        },
    };
    Err(ApiError::forbidden_resource(
        resource,
        attrs.name.as_deref().unwrap_or_default(),
        message,
    ))
}

/// The rules that apply to `identity` in `namespace` and the errors met resolving them
/// (`RuleResolver.RulesFor`, what a SelfSubjectRulesReview reports). The privileged-groups
/// authorizer lists no rules, so `system:masters` members see what RBAC binds to them.
pub(crate) fn rules_for(
    store: &Store,
    identity: &Identity,
    namespace: &str,
) -> (Vec<PolicyRule>, Vec<String>) {
    if let Some(rules) = &identity.rules {
        return (rules.to_vec(), Vec::new());
    }
    let (rules, errors) = resolver::rules_for(store, &identity.user, namespace);
    (rules.into_iter().map(|(_, r)| r).collect(), errors)
}
