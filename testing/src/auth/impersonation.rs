//! Impersonation headers, as apiserver `pkg/endpoints/filters/impersonation/impersonation.go`
//! reads and checks them.
//!
//! - `Impersonate-User` (a service account when it reads `system:serviceaccount:<ns>:<name>`),
//!   `Impersonate-Group` (repeatable), `Impersonate-Uid` and `Impersonate-Extra-<key>`
//!   (repeatable; the key lowercased and percent-decoded). Groups, extras or a uid without a user
//!   are a plain-text 500 `Internal Server Error: "/path": requested [...] without
//!   impersonating a user`.
//! - Each requested value needs the `impersonate` verb on `users`, `groups`, `serviceaccounts`
//!   (in the account's namespace), `uids` or `userextras/<key>` (the last two in
//!   `authentication.k8s.io`), named by the value; the first refused one answers 403 with the
//!   authorizer's message (`users "bob" is forbidden: User "alice" cannot impersonate resource
//!   "users" in API group "" at the cluster scope`).
//! - The impersonated user's groups are the requested ones or, without any, a service
//!   account's; `system:authenticated` is added unless `system:authenticated` or
//!   `system:unauthenticated` was requested (`system:unauthenticated` for `system:anonymous`).
//!   The impersonated user is authorized through RBAC.

use std::collections::BTreeMap;

use http::HeaderMap;

use super::authorizer::{self, Identity};
use super::user::{
    ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS, UserInfo, service_account_groups,
    service_account_user, split_service_account,
};
use crate::rbac::RequestAttributes;
use crate::status::ApiError;
use crate::store::Store;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// One thing a request asks to act as (upstream's `ObjectReference`s).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requested {
    ServiceAccount { namespace: String, name: String },
    User(String),
    Group(String),
    Extra { key: String, value: String },
    Uid(String),
}

impl Requested {
    /// Go's `%v` of the `ObjectReference` upstream builds (`{Group  devs    }`): kind,
    /// namespace, name, uid, apiVersion, resourceVersion and fieldPath, space-separated.
    fn go_value(&self) -> String {
        let (kind, namespace, name, api_version, field_path) = match self {
            Requested::ServiceAccount { namespace, name } => {
                ("ServiceAccount", namespace.as_str(), name.as_str(), "", "")
            }
            Requested::User(name) => ("User", "", name.as_str(), "", ""),
            Requested::Group(name) => ("Group", "", name.as_str(), "", ""),
            Requested::Extra { key, value } => (
                "UserExtra",
                "",
                value.as_str(),
                "authentication.k8s.io/v1",
                key.as_str(),
            ),
            Requested::Uid(uid) => ("UID", "", uid.as_str(), "authentication.k8s.io/v1", ""),
        };
        format!("{{{kind} {namespace} {name}  {api_version}  {field_path}}}")
    }

    /// The `impersonate` request this needs allowed.
    fn attributes(&self, requestor: &str) -> RequestAttributes {
        let (group, resource, subresource, namespace, name) = match self {
            Requested::ServiceAccount { namespace, name } => {
                ("", "serviceaccounts", None, Some(namespace.clone()), name)
            }
            Requested::User(name) => ("", "users", None, None, name),
            Requested::Group(name) => ("", "groups", None, None, name),
            Requested::Extra { key, value } => (
                "authentication.k8s.io",
                "userextras",
                Some(key.clone()),
                None,
                value,
            ),
            Requested::Uid(uid) => ("authentication.k8s.io", "uids", None, None, uid),
        };
        RequestAttributes {
            user: requestor.to_owned(),
            verb: "impersonate".to_owned(),
            api_group: group.to_owned(),
            resource: resource.to_owned(),
            subresource,
            namespace,
            name: Some(name.clone()),
            path: String::new(),
            resource_request: true,
        }
    }
}

fn values<'a>(headers: &'a HeaderMap, name: &str) -> impl Iterator<Item = String> + 'a {
    headers
        .get_all(name)
        .into_iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// `url.PathUnescape`, keeping the key as given when it is malformed.
fn unescape_extra_key(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = key
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            let Some(byte) = hex else {
                return key.to_owned();
            };
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| key.to_owned())
}

/// `buildImpersonationRequests`.
fn requests(headers: &HeaderMap) -> Result<Vec<Requested>, ApiError> {
    let mut requested = Vec::new();
    let user = values(headers, USER).next().filter(|u| !u.is_empty());
    if let Some(user) = &user {
        requested.push(match split_service_account(user) {
            Some((namespace, name)) => Requested::ServiceAccount { namespace, name },
            None => Requested::User(user.clone()),
        });
    }
    requested.extend(values(headers, GROUP).map(Requested::Group));
    let mut extra_headers: Vec<&str> = headers
        .keys()
        .map(|k| k.as_str())
        .filter(|k| k.starts_with(EXTRA_PREFIX))
        .collect();
    extra_headers.sort_unstable();
    for header in extra_headers {
        let key = unescape_extra_key(&header[EXTRA_PREFIX.len()..]);
        requested.extend(values(headers, header).map(|value| Requested::Extra {
            key: key.clone(),
            value,
        }));
    }
    if let Some(uid) = values(headers, UID).next().filter(|u| !u.is_empty()) {
        requested.push(Requested::Uid(uid));
    }
    if user.is_none() && !requested.is_empty() {
        let listed: Vec<String> = requested.iter().map(Requested::go_value).collect();
        // The filter answers with `responsewriters.InternalError` (see `handler`).
        return Err(ApiError::internal(format!(
            "requested [{}] without impersonating a user",
            listed.join(" ")
        )));
    }
    Ok(requested)
}

/// The identity `requestor` acts as: itself without impersonation headers, the impersonated user
/// when every requested value is allowed, otherwise the 400 or 403 kube-apiserver answers.
pub(crate) fn impersonate(
    store: &Store,
    requestor: Identity,
    headers: &HeaderMap,
) -> Result<Identity, ApiError> {
    let requested = requests(headers)?;
    if requested.is_empty() {
        return Ok(requestor);
    }
    let groups_specified = requested.iter().any(|r| matches!(r, Requested::Group(_)));
    let mut user = UserInfo::default();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for request in &requested {
        match request {
            Requested::ServiceAccount { namespace, name } => {
                user.name = service_account_user(namespace, name);
                if !groups_specified {
                    user.groups = service_account_groups(namespace);
                }
            }
            Requested::User(name) => user.name.clone_from(name),
            Requested::Group(group) => user.groups.push(group.clone()),
            Requested::Extra { key, value } => {
                extra.entry(key.clone()).or_default().push(value.clone())
            }
            Requested::Uid(uid) => user.uid.clone_from(uid),
        }
        let attributes = request.attributes(&requestor.user.name);
        authorizer::check(store, &requestor, &attributes)?;
    }
    user.extra = extra;
    let implied = if user.name == ANONYMOUS {
        ALL_UNAUTHENTICATED
    } else {
        ALL_AUTHENTICATED
    };
    let has_either = user.groups.iter().any(|g| {
        g == ALL_UNAUTHENTICATED || (implied == ALL_AUTHENTICATED && g == ALL_AUTHENTICATED)
    });
    if !has_either {
        user.groups.push(implied.to_owned());
    }
    Ok(Identity::rbac(user))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn groups_without_a_user_are_an_internal_error_listing_the_references() {
        let err = requests(&headers(&[("Impersonate-Group", "devs")])).unwrap_err();
        assert_eq!(err.code, 500);
        assert_eq!(
            err.message,
            "requested [{Group  devs    }] without impersonating a user"
        );
    }

    #[test]
    fn service_accounts_users_groups_extras_and_uids_are_requested() {
        let got = requests(&headers(&[
            ("Impersonate-User", "system:serviceaccount:demo:op"),
            ("Impersonate-Group", "a"),
            ("Impersonate-Group", "b"),
            ("Impersonate-Extra-Scopes%2Fx", "view"),
            ("Impersonate-Uid", "1234"),
        ]))
        .unwrap();
        assert_eq!(
            got,
            [
                Requested::ServiceAccount {
                    namespace: "demo".into(),
                    name: "op".into()
                },
                Requested::Group("a".into()),
                Requested::Group("b".into()),
                Requested::Extra {
                    key: "scopes/x".into(),
                    value: "view".into()
                },
                Requested::Uid("1234".into()),
            ]
        );
        let attrs = got[3].attributes("alice");
        assert_eq!(attrs.resource, "userextras");
        assert_eq!(attrs.subresource.as_deref(), Some("scopes/x"));
        assert_eq!(attrs.api_group, "authentication.k8s.io");
    }

    #[test]
    fn the_impersonated_user_gets_the_implied_groups() {
        let store = Store::new(10);
        let admin = Identity::rbac(UserInfo::admin());
        let sa = impersonate(
            &store,
            admin.clone(),
            &headers(&[("Impersonate-User", "system:serviceaccount:demo:op")]),
        )
        .unwrap();
        assert_eq!(sa.user.name, "system:serviceaccount:demo:op");
        assert_eq!(
            sa.user.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:demo",
                "system:authenticated"
            ]
        );
        let grouped = impersonate(
            &store,
            admin.clone(),
            &headers(&[
                ("Impersonate-User", "system:serviceaccount:demo:op"),
                ("Impersonate-Group", "devs"),
            ]),
        )
        .unwrap();
        assert_eq!(grouped.user.groups, ["devs", "system:authenticated"]);
        let anonymous = impersonate(
            &store,
            admin,
            &headers(&[("Impersonate-User", "system:anonymous")]),
        )
        .unwrap();
        assert_eq!(anonymous.user.groups, ["system:unauthenticated"]);
    }

    #[test]
    fn impersonating_needs_the_impersonate_verb() {
        let store = Store::new(10);
        let alice = Identity::rbac(UserInfo::authenticated("alice", &[]));
        let err = impersonate(&store, alice, &headers(&[("Impersonate-User", "bob")])).unwrap_err();
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message,
            r#"users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope"#
        );
    }
}
