//! Adding and removing the controller's finalizer.
//!
//! Both are merge patches of the whole `metadata.finalizers` list carrying a resourceVersion: if
//! anyone changed the object since, the server answers 409 and the pass is retried on the fresh
//! object instead of overwriting someone else's finalizer. The removal after a cleanup that wrote
//! the status carries the resourceVersion of that write, so the cleanup's own write is not taken
//! for someone else's change (which would run cleanup a second time).

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
    /// The object changed since it was read (409).
    Stale,
    /// The object is gone (404 on removal): someone else let it go.
    Gone,
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
    let resource_version = object.meta().resource_version.as_deref();
    patch(client, object, resource_version, finalizers).await
}

/// Removes `finalizer` from `object`, whose resourceVersion is `resource_version` if the pass
/// wrote it since it was read (else the one it was read with).
pub(crate) async fn remove<K>(
    client: &kube::Client,
    object: &K,
    resource_version: Option<&str>,
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
    let resource_version = resource_version.or(object.meta().resource_version.as_deref());
    match patch(client, object, resource_version, finalizers).await {
        // Someone else removed the last finalizer (or force-deleted the object): it is gone.
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Patched::Gone),
        result => result,
    }
}

async fn patch<K>(
    client: &kube::Client,
    object: &K,
    resource_version: Option<&str>,
    finalizers: Vec<String>,
) -> Result<Patched, kube::Error>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    let meta = object.meta();
    let body = json!({
        "metadata": { "resourceVersion": resource_version, "finalizers": finalizers },
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
