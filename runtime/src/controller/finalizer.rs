//! Adding and removing the controller's finalizer.
//!
//! Both are merge patches of the whole `metadata.finalizers` list carrying the object's
//! resourceVersion: if anyone changed the object since it was read, the server answers 409 and
//! the pass is retried on the fresh object instead of overwriting someone else's finalizer.

use kube::Resource;
use kube::api::{Patch, PatchParams};
use kube::core::Request;
use serde::de::DeserializeOwned;
use serde_json::json;

/// What became of a finalizer patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Patched {
    /// Stored.
    Stored,
    /// The object changed since it was read (409), or is already gone (404 on removal).
    Stale,
}

/// Whether `object` carries `finalizer`.
pub(crate) fn has<K: Resource>(object: &K, finalizer: &str) -> bool {
    object
        .meta()
        .finalizers
        .as_ref()
        .is_some_and(|f| f.iter().any(|x| x == finalizer))
}

/// Adds `finalizer` to `object`.
pub(crate) async fn add<K>(
    client: &kube::Client,
    object: &K,
    finalizer: &str,
) -> Result<Patched, kube::Error>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    let mut finalizers = object.meta().finalizers.clone().unwrap_or_default();
    finalizers.push(finalizer.to_owned());
    patch(client, object, finalizers).await
}

/// Removes `finalizer` from `object`.
pub(crate) async fn remove<K>(
    client: &kube::Client,
    object: &K,
    finalizer: &str,
) -> Result<Patched, kube::Error>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    let finalizers: Vec<String> = object
        .meta()
        .finalizers
        .iter()
        .flatten()
        .filter(|f| *f != finalizer)
        .cloned()
        .collect();
    match patch(client, object, finalizers).await {
        // Removing the last finalizer of a deleted object deletes it: a 404 means it is gone.
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Patched::Stale),
        result => result,
    }
}

async fn patch<K>(
    client: &kube::Client,
    object: &K,
    finalizers: Vec<String>,
) -> Result<Patched, kube::Error>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    let meta = object.meta();
    let body = json!({
        "metadata": { "resourceVersion": meta.resource_version, "finalizers": finalizers },
    });
    let request = Request::new(K::url_path(&(), meta.namespace.as_deref()))
        .patch(
            meta.name.as_deref().unwrap_or_default(),
            &PatchParams::default(),
            &Patch::Merge(&body),
        )
        .map_err(kube::Error::BuildRequest)?;
    match client.request::<serde_json::Value>(request).await {
        Ok(_) => Ok(Patched::Stored),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Patched::Stale),
        Err(error) => Err(error),
    }
}
