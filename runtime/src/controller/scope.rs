//! [`Scope`]: where a controller watches — the whole cluster, or one namespace
//! ([`Controller::in_namespace`](super::Controller::in_namespace)).

use k8s_openapi::NamespaceResourceScope;
use kube::Resource;
use kube::api::Api;

/// Builds an API of `K` in a namespace (only a namespaced `K` has one).
type NamespacedApi<K> = fn(kube::Client, &str) -> Api<K>;

/// Where a controller of `K` watches its resource and its relations.
pub(super) struct Scope<K> {
    /// The namespace, with the way to build an API of `K` in it.
    namespace: Option<(String, NamespacedApi<K>)>,
}

impl<K> Clone for Scope<K> {
    fn clone(&self) -> Self {
        Self {
            namespace: self.namespace.clone(),
        }
    }
}

impl<K: Resource<DynamicType = ()>> Scope<K> {
    /// Every namespace (and cluster-scoped objects).
    pub(super) fn cluster() -> Self {
        Self { namespace: None }
    }

    /// The namespace `namespace` alone.
    pub(super) fn namespace(namespace: String) -> Self
    where
        K: Resource<Scope = NamespaceResourceScope>,
    {
        Self {
            namespace: Some((namespace, |client, namespace| {
                Api::namespaced(client, namespace)
            })),
        }
    }

    /// The namespace, if the controller watches one.
    pub(super) fn namespace_name(&self) -> Option<&str> {
        self.namespace
            .as_ref()
            .map(|(namespace, _)| namespace.as_str())
    }

    /// The API of `K` where the controller watches.
    pub(super) fn api(&self, client: kube::Client) -> Api<K> {
        match &self.namespace {
            Some((namespace, api)) => api(client, namespace),
            None => Api::all(client),
        }
    }
}
