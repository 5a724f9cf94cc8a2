//! Server-side apply and `metadata.managedFields`, as kube-apiserver's field manager
//! (`k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager`, structured-merge-diff `merge.Updater`)
//! computes them, on JSON objects without an OpenAPI schema.
//!
//! # What is modelled
//!
//! - **Ownership.** Each `managedFields` entry (`manager`, `operation` `Apply`|`Update`,
//!   `apiVersion`, `time`, `fieldsType: FieldsV1`, `fieldsV1`, `subresource`) owns a set of
//!   field paths. Entries are identified as `BuildManagerIdentifier` does: an Apply entry by
//!   (manager, subresource), an Update entry by (manager, apiVersion, subresource).
//! - **Apply** ([`server_side_apply`], `Updater.Apply`): the applied configuration is merged into
//!   the live object; the applier's set becomes exactly the fields it applied (`ToFieldSet`);
//!   fields it applied last time and omits now are removed unless another entry owns them
//!   (`Updater.prune`); a field owned by another entry that the apply *changes* is a conflict
//!   (409, `Apply failed with 1 conflict: conflict with "other": .spec.replicas`) unless `force`,
//!   which moves ownership; applying the value a field already has shares ownership. Other
//!   entries lose fields that the apply removed.
//! - **Update** ([`record_update`], `Updater.Update` via `managedFieldsUpdater`): a create, PUT
//!   or non-apply PATCH takes the fields it added or changed from everyone, everyone loses the
//!   fields it removed, and its entry's time moves when it took something.
//! - **Not tracked** (`stripMetaManager`): `apiVersion`, `kind`, `metadata.name`,
//!   `metadata.namespace`, `metadata.uid`, `metadata.resourceVersion`, `metadata.generation`,
//!   `metadata.creationTimestamp`, `metadata.selfLink`, `metadata.managedFields`.
//! - **Subresources**: a write through `status` owns and changes only `status` (the status
//!   strategy resets the rest); through the main resource everything is tracked — a server whose
//!   resource has a status subresource passes `["status"]` as reset fields to the `_with_reset`
//!   variants so status is neither changed nor owned there (`GetResetFields`).
//!
//! # Schema
//!
//! Merging and ownership depend on the resource's schema, which JSON objects lack. An
//! [`ApplySchema`] says which lists are associative and which objects are maps; pass one in an
//! [`Endpoint`] to [`apply_at`]/[`update_at`] — [`ApplySchema::from_openapi_v3`] reads a CRD's
//! `x-kubernetes-list-type`/`-list-map-keys` and `additionalProperties`, so a custom resource
//! merges as on a real server (where an undeclared list is atomic). The short forms
//! ([`server_side_apply`], [`record_update`]) use [`ApplySchema::default`]:
//!
//! every JSON object is treated as a struct and every list as **atomic**
//! (replaced whole, owned as one field), except:
//! `metadata.finalizers` (a set: items are owned one by one, `v:"x"`),
//! `metadata.ownerReferences` (a map keyed by `uid`) and
//! `status.conditions` (a map keyed by `type`, `k:{"type":"Ready"}`) when every item is an
//! object with that key. `metadata.labels` and `metadata.annotations` are maps (an Update that
//! adds one owns the map itself, `.`). Built-in types' other associative lists (containers by
//! `name`, …) are atomic here. The Update-manager cap (`capManagersManager`, at most 10 Update
//! entries) is not modelled. Applying `null` removes the field (and owns it).

mod field_set;
mod managed_fields;
mod merge;
mod schema;

#[cfg(test)]
mod examples;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value, json};

use self::field_set::FieldSet;
use self::managed_fields::{
    Entry, decode_entries, encode_entries, filtered, take_from_others, take_stored_entries,
    without_managed_fields,
};
pub(crate) use self::merge::EmptyStructs;
use self::merge::{Comparison, compare, compare_typed, merge, remove_path, to_field_set};
pub(crate) use self::schema::ApplySchema;
use self::schema::{field_pe, ignored_set, stripped};

/// Why an apply was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ApplyError {
    /// Fields the apply would change are owned by other managers (HTTP 409, reason Conflict).
    Conflict {
        /// `(manager, field path)` in the server's words: the manager as `printManager` renders
        /// it (`"other"`, `"kubectl-edit" using v1`, `"ctrl" with subresource "status" using
        /// demo/v1`) and the path as `fieldpath.Path.String()` (`.spec.replicas`,
        /// `.status.conditions[type="Ready"].status`). A Status cause is
        /// `{reason: FieldManagerConflict, message: "conflict with " + manager, field: path}`.
        conflicts: Vec<(String, String)>,
    },
    /// The apply request itself is invalid (HTTP 400 BadRequest with this message).
    Invalid(String),
}

impl ApplyError {
    /// The Status message the real server returns (`getConflictMessage` for conflicts).
    pub(crate) fn message(&self) -> String {
        match self {
            ApplyError::Invalid(m) => m.clone(),
            ApplyError::Conflict { conflicts } => {
                if let [(manager, path)] = conflicts.as_slice() {
                    return format!(
                        "Apply failed with 1 conflict: conflict with {manager}: {path}"
                    );
                }
                let mut by_manager: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
                for (m, p) in conflicts {
                    by_manager.entry(m).or_default().push(p);
                }
                let mut lines = Vec::new();
                for (m, paths) in by_manager {
                    lines.push(format!("conflicts with {m}:"));
                    lines.extend(paths.iter().map(|p| format!("- {p}")));
                }
                format!(
                    "Apply failed with {} conflicts: {}",
                    conflicts.len(),
                    lines.join("\n")
                )
            }
        }
    }

    /// The `details.causes` of the Status (`NewConflictError`): one
    /// `{"reason": "FieldManagerConflict", "message": "conflict with …", "field": path}` per
    /// conflict (`metav1.StatusCause` serialises its type as `reason`).
    pub(crate) fn status_causes(&self) -> Vec<Value> {
        match self {
            ApplyError::Invalid(_) => Vec::new(),
            ApplyError::Conflict { conflicts } => conflicts
                .iter()
                .map(|(m, p)| {
                    json!({"reason": "FieldManagerConflict", "message": format!("conflict with {m}"), "field": p})
                })
                .collect(),
        }
    }
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for ApplyError {}

// ---------------------------------------------------------------------------------------------
// Request-level helpers
// ---------------------------------------------------------------------------------------------

/// `FieldManagerMaxLength`.
pub(crate) const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// The manager of a write without `?fieldManager=` (`managerOrUserAgent`): the User-Agent up to
/// its first `/`, without unprintable characters, at most 128 bytes (`kubectl/v1.34.0 (…)` ->
/// `kubectl`).
pub(crate) fn manager_or_user_agent(field_manager: Option<&str>, user_agent: &str) -> String {
    if let Some(m) = field_manager.filter(|m| !m.is_empty()) {
        return m.to_owned();
    }
    let prefix = user_agent.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in prefix.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The operations
// ---------------------------------------------------------------------------------------------

/// Where a write lands and how its resource is shaped: what the server knows beyond the request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Endpoint<'a> {
    /// The group/version the request is served at (`v1`, `demo.kubeward.dev/v1`).
    pub api_version: &'a str,
    /// The subresource the request addresses (`Some("status")`).
    pub subresource: Option<&'a str>,
    /// Top-level fields the strategy resets on this endpoint (`GetResetFields`): `["status"]`
    /// for the main resource of a kind with a status subresource.
    pub reset_fields: &'a [&'a str],
    /// Which lists are associative and which objects are maps.
    pub schema: &'a ApplySchema,
    /// Which empty objects an Update's comparison sees as absent (a built-in's Go structs).
    pub empty_structs: EmptyStructs,
}

/// Server-side apply at an [`Endpoint`]: the general form of [`server_side_apply`].
pub(crate) fn apply_at(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    force: bool,
    at: &Endpoint<'_>,
    now: &str,
) -> Result<Value, ApplyError> {
    let (api_version, subresource, reset, sc) =
        (at.api_version, at.subresource, at.reset_fields, at.schema);
    let Value::Object(applied_map) = applied else {
        return Err(ApplyError::Invalid(
            "error decoding YAML: the apply patch must be an object".to_owned(),
        ));
    };
    let patch_version = applied_map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    if patch_version != api_version {
        return Err(ApplyError::Invalid(format!(
            "Incorrect version specified in apply patch. Specified patch version: {patch_version}, expected: {api_version}"
        )));
    }
    if applied
        .pointer("/metadata/managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApplyError::Invalid(
            "metadata.managedFields must be nil".to_owned(),
        ));
    }
    let sub = subresource.unwrap_or("");
    let mut entries = decode_entries(live);
    let live_clean = live
        .map(without_managed_fields)
        .unwrap_or_else(|| json!({}));
    let ignored = ignored_set(&[&live_clean, applied], subresource, reset);

    // skipNonAppliedManager: an existing object without managedFields is first attributed to
    // "before-first-apply", so that the apply conflicts with what is already there.
    if live.is_some() && entries.is_empty() {
        let c = filtered(compare(sc, &json!({}), &live_clean), &ignored);
        let set = c.added.union(&c.modified);
        if !set.is_empty() {
            entries.push(Entry {
                manager: "before-first-apply".into(),
                operation: "Update".into(),
                api_version: api_version.to_owned(),
                subresource: sub.to_owned(),
                time: Some(now.to_owned()),
                set,
                fields_v1: None,
            });
        }
    }

    // The configuration as this endpoint takes it: ignored fields keep their live values.
    let mut config = Value::Object(applied_map.clone());
    if let Some(cfg) = config.as_object_mut() {
        cfg.retain(|k, _| !ignored.has(&[field_pe(k)]));
    }

    let mut merged = merge(sc, Some(&live_clean), &config, &mut Vec::new()).unwrap_or(json!({}));

    let mut new_set = to_field_set(sc, &config);
    new_set.remove_recursive(&ignored);
    new_set.remove(stripped());
    let me = entries
        .iter()
        .position(|e| e.same_identity(manager, "Apply", api_version, sub));
    let last_set = me.map(|i| entries[i].set.clone()).unwrap_or_default();
    let me = match me {
        Some(i) => {
            entries[i].set = new_set.clone();
            entries[i].fields_v1 = None;
            entries[i].api_version = api_version.to_owned();
            i
        }
        None => {
            entries.push(Entry {
                manager: manager.to_owned(),
                operation: "Apply".into(),
                api_version: api_version.to_owned(),
                subresource: sub.to_owned(),
                time: None,
                set: new_set.clone(),
                fields_v1: None,
            });
            entries.len() - 1
        }
    };

    // Updater.prune: what the applier applied last time and no one owns now goes away.
    if !last_set.is_empty() {
        let owned = entries
            .iter()
            .fold(FieldSet::default(), |acc, e| acc.union(&e.set));
        // Shallowest first: removing a container takes its unowned descendants with it (and
        // removing a keyed item's key field first would make the item unaddressable).
        let mut to_remove = last_set.difference(&owned).paths();
        to_remove.sort_by_key(Vec::len);
        for p in to_remove {
            if !owned.has_descendant(&p) {
                remove_path(sc, &mut merged, &p);
            }
        }
    }

    let c = filtered(compare(sc, &live_clean, &merged), &ignored);
    take_from_others(&mut entries, Some(me), &c, force)?;

    let changed = merged != live_clean;
    // managedFieldsUpdater.Apply: the applier's time is stamped only when the object changed
    // (an apply that only takes or shares ownership leaves it as it was, or unset).
    if changed {
        entries[me].time = Some(now.to_owned());
    }
    if !changed
        && live.is_some_and(|l| {
            let mut same = l.clone();
            encode_entries(&mut same, entries.clone());
            same == *l
        })
    {
        // A no-op apply returns the live object untouched.
        return Ok(live.cloned().unwrap_or_default());
    }
    encode_entries(&mut merged, entries);
    Ok(merged)
}

/// Records a create (`old` = `None`), PUT or non-apply PATCH by `manager` in `new`'s
/// `managedFields` (operation `Update`), as the real server does for every write that is not an
/// apply: `manager` takes the fields it added or changed from everyone, everyone loses the fields
/// it removed. A `new` object that carries its own non-empty `managedFields` has them honoured
/// (clients may rewrite ownership); `managedFields: [{}]` clears them.
pub(crate) fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    subresource: Option<&str>,
    now: &str,
) {
    let at = Endpoint {
        api_version,
        subresource,
        reset_fields: &[],
        schema: ApplySchema::builtin_default(),
        empty_structs: EmptyStructs::Kept,
    };
    update_at(old, new, manager, &at, now);
}

/// Records an Update at an [`Endpoint`]: the general form of [`record_update`].
pub(crate) fn update_at(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    at: &Endpoint<'_>,
    now: &str,
) {
    let (api_version, subresource, reset, sc) =
        (at.api_version, at.subresource, at.reset_fields, at.schema);
    let sub = subresource.unwrap_or("");
    // isResetManagedFields: `[{}]` empties managedFields.
    if let Some(list) = new
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        && list.len() == 1
        && list[0].as_object().is_some_and(Map::is_empty)
    {
        encode_entries(new, Vec::new());
        return;
    }
    // The stored entries, unless the write brings its own: those unchanged are kept encoded.
    let stored = old.is_some_and(|o| {
        o.pointer("/metadata/managedFields") == new.pointer("/metadata/managedFields")
    });
    let mut entries = if stored {
        take_stored_entries(new)
    } else {
        decode_entries(Some(new))
    };
    if entries.is_empty() {
        entries = decode_entries(old);
        if old.is_some() && entries.is_empty() {
            // skipNonAppliedManager: an update of an object whose fields nobody manages starts
            // no tracking (only a create, or an apply, does).
            encode_entries(new, Vec::new());
            return;
        }
    }
    let none = json!({});
    let old = old.unwrap_or(&none);
    let ignored = ignored_set(&[old, new], subresource, reset);
    let Comparison {
        added: mut took,
        modified,
        removed,
    } = filtered(compare_typed(sc, at.empty_structs, old, new), &ignored);
    took.absorb(&modified);
    // current-operation is a fresh manager: it takes from everyone (force), then merges into
    // the manager's previous entry (which thus loses only what the write removed).
    let own = entries
        .iter()
        .position(|e| e.same_identity(manager, "Update", api_version, sub));
    let changes = Comparison {
        added: took,
        modified: FieldSet::default(),
        removed,
    };
    let _ = take_from_others(&mut entries, own, &changes, true);
    let (took, removed) = (changes.added, changes.removed);
    // An update through `/scale` is recorded without a time: the scale handler converts the
    // managed fields to and from the Scale's, which drops it.
    let time = (sub != "scale").then(|| now.to_owned());
    match own {
        Some(i) => {
            let e = &mut entries[i];
            e.lose(&removed);
            e.compact();
            if !took.is_empty() {
                e.gain(&took);
                e.time = time;
            }
        }
        None if !took.is_empty() => entries.push(Entry {
            manager: manager.to_owned(),
            operation: "Update".into(),
            api_version: api_version.to_owned(),
            subresource: sub.to_owned(),
            time,
            set: took,
            fields_v1: None,
        }),
        None => {}
    }
    encode_entries(new, entries);
}
