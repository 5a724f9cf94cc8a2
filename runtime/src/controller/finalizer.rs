//! Adding and removing the controller's finalizer.
//!
//! Both are merge patches of the whole `metadata.finalizers` list carrying a resourceVersion: if
//! anyone changed the object since, the server answers 409 and the pass is retried on the fresh
//! object instead of overwriting someone else's finalizer. The removal after a cleanup that wrote
//! the status carries the resourceVersion of that write, so the cleanup's own write is not taken
//! for someone else's change (which would run cleanup a second time).
//!
//! Each patch is [bounded](super::in_doubt) by the controller's write timeout, like a status
//! write: a finalizer PATCH the server never answers does not wedge the pass. A patch that failed
//! in doubt (no answer, none in time, a server error) is resolved by reading the object back:
//! if the finalizer is present (add) or absent (remove) as intended, the patch is done — whoever
//! stored it; otherwise the pass fails and is retried with backoff. So is a patch answered 404
//! while the watch still holds the object: only a 404 the watch confirmed (it observed the
//! delete) means the object is gone, never one the read-back contradicts.

use kube::Resource;
use kube::api::{Patch, PatchParams};
use kube::core::Request;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::in_doubt::{self, Writer};

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

/// Adds `finalizer` to `object`, each request bounded by `timeout`.
pub(super) async fn add<K>(
    writer: Writer<'_>,
    object: &K,
    finalizer: &str,
) -> Result<Patched, kube::Error>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    let mut finalizers = object.meta().finalizers.clone().unwrap_or_default();
    finalizers.push(finalizer.to_owned());
    let resource_version = object.meta().resource_version.as_deref();
    let intended = Intended {
        finalizer,
        present: true,
    };
    patch(writer, object, resource_version, finalizers, intended).await
}

/// Removes `finalizer` from `object`, whose resourceVersion is `resource_version` if the pass
/// wrote it since it was read (else the one it was read with). Each request is bounded by
/// `timeout`.
pub(super) async fn remove<K>(
    writer: Writer<'_>,
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
    let intended = Intended {
        finalizer,
        present: false,
    };
    match patch(writer, object, resource_version, finalizers, intended).await {
        // Someone else removed the last finalizer (or force-deleted the object): it is gone.
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(Patched::Gone),
        result => result,
    }
}

/// A finalizer patch answered 404 while the controller's watch still holds the object.
#[derive(Debug, thiserror::Error)]
#[error("the patch was answered 404 ({0}), but the watch still holds the object")]
struct UnconfirmedNotFound(Box<kube::core::Status>);

/// What a finalizer patch is meant to leave stored.
#[derive(Debug, Clone, Copy)]
struct Intended<'a> {
    finalizer: &'a str,
    /// Whether the finalizer is to be present (added) or absent (removed).
    present: bool,
}

async fn patch<K>(
    writer: Writer<'_>,
    object: &K,
    resource_version: Option<&str>,
    finalizers: Vec<String>,
    intended: Intended<'_>,
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
    match writer.send::<Value>(request).await {
        Ok(_) => Ok(Patched::Stored),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Patched::Stale),
        // A 404 is believed once the watch observed the delete (`remove` turns it into
        // `Patched::Gone`); before that it is read back like an answer that was lost, and if
        // the patch did not land it failed — with an error that is not a 404, which `remove`
        // would take for the object gone (and never remove the finalizer again).
        Err(kube::Error::Api(status)) if status.code == 404 && !(writer.observed_gone)() => {
            let unconfirmed = kube::Error::Service(Box::new(UnconfirmedNotFound(status)));
            resolve(writer, object, intended, unconfirmed).await
        }
        Err(error) if in_doubt::in_doubt(&error) => resolve(writer, object, intended, error).await,
        Err(error) => Err(error),
    }
}

/// Resolves a patch that failed in doubt with `error` by reading `object` back:
/// [`Patched::Stored`] if the same object (same uid) has the finalizer as `intended`, else
/// `error` (the pass is retried). A 404 the watch confirmed (`observed_gone`) is the object gone,
/// which a removal intended (the removal of the last finalizer lets the server delete it) and an
/// addition did not.
async fn resolve<K>(
    writer: Writer<'_>,
    object: &K,
    intended: Intended<'_>,
    error: kube::Error,
) -> Result<Patched, kube::Error>
where
    K: Resource<DynamicType = ()>,
{
    let stored = match in_doubt::read_back(writer, object).await {
        Ok(stored) => stored,
        Err(kube::Error::Api(status)) if status.code == 404 => {
            // `remove` turns the 404 into `Patched::Gone`.
            return Err(if intended.present {
                error
            } else {
                kube::Error::Api(status)
            });
        }
        Err(read_error) => {
            tracing::debug!(error = %super::ErrorChain(&read_error), "cannot read back an in-doubt finalizer patch");
            return Err(error);
        }
    };
    let metadata = &stored["metadata"];
    let same_object = metadata["uid"].as_str() == object.meta().uid.as_deref();
    let present = metadata["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|x| x.as_str() == Some(intended.finalizer)));
    if same_object && present == intended.present {
        Ok(Patched::Stored)
    } else if !same_object && !intended.present {
        // Another object of the same name: ours is gone.
        Ok(Patched::Gone)
    } else {
        Err(error)
    }
}
