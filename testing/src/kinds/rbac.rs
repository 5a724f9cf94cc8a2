//! The RBAC kinds (`pkg/registry/rbac`): Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings, their typed decoding, defaulting, rules and stored form. The escalation
//! check on their writes is the registry's admission (`crate::registry`).

use serde_json::Value;

use super::Strategy;
use crate::validation::names::NameRule;
use crate::validation::rbac::{self, RbacKind};
use crate::validation::{FieldError, gotypes};

/// One RBAC kind's [`Strategy`].
pub(crate) struct Rbac(RbacKind);

static ROLES: Rbac = Rbac(RbacKind::Role);
static CLUSTER_ROLES: Rbac = Rbac(RbacKind::ClusterRole);
static ROLE_BINDINGS: Rbac = Rbac(RbacKind::RoleBinding);
static CLUSTER_ROLE_BINDINGS: Rbac = Rbac(RbacKind::ClusterRoleBinding);

/// The strategy of `kind`.
pub(crate) fn strategy(kind: RbacKind) -> &'static Rbac {
    match kind {
        RbacKind::Role => &ROLES,
        RbacKind::ClusterRole => &CLUSTER_ROLES,
        RbacKind::RoleBinding => &ROLE_BINDINGS,
        RbacKind::ClusterRoleBinding => &CLUSTER_ROLE_BINDINGS,
    }
}

impl Strategy for Rbac {
    fn go_type(&self) -> Option<&'static gotypes::Struct> {
        Some(match self.0 {
            RbacKind::Role => &gotypes::ROLE,
            RbacKind::ClusterRole => &gotypes::CLUSTER_ROLE,
            RbacKind::RoleBinding => &gotypes::ROLE_BINDING,
            RbacKind::ClusterRoleBinding => &gotypes::CLUSTER_ROLE_BINDING,
        })
    }

    fn decode(&self, obj: &mut Value) -> Result<(), String> {
        rbac::default(self.0, obj);
        Ok(())
    }

    /// Their names are path segments (`ValidateRBACName`).
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn field_rules(&self, new: &Value, old: Option<&Value>) -> Vec<FieldError> {
        rbac::validate(self.0, new, old)
    }

    fn update_revalidates_metadata(&self) -> bool {
        true
    }

    fn stored_form(&self, obj: &mut Value) {
        rbac::stored_form(self.0, obj);
    }
}
