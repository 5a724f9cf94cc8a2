//! Update (`store.go` `Update`): PUT of an object or a subresource, and the commit every write
//! that changes a stored object ends in, with its managed fields recorded.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{State, WriteOptions, unserved_version_warnings, validate};
use crate::apply::{ApplySchema, EmptyStructs, Endpoint, update_at};
use crate::kinds;
use crate::kinds::events::to_core_v1;
use crate::object::{
    finalizers, generation_relevant, meta_mut, meta_str, rfc3339, without_zero_values,
};
use crate::resources::{ResourceInfo, View};
use crate::status::{ApiError, Cause};

/// Top-level fields the strategy resets on an endpoint (`GetResetFields`): status on the main
/// resource of a kind with a status subresource.
pub(crate) fn reset_fields(
    info: &ResourceInfo,
    subresource: Option<&str>,
) -> &'static [&'static str] {
    if subresource.is_none() && info.status_subresource {
        &["status"]
    } else {
        &[]
    }
}

/// The list and map types server-side apply merges by: the kind's own, or its CRD's schema's,
/// or the defaults (each built once).
pub(crate) fn apply_schema(info: &ResourceInfo) -> &ApplySchema {
    if let Some(schema) = kinds::strategy(info).apply_schema() {
        return schema;
    }
    match &info.apply {
        Some(schema) => schema,
        None => ApplySchema::builtin_default(),
    }
}

/// Records a non-apply write by `manager` in `new`'s managedFields.
pub(crate) fn track_update(
    info: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    now: &str,
) {
    let api_version = info.api_version();
    let schema = apply_schema(info);
    let at = Endpoint {
        api_version: &api_version,
        subresource,
        reset_fields: reset_fields(info, subresource),
        schema,
        empty_structs: EmptyStructs::Kept,
    };
    if let Some((view, schema)) = kinds::autoscaling::field_manager_view(info) {
        // An autoscaling/v1 write's fields are owned as v1 names them (stored as v2 here).
        let at = Endpoint { schema, ..at };
        let old_view = old.map(view);
        let mut new_view = view(new);
        update_at(old_view.as_ref(), &mut new_view, manager, &at, now);
        new["metadata"]["managedFields"] = new_view["metadata"]["managedFields"].take();
        return;
    }
    if info.view == View::CoreEvent {
        // A core/v1 Event's fields are owned as the request's version names them (stored in
        // the events.k8s.io form here): compared in the core form, from the Go type's zero
        // values (which the comparison does not see as set).
        let core = |event: &Value| without_zero_values(to_core_v1(event));
        let old_core = old.map(core);
        let mut new_core = core(new);
        update_at(old_core.as_ref(), &mut new_core, manager, &at, now);
        new["metadata"]["managedFields"] = new_core["metadata"]["managedFields"].take();
        return;
    }
    if info.custom {
        return update_at(old, new, manager, &at, now);
    }
    // A built-in is typed from its Go struct: a struct without any field set (a Lease's
    // `spec: {}`) holds no leaf, so no field is owned for it. A kind whose value structs are
    // known keeps its other empty structs (a container's `resources: {}` is owned).
    let value_structs = kinds::strategy(info).value_structs();
    let empty_structs = if value_structs.is_empty() {
        EmptyStructs::All
    } else {
        EmptyStructs::At(value_structs)
    };
    update_at(
        old,
        new,
        manager,
        &Endpoint {
            empty_structs,
            ..at
        },
        now,
    );
}

impl State {
    /// PUT (update), on the main resource or the status subresource. Returns the object and
    /// whether the PUT created it (events only: `AllowCreateOnUpdate`).
    pub(crate) fn update(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        subresource: Option<&str>,
        body: Value,
        opts: &WriteOptions,
    ) -> Result<(Arc<Value>, bool), ApiError> {
        opts.warnings
            .extend(unserved_version_warnings(info, &body, &opts.decoding));
        let ns = Self::check_write_body(info, namespace, &body)?;
        match meta_str(&body, "name") {
            Some(n) if n == name => {}
            Some(n) if !n.is_empty() => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({n}) does not match the name on the URL ({name})"
                )));
            }
            _ => {}
        }
        Self::check_body_namespace(info, &body, &ns)?;
        let Some(old) = self.store.get(&info.storage, &ns, name).cloned() else {
            if subresource.is_some() || !kinds::strategy(info).creates_on_update() {
                return Err(ApiError::not_found(info.qualified_resource(), name));
            }
            // Storage ignores the resourceVersion of an object created through an update.
            let mut body = body;
            let meta = meta_mut(&mut body);
            meta.insert("name".into(), json!(name));
            meta.remove("resourceVersion");
            return self
                .create_from_view(info, &ns, body, opts)
                .map(|o| (Self::served(info, &o), true));
        };
        validate::require_resource_version(info, kinds::strategy(info), name, &body)?;
        if let Some(rv) = validate::precondition(&body)
            && Some(rv) != meta_str(&old, "resourceVersion")
        {
            return Err(ApiError::modified(info.qualified_resource(), name));
        }
        let new = Self::from_view(info, body);
        self.commit_update(info, &old, new, subresource, opts, true)
            .map(|o| (o, false))
    }

    /// The shared tail of PUT and PATCH (and of the controllers' writes): strategy, validation,
    /// no-op detection, finalization. `track` is false when managedFields were already
    /// maintained (apply).
    pub(crate) fn commit_update(
        &mut self,
        info: &ResourceInfo,
        old: &Value,
        mut new: Value,
        subresource: Option<&str>,
        opts: &WriteOptions,
        track: bool,
    ) -> Result<Arc<Value>, ApiError> {
        let name = meta_str(old, "name").unwrap_or_default().to_string();
        validate::decode_typed(info, &mut new, opts)?;
        let requested = match subresource {
            None if track => kinds::service::as_requested(info, &new),
            _ => None,
        };
        // What a status write asked of metadata: the field manager sees it (it runs before the
        // strategy), though the strategy drops it.
        let mut status_write_metadata = None;
        if subresource.is_none() && info.group.is_empty() && info.plural == "services" {
            // The Service REST storage's `beginUpdate`, before the strategy.
            kinds::service::begin_update(&self.store, &self.service_network, old, &mut new)?;
        }
        if subresource == Some("status") {
            // statusStrategy.PrepareForUpdate: everything but status (and managedFields) comes
            // from the stored object; a body without status clears it.
            status_write_metadata = Some(new["metadata"].clone());
            kinds::strategy(info).prepare_for_status_update(old, &mut new);
        } else if info.status_subresource {
            kinds::strategy(info).prepare_for_update(old, &mut new, subresource);
            match old.get("status") {
                Some(_) => crate::object::keep_stored(&mut new, old, "status"),
                None => {
                    if let Some(m) = new.as_object_mut() {
                        m.remove("status");
                    }
                }
            }
        }
        // Server-owned metadata is immutable through writes.
        {
            let old_meta = &old["metadata"];
            let meta = meta_mut(&mut new);
            for field in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "resourceVersion",
            ] {
                match old_meta.get(field) {
                    Some(v) => meta.insert(field.into(), v.clone()),
                    None => meta.remove(field),
                };
            }
            meta.remove("selfLink");
            if meta.get("generateName").is_none()
                && let Some(g) = old_meta.get("generateName")
            {
                meta.insert("generateName".into(), g.clone());
            }
        }
        if !old["metadata"]["deletionTimestamp"].is_null() {
            let before: BTreeSet<String> = finalizers(old).into_iter().collect();
            let added: Vec<String> = finalizers(&new)
                .into_iter()
                .filter(|f| !before.contains(f))
                .collect();
            if !added.is_empty() {
                let list = added
                    .iter()
                    .map(|f| format!("{f:?}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let cause = Cause {
                    reason: "FieldValueForbidden".into(),
                    message: format!(
                        "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{list}}}"
                    ),
                    field: "metadata.finalizers".into(),
                };
                // Reported by the generic registry's and the kind's metadata update checks.
                return Err(ApiError::invalid(
                    info.qualified_kind(),
                    &name,
                    vec![cause.clone(), cause],
                ));
            }
        }
        validate::admit_schema(info, &mut new, Some(old), opts)?;
        let bumps = kinds::strategy(info)
            .bumps_generation(old, &new, subresource)
            .unwrap_or_else(|| {
                generation_relevant(&new, info.status_subresource)
                    != generation_relevant(old, info.status_subresource)
            });
        if info.tracks_generation && bumps {
            let g = old["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            new["metadata"]["generation"] = json!(g);
        }
        let strategy = kinds::strategy(info);
        validate::validate_update(info, strategy, &mut new, old)?;
        strategy.validate_update(info, &name, &mut new, old, subresource)?;
        opts.warnings
            .extend(strategy.warnings_on_update(&new, subresource));
        if track {
            let now = rfc3339(self.now());
            match status_write_metadata {
                Some(asked) => {
                    // Tracked with the asked metadata in place of the kept one (no copy of the
                    // object), which then comes back with the recorded managedFields.
                    let mut kept = std::mem::replace(&mut new["metadata"], asked);
                    new["metadata"]["managedFields"] = kept
                        .get_mut("managedFields")
                        .map_or(Value::Null, Value::take);
                    track_update(info, Some(old), &mut new, &opts.manager, subresource, &now);
                    let tracked = new["metadata"].get_mut("managedFields").map(Value::take);
                    new["metadata"] = kept;
                    match tracked {
                        Some(entries) => new["metadata"]["managedFields"] = entries,
                        None => {
                            meta_mut(&mut new).remove("managedFields");
                        }
                    }
                }
                None => kinds::service::track_as_requested(requested, &mut new, |o| {
                    track_update(info, Some(old), o, &opts.manager, subresource, &now);
                }),
            }
        }
        strategy.stored_form(&mut new);
        self.admit(info, Some(old), &new, subresource, opts)?;
        // A write that changes nothing is not a write: no new resourceVersion, no watch event.
        // managedFields count: an apply that only shares ownership is stored, as etcd sees
        // different bytes; the field manager leaves them untouched when nothing was taken.
        if new == *old {
            return Ok(Self::served_owned(info, old.clone()));
        }
        if opts.dry_run {
            return Ok(Self::served_owned(info, new));
        }
        let ns = meta_str(old, "namespace").unwrap_or_default().to_string();
        if !old["metadata"]["deletionTimestamp"].is_null()
            && finalizers(&new).is_empty()
            && kinds::strategy(info).finalized(&new)
        {
            // ShouldDeleteDuringUpdate: the update is not stored; the object is deleted as it
            // was, so watchers see only DELETED (with the last stored finalizers). The writer
            // gets its updated object back (`deleteWithoutFinalizers`).
            let gone = self
                .store
                .remove(&info.storage, &ns, &name)
                .ok_or_else(|| ApiError::internal("object vanished during finalization"))?;
            self.after_delete(&gone, info);
            return Ok(Self::served_owned(info, new));
        }
        let stored = self.store.put(&info.storage, new);
        self.after_write(&stored, info);
        Ok(Self::served(info, &stored))
    }

    /// Writes `new`, the view of the stored `old_view` changed through `subresource` (`scale`),
    /// as an update of it by `opts`' manager; returns the stored object's view.
    pub(crate) fn update_from_subresource(
        &mut self,
        info: &ResourceInfo,
        old_view: &Value,
        new: Value,
        subresource: &str,
        opts: &WriteOptions,
    ) -> Result<Arc<Value>, ApiError> {
        let ns = meta_str(old_view, "namespace")
            .unwrap_or_default()
            .to_owned();
        let name = meta_str(old_view, "name").unwrap_or_default().to_owned();
        let old = self
            .store
            .get(&info.storage, &ns, &name)
            .cloned()
            .ok_or_else(|| ApiError::not_found(info.qualified_resource(), &name))?;
        let new = Self::from_view(info, new);
        self.commit_update(info, &old, new, Some(subresource), opts, true)
    }
}
