//! [`Scope`]: where a controller watches — the whole cluster, one namespace, or a list of
//! namespaces ([`Controller::in_namespace`](super::Controller::in_namespace),
//! [`in_namespaces`](super::Controller::in_namespaces)).

use k8s_openapi::NamespaceResourceScope;
use kube::Resource;
use kube::api::Api;
use kube::core::ApiResource;

use crate::shared_watch::WatchKey;

/// Builds an API of `K` in a namespace (only a namespaced `K` has one).
type NamespacedApi<K> = fn(kube::Client, &str) -> Api<K>;

/// Where a controller of `K` watches its resource and its relations.
pub(super) struct Scope<K> {
    /// The namespaces (none: the whole cluster), with the way to build an API of `K` in one.
    namespaces: Vec<String>,
    namespaced: Option<NamespacedApi<K>>,
}

impl<K> Clone for Scope<K> {
    fn clone(&self) -> Self {
        Self {
            namespaces: self.namespaces.clone(),
            namespaced: self.namespaced,
        }
    }
}

impl<K: Resource<DynamicType = ()>> Scope<K> {
    /// Every namespace (and cluster-scoped objects).
    pub(super) fn cluster() -> Self {
        Self {
            namespaces: Vec::new(),
            namespaced: None,
        }
    }

    /// The namespaces `namespaces` (sorted, each once); the whole cluster when there are none.
    pub(super) fn namespaces(namespaces: impl IntoIterator<Item = String>) -> Self
    where
        K: Resource<Scope = NamespaceResourceScope>,
    {
        let mut namespaces: Vec<String> = namespaces.into_iter().collect();
        namespaces.sort();
        namespaces.dedup();
        Self {
            namespaces,
            namespaced: Some(|client, namespace| Api::namespaced(client, namespace)),
        }
    }

    /// The namespaces the controller watches; none when it watches the whole cluster.
    pub(super) fn namespace_names(&self) -> &[String] {
        &self.namespaces
    }

    /// Where the controller watches, as the namespace of each watch (`None`: the whole cluster).
    pub(super) fn watch_namespaces(&self) -> Vec<Option<&str>> {
        if self.namespaces.is_empty() {
            vec![None]
        } else {
            self.namespaces.iter().map(|n| Some(n.as_str())).collect()
        }
    }

    /// The watch of `K` with `config` where the controller watches, as it can be shared: one
    /// watch of the whole cluster or of one namespace. Several namespaces' watches are merged
    /// into a cache of the controller's own ([`super::namespaces`]): `None`.
    pub(super) fn watch_key(&self, config: &kube::runtime::watcher::Config) -> Option<WatchKey>
    where
        K: 'static,
    {
        let resource = ApiResource::erase::<K>(&());
        match self.watch_namespaces().as_slice() {
            [namespace] => Some(WatchKey::new::<K>(&resource, *namespace, config)),
            _ => None,
        }
    }

    /// The APIs of `K` where the controller watches, one per namespace (or one of the whole
    /// cluster), each with its namespace.
    pub(super) fn apis(&self, client: &kube::Client) -> Vec<(Option<String>, Api<K>)> {
        match self.namespaced {
            Some(namespaced) if !self.namespaces.is_empty() => self
                .namespaces
                .iter()
                .map(|namespace| {
                    (
                        Some(namespace.clone()),
                        namespaced(client.clone(), namespace),
                    )
                })
                .collect(),
            _ => vec![(None, Api::all(client.clone()))],
        }
    }
}
