//! The names [`Identity`] replaced, kept for one release as deprecated aliases: each does what
//! its note names, so code written against them builds (with a warning that says what to write
//! instead). To be removed in the release after 0.1.

use std::path::Path;

use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::{ApiServer, Cluster, Identity, ServerError};

impl ApiServer {
    /// A client bearing `token`.
    ///
    /// # Errors
    /// As [`client_for`](ApiServer::client_for).
    #[deprecated(since = "0.1.0", note = "use `client_for(&Identity::token(token))`")]
    pub fn client_with_token(&self, token: &str) -> Result<kube::Client, ServerError> {
        self.client_for(&Identity::token(token))
    }

    /// A client acting as `user` in `groups`, authorized by the stored RBAC objects.
    ///
    /// # Errors
    /// As [`client_for`](ApiServer::client_for).
    #[deprecated(
        since = "0.1.0",
        note = "use `client_for(&Identity::user(user, groups))`"
    )]
    pub fn client_as(&self, user: &str, groups: &[&str]) -> Result<kube::Client, ServerError> {
        self.client_for(&Identity::user(user, groups))
    }

    /// A client acting as `user`, authorized against `rules` only.
    ///
    /// # Errors
    /// As [`client_for`](ApiServer::client_for).
    #[deprecated(
        since = "0.1.0",
        note = "use `client_for(&Identity::with_rules(user, rules))`"
    )]
    pub fn client_with_rules(
        &self,
        user: &str,
        rules: Vec<PolicyRule>,
    ) -> Result<kube::Client, ServerError> {
        self.client_for(&Identity::with_rules(user, rules))
    }

    /// A client authenticated by a client certificate for `user` in `groups`.
    ///
    /// # Errors
    /// As [`client_for`](ApiServer::client_for).
    #[deprecated(
        since = "0.1.0",
        note = "use `client_for(&Identity::certificate(user, groups))`"
    )]
    pub fn client_with_certificate(
        &self,
        user: &str,
        groups: &[&str],
    ) -> Result<kube::Client, ServerError> {
        self.client_for(&Identity::certificate(user, groups))
    }

    /// Writes a kubeconfig bearing `token`.
    ///
    /// # Errors
    /// As [`write_kubeconfig_for`](ApiServer::write_kubeconfig_for).
    #[deprecated(
        since = "0.1.0",
        note = "use `write_kubeconfig_for(path, &Identity::token(token))`"
    )]
    pub fn write_kubeconfig_with_token(
        &self,
        path: impl AsRef<Path>,
        token: &str,
    ) -> Result<(), ServerError> {
        self.write_kubeconfig_for(path, &Identity::token(token))
    }

    /// Writes a kubeconfig with a client certificate for `user` in `groups`.
    ///
    /// # Errors
    /// As [`write_kubeconfig_for`](ApiServer::write_kubeconfig_for).
    #[deprecated(
        since = "0.1.0",
        note = "use `write_kubeconfig_for(path, &Identity::certificate(user, groups))`"
    )]
    pub fn write_kubeconfig_with_certificate(
        &self,
        path: impl AsRef<Path>,
        user: &str,
        groups: &[&str],
    ) -> Result<(), ServerError> {
        self.write_kubeconfig_for(path, &Identity::certificate(user, groups))
    }
}

impl Cluster {
    /// A client acting as `user` in `groups`, authorized by RBAC.
    ///
    /// # Errors
    /// As [`client_for`](Cluster::client_for).
    #[deprecated(
        since = "0.1.0",
        note = "use `client_for(&Identity::user(user, groups))`"
    )]
    pub fn client_as(&self, user: &str, groups: &[&str]) -> Result<kube::Client, ServerError> {
        self.client_for(&Identity::user(user, groups))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each alias is its replacement: the server sees the same user and groups, and a
    /// rule-bound client is held to its rules.
    #[tokio::test]
    #[allow(deprecated)]
    async fn the_deprecated_clients_act_as_their_replacements_do() {
        use k8s_openapi::api::authentication::v1::SelfSubjectReview;
        use k8s_openapi::api::core::v1::ConfigMap;
        let server = ApiServer::start().await.unwrap();
        let whoami = |client: kube::Client| async move {
            let review: SelfSubjectReview = kube::Api::all(client)
                .create(&Default::default(), &SelfSubjectReview::default())
                .await
                .unwrap();
            let user = review.status.unwrap().user_info.unwrap();
            (user.username.unwrap(), user.groups.unwrap_or_default())
        };
        let (alice, groups) = whoami(server.client_as("alice", &["devs"]).unwrap()).await;
        assert_eq!(alice, "alice");
        assert!(groups.contains(&"devs".to_owned()), "{groups:?}");

        let rules = vec![PolicyRule {
            api_groups: Some(vec!["authentication.k8s.io".into()]),
            resources: Some(vec!["selfsubjectreviews".into()]),
            verbs: vec!["create".into()],
            ..PolicyRule::default()
        }];
        let bob = server.client_with_rules("bob", rules).unwrap();
        assert_eq!(whoami(bob.clone()).await.0, "bob");
        let configmaps: kube::Api<ConfigMap> = kube::Api::namespaced(bob, "default");
        match configmaps.list(&Default::default()).await {
            Err(kube::Error::Api(status)) => assert_eq!(status.code, 403),
            other => panic!("listing outside bob's rules: {other:?}"),
        }

        let cluster = Cluster::start_on(crate::Backend::Embedded).await.unwrap();
        let (carol, groups) = whoami(cluster.client_as("carol", &["ops"]).unwrap()).await;
        assert_eq!(carol, "carol");
        assert!(groups.contains(&"ops".to_owned()), "{groups:?}");
    }
}
