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
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::in_doubt::{self, Writer};
use crate::conditions::Condition;

/// The result of a status write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Written {
    /// The server stored the new status; the object now has this resourceVersion.
    Stored {
        /// The resourceVersion of the stored object, which later writes of the pass build on.
        resource_version: Option<String>,
        /// The status the server answered it stored, read through the object's type; `None` when
        /// the write was resolved by reading it back.
        stored: Option<StoredStatus>,
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

/// An object's stored status as a pass sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct StoredStatus {
    /// The entries of `status.conditions` that parse as conditions.
    pub(crate) conditions: Vec<Condition>,
    /// The entries that do not (another writer's malformed condition: a missing field, a time
    /// that does not parse), with their index in the stored list. They are written back
    /// untouched ([`with_foreign`]), so that one bad entry never erases the others.
    pub(crate) foreign: Vec<(usize, Value)>,
    /// The other fields of `status`.
    pub(crate) fields: Map<String, Value>,
}

/// The stored status of `object`: `status.conditions` (absent or not a list: none) and its
/// other status fields.
pub(crate) fn status_of<K: Serialize>(object: &K) -> StoredStatus {
    let status = match super::status_field::status_field(object) {
        Ok(status) => status,
        // Not a struct or map: serialize it whole, as the API server would see it.
        Err(_) => match serde_json::to_value(object) {
            Ok(Value::Object(mut object)) => object.remove("status"),
            _ => None,
        },
    };
    let Some(Value::Object(mut fields)) = status else {
        return StoredStatus::default();
    };
    let mut stored = StoredStatus::default();
    match fields.remove("conditions") {
        None | Some(Value::Null) => {}
        Some(Value::Array(entries)) => {
            for (index, entry) in entries.into_iter().enumerate() {
                match Condition::deserialize(&entry) {
                    Ok(condition) => stored.conditions.push(condition),
                    Err(error) => {
                        tracing::warn!(%error, index, "keeping a malformed entry of status.conditions untouched");
                        stored.foreign.push((index, entry));
                    }
                }
            }
        }
        Some(other) => {
            tracing::warn!(value = %other, "status.conditions is not a list; it will be replaced");
        }
    }
    stored.fields = fields;
    stored
}

/// `conditions` as a JSON list with the `foreign` entries put back in their places, except those
/// whose `type` one of `conditions` now has (the pass replaced them).
pub(crate) fn with_foreign(conditions: &[Condition], foreign: &[(usize, Value)]) -> Vec<Value> {
    let mut list: Vec<Value> = conditions
        .iter()
        .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
        .collect();
    for (index, entry) in foreign {
        let replaced = entry["type"]
            .as_str()
            .is_some_and(|type_| conditions.iter().any(|c| c.type_ == type_));
        if !replaced {
            list.insert((*index).min(list.len()), entry.clone());
        }
    }
    list
}

/// Whether a status of `pending` conditions and `fields` differs from `stored` in anything but a
/// condition's `lastTransitionTime`.
pub(crate) fn needs_write(
    stored: &StoredStatus,
    pending: &[Condition],
    fields: &Map<String, Value>,
) -> bool {
    conditions_differ(&stored.conditions, pending)
        || fields
            .iter()
            .any(|(name, value)| stored.fields.get(name) != Some(value))
}

/// Whether `pending` differs from `stored` in anything but `lastTransitionTime`.
fn conditions_differ(stored: &[Condition], pending: &[Condition]) -> bool {
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
/// A foreign entry (one that did not parse) of the same type, status and reason is not left: a
/// condition someone else wrote malformed is not republished.
pub(crate) fn transitions<'a>(
    stored: &StoredStatus,
    pending: &'a [Condition],
) -> Vec<&'a Condition> {
    let same = |p: &Condition, type_: &str, status: &str, reason: &str| {
        p.type_ == type_ && p.status == status && p.reason == reason
    };
    pending
        .iter()
        .filter(|p| {
            !stored
                .conditions
                .iter()
                .any(|s| same(p, &s.type_, &s.status, &s.reason))
                && !stored.foreign.iter().any(|(_, entry)| {
                    let field = |name: &str| entry[name].as_str().unwrap_or_default();
                    same(p, field("type"), field("status"), field("reason"))
                })
        })
        .collect()
}

impl StoredStatus {
    /// Whether `status` holds nothing: no conditions (parsed or not) and no other fields.
    pub(crate) fn is_empty(&self) -> bool {
        self.conditions.is_empty() && self.foreign.is_empty() && self.fields.is_empty()
    }

    /// The whole status as JSON: the fields, and the conditions with the foreign entries in their
    /// places (`conditions` left out when there are none).
    pub(crate) fn to_json(&self) -> Map<String, Value> {
        status_json(&self.conditions, &self.foreign, &self.fields)
    }
}

/// The status a pass writes: `fields`, and `conditions` with the `foreign` entries put back
/// (see [`with_foreign`]); `conditions` is left out when the list is empty.
pub(crate) fn status_json(
    conditions: &[Condition],
    foreign: &[(usize, Value)],
    fields: &Map<String, Value>,
) -> Map<String, Value> {
    let mut status = fields.clone();
    let list = with_foreign(conditions, foreign);
    if !list.is_empty() {
        status.insert("conditions".into(), Value::Array(list));
    }
    status
}

/// A digest of a status, to remember what a write sent and what the server made of it without
/// keeping either.
pub(crate) fn fingerprint(status: &Map<String, Value>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    // A map's JSON text is deterministic (serde_json's maps are ordered by key).
    serde_json::to_string(status)
        .unwrap_or_default()
        .hash(&mut hasher);
    hasher.finish()
}

/// Writes `status` (the pass's conditions and fields, see [`status_json`]) to `object`'s status
/// subresource with a merge patch that carries the object's resourceVersion, so that a write
/// based on a stale read is refused (409) instead of overwriting someone else's change. A write
/// built on a [`Basis::Current`] version that fails in doubt is read back. Each request is
/// bounded by the `writer`'s timeout; a read-back answered 404 is believed only if its watch
/// observed the object deleted.
///
/// `Written::Stored` carries the status as the server stored it, read through `K` (the fields
/// `K` does not model, and those the schema pruned, are absent), when the server answered the
/// write itself.
pub(super) async fn write<K>(
    writer: Writer<'_>,
    object: &K,
    basis: Basis,
    status: &Map<String, Value>,
) -> Result<Written, kube::Error>
where
    K: Resource<DynamicType = ()> + DeserializeOwned + Serialize,
{
    let meta = object.meta();
    // A list left out of a merge patch is kept: an empty one is written as such.
    let mut status = status.clone();
    status
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    let patch = json!({
        "metadata": { "resourceVersion": meta.resource_version },
        "status": status,
    });
    let error = match writer
        .send::<K>(status_patch::<K>(object, &patch, false)?)
        .await
    {
        Ok(stored) => {
            return Ok(Written::Stored {
                resource_version: stored.meta().resource_version.clone(),
                stored: Some(status_of(&stored)),
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
    if matches!(&error, kube::Error::Api(status) if status.code == 404) {
        return Err(not_found(writer, object, &status, error).await);
    }
    if !conflict && !in_doubt::in_doubt(&error) {
        return Err(error);
    }
    tracing::debug!(error = %super::ErrorChain(&error), "status write in doubt; reading it back");
    match read_back(writer, object, &status).await {
        Ok(Some(resource_version)) => Ok(Written::Stored {
            resource_version,
            stored: None,
        }),
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

/// A status write answered 404 although the object exists: its CustomResourceDefinition has no
/// status subresource, so `/status` is not served.
#[derive(Debug, thiserror::Error)]
#[error(
    "{kind} has no status subresource (its status write was answered 404 although the object exists): add `subresources: {{status: {{}}}}` to the served version of its CustomResourceDefinition (with kube-derive: `#[kube(status = \"...\")]`)"
)]
pub struct NoStatusSubresource {
    /// The object's kind.
    pub kind: String,
}

/// What a status write of `status` answered 404 (`error`) means: the object is gone, or — when
/// it can be read and a dry run of the write is answered 404 too — its resource has no status
/// subresource ([`NoStatusSubresource`]). A 404 that neither confirms (a spurious one: the dry
/// run is served) is `error`, a failed write.
async fn not_found<K>(
    writer: Writer<'_>,
    object: &K,
    status: &Map<String, Value>,
    error: kube::Error,
) -> kube::Error
where
    K: Resource<DynamicType = ()>,
{
    if (writer.observed_gone)() || in_doubt::read_back(writer, object).await.is_err() {
        return error;
    }
    match dry_run(writer, object, status).await {
        Err(kube::Error::Api(status)) if status.code == 404 => {
            kube::Error::Service(Box::new(NoStatusSubresource {
                kind: K::kind(&()).into_owned(),
            }))
        }
        _ => error,
    }
}

/// What the server would make of writing `status` to `object` now: the write sent as a dry run.
async fn dry_run<K>(
    writer: Writer<'_>,
    object: &K,
    status: &Map<String, Value>,
) -> Result<Value, kube::Error>
where
    K: Resource<DynamicType = ()>,
{
    let body = json!({ "status": status });
    writer
        .send::<Value>(status_patch::<K>(object, &body, true)?)
        .await
}

/// A merge patch of `object`'s status subresource with `patch`, dry run (`dryRun=All`) if asked.
fn status_patch<K>(
    object: &K,
    patch: &Value,
    dry_run: bool,
) -> Result<http::Request<Vec<u8>>, kube::Error>
where
    K: Resource<DynamicType = ()>,
{
    let meta = object.meta();
    let params = PatchParams {
        dry_run,
        ..PatchParams::default()
    };
    Request::new(K::url_path(&(), meta.namespace.as_deref()))
        .patch_subresource(
            "status",
            meta.name.as_deref().unwrap_or_default(),
            &params,
            &Patch::Merge(patch),
        )
        .map_err(kube::Error::BuildRequest)
}

/// Whether the in-doubt write of `written` persisted: then `Some` of the stored object's
/// resourceVersion.
///
/// The whole status is compared, as the server normalises it: the stored object is read back,
/// and the same status is patched onto it again as a dry run (no precondition: it applies to
/// whatever is stored). A merge patch is idempotent, so if the write persisted, the dry run
/// changes nothing — its answer's status is the stored one, with fields the schema prunes or
/// defaults treated exactly as the write's were. If the write did not persist, something it
/// wrote (a condition, any status field) is not there yet, and the dry run's status differs.
pub(super) async fn read_back<K>(
    writer: Writer<'_>,
    object: &K,
    written: &Map<String, Value>,
) -> Result<Option<Option<String>>, kube::Error>
where
    K: Resource<DynamicType = ()>,
{
    let stored = in_doubt::read_back(writer, object).await?;
    let resource_version = stored["metadata"]["resourceVersion"]
        .as_str()
        .map(str::to_owned);
    // Retried like the read when it was not answered or answered with a server error (giving up
    // would give up a write that may have committed, and its transition event with it); a
    // refusal is the answer.
    let again = in_doubt::retried(|| dry_run(writer, object, written), in_doubt::in_doubt).await?;
    let unchanged = again["status"] == stored["status"];
    Ok(unchanged.then_some(resource_version))
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
        assert!(!conditions_differ(
            &stored,
            &[condition("A", "True", "Ready", "", 99)]
        ));
        assert!(conditions_differ(
            &stored,
            &[condition("A", "True", "Ready", "new message", 1)]
        ));
        assert!(conditions_differ(&stored, &[]));
        assert!(conditions_differ(&[], &stored));
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
        let stored = StoredStatus {
            conditions: stored,
            ..StoredStatus::default()
        };
        let reasons: Vec<&str> = transitions(&stored, &pending)
            .iter()
            .map(|c| c.reason.as_str())
            .collect();
        assert_eq!(reasons, ["StillOk", "Probing"]);
    }

    /// Another writer's malformed entries (a condition without `lastTransitionTime` or
    /// `message`, as a CRD with a loose conditions schema stores it) are kept and put back in
    /// their places when the pass writes its own conditions; an entry of a type the pass now
    /// sets is replaced by the pass's; and a malformed entry saying what the pass decides is no
    /// transition.
    #[test]
    fn malformed_entries_are_kept_in_place_and_not_republished() {
        let object: kube::api::DynamicObject = serde_json::from_value(json!({
            "apiVersion": "test.kubeward.dev/v1",
            "kind": "Widget",
            "metadata": { "name": "w1" },
            "status": {
                "phase": "One",
                "conditions": [
                    { "type": "Synced", "status": "True", "reason": "ByHand" },
                    { "type": "A", "status": "True", "reason": "Ready", "message": "",
                      "lastTransitionTime": "2020-01-01T00:00:00Z" },
                    { "type": "B", "status": "True", "reason": "Ok", "message": "no time" },
                ],
            },
        }))
        .unwrap();
        let stored = status_of(&object);
        assert_eq!(stored.conditions.len(), 1, "A parses");
        assert_eq!(stored.foreign.len(), 2, "Synced and B do not");
        assert_eq!(stored.fields["phase"], "One");

        // The pass keeps A, and sets B (as it was, status and reason unchanged).
        let pending = vec![
            condition("A", "True", "Ready", "", 1_577_836_800),
            condition("B", "True", "Ok", "no time", 5),
        ];
        assert!(
            transitions(&stored, &pending).is_empty(),
            "B says what the malformed entry said: no event"
        );
        let written = with_foreign(&pending, &stored.foreign);
        let types: Vec<&str> = written
            .iter()
            .map(|c| c["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            ["Synced", "A", "B"],
            "Synced in its place, B replaced"
        );
        assert_eq!(
            written[0],
            json!({ "type": "Synced", "status": "True", "reason": "ByHand" }),
            "untouched"
        );
        assert!(
            written[2]["lastTransitionTime"].is_string(),
            "B is the pass's now"
        );

        // A new reason for the malformed B is a transition.
        let moved = vec![condition("B", "False", "Broken", "", 5)];
        assert_eq!(transitions(&stored, &moved).len(), 1);
    }
}
