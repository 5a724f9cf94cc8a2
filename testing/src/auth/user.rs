//! Who a request is (apiserver `user.Info`): a name, a uid, groups and extra values, with the
//! well-known names and the groups kube-apiserver gives service accounts.

use std::collections::BTreeMap;

use crate::validation::names::{is_dns1123_label, is_dns1123_subdomain};

/// `user.SystemPrivilegedGroup`: members are allowed everything, before RBAC is asked.
pub(crate) const SYSTEM_MASTERS: &str = "system:masters";
/// `user.AllAuthenticated`: every authenticated user is in it.
pub(crate) const ALL_AUTHENTICATED: &str = "system:authenticated";
/// `user.AllUnauthenticated`: the anonymous user's group.
pub(crate) const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// `user.Anonymous`.
pub(crate) const ANONYMOUS: &str = "system:anonymous";
/// The user of requests that carry no credentials while the server has none configured.
pub(crate) const ADMIN: &str = "system:admin";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// A request's user (`user.DefaultInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct UserInfo {
    /// The user name (`alice`, `system:serviceaccount:demo:op`).
    pub(crate) name: String,
    /// The uid, empty when the authenticator gives none.
    pub(crate) uid: String,
    /// The groups, in the order the authenticator gave them.
    pub(crate) groups: Vec<String>,
    /// Extra values by key.
    pub(crate) extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// An authenticated user as kube-apiserver's authenticators describe it: `groups`, then a
    /// service account's groups (`system:serviceaccounts`, `system:serviceaccounts:<ns>`) when
    /// `name` is one, then `system:authenticated` (the `AuthenticatedGroupAdder`).
    pub(crate) fn authenticated(name: &str, groups: &[&str]) -> Self {
        let mut all: Vec<String> = groups.iter().map(|g| (*g).to_owned()).collect();
        if let Some((namespace, _)) = split_service_account(name) {
            all.extend(service_account_groups(&namespace));
        }
        if !all.iter().any(|g| g == ALL_AUTHENTICATED) {
            all.push(ALL_AUTHENTICATED.to_owned());
        }
        UserInfo {
            name: name.to_owned(),
            groups: all,
            ..UserInfo::default()
        }
    }

    /// The cluster administrator (`system:masters`).
    pub(crate) fn admin() -> Self {
        Self::authenticated(ADMIN, &[SYSTEM_MASTERS])
    }

    /// The anonymous user (`system:anonymous` in `system:unauthenticated`).
    pub(crate) fn anonymous() -> Self {
        UserInfo {
            name: ANONYMOUS.to_owned(),
            groups: vec![ALL_UNAUTHENTICATED.to_owned()],
            ..UserInfo::default()
        }
    }

    /// Whether the user is in `system:masters`, which kube-apiserver allows everything.
    pub(crate) fn is_privileged(&self) -> bool {
        self.groups.iter().any(|g| g == SYSTEM_MASTERS)
    }
}

/// `serviceaccount.SplitUsername`: the namespace and name of `system:serviceaccount:<ns>:<name>`,
/// `None` unless both are valid (a DNS-1123 label and subdomain).
pub(crate) fn split_service_account(user: &str) -> Option<(String, String)> {
    let rest = user.strip_prefix(SERVICE_ACCOUNT_PREFIX)?;
    let parts: Vec<&str> = rest.split(':').collect();
    let [namespace, name] = parts.as_slice() else {
        return None;
    };
    (is_dns1123_label(namespace).is_empty() && is_dns1123_subdomain(name).is_empty())
        .then(|| ((*namespace).to_owned(), (*name).to_owned()))
}

/// `serviceaccount.MakeUsername`.
pub(crate) fn service_account_user(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}")
}

/// `serviceaccount.MakeGroupNames`.
pub(crate) fn service_account_groups(namespace: &str) -> Vec<String> {
    vec![
        "system:serviceaccounts".to_owned(),
        format!("system:serviceaccounts:{namespace}"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_accounts_get_their_groups_and_everyone_system_authenticated() {
        let sa = UserInfo::authenticated("system:serviceaccount:demo:op", &["ops"]);
        assert_eq!(
            sa.groups,
            [
                "ops",
                "system:serviceaccounts",
                "system:serviceaccounts:demo",
                "system:authenticated"
            ]
        );
        assert_eq!(
            UserInfo::authenticated("alice", &[]).groups,
            ["system:authenticated"]
        );
        assert!(UserInfo::admin().is_privileged());
        assert!(!UserInfo::anonymous().is_privileged());
    }

    #[test]
    fn only_well_formed_service_account_names_split() {
        assert_eq!(
            split_service_account("system:serviceaccount:demo:op"),
            Some(("demo".into(), "op".into()))
        );
        assert_eq!(split_service_account("system:serviceaccount:demo"), None);
        assert_eq!(split_service_account("system:serviceaccount:a:b:c"), None);
        assert_eq!(split_service_account("system:serviceaccount:Demo:op"), None);
        assert_eq!(split_service_account("alice"), None);
    }
}
