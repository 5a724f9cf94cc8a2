//! [`Identity`]: who a client or a kubeconfig of a test's API server acts as.

use k8s_openapi::api::rbac::v1::PolicyRule;

/// Who a client ([`ApiServer::client_for`], [`Cluster::client_for`]) or a kubeconfig
/// ([`ApiServer::write_kubeconfig_for`], [`Cluster::write_kubeconfig_for`]) acts as.
///
/// ```no_run
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// use kubeward_testing::{ApiServer, Identity};
/// let server = ApiServer::builder().tls(true).start().await?;
/// // Authorized by RBAC from the Roles and bindings stored in the server.
/// let operator = server.client_for(&Identity::user("system:serviceaccount:default:op", &[]))?;
/// // kubectl sends a certificate only to https servers (hence `.tls(true)`).
/// server.write_kubeconfig_for("robot.kubeconfig", &Identity::certificate("robot", &["robots"]))?;
/// # Ok(()) }
/// ```
///
/// [`ApiServer::client_for`]: crate::ApiServer::client_for
/// [`ApiServer::write_kubeconfig_for`]: crate::ApiServer::write_kubeconfig_for
/// [`Cluster::client_for`]: crate::Cluster::client_for
/// [`Cluster::write_kubeconfig_for`]: crate::Cluster::write_kubeconfig_for
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Identity {
    /// The cluster administrator (`system:admin` in `system:masters`): without credentials or,
    /// once tokens are configured ([`ApiServerBuilder::token`](crate::ApiServerBuilder::token)),
    /// with the administrator's token. [`ApiServer::client`](crate::ApiServer::client) and
    /// [`ApiServer::write_kubeconfig`](crate::ApiServer::write_kubeconfig) are its shorthands.
    Admin,
    /// Bearing this token (`Authorization: Bearer`): one configured with
    /// [`ApiServerBuilder::token`](crate::ApiServerBuilder::token) names its user; an unknown
    /// one gets 401, as kube-apiserver answers it.
    Token(String),
    /// `user` in `groups` (plus `system:authenticated` and a service account's groups, as
    /// [`ApiServerBuilder::token`](crate::ApiServerBuilder::token) gives them), authorized by
    /// RBAC from the Roles, ClusterRoles and bindings stored in the server. The embedded server
    /// mints a token for it; on the real backend the administrator impersonates it (as `kubectl
    /// --as`).
    User {
        /// The user name, e.g. `system:serviceaccount:<namespace>:<name>`.
        user: String,
        /// Its groups.
        groups: Vec<String>,
    },
    /// `user` whose requests are authorized against `rules` only, not the stored RBAC objects
    /// (non-resource requests unchecked): requests outside them get 403 Forbidden with the real
    /// message. Embedded server only.
    Rules {
        /// The user name.
        user: String,
        /// The only rules that apply to it.
        rules: Vec<PolicyRule>,
    },
    /// A client certificate for `user` in `groups` (plus `system:authenticated` and a service
    /// account's groups), issued by the server's CA, authorized by RBAC from the stored
    /// objects. Needs a server started with
    /// [`ApiServerBuilder::tls`](crate::ApiServerBuilder::tls); embedded server only.
    Certificate {
        /// The certificate's common name.
        user: String,
        /// Its organizations.
        groups: Vec<String>,
    },
}

impl Identity {
    /// [`Identity::Token`].
    pub fn token(token: impl Into<String>) -> Self {
        Self::Token(token.into())
    }

    /// [`Identity::User`]: `user` in `groups`, authorized by the stored RBAC objects.
    pub fn user(user: impl Into<String>, groups: &[&str]) -> Self {
        Self::User {
            user: user.into(),
            groups: owned(groups),
        }
    }

    /// [`Identity::Rules`]: `user` authorized against `rules` only.
    pub fn with_rules(user: impl Into<String>, rules: Vec<PolicyRule>) -> Self {
        Self::Rules {
            user: user.into(),
            rules,
        }
    }

    /// [`Identity::Certificate`]: a client certificate for `user` in `groups`.
    pub fn certificate(user: impl Into<String>, groups: &[&str]) -> Self {
        Self::Certificate {
            user: user.into(),
            groups: owned(groups),
        }
    }

    /// The service account `namespace/name` (`system:serviceaccount:<namespace>:<name>`), as
    /// [`Identity::User`].
    pub fn service_account(namespace: &str, name: &str) -> Self {
        Self::user(format!("system:serviceaccount:{namespace}:{name}"), &[])
    }
}

fn owned(groups: &[&str]) -> Vec<String> {
    groups.iter().map(|g| (*g).to_owned()).collect()
}
