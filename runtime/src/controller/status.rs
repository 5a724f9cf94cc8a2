//! Writing a pass's condition changes to `status`, and finding the transitions a write made
//! durable.
//!
//! A write whose answer was lost is *in doubt*: kube's client retries a 504 that came after the
//! patch committed, and the retry, carrying the old resourceVersion, answers 409 although the
//! status is stored; a connection dropped after the commit answers nothing. Such a write is
//! resolved by reading the object back and comparing the stored conditions with the written
//! ones, never by assuming it failed (a transition event lost for good) or succeeded.
//!
//! Every request — the write and each read-back — is [bounded](super::in_doubt) by the
//! controller's write timeout: a write that timed out is in doubt like one whose connection
//! dropped.
//!
//! Except when the write builds on a version this controller's own stored write already replaced
//! ([`Basis::Replaced`]: its cache had not delivered that write yet). Such a write cannot commit,
//! and a read-back would be fooled: a pass recomputing the earlier write's transition within the
//! same second writes exactly the stored conditions, so the refused write would pass for stored
//! and its transition be published a second time.

use kube::Resource;
use kube::api::{Patch, PatchParams};
use kube::core::Request;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::in_doubt::{self, Writer};
use crate::conditions::Condition;

/// The result of a status write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Written {
    /// The server stored the new status; the object now has this resourceVersion.
    Stored {
        /// The resourceVersion of the stored object, which later writes of the pass build on.
        resource_version: Option<String>,
    },
    /// The object changed since the pass read it (409): nothing was stored.
    Conflict,
}

/// What the version a status write builds on (the one its pass read) is known to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Basis {
    /// The object's current version as far as this controller knows: a write whose answer was
    /// lost may have committed, and is read back.
    Current,
    /// A version this controller's own stored status write replaced: the write cannot commit
    /// (the server refuses its resourceVersion), so a 409 is a conflict and a lost answer a
    /// failure, never read back.
    Replaced,
}

/// The stored `status.conditions` of `object`, and its other status fields. Conditions are
/// empty if absent or malformed (a malformed list is logged, and replaced by the pass's own on
/// the next write).
pub(crate) fn status_of<K: Serialize>(object: &K) -> (Vec<Condition>, Map<String, Value>) {
    let status = match super::status_field::status_field(object) {
        Ok(status) => status,
        // Not a struct or map: serialize it whole, as the API server would see it.
        Err(_) => match serde_json::to_value(object) {
            Ok(Value::Object(mut object)) => object.remove("status"),
            _ => None,
        },
    };
    let Some(Value::Object(mut status)) = status else {
        return Default::default();
    };
    let conditions = match status.remove("conditions") {
        None | Some(Value::Null) => Vec::new(),
        Some(conditions) => serde_json::from_value(conditions).unwrap_or_else(|error| {
            tracing::warn!(%error, "ignoring malformed status.conditions");
            Vec::new()
        }),
    };
    (conditions, status)
}

/// Whether `pending` differs from `stored` in anything but `lastTransitionTime`.
pub(crate) fn needs_write(stored: &[Condition], pending: &[Condition]) -> bool {
    stored.len() != pending.len()
        || stored.iter().zip(pending).any(|(a, b)| {
            a.type_ != b.type_
                || a.status != b.status
                || a.reason != b.reason
                || a.message != b.message
                || a.observed_generation != b.observed_generation
        })
}

/// The conditions of `pending` whose (status, reason) is new relative to `stored`: one event each.
pub(crate) fn transitions<'a>(
    stored: &[Condition],
    pending: &'a [Condition],
) -> Vec<&'a Condition> {
    pending
        .iter()
        .filter(|p| {
            !stored
                .iter()
                .any(|s| s.type_ == p.type_ && s.status == p.status && s.reason == p.reason)
        })
        .collect()
}

/// Writes `conditions` (and any `extra` status fields) to `object`'s status subresource with a
/// merge patch that carries the object's resourceVersion, so that a write based on a stale read
/// is refused (409) instead of overwriting someone else's change. A write built on a
/// [`Basis::Current`] version that fails in doubt is read back. Each request is bounded by the
/// `writer`'s timeout; a read-back answered 404 is believed only if its watch observed the
/// object deleted.
pub(super) async fn write<K>(
    writer: Writer<'_>,
    object: &K,
    basis: Basis,
    conditions: &[Condition],
    extra: Option<&serde_json::Map<String, Value>>,
) -> Result<Written, kube::Error>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    let meta = object.meta();
    let mut status = extra.cloned().unwrap_or_default();
    status.insert(
        "conditions".into(),
        serde_json::to_value(conditions).unwrap_or(Value::Null),
    );
    let patch = json!({
        "metadata": { "resourceVersion": meta.resource_version },
        "status": status,
    });
    let request = Request::new(K::url_path(&(), meta.namespace.as_deref()))
        .patch_subresource(
            "status",
            meta.name.as_deref().unwrap_or_default(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .map_err(kube::Error::BuildRequest)?;
    let error = match writer.send::<K>(request).await {
        Ok(stored) => {
            return Ok(Written::Stored {
                resource_version: stored.meta().resource_version.clone(),
            });
        }
        Err(error) => error,
    };
    let conflict = matches!(&error, kube::Error::Api(status) if status.code == 409);
    if basis == Basis::Replaced {
        return if conflict {
            Ok(Written::Conflict)
        } else {
            Err(error)
        };
    }
    if !conflict && !in_doubt::in_doubt(&error) {
        return Err(error);
    }
    match read_back(writer, object, conditions).await {
        Ok(Some(resource_version)) => Ok(Written::Stored { resource_version }),
        Ok(None) if conflict => Ok(Written::Conflict),
        Ok(None) => Err(error),
        Err(read_error) => {
            tracing::debug!(error = %super::ErrorChain(&read_error), "cannot read back an in-doubt status write");
            if conflict {
                Ok(Written::Conflict)
            } else {
                Err(error)
            }
        }
    }
}

/// Whether the object's stored conditions are exactly `written` (lastTransitionTime included),
/// that is the in-doubt write persisted: then `Some` of the stored object's resourceVersion.
async fn read_back<K>(
    writer: Writer<'_>,
    object: &K,
    written: &[Condition],
) -> Result<Option<Option<String>>, kube::Error>
where
    K: Resource<DynamicType = ()>,
{
    let stored = in_doubt::read_back(writer, object).await?;
    let resource_version = stored["metadata"]["resourceVersion"]
        .as_str()
        .map(str::to_owned);
    Ok((status_of(&stored).0 == written).then_some(resource_version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn condition(type_: &str, status: &str, reason: &str, message: &str, ltt: i64) -> Condition {
        Condition {
            last_transition_time: Time(jiff::Timestamp::from_second(ltt).unwrap()),
            message: message.into(),
            observed_generation: Some(1),
            reason: reason.into(),
            status: status.into(),
            type_: type_.into(),
        }
    }

    #[test]
    fn status_is_written_only_when_something_other_than_last_transition_time_changed() {
        let stored = vec![condition("A", "True", "Ready", "", 1)];
        assert!(!needs_write(
            &stored,
            &[condition("A", "True", "Ready", "", 99)]
        ));
        assert!(needs_write(
            &stored,
            &[condition("A", "True", "Ready", "new message", 1)]
        ));
        assert!(needs_write(&stored, &[]));
        assert!(needs_write(&[], &stored));
    }

    #[test]
    fn a_transition_is_a_new_status_or_reason_not_a_new_message() {
        let stored = vec![
            condition("A", "False", "Pending", "", 1),
            condition("B", "True", "Ok", "", 1),
        ];
        let pending = vec![
            condition("A", "False", "Pending", "another message", 1),
            condition("B", "True", "StillOk", "", 1),
            condition("C", "Unknown", "Probing", "", 1),
        ];
        let reasons: Vec<&str> = transitions(&stored, &pending)
            .iter()
            .map(|c| c.reason.as_str())
            .collect();
        assert_eq!(reasons, ["StillOk", "Probing"]);
    }
}
