//! Authentication: which identity a request's credentials name.
//!
//! Credentials are bearer tokens and, over TLS ([`super::tls`]), client certificates (checked
//! first, as kube-apiserver's x509 authenticator comes before its token authenticators). Two
//! modes:
//!
//! - **No credentials configured** (the default): requests without a known token are the cluster
//!   administrator (`system:admin` in `system:masters`), so an unconfigured `kube::Client` or
//!   kubectl just works. Tokens minted by [`crate::Identity::Rules`] still name
//!   their rule-limited identities.
//! - **Tokens configured** ([`crate::ApiServerBuilder::token`]): as kube-apiserver with
//!   `--token-auth-file` and `--anonymous-auth=false`, a request with an unknown token, or with
//!   none, is answered 401 `Unauthorized` (message `Unauthorized`, as the apiserver's
//!   `Unauthorized` handler writes it); with [`crate::ApiServerBuilder::anonymous_auth`], a
//!   request without credentials is `system:anonymous` in `system:unauthenticated` (an unknown
//!   token is still 401). The server then mints an administrator token for
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

/// The token of an `Authorization: Bearer <token>` header (the scheme is case-insensitive, as
/// the apiserver's `bearertoken` authenticator reads it), if any.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

impl Authenticator {
    /// An authenticator knowing `tokens`; with none, every request without a known token is the
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
    /// else of its bearer token — or the 401 for it.
    pub(crate) fn authenticate(
        &self,
        headers: &HeaderMap,
        client: Option<&UserInfo>,
    ) -> Result<Identity, ApiError> {
        if let Some(user) = client {
            return Ok(Identity::rbac(user.clone()));
        }
        let token = bearer_token(headers);
        if let Some(token) = token {
            let known = self
                .tokens
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(token)
                .cloned();
            if let Some(identity) = known {
                return Ok(identity);
            }
        }
        match (self.required, token) {
            (false, _) => Ok(Identity::rbac(UserInfo::admin())),
            (true, None) if self.anonymous => Ok(Identity::rbac(UserInfo::anonymous())),
            (true, _) => Err(unauthorized()),
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
    fn without_configured_tokens_everyone_is_the_administrator() {
        let authn = Authenticator::new(vec![], false);
        assert_eq!(
            authn
                .authenticate(&HeaderMap::new(), None)
                .unwrap()
                .user
                .name,
            "system:admin"
        );
        assert_eq!(
            authn.authenticate(&bearer("nope"), None).unwrap().user.name,
            "system:admin"
        );
        assert!(authn.admin_token().is_none());
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
