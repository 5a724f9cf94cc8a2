//! Create (`store.go` `Create`): the object prepared, validated and admitted, then stored.

use std::sync::Arc;

use serde_json::{Value, json};

use super::update::track_update;
use super::{State, WriteOptions, crd_key, reject_resource_version, unserved_version_warnings};
use super::{namespaces_key, validate};
use crate::kinds::{self, namespace};
use crate::object::{generate_name, meta_mut, meta_str, rfc3339};
use crate::resources::ResourceInfo;
use crate::status::{ApiError, Cause};

impl State {
    /// POST (create).
    pub(crate) fn create(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        body: Value,
        opts: &WriteOptions,
    ) -> Result<Arc<Value>, ApiError> {
        let stored = self.create_stored(info, namespace, body, opts)?;
        Ok(Self::served(info, &stored))
    }

    /// [`State::create`], answering the object in its stored form (no view of it is built:
    /// for the in-process writers that do not read the answer, such as an event's recorder).
    pub(crate) fn create_stored(
        &mut self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        body: Value,
        opts: &WriteOptions,
    ) -> Result<Arc<Value>, ApiError> {
        opts.warnings
            .extend(unserved_version_warnings(info, &body, &opts.decoding));
        let ns = Self::check_write_body(info, namespace, &body)?;
        Self::check_body_namespace(info, &body, &ns)?;
        reject_resource_version(&body)?;
        self.create_from_view(info, &ns, body, opts)
    }

    /// The create strategy, managedFields and storage of a create's (or a PUT's that creates)
    /// body; the object in its stored form.
    pub(super) fn create_from_view(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        body: Value,
        opts: &WriteOptions,
    ) -> Result<Arc<Value>, ApiError> {
        let mut obj = Self::from_view(info, body);
        validate::decode_typed(info, &mut obj, opts)?;
        let requested = kinds::service::as_requested(info, &obj);
        self.prepare_create(info, ns, &mut obj, opts)?;
        validate::admit_schema(info, &mut obj, None, opts)?;
        let now = rfc3339(self.now());
        kinds::service::track_as_requested(requested, &mut obj, |o| {
            track_update(info, None, o, &opts.manager, None, &now);
        });
        kinds::strategy(info).prepare_for_create(&mut obj);
        self.commit_create(info, obj, opts)
    }

    /// Fills server-owned metadata and applies the create strategy. Assigns a generated name.
    pub(super) fn prepare_create(
        &mut self,
        info: &ResourceInfo,
        ns: &str,
        obj: &mut Value,
        opts: &WriteOptions,
    ) -> Result<(), ApiError> {
        let now = self.now();
        let generate = meta_str(obj, "generateName").map(str::to_string);
        let name = match meta_str(obj, "name").filter(|n| !n.is_empty()) {
            Some(n) => n.to_string(),
            None => match generate.filter(|g| !g.is_empty()) {
                Some(prefix) => generate_name(&prefix),
                None => {
                    return Err(ApiError::invalid(
                        info.qualified_kind(),
                        "",
                        vec![Cause {
                            reason: "FieldValueRequired".into(),
                            message: "Required value: name or generateName is required".into(),
                            field: "metadata.name".into(),
                        }],
                    ));
                }
            },
        };
        self.require_namespace(ns)?;
        namespace::admit_create(info, ns, self.store.get(&namespaces_key(), "", ns), obj)?;
        let meta = meta_mut(obj);
        meta.insert("name".into(), json!(name));
        if info.namespaced {
            meta.insert("namespace".into(), json!(ns));
        } else {
            meta.remove("namespace");
        }
        meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
        meta.insert("creationTimestamp".into(), json!(rfc3339(now)));
        for server_owned in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
            "resourceVersion",
        ] {
            meta.remove(server_owned);
        }
        if info.tracks_generation {
            meta.insert("generation".into(), json!(1));
        } else {
            meta.remove("generation");
        }
        if info.status_subresource
            && !kinds::strategy(info).keeps_status_on_create()
            && let Some(m) = obj.as_object_mut()
        {
            m.remove("status");
        }
        let strategy = kinds::strategy(info);
        strategy.default_create(obj, &name);
        if info.group.is_empty() && info.plural == "pods" {
            // Mutating admission refuses before validation runs.
            self.refuse_pod_create(obj)?;
        }
        if info.group.is_empty() && info.plural == "services" {
            // The Service REST storage's `beginCreate`, before the strategy's validation.
            kinds::service::begin_create(&self.store, &self.service_network, obj)?;
        }
        validate::validate_create(info, strategy, obj)?;
        opts.warnings
            .extend(strategy.validate_create(info, &name, obj)?);
        Ok(())
    }

    /// Admits and stores a prepared create's object; returns it in its stored form (a dry
    /// run's, unstored).
    pub(super) fn commit_create(
        &mut self,
        info: &ResourceInfo,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Arc<Value>, ApiError> {
        kinds::strategy(info).stored_form(&mut obj);
        if info.group.is_empty() && info.plural == "pods" {
            // The mutating admission a cluster runs on every new pod.
            self.admit_pod_create(&mut obj)?;
        }
        if info.group.is_empty() && info.plural == "persistentvolumeclaims" {
            // DefaultStorageClass, a mutating admission after the field manager.
            kinds::storage::admit_claim_create(&self.store, &mut obj);
        }
        self.admit(info, None, &obj, None, opts)?;
        let (ns, name) = crate::store::object_key(&obj);
        if let Some(existing) = self.store.get(&info.storage, &ns, &name) {
            let mut err = ApiError::already_exists(info.qualified_resource(), &name);
            // The generic store's Create names an existing object that waits on finalizers.
            if !existing["metadata"]["deletionTimestamp"].is_null() {
                err.message = format!("object is being deleted: {}", err.message);
            }
            return Err(err);
        }
        if opts.dry_run {
            return Ok(Arc::new(obj));
        }
        let stored = self.store.put(&info.storage, obj);
        self.after_write(&stored, info);
        if kinds::strategy(info).established_after_create() {
            self.establish(&stored);
        }
        Ok(stored)
    }

    /// What apiextensions-apiserver's naming and establishing controllers write after a CRD is
    /// created: its names accepted and the `NamesAccepted` and `Established` conditions. Here
    /// at once, in one write after the create (whose answer still shows the fresh status).
    pub(super) fn establish(&mut self, crd: &Value) {
        let ts = rfc3339(self.now());
        let mut established = crd.clone();
        established["status"]["acceptedNames"] = crd["spec"]["names"].clone();
        established["status"]["conditions"] = json!([
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
             "message": "no conflicts found", "lastTransitionTime": ts},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": ts},
        ]);
        self.store.put(&crd_key(), established);
    }
}
