//! Authentication: which identity a request's credentials name.
//!
//! Credentials are bearer tokens and, over TLS ([`super::tls`]), client certificates (checked
//! first, as kube-apiserver's x509 authenticator comes before its token authenticators). A bearer
//! token that authenticates no one is always answered 401 `Unauthorized` (message
//! `Unauthorized`, as the apiserver's `Unauthorized` handler writes it): kube-apiserver never
//! takes a bad token for anonymous or for anyone else (`union.NewFailOnError` puts the anonymous
//! authenticator behind the others). What a request *without* credentials is depends on the mode:
//!
//! - **No credentials configured** (the default): the cluster administrator (`system:admin` in
//!   `system:masters`), so an unconfigured `kube::Client` or kubectl just works. Tokens minted by
//!   [`crate::Identity::Rules`] and the other identities name theirs.
//! - **Tokens configured** ([`crate::ApiServerBuilder::token`]): as kube-apiserver with
//!   `--token-auth-file` and `--anonymous-auth=false`, 401; with
//!   [`crate::ApiServerBuilder::anonymous_auth`], `system:anonymous` in
//!   `system:unauthenticated`. The server then mints an administrator token for
//!   [`crate::ApiServer::client`] and [`crate::ApiServer::write_kubeconfig`].

use std::collections::HashMap;
use std::sync::Mutex;

use http::{HeaderMap, header};

use super::authorizer::Identity;
use super::user::UserInfo;
use crate::status::ApiError;

/// The identities behind bearer tokens, and what a request without a known one is.
#[derive(Debug)]
pub(crate) struct Authenticator {
    tokens: Mutex<HashMap<String, Identity>>,
    /// Credentials were configured: unknown or missing ones are refused.
    required: bool,
    /// Requests without credentials are `system:anonymous` (only when `required`).
    anonymous: bool,
    /// The administrator's token, minted when `required`.
    admin_token: Option<String>,
}

/// A fresh random token.
fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The 401 kube-apiserver answers a request it cannot authenticate.
pub(crate) fn unauthorized() -> ApiError {
    ApiError {
        code: 401,
        reason: "Unauthorized",
        message: "Unauthorized".into(),
        details: None,
    }
}

/// The token of an `Authorization: Bearer <token>` header, if any, as the apiserver's
/// `bearertoken` authenticator reads it: the trimmed header split at spaces into at most three
/// parts, the scheme case-insensitive, the token the second part (`Bearer  t`, with two spaces,
/// has an empty one, which is no credential at all).
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let mut parts = value.splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl Authenticator {
    /// An authenticator knowing `tokens`; with none, every request without credentials is the
    /// administrator.
    pub(crate) fn new(tokens: Vec<(String, UserInfo)>, anonymous: bool) -> Self {
        let required = !tokens.is_empty();
        let mut known: HashMap<String, Identity> = tokens
            .into_iter()
            .map(|(token, user)| (token, Identity::rbac(user)))
            .collect();
        let admin_token = required.then(|| {
            let token = new_token();
            known.insert(token.clone(), Identity::rbac(UserInfo::admin()));
            token
        });
        Authenticator {
            tokens: Mutex::new(known),
            required,
            anonymous,
            admin_token,
        }
    }

    /// Registers `identity` under a new token and returns the token.
    pub(crate) fn mint(&self, identity: Identity) -> String {
        let token = new_token();
        self.tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.clone(), identity);
        token
    }

    /// The administrator's token, when credentials are required.
    pub(crate) fn admin_token(&self) -> Option<&str> {
        self.admin_token.as_deref()
    }

    /// The identity of a request — the user of its verified client certificate (`client`),
    /// else of its bearer token, else what a request without credentials is — or the 401 for
    /// it (a token that authenticates no one, or no credentials when they are required).
    pub(crate) fn authenticate(
        &self,
        headers: &HeaderMap,
        client: Option<&UserInfo>,
    ) -> Result<Identity, ApiError> {
        if let Some(user) = client {
            return Ok(Identity::rbac(user.clone()));
        }
        if let Some(token) = bearer_token(headers) {
            return self
                .tokens
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(token)
                .cloned()
                .ok_or_else(unauthorized);
        }
        match (self.required, self.anonymous) {
            (false, _) => Ok(Identity::rbac(UserInfo::admin())),
            (true, true) => Ok(Identity::rbac(UserInfo::anonymous())),
            (true, false) => Err(unauthorized()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bearer(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            format!("Bearer {token}").parse().expect("header"),
        );
        headers
    }

    #[test]
    fn without_configured_tokens_requests_without_credentials_are_the_administrator() {
        let authn = Authenticator::new(vec![], false);
        assert_eq!(
            authn
                .authenticate(&HeaderMap::new(), None)
                .unwrap()
                .user
                .name,
            "system:admin"
        );
        assert!(authn.admin_token().is_none());
        // A token that authenticates no one is refused, as kube-apiserver refuses it.
        assert_eq!(
            authn.authenticate(&bearer("nope"), None).unwrap_err(),
            unauthorized()
        );
        let minted = authn.mint(Identity::rbac(UserInfo::authenticated("bob", &[])));
        assert_eq!(
            authn
                .authenticate(&bearer(&minted), None)
                .unwrap()
                .user
                .name,
            "bob"
        );
        // Not bearer credentials: no credentials at all.
        for value in ["Basic Ym9iOnB3", "Bearer", "Bearer  two-spaces"] {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, value.parse().unwrap());
            assert_eq!(
                authn.authenticate(&headers, None).unwrap().user.name,
                "system:admin",
                "{value}"
            );
        }
        // The token is the second space-separated part, as the bearer token authenticator
        // reads it.
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            format!("bearer {minted} trailing").parse().unwrap(),
        );
        assert_eq!(authn.authenticate(&headers, None).unwrap().user.name, "bob");
    }

    #[test]
    fn with_configured_tokens_unknown_and_missing_ones_are_401() {
        let alice = UserInfo::authenticated("alice", &["devs"]);
        let authn = Authenticator::new(vec![("t1".into(), alice.clone())], false);
        assert_eq!(authn.authenticate(&bearer("t1"), None).unwrap().user, alice);
        assert_eq!(
            authn.authenticate(&bearer("nope"), None).unwrap_err(),
            unauthorized()
        );
        assert_eq!(
            authn.authenticate(&HeaderMap::new(), None).unwrap_err(),
            unauthorized()
        );
        let admin = authn.admin_token().expect("an admin token").to_owned();
        assert!(
            authn
                .authenticate(&bearer(&admin), None)
                .unwrap()
                .user
                .is_privileged()
        );
        // the scheme is case-insensitive
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, "bearer t1".parse().unwrap());
        assert_eq!(
            authn.authenticate(&headers, None).unwrap().user.name,
            "alice"
        );
    }

    #[test]
    fn anonymous_auth_admits_requests_without_credentials_only() {
        let authn =
            Authenticator::new(vec![("t1".into(), UserInfo::authenticated("a", &[]))], true);
        let anonymous = authn.authenticate(&HeaderMap::new(), None).unwrap();
        assert_eq!(anonymous.user, UserInfo::anonymous());
        assert_eq!(
            authn.authenticate(&bearer("nope"), None).unwrap_err(),
            unauthorized()
        );
    }
}
